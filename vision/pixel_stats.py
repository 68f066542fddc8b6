"""Pixel statistics for the sampler: pixels gathered by index, brightness, sampling patterns, robust medians, clipped channels, local means."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]

#: A channel whose median is this bright is clipped by the sensor: its true
#: value is only known to be at least that. A clipped hole is classified by
#: its best fit over the possible true values (the linear-light factors
#: (:data:`pegwatch.vision.censored.CLIP_FACTORS`), so a clipped orange that
#: could also be a yellow is "unknown".
CLIP_LEVEL = 249
CLIP_SHARE = 0.2


def pixels_at(image: NDArray[np.uint8], idx: IntArray) -> NDArray[np.uint8]:
    """The BGR pixels of a contiguous ``image`` at flat pixel indices ``idx`` (any shape):
    ``idx.shape + (3,)``. ``np.take`` gathers rows several times faster than fancy indexing
    (about 0.25 against 1.4 ms for a frame's 60,000 samples), and every read gathers them."""
    out: NDArray[np.uint8] = np.take(image.reshape(-1, 3), idx, axis=0)
    return out


def brightness(px: NDArray[np.uint8]) -> NDArray[np.int16]:
    """Per pixel of ``px`` (..., 3), the sum of its channels. Added channel by channel: a
    numpy reduction over an axis of three is several times slower."""
    out: NDArray[np.int16] = px[..., 0].astype(np.int16) + px[..., 1] + px[..., 2]
    return out


def disc_offsets(radius_px: float, inner_px: float = -1.0, step: int = 1) -> tuple[IntArray, IntArray]:
    r = max(radius_px, 1.0)
    n = int(np.ceil(r))
    dy, dx = np.mgrid[-n : n + 1 : step, -n : n + 1 : step]
    d2 = dx * dx + dy * dy
    keep = (d2 <= r * r) & (d2 > inner_px * inner_px if inner_px > 0 else True)
    return dy[keep].astype(np.intp), dx[keep].astype(np.intp)


def square_offsets(half_px: float, step: int = 1) -> tuple[IntArray, IntArray]:
    n = max(round(half_px), 1)
    dy, dx = np.mgrid[-n : n + 1 : step, -n : n + 1 : step]
    return dy.ravel().astype(np.intp), dx.ravel().astype(np.intp)


def clipped_channels(med: FloatArray, px: NDArray[np.uint8]) -> NDArray[np.bool_]:
    """Per channel: saturated while another channel is not (the hue is uncertain).

    A channel counts as saturated when the kept pixels' median is at the
    ceiling, or when a good part of the whole disc is (JPEG rings the
    ceiling down a little, and the brightest pixels were not kept).
    """
    sat = (med >= CLIP_LEVEL) | (np.mean(px >= CLIP_LEVEL, axis=1) >= CLIP_SHARE)
    out: NDArray[np.bool_] = sat & (med.min(axis=1) < CLIP_LEVEL - 15)[:, None]
    return out


def local_matrix(beside: Sequence[Sequence[int]], n: int, n_cells: int) -> FloatArray:
    m = np.zeros((n, n_cells), dtype=np.float64)
    for i, cells in enumerate(beside):
        for c in cells:
            m[i, c] = 1.0
    return m



def trimmed_median(px: NDArray[np.uint8], ranks: IntArray) -> FloatArray:
    """Per-channel median of the pixels in the brightness-rank window."""
    # Sorted as 64-bit integers: numpy breaks ties between equally bright pixels by the dtype's own algorithm.
    lum = brightness(px).astype(np.int64)
    order = np.argsort(lum, axis=1)[:, ranks]
    kept = np.take_along_axis(px, order[:, :, None], axis=1)
    return median_axis1(kept)


def median_axis1(x: NDArray[Any]) -> FloatArray:
    """``np.median(x, axis=1)``, by partition: the same numbers without its overhead."""
    n = x.shape[1]
    k = n // 2
    if n % 2:
        return np.asarray(np.partition(x, k, axis=1)[:, k], dtype=np.float64)
    part = np.partition(x, (k - 1, k), axis=1)
    return (part[:, k - 1].astype(np.float64) + part[:, k].astype(np.float64)) / 2.0


def local_mean(matrix: FloatArray, values: FloatArray, ok: NDArray[np.bool_]) -> FloatArray:
    w = matrix @ ok.astype(np.float64)
    s = matrix @ np.where(ok, values, 0.0)
    return np.where(w > 0, s / np.maximum(w, 1.0), 0.0)
