"""Where is the board in the frame? Homographies from image pixels to board millimetres.

Three localisers share one method, ``locate(frame) -> Localisation``:

* :class:`MarkerLocaliser` finds the ArUco markers of the profile (on the
  board or its tray) in every frame and fits a homography to their corners;
* :class:`FixedCornersLocaliser` uses four corners picked once at
  calibration, and checks every frame that the hole pattern still lines up,
  so that a nudged board gives "board moved, recalibrate" instead of a
  silent misreading;
* :class:`BestEffortLocaliser` looks for the board itself: the largest
  quadrilateral of board-coloured plastic with the profile's aspect ratio.

All three then refine or check the fit against the board's own hole
pattern (:func:`measure_grid`): holes and pegs are rings of strong
gradient at known places, whatever colour the pegs are.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import BadInput
from pegwatch.vision.markers import DetectedMarker, detect_markers, profile_marker_points
from pegwatch.vision.profile import BoardProfile

logger = logging.getLogger(__name__)

RECT_PX_PER_MM = 4.0
"""Resolution of :func:`rectify`'s top-down board image: 4 px per mm puts
about 28 px across a code peg and 14 px across a key peg."""

GRID_PX_PER_MM = 2.0
"""Resolution at which the hole pattern is matched (coarse is enough: the
fit is sub-pixel)."""

SEARCH_MM = 4.0
"""How far the hole pattern is searched for around where it should be.
Kept under half the hole pitch so that a neighbour hole is never taken for
the right one."""

MOVED_MM = 1.5
"""Displacement of the hole pattern (anywhere on the board) that counts as a moved board."""

MIN_ROW_CONTRAST = 3.0
"""A row's pattern peak must stand this many robust deviations above its
surroundings to be trusted (hands and glare make weak, wandering peaks)."""

BOARD_MOVED = "board moved, recalibrate"
MARKERS_NOT_FOUND = "markers not found"
NO_BOARD = "no board found"


class LocalisationError(BadInput):
    """Bad localisation input: corners, references, frames."""


@dataclass(frozen=True)
class Localisation:
    """Where the board is in one frame.

    ``image_to_board`` maps image px to board mm (None when not ok).
    ``quality`` is 0..1 (1 = every marker seen and the hole pattern lines up
    exactly). ``shift_mm`` is the largest displacement of the hole pattern
    from where the localiser put it (after refinement, if any). ``size_mm``
    is the located board's size, which :func:`rectify` needs.
    ``row_shift_mm`` (when the hole pattern was matched) is, per row, where
    the row's holes were found relative to where the homography puts them
    (NaN for rows that gave no clear answer, e.g. under a hand).
    """

    ok: bool
    method: str
    image_to_board: NDArray[np.float64] | None
    problem: str | None = None
    quality: float = 0.0
    markers_seen: tuple[int, ...] = ()
    shift_mm: float | None = None
    size_mm: tuple[float, float] | None = None
    row_shift_mm: tuple[tuple[float, float], ...] | None = None

    def board_to_image(self) -> NDArray[np.float64] | None:
        """The inverse homography (board mm to image px), or None."""
        if self.image_to_board is None:
            return None
        inv = np.asarray(np.linalg.inv(self.image_to_board), dtype=np.float64)
        out: NDArray[np.float64] = inv / inv[2, 2]
        return out

    def to_board(self, points_px: Sequence[Sequence[float]] | NDArray[np.float64]) -> NDArray[np.float64]:
        """Image px (N×2) to board mm (N×2)."""
        if self.image_to_board is None:
            raise LocalisationError(f"no board localisation ({self.problem})")
        return _apply_h(self.image_to_board, np.asarray(points_px, dtype=np.float64))

    def to_image(self, points_mm: Sequence[Sequence[float]] | NDArray[np.float64]) -> NDArray[np.float64]:
        """Board mm (N×2) to image px (N×2)."""
        inv = self.board_to_image()
        if inv is None:
            raise LocalisationError(f"no board localisation ({self.problem})")
        return _apply_h(inv, np.asarray(points_mm, dtype=np.float64))


def _apply_h(hm: NDArray[np.float64], pts: NDArray[np.float64]) -> NDArray[np.float64]:
    pts = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    q = np.column_stack([pts, np.ones(len(pts))]) @ hm.T
    out: NDArray[np.float64] = q[:, :2] / q[:, 2:3]
    return out


def _failed(method: str, problem: str, **extra: Any) -> Localisation:
    return Localisation(ok=False, method=method, image_to_board=None, problem=problem, **extra)


def rectify(
    frame: NDArray[np.uint8], loc: Localisation, *, px_per_mm: float = RECT_PX_PER_MM
) -> NDArray[np.uint8]:
    """The top-down board image: board mm (x, y) lands at pixel (x*px_per_mm, y*px_per_mm).

    Its size is the board's ``size_mm`` times ``px_per_mm``.
    """
    if loc.image_to_board is None:
        raise LocalisationError(f"cannot rectify: {loc.problem or 'board not located'}")
    if loc.size_mm is None:
        raise LocalisationError("cannot rectify: the localisation does not say the board's size_mm")
    return rectify_board(frame, loc.image_to_board, loc.size_mm, px_per_mm=px_per_mm)


def rectify_board(
    frame: NDArray[np.uint8],
    image_to_board: NDArray[np.float64],
    size_mm: tuple[float, float],
    *,
    px_per_mm: float = RECT_PX_PER_MM,
    margin_mm: float = 0.0,
) -> NDArray[np.uint8]:
    """Warp ``frame`` to a top-down image of the board rectangle (plus ``margin_mm`` all round)."""
    s = np.array([[px_per_mm, 0, margin_mm * px_per_mm], [0, px_per_mm, margin_mm * px_per_mm], [0, 0, 1]])
    m = s @ image_to_board
    w = round((size_mm[0] + 2 * margin_mm) * px_per_mm)
    h = round((size_mm[1] + 2 * margin_mm) * px_per_mm)
    out = cv2.warpPerspective(frame, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(out, dtype=np.uint8)


# --- the hole pattern ---------------------------------------------------------


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
    mag = np.asarray(cv2.magnitude(gx, gy), dtype=np.float32)
    # Normalise so that the light level does not matter.
    mag /= float(np.mean(mag)) + 1e-3
    return mag


def _hole_edges(
    profile: BoardProfile,
    frame: NDArray[np.uint8],
    image_to_board: NDArray[np.float64],
    pts: NDArray[np.float64],
    search_mm: float,
    px_per_mm: float,
) -> tuple[NDArray[np.float32], tuple[float, float]]:
    """The edge map of the board around ``pts`` (board mm), warped in grey at
    low resolution; only the part with holes, for speed. Returns the map and
    the board mm at its top-left pixel."""
    pad = search_mm + profile.code_hole_diameter_mm + 2.0
    x0, y0 = pts.min(axis=0) - pad
    x1, y1 = pts.max(axis=0) + pad
    gray_frame = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    to_grid = np.array([[px_per_mm, 0, -x0 * px_per_mm], [0, px_per_mm, -y0 * px_per_mm], [0, 0, 1]]) @ image_to_board
    size = (round((x1 - x0) * px_per_mm), round((y1 - y0) * px_per_mm))
    gray = cv2.warpPerspective(gray_frame, to_grid, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return _edge_map(np.asarray(gray, dtype=np.float32)), (float(x0), float(y0))


def measure_grid(
    profile: BoardProfile,
    frame: NDArray[np.uint8],
    image_to_board: NDArray[np.float64],
    *,
    px_per_mm: float = GRID_PX_PER_MM,
    search_mm: float = SEARCH_MM,
) -> GridFit:
    """Find, row by row, how far the hole pattern sits from where ``image_to_board`` puts it.

    The edge magnitude around every hole of a row is summed into one patch
    (correlation is linear, so this equals summing the rows' ring
    responses), the patch is correlated with a ring of the hole's size, and
    the peak's sub-pixel offset is the row's shift.
    """
    edges, (x0, y0) = _hole_edges(
        profile, frame, image_to_board, np.array(profile.all_hole_centres_mm()), search_mm, px_per_mm
    )
    s = math.ceil(search_mm * px_per_mm)
    kinds = (
        (profile.code_hole_diameter_mm, profile.hole_centres_mm),
        (profile.key_hole_diameter_mm, profile.key_centres_mm),
    )
    # A broad ring covers both the peg's rim and the narrower bare hole.
    kernels = [_ring_kernel(round(0.4 * d * px_per_mm, 2), round(max(0.8, 0.14 * d * px_per_mm), 2)) for d, _ in kinds]
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


def _per_hole(
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
    edges, (x0, y0) = _hole_edges(profile, frame, image_to_board, pts, search_mm, px_per_mm)
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
    shifts, contrast = _per_hole(profile, frame, image_to_board, pts, diameters, search_mm=search_mm)
    ok = contrast >= MIN_ROW_CONTRAST
    if ok.sum() < max(8, len(pts) // 3):
        return None
    board_to_img = np.asarray(np.linalg.inv(image_to_board), dtype=np.float64)
    img_pts = _apply_h(board_to_img, pts[ok] + shifts[ok])
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


def _fit_to_shifts(
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
            found.append(_apply_h(board_to_img, pts + shift))
            where.append(pts)
            rows_of.extend([int(i)] * len(pts))
    img_pts, board_pts = np.concatenate(found), np.concatenate(where)
    new_h, inliers = cv2.findHomography(img_pts, board_pts, cv2.RANSAC, 1.0)
    if new_h is None or inliers is None or inliers.sum() < 0.5 * len(img_pts):
        return None
    h = np.asarray(new_h, dtype=np.float64)
    h = h / h[2, 2]
    resid = board_pts - _apply_h(h, img_pts)
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
) -> tuple[NDArray[np.float64], GridFit]:
    """Re-fit ``image_to_board`` to the hole pattern found near where it puts the holes.

    Every hole of a clearly answering row gives one correspondence (its
    image position as found, its board position from the profile); a
    RANSAC homography over them absorbs a board slid on its tray and much
    of the lens distortion. A second round, searching closer, runs only
    when the first had to move things far. Returns the new fit and the
    rows' residual shifts under it (the input when too few rows answer, or
    when no row is off by ``min_shift_mm``: the pattern's own small biases,
    such as shadows beside the pegs, are then not worth chasing).
    """
    h = image_to_board
    fit = measure_grid(profile, frame, h)
    if not _worst_residual(fit) >= min_shift_mm:
        return image_to_board, fit
    refined = False
    for k in range(rounds):
        if k > 0:
            fit = measure_grid(profile, frame, h, search_mm=2.5)
        moved = _worst_residual(fit)
        got = _fit_to_shifts(profile, h, fit, parts=parts)
        if got is None:
            break
        h, fit = got
        refined = True
        if not moved > again_mm:
            break
    return (h if refined else image_to_board), fit


def _quality_from_fit(profile: BoardProfile, fit: GridFit) -> float:
    clear = float(np.mean(fit.clear_rows))
    disp = fit.max_displacement(profile)
    align = 0.0 if math.isnan(disp) else 1.0 / (1.0 + disp)
    return clear * align


def _row_tuple(fit: GridFit) -> tuple[tuple[float, float], ...]:
    out = []
    for ok, (dx, dy) in zip(fit.clear_rows, fit.row_shift_mm, strict=True):
        out.append((float(dx), float(dy)) if ok else (math.nan, math.nan))
    return tuple(out)


def _worst_residual(fit: GridFit) -> float:
    ok = fit.clear_rows & np.all(np.isfinite(fit.row_shift_mm), axis=1)
    if not ok.any():
        return math.nan
    return float(np.max(np.linalg.norm(fit.row_shift_mm[ok], axis=1)))


# --- markers --------------------------------------------------------------------


class MarkerLocaliser:
    """Homography from the profile's ArUco markers, found afresh in every frame.

    At least two of the profile's markers must be seen. Detection runs on a
    half-size image (markers of 20 mm are still ~25 px wide there) and the
    corners are refined at full size. With ``refine`` the fit is then nudged
    onto the hole pattern, which absorbs lens distortion at the board and a
    board that slid on its tray; a pattern that cannot be found is reported
    in ``quality`` rather than trusted.
    """

    method = "markers"

    def __init__(
        self, profile: BoardProfile, *, refine: bool = True, detect_scale: float = 0.5, recheck_s: float = 1.0
    ) -> None:
        if not profile.markers:
            raise LocalisationError(f"board profile {profile.name} defines no markers")
        self.profile = profile
        self.refine = refine
        self.detect_scale = detect_scale
        self.recheck_s = recheck_s
        self._last: tuple[NDArray[np.float64], Localisation, int] | None = None
        self._rois: dict[int, tuple[int, int, int, int]] = {}

    def _find(self, gray: NDArray[np.uint8], offset: tuple[int, int] = (0, 0)) -> list[DetectedMarker]:
        scale = self.detect_scale
        small = gray
        if scale != 1.0:
            small = np.asarray(cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA), dtype=np.uint8)
        found = detect_markers(small, self.profile.aruco_dictionary)
        ox, oy = offset
        return [
            DetectedMarker(f.id, ((f.corners + 0.5) / scale - 0.5 + np.array([ox, oy], dtype=np.float32)).astype(np.float32))
            for f in found
        ]

    def _detect(self, frame: NDArray[np.uint8]) -> tuple[NDArray[np.float64], NDArray[np.float64], tuple[int, ...]]:
        gray = np.asarray(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame, dtype=np.uint8)
        hgt, wid = gray.shape
        found: list[DetectedMarker] = []
        if self._rois:
            # The camera is fixed: look where the markers were last time first.
            for x0, y0, x1, y1 in self._rois.values():
                found.extend(self._find(gray[y0:y1, x0:x1], (x0, y0)))
            if {f.id for f in found} != set(self._rois):
                found = []
        if not found:
            found = self._find(gray)
        img_pts, board_pts, used = profile_marker_points(self.profile, found)
        self._rois = {}
        for f in found:
            if f.id in used:
                (ax, ay), (bx, by) = f.corners.min(axis=0), f.corners.max(axis=0)
                m = 0.6 * max(bx - ax, by - ay) + 8
                self._rois[f.id] = (
                    max(0, int(ax - m)),
                    max(0, int(ay - m)),
                    min(wid, int(bx + m) + 1),
                    min(hgt, int(by + m) + 1),
                )
        if not used:
            return img_pts, board_pts, used
        if self.detect_scale != 1.0:
            scale = self.detect_scale
            corners = img_pts.astype(np.float32).reshape(-1, 1, 2)
            crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.02)
            win = max(2, round(1.5 / scale))
            cv2.cornerSubPix(gray, corners, (win, win), (-1, -1), crit)
            img_pts = corners.reshape(-1, 2).astype(np.float64)
        return img_pts, board_pts, used

    def locate(self, frame: NDArray[np.uint8]) -> Localisation:
        """Find the markers and fit; not ok with "markers not found" if fewer than two are seen."""
        _check_frame(frame)
        img_pts, board_pts, used = self._detect(frame)
        if len(used) < 2:
            return _failed(self.method, MARKERS_NOT_FOUND, markers_seen=used)
        found_h, _mask = cv2.findHomography(img_pts, board_pts, 0)
        if found_h is None:
            return _failed(self.method, MARKERS_NOT_FOUND, markers_seen=used)
        h: NDArray[np.float64] = np.asarray(found_h, dtype=np.float64)
        rms = float(np.sqrt(np.mean(np.sum((_apply_h(h, img_pts) - board_pts) ** 2, axis=1))))
        if rms > 2.0:
            # Markers that do not agree on one plane: one was moved or misplaced.
            return _failed(self.method, f"markers disagree by {rms:.1f} mm; check they are where the profile says", markers_seen=used)
        quality = len(used) / len(self.profile.markers) / (1.0 + rms)
        # The camera is fixed: while the markers stay put, reuse the refined fit
        # for up to recheck_s (a board nudged on its tray is caught by then).
        now = time.monotonic_ns()
        last = self._last
        if (
            last is not None
            and last[0].shape == img_pts.shape
            and float(np.max(np.abs(last[0] - img_pts))) < 0.35
            and now - last[2] < self.recheck_s * 1e9
        ):
            return last[1]
        shift = None
        rows: tuple[tuple[float, float], ...] | None = None
        if self.refine:
            h2, fit = refine_to_grid(self.profile, frame, h, min_shift_mm=0.7)
            worst = _worst_residual(fit)
            if not math.isnan(worst):
                h, shift = h2, worst
                rows = _row_tuple(fit)
                quality *= 0.5 + 0.5 * float(np.mean(fit.clear_rows)) / (1.0 + worst)
            else:
                quality *= 0.5
        loc = Localisation(True, self.method, h / h[2, 2], None, float(quality), used, shift, self.profile.size_mm, rows)
        self._last = (img_pts, loc, now)
        return loc


# --- fixed corners ----------------------------------------------------------------


@dataclass(frozen=True)
class CornersReference:
    """What the hole pattern looked like at calibration, for the board-moved check.

    ``row_shift_mm``: per-row displacement of the pattern from the picked
    corners' fit (picked corners are a little off; this is the baseline).
    """

    row_shift_mm: tuple[tuple[float, float], ...]
    row_contrast: tuple[float, ...]
    strength: float

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "row_shift_mm": [[round(float(a), 4) for a in r] for r in self.row_shift_mm],
            "row_contrast": [round(float(c), 3) for c in self.row_contrast],
            "strength": round(float(self.strength), 3),
        }


def reference_from_dict(data: Mapping[str, Any] | None) -> CornersReference | None:
    """Parse :meth:`CornersReference.to_dict`'s form (None passes through)."""
    if data is None:
        return None
    try:
        shifts = tuple((float(a), float(b)) for a, b in data["row_shift_mm"])
        contrast = tuple(float(c) for c in data["row_contrast"])
        strength = float(data["strength"])
    except (KeyError, TypeError, ValueError) as exc:
        raise LocalisationError(f"corners reference is malformed: {exc}") from None
    if len(shifts) != len(contrast):
        raise LocalisationError("corners reference: row_shift_mm and row_contrast differ in length")
    return CornersReference(shifts, contrast, strength)


