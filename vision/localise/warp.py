"""The lens's bend: between the pixels a camera gives and those an ideal pinhole would.

A homography maps a plane to a pinhole's image. A real lens bends straight
lines (barrel distortion, strongest on the cheap wide lenses a table camera
has), so a homography fitted to markers at the tray's corners misplaces the
holes between them by a millimetre or more: enough to sample a key peg's
neighbour, or to put a margin cell across the board's edge. An
:class:`ImageWarp` takes that bend out: the homography maps the board to
*ideal* pixels, and the warp takes ideal pixels to the frame's.

Two warps:

* :class:`LensWarp`, a lens calibrated with ``pegwatch calibrate-lens``;
* :class:`RadialWarp`, one radial term fitted to the markers' own corners
  (:func:`fit_radial_warp`) when the lens was never calibrated. The four
  markers of a profile give sixteen corners across the frame: enough to
  see the bend, as a plumb line would.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.lens import Lens

logger = logging.getLogger(__name__)

FloatArray = NDArray[np.float64]

#: The radial term's search range, in units of the image's half-diagonal:
#: wider than any lens a table camera has (-0.3 pulls the frame's corners
#: in by 30 %), and short of where the model folds over at the corners.
RADIAL_RANGE = (-0.3, 0.2)
#: A fitted bend is used only when it takes at least this fraction off the
#: markers' misfit, and that misfit was more than corner noise (px, RMS):
#: a straight lens then keeps the plain homography.
MIN_GAIN = 0.25
MIN_MISFIT_PX = 0.35
#: Corners needed to fit the bend: a homography takes 8 numbers, the bend
#: one more, and three markers (12 corners) leave it to the corners' noise.
MIN_CORNERS = 16


class ImageWarp(Protocol):
    """Between the frame's pixels and an ideal pinhole's (N×2 both ways)."""

    def to_ideal(self, points_px: FloatArray) -> FloatArray: ...

    def to_image(self, ideal_px: FloatArray) -> FloatArray: ...

    def key(self) -> bytes:
        """What identifies this warp, for caches of sample positions."""
        ...


@dataclass(frozen=True)
class RadialWarp:
    """image = centre + (u - centre) * (1 + k * |u - centre|² / scale²), u ideal.

    The lens model OpenCV and the lens makers use (its first radial term),
    with ``centre`` the image's centre and ``scale`` its half-diagonal: ``k``
    is how much a point at the frame's corner moves, as a fraction of its
    distance from the centre (negative: barrel distortion).
    """

    centre: tuple[float, float]
    scale: float
    k: float

    @classmethod
    def for_frame(cls, size: tuple[int, int], k: float) -> RadialWarp:
        """The warp of a ``size`` = (width, height) frame with bend ``k``."""
        w, h = size
        return cls(((w - 1) / 2.0, (h - 1) / 2.0), float(np.hypot(w, h)) / 2.0, float(k))

    def to_image(self, ideal_px: FloatArray) -> FloatArray:
        u = np.asarray(ideal_px, dtype=np.float64).reshape(-1, 2)
        (cx, cy), k = self.centre, self.k / (self.scale * self.scale)
        x, y = u[:, 0] - cx, u[:, 1] - cy
        f = 1.0 + k * (x * x + y * y)
        return np.column_stack([cx + x * f, cy + y * f])

    def to_ideal(self, points_px: FloatArray) -> FloatArray:
        # No closed form: Newton's method on the radius, which converges in a
        # few steps for any bend in RADIAL_RANGE over the frame.
        p = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
        (cx, cy), k = self.centre, self.k / (self.scale * self.scale)
        px, py = p[:, 0] - cx, p[:, 1] - cy
        rd = np.hypot(px, py)
        r = rd.copy()
        for _ in range(8):
            r = r - (r * (1.0 + k * r * r) - rd) / (1.0 + 3.0 * k * r * r)
        scale = np.divide(r, rd, out=np.ones_like(rd), where=rd > 0)
        return np.column_stack([cx + px * scale, cy + py * scale])

    def key(self) -> bytes:
        return np.array([*self.centre, self.scale, self.k], dtype=np.float64).tobytes()


@dataclass(frozen=True)
class LensWarp:
    """The bend of a calibrated lens (its distortion coefficients)."""

    lens: Lens

    def to_ideal(self, points_px: FloatArray) -> FloatArray:
        return self.lens.undistort_points(points_px)

    def to_image(self, ideal_px: FloatArray) -> FloatArray:
        return self.lens.distort_points(ideal_px)

    def key(self) -> bytes:
        return self.lens.camera_matrix.tobytes() + self.lens.distortion.tobytes()


def to_image(warp: ImageWarp | None, ideal_px: FloatArray) -> FloatArray:
    """``warp.to_image``, or the points themselves without a warp."""
    return np.asarray(ideal_px, dtype=np.float64).reshape(-1, 2) if warp is None else warp.to_image(ideal_px)


def to_ideal(warp: ImageWarp | None, points_px: FloatArray) -> FloatArray:
    """``warp.to_ideal``, or the points themselves without a warp."""
    return np.asarray(points_px, dtype=np.float64).reshape(-1, 2) if warp is None else warp.to_ideal(points_px)


def warp_key(warp: ImageWarp | None) -> bytes:
    """What identifies ``warp`` (empty for none)."""
    return b"" if warp is None else warp.key()


def fit_key(image_to_board: FloatArray | None, warp: ImageWarp | None = None) -> bytes:
    """What identifies a fit of the board, its homography and its bend (empty for none): the key
    of everything cached while a fixed camera's fit is kept (sample pixels, heads' places, light)."""
    if image_to_board is None:
        return b""
    return np.asarray(image_to_board, dtype=np.float64).tobytes() + warp_key(warp)


def _misfit(img_pts: FloatArray, board_pts: FloatArray) -> tuple[FloatArray, float] | None:
    """The least-squares homography image -> board and its RMS misfit in image px."""
    found, _mask = cv2.findHomography(img_pts, board_pts, 0)
    if found is None:
        return None
    h = np.asarray(found, dtype=np.float64)
    inv = np.linalg.inv(h)
    q = np.column_stack([board_pts, np.ones(len(board_pts))]) @ inv.T
    back = q[:, :2] / q[:, 2:3]
    return h / h[2, 2], float(np.sqrt(np.mean(np.sum((back - img_pts) ** 2, axis=1))))


def fit_radial_warp(
    img_pts: FloatArray, board_pts: FloatArray, size: tuple[int, int]
) -> tuple[RadialWarp, FloatArray] | None:
    """The bend that puts the markers' corners on one plane, and the homography ideal px -> board mm.

    None when there are too few corners to tell a bend from their noise, or
    when the plain homography already fits them (a straight lens).
    """
    img_pts = np.asarray(img_pts, dtype=np.float64).reshape(-1, 2)
    board_pts = np.asarray(board_pts, dtype=np.float64).reshape(-1, 2)
    if len(img_pts) < MIN_CORNERS:
        return None
    plain = _misfit(img_pts, board_pts)
    if plain is None or plain[1] < MIN_MISFIT_PX:
        return None

    def cost(q: float) -> float:
        got = _misfit(RadialWarp.for_frame(size, q).to_ideal(img_pts), board_pts)
        return float("inf") if got is None else got[1]

    warp = RadialWarp.for_frame(size, golden_section(cost, RADIAL_RANGE))
    h = bend_fits(warp, img_pts, board_pts)
    return None if h is None else (warp, h)


def golden_section(
    cost: Callable[[float], float], bounds: tuple[float, float], *, steps: int = 16, points: int = 14
) -> float:
    """The bend in ``bounds`` where ``cost`` is least: a coarse grid of
    ``points``, then a golden-section search around its best point (the
    misfit is smooth and single-dipped near its minimum; each of ``steps``
    reuses one of the last two costs and narrows the bracket by 0.618)."""
    grid = np.linspace(*bounds, points)
    costs = [cost(float(q)) for q in grid]
    i = int(np.argmin(costs))
    lo, hi = float(grid[max(i - 1, 0)]), float(grid[min(i + 1, len(grid) - 1)])
    g = (np.sqrt(5.0) - 1.0) / 2.0
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    ca, cb = cost(a), cost(b)
    for _ in range(steps):
        if ca < cb:
            hi, b, cb = b, a, ca
            a = hi - g * (hi - lo)
            ca = cost(a)
        else:
            lo, a, ca = a, b, cb
            b = lo + g * (hi - lo)
            cb = cost(b)
    return (lo + hi) / 2.0


def bend_fits(warp: ImageWarp, img_pts: FloatArray, board_pts: FloatArray) -> FloatArray | None:
    """The homography ideal px -> board mm when ``warp`` takes MIN_GAIN of the
    markers' misfit away (the frame itself shows the bend), else None."""
    img_pts = np.asarray(img_pts, dtype=np.float64).reshape(-1, 2)
    board_pts = np.asarray(board_pts, dtype=np.float64).reshape(-1, 2)
    plain = _misfit(img_pts, board_pts)
    bent = _misfit(warp.to_ideal(img_pts), board_pts)
    if plain is None or bent is None or plain[1] < MIN_MISFIT_PX or bent[1] > (1.0 - MIN_GAIN) * plain[1]:
        return None
    logger.debug("lens bend: markers' misfit %.2f -> %.2f px", plain[1], bent[1])
    return bent[0]


def remap_maps(
    warp: ImageWarp, grid_to_ideal: FloatArray, size: tuple[int, int]
) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """``cv2.remap``'s maps for an output image of ``size`` (width, height)
    whose pixels ``grid_to_ideal`` (a homography) takes to ideal pixels."""
    w, h = size
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    hm = np.asarray(grid_to_ideal, dtype=np.float64)
    den = hm[2, 0] * xx + hm[2, 1] * yy + hm[2, 2]
    ideal = np.column_stack([
        ((hm[0, 0] * xx + hm[0, 1] * yy + hm[0, 2]) / den).ravel(),
        ((hm[1, 0] * xx + hm[1, 1] * yy + hm[1, 2]) / den).ravel(),
    ])
    src = warp.to_image(ideal)
    return src[:, 0].reshape(h, w).astype(np.float32), src[:, 1].reshape(h, w).astype(np.float32)
