"""The lens's bend in a frame: from a calibrated lens, the markers' corners, or the board's own straight edges.

Four markers give sixteen corners across the frame, enough to tell a
lens's bend from their noise (:func:`~pegwatch.vision.localise.warp.fit_radial_warp`).
With a hand over one, three markers' twelve corners fit a homography
whether the lens bends or not, and the board's far side, between and
beyond them, is misplaced by up to a few millimetres on a wide lens.

The board itself is a plumb line: its four edges are straight in the
world, and a bent lens bows them in the picture. :func:`fit_bend_to_edges`
finds the edges near where the markers' fit puts them (as
:func:`~pegwatch.vision.localise.outline.edge_points` does), drops the
points off the smooth curve the rest of their edge follows (a hand's
edge), and fits the one radial term under which the edges are straightest.
Only straightness counts, not where the edges lie. The bend is kept only
when it explains far more of the crookedness than the edges' noise would
(:data:`MIN_F`) and leaves every edge within :data:`MAX_CROOKED_PX` of
straight; the markers' homography is then fitted under it.

Where the markers and the edges disagree by more than the reader trusts
(:data:`~pegwatch.vision.localise.outline.OUTLINE_TOLERANCE_MM`) and no
bend is known, :func:`bend_to_markers_and_edges` looks for the one radial
term under which both agree on one fit: an unmodelled bend moves the
markers at the tray's corners against the board's edges between them.
That fit places the board for reading; it never earns trust.
"""

from __future__ import annotations

import itertools
import logging

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.lens import Lens
from pegwatch.vision.localise.base import apply_homography
from pegwatch.vision.localise.marker_plane import MAX_MARKER_RMS_MM
from pegwatch.vision.localise.outline import OUTLINE_TOLERANCE_MM, edge_points, refit_to_edges
from pegwatch.vision.localise.warp import (
    MIN_CORNERS,
    RADIAL_RANGE,
    ImageWarp,
    LensWarp,
    RadialWarp,
    fit_radial_warp,
    golden_section,
)

logger = logging.getLogger(__name__)

FloatArray = NDArray[np.float64]

#: Edges that must show: three keep the homography's ends held while the
#: fourth may be under a hand or out of the frame.
MIN_EDGES = 3
#: Edges a bend is read from, once those left crooked are dropped.
MIN_STRAIGHT_EDGES = 2
#: Edges whose points lie this close to straight lines (px, RMS) are edge
#: noise: no bend is fitted.
MIN_MISFIT_PX = 0.35
#: The F statistic (one parameter against the edges' residual noise) a bend
#: must reach: about a 1-in-1,000 chance that noise alone straightens the
#: edges that much.
MIN_F = 11.0
#: An edge still this crooked (px, RMS) under the best bend is not all the
#: board's (a hand or a shadow along it): the bend is read from the others.
MAX_CROOKED_PX = 0.7
#: An edge point further than this (px, or three times the edge's median)
#: from the smooth curve through the rest is not the board's edge (a hand's,
#: a sleeve's) and is dropped.
OUTLIER_PX = 1.5
#: Points an edge needs to count.
MIN_POINTS = 8
#: Markers a bend read from the markers and the edges together needs: two
#: at one end leave the far end to extrapolation, whatever the bend.
MIN_MARKERS_FOR_BEND = 3


def frame_bend(
    lens: Lens | None,
    gray: NDArray[np.uint8],
    img_pts: FloatArray,
    board_pts: FloatArray,
    h: FloatArray,
    board_size_mm: tuple[float, float],
) -> tuple[ImageWarp | None, FloatArray, bool]:
    """The lens's bend in this frame, the homography from its ideal pixels
    (``h`` itself without a bend), and whether the bend is sure enough to
    hold the markers' fit against the hole pattern's.

    A calibrated ``lens`` says it, or else every marker's corners fit it
    (:func:`~pegwatch.vision.localise.warp.fit_radial_warp`); either is sure
    while every corner agrees with the fit under it (:func:`corners_agree`).
    With fewer markers, the board's own straight edges may show it
    (:func:`fit_bend_to_edges`; not sure: an edge's points are noisier than
    a marker's corners). A bend kept from another frame is never used:
    three markers' corners cannot check it (a homography absorbs most of
    it), and a wrong one misplaces the far side of the board.
    """
    img_pts = np.asarray(img_pts, dtype=np.float64).reshape(-1, 2)
    if lens is not None and lens.measured and lens.has_distortion:
        ideal = lens.undistort_points(img_pts)
        found, _mask = cv2.findHomography(ideal, board_pts, 0)
        if found is None:
            return None, h, False
        bent = np.asarray(found, dtype=np.float64) / found[2, 2]
        return LensWarp(lens), bent, corners_agree(bent, ideal, board_pts)
    size = (gray.shape[1], gray.shape[0])
    fitted = fit_radial_warp(img_pts, board_pts, size)
    if fitted is not None:
        return fitted[0], fitted[1], corners_agree(fitted[1], fitted[0].to_ideal(img_pts), board_pts)
    if len(img_pts) < MIN_CORNERS:
        fitted = fit_bend_to_edges(gray, img_pts, board_pts, h, size, board_size_mm)
    return (None, h, False) if fitted is None else (fitted[0], fitted[1], False)


