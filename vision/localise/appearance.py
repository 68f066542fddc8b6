"""The board as the calibration saw it, found again by its features when the camera has moved.

A table without markers knows its board from the calibration photo alone.
Its top-down picture (:class:`BoardLook`, kept with the calibration) carries
the board's own texture: holes, engraving, edges, pegs. Features matched
between that picture and a frame, and one plane fitted to them by RANSAC,
place the board in a frame taken from anywhere: the camera moved, turned,
nearer or further, the picture rescaled or cropped. A frame of another board,
or of none, gives too few matches that agree on one plane: nothing is found,
and the caller goes on as before. What is found is a first guess only: the
caller fits the hole pattern to it and refuses it as it refuses any guess.
"""

from __future__ import annotations

import base64
import functools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.localise.base import LocalisationError, rectify_board

logger = logging.getLogger(__name__)

#: The picture's scale: enough for the holes' rims and the engraving to give
#: features; a long board's picture is at most LOOK_MAX_PX wide.
LOOK_PX_PER_MM = 4.0
LOOK_MAX_PX = 1000
#: Kept as a JPEG of this quality: a tenth of a PNG of the same grain, and the
#: features do not see the difference.
LOOK_JPEG_QUALITY = 90
#: Lowe's ratio test: a feature's best match must be clearly better than its second.
MATCH_RATIO = 0.75
#: RANSAC's reprojection tolerance, in frame pixels.
RANSAC_PX = 4.0
#: Fewer features than this agreeing on one plane are chance: a board's own
#: picture gives a hundred and more, a box, a table or loose pegs a handful.
MIN_INLIERS = 25
#: A board found smaller than this (px/mm) is a degenerate fit, not a board far away.
SMALLEST_PX_PER_MM = 1.0
#: Frames wider than this are searched at this width: the features of a
#: board the reader can read survive it, and the search costs a quarter.
WORK_WIDTH = 1024


class LookError(LocalisationError):
    """A stored board picture that cannot be used."""


@dataclass(frozen=True, eq=False)
class BoardLook:
    """The board seen top-down at calibration: grey, ``px_per_mm`` pixels to the millimetre."""

    image: NDArray[np.uint8]
    px_per_mm: float

    @classmethod
    def of(cls, frame: NDArray[np.uint8], image_to_board: NDArray[np.float64], size_mm: Sequence[float]) -> BoardLook:
        """The board of ``frame``, placed by ``image_to_board`` (board mm from frame px)."""
        ppm = min(LOOK_PX_PER_MM, LOOK_MAX_PX / max(float(size_mm[0]), float(size_mm[1])))
        top = rectify_board(frame, image_to_board, (float(size_mm[0]), float(size_mm[1])), px_per_mm=ppm)
        grey = cv2.cvtColor(top, cv2.COLOR_BGR2GRAY) if top.ndim == 3 else top
        return cls(np.ascontiguousarray(grey, dtype=np.uint8), ppm)

    def to_record(self) -> dict[str, Any]:
        """The JSON form: the scale, and the picture as a base64 JPEG."""
        ok, jpeg = cv2.imencode(".jpg", self.image, [cv2.IMWRITE_JPEG_QUALITY, LOOK_JPEG_QUALITY])
        if not ok:
            raise LookError("the board's picture cannot be encoded")
        return {"px_per_mm": self.px_per_mm, "jpeg_base64": base64.b64encode(jpeg.tobytes()).decode("ascii")}

    @classmethod
    def from_record(cls, record: Mapping[str, Any], *, where: str) -> BoardLook:
        """Parse :meth:`to_record`'s form; a bad one is a :class:`LookError` naming ``where``."""
        if not isinstance(record, Mapping) or not {"px_per_mm", "jpeg_base64"} <= set(record):
            raise LookError(f"{where}: not an object {{\"px_per_mm\": ..., \"jpeg_base64\": ...}}")
        try:
            ppm = float(record["px_per_mm"])
            data = base64.b64decode(str(record["jpeg_base64"]), validate=True)
        except (TypeError, ValueError) as exc:
            raise LookError(f"{where}: px_per_mm is not a number or jpeg_base64 not base64 ({exc})") from None
        img = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_GRAYSCALE) if data else None
        if img is None or not 0.1 <= ppm <= 50 or min(img.shape) < 16:
            raise LookError(f"{where}: not a JPEG picture of a board at 0.1..50 px/mm")
        return cls(np.asarray(img, dtype=np.uint8), ppm)

    @functools.cached_property
    def features(self) -> tuple[Any, NDArray[np.float32] | None]:
        """The picture's SIFT keypoints and descriptors, found once for every localiser made from its calibration."""
        kp, desc = cv2.SIFT.create().detectAndCompute(self.image, None)
        return kp, None if desc is None else np.asarray(desc, dtype=np.float32)


def find_by_look(frame: NDArray[np.uint8], look: BoardLook, size_mm: Sequence[float]) -> NDArray[np.float64] | None:
    """``image_to_board`` (board mm from frame px) where ``look``'s board lies in ``frame``, or None."""
    kp_look, d_look = look.features
    if d_look is None or len(kp_look) < MIN_INLIERS:
        return None
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    scale = min(1.0, WORK_WIDTH / grey.shape[1])
    if scale < 1.0:
        grey = cv2.resize(grey, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    kp, desc = cv2.SIFT.create().detectAndCompute(grey, None)
    if desc is None or len(kp) < MIN_INLIERS:
        return None
    pairs = cv2.BFMatcher(cv2.NORM_L2).knnMatch(d_look, desc, k=2)
    good = [m[0] for m in pairs if len(m) == 2 and m[0].distance < MATCH_RATIO * m[1].distance]
    if len(good) < MIN_INLIERS:
        return None
    src = np.array([kp_look[m.queryIdx].pt for m in good], dtype=np.float32) / look.px_per_mm
    dst = (np.array([kp[m.trainIdx].pt for m in good], dtype=np.float32) + 0.5) / scale - 0.5
    board_to_image, mask = cv2.findHomography(src, dst, cv2.RANSAC, RANSAC_PX)
    if board_to_image is None or mask is None or int(mask.sum()) < MIN_INLIERS:
        return None
    if not _plausible(np.asarray(board_to_image, dtype=np.float64), size_mm):
        return None
    logger.debug("board found by its look: %d of %d matches on one plane", int(mask.sum()), len(good))
    out = np.asarray(np.linalg.inv(np.asarray(board_to_image, dtype=np.float64)), dtype=np.float64)
    return np.asarray(out / out[2, 2], dtype=np.float64)


def _plausible(board_to_image: NDArray[np.float64], size_mm: Sequence[float]) -> bool:
    """A board seen from in front: its corners a convex quad, the right way round, not too small."""
    w, h = float(size_mm[0]), float(size_mm[1])
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float64)
    pts = cv2.perspectiveTransform(corners.reshape(-1, 1, 2), board_to_image).reshape(-1, 2)
    if not np.all(np.isfinite(pts)):
        return False
    edges = np.roll(pts, -1, axis=0) - pts
    turns = edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1] - edges[:, 1] * np.roll(edges, -1, axis=0)[:, 0]
    if not np.all(turns > 0):  # convex, and not seen in a mirror
        return False
    area = 0.5 * abs(float(np.sum(pts[:, 0] * np.roll(pts[:, 1], -1) - np.roll(pts[:, 0], -1) * pts[:, 1])))
    return area >= w * h * SMALLEST_PX_PER_MM**2
