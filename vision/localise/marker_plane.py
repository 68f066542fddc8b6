"""The markers' corners on one plane: their homography, leaving out a marker that disagrees."""

from __future__ import annotations

import logging

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.localise.base import apply_homography

logger = logging.getLogger(__name__)

#: The markers' corners must agree on one plane within this (RMS, mm).
MAX_MARKER_RMS_MM = 2.0

Points = tuple[NDArray[np.float64], NDArray[np.float64], tuple[int, ...]]


def markers_homography(
    img_pts: NDArray[np.float64], board_pts: NDArray[np.float64], used: tuple[int, ...]
) -> tuple[NDArray[np.float64], float, Points] | None:
    """The markers' homography (image px -> board mm), its RMS (mm) and the
    points it used; a marker that disagrees with the others (misread, moved)
    is left out. None when they do not agree on one plane."""
    got = _fit(img_pts, board_pts)
    if got is not None and got[1] <= MAX_MARKER_RMS_MM:
        return got[0], got[1], (img_pts, board_pts, used)
    best: tuple[NDArray[np.float64], float, Points] | None = None
    if len(used) >= 4:
        for k in range(len(used)):
            keep = np.ones(len(img_pts), dtype=bool)
            keep[4 * k : 4 * k + 4] = False
            sub = _fit(img_pts[keep], board_pts[keep])
            if sub is not None and (best is None or sub[1] < best[1]):
                ids = used[:k] + used[k + 1 :]
                best = (sub[0], sub[1], (img_pts[keep], board_pts[keep], ids))
    if best is not None and best[1] <= MAX_MARKER_RMS_MM:
        logger.info("marker %s disagrees with the others; left out", sorted(set(used) - set(best[2][2])))
        return best
    return None


def _fit(ip: NDArray[np.float64], bp: NDArray[np.float64]) -> tuple[NDArray[np.float64], float] | None:
    found_h, _mask = cv2.findHomography(ip, bp, 0)
    if found_h is None:
        return None
    h = np.asarray(found_h, dtype=np.float64)
    rms = float(np.sqrt(np.mean(np.sum((apply_homography(h, ip) - bp) ** 2, axis=1))))
    return h, rms
