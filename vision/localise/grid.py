"""The board's own hole pattern: how well it lines up with a homography, and fits to it.

Holes and pegs are rings of strong gradient at known places, whatever
colour the pegs are: :func:`measure_grid` finds, row by row, how far the
pattern sits from where a homography puts it; :func:`refine_to_grid` and
:func:`refine_per_hole` re-fit the homography onto it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.localise.base import apply_homography, edge_strength
from pegwatch.vision.localise.warp import ImageWarp, remap_maps
from pegwatch.vision.profile import BoardProfile

GRID_PX_PER_MM = 2.0
"""Resolution at which the hole pattern is matched (coarse is enough: the
fit is sub-pixel)."""

SEARCH_MM = 4.0
"""How far the hole pattern is searched for around where it should be.
Kept under half the hole pitch so that a neighbour hole is never taken for
the right one."""

MIN_ROW_CONTRAST = 3.0

HEAD_RING = 0.4
"""Radius of the ring kernel, times the peg head's diameter: a peg's rim
(and, on boards whose bare holes are nearly as wide as the heads, the hole)."""

HOLE_RINGS = (0.1, 0.15, 0.2, 0.25, 0.3)
"""Radii (times the head's diameter) tried for a board's bare holes, which
on real boards are often much narrower than the heads: see :func:`bare_hole_ring`."""
"""A row's pattern peak must stand this many robust deviations above its
surroundings to be trusted (hands and glare make weak, wandering peaks)."""


@dataclass(frozen=True)
class GridFit:
    """How well the board's hole pattern lines up with a homography.

    ``row_shift_mm[i]`` is the displacement (dx, dy) in board mm of row
    ``i + 1``'s holes from where the homography puts them (NaN when the row
    gave no clear answer); ``row_contrast[i]`` how clearly it answered.
    ``part_shift_mm[i, k]`` / ``part_contrast[i, k]`` are the same for the
    code holes (k = 0) and key holes (k = 1) of the row alone, which shows
    a turn within the row. ``strength`` is the median row contrast.
    """

    row_shift_mm: NDArray[np.float64]
    row_contrast: NDArray[np.float64]
    row_centre_mm: NDArray[np.float64]
    strength: float
    part_shift_mm: NDArray[np.float64] | None = None
    part_contrast: NDArray[np.float64] | None = None

    @property
    def clear_rows(self) -> NDArray[np.bool_]:
        """Rows whose pattern answered clearly."""
        out: NDArray[np.bool_] = self.row_contrast >= MIN_ROW_CONTRAST
        return out

    def motion(self) -> tuple[float, float, float]:
        """Robust rigid fit (dx mm, dy mm, angle rad) of the clear rows' shifts."""
        ok = self.clear_rows & np.all(np.isfinite(self.row_shift_mm), axis=1)
        if ok.sum() < 2:
            return (math.nan, math.nan, math.nan)
        d = self.row_shift_mm[ok]
        c = self.row_centre_mm[ok]
        keep = np.ones(len(d), dtype=bool)
        dx = dy = th = 0.0
        for _ in range(3):
            cc = c[keep] - c[keep].mean(axis=0)
            dd = d[keep]
            dx, dy = float(np.median(dd[:, 0])), float(np.median(dd[:, 1]))
            # Small rotation about the centroid: d = t + th * (-y, x).
            perp = np.column_stack([-cc[:, 1], cc[:, 0]])
            den = float((perp * perp).sum())
            th = float(((dd - dd.mean(axis=0)) * perp).sum() / den) if den > 1e-6 else 0.0
            ccent = c - c[keep].mean(axis=0)
            pred = np.array([dx, dy]) + th * np.column_stack([-ccent[:, 1], ccent[:, 0]])
            resid = np.linalg.norm(d - pred, axis=1)
            new_keep = resid < max(1.0, 2.5 * float(np.median(resid)))
            if new_keep.sum() < 2 or np.array_equal(new_keep, keep):
                break
            keep = new_keep
        return (dx, dy, th)

    def holds_whole_board(self, profile: BoardProfile) -> bool:
        """Whether the hole pattern alone places every row, as this fit measured it.

        A pattern repeats, so it cannot say which hole is which: a fit a whole
        repeat off lines up as well. But it can confirm a fit that two markers
        at one end extrapolate to the other. A fit that slipped by a repeat at
        the far end and not at the near one would put the rows between a
        fraction of a repeat off where they show. So every row that answered
        clearly must lie within a quarter of the pattern's shortest repeat of
        where the fit puts it (a row's holes and key holes one pitch over, or
        the next row): a quarter leaves as much again for a head's lean before
        any row could sit half-way to a slip.

        A row may give no answer (a hand over it) where both its neighbours
        answered: a fit's error is smooth along the board, and a slip would
        show in the rows beside it, which lie between it and the rows that
        answered in place. An end row that gave none is held when the line
        through the two rows before it puts it within the same quarter. Two
        silent rows side by side leave too much unseen.
        """
        n = len(self.row_shift_mm)
        answered = self.clear_rows & np.all(np.isfinite(self.row_shift_mm), axis=1)
        bound = shortest_repeat_mm(profile) / 4
        if n < 3 or np.any(np.linalg.norm(self.row_shift_mm[answered], axis=1) > bound):
            return False
        silent = ~answered
        if np.any(silent[1:] & silent[:-1]):
            return False
        for end, nxt, after in ((0, 1, 2), (n - 1, n - 2, n - 3)):
            if silent[end] and not np.linalg.norm(2 * self.row_shift_mm[nxt] - self.row_shift_mm[after]) <= bound:
                return False
        return True

    def confirms_fit(self, profile: BoardProfile) -> bool:
        """Whether the pattern confirms a fit that the board's four edges placed, though hands may hide rows.

        A row under a hand answers off, or not at all, so the pattern's say
        is a robust line through the rows that answered (per axis, the median
        of the pairwise slopes), against the row's place along the board. A
        fit a repeat off, or one whose end was pulled onto something else's
        edge, lies on such a line a repeat off at an end. The line must put
        both end rows within a quarter repeat, as :meth:`holds_whole_board`
        asks of every row; half the rows must have answered, and rows on the
        line (within that quarter) must stand in the first and the last
        third of the board, so that no end is the line's extrapolation.
        """
        ok = self.clear_rows & np.all(np.isfinite(self.row_shift_mm), axis=1)
        if ok.sum() < 2 or 2 * ok.sum() < len(ok):
            return False
        t = np.flatnonzero(ok).astype(np.float64)
        d = self.row_shift_mm[ok]
        i, j = np.triu_indices(len(t), 1)
        slope = np.median((d[j] - d[i]) / (t[j] - t[i])[:, None], axis=0)
        base = np.median(d - t[:, None] * slope[None, :], axis=0)
        bound = shortest_repeat_mm(profile) / 4
        ends = base[None, :] + np.array([[0.0], [len(ok) - 1.0]]) * slope[None, :]
        on = t[np.linalg.norm(d - (base[None, :] + t[:, None] * slope[None, :]), axis=1) <= bound]
        third = len(ok) / 3
        spanned = bool(np.any(on < third)) and bool(np.any(on >= len(ok) - third))
        return spanned and bool(np.max(np.linalg.norm(ends, axis=1)) <= bound)

    def max_displacement(self, profile: BoardProfile) -> float:
        """Largest displacement of any hole under :meth:`motion` (NaN if unknown)."""
        dx, dy, th = self.motion()
        if math.isnan(dx):
            return math.nan
        ok = self.clear_rows
        centre = self.row_centre_mm[ok].mean(axis=0)
        pts = np.array(profile.all_hole_centres_mm()) - centre
        disp = np.array([dx, dy]) + th * np.column_stack([-pts[:, 1], pts[:, 0]])
        return float(np.max(np.linalg.norm(disp, axis=1)))


