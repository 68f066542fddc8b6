"""Drawing the top-down texture: the table, the tray and its markers, the board, its pegs and holes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.codes import EMPTY
from pegwatch.simulation.render.geometry import board_to_tray
from pegwatch.simulation.render.scene import BoardContents, Conditions, LoosePeg, Point
from pegwatch.vision.localise import apply_homography
from pegwatch.vision.markers import marker_image
from pegwatch.vision.palette import NOMINAL_RGB
from pegwatch.vision.profile import BoardProfile


def _peg_rgb(name: str, peg_set: int, jitter: float, rng: np.random.Generator) -> NDArray[np.float32]:
    """The sRGB of a peg: the nominal colour, varied per peg set and per peg."""
    base = np.array(NOMINAL_RGB.get(name, NOMINAL_RGB["white"]), dtype=np.float32)
    set_rng = np.random.default_rng([peg_set, sum(map(ord, name))])
    base = base * (1.0 + set_rng.uniform(-0.08, 0.08, 3).astype(np.float32)) + set_rng.uniform(-6, 6, 3).astype(np.float32)
    base = base * (1.0 + rng.uniform(-jitter, jitter, 3).astype(np.float32))
    out: NDArray[np.float32] = np.clip(base, 0, 255)
    return out


@lru_cache(maxsize=64)
def _dome_maps(
    radius_px: float, azimuth_deg: float, elevation_deg: float, shininess: float, shadow_px: float
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32], NDArray[np.float32], int]:
    """Alpha, diffuse shade, specular and cast-shadow maps of a lit dome (a peg head).

    The light comes from ``azimuth`` (degrees, board x towards y) at
    ``elevation``; the camera looks straight down, so the highlight sits
    towards the light and the shadow falls away from it.
    """
    half = math.ceil(radius_px * 1.25 + shadow_px + 2)
    yy, xx = np.mgrid[-half : half + 1, -half : half + 1].astype(np.float32)
    r = np.sqrt(xx * xx + yy * yy) / radius_px
    alpha = np.clip((1.0 - r) * radius_px + 0.5, 0, 1).astype(np.float32)
    nz = np.sqrt(np.clip(1 - r * r, 0, 1))
    az, el = math.radians(azimuth_deg), math.radians(elevation_deg)
    lx, ly, lz = math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)
    ndotl = np.clip((xx / radius_px) * lx + (yy / radius_px) * ly + nz * lz, 0, 1)
    shade = (0.32 + 0.78 * ndotl).astype(np.float32)
    # Rim darkening: the dome turns away from the camera at its edge.
    shade *= (0.55 + 0.45 * np.clip(nz * 1.6, 0, 1)).astype(np.float32)
    hx, hy, hz = lx, ly, lz + 1.0
    hn = math.sqrt(hx * hx + hy * hy + hz * hz)
    ndoth = np.clip(((xx / radius_px) * hx + (yy / radius_px) * hy + nz * hz) / hn, 0, 1)
    spec = (ndoth**shininess * (r < 1)).astype(np.float32)
    sx, sy = -math.cos(az) * shadow_px, -math.sin(az) * shadow_px
    # The shadow of a standing peg: a capsule from its foot to where its
    # head's shadow falls.
    seg = max(sx * sx + sy * sy, 1e-9)
    t = np.clip((xx * sx + yy * sy) / seg, 0.0, 1.0)
    rs = np.sqrt((xx - t * sx) ** 2 + (yy - t * sy) ** 2) / (radius_px * 1.05)
    shadow = np.clip(1.2 - rs, 0, 1).astype(np.float32) ** 1.5
    return alpha, shade, spec, shadow, half


@dataclass
class _Canvas:
    """The top-down texture in tray mm, with its scale and origin."""

    img: NDArray[np.uint8]
    ppm: float
    origin: Point  # tray mm at pixel (0, 0)

    def px(self, x: float, y: float) -> tuple[float, float]:
        return ((x - self.origin[0]) * self.ppm, (y - self.origin[1]) * self.ppm)

    def ipts(self, pts: NDArray[np.float64]) -> NDArray[np.int32]:
        """Tray mm to fixed-point (4 fractional bits) pixel coordinates for cv2 drawing."""
        q = (pts - np.array(self.origin)) * self.ppm * 16.0
        out: NDArray[np.int32] = np.round(q).astype(np.int32).reshape(-1, 1, 2)
        return out


_SHIFT = 4  # fractional bits for cv2 drawing


def _blend_dome(
    cv: _Canvas,
    centre_tray: Point,
    radius_mm: float,
    rgb: NDArray[np.float32],
    c: Conditions,
    *,
    ring: float = 0.0,
) -> None:
    """Draw one lit dome (a peg head) with its cast shadow and the dark ring of its hole."""
    rpx = radius_mm * cv.ppm
    if c.peg_height_mm > 0:
        # The shadow's centre lies as far as the head's height throws it.
        shadow_px = c.peg_height_mm * cv.ppm / math.tan(math.radians(max(c.light_elevation_deg, 10)))
    else:
        shadow_px = 0.18 * rpx * (1.0 / math.tan(math.radians(max(c.light_elevation_deg, 20))))
    alpha, shade, spec, shadow, half = _dome_maps(
        round(rpx * 4) / 4, round(c.light_azimuth_deg / 5) * 5, round(c.light_elevation_deg / 5) * 5, 30.0,
        round(shadow_px * 2) / 2,
    )
    px, py = cv.px(*centre_tray)
    ix, iy = round(px), round(py)
    y0, x0 = iy - half, ix - half
    size = 2 * half + 1
    h, w = cv.img.shape[:2]
    if y0 < 0 or x0 < 0 or y0 + size > h or x0 + size > w:
        return
    region = cv.img[y0 : y0 + size, x0 : x0 + size].astype(np.float32)
    bgr = rgb[::-1]
    # The hole ring and cast shadow darken what is underneath.
    dark = 1.0 - c.peg_shadow * shadow
    if ring > 0:
        ring_alpha = _ring(half, rpx)
        dark = dark * (1.0 - ring * ring_alpha)
    region *= dark[:, :, None]
    peg = bgr[None, None, :] * shade[:, :, None] + (255.0 * 1.4 * c.glare) * spec[:, :, None]
    a = alpha[:, :, None]
    region = region * (1.0 - a) + peg * a
    cv.img[y0 : y0 + size, x0 : x0 + size] = np.clip(region, 0, 255).astype(np.uint8)


@lru_cache(maxsize=64)
def _ring(half: int, rpx: float) -> NDArray[np.float32]:
    yy, xx = np.mgrid[-half : half + 1, -half : half + 1].astype(np.float32)
    r = np.sqrt(xx * xx + yy * yy) / rpx
    out: NDArray[np.float32] = np.clip(1.0 - np.abs(r - 1.07) / 0.10, 0, 1).astype(np.float32)
    return out


def _hole(cv: _Canvas, centre_tray: Point, radius_mm: float, board_bgr: NDArray[np.float32]) -> None:
    """An empty hole: a dark circle with a dimly lit bottom."""
    x, y = cv.px(*centre_tray)
    s = 1 << _SHIFT
    outer = tuple(int(v) for v in (board_bgr * 0.22))
    inner = tuple(int(v) for v in (board_bgr * 0.45 + 10))
    cv2.circle(cv.img, (round(x * s), round(y * s)), round(radius_mm * cv.ppm * s), outer, -1, cv2.LINE_AA, _SHIFT)
    cv2.circle(
        cv.img,
        (round((x + 0.12 * radius_mm * cv.ppm) * s), round((y + 0.12 * radius_mm * cv.ppm) * s)),
        round(radius_mm * 0.5 * cv.ppm * s),
        inner,
        -1,
        cv2.LINE_AA,
        _SHIFT,
    )


def _loose_peg(cv: _Canvas, peg: LoosePeg, code_d: float, key_d: float, c: Conditions, rng: np.random.Generator) -> None:
    """A peg lying on its side: a stem and a head, seen from above."""
    d = key_d * 1.1 if peg.key else code_d
    rgb = _peg_rgb(peg.colour, c.peg_set, 0.03, rng)
    bgr = tuple(float(v) for v in rgb[::-1])
    dark = tuple(float(v) * 0.6 for v in rgb[::-1])
    a = math.radians(peg.angle_deg)
    ux, uy = math.cos(a), math.sin(a)
    cx, cy = peg.centre_mm
    stem_len, stem_w = d * 1.3, d * 0.45
    q = np.array(
        [
            (cx - uy * stem_w / 2, cy + ux * stem_w / 2),
            (cx + ux * stem_len - uy * stem_w / 2, cy + uy * stem_len + ux * stem_w / 2),
            (cx + ux * stem_len + uy * stem_w / 2, cy + uy * stem_len - ux * stem_w / 2),
            (cx + uy * stem_w / 2, cy - ux * stem_w / 2),
        ]
    )
    shadow_off = np.array([0.8, 0.8])
    cv2.fillConvexPoly(cv.img, cv.ipts(q + shadow_off), (40, 40, 40), cv2.LINE_AA, _SHIFT)
    cv2.fillConvexPoly(cv.img, cv.ipts(q), dark, cv2.LINE_AA, _SHIFT)
    # The head lies on its rim: an ellipse across the stem's end.
    x, y = cv.px(cx, cy)
    s = 1 << _SHIFT
    axes = (round(d * 0.25 * cv.ppm * s), round(d * 0.5 * cv.ppm * s))
    cv2.ellipse(cv.img, (round(x * s), round(y * s)), axes, peg.angle_deg, 0, 360, bgr, -1, cv2.LINE_AA, _SHIFT)
    hx, hy = cv.px(cx - ux * d * 0.05, cy - uy * d * 0.05)
    cv2.ellipse(
        cv.img,
        (round(hx * s), round(hy * s)),
        (max(1, axes[0] // 3), max(1, axes[1] // 3)),
        peg.angle_deg,
        0,
        360,
        tuple(min(255.0, v * 1.25 + 40) for v in bgr),
        -1,
        cv2.LINE_AA,
        _SHIFT,
    )


_WOOD_BGR = np.array([74, 104, 142], dtype=np.float32)


def table_colour(y_mm: NDArray[np.float32], phase: float) -> NDArray[np.uint8]:
    """The wooden table's colour at texture row ``y_mm`` (mm from the texture top): grain along x."""
    grain = 1.0 + 0.10 * np.sin(y_mm / np.float32(2.3) + np.float32(phase)) + 0.05 * np.sin(y_mm / np.float32(0.7))
    out: NDArray[np.uint8] = np.clip(_WOOD_BGR[None, :] * grain[:, None], 0, 255).astype(np.uint8)
    return out


