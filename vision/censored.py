"""Distances to the colour classes for holes whose channels the sensor clipped.

A channel at the sensor's ceiling (:data:`pegwatch.vision.pixel_stats.CLIP_LEVEL`)
says only that the true value is at least what was measured: such a hole
is classified by its best fit over the values clipping may hide.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.colour import ColourModel, linear_bgr_to_lab

FloatArray = NDArray[np.float64]

#: The linear-light factors a channel clipped by the sensor may hide.
CLIP_FACTORS = (1.0, 1.15, 1.3, 1.5, 1.75, 2.0, 2.4, 3.0, 4.0)


def censored_distances(
    model: ColourModel,
    features: FloatArray,
    linear: FloatArray | None,
    clipped: NDArray[np.bool_] | None,
    *,
    classes: NDArray[np.bool_] | None = None,
) -> FloatArray:
    """Squared distances (n, k), or (n, those) to ``classes`` alone (a mask); for clipped holes,
    the best over the values clipping hides.

    Each clipped channel is tried at every factor of ``CLIP_FACTORS``
    independently (two clipped channels: every pair), since clipping says
    nothing about how the hidden values compare.
    """
    d2 = model.distances2(features, classes=classes)
    if linear is None or clipped is None:
        return d2
    factors = np.asarray(CLIP_FACTORS, dtype=np.float64)
    any_clipped = clipped.any(axis=1)
    if not any_clipped.any():
        return d2
    # Holes clipped in the same channels share one grid of scales: each group
    # is scored in one call rather than hole by hole. A group is named by its
    # channels' bits (numpy's unique over rows costs four times as much).
    rows = np.flatnonzero(any_clipped)
    codes = clipped[rows].astype(np.intp) @ (1 << np.arange(clipped.shape[1]))
    for code in np.unique(codes):
        idx = rows[codes == code]
        chans = np.flatnonzero(clipped[idx[0]])
        grids = np.meshgrid(*([factors] * len(chans)), indexing="ij")
        scale = np.ones((grids[0].size, 3))
        for c, grid in zip(chans, grids, strict=True):
            scale[:, c] = grid.ravel()
        n, m = len(idx), len(scale)
        lab = linear_bgr_to_lab(linear[idx][:, None, :] * scale[None, :, :]).reshape(n * m, 3)
        rest = np.repeat(features[idx, 3:], m, axis=0)
        d2[idx] = model.distances2(np.concatenate([lab, rest], axis=1), classes=classes).reshape(n, m, -1).min(axis=1)
    return d2