def corners_agree(image_to_board: FloatArray, ideal_pts: FloatArray, board_pts: FloatArray) -> bool:
    """Whether, with the bend out (``ideal_pts``: the corners in the fit's
    ideal pixels; ``board_pts``: where they lie, mm), every marker corner lies within
    :data:`~pegwatch.vision.localise.marker_plane.MAX_MARKER_RMS_MM` of the
    fit: it then is sure enough to hold against the hole pattern. A corner
    further off is a marker partly hidden (a sleeve over its edge moves the
    corner the detector finds: seed 2, table 503, case 39, 10 px) or
    smeared; with the bend known, a whole marker's corners agree within
    about a millimetre.
    """
    misfit = np.linalg.norm(apply_homography(image_to_board, ideal_pts) - np.asarray(board_pts).reshape(-1, 2), axis=1)
    return bool(misfit.max() <= MAX_MARKER_RMS_MM)


def fit_bend_to_edges(
    gray: NDArray[np.uint8] | NDArray[np.float32],
    img_pts: FloatArray,
    board_pts: FloatArray,
    image_to_board: FloatArray,
    frame_size: tuple[int, int],
    board_size_mm: tuple[float, float],
) -> tuple[RadialWarp, FloatArray] | None:
    """The bend that makes the board's edges straight, and the markers'
    homography (``img_pts`` px -> ``board_pts`` mm) under it; None when fewer
    than :data:`MIN_EDGES` edges show or they are straight already.

    Only straightness counts, not where the edges lie: the strongest step
    across an edge may sit a little outside the board's top (its side seen
    at a slant, its shadow), the same all along it, which bends nothing.
    """
    edges = _edge_pixels(gray, image_to_board, board_size_mm)
    if len(edges) < MIN_EDGES:
        return None
    fitted = _straightest(edges, frame_size)
    if fitted is None:
        return None
    k, plain, bent = fitted
    warp = RadialWarp.for_frame(frame_size, k)
    ideal = warp.to_ideal(np.asarray(img_pts, dtype=np.float64).reshape(-1, 2))
    found, _mask = cv2.findHomography(ideal, np.asarray(board_pts, dtype=np.float64).reshape(-1, 2), 0)
    if found is None:
        return None
    logger.debug("lens bend from the board's edges: %.2f -> %.2f px off straight (k %.3f)", plain, bent, k)
    return warp, np.asarray(found, dtype=np.float64) / found[2, 2]


def _straightest(edges: list[FloatArray], frame_size: tuple[int, int]) -> tuple[float, float, float] | None:
    """The bend under which ``edges`` (px) are straightest, and their
    crookedness (px, RMS) without it and with it; None when it does not
    straighten them clearly. An edge left crooked by the best bend (a
    shadow's or a hand's along it, the shield's) is dropped and the bend
    fitted again to the others."""
    for _ in range(2):
        if len(edges) < MIN_STRAIGHT_EDGES:
            return None
        every = np.concatenate(edges)
        starts = np.cumsum([0] + [len(e) for e in edges])

        def crookedness(k: float, every: FloatArray = every, starts: NDArray[np.int_] = starts) -> float:
            ideal = RadialWarp.for_frame(frame_size, k).to_ideal(every)
            squares = sum(_squares_off_line(ideal[a:b]) for a, b in itertools.pairwise(starts))
            return float(np.sqrt(squares / len(every)))

        plain = crookedness(0.0)
        if plain < MIN_MISFIT_PX:
            return None
        k = golden_section(crookedness, RADIAL_RANGE, steps=10)
        warp = RadialWarp.for_frame(frame_size, k)
        each = [float(np.sqrt(_squares_off_line(warp.to_ideal(e)) / len(e))) for e in edges]
        if max(each) <= MAX_CROOKED_PX:
            bent = crookedness(k)
            # One more number fitted: kept when it explains far more of the
            # edges' crookedness than their noise would by chance (F test).
            freedom = len(every) - 2 * len(edges) - 1
            explained = (plain * plain - bent * bent) / max(bent * bent, 1e-12) * freedom
            return (k, plain, bent) if explained >= MIN_F else None
        edges = [e for e, c in zip(edges, each, strict=True) if c <= MAX_CROOKED_PX]
    return None


