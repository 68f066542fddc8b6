"""One frame gives one edge map, wherever its arrays lie in memory: the fits, and the readings, repeat."""

from __future__ import annotations

import cv2
import numpy as np

from pegwatch.vision.localise.base import edge_strength
from pegwatch.vision.localise.grid import _edge_map


def _at_offset(x: np.ndarray, offset: int) -> np.ndarray:
    """A copy of ``x`` starting ``offset`` bytes past a 64-byte boundary."""
    buf = np.empty(x.nbytes + 128, dtype=np.uint8)
    start = (-buf.ctypes.data) % 64 + offset
    out = buf[start : start + x.nbytes].view(x.dtype).reshape(x.shape)
    out[...] = x
    return out


OFFSETS = (0, 4, 8, 12, 16, 20, 32, 36, 48, 60)


def test_edge_strength_is_the_same_wherever_the_gradients_lie_in_memory():
    # OpenCV's magnitude rounds its vector and scalar paths apart, and which a pixel takes
    # depends on where its output lies in memory: on this project's machine one frame gave two edge
    # maps, two fits a micron apart, and on a few boards two readings.
    rng = np.random.default_rng(5)
    gx, gy = ((rng.standard_normal((97, 203)) * 60).astype(np.float32) for _ in range(2))
    ours = [edge_strength(_at_offset(gx, a), _at_offset(gy, b)) for a in OFFSETS for b in OFFSETS[::3]]
    assert all(np.array_equal(m, ours[0]) for m in ours[1:])
    # The same lengths OpenCV means, to a float's rounding.
    assert np.allclose(ours[0], cv2.magnitude(gx, gy), rtol=1e-6, atol=0)


def test_edge_strength_is_the_gradient_s_length_and_the_edge_map_is_normalised():
    gx = np.array([[3.0, 0.0, -5.0]], dtype=np.float32)
    gy = np.array([[4.0, 2.0, 12.0]], dtype=np.float32)
    out = edge_strength(gx, gy)
    assert out.dtype == np.float32
    assert np.array_equal(out, np.array([[5.0, 2.0, 13.0]], dtype=np.float32))
    gray = (np.random.default_rng(6).random((64, 80)) * 255).astype(np.float32)
    edges = _edge_map(gray)
    assert edges.dtype == np.float32 and abs(float(edges.mean()) - 1.0) < 1e-3
    assert all(np.array_equal(_edge_map(_at_offset(gray, off)), edges) for off in OFFSETS)
