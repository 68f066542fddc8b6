"""The shared vocabulary of the localisers: the :class:`Localisation` result,
the :class:`Localiser` protocol, homography helpers and the top-down warp.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import BadInput
from pegwatch.vision.localise.warp import ImageWarp, fit_key, remap_maps, to_ideal, to_image
from pegwatch.vision.profile import BoardProfile

RECT_PX_PER_MM = 4.0
"""Resolution of :func:`rectify`'s top-down board image: 4 px per mm puts
about 28 px across a code peg and 14 px across a key peg."""

#: The fewest pixels per millimetre on the board the reader needs: the
#: smallest key peg of the shipped profiles (3.6 mm) is then 6.7 px across, and
#: the disc the sampler reads inside it (0.45 of its radius) is 1.5 px in
#: radius, seven whole pixels clear of the plastic's edge. Below that a single
#: pixel of blur or of misplacement decides a key peg's colour. (Issue 14's
#: boards at 1.8 to 2.5 px/mm, judged, accused no correct row on 6 tables;
#: 2.5, the figure the reader was first held to, is where the board must be
#: found, not where reading starts.)
MIN_PX_PER_MM = 1.85
#: The least :attr:`Localisation.sharpness` the reader needs: the share of a
#: step edge's contrast that survives within 0.5 mm (see :func:`board_sharpness`
#: and docs/lens.md). A Gaussian blur of sigma 0.6 mm, where a key peg's
#: colour is mixed with the plastic around it half-way in, gives about 0.3.
MIN_SHARPNESS = 0.3

BOARD_MOVED = "board moved, recalibrate"
MARKERS_NOT_FOUND = "markers not found"
NO_BOARD = "no board found"


class BoardProjection(Protocol):
    """A camera pose (and lens) that places 3D board points in the image:
    what a homography of the board plane cannot do for peg heads that stand
    above their holes."""

    def project(self, points_mm: NDArray[np.float64]) -> NDArray[np.float64]:
        """Board points (N×3: x, y in board mm, z in mm above the board's
        surface) to image px (N×2)."""
        ...


def lens_is_measured(pose: BoardProjection | None) -> bool:
    """True when ``pose`` carries a calibrated lens (``pose.lens.measured``)."""
    lens = getattr(pose, "lens", None)
    return bool(getattr(lens, "measured", False))


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

    ``pose`` places points above the board (peg heads) and, with a
    calibrated lens, the board itself with its distortion.
    ``px_per_mm`` is the image's resolution at the board's centre and
    ``sharpness`` how much of an edge's contrast survives blur on the board
    (0..1, see :func:`board_sharpness`); either below :data:`MIN_PX_PER_MM`
    or :data:`MIN_SHARPNESS` means the reader cannot trust small detail.
    ``held`` is True when the markers were not seen in this frame and the
    fixed camera's last good fit was kept.

    ``warp`` is the lens's bend (see :mod:`~pegwatch.vision.localise.warp`):
    with one, ``image_to_board`` maps the *ideal* pinhole's pixels, and
    :meth:`to_image` / :meth:`to_board` go through the warp to the frame's.
    ``outline_mm`` is how far (mm) the board's edges in the picture lie from
    where the fit puts them, at worst (None: not measured, or no edge shows;
    see :mod:`~pegwatch.vision.localise.outline`). ``unpinned_edge`` names
    the end of the board ("top", "right", "bottom", "left") that only
    extrapolation places: the markers seen are all at the other end and
    that end's own edge does not show (None: every end is held).
    ``bend_from_edges`` is True when the lens's bend was read from the
    board's edges alone (fewer than four markers, no calibrated lens) and
    the markers' own fit, without it, missed the edges: the holes may then
    be placed up to about a key peg's radius off.
    ``markers_unsure`` is True when fewer than two markers of the fit were
    read surely (the others are candidates: blur or a small board).
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
    pose: BoardProjection | None = None
    px_per_mm: float | None = None
    sharpness: float | None = None
    held: bool = False
    warp: ImageWarp | None = None
    outline_mm: float | None = None
    unpinned_edge: str | None = None
    bend_from_edges: bool = False
    markers_unsure: bool = False

    @property
    def too_coarse(self) -> bool:
        """The board is imaged with fewer than :data:`MIN_PX_PER_MM` px/mm."""
        return self.px_per_mm is not None and self.px_per_mm < MIN_PX_PER_MM

    @property
    def too_blurred(self) -> bool:
        """The board's sharpness is below :data:`MIN_SHARPNESS`."""
        return self.sharpness is not None and self.sharpness < MIN_SHARPNESS

    @property
    def fit_key(self) -> bytes:
        """What identifies this fit (see :func:`~pegwatch.vision.localise.warp.fit_key`)."""
        return fit_key(self.image_to_board, self.warp)

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
        ideal = to_ideal(self.warp, np.asarray(points_px, dtype=np.float64))
        return apply_homography(self.image_to_board, ideal)

    def to_image(self, points_mm: Sequence[Sequence[float]] | NDArray[np.float64]) -> NDArray[np.float64]:
        """Board mm (N×2) to image px (N×2)."""
        inv = self.board_to_image()
        if inv is None:
            raise LocalisationError(f"no board localisation ({self.problem})")
        return to_image(self.warp, apply_homography(inv, np.asarray(points_mm, dtype=np.float64)))


    def to_image_at_height(
        self, points_mm: Sequence[Sequence[float]] | NDArray[np.float64], height_mm: float
    ) -> NDArray[np.float64]:
        """Board mm (N×2) at ``height_mm`` above the board to image px (N×2).

        With a :attr:`pose` the points are projected in 3D; without one only
        the board plane is known, so this is :meth:`to_image`. On the board
        itself (``height_mm`` 0) the homography is used unless the lens was
        calibrated: the homography was fitted to this camera's pixels and
        absorbs a mild distortion where no lens model says better."""
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        if self.pose is None or (height_mm == 0.0 and not lens_is_measured(self.pose)):
            return self.to_image(pts)
        xyz = np.column_stack([pts, np.full(len(pts), float(height_mm))])
        above = np.asarray(self.pose.project(xyz), dtype=np.float64).reshape(-1, 2)
        if lens_is_measured(self.pose):
            return above
        # An estimated pinhole knows the lean of what stands up, not the
        # lens's bend: the lean is added where the fit puts the hole.
        xyz[:, 2] = 0.0
        below = np.asarray(self.pose.project(xyz), dtype=np.float64).reshape(-1, 2)
        return self.to_image(pts) + (above - below)


