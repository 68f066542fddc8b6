"""The camera's lens: intrinsics and distortion, from ``pegwatch calibrate-lens``.

A :class:`Lens` is OpenCV's pinhole model with distortion: the camera
matrix ``K`` (focal lengths and principal point, in px), the distortion
coefficients (k1, k2, p1, p2[, k3...]) and the image size it was measured
at. It is stored in the table's calibration (key ``lens``) and parsed and
formatted symmetrically::

    >>> lens = Lens.pinhole((1280, 720), hfov_deg=66.0)
    >>> Lens.from_dict(lens.to_dict()) == lens
    True

When a table has no lens calibration, :meth:`Lens.pinhole` gives a
plausible one from the image size and a field of view (see
``docs/lens.md``); :attr:`Lens.measured` tells the two apart.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import BadInput

#: Horizontal field of view assumed when nothing better is known: the Pi
#: Camera Module 3 sees 66 degrees, v2 62, common USB webcams 60-78.
DEFAULT_HFOV_DEG = 66.0
#: The lengths of OpenCV's distortion models (plain, k3, rational, thin prism, tilted).
_ALLOWED_COEFFS = (4, 5, 8, 12, 14)
_MAX_PX = 100_000


class LensError(BadInput):
    """A lens calibration is malformed, or does not fit the frames it is used on."""


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True, eq=False)
class Lens:
    """Camera intrinsics and distortion at ``image_size`` (width, height) px.

    ``rms_px`` is the calibration's RMS reprojection error (None for an
    assumed pinhole); ``views`` how many views it was measured on.
    """

    camera_matrix: NDArray[np.float64]
    distortion: NDArray[np.float64]
    image_size: tuple[int, int]
    rms_px: float | None = None
    views: int = 0

    def __post_init__(self) -> None:
        k = np.asarray(self.camera_matrix, dtype=np.float64)
        d = np.asarray(self.distortion, dtype=np.float64).ravel()
        if k.shape != (3, 3) or not np.all(np.isfinite(k)):
            raise LensError(f"lens: camera_matrix must be a finite 3x3 matrix, got shape {k.shape}")
        if k[0, 0] <= 0 or k[1, 1] <= 0 or k[2, 2] != 1.0 or k[1, 0] != 0 or k[2, 0] != 0 or k[2, 1] != 0:
            raise LensError("lens: camera_matrix is not [[fx, s, cx], [0, fy, cy], [0, 0, 1]] with fx, fy > 0")
        if d.size not in _ALLOWED_COEFFS or not np.all(np.isfinite(d)):
            raise LensError(f"lens: distortion must be {', '.join(map(str, _ALLOWED_COEFFS))} finite numbers, got {d.size}")
        w, h = self.image_size
        if not (1 <= w <= _MAX_PX and 1 <= h <= _MAX_PX):
            raise LensError(f"lens: image_size {self.image_size} is not [width, height] in px")
        object.__setattr__(self, "camera_matrix", k)
        object.__setattr__(self, "distortion", d)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Lens):
            return NotImplemented
        return (
            self.image_size == other.image_size
            and np.array_equal(self.camera_matrix, other.camera_matrix)
            and np.array_equal(self.distortion, other.distortion)
            and self.rms_px == other.rms_px
            and self.views == other.views
        )

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def pinhole(cls, image_size: tuple[int, int], *, hfov_deg: float = DEFAULT_HFOV_DEG) -> Lens:
        """An assumed distortion-free lens: principal point at the centre, square pixels."""
        w = image_size[0]
        if not 1.0 <= hfov_deg <= 170.0:
            raise LensError(f"field of view {hfov_deg:g} degrees is not in 1..170")
        f = (w / 2.0) / math.tan(math.radians(hfov_deg) / 2.0)
        return cls.from_focal(image_size, f)

    @classmethod
    def from_focal(cls, image_size: tuple[int, int], focal_px: float) -> Lens:
        """A distortion-free lens of focal length ``focal_px``, principal point at the centre."""
        w, h = image_size
        k = np.array([[focal_px, 0.0, w / 2.0], [0.0, focal_px, h / 2.0], [0.0, 0.0, 1.0]])
        return cls(k, np.zeros(5), (int(w), int(h)))

    @property
    def measured(self) -> bool:
        """True when this lens was calibrated, False for an assumed pinhole."""
        return self.rms_px is not None

    @property
    def focal_px(self) -> float:
        """The mean of fx and fy."""
        return float((self.camera_matrix[0, 0] + self.camera_matrix[1, 1]) / 2.0)

    @property
    def has_distortion(self) -> bool:
        return bool(np.any(self.distortion != 0.0))

    def for_size(self, image_size: tuple[int, int]) -> Lens:
        """This lens for frames of ``image_size``: the same sensor mode scaled.

        A camera that delivers a smaller frame of the same view (1920x1080
        read at 1280x720) has its intrinsics scaled; a different aspect ratio
        is a crop or another sensor mode, which no scaling can recover.
        """
        if tuple(image_size) == self.image_size:
            return self
        w0, h0 = self.image_size
        w, h = image_size
        sx, sy = w / w0, h / h0
        if abs(sx - sy) > 0.01 * max(sx, sy):
            raise LensError(
                f"the lens was calibrated at {w0}x{h0} px and frames are {w}x{h}: "
                "another aspect ratio (a crop or another camera mode); calibrate the lens at this size"
            )
        k = self.camera_matrix.copy()
        k[0, :] *= sx
        k[1, :] *= sy
        # Pixel centres: OpenCV's origin is the centre of the first pixel.
        k[0, 2] = (self.camera_matrix[0, 2] + 0.5) * sx - 0.5
        k[1, 2] = (self.camera_matrix[1, 2] + 0.5) * sy - 0.5
        return Lens(k, self.distortion.copy(), (int(w), int(h)), self.rms_px, self.views)

    def undistort_points(self, points_px: NDArray[np.float64]) -> NDArray[np.float64]:
        """Distorted image px (N×2) to the px an ideal pinhole with the same ``K`` would see."""
        pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 1, 2)
        if len(pts) == 0 or not self.has_distortion:
            return pts.reshape(-1, 2).copy()
        out = cv2.undistortPointsIter(
            pts,
            self.camera_matrix,
            self.distortion,
            np.eye(3),
            self.camera_matrix,
            (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-6),
        )
        return np.asarray(out, dtype=np.float64).reshape(-1, 2)

    def distort_points(self, points_px: NDArray[np.float64]) -> NDArray[np.float64]:
        """Ideal pinhole px (N×2) to where the real lens puts them: the inverse of :meth:`undistort_points`."""
        pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 2)
        if len(pts) == 0 or not self.has_distortion:
            return pts.copy()
        k = self.camera_matrix
        rays = np.column_stack([(pts[:, 0] - k[0, 2]) / k[0, 0], (pts[:, 1] - k[1, 2]) / k[1, 1], np.ones(len(pts))])
        out, _ = cv2.projectPoints(rays, np.zeros(3), np.zeros(3), k, self.distortion)
        return np.asarray(out, dtype=np.float64).reshape(-1, 2)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (the calibration file's ``lens``)."""
        return {
            "image_size": [int(self.image_size[0]), int(self.image_size[1])],
            "camera_matrix": [[float(v) for v in row] for row in self.camera_matrix],
            "distortion": [float(v) for v in self.distortion],
            "rms_px": self.rms_px,
            "views": int(self.views),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "lens") -> Lens:
        """Parse :meth:`to_dict`'s form; a fault is one :class:`LensError` naming ``where`` and the key."""

        def bad(key: str, why: str) -> LensError:
            return LensError(f"{where}: {key}: {why}")

        def number(v: object, key: str, lo: float, hi: float) -> float:
            if isinstance(v, bool) or not isinstance(v, int | float) or not lo <= v <= hi:
                raise bad(key, f"{_short(v)} is not a number in {lo:g}..{hi:g}")
            return float(v)

        if not isinstance(data, Mapping):
            raise LensError(f"{where}: {_short(data)} is not an object")
        size = data.get("image_size")
        if not isinstance(size, list) or len(size) != 2 or not all(
            isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= _MAX_PX for v in size
        ):
            raise bad("image_size", f"{_short(size)} is not [width, height] in px")
        km = data.get("camera_matrix")
        if not isinstance(km, list) or len(km) != 3 or not all(isinstance(r, list) and len(r) == 3 for r in km):
            raise bad("camera_matrix", f"{_short(km)} is not a 3x3 matrix")
        k = np.array(
            [[number(v, f"camera_matrix[{i}][{j}]", -10 * _MAX_PX, 10 * _MAX_PX) for j, v in enumerate(r)] for i, r in enumerate(km)]
        )
        dist = data.get("distortion")
        if not isinstance(dist, list) or len(dist) not in _ALLOWED_COEFFS:
            raise bad("distortion", f"{_short(dist)} is not a list of {', '.join(map(str, _ALLOWED_COEFFS))} numbers")
        d = np.array([number(v, f"distortion[{i}]", -1e4, 1e4) for i, v in enumerate(dist)])
        rms_raw = data.get("rms_px")
        rms = None if rms_raw is None else number(rms_raw, "rms_px", 0.0, 1e3)
        views_raw = data.get("views", 0)
        if isinstance(views_raw, bool) or not isinstance(views_raw, int) or not 0 <= views_raw <= 1_000_000:
            raise bad("views", f"{_short(views_raw)} is not a count")
        try:
            return cls(k, d, (int(size[0]), int(size[1])), rms, views_raw)
        except LensError as exc:
            raise LensError(f"{where}: {str(exc).removeprefix('lens: ')}") from None


def lens_from_dict(data: Mapping[str, Any] | None, *, where: str = "lens") -> Lens | None:
    """:meth:`Lens.from_dict`, with None (no lens calibrated) passing through."""
    return None if data is None else Lens.from_dict(data, where=where)
