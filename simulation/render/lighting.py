"""Light and sensor: uneven, coloured light over the board, and the sensor's noise."""

from __future__ import annotations

import math
from functools import lru_cache

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.simulation.render.scene import Conditions
from pegwatch.vision.profile import BoardProfile


def light_field(p: BoardProfile, c: Conditions, t2i: NDArray[np.float64]) -> NDArray[np.float32]:
    """Multiplicative light per pixel and channel (BGR), computed coarse then scaled up."""
    sw, sh = max(2, c.width // 16), max(2, c.height // 16)
    ys, xs = np.mgrid[0:sh, 0:sw].astype(np.float32)
    u = (xs + 0.5) * (c.width / sw)
    v = (ys + 0.5) * (c.height / sh)
    # The gradient runs across the board: project image points to board mm.
    inv = np.linalg.inv(t2i)
    den = inv[2, 0] * u + inv[2, 1] * v + inv[2, 2]
    bx = (inv[0, 0] * u + inv[0, 1] * v + inv[0, 2]) / den
    by = (inv[1, 0] * u + inv[1, 1] * v + inv[1, 2]) / den
    w, h = p.size_mm
    a = math.radians(c.light_angle_deg)
    half_extent = 0.5 * (abs(math.cos(a)) * w + abs(math.sin(a)) * h)
    t = ((bx - w / 2) * math.cos(a) + (by - h / 2) * math.sin(a)) / max(half_extent, 1.0)
    t = np.clip(t, -1.5, 1.5)
    # ratio : 1 between the two ends of the board, geometric in between.
    light = np.power(np.float32(c.light_ratio), -0.5 * t).astype(np.float32)
    if c.vignette:
        rr = ((u - c.width / 2) ** 2 + (v - c.height / 2) ** 2) / ((c.width / 2) ** 2 + (c.height / 2) ** 2)
        light *= 1.0 - c.vignette * rr
    if c.light_band is not None:
        pos, width, depth, soft = c.light_band
        along = (bx - w / 2) * math.cos(a) + (by - h / 2) * math.sin(a)
        # A band of shade with soft edges (a logistic ramp on each side).
        inside = 1.0 / (1.0 + np.exp(-(width / 2 - np.abs(along - pos)) / max(soft, 0.1)))
        light *= 1.0 - depth * inside
    if c.shadow is not None:
        sx, sy, sr, depth = c.shadow
        d2 = ((bx - sx) ** 2 + (by - sy) ** 2) / (sr * sr)
        light *= 1.0 - depth * np.exp(-d2 * 1.5)
    light *= c.exposure
    r, g, b = c.colour_cast
    small = light.astype(np.float32)[:, :, None] * np.array([b, g, r], dtype=np.float32)[None, None, :]
    out: NDArray[np.float32] = cv2.resize(small, (c.width, c.height), interpolation=cv2.INTER_LINEAR)
    return out


@lru_cache(maxsize=2)
def noise_bank(height: int, width: int) -> NDArray[np.float32]:
    """Unit Gaussian noise a little larger than a frame; each render takes a shifted crop.

    Drawing 2.7 million normals per frame would cost more than the rest of
    the noise model is worth.
    """
    bank = np.empty((height + 64, width + 64, 3), dtype=np.float32)
    rng = np.random.default_rng(20260101)
    bank[:] = rng.standard_normal(bank.shape, dtype=np.float32)
    return bank
