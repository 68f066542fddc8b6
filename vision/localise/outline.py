"""The board's own outline as a check on a fit: where its edges are, against where the fit puts them.

Markers place the board through the tray it lies on, and the hole pattern
refines that; both can be wrong together. Two markers on one side leave
the far end to extrapolation, and the hole pattern is periodic: a fit one
hole pitch off lines up with it as well as the right one. The board's
outline is neither: a plastic rectangle on a tray of another colour, whose
four edges the fit must put where the picture shows them.

:func:`outline_offsets` looks across each edge, at points along it, for
the strongest step in brightness within :data:`REACH_MM` of where the fit
puts the edge. An edge the picture does not show (under a hand, out of the
frame, a board the colour of its tray) gives no answer rather than a wrong
one. The reader does not accuse from a fit whose outline is off by more
than :data:`OUTLINE_TOLERANCE_MM` (see :class:`~pegwatch.vision.reader.BoardReader`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.localise.base import Localisation, apply_homography
from pegwatch.vision.localise.grid import shortest_repeat_mm
from pegwatch.vision.profile import BoardProfile

FloatArray = NDArray[np.float64]

#: How far (mm) either side of the fitted edge the real one is looked for:
#: more than a fit that misreads a marker puts it off, less than the
#: distance to the first row of holes.
REACH_MM = 6.0
#: Points looked at along each edge, and the share of them that must show a
#: clear step for the edge to answer.
POINTS_PER_EDGE = 24
MIN_SHARE = 1 / 3
#: The share of an edge's clear steps that must lie within AGREE_MM (mm,
#: across the edge) of their median for the edge to answer: more than a
#: lens's residual bow and a soft edge's spread, less than a hand's clutter.
AGREE_MM = 1.5
MIN_AGREE = 0.5
#: A step is clear when it is this many times the profile's median step
#: (plus a floor in grey levels, for noise on a flat profile).
STEP_RATIO = 4.0
STEP_FLOOR = 3.0
#: A fit whose outline lies further than this (mm) from the picture's, on
#: any edge that answers, is not trusted to accuse: the holes between can
#: be off by as much. Fits that place the holes within a millimetre put
#: the outline within about 0.9 mm on issue 14's physically based set; the
#: board's shadow on the tray, or its side seen at a slant, can make the
#: strongest step lie up to about 1.4 mm out (the project's own renderer).
OUTLINE_TOLERANCE_MM = 2.0


def outline_offsets(
    gray: NDArray[np.uint8] | NDArray[np.float32],
    to_image: Callable[[FloatArray], FloatArray],
    size_mm: tuple[float, float],
    *,
    step_mm: float = 0.25,
) -> tuple[float | None, ...]:
    """Per edge (top, right, bottom, left): how far outwards (mm) the picture's
    edge lies from the fit's, or None where the picture does not show it."""
    return tuple(
        None if found is None else float(np.median(found[1]))
        for found in edge_points(gray, to_image, size_mm, step_mm=step_mm)
    )


