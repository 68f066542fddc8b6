"""The camera: OpenCV's pinhole model with radial distortion, and the same pose for Mitsuba.

World coordinates are board millimetres: x right and y down on the board
(as ``BoardProfile`` has them) and z into the table, so the board's top is
z = 0 and everything above it has a negative z. For a camera looking
straight down with the board upright in the image, the rotation is the
identity.

Mitsuba renders an undistorted pinhole image (its pixel centres sit at
i + 0.5; OpenCV's at i, hence ``cx = W/2 - 0.5``); the lens distortion is
then applied with OpenCV, so the truth projection of any board point is
:meth:`Camera.project`, exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.simulation.pbr.conditions import PbrConditions
from pegwatch.vision.profile import BoardProfile

F64 = NDArray[np.float64]


def tray_corners_mm(p: BoardProfile, lift: float) -> F64:
    """The tray's outer corners (z = the tray's plane, ``lift`` below the board's top)."""
    m = p.render.tray_margin_mm
    w, h = p.size_mm
    return np.array([[-m, -m, lift], [w + m, -m, lift], [w + m, h + m, lift], [-m, h + m, lift]], dtype=np.float64)


def _unit(v: F64) -> F64:
    out: F64 = v / float(np.linalg.norm(v))
    return out


@dataclass(frozen=True)
class Camera:
    """Intrinsics ``k`` (3x3), distortion ``dist`` (k1, k2, p1, p2), world->camera ``r``, ``t``."""

    width: int
    height: int
    k: F64
    dist: F64
    r: F64
    t: F64

    @classmethod
    def of(cls, c: PbrConditions) -> Camera:
        """The camera that ``c`` describes."""
        tx, ty = c.look_at_mm
        target = np.array([tx, ty, 0.0])
        th, az = math.radians(c.tilt_deg), math.radians(c.tilt_azimuth_deg)
        centre = target + c.distance_mm * np.array([math.sin(th) * math.cos(az), math.sin(th) * math.sin(az), -math.cos(th)])
        z = _unit(target - centre)
        down = np.array([0.0, 1.0, 0.0])
        y = _unit(down - z * float(down @ z))
        x = np.cross(y, z)
        roll = math.radians(c.roll_deg)
        x, y = math.cos(roll) * x + math.sin(roll) * y, -math.sin(roll) * x + math.cos(roll) * y
        r = np.stack([x, y, z])
        k = np.array([[c.focal_px, 0, c.width / 2 - 0.5], [0, c.focal_px, c.height / 2 - 0.5], [0, 0, 1]], dtype=np.float64)
        return cls(c.width, c.height, k, np.array([c.k1, c.k2, 0.0, 0.0]), r, -r @ centre)

    @property
    def centre(self) -> F64:
        """The camera's position in the world."""
        out: F64 = -self.r.T @ self.t
        return out

    def project(self, world: F64) -> F64:
        """World points (n, 3) -> distorted image px (n, 2), OpenCV's pixel convention."""
        rvec, _ = cv2.Rodrigues(self.r)
        px, _ = cv2.projectPoints(np.asarray(world, dtype=np.float64).reshape(-1, 1, 3), rvec, self.t, self.k, self.dist)
        out: F64 = px.reshape(-1, 2).astype(np.float64)
        return out

    def mitsuba_to_world(self) -> list[list[float]]:
        """Mitsuba's sensor ``to_world`` for this pose (its camera looks along +z with x left, y up)."""
        m = np.eye(4)
        m[:3, :3] = self.r.T @ np.diag([-1.0, -1.0, 1.0])
        m[:3, 3] = self.centre
        return [[float(v) for v in row] for row in m]

    def render_margin(self) -> int:
        """Extra pixels on each side of the undistorted render that the distorted frame reaches."""
        if not self.dist.any():
            return 0
        w, h = self.width, self.height
        edge = np.array(
            [[x, y] for x in (0, w / 2, w - 1) for y in (0, h / 2, h - 1)], dtype=np.float64
        ).reshape(-1, 1, 2)
        crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 20, 1e-6)
        und = cv2.undistortPointsIter(edge, self.k, self.dist, np.eye(3), self.k, crit).reshape(-1, 2)
        over = max(
            0.0,
            float(-und[:, 0].min()),
            float(-und[:, 1].min()),
            float(und[:, 0].max() - (w - 1)),
            float(und[:, 1].max() - (h - 1)),
        )
        return math.ceil(over) + 2

    def fov_deg(self, margin: int) -> float:
        """Mitsuba's horizontal field of view for a render ``margin`` px wider on each side."""
        return math.degrees(2 * math.atan((self.width / 2 + margin) / float(self.k[0, 0])))

    def distortion_maps(self, margin: int) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
        """For each distorted output pixel, where to sample the undistorted render (with ``margin``)."""
        w, h = self.width, self.height
        xs, ys = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
        pts = np.stack([xs.ravel(), ys.ravel()], axis=1).reshape(-1, 1, 2)
        crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 20, 1e-6)
        und = cv2.undistortPointsIter(pts, self.k, self.dist, np.eye(3), self.k, crit)
        und = und.reshape(h, w, 2) + margin
        return und[:, :, 0].astype(np.float32), und[:, :, 1].astype(np.float32)

    def px_per_mm(self, p: BoardProfile) -> float:
        """The board's mean scale in the photo: sqrt(projected area / true area)."""
        w, h = p.size_mm
        n = 16
        edge = (
            [(w * i / n, 0.0) for i in range(n)]
            + [(w, h * i / n) for i in range(n)]
            + [(w - w * i / n, h) for i in range(n)]
            + [(0.0, h - h * i / n) for i in range(n)]
        )
        px = self.project(np.array([[x, y, 0.0] for x, y in edge]))
        area = 0.5 * abs(float(np.dot(px[:, 0], np.roll(px[:, 1], 1)) - np.dot(px[:, 1], np.roll(px[:, 0], 1))))
        return math.sqrt(area / (w * h))
