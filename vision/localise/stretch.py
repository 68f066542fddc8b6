"""A fit that markers at one end extrapolate to the far end, stretched onto the board's hole pattern.

Markers that all lie at one end of the board pin that end; the far end is
placed by extrapolation, and a small error in the markers' corners grows
with the lever arm. On issue 14's physically based boards it reached 6 to
23 mm at the far row: beyond what the pattern's row-by-row search
(:data:`~pegwatch.vision.localise.grid.SEARCH_MM`, under half a pitch) can
find, so the pattern's re-fit took neighbouring holes and the board was
read on a fit rows off. Such an error is mostly a stretch along the board,
about the markers. So before that re-fit, the fit is stretched along the
axis the markers leave open, about their middle, by the factor that lays
the most holes of the whole board on the pattern's rings at once: a
stretch that took a neighbouring row at the far end would lay the rows
between half-way off theirs.

A best stretch at the end of the searched range is no answer (something
else than the pattern decided it: on one board a sleeve's edge, at the
stretch's limit), and the fit is left as it was; so is one too small to
matter. The result is only a start: the pattern's re-fit, the
board's edges and the trust tests judge it as they judge the markers' fit
(:meth:`~pegwatch.vision.localise.grid.GridFit.holds_whole_board`).
"""

from __future__ import annotations

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.localise.grid import GRID_PX_PER_MM, hole_edges, hole_kernel
from pegwatch.vision.localise.outline import open_axes
from pegwatch.vision.localise.warp import ImageWarp
from pegwatch.vision.profile import BoardProfile

FloatArray = NDArray[np.float64]

#: The largest stretch tried, either way (a fraction of the distance from the markers).
STRETCH_RANGE = 0.12
#: The step between stretches tried: at the far end of a 250 mm board, 0.6 mm.
STRETCH_STEP = 0.0025


def stretched(
    profile: BoardProfile,
    frame: NDArray[np.uint8],
    image_to_board: FloatArray,
    used: tuple[int, ...],
    warp: ImageWarp | None = None,
) -> FloatArray:
    """``image_to_board`` stretched, along each axis the ``used`` markers leave open, onto the hole pattern.

    With a lens ``warp``, ``image_to_board`` maps its ideal pixels, as
    :func:`~pegwatch.vision.localise.grid.refine_to_grid` takes it. The input
    itself when the markers span the board or the pattern gives no answer.
    """
    h = np.asarray(image_to_board, dtype=np.float64)
    markers = np.array([m.centre_mm for m in profile.markers if m.id in used], dtype=np.float64).reshape(-1, 2)
    for axis in open_axes(markers, profile.size_mm):
        h = _stretch_along(profile, frame, h, axis, float(np.mean(markers[:, axis])), warp)
    return h


def _stretch_along(
    profile: BoardProfile, frame: NDArray[np.uint8], h: FloatArray, axis: int, anchor: float, warp: ImageWarp | None
) -> FloatArray:
    code_holes = [c for r in range(1, profile.rows + 1) for c in profile.hole_centres_mm(r)]
    key_holes = [c for r in range(1, profile.rows + 1) for c in profile.key_centres_mm(r)]
    holes = np.array(code_holes + key_holes, dtype=np.float64)
    kinds = np.arange(len(holes)) >= len(code_holes)  # the code holes, then the key holes
    far = float(np.max(np.abs(holes[:, axis] - anchor)))
    ppm = GRID_PX_PER_MM
    edges, (x0, y0) = hole_edges(profile, frame, h, holes, STRETCH_RANGE * far + 2.0, ppm, warp)
    if axis == 1:  # stretch along the map's rows: the same as along x on the transposed map
        edges, (x0, y0) = np.ascontiguousarray(edges.T), (y0, x0)
    factors = np.arange(-STRETCH_RANGE, STRETCH_RANGE + STRETCH_STEP / 2, STRETCH_STEP)
    # Where each hole lies on the edge map under each stretch: (stretches, holes).
    along = anchor + (holes[None, :, axis] - anchor) * (1.0 + factors[:, None])
    ix = np.clip(np.rint((along - x0) * ppm).astype(np.intp), 0, edges.shape[1] - 1)
    iy = np.rint((holes[:, 1 - axis] - y0) * ppm).astype(np.intp)
    scores = np.zeros(len(factors))
    # A stretch moves the holes along their lines only: the rings' response is needed on those lines alone.
    for kind, diameter in ((False, profile.code_hole_diameter_mm), (True, profile.key_hole_diameter_mm)):
        kernel = hole_kernel(diameter, ppm)
        half = kernel.shape[0] // 2
        padded = cv2.copyMakeBorder(edges, half, half, half, half, cv2.BORDER_CONSTANT, value=0)
        for y in np.unique(iy[kinds == kind]):
            line = cv2.matchTemplate(padded[y : y + 2 * half + 1], kernel, cv2.TM_CCORR)[0]
            on = (kinds == kind) & (iy == y)
            scores += line[ix[:, on]].sum(axis=1)
    best = int(np.argmax(scores))
    if best in (0, len(factors) - 1) or abs(factors[best]) < STRETCH_STEP / 2:
        return h
    scale = np.eye(3)
    scale[axis, axis] = 1.0 + float(factors[best])
    scale[axis, 2] = -anchor * float(factors[best])
    # The holes lie, on the fit's board, where the stretch puts them: the fit is stretched back.
    out: FloatArray = np.linalg.inv(scale) @ h
    return out