def edge_points(
    gray: NDArray[np.uint8] | NDArray[np.float32],
    to_image: Callable[[FloatArray], FloatArray],
    size_mm: tuple[float, float],
    *,
    step_mm: float = 0.25,
) -> list[tuple[FloatArray, FloatArray, FloatArray] | None]:
    """Per edge (top, right, bottom, left), where the picture shows it: the
    points on the profile's edge looked across (board mm, n×2), how far
    outwards the picture's edge lies from each (mm, n) and the outward
    normal; None for an edge the picture does not show."""
    w, h = size_mm
    img = np.asarray(gray, dtype=np.float32)
    rows, cols = img.shape[:2]
    edges = (((0.0, 0.0), (w, 0.0), (0.0, -1.0)), ((w, 0.0), (w, h), (1.0, 0.0)),
             ((w, h), (0.0, h), (0.0, 1.0)), ((0.0, h), (0.0, 0.0), (-1.0, 0.0)))
    ts = np.arange(-REACH_MM, REACH_MM + 1e-9, step_mm)
    out: list[tuple[FloatArray, FloatArray, FloatArray] | None] = []
    for a, b, normal in edges:
        pa, pb, nrm = np.array(a), np.array(b), np.array(normal)
        # Short of the corners, where two edges and a marker's shadow meet.
        along = pa[None, :] + np.linspace(0.08, 0.92, POINTS_PER_EDGE)[:, None] * (pb - pa)[None, :]
        pts = (along[:, None, :] + ts[None, :, None] * nrm[None, None, :]).reshape(-1, 2)
        px = to_image(pts).astype(np.float32).reshape(POINTS_PER_EDGE, len(ts), 2)
        inside = ((px[..., 0] >= 1) & (px[..., 0] <= cols - 2) & (px[..., 1] >= 1) & (px[..., 1] <= rows - 2)).all(axis=1)
        prof = cv2.remap(img, px[..., 0], px[..., 1], cv2.INTER_LINEAR)
        steps = np.abs(np.diff(prof, axis=1))
        k = np.argmax(steps, axis=1)
        peak = steps[np.arange(POINTS_PER_EDGE), k]
        clear = inside & (peak >= STEP_RATIO * np.median(steps, axis=1) + STEP_FLOOR)
        if clear.sum() < MIN_SHARE * POINTS_PER_EDGE:
            out.append(None)
            continue
        offsets = ts[k[clear]] + step_mm / 2
        # An edge lies along a line: steps scattered across the reach are
        # something else's (a sleeve's folds, a hand's shadow).
        if np.mean(np.abs(offsets - np.median(offsets)) <= AGREE_MM) < MIN_AGREE:
            out.append(None)
            continue
        out.append((along[clear], offsets, nrm))
    return out


def outline_error_mm(offsets: tuple[float | None, ...]) -> float | None:
    """The largest offset of an edge that answered (None: no edge did)."""
    seen = [abs(o) for o in offsets if o is not None]
    return max(seen) if seen else None


def end_lost(before: tuple[float | None, ...], after: tuple[float | None, ...], row_step_mm: tuple[float, float]) -> bool:
    """Does a re-fit lose a board end that the fit before it placed (per edge, from :func:`fit_edges`)?

    The ends are the two edges the rows repeat towards. The hole pattern
    repeats row by row, so a re-fit on it can slip by a row, which takes
    the ends a row step away, beyond :data:`REACH_MM`, where they do not
    answer at all. An end that showed within :data:`OUTLINE_TOLERANCE_MM`
    of the first fit and does not show for the re-fit has been slipped off.
    (One that shows further off has been moved, not slipped: a scale
    corrected along the board moves the ends by millimetres.)
    """
    ends, _sides = _ends_and_sides(row_step_mm)
    return any(
        (b := before[k]) is not None and abs(b) <= OUTLINE_TOLERANCE_MM and after[k] is None for k in ends
    )


def _ends_and_sides(row_step_mm: tuple[float, float]) -> tuple[tuple[int, int], tuple[int, int]]:
    """The edges (indices into top, right, bottom, left) the rows repeat towards, and the two along them."""
    return ((1, 3), (0, 2)) if abs(row_step_mm[0]) >= abs(row_step_mm[1]) else ((0, 2), (1, 3))


def edges_hold(edges: tuple[float | None, ...], row_step_mm: tuple[float, float]) -> bool:
    """Do the board's edges hold a fit on their own (per edge, from :func:`fit_edges`)?

    Both sides along the rows must show, and at least one end: a rectangle
    of the profile's size is then pinned across the rows and at one end,
    and every edge that shows must lie within :data:`OUTLINE_TOLERANCE_MM`.
    The other end, if hidden, is left to the hole pattern
    (:meth:`~pegwatch.vision.localise.grid.GridFit.holds_whole_board`).
    """
    ends, sides = _ends_and_sides(row_step_mm)
    if any(edges[k] is None for k in sides) or all(edges[k] is None for k in ends):
        return False
    err = outline_error_mm(edges)
    return err is not None and err <= OUTLINE_TOLERANCE_MM


