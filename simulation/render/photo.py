"""The photo: the texture viewed through the camera, spoiled, with its ground truth."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.simulation.render.drawing import draw_texture, table_colour
from pegwatch.simulation.render.geometry import distort, remap_maps, tray_to_image
from pegwatch.simulation.render.hands import draw_hand
from pegwatch.simulation.render.lighting import light_field, noise_bank
from pegwatch.simulation.render.scene import BoardContents, Conditions, Point, RenderError
from pegwatch.vision.localise import apply_homography
from pegwatch.vision.profile import BoardProfile


@dataclass(frozen=True)
class Rendered:
    """A synthetic photo and its ground truth.

    ``board_to_image`` maps board mm to image px before lens distortion;
    :meth:`project` includes the distortion. ``key_positions[i]`` gives, for
    row ``i + 1``, the colour in each key hole (profile order) or "empty".
    """

    image: NDArray[np.uint8]
    board_to_image: NDArray[np.float64]
    tray_to_image: NDArray[np.float64]
    corners_px: NDArray[np.float64]
    occluded_rows: frozenset[int]
    occluded_secret: bool
    occluded_markers: frozenset[int]
    contents: BoardContents
    key_positions: tuple[tuple[str, ...], ...]
    conditions: Conditions
    profile: str
    hand_mask: NDArray[np.uint8] | None = field(default=None, repr=False)

    def project(self, points_mm: Sequence[Point] | NDArray[np.float64]) -> NDArray[np.float64]:
        """Board mm (N×2) to distorted image px (N×2), as the camera sees them."""
        return distort(self.conditions, apply_homography(self.board_to_image, np.asarray(points_mm, dtype=np.float64)))


def render(profile: BoardProfile, contents: BoardContents, conditions: Conditions, *, seed: int) -> Rendered:
    """Render a photo of ``contents`` on ``profile``'s board under ``conditions``.

    Deterministic for a given ``seed``. Takes well under 150 ms at 1280×720.
    """
    contents.check(profile)
    c = conditions
    if not (64 <= c.width <= 4096 and 64 <= c.height <= 4096):
        raise RenderError(f"image size {c.width}x{c.height} is out of range")
    rng = np.random.default_rng(seed)
    t2i = tray_to_image(profile, c)
    # Texture density: `supersample` texels per output pixel at the board centre.
    centre = np.array([[profile.size_mm[0] / 2, profile.size_mm[1] / 2], [profile.size_mm[0] / 2 + 1, profile.size_mm[1] / 2]])
    img_ppm = float(np.linalg.norm(np.diff(apply_homography(t2i, centre), axis=0)))
    factor = max(1, round(c.supersample))
    ss_ppm = max(2.0, img_ppm * 1.15 * factor)
    table_phase = float(rng.uniform(0, 6.3))
    cv, b2t, key_positions = draw_texture(profile, contents, c, rng, ss_ppm, table_phase)
    # Box-filter the supersampled texture down to about one texel per pixel
    # (an integer factor keeps INTER_AREA on its fast path).
    th, tw = (cv.img.shape[0] // factor) * factor, (cv.img.shape[1] // factor) * factor
    tex = cv2.resize(cv.img[:th, :tw], (tw // factor, th // factor), interpolation=cv2.INTER_AREA)
    ppm_x = ppm_y = ss_ppm / factor
    mx, my, outside, rows = remap_maps(
        c.width, c.height, c.focal_px, c.k1, t2i.tobytes(), cv.origin, ppm_x, (tex.shape[1], tex.shape[0])
    )
    out = cv2.remap(tex, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    # Beyond the texture lies more table: continue its grain in image space.
    if len(outside):
        # The grain depends on the texture row only: colour each row once.
        lo = int(rows.min())
        lut = table_colour(np.arange(lo, int(rows.max()) + 1, dtype=np.float32) / np.float32(ppm_y), table_phase)
        out.reshape(-1, 3)[outside] = lut[rows - lo]

    b2i = t2i @ b2t
    b2i = b2i / b2i[2, 2]

    def proj(pts: NDArray[np.float64], h: NDArray[np.float64] = b2i) -> NDArray[np.float64]:
        return distort(c, apply_homography(h, pts))

    f = out.astype(np.float32)
    hand_mask: NDArray[np.uint8] | None = None
    occluded: set[int] = set()
    occluded_secret = False
    occluded_markers: set[int] = set()
    if c.hand:
        polys = [proj(np.array(poly, dtype=np.float64), t2i) for poly in c.hand]
        hand_mask = draw_hand(f, c, polys, rng)
        probe = cv2.dilate(hand_mask, np.ones((5, 5), np.uint8))

        def covered(centres: Sequence[Point], radius: float) -> bool:
            ang = np.linspace(0, 2 * math.pi, 8, endpoint=False)
            pts = [(x, y) for x, y in centres] + [
                (x + radius * math.cos(t), y + radius * math.sin(t)) for x, y in centres for t in ang
            ]
            q = np.round(proj(np.array(pts))).astype(int)
            ok = (q[:, 0] >= 0) & (q[:, 0] < c.width) & (q[:, 1] >= 0) & (q[:, 1] < c.height)
            return bool(np.any(probe[q[ok, 1], q[ok, 0]] > 0))

        for row in range(1, profile.rows + 1):
            if covered(profile.hole_centres_mm(row), profile.code_hole_diameter_mm / 2) or covered(
                profile.key_centres_mm(row), profile.key_hole_diameter_mm / 2
            ):
                occluded.add(row)
        occluded_secret = covered(profile.secret_centres_mm(), profile.code_hole_diameter_mm / 2)
        for mk in profile.markers:
            q = np.round(proj(np.array((*mk.corners_mm(), mk.centre_mm)), t2i)).astype(int)
            ok = (q[:, 0] >= 0) & (q[:, 0] < c.width) & (q[:, 1] >= 0) & (q[:, 1] < c.height)
            if np.any(probe[q[ok, 1], q[ok, 0]] > 0):
                occluded_markers.add(mk.id)
    occluded_markers.update(c.covered_markers)

    cv2.multiply(f, light_field(profile, c, t2i), dst=f)
    if c.blur_sigma > 0.25:
        cv2.GaussianBlur(f, (0, 0), c.blur_sigma, dst=f)
    if c.noise_sigma > 0:
        bank = noise_bank(c.height, c.width)
        oy, ox = (int(v) for v in rng.integers(0, 64, 2))
        cv2.scaleAdd(bank[oy : oy + c.height, ox : ox + c.width], float(c.noise_sigma), f, dst=f)
    np.clip(f, 0, 255, out=f)
    img: NDArray[np.uint8] = f.astype(np.uint8)
    if c.jpeg_quality is not None:
        encoded, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(c.jpeg_quality)])
        if encoded:
            img = np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR), dtype=np.uint8)

    return Rendered(
        image=img,
        board_to_image=b2i,
        tray_to_image=t2i,
        corners_px=proj(np.array(profile.corners_mm())),
        occluded_rows=frozenset(occluded),
        occluded_secret=occluded_secret,
        occluded_markers=frozenset(occluded_markers),
        contents=contents,
        key_positions=tuple(key_positions),
        conditions=c,
        profile=profile.name,
        hand_mask=hand_mask,
    )
