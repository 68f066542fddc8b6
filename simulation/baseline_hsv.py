"""The usual hobby approach, kept as a baseline for the benchmark.

Fixed HSV ranges, no calibration, no rejection: every hole gets the colour
whose hue range its mean colour falls in. It shares the localisation and the
hole sampling with the real reader so that the benchmark compares colour
decisions only.
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.reading import (
    EMPTY,
    ROW_EMPTY,
    ROW_OK,
    BoardReading,
    HoleReading,
    KeyReading,
    RowReading,
)
from pegwatch.vision.sampler import BoardSampler

#: OpenCV hue (0..180) upper bounds, in order, for saturated colours.
HUE_RANGES: tuple[tuple[int, str], ...] = (
    (8, "red"),
    (20, "orange"),
    (34, "yellow"),
    (85, "green"),
    (100, "cyan"),
    (130, "blue"),
    (150, "purple"),
    (170, "pink"),
    (181, "red"),
)


def classify_hsv(bgr: NDArray[np.float64]) -> list[str]:
    """Name the colours (n, 3 BGR 0..255) by fixed HSV thresholds."""
    px = np.clip(np.rint(bgr), 0, 255).astype(np.uint8).reshape(-1, 1, 3)
    hsv = cv2.cvtColor(px, cv2.COLOR_BGR2HSV).reshape(-1, 3).astype(int)
    out: list[str] = []
    for h, s, v in hsv:
        if v < 45:
            out.append(EMPTY)  # a dark hole
        elif s < 60 and v > 160:
            out.append("white")
        elif s < 70 and v < 110:
            out.append("black")
        elif 8 <= h < 22 and v < 120:
            out.append("brown")
        else:
            out.append(next(name for top, name in HUE_RANGES if h < top))
    return out


def read_hsv(
    profile: BoardProfile,
    sampler: BoardSampler,
    frame: NDArray[np.uint8],
    image_to_board: NDArray[np.float64],
    at_ns: int = 0,
) -> BoardReading:
    """Read a located board with fixed HSV ranges (always confident)."""
    code_px, _, key_px, *_ = sampler.sample_groups(frame, image_to_board)
    code = classify_hsv(code_px.mean(axis=1))
    keys = classify_hsv(key_px.mean(axis=1))
    rows: list[RowReading] = []
    k = profile.key_holes
    for r in range(profile.rows):
        holes = tuple(HoleReading(c, 1.0) for c in code[r * profile.holes : (r + 1) * profile.holes])
        kk = keys[r * k : (r + 1) * k]
        black = sum(1 for c in kk if c in ("black", "red"))
        white = sum(1 for c in kk if c == "white")
        kr = KeyReading(black, white, k - black - white, 1.0, ROW_OK if black + white else ROW_EMPTY)
        empty = all(h.colour == EMPTY for h in holes) and black + white == 0
        rows.append(RowReading(r + 1, holes, kr, ROW_EMPTY if empty else ROW_OK))
    base = profile.rows * profile.holes
    secret = tuple(HoleReading(c, 1.0) for c in code[base : base + profile.holes])
    return BoardReading(profile.name, tuple(rows), secret, None, at_ns)