def fit_to_outline(
    gray: NDArray[np.uint8] | NDArray[np.float32],
    image_to_board: FloatArray,
    warp_to_image: Callable[[FloatArray], FloatArray],
    size_mm: tuple[float, float],
    anchors_px: FloatArray,
    anchors_mm: FloatArray,
    *,
    rounds: int = 3,
) -> FloatArray | None:
    """A homography (the ideal pixels ``image_to_board`` maps -> board mm) re-fitted
    so that the board's edges land where the picture shows them, held by the
    anchors (the markers' corners: ideal px and board mm) too.

    Each round finds the edges from the last fit and takes, for every point
    of an edge that shows, the picture's edge point as the image of the
    profile's edge point (a slide along an edge is left to the other edges
    and the anchors). None when fewer than three edges show.
    """
    h = np.asarray(image_to_board, dtype=np.float64)
    anchors_px = np.asarray(anchors_px, dtype=np.float64).reshape(-1, 2)
    anchors_mm = np.asarray(anchors_mm, dtype=np.float64).reshape(-1, 2)
    for _ in range(rounds):
        b2i: FloatArray = np.asarray(np.linalg.inv(h), dtype=np.float64)

        def to_image(pts: FloatArray, b2i: FloatArray = b2i) -> FloatArray:
            return warp_to_image(apply_homography(b2i, pts))

        found = [e for e in edge_points(gray, to_image, size_mm) if e is not None]
        if len(found) < 3:
            return None
        ideal: list[FloatArray] = [anchors_px]
        board: list[FloatArray] = [anchors_mm]
        for along, offset, normal in found:
            ideal.append(apply_homography(b2i, along + offset[:, None] * normal[None, :]))
            board.append(along)
        got, _mask = cv2.findHomography(np.concatenate(ideal), np.concatenate(board), 0)
        if got is None:
            return None
        h = np.asarray(got, dtype=np.float64) / got[2, 2]
    return h


def fit_edges(
    gray: NDArray[np.uint8] | NDArray[np.float32],
    image_to_board: FloatArray,
    warp_to_image: Callable[[FloatArray], FloatArray],
    size_mm: tuple[float, float],
) -> tuple[float | None, ...]:
    """:func:`outline_offsets` of the fit ``image_to_board`` (ideal pixels -> board mm)."""
    b2i: FloatArray = np.asarray(np.linalg.inv(image_to_board), dtype=np.float64)
    return outline_offsets(gray, lambda pts: warp_to_image(apply_homography(b2i, pts)), size_mm)


def place_by_edges(
    gray: NDArray[np.uint8] | NDArray[np.float32],
    starts: tuple[FloatArray, ...],
    warp_to_image: Callable[[FloatArray], FloatArray],
    size_mm: tuple[float, float],
    anchors_px: FloatArray,
    anchors_mm: FloatArray,
) -> tuple[FloatArray, float, bool] | None:
    """The board re-fitted to its own edges and the anchors (the markers'
    corners; :func:`fit_to_outline`): the fit, its outline and whether it
    may be trusted. The first start (the hole pattern's re-fit) places the
    board for reading unless a later one (the markers' own fit) gives a fit
    that may be trusted.

    Trust comes back only when the re-fit is held on every side and two
    independent cues agree on it: all four edges show, and every edge and
    every anchor lies within :data:`OUTLINE_TOLERANCE_MM` of it (a wrong
    edge, a hand's, pulls the markers off; a hidden edge leaves its end of
    the board to extrapolation).
    """
    first: tuple[FloatArray, float, bool] | None = None
    for k, start in enumerate(starts):
        got = refit_to_edges(gray, start, warp_to_image, size_mm, anchors_px, anchors_mm)
        if got is None:
            continue
        h, edges, err, off = got
        if None not in edges and err <= OUTLINE_TOLERANCE_MM and off <= OUTLINE_TOLERANCE_MM:
            return h, err, True
        if k == 0:
            first = (h, err, False)
    return first


