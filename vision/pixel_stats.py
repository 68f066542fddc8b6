"""Pixel statistics for the sampler: pixels gathered by index and split into groups, brightness, per-channel reductions and order, sampling patterns, robust medians, clipped channels, dark areas, local means."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
#: The pixels' element type, kept by the per-channel reductions.
Scalar = TypeVar("Scalar", bound=np.generic)
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


def split_groups(samples: NDArray[np.uint8], shapes: Sequence[tuple[int, int]]) -> tuple[NDArray[np.uint8], ...]:
    """Flat samples (n, channels), one gather's, as views (groups, samples, channels) per ``shapes``."""
    parts: list[NDArray[np.uint8]] = []
    start = 0
    for n, k in shapes:
        parts.append(samples[start : start + n * k].reshape(n, k, samples.shape[-1]))
        start += n * k
    return tuple(parts)


def brightness(px: NDArray[np.uint8]) -> NDArray[np.int16]:
    """Per pixel of ``px`` (..., 3), the sum of its channels. Added channel by channel: a
    numpy reduction over an axis of three is several times slower."""
    out: NDArray[np.int16] = px[..., 0].astype(np.int16) + px[..., 1] + px[..., 2]
    return out


def channel_max(x: NDArray[Scalar]) -> NDArray[Scalar]:
    """Per pixel of ``x`` (..., 3), its largest channel, taken channel by channel as in :func:`brightness`."""
    out: NDArray[Scalar] = np.maximum(np.maximum(x[..., 0], x[..., 1]), x[..., 2])
    return out


def channel_min(x: NDArray[Scalar]) -> NDArray[Scalar]:
    """Per pixel of ``x`` (..., 3), its smallest channel."""
    out: NDArray[Scalar] = np.minimum(np.minimum(x[..., 0], x[..., 1]), x[..., 2])
    return out


def by_channel(px: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Pixels ``px`` (holes, samples, 3) laid out as (holes, 3, samples): numpy reduces a last
    axis about five times faster than a middle one with three channels inside it."""
    return np.ascontiguousarray(px.transpose(0, 2, 1))


def channel_means(px: NDArray[np.uint8]) -> FloatArray:
    """Per hole of ``px`` (holes, samples, 3), each channel's mean: ``px.mean(axis=1)``'s numbers."""
    out: FloatArray = by_channel(px).sum(axis=2, dtype=np.uint32) / px.shape[1]
    return out


def median_of(values: FloatArray) -> float:
    """``np.median`` of finite ``values`` (1-D), by partition: the same number without its overhead."""
    return float(median_axis1(np.asarray(values)[None, :])[0])


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
    sat = (med >= CLIP_LEVEL) | (np.count_nonzero(by_channel(px) >= CLIP_LEVEL, axis=2) / px.shape[1] >= CLIP_SHARE)
    out: NDArray[np.bool_] = sat & (med.min(axis=1) < CLIP_LEVEL - 15)[:, None]
    return out


def local_matrix(beside: Sequence[Sequence[int]], n: int, n_cells: int) -> FloatArray:
    m = np.zeros((n, n_cells), dtype=np.float64)
    for i, cells in enumerate(beside):
        for c in cells:
            m[i, c] = 1.0
    return m



def trimmed_median(px: NDArray[np.uint8], ranks: IntArray) -> FloatArray:
    """Per-channel median of the pixels in the brightness-rank window ``ranks`` (contiguous).

    Each pixel is sorted by one integer: its brightness in the high bits, its place in the
    disc in the low ones. Equally bright pixels so keep their order on every machine (an
    argsort's ties are its algorithm's), and a plain sort of small integers finds the window
    in a third of the time of an argsort and its gather (four times a read).
    """
    n, k = px.shape[:2]
    bits = max(int(k - 1).bit_length(), 1)
    wide = np.dtype(np.int64 if 3 * 255 << bits >= 2**31 else np.int32)
    key = np.left_shift(brightness(px).astype(wide), bits) | np.arange(k, dtype=wide)
    key.sort(axis=1)
    lo, hi = int(ranks[0]), int(ranks[-1]) + 1
    where = (key[:, lo:hi] & ((1 << bits) - 1)) + (np.arange(n, dtype=wide) * k)[:, None]
    kept = np.take(px.reshape(-1, 3), where, axis=0)
    return median_axis1(kept)


def median_axis1(x: NDArray[Any]) -> FloatArray:
    """``np.median(x, axis=1)``: the same numbers without its overhead. Pixels (holes, samples,
    3) are sorted (:func:`channel_order`); other arrays partitioned."""
    n = x.shape[1]
    k = n // 2
    if x.dtype == np.uint8 and x.ndim == 3:
        ordered = channel_order(x)
        lo, hi = ordered[:, :, k - 1 + n % 2], ordered[:, :, k]
    else:
        part = np.partition(x, k if n % 2 else (k - 1, k), axis=1)
        lo, hi = part[:, k - 1 + n % 2], part[:, k]
    return (lo.astype(np.float64) + hi.astype(np.float64)) / 2.0


def channel_order(px: NDArray[np.uint8]) -> NDArray[np.int32]:
    """Each channel of each hole's samples ``px`` (holes, samples, 3) in ascending order, as
    (holes, 3, samples). Sorted as 32-bit integers: numpy's vectorised sort of those takes
    a half to a quarter of the time of a partition of the bytes, on every disc of every read."""
    out = by_channel(px).astype(np.int32)
    out.sort(axis=2)
    return out


def dark_area(win: NDArray[np.uint8], outer_mask: NDArray[np.bool_], share: float) -> FloatArray:
    """Per hole: the fraction of its window ``win`` (holes, samples, 3) darker than ``share`` of
    the plastic round it (the median brightness of its ``outer_mask`` samples)."""
    lum = brightness(win).astype(np.float32)
    plastic = median_axis1(lum[:, outer_mask])
    out: FloatArray = np.mean(lum < share * plastic[:, None], axis=1).astype(np.float64)
    return out


def local_mean(matrix: FloatArray, values: FloatArray, ok: NDArray[np.bool_]) -> FloatArray:
    w = matrix @ ok.astype(np.float64)
    s = matrix @ np.where(ok, values, 0.0)
    return np.where(w > 0, s / np.maximum(w, 1.0), 0.0)