def apply_homography(hm: NDArray[np.float64], pts: NDArray[np.float64]) -> NDArray[np.float64]:
    """Map points (N×2, or anything that reshapes to it) through the homography ``hm``."""
    pts = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    q = np.column_stack([pts, np.ones(len(pts))]) @ hm.T
    out: NDArray[np.float64] = q[:, :2] / q[:, 2:3]
    return out


def failed(method: str, problem: str, **extra: Any) -> Localisation:
    """A not-ok :class:`Localisation` saying why."""
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
    return rectify_board(frame, loc.image_to_board, loc.size_mm, px_per_mm=px_per_mm, warp=loc.warp)


def rectify_board(
    frame: NDArray[np.uint8],
    image_to_board: NDArray[np.float64],
    size_mm: tuple[float, float],
    *,
    px_per_mm: float = RECT_PX_PER_MM,
    margin_mm: float = 0.0,
    warp: ImageWarp | None = None,
) -> NDArray[np.uint8]:
    """Warp ``frame`` to a top-down image of the board rectangle (plus ``margin_mm`` all round).

    With a lens ``warp``, ``image_to_board`` maps ideal pixels (see :class:`Localisation`).
    """
    s = np.array([[px_per_mm, 0, margin_mm * px_per_mm], [0, px_per_mm, margin_mm * px_per_mm], [0, 0, 1]])
    m = s @ image_to_board
    w = round((size_mm[0] + 2 * margin_mm) * px_per_mm)
    h = round((size_mm[1] + 2 * margin_mm) * px_per_mm)
    if warp is None:
        out = cv2.warpPerspective(frame, m, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        return np.asarray(out, dtype=np.uint8)
    mx, my = remap_maps(warp, np.asarray(np.linalg.inv(m), dtype=np.float64), (w, h))
    out = cv2.remap(frame, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return np.asarray(out, dtype=np.uint8)


class Localiser(Protocol):
    """Anything that finds the board in a frame: markers, fixed corners, best effort."""

    method: str
    """The calibration's name for the method ("markers", "corners", "best-effort")."""

    def locate(self, frame: NDArray[np.uint8], *, at_ns: int | None = None) -> Localisation:
        """Where the board is in ``frame`` (not ok, with ``problem`` set, when not found).

        ``at_ns``: the frame's monotonic stamp (None: now). A localiser that
        keeps a fit between frames times it by these stamps, never by the
        clock when the frame happens to be read.
        """
        ...


def check_frame(frame: NDArray[np.uint8]) -> None:
    """Refuse anything that is not an 8-bit image of at least 16×16 pixels."""
    if not isinstance(frame, np.ndarray) or frame.ndim not in (2, 3) or frame.shape[0] < 16 or frame.shape[1] < 16:
        raise LocalisationError(f"not an image: {getattr(frame, 'shape', type(frame).__name__)}")
    if frame.dtype != np.uint8:
        raise LocalisationError(f"frame must be 8-bit, got {frame.dtype}")


def corners_homography(profile: BoardProfile, corners_px: Sequence[Sequence[float]] | NDArray[np.float64]) -> NDArray[np.float64]:
    """The homography from four picked corners (TL, TR, BR, BL in image px) to board mm."""
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


def board_scale_px_per_mm(image_to_board: NDArray[np.float64], point_mm: tuple[float, float]) -> float:
    """Pixels per mm at ``point_mm`` on the board: the square root of the area scale there
    (the geometric mean of the scales along and across an oblique view)."""
    b2i = np.linalg.inv(np.asarray(image_to_board, dtype=np.float64))
    x, y = point_mm
    d = 0.5
    pts = apply_homography(b2i, np.array([[x - d, y], [x + d, y], [x, y - d], [x, y + d]]))
    jx = (pts[1] - pts[0]) / (2 * d)
    jy = (pts[3] - pts[2]) / (2 * d)
    return math.sqrt(abs(float(jx[0] * jy[1] - jx[1] * jy[0])))


#: Extra blur (px) applied to measure the edges' own blur (see :func:`edge_blur_px`).
REBLUR_PX = 2.0
#: Sharpness is measured on a grid of square patches over the board: how many
#: across and down, and each patch's side (mm): enough to hold a hole and
#: its rim at any tilt, few enough to keep the steady read fast.
SHARPNESS_PATCHES = (4, 2)
SHARPNESS_PATCH_MM = 22.0
_ORIENTATION_BINS = 4
#: Which percentile of the edges' ratios gives the blur (see :func:`_sigma_from_ratios`).
RATIO_PERCENTILE = 75.0
#: The weakest re-blurred gradient (Sobel units, gain 8) taken as an edge: a
#: step of 24 grey levels under a blur of 6 px still reaches it; noise does not.
_MIN_EDGE = 12.0


def edge_strength(gx: NDArray[Any], gy: NDArray[Any]) -> NDArray[np.float32]:
    """The gradient's magnitude, by numpy's elementwise arithmetic: the same numbers wherever the
    arrays lie in memory. OpenCV's ``magnitude`` rounds its vector and scalar paths apart, and which
    path a pixel takes depends on the buffer's alignment: one frame, read twice, gave two edge maps
    (and on a few boards two fits, a micron apart, and two readings)."""
    out: NDArray[np.float32] = np.sqrt(gx * gx + gy * gy, dtype=np.float32)
    return out


def _edge_ratios(gray: NDArray[np.uint8], *, tile: int = 0) -> tuple[NDArray[np.float32], NDArray[np.intp]]:
    """At the strongest edge crests of ``gray``: gradient ratio before/after a
    re-blur of :data:`REBLUR_PX`, and the edge's orientation bin (0..3).

    ``tile`` > 0: ``gray`` is square patches of that height stacked one
    under the other; the rows near their seams are left out."""
    g = gray.astype(np.float32)
    g1 = cv2.GaussianBlur(g, (0, 0), REBLUR_PX)
    gx0 = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
    gy0 = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    gx1 = cv2.Sobel(g1, cv2.CV_32F, 1, 0, ksize=3)
    gy1 = cv2.Sobel(g1, cv2.CV_32F, 0, 1, ksize=3)
    m1 = edge_strength(gx1, gy1)
    # Candidates: strong enough, clear of the borders and seams the blur reaches across.
    rows_n, cols_n = int(gray.shape[0]), int(gray.shape[1])
    b = math.ceil(3 * REBLUR_PX)
    # (A fifth of the stack's strongest edge keeps the work small; the strongest
    # edges of each patch and orientation are chosen from these below.)
    cand: NDArray[np.bool_] = m1 >= max(_MIN_EDGE, 0.2 * float(m1.max()))
    cand[:, :b] = False
    cand[:, -b:] = False
    step = tile if tile > 0 else rows_n
    for y in range(0, rows_n, step):
        cand[y : y + b] = False
        cand[max(0, y + step - b) : y + step] = False
    ys, xs = np.nonzero(cand)
    m1s = m1[ys, xs]
    gxs, gys = gx1[ys, xs], gy1[ys, xs]
    # Orientation of the gradient in four bins (0: along x, 1: 45 degrees,
    # 2: along y, 3: 135 degrees in image axes, y down), and a crest where
    # the re-blurred gradient peaks across the edge (non-maximum suppression).
    ax, ay = np.abs(gxs), np.abs(gys)
    tan22 = np.float32(math.tan(math.pi / 8))
    bins = np.where(ay <= tan22 * ax, 0, np.where(ax <= tan22 * ay, 2, np.where(gxs * gys > 0, 1, 3))).astype(np.intp)
    dy = np.array([0, 1, 1, 1], dtype=np.intp)[bins]
    dx = np.array([1, 1, 0, -1], dtype=np.intp)[bins]
    fwd = m1[np.minimum(ys + dy, rows_n - 1), np.clip(xs + dx, 0, cols_n - 1)]
    back = m1[np.maximum(ys - dy, 0), np.clip(xs - dx, 0, cols_n - 1)]
    crest = (m1s >= fwd) & (m1s > back)
    ys, xs, bins, m1s = ys[crest], xs[crest], bins[crest], m1s[crest]
    # The strongest edges of each orientation in each patch: motion blur
    # lowers the crests across its direction only, and those are the ones
    # to measure; a patch's contrast is its own (the board's rim, a hole).
    group = (ys // step) * _ORIENTATION_BINS + bins
    top = np.zeros((rows_n // step + 1) * _ORIENTATION_BINS, dtype=np.float32)
    np.maximum.at(top, group, m1s)
    keep = m1s >= 0.5 * top[group]
    ys, xs, bins, m1s = ys[keep], xs[keep], bins[keep], m1s[keep]
    m0 = np.hypot(gx0[ys, xs], gy0[ys, xs])
    ratio = m0 / m1s
    return ratio.astype(np.float32), bins


def _sigma_from_ratios(ratio: NDArray[np.float32], bins: NDArray[np.intp], *, min_edges: int = 8) -> float | None:
    """The blur (px) of the worst-blurred orientation: motion smears one way."""
    worst: float | None = None
    for k in range(_ORIENTATION_BINS):
        r = ratio[bins == k]
        if len(r) < min_edges:
            continue
        # The upper quartile: thin lines and a peg's shaded dome read blurrier
        # than they are (their re-blurred crests merge); isolated edges do not.
        k_q = min(len(r) - 1, int(len(r) * RATIO_PERCENTILE / 100.0))
        q = float(np.partition(r, k_q)[k_q])
        sigma = float("inf") if q <= 1.0 + 1e-3 else REBLUR_PX / math.sqrt(q * q - 1.0)
        worst = sigma if worst is None else max(worst, sigma)
    return worst


def edge_blur_px(gray: NDArray[np.uint8]) -> float | None:
    """The blur of the strongest edges in ``gray``, as a Gaussian's sigma in px.

    An edge blurred by sigma has a gradient peak C/sqrt(2 pi sigma^2); blurred
    again by a known s its peak drops by sqrt(sigma^2 + s^2)/sigma, whatever
    its contrast C (Zhuo and Sim, "Defocus map estimation from a single
    image", 2011). The upper quartile of that ratio over the strongest edge
    pixels, per edge orientation, gives sigma; the worst orientation counts, since
    motion blurs only across its direction. It includes the pixel's own
    size and the Sobel operator (about 0.8 px in all for a perfect edge).
    None when there are too few edges to tell.
    """
    ratio, bins = _edge_ratios(gray)
    return _sigma_from_ratios(ratio, bins)


def sharpness_from_blur_mm(sigma_mm: float) -> float:
    """Sharpness 0..1 of a blur of ``sigma_mm``: the share of a step edge's contrast
    that changes within 0.5 mm across it, erf(0.25 / (sigma sqrt 2))."""
    if not math.isfinite(sigma_mm):
        return 0.0
    if sigma_mm <= 0.0:
        return 1.0
    return math.erf(0.25 / (sigma_mm * math.sqrt(2.0)))


def board_sharpness(
    frame: NDArray[np.uint8], image_to_board: NDArray[np.float64], size_mm: tuple[float, float]
) -> tuple[float | None, float | None]:
    """(px per mm at the board's centre, sharpness 0..1) of the board in ``frame``.

    Sharpness is measured on a grid of patches over the board's area
    (:data:`SHARPNESS_PATCHES`) and is None when they show too few edges.
    """
    w, h = size_mm
    ppm = board_scale_px_per_mm(image_to_board, (w / 2.0, h / 2.0))
    if not math.isfinite(ppm) or ppm <= 0:
        return None, None
    nx, ny = SHARPNESS_PATCHES
    cx = (np.arange(nx) + 0.5) * w / nx
    cy = (np.arange(ny) + 0.5) * h / ny
    centres_mm = np.array([(x, y) for y in cy for x in cx])
    b2i = np.linalg.inv(np.asarray(image_to_board, dtype=np.float64))
    centres = apply_homography(b2i, centres_mm)
    half = max(12, round(SHARPNESS_PATCH_MM * ppm / 2.0))
    hgt, wid = frame.shape[:2]
    patches: list[NDArray[np.uint8]] = []
    for x, y in centres:
        if not (math.isfinite(x) and math.isfinite(y)):
            continue
        x0, y0 = int(x) - half, int(y) - half
        x1, y1 = x0 + 2 * half, y0 + 2 * half
        cx0, cy0, cx1, cy1 = max(0, x0), max(0, y0), min(wid, x1), min(hgt, y1)
        if cx1 - cx0 < half or cy1 - cy0 < half:
            continue
        patch = frame[cy0:cy1, cx0:cx1]
        gray = np.asarray(patch if patch.ndim == 2 else cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY), dtype=np.uint8)
        if gray.shape != (2 * half, 2 * half):
            gray = np.asarray(
                cv2.copyMakeBorder(gray, cy0 - y0, y1 - cy1, cx0 - x0, x1 - cx1, cv2.BORDER_REPLICATE), dtype=np.uint8
            )
        patches.append(gray)
    if not patches:
        return ppm, None
    # One stack, one pass of each filter: the patches are small and many.
    ratio, bins = _edge_ratios(np.vstack(patches), tile=2 * half)
    sigma = _sigma_from_ratios(ratio, bins, min_edges=12)
    if sigma is None:
        return ppm, None
    return ppm, sharpness_from_blur_mm(sigma / ppm)
