"""The shared vocabulary of the localisers: the :class:`Localisation` result,
the :class:`Localiser` protocol, homography helpers and the top-down warp.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import BadInput
from pegwatch.vision.profile import BoardProfile

RECT_PX_PER_MM = 4.0
"""Resolution of :func:`rectify`'s top-down board image: 4 px per mm puts
about 28 px across a code peg and 14 px across a key peg."""

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
    pose: BoardProjection | None = None

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
        return apply_homography(self.image_to_board, np.asarray(points_px, dtype=np.float64))

    def to_image(self, points_mm: Sequence[Sequence[float]] | NDArray[np.float64]) -> NDArray[np.float64]:
        """Board mm (N×2) to image px (N×2)."""
        inv = self.board_to_image()
        if inv is None:
            raise LocalisationError(f"no board localisation ({self.problem})")
        return apply_homography(inv, np.asarray(points_mm, dtype=np.float64))


    def to_image_at_height(
        self, points_mm: Sequence[Sequence[float]] | NDArray[np.float64], height_mm: float
    ) -> NDArray[np.float64]:
        """Board mm (N×2) at ``height_mm`` above the board to image px (N×2).

        With a :attr:`pose` the points are projected in 3D; without one only
        the board plane is known, so this is :meth:`to_image`."""
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 2)
        if self.pose is None or height_mm == 0.0:
            return self.to_image(pts)
        xyz = np.column_stack([pts, np.full(len(pts), float(height_mm))])
        return np.asarray(self.pose.project(xyz), dtype=np.float64).reshape(-1, 2)


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


class Localiser(Protocol):
    """Anything that finds the board in a frame: markers, fixed corners, best effort."""

    method: str
    """The calibration's name for the method ("markers", "corners", "best-effort")."""

    def locate(self, frame: NDArray[np.uint8]) -> Localisation:
        """Where the board is in ``frame`` (not ok, with ``problem`` set, when not found)."""
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