@lru_cache(maxsize=16)
def shortest_repeat_mm(profile: BoardProfile) -> float:
    """The hole pattern's shortest repeat (mm): a row's holes and key holes one pitch over, or the next row."""
    pts = np.concatenate([np.array(profile.hole_centres_mm(1)), np.array(profile.key_centres_mm(1))])
    gaps = np.linalg.norm(pts[:, None, :] - pts[None, :, :], axis=2)
    return min(float(gaps[gaps > 0].min()), float(np.hypot(*profile.row_step_mm)))


@lru_cache(maxsize=32)
def _ring_kernel(radius_px: float, width_px: float) -> NDArray[np.float32]:
    half = math.ceil(radius_px + 2 * width_px + 1)
    yy, xx = np.mgrid[-half : half + 1, -half : half + 1].astype(np.float32)
    d = np.sqrt(xx * xx + yy * yy)
    k = np.exp(-((d - radius_px) ** 2) / (2 * width_px * width_px)).astype(np.float32)
    k -= k.mean()
    out: NDArray[np.float32] = k / np.abs(k).sum()
    return out


def _edge_map(gray: NDArray[np.float32]) -> NDArray[np.float32]:
    gx = cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3)
    mag = edge_strength(gx, gy)
    # Normalise so that the light level does not matter.
    mag /= float(np.mean(mag)) + 1e-3
    return mag


