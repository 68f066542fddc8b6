"""The board as a Mitsuba 3 scene: solids, materials and lights, built as a dict for ``mi.load_dict``.

The board is a slab with dark recessed discs for holes; pegs are lathed
solids standing in their holes with domed heads; the tray around the board
carries the profile's ArUco markers as a texture; the shield is a box over
the secret holes or a plate standing open behind them; hands are
ellipsoids with finger capsules and a sleeve, or a bare sleeve. A
rectangular area light of a blackbody colour, an optional second light of
another colour and the room's ambient light give real shadows and shading.

Materials are linear albedos chosen here, not the project's nominal
palette: this test bed must share nothing with the reader but the profile.
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.simulation.pbr.camera import Camera
from pegwatch.simulation.pbr.conditions import Hand, PbrConditions, Vec3, blackbody_rgb
from pegwatch.simulation.pbr.meshes import peg_obj, sphere_obj
from pegwatch.simulation.render.scene import BoardContents
from pegwatch.vision.profile import BoardProfile

#: Linear albedo of each pigment (plastic under its clear coat).
PIGMENT: dict[str, Vec3] = {
    "red": (0.50, 0.035, 0.03),
    "orange": (0.75, 0.20, 0.025),
    "yellow": (0.80, 0.58, 0.035),
    "green": (0.035, 0.30, 0.07),
    "blue": (0.025, 0.07, 0.45),
    "purple": (0.15, 0.035, 0.30),
    "pink": (0.80, 0.22, 0.38),
    "magenta": (0.60, 0.03, 0.35),
    "brown": (0.16, 0.06, 0.025),
    "cyan": (0.03, 0.40, 0.60),
    "white": (0.78, 0.78, 0.74),
    "black": (0.022, 0.022, 0.025),
}
TEXTURE_PX_PER_MM = 6.0
PAPER = 0.82
INK = 0.03


def srgb_to_linear(rgb: tuple[int, int, int]) -> Vec3:
    """An sRGB 0..255 triple as linear RGB."""
    out = []
    for c in rgb:
        v = c / 255.0
        out.append(v / 12.92 if v <= 0.04045 else ((v + 0.055) / 1.055) ** 2.4)
    return (out[0], out[1], out[2])


def _rgb(v: Vec3) -> dict[str, Any]:
    return {"type": "rgb", "value": [float(x) for x in v]}


def _plastic(albedo: Vec3, alpha: float) -> dict[str, Any]:
    return {"type": "roughplastic", "diffuse_reflectance": _rgb(albedo), "alpha": alpha, "int_ior": 1.49}


def _diffuse(albedo: Vec3) -> dict[str, Any]:
    return {"type": "twosided", "bsdf": {"type": "diffuse", "reflectance": _rgb(albedo)}}


def _translate_scale(t: Vec3, s: Vec3) -> list[list[float]]:
    return [[s[0], 0, 0, t[0]], [0, s[1], 0, t[1]], [0, 0, s[2], t[2]], [0, 0, 0, 1]]


def peg_albedos(palette: set[str], peg_set: int) -> dict[str, Vec3]:
    """Each pigment as this set of pegs has it: every set differs a little (±8 % per channel)."""
    rng = np.random.default_rng([peg_set, 4242])
    out: dict[str, Vec3] = {}
    for name in sorted(set(PIGMENT) | palette):
        base = PIGMENT.get(name, (0.3, 0.3, 0.3))
        f = np.exp(rng.normal(0.0, 0.08, 3))
        out[name] = (float(min(base[0] * f[0], 0.95)), float(min(base[1] * f[1], 0.95)), float(min(base[2] * f[2], 0.95)))
    return out


def tray_texture(p: BoardProfile) -> NDArray[np.float32]:
    """The tray as a linear RGB texture (top row = the tray's top edge) with the markers printed on it."""
    m = p.render.tray_margin_mm
    w, h = p.size_mm
    s = TEXTURE_PX_PER_MM
    tw, th = round((w + 2 * m) * s), round((h + 2 * m) * s)
    tex = np.empty((th, tw, 3), dtype=np.float32)
    tex[:] = srgb_to_linear(p.render.tray_rgb)
    aruco = cv2.aruco
    dictionary = aruco.getPredefinedDictionary(getattr(aruco, p.aruco_dictionary))
    for mk in p.markers:
        side = round(mk.size_mm * s)
        img = aruco.generateImageMarker(dictionary, mk.id, side, borderBits=1)
        quiet = round(mk.size_mm / 6.0 * s)  # one module of white paper around it
        x0 = round((mk.centre_mm[0] + m) * s - side / 2)
        y0 = round((mk.centre_mm[1] + m) * s - side / 2)
        tex[y0 - quiet : y0 + side + quiet, x0 - quiet : x0 + side + quiet] = PAPER
        tex[y0 : y0 + side, x0 : x0 + side] = np.where(img[:, :, None] > 127, PAPER, INK)
    return tex


def board_texture(p: BoardProfile) -> NDArray[np.float32]:
    """The board's top as a linear RGB texture: its plastic with a dark disc for every hole."""
    w, h = p.size_mm
    s = TEXTURE_PX_PER_MM
    tex = np.empty((round(h * s), round(w * s), 3), dtype=np.float32)
    tex[:] = srgb_to_linear(p.render.board_rgb)
    shift = 4  # cv2 draws at 1/16 px
    hole = (0.012, 0.012, 0.014)

    def disc(x: float, y: float, r: float) -> None:
        cv2.circle(tex, (round(x * s * 16), round(y * s * 16)), round(r * s * 16), hole, -1, cv2.LINE_AA, shift)

    for row in range(1, p.rows + 1):
        for x, y in p.hole_centres_mm(row):
            disc(x, y, 0.42 * p.code_hole_diameter_mm)
        for x, y in p.key_centres_mm(row):
            disc(x, y, 0.4 * p.key_hole_diameter_mm)
    for x, y in p.secret_centres_mm():
        disc(x, y, 0.42 * p.code_hole_diameter_mm)
    return tex


def build_scene(
    p: BoardProfile, contents: BoardContents, c: PbrConditions, cam: Camera, margin: int, *, seed: int
) -> dict[str, Any]:
    """The Mitsuba scene dict of ``contents`` on ``p``'s board under ``c``; ``seed`` places the key pegs."""
    import mitsuba as mi

    w, h = p.size_mm
    m = p.render.tray_margin_mm
    lift = c.board_lift_mm
    scene: dict[str, Any] = {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 3},
        "sensor": {
            "type": "perspective",
            "fov": cam.fov_deg(margin),
            "fov_axis": "x",
            "near_clip": 10.0,
            "far_clip": 20000.0,
            "to_world": mi.ScalarTransform4f(cam.mitsuba_to_world()),
            "film": {
                "type": "hdrfilm",
                "width": c.width + 2 * margin,
                "height": c.height + 2 * margin,
                "pixel_format": "rgb",
                "rfilter": {"type": "gaussian", "stddev": 0.4},
            },
            "sampler": {"type": "independent", "sample_count": c.spp},
        },
    }
    # The table, the tray with its markers (level with the markers' plane), the board.
    scene["table"] = {
        "type": "rectangle",
        "to_world": mi.ScalarTransform4f(_translate_scale((w / 2, h / 2, lift + 4.0), (3000.0, 3000.0, 1.0))),
        "bsdf": _diffuse(c.table_rgb),
    }
    tex = tray_texture(p)
    scene["tray"] = {
        "type": "rectangle",
        # Mitsuba's rectangle maps local (-1, -1) to uv (0, 0), and a bitmap's row 0 to v = 0: with y down
        # in the world, the texture lies upright in board coordinates.
        "to_world": mi.ScalarTransform4f(_translate_scale((w / 2, h / 2, lift), ((w + 2 * m) / 2, (h + 2 * m) / 2, 1.0))),
        "bsdf": {
            "type": "twosided",
            "bsdf": {"type": "diffuse", "reflectance": {"type": "bitmap", "bitmap": mi.Bitmap(tex), "raw": True}},
        },
    }
    thick = lift + 8.0
    scene["board"] = {
        "type": "cube",
        "to_world": mi.ScalarTransform4f(_translate_scale((w / 2, h / 2, thick / 2 + 0.05), (w / 2, h / 2, thick / 2))),
        "bsdf": _plastic(srgb_to_linear(p.render.board_rgb), 0.25),
    }
    # Its top, with the holes: dark recessed discs in the plastic's texture.
    scene["board_top"] = {
        "type": "rectangle",
        "to_world": mi.ScalarTransform4f(_translate_scale((w / 2, h / 2, 0.0), (w / 2, h / 2, 1.0))),
        "bsdf": {
            "type": "twosided",
            "bsdf": {
                "type": "roughplastic",
                "diffuse_reflectance": {"type": "bitmap", "bitmap": mi.Bitmap(board_texture(p)), "raw": True},
                "alpha": 0.25,
                "int_ior": 1.49,
            },
        },
    }
    _holes_and_pegs(scene, p, contents, c, np.random.default_rng([seed, 99]))
    _shield(scene, p, c)
    for i, hand in enumerate(c.hands):
        _hand(scene, f"hand{i}", hand)
    _lights(scene, p, c)
    return scene