def draw_texture(
    p: BoardProfile,
    contents: BoardContents,
    c: Conditions,
    rng: np.random.Generator,
    ppm: float,
    table_phase: float,
) -> tuple[_Canvas, NDArray[np.float64], tuple[tuple[str, ...], ...]]:
    w, h = p.size_mm
    m = p.render.tray_margin_mm
    table = 16.0  # the rest of the table comes from reflecting the texture
    origin = (-m - table, -m - table)
    tw, th = round((w + 2 * (m + table)) * ppm), round((h + 2 * (m + table)) * ppm)
    tex = np.empty((th, tw, 3), dtype=np.uint8)
    # The table: wood with soft grain along x.
    column = table_colour(np.arange(th, dtype=np.float32) / np.float32(ppm), table_phase)[:, None, :]
    tex[:] = cv2.resize(column, (tw, th), interpolation=cv2.INTER_NEAREST)
    cv = _Canvas(tex, ppm, origin)
    tray_bgr = tuple(float(v) for v in p.render.tray_rgb[::-1])
    tray_pts = np.array([[-m, -m], [w + m, -m], [w + m, h + m], [-m, h + m]], dtype=np.float64)
    cv2.fillConvexPoly(tex, cv.ipts(tray_pts), tray_bgr, cv2.LINE_AA, _SHIFT)

    if c.markers:
        for mk in p.markers:
            img = marker_image(p.aruco_dictionary, mk.id, max(8, round(mk.size_mm * ppm)), quiet_zone=True)
            x, y = cv.px(mk.centre_mm[0], mk.centre_mm[1])
            hh, ww = img.shape
            x0, y0 = round(x - ww / 2), round(y - hh / 2)
            if x0 < 0 or y0 < 0 or x0 + ww > tw or y0 + hh > th:
                continue
            # Printed paper is not pure white or black.
            tex[y0 : y0 + hh, x0 : x0 + ww] = (img[:, :, None].astype(np.float32) * (220 / 255) + 22).astype(np.uint8)
            if mk.id in c.covered_markers:
                cover_w = mk.size_mm * rng.uniform(0.3, 0.55)
                side = int(rng.integers(4))
                cx, cy, s2 = mk.centre_mm[0], mk.centre_mm[1], mk.size_mm / 2 + 3
                rect = [
                    (cx - s2 - 2, cy - s2 - 2, cx - s2 + cover_w, cy + s2 + 2),
                    (cx + s2 - cover_w, cy - s2 - 2, cx + s2 + 2, cy + s2 + 2),
                    (cx - s2 - 2, cy - s2 - 2, cx + s2 + 2, cy - s2 + cover_w),
                    (cx - s2 - 2, cy + s2 - cover_w, cx + s2 + 2, cy + s2 + 2),
                ][side]
                q = np.array([(rect[0], rect[1]), (rect[2], rect[1]), (rect[2], rect[3]), (rect[0], rect[3])])
                cv2.fillConvexPoly(tex, cv.ipts(q), (150, 170, 190), cv2.LINE_AA, _SHIFT)

    b2t = board_to_tray(p, c)

    def T(pt: Point) -> Point:
        q = apply_homography(b2t, np.array([pt]))[0]
        return (float(q[0]), float(q[1]))

    board_bgr = np.array(p.render.board_rgb[::-1], dtype=np.float32)
    corners = apply_homography(b2t, np.array(p.corners_mm()))
    # A soft drop shadow under the board's edge, then the board.
    cv2.fillConvexPoly(tex, cv.ipts(corners + 1.2), tuple(float(v) * 0.55 for v in p.render.tray_rgb[::-1]), cv2.LINE_AA, _SHIFT)
    cv2.fillConvexPoly(tex, cv.ipts(corners), tuple(float(v) for v in board_bgr), cv2.LINE_AA, _SHIFT)
    # A raised rim just inside the edge catches the light.
    inset = np.array([[1.2, 1.2], [-1.2, 1.2], [-1.2, -1.2], [1.2, -1.2]])
    rim = apply_homography(b2t, np.array(p.corners_mm()) + inset)
    cv2.polylines(tex, [cv.ipts(rim)], True, tuple(float(v) * 1.25 + 8 for v in board_bgr), max(1, round(0.5 * ppm)), cv2.LINE_AA, _SHIFT)

    code_r = p.code_hole_diameter_mm / 2.0
    key_r = p.key_hole_diameter_mm / 2.0
    jitter_mm = 0.35
    key_positions: list[tuple[str, ...]] = []
    for row in range(1, p.rows + 1):
        guess = contents.guesses[row - 1]
        for i, centre in enumerate(p.hole_centres_mm(row)):
            colour = guess[i] if guess is not None else EMPTY
            tc = T(centre)
            if colour == EMPTY:
                _hole(cv, tc, code_r * 0.62, board_bgr)
            else:
                jx, jy = rng.uniform(-jitter_mm, jitter_mm, 2)
                _blend_dome(cv, (tc[0] + jx, tc[1] + jy), code_r, _peg_rgb(colour, c.peg_set, 0.025, rng), c, ring=0.55)
        k = contents.keys[row - 1]
        slots = [EMPTY] * p.key_holes
        if k is not None:
            pegs = [p.right_place_key] * k[0] + [p.right_colour_key] * k[1]
            for slot, colour in zip(rng.permutation(p.key_holes)[: len(pegs)], pegs, strict=True):
                slots[int(slot)] = colour
        key_positions.append(tuple(slots))
        for centre, colour in zip(p.key_centres_mm(row), slots, strict=True):
            tc = T(centre)
            if colour == EMPTY:
                _hole(cv, tc, key_r * 0.7, board_bgr)
            else:
                jx, jy = rng.uniform(-0.2, 0.2, 2)
                _blend_dome(cv, (tc[0] + jx, tc[1] + jy), key_r * 1.05, _peg_rgb(colour, c.peg_set, 0.03, rng), c, ring=0.45)

    if contents.secret is not None and contents.shield_open:
        for centre, colour in zip(p.secret_centres_mm(), contents.secret, strict=True):
            tc = T(centre)
            if colour == EMPTY:
                _hole(cv, tc, code_r * 0.62, board_bgr)
            else:
                _blend_dome(cv, tc, code_r, _peg_rgb(colour, c.peg_set, 0.025, rng), c, ring=0.55)
    else:
        for centre in p.secret_centres_mm():
            _hole(cv, T(centre), code_r * 0.62, board_bgr)
        if p.shield_mm is not None:
            x, y, sw, sh = p.shield_mm
            q = apply_homography(b2t, np.array([(x, y), (x + sw, y), (x + sw, y + sh), (x, y + sh)]))
            shield_bgr = np.array((c.shield_rgb or p.render.shield_rgb)[::-1], dtype=np.float32)
            cv2.fillConvexPoly(tex, cv.ipts(q + 1.5), tuple(float(v) * 0.5 for v in board_bgr), cv2.LINE_AA, _SHIFT)
            cv2.fillConvexPoly(tex, cv.ipts(q), tuple(float(v) for v in shield_bgr), cv2.LINE_AA, _SHIFT)
            ridge = apply_homography(b2t, np.array([(x + sw * 0.45, y + 2), (x + sw * 0.55, y + 2), (x + sw * 0.55, y + sh - 2), (x + sw * 0.45, y + sh - 2)]))
            cv2.fillConvexPoly(tex, cv.ipts(ridge), tuple(float(v) * 1.5 + 15 for v in shield_bgr), cv2.LINE_AA, _SHIFT)

    for peg in c.loose_pegs:
        _loose_peg(cv, peg, p.code_hole_diameter_mm, p.key_hole_diameter_mm, c, rng)
    return cv, b2t, tuple(key_positions)
