"""The camera's pose over the board: where 3D board points land in the image.

A homography maps the board's plane; a peg's head stands above it, and on
an oblique view it lands about a third of a hole pitch away from its hole's
centre. :class:`BoardPose` is the camera (a :class:`~pegwatch.vision.lens.Lens`)
and its rotation and translation relative to the board, fitted with
``cv2.solvePnP`` to points whose board position is known: the markers'
corners, the four picked corners, or points of a fitted homography. It
implements :class:`~pegwatch.vision.localise.base.BoardProjection`.

Board coordinates are mm, x right and y down on the board (see
``docs/boards.md``), so a right-handed frame has z pointing into the
table: a point ``height_mm`` above the board is at z = -height_mm.
:meth:`BoardPose.project` takes heights (positive up) and does the sign.

When the table's lens was never calibrated, :func:`estimate_lens` guesses
one: its focal length from the board plane's own perspective (Zhang's
constraints on one homography, with square pixels and the principal point
at the centre) when the view is oblique enough to show it, else from a
typical field of view (:data:`~pegwatch.vision.lens.DEFAULT_HFOV_DEG`).
``docs/lens.md`` says why.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import BadInput
from pegwatch.vision.lens import Lens

logger = logging.getLogger(__name__)

#: Below this tilt of the board's plane (degrees between the camera's axis
#: and the board's normal) the plane's perspective is too weak to measure
#: the focal length: with 0.3 px noise on 16 marker corners and a lens
#: distortion of k1 = -0.1, the focal is within 5 % at 10 degrees, 20 % at 5.
MIN_TILT_FOR_FOCAL_DEG = 10.0
#: A focal length estimated from the board is believed only within this
#: factor of the typical field of view's (horizontal fields of about 15 to
#: 120 degrees: a studio photo taken with a long lens included).
FOCAL_RANGE = (0.35, 5.0)


class PoseError(BadInput):
    """Too few or degenerate points to place the camera."""


def _apply(hm: NDArray[np.float64], pts: NDArray[np.float64]) -> NDArray[np.float64]:
    q = np.column_stack([pts, np.ones(len(pts))]) @ hm.T
    out: NDArray[np.float64] = q[:, :2] / q[:, 2:3]
    return out


@dataclass(frozen=True, eq=False)
class BoardPose:
    """A camera placed over the board: lens, rotation (Rodrigues ``rvec``) and ``tvec``.

    ``board_to_fit`` maps board mm (x, y) to the plane coordinates the pose
    was fitted in: the markers sit on the tray, and a board that slid a few
    mm on its tray is found by its holes, so the board's own position on
    the plane is kept apart from the camera's pose. Identity when the fit
    was made on the board itself. ``rms_px`` is the fit's reprojection error.
    """

    lens: Lens
    rvec: NDArray[np.float64]
    tvec: NDArray[np.float64]
    board_to_fit: NDArray[np.float64]
    rms_px: float

    def project(self, points_mm: NDArray[np.float64]) -> NDArray[np.float64]:
        """Board points (N×3: x, y in board mm, height above the board in mm) to image px (N×2), lens distortion included."""
        pts = np.asarray(points_mm, dtype=np.float64).reshape(-1, 3)
        if len(pts) == 0:
            return np.zeros((0, 2))
        xy = _apply(self.board_to_fit, pts[:, :2])
        obj = np.column_stack([xy, -pts[:, 2]])
        out, _ = cv2.projectPoints(obj, self.rvec, self.tvec, self.lens.camera_matrix, self.lens.distortion)
        return np.asarray(out, dtype=np.float64).reshape(-1, 2)

    def rotation(self) -> NDArray[np.float64]:
        r, _ = cv2.Rodrigues(self.rvec)
        return np.asarray(r, dtype=np.float64)

    @property
    def tilt_deg(self) -> float:
        """Angle between the camera's axis and the board's normal (0 = straight down)."""
        normal_cam = self.rotation()[:, 2]
        return math.degrees(math.acos(min(1.0, abs(float(normal_cam[2])))))

    @property
    def distance_mm(self) -> float:
        """Distance from the camera to the fit plane's origin."""
        return float(np.linalg.norm(self.tvec))

    def camera_position_mm(self) -> NDArray[np.float64]:
        """The camera's centre in fit-plane coordinates (z < 0: above the board)."""
        out: NDArray[np.float64] = -self.rotation().T @ self.tvec.reshape(3)
        return out


