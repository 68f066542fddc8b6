"""A hand and arm over the board: its outline in board mm, and its drawing in the photo."""

from __future__ import annotations

import math

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.simulation.render.scene import Conditions, Point, Polygon
from pegwatch.vision.profile import BoardProfile


def _ellipse(cx: float, cy: float, rx: float, ry: float, ang: float, n: int = 16) -> Polygon:
    ca, sa = math.cos(ang), math.sin(ang)
    return tuple(
        (cx + rx * math.cos(t) * ca - ry * math.sin(t) * sa, cy + rx * math.cos(t) * sa + ry * math.sin(t) * ca)
        for t in np.linspace(0, 2 * math.pi, n, endpoint=False)
    )


def hand_polygons(
    profile: BoardProfile, rng: np.random.Generator, rows: tuple[int, int], reach: float
) -> tuple[Polygon, ...]:
    """A hand reaching over rows[0]..rows[1] from the near or far long edge, arm to outside the frame.

    Fingers (with gaps between them), palm, thumb and arm, in board mm. The
    fingertips get ``reach`` (0..1) of the way across the holes.
    """
    ys = [y for r in rows for _x, y in profile.hole_centres_mm(r) + profile.key_centres_mm(r)]
    y_lo, y_hi = min(ys) - 3.0, max(ys) + 3.0
    x0 = profile.row_box_mm(rows[0])[0]
    b1 = profile.row_box_mm(rows[1])
    x1 = b1[0] + b1[2]
    cx = (x0 + x1) / 2 + rng.uniform(-5, 5)
    from_below = bool(rng.random() < 0.6)
    d = 1.0 if from_below else -1.0  # direction from the fingertips to the wrist
    tip = y_hi - reach * (y_hi - y_lo) if from_below else y_lo + reach * (y_hi - y_lo)
    ang = math.radians(rng.uniform(-20, 20))
    ca, sa = math.cos(ang), math.sin(ang)

    def at(u: float, v: float) -> Point:
        # u across the hand, v from the fingertips towards the wrist.
        return (cx + u * ca - d * v * sa, tip + u * sa + d * v * ca)

    palm_w = max(40.0, min(90.0, x1 - x0)) * rng.uniform(0.9, 1.1)
    finger_len = rng.uniform(55, 75)
    polys: list[Polygon] = []
    # Four fingers, slightly spread, the middle ones longest.
    for k, (frac, length) in enumerate(((-0.375, 0.85), (-0.125, 1.0), (0.125, 0.95), (0.375, 0.78))):
        u = frac * palm_w + (k - 1.5) * rng.uniform(0.0, 2.0)
        fl = finger_len * length
        fx, fy = at(u, finger_len - fl / 2)
        polys.append(_ellipse(fx, fy, palm_w / 8.0, fl / 2 + 4, ang + rng.uniform(-0.06, 0.06)))
    px, py = at(0.0, finger_len + 40.0)
    polys.append(_ellipse(px, py, palm_w / 2, 48.0, ang, 20))
    tx, ty = at(-d * 0.62 * palm_w if rng.random() < 0.5 else d * 0.62 * palm_w, finger_len + 35.0)
    polys.append(_ellipse(tx, ty, palm_w / 7, 30.0, ang + d * 0.5, 12))
    # The arm: a band from the wrist to far outside the image.
    w0, w1 = at(-palm_w * 0.42, finger_len + 80.0), at(palm_w * 0.42, finger_len + 80.0)
    e0, e1 = at(-palm_w * 0.6, finger_len + 600.0), at(palm_w * 0.6, finger_len + 600.0)
    polys.append((w0, w1, e1, e0))
    return tuple(polys)


#: Cloth of sleeves (sRGB): navy, black, grey.
SLEEVE_RGB: tuple[tuple[int, int, int], ...] = ((28, 34, 78), (22, 22, 24), (120, 120, 124))


def sleeve_polygons(end_mm: Point, angle_deg: float, *, width_mm: float = 70.0, length_mm: float = 600.0) -> tuple[Polygon, ...]:
    """A forearm in a sleeve lying on the board: its rounded end at ``end_mm``
    (board mm), the rest running off at ``angle_deg`` (0: towards +x) to
    outside the picture."""
    a = math.radians(angle_deg)
    ux, uy = math.cos(a), math.sin(a)
    px, py = -uy * width_mm / 2, ux * width_mm / 2
    x0, y0 = end_mm
    band = (
        (x0 + px, y0 + py),
        (x0 + ux * length_mm + px, y0 + uy * length_mm + py),
        (x0 + ux * length_mm - px, y0 + uy * length_mm - py),
        (x0 - px, y0 - py),
    )
    return (band, _ellipse(x0, y0, width_mm / 2, width_mm / 2, a, 20))


def draw_hand(
    img: NDArray[np.float32], c: Conditions, polys_px: list[NDArray[np.float64]], rng: np.random.Generator
) -> NDArray[np.uint8]:
    """Composite a skin-coloured hand and arm with its shading and soft shadow; return its mask."""
    mask = np.zeros((c.height, c.width), dtype=np.uint8)
    for q in polys_px:
        cv2.fillPoly(mask, [np.round(q * 16).astype(np.int32).reshape(-1, 1, 2)], 255, cv2.LINE_AA, 4)
    x, y, w, h = cv2.boundingRect(mask)
    if w == 0 or h == 0:
        return mask
    # Work only around the hand: the shadow reaches about 60 px beyond it.
    pad = 64
    x0, y0 = max(0, x - pad), max(0, y - pad)
    x1, y1 = min(c.width, x + w + pad), min(c.height, y + h + pad)
    roi = img[y0:y1, x0:x1]
    m = mask[y0:y1, x0:x1].astype(np.float32) / 255.0
    sw, sh = max(1, (x1 - x0) // 4), max(1, (y1 - y0) // 4)
    soft = cv2.GaussianBlur(cv2.resize(m, (sw, sh), interpolation=cv2.INTER_AREA), (0, 0), 4.0)
    shadow = np.zeros_like(soft)
    dy, dx = 6, 8
    shadow[dy:, dx:] = soft[: sh - dy, : sw - dx] if sh > dy and sw > dx else 0.0
    soft_big = cv2.resize(soft, (x1 - x0, y1 - y0), interpolation=cv2.INTER_LINEAR)
    shadow_big = cv2.resize(shadow, (x1 - x0, y1 - y0), interpolation=cv2.INTER_LINEAR)
    roi *= (1.0 - 0.45 * shadow_big)[:, :, None]
    skin = np.array(c.skin_rgb[::-1], dtype=np.float32) * np.float32(rng.uniform(0.92, 1.08))
    # Rounded limbs: darker towards the outline.
    shade = 0.55 + 0.5 * np.clip((soft_big - 0.45) * 2.2, 0, 1)
    a = m[:, :, None]
    roi *= 1.0 - a
    roi += skin[None, None, :] * (shade[:, :, None] * a)
    return mask