def _holes_and_pegs(
    scene: dict[str, Any], p: BoardProfile, contents: BoardContents, c: PbrConditions, rng: np.random.Generator
) -> None:
    import mitsuba as mi

    albedo = peg_albedos(set(p.palette), c.peg_set)
    code_r = p.code_hole_diameter_mm / 2
    key_r = p.key_hole_diameter_mm / 2
    code_mesh = peg_obj(round(code_r, 3), round(c.peg_height_mm, 3), round(0.45 * code_r, 3))
    key_mesh = peg_obj(round(key_r, 3), round(0.6 * c.peg_height_mm, 3), round(0.5 * key_r, 3))

    def peg(name: str, x: float, y: float, colour: str, mesh: str) -> None:
        # One shape group per kind of peg and colour, instanced: loading a mesh per peg is slow.
        group = f"group_{'key' if mesh == key_mesh else 'code'}_{colour}"
        if group not in scene:
            scene[group] = {
                "type": "shapegroup",
                "peg": {"type": "obj", "filename": mesh, "bsdf": _plastic(albedo.get(colour, (0.3, 0.3, 0.3)), c.peg_gloss)},
            }
        dx, dy = rng.normal(0.0, 0.15, 2)  # pegs sit a little loose in their holes
        scene[name] = {
            "type": "instance",
            "shapegroup": {"type": "ref", "id": group},
            "to_world": mi.ScalarTransform4f(_translate_scale((x + float(dx), y + float(dy), 0.0), (1.0, 1.0, 1.0))),
        }

    for row in range(1, p.rows + 1):
        guess = contents.guesses[row - 1]
        for j, (x, y) in enumerate(p.hole_centres_mm(row)):
            if guess is not None and guess[j] in albedo:
                peg(f"peg_{row}_{j}", x, y, guess[j], code_mesh)
        keys = contents.keys[row - 1]
        b, wk = keys if keys is not None else (0, 0)
        colours = [p.right_place_key] * b + [p.right_colour_key] * wk
        order = rng.permutation(p.key_holes)  # key pegs sit in any holes
        centres = p.key_centres_mm(row)
        for k in range(p.key_holes):
            x, y = centres[int(order[k])]
            if k < len(colours):
                peg(f"kpeg_{row}_{k}", x, y, colours[k], key_mesh)
    secret = contents.secret
    for j, (x, y) in enumerate(p.secret_centres_mm()):
        if secret is not None and secret[j] in albedo:
            peg(f"speg_{j}", x, y, secret[j], code_mesh)