def _corners_h(profile: BoardProfile, corners_px: Sequence[Sequence[float]] | NDArray[np.float64]) -> NDArray[np.float64]:
    pts = np.asarray(corners_px, dtype=np.float64)
    if pts.shape != (4, 2) or not np.all(np.isfinite(pts)):
        raise LocalisationError(f"corners must be 4 points x,y (TL, TR, BR, BL); got shape {pts.shape}")
    area = 0.5 * abs(
        sum(pts[i, 0] * pts[(i + 1) % 4, 1] - pts[(i + 1) % 4, 0] * pts[i, 1] for i in range(4))
    )
    if area < 100:
        raise LocalisationError("corners enclose no area; pick the board's four corners TL, TR, BR, BL")
    h = cv2.getPerspectiveTransform(pts.astype(np.float32), np.array(profile.corners_mm(), dtype=np.float32))
    out: NDArray[np.float64] = np.asarray(h, dtype=np.float64)
    out = out / out[2, 2]
    return out


def make_reference(
    profile: BoardProfile, corners_px: Sequence[Sequence[float]] | NDArray[np.float64], frame: NDArray[np.uint8]
) -> CornersReference:
    """Capture the board-moved reference from a calibration frame (no hand over the board)."""
    _check_frame(frame)
    return _reference_from_fit(measure_grid(profile, frame, _corners_h(profile, corners_px)))