def fit_pose(
    object_mm: NDArray[np.float64],
    image_px: NDArray[np.float64],
    lens: Lens,
    *,
    board_to_fit: NDArray[np.float64] | None = None,
) -> BoardPose:
    """The camera pose from points on the board's plane (N×2 mm, z = 0) and where they were seen (N×2 px).

    IPPE (the planar solver) gives the pose, refined by Levenberg-Marquardt;
    at least four points, not all on one line.
    """
    obj2 = np.ascontiguousarray(object_mm, dtype=np.float64).reshape(-1, 2)
    img = np.ascontiguousarray(image_px, dtype=np.float64).reshape(-1, 2)
    if len(obj2) < 4 or len(obj2) != len(img):
        raise PoseError(f"a camera pose needs at least 4 matched points, got {len(obj2)} and {len(img)}")
    if not (np.all(np.isfinite(obj2)) and np.all(np.isfinite(img))):
        raise PoseError("a camera pose needs finite points")
    spread = np.linalg.svd(obj2 - obj2.mean(axis=0), compute_uv=False)
    if spread[-1] < 1e-6 * max(1.0, float(spread[0])):
        raise PoseError("the points for the camera pose lie on one line")
    obj = np.ascontiguousarray(np.column_stack([obj2, np.zeros(len(obj2))]))
    ok, rvec, tvec = cv2.solvePnP(obj, img, lens.camera_matrix, lens.distortion, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        raise PoseError("solvePnP found no camera pose for these points")
    rvec, tvec = cv2.solvePnPRefineLM(obj, img, lens.camera_matrix, lens.distortion, rvec, tvec)
    proj, _ = cv2.projectPoints(obj, rvec, tvec, lens.camera_matrix, lens.distortion)
    rms = float(np.sqrt(np.mean(np.sum((proj.reshape(-1, 2) - img) ** 2, axis=1))))
    b2f = np.eye(3) if board_to_fit is None else np.asarray(board_to_fit, dtype=np.float64)
    return BoardPose(lens, np.asarray(rvec, dtype=np.float64).reshape(3), np.asarray(tvec, dtype=np.float64).reshape(3), b2f, rms)


def focal_from_homography(board_to_image: NDArray[np.float64], image_size: tuple[int, int]) -> float | None:
    """The focal length (px) that one plane's homography implies, or None when it implies none.

    With square pixels, no skew and the principal point at the image centre,
    the homography's first two columns h1, h2 are images of orthonormal
    vectors: h1ᵀωh2 = 0 and h1ᵀωh1 = h2ᵀωh2 with ω = diag(1/f², 1/f², 1)
    (Zhang 2000). Solved for 1/f² in least squares.
    """
    w, h = image_size
    t = np.array([[1.0, 0.0, -w / 2.0], [0.0, 1.0, -h / 2.0], [0.0, 0.0, 1.0]])
    hm = t @ np.asarray(board_to_image, dtype=np.float64)
    # Scale the rows so that both constraints weigh alike whatever the image size.
    hm = np.diag([1.0 / w, 1.0 / w, 1.0]) @ hm
    hm = hm / np.linalg.norm(hm[:, :2])
    a11, a12 = hm[0, 0], hm[0, 1]
    a21, a22 = hm[1, 0], hm[1, 1]
    a31, a32 = hm[2, 0], hm[2, 1]
    a = np.array([a11 * a12 + a21 * a22, a11 * a11 + a21 * a21 - a12 * a12 - a22 * a22])
    b = -np.array([a31 * a32, a31 * a31 - a32 * a32])
    den = float(a @ a)
    if den <= 0.0:
        return None
    inv_f2 = float(a @ b) / den
    if not math.isfinite(inv_f2) or inv_f2 <= 0.0:
        return None
    return w / math.sqrt(inv_f2)


def estimate_lens(board_to_image: NDArray[np.float64], image_size: tuple[int, int]) -> Lens:
    """A plausible lens for a camera never calibrated.

    The focal length the board's perspective implies (:func:`focal_from_homography`)
    when the view is tilted by at least :data:`MIN_TILT_FOR_FOCAL_DEG` under
    it and the focal is within :data:`FOCAL_RANGE` of a typical field of
    view's; else the typical field of view's. No distortion is assumed.
    """
    prior = Lens.pinhole(image_size)
    f = focal_from_homography(board_to_image, image_size)
    if f is None or not FOCAL_RANGE[0] <= f / prior.focal_px <= FOCAL_RANGE[1]:
        return prior
    lens = Lens.from_focal(image_size, f)
    # The tilt as this focal length sees it: near top-down views give no focal.
    k_inv = np.linalg.inv(lens.camera_matrix)
    m = k_inv @ np.asarray(board_to_image, dtype=np.float64)
    r1 = m[:, 0] / np.linalg.norm(m[:, 0])
    r2 = m[:, 1] / np.linalg.norm(m[:, 1])
    normal = np.cross(r1, r2)
    tilt = math.degrees(math.acos(min(1.0, abs(float(normal[2]) / float(np.linalg.norm(normal))))))
    if tilt < MIN_TILT_FOR_FOCAL_DEG:
        return prior
    logger.debug("focal length %.0f px from the board's perspective (tilt %.0f degrees)", f, tilt)
    return lens


def plane_points(size_mm: tuple[float, float], *, n: int = 5) -> NDArray[np.float64]:
    """An n×n grid of points over a board of ``size_mm``, for fitting a pose to a homography."""
    xs = np.linspace(0.0, size_mm[0], n)
    ys = np.linspace(0.0, size_mm[1], n)
    gx, gy = np.meshgrid(xs, ys)
    return np.column_stack([gx.ravel(), gy.ravel()])


def pose_from_homography(
    image_to_board: NDArray[np.float64],
    image_size: tuple[int, int],
    size_mm: tuple[float, float],
    lens: Lens | None = None,
) -> BoardPose:
    """The pose that best reproduces a fitted homography over the board.

    For localisers that know the plane but not single points: the board's
    grid points are placed by the homography and the pose fitted to them.
    Without ``lens`` one is estimated (:func:`estimate_lens`).
    """
    b2i = np.linalg.inv(np.asarray(image_to_board, dtype=np.float64))
    b2i = b2i / b2i[2, 2]
    use = estimate_lens(b2i, image_size) if lens is None else lens.for_size(image_size)
    obj = plane_points(size_mm)
    return fit_pose(obj, _apply(b2i, obj), use)


def board_on_plane(
    samples_mm: NDArray[np.float64],
    image_to_board: NDArray[np.float64],
    plane_px: NDArray[np.float64],
    plane_mm: NDArray[np.float64],
    lens: Lens,
    *,
    board_in_ideal: bool = False,
) -> NDArray[np.float64]:
    """Where the board lies on the plane a pose was fitted to: board mm -> plane mm.

    ``plane_px``/``plane_mm`` are the points the pose was fitted to (the
    markers on the tray, say); ``image_to_board`` is the fit of the board
    itself (its holes). Both are compared in the lens's undistorted pixels,
    where a plane maps to a plane exactly, so a board slid on its tray is
    placed right and the lens's distortion is not mistaken for a slide.
    ``board_in_ideal``: ``image_to_board`` already maps undistorted pixels.
    """
    ideal = lens.undistort_points(np.asarray(plane_px, dtype=np.float64))
    found, _ = cv2.findHomography(ideal, np.asarray(plane_mm, dtype=np.float64), 0)
    if found is None:
        raise PoseError("the plane's points give no homography")
    b2i = np.linalg.inv(np.asarray(image_to_board, dtype=np.float64))
    pts = np.asarray(samples_mm, dtype=np.float64).reshape(-1, 2)
    board_px = _apply(b2i, pts)
    if not board_in_ideal:
        board_px = lens.undistort_points(board_px)
    on_plane = _apply(np.asarray(found, dtype=np.float64), board_px)
    out, _ = cv2.findHomography(pts, on_plane, 0)
    if out is None:
        raise PoseError("the board's points give no homography")
    hm = np.asarray(out, dtype=np.float64)
    result: NDArray[np.float64] = hm / hm[2, 2]
    return result