def refit_to_edges(
    gray: NDArray[np.uint8] | NDArray[np.float32],
    start: FloatArray,
    warp_to_image: Callable[[FloatArray], FloatArray],
    size_mm: tuple[float, float],
    anchors_px: FloatArray,
    anchors_mm: FloatArray,
    *,
    rounds: int = 3,
) -> tuple[FloatArray, tuple[float | None, ...], float, float] | None:
    """:func:`fit_to_outline` from ``start``, and how well it holds: the fit,
    its edges' offsets (per edge, :func:`fit_edges`), the largest of those
    and the largest distance (mm) of an anchor from it. None when no edge
    answers for it."""
    h = fit_to_outline(gray, start, warp_to_image, size_mm, anchors_px, anchors_mm, rounds=rounds)
    if h is None:
        return None
    edges = fit_edges(gray, h, warp_to_image, size_mm)
    err = outline_error_mm(edges)
    if err is None:
        return None
    off = float(np.max(np.linalg.norm(apply_homography(h, anchors_px) - anchors_mm, axis=1)))
    return h, edges, err, off


EDGE_NAMES = ("top", "right", "bottom", "left")


def placement_unconfirmed(loc: Localisation | None, profile: BoardProfile) -> bool:
    """Nothing confirms where a fit puts the holes: its outline is off, or
    an end is extrapolated, and fewer than two rows of the hole pattern
    answered near it: within a quarter of the pattern's shortest repeat of
    where the fit puts the row (as
    :meth:`~pegwatch.vision.localise.grid.GridFit.holds_whole_board` asks).
    Such a fit can be rows off, and each hole then reads its neighbour's
    peg. A row that answered further off lies under a hand, or the fit is
    off there: seed 2, table 502, case 170 lay a whole hole off with its
    two answering rows 2.2 and 4 mm off. One row near a fit is the least a
    repeating pattern gives by chance, as a line needs two points: seed 3,
    table 500, case 28 (its lens known) lay 6-22 mm off with one row
    1.5 mm off (and one 4.7 mm)."""
    if loc is None:
        return False
    bound = shortest_repeat_mm(profile) / 4
    near = sum(math.hypot(dx, dy) <= bound for dx, dy in loc.row_shift_mm or ())
    if near >= 2:
        return False
    return loc.unpinned_edge is not None or (loc.outline_mm is not None and loc.outline_mm > OUTLINE_TOLERANCE_MM)


def open_axes(markers_mm: FloatArray, size_mm: tuple[float, float]) -> list[int]:
    """The board axes (0: along x, 1: along y) whose far end the markers seen (``markers_mm``)
    leave to extrapolation: they span less than half the board that way; none without markers."""
    pts = np.asarray(markers_mm, dtype=np.float64).reshape(-1, 2)
    if len(pts) == 0:
        return []
    return [axis for axis in (0, 1) if float(np.ptp(pts[:, axis])) < size_mm[axis] / 2]


def unpinned_edge(
    edges: tuple[float | None, ...], markers_mm: FloatArray, size_mm: tuple[float, float], *, confirmed: bool = True
) -> str | None:
    """The end of the board that nothing but extrapolation places, if any.

    Markers that all lie at one end of the board (spanning less than half
    its length or width) place its far end by extrapolation alone; the hole
    pattern cannot pin it either, since it repeats (a fit one hole off lines
    up as well), unless every row of it answers close to the fit (the
    localiser asks :meth:`~pegwatch.vision.localise.grid.GridFit.holds_whole_board`
    first). That end is held only when its own edge shows (``edges``:
    per edge, top, right, bottom, left, from :func:`fit_edges`) within
    :data:`OUTLINE_TOLERANCE_MM`, and the hole pattern does not deny it
    (``confirmed``, :meth:`~pegwatch.vision.localise.grid.GridFit.confirms_fit`):
    something else's edge, a sleeve's, can lie where the board's hidden end would.
    """
    pts = np.asarray(markers_mm, dtype=np.float64).reshape(-1, 2)
    for axis in open_axes(pts, size_mm):
        near_low, near_high = ((1, 3), (2, 0))[axis]
        far = near_low if float(np.mean(pts[:, axis])) < size_mm[axis] / 2 else near_high
        seen = edges[far] if confirmed else None
        if seen is None or abs(seen) > OUTLINE_TOLERANCE_MM:
            return EDGE_NAMES[far]
    return None