def _reference_from_fit(fit: GridFit) -> CornersReference:
    return CornersReference(
        tuple((float(a), float(b)) for a, b in np.nan_to_num(fit.row_shift_mm)),
        tuple(float(c) for c in fit.row_contrast),
        fit.strength,
    )


class FixedCornersLocaliser:
    """Homography from four board corners picked once (TL, TR, BR, BL in image px).

    Every ``locate`` checks the hole pattern against the ``reference``
    captured at calibration (or, without one, against the first clear frame):
    when it has moved by :data:`MOVED_MM` or more anywhere on the board the
    result is not ok, with "board moved, recalibrate". Rows covered by a hand
    give no clear answer and are left out of the check, so hands and pegs do
    not trigger it. When too few rows answer, the board is "not visible"
    rather than guessed at.
    """

    method = "corners"

    def __init__(
        self,
        profile: BoardProfile,
        corners_px: Sequence[Sequence[float]] | NDArray[np.float64],
        *,
        reference: CornersReference | Mapping[str, Any] | None = None,
        check: bool = True,
    ) -> None:
        self.profile = profile
        self.corners_px = np.asarray(corners_px, dtype=np.float64)
        self.image_to_board = _corners_h(profile, self.corners_px)
        self._corners_only = self.image_to_board  # what the reference was measured against
        if isinstance(reference, Mapping):
            reference = reference_from_dict(reference)
        if reference is not None and len(reference.row_shift_mm) != profile.rows:
            raise LocalisationError(
                f"corners reference has {len(reference.row_shift_mm)} rows; board {profile.name} has {profile.rows}"
            )
        self.reference: CornersReference | None = None
        self.check = check
        if reference is not None:
            self._adopt(reference)

    def _adopt(self, reference: CornersReference) -> None:
        """Take ``reference`` as the calibrated state of the board.

        The reference knows where the holes really were relative to the
        picked corners: the fit moves onto them, so that clicks a little off
        and lens distortion do not shift every reading.
        """
        p = self.profile
        self.reference = reference
        ref_fit = GridFit(
            np.array(reference.row_shift_mm, dtype=np.float64),
            np.array(reference.row_contrast, dtype=np.float64),
            np.array([np.mean(p.hole_centres_mm(r) + p.key_centres_mm(r), axis=0) for r in range(1, p.rows + 1)]),
            reference.strength,
        )
        got = _fit_to_shifts(p, self._corners_only, ref_fit)
        self.image_to_board = self._corners_only if got is None else got[0]

    def locate(self, frame: NDArray[np.uint8]) -> Localisation:
        """The fixed fit, checked against the hole pattern.

        Without a reference, the first frame in which most rows answer
        clearly becomes the reference (the board is taken to be where the
        corners were picked at that moment).
        """
        _check_frame(frame)
        if not self.check:
            return Localisation(True, self.method, self.image_to_board, None, 0.5, size_mm=self.profile.size_mm)
        fit = measure_grid(self.profile, frame, self._corners_only)
        if self.reference is None and fit.clear_rows.sum() >= max(2, self.profile.rows // 2):
            disp0 = fit.max_displacement(self.profile)
            if not math.isnan(disp0) and disp0 < 3 * MOVED_MM:
                self._adopt(_reference_from_fit(fit))
                logger.info("board-moved reference taken from the first clear frame")
        h = self.image_to_board
        if self.reference is not None:
            base = np.array(self.reference.row_shift_mm)
            usable = np.array(self.reference.row_contrast) >= MIN_ROW_CONTRAST
        else:
            base = np.zeros((self.profile.rows, 2))
            usable = np.ones(self.profile.rows, dtype=bool)
        rel = GridFit(fit.row_shift_mm - base, np.where(usable, fit.row_contrast, 0.0), fit.row_centre_mm, fit.strength)
        clear = int(rel.clear_rows.sum())
        if clear < max(2, self.profile.rows // 4):
            return _failed(self.method, NO_BOARD, quality=0.0)
        disp = rel.max_displacement(self.profile)
        if math.isnan(disp) or disp >= MOVED_MM:
            logger.info("board moved by %.1f mm (%d clear rows)", disp, clear)
            return _failed(self.method, BOARD_MOVED, quality=0.0, shift_mm=None if math.isnan(disp) else disp)
        quality = _quality_from_fit(self.profile, rel)
        return Localisation(True, self.method, h, None, quality, (), disp, self.profile.size_mm)


# --- best effort ----------------------------------------------------------------


class BestEffortLocaliser:
    """Find the board without markers or corners: the largest board-shaped blob.

    Both polarities are tried (a dark board on a light tray, a light board
    on a dark table); a candidate must be a convex quadrilateral-ish blob
    with roughly the profile's aspect ratio. Its 180° ambiguity is settled by
    which way round the hole pattern fits. The result carries a modest
    ``quality`` so that a reader can be more careful with it.
    """

    method = "best-effort"

    def __init__(self, profile: BoardProfile, *, work_width: int = 640) -> None:
        self.profile = profile
        self.work_width = work_width

    def _candidates(self, frame: NDArray[np.uint8]) -> list[tuple[float, NDArray[np.float64]]]:
        w0 = frame.shape[1]
        scale = min(1.0, self.work_width / w0)
        small = cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else frame
        gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY) if small.ndim == 3 else small
        gray = cv2.GaussianBlur(gray, (0, 0), 2.0)
        area_img = gray.shape[0] * gray.shape[1]
        want = self.profile.size_mm[0] / self.profile.size_mm[1]
        out: list[tuple[float, NDArray[np.float64]]] = []
        otsu, _b = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        # One global threshold rarely separates board, tray and table at once:
        # try a ladder of them, both ways round.
        levels = sorted({int(otsu), *(int(v) for v in np.percentile(gray, [10, 20, 30, 40, 50, 60, 70, 80, 90]))})
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (9, 9))
        masks: list[NDArray[np.uint8]] = []
        for t in levels:
            _t, binary = cv2.threshold(gray, t, 255, cv2.THRESH_BINARY)
            b = np.asarray(binary, dtype=np.uint8)
            masks.extend((b, 255 - b))
        for mask in masks:
            # Close over the holes and pegs, open away thin bridges to the surroundings.
            m = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, kernel)
            m = cv2.morphologyEx(m, cv2.MORPH_OPEN, kernel)
            contours, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            for cnt in contours:
                area = cv2.contourArea(cnt)
                if area < 0.04 * area_img:
                    continue
                (cx, cy), (rw, rh), _ang = cv2.minAreaRect(cnt)
                if min(rw, rh) < 10:
                    continue
                aspect = max(rw, rh) / min(rw, rh)
                if not 0.8 * want <= aspect <= 1.25 * want:
                    continue
                fill = area / (rw * rh)
                if fill < 0.75:
                    continue
                hull = cv2.convexHull(cnt)
                quad = None
                peri = cv2.arcLength(hull, True)
                for eps in (0.01, 0.02, 0.03, 0.05):
                    approx = cv2.approxPolyDP(hull, eps * peri, True)
                    if len(approx) == 4:
                        quad = approx.reshape(4, 2).astype(np.float64)
                        break
                if quad is None:
                    quad = cv2.boxPoints(((cx, cy), (rw, rh), _ang)).astype(np.float64)
                quad = (quad + 0.5) / scale - 0.5
                out.append((area * fill, quad))
        out.sort(key=lambda t: -t[0])
        # Many thresholds find the same board: keep one of each.
        unique: list[tuple[float, NDArray[np.float64]]] = []
        for score, quad in out:
            centre = quad.mean(axis=0)
            if all(np.linalg.norm(centre - q.mean(axis=0)) > 10 for _s, q in unique):
                unique.append((score, quad))
        return unique

    def _unalias(
        self,
        frame: NDArray[np.uint8],
        h: NDArray[np.float64],
        fit: GridFit,
    ) -> tuple[NDArray[np.float64], GridFit]:
        """Settle a fit that may sit one row or one hole off.

        A regular grid also matches itself shifted by a whole pitch, except
        at its ends: the hypothesis whose end rows find holes too wins. (The
        secret row is left out here: shifted, it lands on the board's rim,
        which looks like holes to the ring filter.)
        """
        p = self.profile
        steps = [np.array(p.row_step_mm)]
        if len(p.hole_offsets_mm) > 1:
            steps.append(np.subtract(p.hole_offsets_mm[1], p.hole_offsets_mm[0]))

        gray = np.asarray(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame, dtype=np.uint8)
        best_h, best_fit = h, fit
        for step in steps:
            # A shift along x shows on the left and right edges, along y on the others.
            side = 0 if abs(step[0]) >= abs(step[1]) else 1
            here = _outline_score(p, gray, best_h)[side]
            for sign in (-1.0, 1.0):
                dx, dy = sign * step
                alt = np.array([[1, 0, dx], [0, 1, dy], [0, 0, 1]], dtype=np.float64) @ best_h
                # Move only on clear evidence: the board's edge is a strong line.
                if _outline_score(p, gray, alt)[side] > 1.25 * here:
                    best_h, best_fit = alt, measure_grid(p, frame, alt, search_mm=2.0)
                    break
        return best_h, best_fit

    def _orderings(self, quad: NDArray[np.float64]) -> list[NDArray[np.float64]]:
        """The two ways round (TL, TR, BR, BL) that put the board's long side along its x."""
        c = quad.mean(axis=0)
        ang = np.arctan2(quad[:, 1] - c[1], quad[:, 0] - c[0])
        q = quad[np.argsort(ang)]  # clockwise in image coordinates (y down)
        # Start at the corner where the following side is a long side.
        starts = []
        for i in range(4):
            a, b, d = q[i], q[(i + 1) % 4], q[(i + 3) % 4]
            if np.linalg.norm(b - a) >= np.linalg.norm(d - a):
                starts.append(i)
        return [np.roll(q, -i, axis=0) for i in starts[:2]]

    def locate(self, frame: NDArray[np.uint8]) -> Localisation:
        """Find the board; not ok with "no board found" when nothing board-like is seen."""
        _check_frame(frame)
        p = self.profile
        secret = np.array(p.secret_centres_mm())
        secret_d = np.full(len(secret), p.code_hole_diameter_mm)

        def secret_score(h: NDArray[np.float64], search: float) -> float:
            # Some boards look the same turned round but for the secret row.
            _sh, sc = _per_hole(p, frame, h, secret, secret_d, search_mm=search)
            return float(np.sum(np.clip(sc, 0, 20)))

        tries: list[tuple[float, NDArray[np.float64]]] = []
        for _score, quad in self._candidates(frame)[:3]:
            for order in self._orderings(quad):
                h = _corners_h(p, order)
                fit = measure_grid(p, frame, h, search_mm=3.0)
                if fit.clear_rows.sum() < max(2, p.rows // 3):
                    continue
                tries.append((float(np.sum(np.clip(fit.row_contrast, 0, 20))) + secret_score(h, 3.0), h))
        tries.sort(key=lambda t: -t[0])
        best: tuple[float, Localisation] | None = None
        for _score, h in tries[:3]:
            h2, fit2 = refine_to_grid(p, frame, h, rounds=3, again_mm=0.5)
            # The blob's corners may be off in scale too: finish hole by hole.
            for _ in range(2):
                h3 = refine_per_hole(p, frame, h2)
                if h3 is None:
                    break
                h2 = h3
                fit2 = measure_grid(p, frame, h2, search_mm=2.0)
            h2, fit2 = self._unalias(frame, h2, fit2)
            worst = _worst_residual(fit2)
            clear = float(np.mean(fit2.clear_rows))
            # Refuse rather than guess: the pattern must fit well over most rows.
            if h2 is h or math.isnan(worst) or worst > 1.5 or clear < 0.5:
                continue
            final = clear * 20 * p.rows / (1.0 + worst) + secret_score(h2, 1.5)
            # Best effort is never as trustworthy as markers or picked corners.
            quality = 0.6 * clear / (1.0 + worst)
            loc = Localisation(True, self.method, h2, None, quality, (), worst, p.size_mm, _row_tuple(fit2))
            if best is None or final > best[0]:
                best = (final, loc)
        if best is None:
            return _failed(self.method, NO_BOARD)
        return best[1]


def _outline_score(
    profile: BoardProfile, gray: NDArray[np.uint8], image_to_board: NDArray[np.float64]
) -> tuple[float, float]:
    """How strongly the board's edges show where ``image_to_board`` puts them: (left + right, top + bottom).

    Each edge's gradient on the expected line is compared with lines 3 mm
    inside and outside it; a fit off by a row or a hole has its edges on
    bare plastic or tray.
    """
    ppm, m = 2.0, 6.0
    w, h = profile.size_mm
    rect = rectify_board(gray, image_to_board, profile.size_mm, px_per_mm=ppm, margin_mm=m).astype(np.float32)
    gx = np.abs(cv2.Sobel(rect, cv2.CV_32F, 1, 0, ksize=3))
    gy = np.abs(cv2.Sobel(rect, cv2.CV_32F, 0, 1, ksize=3))
    off = round(3.0 * ppm)
    ys = slice(round((m + 0.15 * h) * ppm), round((m + 0.85 * h) * ppm))
    xs = slice(round((m + 0.15 * w) * ppm), round((m + 0.85 * w) * ppm))
    sides = [0.0, 0.0]
    for pos, along_x in ((m, True), (m + w, True), (m, False), (m + h, False)):
        c = round(pos * ppm)

        def line(k: int, along_x: bool = along_x) -> float:
            if along_x:
                return float(gx[ys, max(0, k - 1) : k + 2].max(axis=1).mean())
            return float(gy[max(0, k - 1) : k + 2, xs].max(axis=0).mean())

        sides[0 if along_x else 1] += line(c) / (0.5 * (line(c - off) + line(c + off)) + 1.0)
    return sides[0], sides[1]


def _check_frame(frame: NDArray[np.uint8]) -> None:
    if not isinstance(frame, np.ndarray) or frame.ndim not in (2, 3) or frame.shape[0] < 16 or frame.shape[1] < 16:
        raise LocalisationError(f"not an image: {getattr(frame, 'shape', type(frame).__name__)}")
    if frame.dtype != np.uint8:
        raise LocalisationError(f"frame must be 8-bit, got {frame.dtype}")


def localiser_for(
    profile: BoardProfile,
    method: str,
    *,
    corners_px: Sequence[Sequence[float]] | None = None,
    reference: CornersReference | Mapping[str, Any] | None = None,
) -> MarkerLocaliser | FixedCornersLocaliser | BestEffortLocaliser:
    """A localiser by method name ("markers", "corners", "best-effort")."""
    if method == "markers":
        return MarkerLocaliser(profile)
    if method == "corners":
        if corners_px is None:
            raise LocalisationError("the corners method needs four corners")
        return FixedCornersLocaliser(profile, corners_px, reference=reference)
    if method == "best-effort":
        return BestEffortLocaliser(profile)
    raise LocalisationError(f"unknown localisation method {method!r} (markers, corners, best-effort)")