def _shield(scene: dict[str, Any], p: BoardProfile, c: PbrConditions) -> None:
    import mitsuba as mi

    if p.shield_mm is None:
        return
    sx, sy, sw, sh = p.shield_mm
    bsdf = _plastic(srgb_to_linear(p.render.shield_rgb), 0.3)
    if c.shield_closed:
        height = c.peg_height_mm + 0.45 * p.code_hole_diameter_mm + 4.0
        t = _translate_scale((sx + sw / 2, sy + sh / 2, -height / 2), (sw / 2, sh / 2, height / 2))
    else:  # swung open on its hinge: a plate standing at the shield's far edge
        t = _translate_scale((sx + sw + 1.5, sy + sh / 2, -sw / 2), (1.2, sh / 2, sw / 2))
    scene["shield"] = {"type": "cube", "to_world": mi.ScalarTransform4f(t), "bsdf": bsdf}


def _hand(scene: dict[str, Any], name: str, hand: Hand) -> None:
    """A hand (palm ellipsoid, four finger capsules, a sleeve) or a bare sleeve, never through the board."""
    import mitsuba as mi

    s = hand.size
    az, rise = math.radians(hand.azimuth_deg), math.radians(hand.rise_deg)
    back = np.array([math.cos(az), math.sin(az), 0.0])  # from the fingertips towards the player
    up = np.array([0.0, 0.0, -1.0])
    along = math.cos(rise) * back + math.sin(rise) * up  # up the arm
    side = np.cross(back, up)
    x, y = hand.over_mm
    centre = np.array([x, y, -hand.height_mm])
    skin = {"type": "roughplastic", "diffuse_reflectance": _rgb(hand.skin), "alpha": 0.45, "int_ior": 1.4}
    cloth = _diffuse(hand.cloth)
    caps: list[tuple[str, NDArray[np.float64], NDArray[np.float64], float, dict[str, Any]]] = []
    palm: NDArray[np.float64] | None = None
    if hand.kind == "sleeve":
        r = 38.0 * s
        caps.append(("sleeve", centre + up * r - along * 90 * s, centre + up * r + along * 500, r, cloth))
    else:
        # The palm: an ellipsoid 50 x 90 x 22 mm, its long axis along the arm.
        palm = np.stack([side, along, np.cross(side, along)], axis=1) @ np.diag([25.0 * s, 45.0 * s, 11.0 * s])
        for k, (off, length) in enumerate(((-16.0, 60.0), (-5.5, 70.0), (5.5, 66.0), (16.0, 52.0))):
            root = centre - along * 38 * s + side * off * s
            tip = root - (back * math.cos(0.2) + up * math.sin(0.2)) * length * s  # fingers curl down a little
            caps.append((f"f{k}", root, tip, 7.5 * s, skin))
        wrist = centre + along * 40 * s
        caps.append(("sleeve", wrist + along * 20 * s, wrist + along * 600, 34.0 * s, cloth))
        caps.append(("wrist", centre + along * 20 * s, wrist + along * 25 * s, 22.0 * s, skin))
    # z grows into the table: the lowest point of each part is its largest z.
    low = max(max(a[2], b[2]) + r for _, a, b, r, _ in caps)
    if palm is not None:
        low = max(low, centre[2] + float(np.linalg.norm(palm[2])))
    shift = up * max(0.0, low + 1.5)  # keep 1.5 mm of air under the hand
    for key, a, b, r, bsdf in caps:
        a, b = a + shift, b + shift
        scene[f"{name}_{key}_c"] = {"type": "cylinder", "p0": a.tolist(), "p1": b.tolist(), "radius": r, "bsdf": bsdf}
        scene[f"{name}_{key}_a"] = {"type": "sphere", "center": a.tolist(), "radius": r, "bsdf": bsdf}
        scene[f"{name}_{key}_b"] = {"type": "sphere", "center": b.tolist(), "radius": r, "bsdf": bsdf}
    if palm is not None:
        m = np.eye(4)
        m[:3, :3] = palm
        m[:3, 3] = centre + shift
        scene[name + "_palm"] = {
            "type": "obj",
            "filename": sphere_obj(),
            "to_world": mi.ScalarTransform4f([[float(v) for v in row] for row in m]),
            "bsdf": skin,
        }