def _edge_pixels(
    gray: NDArray[np.uint8] | NDArray[np.float32], image_to_board: FloatArray, size_mm: tuple[float, float]
) -> list[FloatArray]:
    """Per edge that shows, the picture's edge points (px, n×2), less those
    off the smooth curve the rest follow (a hand's edge, a sleeve's)."""
    b2i: FloatArray = np.asarray(np.linalg.inv(image_to_board), dtype=np.float64)
    out: list[FloatArray] = []
    for e in edge_points(gray, lambda pts: apply_homography(b2i, pts), size_mm):
        if e is None:
            continue
        along, offset, normal = e
        px = apply_homography(b2i, along + offset[:, None] * normal[None, :])
        t, n = _edge_frame(px)
        res = n - np.polyval(np.polyfit(t, n, 2), t)
        keep = np.abs(res) <= max(OUTLIER_PX, 3.0 * float(np.median(np.abs(res))))
        if keep.sum() >= MIN_POINTS:
            out.append(px[keep])
    return out


def _edge_frame(px: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Points' coordinates along and across their principal line."""
    c = px - px.mean(axis=0)
    _, _, vt = np.linalg.svd(c, full_matrices=False)
    return c @ vt[0], c @ vt[1]


def _squares_off_line(px: FloatArray) -> float:
    """The sum of the points' squared distances from the straight line that
    fits them best: the smaller eigenvalue of their scatter matrix."""
    c = px - px.mean(axis=0)
    sxx, syy, sxy = float(c[:, 0] @ c[:, 0]), float(c[:, 1] @ c[:, 1]), float(c[:, 0] @ c[:, 1])
    # Rounding makes it a hair below zero for points exactly on a line.
    return max(0.0, 0.5 * (sxx + syy) - float(np.hypot(0.5 * (sxx - syy), sxy)))


def bend_to_markers_and_edges(
    gray: NDArray[np.uint8] | NDArray[np.float32],
    img_pts: FloatArray,
    board_pts: FloatArray,
    frame_size: tuple[int, int],
    board_size_mm: tuple[float, float],
) -> tuple[RadialWarp, FloatArray] | None:
    """The bend under which the markers' corners (px, and board mm) and all
    four of the board's edges agree within :data:`OUTLINE_TOLERANCE_MM`,
    and the fit (ideal px -> board mm) under it; None when no bend brings
    them together, or fewer than :data:`MIN_MARKERS_FOR_BEND` markers were
    seen.

    For each bend tried, the markers' homography under it starts a re-fit
    to the edges held by the corners
    (:func:`~pegwatch.vision.localise.outline.refit_to_edges`); the bend
    kept is the one whose worse disagreement, of an edge or of a corner, is
    least. The fit places the board for reading, never for trust: a bend
    is one more number to fit, and with it a marker moved a few
    millimetres, or a board slid on its tray, can be brought within the
    tolerance with the holes still further off than that.
    """
    img_pts = np.asarray(img_pts, dtype=np.float64).reshape(-1, 2)
    board_pts = np.asarray(board_pts, dtype=np.float64).reshape(-1, 2)
    if len(img_pts) < 4 * MIN_MARKERS_FOR_BEND:
        return None

    def placed(k: float) -> tuple[RadialWarp, FloatArray, float, float] | None:
        warp = RadialWarp.for_frame(frame_size, k)
        ideal = warp.to_ideal(img_pts)
        start, _mask = cv2.findHomography(ideal, board_pts, 0)
        if start is None:
            return None
        got = refit_to_edges(
            gray, np.asarray(start, dtype=np.float64), warp.to_image, board_size_mm, ideal, board_pts, rounds=2
        )
        if got is None or None in got[1]:
            return None
        return warp, got[0], got[2], got[3]

    def worse(k: float) -> float:
        got = placed(k)
        return float("inf") if got is None else max(got[2], got[3])

    # A coarse search: each bend tried costs a re-fit to the edges.
    best = placed(golden_section(worse, RADIAL_RANGE, steps=6, points=8))
    if best is None or max(best[2], best[3]) > OUTLINE_TOLERANCE_MM:
        return None
    logger.debug("markers and edges agree under a bend (k %.3f): edges %.1f mm, corners %.1f mm off", best[0].k, best[2], best[3])
    return best[0], best[1]
