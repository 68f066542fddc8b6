"""The camera: tray and board geometry, the pinhole projection and the lens's barrel distortion."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.simulation.render.scene import Conditions, Point
from pegwatch.vision.localise import apply_homography
from pegwatch.vision.profile import BoardProfile


def fit_in_frame(p: BoardProfile, c: Conditions) -> Conditions:
    """Move the camera back until the whole tray is in the frame."""
    m = p.render.tray_margin_mm
    w, h = p.size_mm
    tray = np.array([[-m, -m], [w + m, -m], [w + m, h + m], [-m, h + m]], dtype=np.float64)
    d = max(c.distance_mm, 1.04 * c.focal_px * max((w + 2 * m) / c.width, (h + 2 * m) / c.height))
    for _ in range(40):
        c = replace(c, distance_mm=d)
        pts = distort(c, apply_homography(tray_to_image(p, c), tray))
        if (
            pts[:, 0].min() >= 4
            and pts[:, 1].min() >= 4
            and pts[:, 0].max() <= c.width - 5
            and pts[:, 1].max() <= c.height - 5
        ):
            return c
        d *= 1.04
    return c


def _rot(axis: str, deg: float) -> NDArray[np.float64]:
    a = math.radians(deg)
    ca, sa = math.cos(a), math.sin(a)
    if axis == "x":
        return np.array([[1, 0, 0], [0, ca, -sa], [0, sa, ca]], dtype=np.float64)
    if axis == "y":
        return np.array([[ca, 0, sa], [0, 1, 0], [-sa, 0, ca]], dtype=np.float64)
    return np.array([[ca, -sa, 0], [sa, ca, 0], [0, 0, 1]], dtype=np.float64)


def tray_to_image(p: BoardProfile, c: Conditions) -> NDArray[np.float64]:
    """Homography from tray mm (= board mm of an un-nudged board) to undistorted image px."""
    w, h = p.size_mm
    cx, cy = c.width / 2.0, c.height / 2.0
    k = np.array([[c.focal_px, 0, cx], [0, c.focal_px, cy], [0, 0, 1]], dtype=np.float64)
    r = _rot("z", c.yaw_deg) @ _rot("x", c.tilt_x_deg) @ _rot("y", c.tilt_y_deg)
    t = np.array([c.offset_px[0] * c.distance_mm / c.focal_px, c.offset_px[1] * c.distance_mm / c.focal_px, c.distance_mm])
    m = np.column_stack([r[:, 0], r[:, 1], t])
    centre = np.array([[1, 0, -w / 2], [0, 1, -h / 2], [0, 0, 1]], dtype=np.float64)
    hm = k @ m @ centre
    out: NDArray[np.float64] = hm / hm[2, 2]
    return out


def board_to_tray(p: BoardProfile, c: Conditions) -> NDArray[np.float64]:
    """The nudge of the board on its tray: rotation about the board centre, then shift."""
    dx, dy, deg = c.board_offset_mm
    w, h = p.size_mm
    a = math.radians(deg)
    ca, sa = math.cos(a), math.sin(a)
    to_c = np.array([[1, 0, -w / 2], [0, 1, -h / 2], [0, 0, 1]], dtype=np.float64)
    rot = np.array([[ca, -sa, 0], [sa, ca, 0], [0, 0, 1]], dtype=np.float64)
    back = np.array([[1, 0, w / 2 + dx], [0, 1, h / 2 + dy], [0, 0, 1]], dtype=np.float64)
    out: NDArray[np.float64] = back @ rot @ to_c
    return out


def distort(c: Conditions, px: NDArray[np.float64]) -> NDArray[np.float64]:
    """Apply barrel distortion (undistorted px -> distorted px)."""
    if c.k1 == 0.0:
        return px
    cx, cy = c.width / 2.0, c.height / 2.0
    x = (px[:, 0] - cx) / c.focal_px
    y = (px[:, 1] - cy) / c.focal_px
    f = 1.0 + c.k1 * (x * x + y * y)
    return np.column_stack([cx + x * f * c.focal_px, cy + y * f * c.focal_px])


@lru_cache(maxsize=8)
def remap_maps(
    width: int,
    height: int,
    focal: float,
    k1: float,
    hm_bytes: bytes,
    origin: Point,
    ppm: float,
    tex_size: tuple[int, int],
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.intp], NDArray[np.int64]]:
    """For each output (distorted) pixel, where to sample the texture.

    Also the flat indices of the pixels that fall outside the texture (more
    table) and the texture row each of them would be in. Cached: a static
    camera (the demo) computes this once.
    """
    hm = np.frombuffer(hm_bytes, dtype=np.float64).reshape(3, 3)
    inv = np.linalg.inv(hm).astype(np.float32)
    cx, cy = width / 2.0, height / 2.0
    # The map is smooth: compute it on a coarse grid and interpolate.
    # Node k sits at pixel k*step + (step - 1)/2, where cv2.resize's
    # INTER_LINEAR puts source sample k, so the up-scaled map needs no shift.
    step = 4
    half = (step - 1) / 2.0
    gw, gh = -(-width // step), -(-height // step)
    xs = (np.arange(gw, dtype=np.float32) * step + half - cx) / focal
    ys = (np.arange(gh, dtype=np.float32) * step + half - cy) / focal
    xd, yd = np.meshgrid(xs, ys)
    if k1 != 0.0:
        xu, yu = xd.copy(), yd.copy()
        for _ in range(3):  # invert x_d = x_u (1 + k1 r_u^2) by fixed point
            f = 1.0 + k1 * (xu * xu + yu * yu)
            xu, yu = xd / f, yd / f
    else:
        xu, yu = xd, yd
    u = xu * focal + cx
    v = yu * focal + cy
    den = inv[2, 0] * u + inv[2, 1] * v + inv[2, 2]
    bx = (inv[0, 0] * u + inv[0, 1] * v + inv[0, 2]) / den
    by = (inv[1, 0] * u + inv[1, 1] * v + inv[1, 2]) / den
    mx = ((bx - origin[0]) * ppm).astype(np.float32)
    my = ((by - origin[1]) * ppm).astype(np.float32)
    big = (gw * step, gh * step)
    mxb = np.ascontiguousarray(cv2.resize(mx, big, interpolation=cv2.INTER_LINEAR)[:height, :width])
    myb = np.ascontiguousarray(cv2.resize(my, big, interpolation=cv2.INTER_LINEAR)[:height, :width])
    tw, th = tex_size
    outside = np.flatnonzero((mxb < 0) | (myb < 0) | (mxb > tw - 1) | (myb > th - 1))
    rows = np.floor(myb.ravel()[outside]).astype(np.int64)
    return mxb, myb, outside, rows
