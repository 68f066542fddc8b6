"""The ``--debug`` overlay: the grid and what was read, drawn on the frame.

An installer checks a table at a glance: every hole gets a circle in the
colour read and a short label; unknown holes get a red box, occluded holes
are hatched, the board outline shows where the localiser put the board,
and a line at the top says how it was found and how far it is trusted.
"""

from __future__ import annotations

import logging

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.localise import Localisation, apply_homography
from pegwatch.vision.palette import nominal_bgr
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.reading import (
    EMPTY,
    OCCLUDED,
    ROW_OCCLUDED,
    UNKNOWN,
    BoardReading,
)

logger = logging.getLogger(__name__)

def abbreviation(colour: str) -> str:
    """Two or three letters for a colour name; '?' unknown, '#' occluded, '.' empty."""
    if colour == UNKNOWN:
        return "?"
    if colour == OCCLUDED:
        return "#"
    if colour == EMPTY:
        return "."
    special = {"black": "Bk", "blue": "Bl", "brown": "Br", "purple": "Pu", "pink": "Pk"}
    return special.get(colour, colour[:2].capitalize())


def draw_debug(
    frame: NDArray[np.uint8],
    profile: BoardProfile,
    reading: BoardReading,
    localisation: Localisation | None,
) -> NDArray[np.uint8]:
    """A copy of ``frame`` with the grid and the reading drawn on it."""
    out = frame.copy()
    h_img = localisation.image_to_board if localisation is not None else None
    if h_img is None or reading.problem is not None:
        msg = reading.problem or "board not located"
        cv2.putText(out, msg, (20, 40), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 255), 2, cv2.LINE_AA)
        return out
    b2i = np.linalg.inv(np.asarray(h_img, dtype=np.float64))
    corners = apply_homography(b2i, np.array(profile.corners_mm(), dtype=np.float64))
    cv2.polylines(out, [np.rint(corners).astype(np.int32)], True, (0, 255, 255), 2, cv2.LINE_AA)
    scale = float(np.linalg.norm(corners[1] - corners[0]) / profile.size_mm[0])  # px per mm
    r_code = max(int(profile.code_hole_diameter_mm / 2 * scale), 3)
    r_key = max(int(profile.key_hole_diameter_mm / 2 * scale), 2)
    font = cv2.FONT_HERSHEY_SIMPLEX
    fscale = max(0.3, 0.045 * r_code)

    facts = f"{reading.found_by or '?'}  trust {reading.trust}"
    if reading.px_per_mm is not None:
        facts += f"  {reading.px_per_mm:.1f} px/mm"
    facts_colour = (0, 0, 255) if reading.trust != "full" else (0, 255, 255)
    cv2.putText(out, facts, (20, 30), font, 0.7, (0, 0, 0), 3, cv2.LINE_AA)
    cv2.putText(out, facts, (20, 30), font, 0.7, facts_colour, 1, cv2.LINE_AA)
    for row in reading.rows:
        if row.status == ROW_OCCLUDED:
            # Covered only where something is over it: hatch each occluded
            # hole; the others keep their reading.
            for hole, (cx, cy) in zip(row.holes, profile.hole_centres_mm(row.row), strict=True):
                if hole.colour == OCCLUDED:
                    half = profile.code_hole_diameter_mm / 2 + 1.0
                    sq = [(cx - half, cy - half), (cx + half, cy - half), (cx + half, cy + half), (cx - half, cy + half)]
                    _hatch(out, apply_homography(b2i, np.array(sq, dtype=np.float64)))
        pts = apply_homography(b2i, np.array(profile.hole_centres_mm(row.row), dtype=np.float64))
        for (px, py), hole in zip(pts, row.holes, strict=True):
            _draw_hole(out, (int(px), int(py)), r_code, hole.colour, font, fscale)
        kpts = apply_homography(b2i, np.array(profile.key_centres_mm(row.row), dtype=np.float64))
        colour = (0, 0, 255) if not row.keys.is_certain else (255, 255, 0)
        for px, py in kpts:
            cv2.circle(out, (int(px), int(py)), r_key, colour, 1, cv2.LINE_AA)
        label = f"{row.keys.black}/{row.keys.white}" if row.keys.is_certain else abbreviation(
            OCCLUDED if row.keys.status == ROW_OCCLUDED else UNKNOWN
        )
        lx = float(kpts[:, 0].min()) - r_key
        ly = float(kpts[:, 1].max()) + r_key + 14
        cv2.putText(out, label, (int(lx), int(ly)), font, fscale, (0, 0, 0), 3, cv2.LINE_AA)
        cv2.putText(out, label, (int(lx), int(ly)), font, fscale, colour, 1, cv2.LINE_AA)
    if reading.secret is not None:
        pts = apply_homography(b2i, np.array(profile.secret_centres_mm(), dtype=np.float64))
        for (px, py), hole in zip(pts, reading.secret, strict=True):
            _draw_hole(out, (int(px), int(py)), r_code, hole.colour, font, fscale)
    return out


def _draw_hole(
    out: NDArray[np.uint8], centre: tuple[int, int], r: int, colour: str, font: int, fscale: float
) -> None:
    x, y = centre
    if colour in (UNKNOWN, OCCLUDED):
        cv2.rectangle(out, (x - r, y - r), (x + r, y + r), (0, 0, 255), 2)
    else:
        swatch = nominal_bgr(colour)
        cv2.circle(out, centre, r, (255, 255, 0) if colour == EMPTY else swatch, 1 if colour == EMPTY else 2, cv2.LINE_AA)
    # The label goes beside the hole, in the gap between rows.
    text = abbreviation(colour)
    at = (x + r + 2, y + r // 2)
    cv2.putText(out, text, at, font, fscale, (0, 0, 0), 3, cv2.LINE_AA)
    cv2.putText(out, text, at, font, fscale, (255, 255, 255), 1, cv2.LINE_AA)


def _hatch(out: NDArray[np.uint8], box: NDArray[np.float64]) -> None:
    poly = np.rint(box).astype(np.int32)
    mask = np.zeros(out.shape[:2], dtype=np.uint8)
    cv2.fillPoly(mask, [poly], 255)
    x0, y0 = poly.min(axis=0)
    x1, y1 = poly.max(axis=0)
    lines = np.zeros_like(mask)
    for d in range(int(x0 - (y1 - y0)), int(x1) + 1, 10):
        cv2.line(lines, (d, int(y1)), (d + int(y1 - y0), int(y0)), 255, 1)
    sel = (mask > 0) & (lines > 0)
    out[sel] = (0, 0, 255)
    cv2.polylines(out, [poly], True, (0, 0, 255), 2)