def _lights(scene: dict[str, Any], p: BoardProfile, c: PbrConditions) -> None:
    import mitsuba as mi

    w, h = p.size_mm
    target = [w / 2, h / 2, 0.0]

    def area(key: str, pos: Vec3, size: float, kelvin: float, power: float) -> None:
        d2 = float(np.sum((np.array(pos) - np.array(target)) ** 2))
        radiance = power * d2 / (size * size)  # about the same light on the board whatever the lamp's size and distance
        col = blackbody_rgb(kelvin)
        m = mi.ScalarTransform4f().look_at(origin=list(pos), target=target, up=[0, 1, 0])
        scene[key] = {
            "type": "rectangle",
            "to_world": m @ mi.ScalarTransform4f().scale([size / 2, size / 2, 1.0]),
            "emitter": {"type": "area", "radiance": _rgb((col[0] * radiance, col[1] * radiance, col[2] * radiance))},
        }

    area("light_key", c.light_pos_mm, c.light_size_mm, c.light_kelvin, 1.0)
    if c.fill_ratio > 0:
        area("light_fill", c.fill_pos_mm, 300.0, c.fill_kelvin, c.fill_ratio)
    amb = blackbody_rgb(c.fill_kelvin)
    scene["room"] = {"type": "constant", "radiance": _rgb(tuple(v * c.ambient / math.pi for v in amb))}  # type: ignore[arg-type]
