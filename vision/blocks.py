"""A disc of the frame's pixels round each hole, for tests that look beyond a hole's own sample.

``key_blocks`` and ``dark_pegs`` ask what stands anywhere near a hole (a
key peg leaning off it, a code peg's colour). Both sample a disc of board
millimetres round each hole, mapped through the fit of the board once per
fit (a kept fit is the same homography and warp, object for object), and
read pixels as the log of their linear light.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.colour import ColourModel, lab_to_linear_bgr, srgb_to_linear
from pegwatch.vision.localise import Localisation

FloatArray = NDArray[np.float64]

#: Natural log of each sRGB level's linear light (floored at 1e-4), by level.
LOG_LINEAR = np.log(np.maximum(srgb_to_linear(np.arange(256, dtype=np.uint8)), 1e-4)).astype(np.float32)


def log_linear(px: NDArray[np.uint8]) -> NDArray[np.float32]:
    """:data:`LOG_LINEAR` of every value of ``px`` (any shape): OpenCV's table look-up, the same
    numbers about three times faster than numpy's indexing, on every block of every read."""
    flat = np.ascontiguousarray(px).reshape(-1, 1)
    out: NDArray[np.float32] = np.asarray(cv2.LUT(flat, LOG_LINEAR), dtype=np.float32).reshape(px.shape)
    return out


class DiscPixels:
    """Flat pixel indices of a disc of ``radius_mm`` round each hole, ``per_mm`` samples a millimetre."""

    def __init__(self, radius_mm: float, per_mm: float) -> None:
        step = 1.0 / per_mm
        gx, gy = np.meshgrid(np.arange(-radius_mm, radius_mm + step / 2, step), np.arange(-radius_mm, radius_mm + step / 2, step))
        inside = np.hypot(gx, gy) <= radius_mm
        self.disc: FloatArray = np.column_stack([gx[inside], gy[inside]])
        # One fixed camera's fit at a time; replaced whole, read once (a reader in another thread may replace it).
        self._kept: list[tuple[object, object, bytes, tuple[int, int], NDArray[np.intp]]] = []

    def indices(self, loc: Localisation, centres_mm: FloatArray, shape: tuple[int, ...]) -> NDArray[np.intp]:
        """(holes, samples) indices into the frame's pixels (``shape``), for the holes at ``centres_mm``."""
        size, key = (int(shape[0]), int(shape[1])), np.asarray(centres_mm, dtype=np.float64).tobytes()
        kept = self._kept[0] if self._kept else None
        if kept is not None and kept[0] is loc.image_to_board and kept[1] is loc.warp and kept[2] == key and kept[3] == size:
            return kept[4]
        q = loc.to_image((centres_mm[:, None, :] + self.disc[None, :, :]).reshape(-1, 2))
        h, w = size
        x = np.clip(np.rint(q[:, 0]), 0, w - 1).astype(np.intp)
        y = np.clip(np.rint(q[:, 1]), 0, h - 1).astype(np.intp)
        out: NDArray[np.intp] = (y * w + x).reshape(len(centres_mm), len(self.disc))
        self._kept[:] = [(loc.image_to_board, loc.warp, key, size, out)]
        return out


def class_log_ratios(model: ColourModel, plastic_linear: Sequence[float]) -> FloatArray:
    """Per class of ``model`` (classes x BGR), the natural log of its calibrated linear colour over
    the plastic's: what a block's pixels are measured as, which neither the light's level nor its colour moves."""
    lin = lab_to_linear_bgr(np.asarray(model.means, dtype=np.float64)[:, :3])
    ratio = lin / np.maximum(np.asarray(plastic_linear, dtype=np.float64), 1e-6)[None, :]
    out: FloatArray = np.log(np.maximum(ratio, 1e-6))
    return out


def frame_bound(
    scores: FloatArray,
    references: NDArray[np.bool_],
    witnesses: Sequence[NDArray[np.bool_]],
    *,
    margin: float,
    witness_margin: float,
    min_references: int,
) -> float | None:
    """The score a hole may reach and still hold nothing, as this frame shows it; None when it cannot.

    ``references`` are holes known to hold nothing (rows not in play): the
    bound is their second highest score plus ``margin`` (the second: one
    reference with something over it that the cover test missed must not
    raise the bar for all). ``witnesses``, per kind of peg, the holes read
    surely as one: each kind must have one, and every one must score
    ``witness_margin`` above the bound, or the frame does not show its pegs
    standing out.
    """
    if int(references.sum()) < max(2, min_references) or any(not w.any() for w in witnesses):
        return None
    bound = float(np.partition(scores[references], -2)[-2]) + margin
    if witnesses and float(scores[np.logical_or.reduce(list(witnesses))].min()) < bound + witness_margin:
        return None
    return bound