def hole_edges(
    profile: BoardProfile,
    frame: NDArray[np.uint8],
    image_to_board: NDArray[np.float64],
    pts: NDArray[np.float64],
    search_mm: float,
    px_per_mm: float,
    warp: ImageWarp | None = None,
) -> tuple[NDArray[np.float32], tuple[float, float]]:
    """The edge map of the board around ``pts`` (board mm), warped in grey at
    low resolution; only the part with holes, for speed. Returns the map and
    the board mm at its top-left pixel. With a lens ``warp``,
    ``image_to_board`` maps ideal pixels."""
    pad = search_mm + profile.code_hole_diameter_mm + 2.0
    x0, y0 = pts.min(axis=0) - pad
    x1, y1 = pts.max(axis=0) + pad
    gray_frame = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    to_grid = np.array([[px_per_mm, 0, -x0 * px_per_mm], [0, px_per_mm, -y0 * px_per_mm], [0, 0, 1]]) @ image_to_board
    size = (round((x1 - x0) * px_per_mm), round((y1 - y0) * px_per_mm))
    if warp is None:
        gray = cv2.warpPerspective(gray_frame, to_grid, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    else:
        mx, my = remap_maps(warp, np.asarray(np.linalg.inv(to_grid), dtype=np.float64), size)
        gray = cv2.remap(gray_frame, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return _edge_map(np.asarray(gray, dtype=np.float32)), (float(x0), float(y0))


def measure_grid(
    profile: BoardProfile,
    frame: NDArray[np.uint8],
    image_to_board: NDArray[np.float64],
    *,
    px_per_mm: float = GRID_PX_PER_MM,
    search_mm: float = SEARCH_MM,
    hole_ring: float | None = None,
    single: bool = False,
    warp: ImageWarp | None = None,
) -> GridFit:
    """Find, row by row, how far the hole pattern sits from where ``image_to_board`` puts it.

    ``hole_ring``: the board's bare-hole radius (times the head diameter)
    when it differs from the head's rim (:func:`bare_hole_ring`).

    The edge magnitude around every hole of a row is summed into one patch
    (correlation is linear, so this equals summing the rows' ring
    responses), the patch is correlated with a ring of the hole's size, and
    the peak's sub-pixel offset is the row's shift.
    """
    edges, (x0, y0) = hole_edges(
        profile, frame, image_to_board, np.array(profile.all_hole_centres_mm()), search_mm, px_per_mm, warp
    )
    s = math.ceil(search_mm * px_per_mm)
    kinds = (
        (profile.code_hole_diameter_mm, profile.hole_centres_mm),
        (profile.key_hole_diameter_mm, profile.key_centres_mm),
    )
    # A broad ring covers both the peg's rim and the narrower bare hole; a
    # board whose bare holes are much narrower gets a second ring for them.
    kernels = [hole_kernel(d, px_per_mm, hole_ring, single=single) for d, _ in kinds]
    n = profile.rows
    shifts = np.full((n, 2), np.nan)
    contrast = np.zeros(n)
    centres = np.zeros((n, 2))
    part_shift = np.full((n, 2, 2), np.nan)
    part_contrast = np.zeros((n, 2))
    for row in range(1, n + 1):
        scores: list[NDArray[np.float32]] = []
        pts_all: list[tuple[float, float]] = []
        for (_d, where), k in zip(kinds, kernels, strict=True):
            kh = k.shape[0] // 2
            side = 2 * (s + kh) + 1
            acc = np.zeros((side, side), dtype=np.float32)
            for x, y in where(row):
                pts_all.append((x, y))
                acc += cv2.getRectSubPix(edges, (side, side), ((x - x0) * px_per_mm, (y - y0) * px_per_mm))
            scores.append(np.asarray(cv2.matchTemplate(acc, k, cv2.TM_CCORR), dtype=np.float32))
        centres[row - 1] = (sum(p[0] for p in pts_all) / len(pts_all), sum(p[1] for p in pts_all) / len(pts_all))
        shifts[row - 1], contrast[row - 1] = _peak(scores[0] + scores[1], s, px_per_mm)
        for part in range(2):
            part_shift[row - 1, part], part_contrast[row - 1, part] = _peak(scores[part], s, px_per_mm)
    return GridFit(shifts, contrast, centres, float(np.median(contrast)), part_shift, part_contrast)


def hole_kernel(d: float, px_per_mm: float, hole_ring: float | None = None, *, single: bool = False) -> NDArray[np.float32]:
    """The ring kernel for holes of head diameter ``d``; two rings when the bare hole is narrower
    (``single``: the bare hole's ring alone)."""
    head = _ring_kernel(round(HEAD_RING * d * px_per_mm, 2), round(max(0.8, 0.35 * HEAD_RING * d * px_per_mm), 2))
    if hole_ring is None or abs(hole_ring - HEAD_RING) < 0.05:
        return head
    hole = _ring_kernel(round(hole_ring * d * px_per_mm, 2), round(max(0.8, 0.35 * hole_ring * d * px_per_mm), 2))
    if single:
        return hole
    n = max(head.shape[0], hole.shape[0])
    out = np.zeros((n, n), dtype=np.float32)
    for k in (head, hole):
        o = (n - k.shape[0]) // 2
        out[o : o + k.shape[0], o : o + k.shape[0]] += k
    out -= out.mean()
    result: NDArray[np.float32] = (out / np.abs(out).sum()).astype(np.float32)
    return result


def bare_hole_ring(profile: BoardProfile, frame: NDArray[np.uint8], image_to_board: NDArray[np.float64]) -> float | None:
    """The bare holes' ring radius (times the head diameter) on this board, if not the head's.

    The ring kernel's radius assumes a bare hole about as wide as a peg
    head, as on the rendered boards; many real boards have narrow holes in
    wide embossed seats, and there the head-sized ring finds no pattern at
    all. Measured on a calibration frame whose board placement is known
    (picked corners): the radius whose pattern stands out most, when it
    stands out more than the head's ring (None: the head's ring is right).
    """
    head = measure_grid(profile, frame, image_to_board).strength
    best, best_strength = None, head
    for ring in HOLE_RINGS:
        strength = measure_grid(profile, frame, image_to_board, hole_ring=ring, single=True).strength
        if strength > best_strength:
            best, best_strength = ring, strength
    return best


def _peak(total: NDArray[np.float32], s: int, px_per_mm: float) -> tuple[tuple[float, float], float]:
    """Sub-pixel peak offset (mm) of a score map centred on zero shift, and its robust contrast."""
    iy, ix = np.unravel_index(int(np.argmax(total)), total.shape)
    peak = float(total[iy, ix])
    flat = total.ravel()
    half = flat.size // 2
    # Median and MAD by partition: np.median's overhead dominates on maps this small.
    med = float(np.partition(flat, half)[half])
    mad = float(np.partition(np.abs(flat - med), half)[half]) + 1e-6
    contrast = (peak - med) / (1.4826 * mad)
    # Parabolic sub-pixel refinement, unless the peak sits on the edge
    # (then the pattern lies at or beyond the search edge: as far as we can tell).
    fx = fy = 0.0
    if 0 < ix < total.shape[1] - 1 and 0 < iy < total.shape[0] - 1:
        fx = _parabola(total[iy, ix - 1], peak, total[iy, ix + 1])
        fy = _parabola(total[iy - 1, ix], peak, total[iy + 1, ix])
    return ((ix + fx - s) / px_per_mm, (iy + fy - s) / px_per_mm), contrast


def per_hole(
    profile: BoardProfile,
    frame: NDArray[np.uint8],
    image_to_board: NDArray[np.float64],
    pts: NDArray[np.float64],
    diameters: NDArray[np.float64],
    *,
    search_mm: float,
    px_per_mm: float = GRID_PX_PER_MM,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each hole searched on its own: (N×2 shift in mm, N contrast)."""
    edges, (x0, y0) = hole_edges(profile, frame, image_to_board, pts, search_mm, px_per_mm)
    s = math.ceil(search_mm * px_per_mm)
    shifts = np.zeros((len(pts), 2))
    contrast = np.zeros(len(pts))
    for i, ((x, y), d) in enumerate(zip(pts, diameters, strict=True)):
        k = _ring_kernel(round(0.4 * d * px_per_mm, 2), round(max(0.8, 0.14 * d * px_per_mm), 2))
        side = 2 * (s + k.shape[0] // 2) + 1
        patch = cv2.getRectSubPix(edges, (side, side), ((x - x0) * px_per_mm, (y - y0) * px_per_mm))
        score = np.asarray(cv2.matchTemplate(patch, k, cv2.TM_CCORR), dtype=np.float32)
        shifts[i], contrast[i] = _peak(score, s, px_per_mm)
    return shifts, contrast


def refine_per_hole(
    profile: BoardProfile,
    frame: NDArray[np.uint8],
    image_to_board: NDArray[np.float64],
    *,
    search_mm: float = 2.0,
) -> NDArray[np.float64] | None:
    """Fit a homography to every hole found on its own (for fits that may be off in scale).

    Slower and noisier per hole than :func:`measure_grid`, but each hole
    is a separate correspondence, so a wrong scale or shear is corrected.
    Returns None when too few holes answer clearly.
    """
    pts = np.array(profile.all_hole_centres_mm())
    diameters = np.array(
        [d for _r in range(profile.rows) for d in [profile.code_hole_diameter_mm] * profile.holes + [profile.key_hole_diameter_mm] * profile.key_holes]
    )
    shifts, contrast = per_hole(profile, frame, image_to_board, pts, diameters, search_mm=search_mm)
    ok = contrast >= MIN_ROW_CONTRAST
    if ok.sum() < max(8, len(pts) // 3):
        return None
    board_to_img = np.asarray(np.linalg.inv(image_to_board), dtype=np.float64)
    img_pts = apply_homography(board_to_img, pts[ok] + shifts[ok])
    new_h, inliers = cv2.findHomography(img_pts, pts[ok], cv2.RANSAC, 0.8)
    if new_h is None or inliers is None or inliers.sum() < 0.5 * ok.sum():
        return None
    out: NDArray[np.float64] = np.asarray(new_h, dtype=np.float64)
    out = out / out[2, 2]
    return out


def _parabola(a: float, b: float, c: float) -> float:
    den = a - 2 * b + c
    if den >= 0:
        return 0.0
    return float(np.clip(0.5 * (a - c) / den, -0.5, 0.5))


def fit_to_shifts(
    profile: BoardProfile, image_to_board: NDArray[np.float64], fit: GridFit, *, parts: bool = True
) -> tuple[NDArray[np.float64], GridFit] | None:
    """The homography that puts every hole of the clear rows where ``fit`` found it, and the residuals."""
    ok = fit.clear_rows & np.all(np.isfinite(fit.row_shift_mm), axis=1)
    if ok.sum() < max(3, profile.rows // 3):
        return None
    board_to_img = np.asarray(np.linalg.inv(image_to_board), dtype=np.float64)
    found: list[NDArray[np.float64]] = []
    where: list[NDArray[np.float64]] = []
    rows_of: list[int] = []
    for i in np.flatnonzero(ok):
        for k, pts_of in enumerate((profile.hole_centres_mm, profile.key_centres_mm)):
            pts = np.array(pts_of(int(i) + 1))
            # Each part (code holes, key holes) where it was found, if it
            # answered clearly on its own and agrees with the row.
            shift = fit.row_shift_mm[i]
            if parts and fit.part_shift_mm is not None and fit.part_contrast is not None:
                part = fit.part_shift_mm[i, k]
                if fit.part_contrast[i, k] >= MIN_ROW_CONTRAST and np.linalg.norm(part - shift) < 1.5:
                    shift = part
            found.append(apply_homography(board_to_img, pts + shift))
            where.append(pts)
            rows_of.extend([int(i)] * len(pts))
    img_pts, board_pts = np.concatenate(found), np.concatenate(where)
    new_h, inliers = cv2.findHomography(img_pts, board_pts, cv2.RANSAC, 1.0)
    if new_h is None or inliers is None or inliers.sum() < 0.5 * len(img_pts):
        return None
    h = np.asarray(new_h, dtype=np.float64)
    h = h / h[2, 2]
    resid = board_pts - apply_homography(h, img_pts)
    shifts = np.array(fit.row_shift_mm, dtype=np.float64)
    rows = np.array(rows_of)
    for i in np.flatnonzero(ok):
        shifts[i] = resid[rows == i].mean(axis=0)
    return h, GridFit(shifts, fit.row_contrast, fit.row_centre_mm, fit.strength)  # residuals, row by row


def refine_to_grid(
    profile: BoardProfile,
    frame: NDArray[np.uint8],
    image_to_board: NDArray[np.float64],
    *,
    rounds: int = 2,
    min_shift_mm: float = 0.0,
    again_mm: float = 2.0,
    parts: bool = True,
    warp: ImageWarp | None = None,
) -> tuple[NDArray[np.float64], GridFit]:
    """Re-fit ``image_to_board`` to the hole pattern found near where it puts the holes.

    Every hole of a clearly answering row gives one correspondence (its
    image position as found, its board position from the profile); a
    RANSAC homography over them absorbs a board slid on its tray and, with
    no lens ``warp``, much of the lens distortion (with one, the fit is in
    the warp's ideal pixels and the bend stays the warp's). A second round, searching closer, runs only
    when the first had to move things far. Returns the new fit and the
    rows' residual shifts under it (the input when too few rows answer, or
    when no row is off by ``min_shift_mm``: the pattern's own small biases,
    such as shadows beside the pegs, are then not worth chasing).
    """
    h = image_to_board
    fit = measure_grid(profile, frame, h, warp=warp)
    if not worst_residual(fit) >= min_shift_mm:
        return image_to_board, fit
    refined = False
    for k in range(rounds):
        if k > 0:
            fit = measure_grid(profile, frame, h, search_mm=2.5, warp=warp)
        moved = worst_residual(fit)
        got = fit_to_shifts(profile, h, fit, parts=parts)
        if got is None:
            break
        h, fit = got
        refined = True
        if not moved > again_mm:
            break
    return (h if refined else image_to_board), fit


def quality_from_fit(profile: BoardProfile, fit: GridFit) -> float:
    clear = float(np.mean(fit.clear_rows))
    disp = fit.max_displacement(profile)
    align = 0.0 if math.isnan(disp) else 1.0 / (1.0 + disp)
    return clear * align


def row_tuple(fit: GridFit) -> tuple[tuple[float, float], ...]:
    out = []
    for ok, (dx, dy) in zip(fit.clear_rows, fit.row_shift_mm, strict=True):
        out.append((float(dx), float(dy)) if ok else (math.nan, math.nan))
    return tuple(out)


def worst_residual(fit: GridFit) -> float:
    ok = fit.clear_rows & np.all(np.isfinite(fit.row_shift_mm), axis=1)
    if not ok.any():
        return math.nan
    return float(np.max(np.linalg.norm(fit.row_shift_mm[ok], axis=1)))
