"""The sampler's pixel statistics: the pixels gathered, and their medians."""

from __future__ import annotations

import numpy as np

from pegwatch.vision.blocks import LOG_LINEAR, log_linear
from pegwatch.vision.colour import lab_to_linear_bgr, linear_bgr_to_lab
from pegwatch.vision.pixel_stats import (
    brightness,
    channel_max,
    channel_means,
    channel_min,
    channel_order,
    clipped_channels,
    median_axis1,
    median_of,
    pixels_at,
    trimmed_median,
)


def test_pixels_at_gathers_the_frame_s_pixels_at_flat_indices_of_any_shape():
    rng = np.random.default_rng(1)
    frame = rng.integers(0, 256, size=(40, 60, 3), dtype=np.uint8)
    idx = rng.integers(0, 40 * 60, size=(7, 11))
    got = pixels_at(frame, idx)
    assert got.shape == (7, 11, 3) and got.dtype == np.uint8
    rows, cols = np.divmod(idx, 60)
    assert np.array_equal(got, frame[rows, cols])
    assert np.array_equal(pixels_at(frame, idx.ravel()), frame[rows.ravel(), cols.ravel()])


def test_the_medians_are_numpy_s_and_the_trimmed_one_keeps_the_rank_window():
    rng = np.random.default_rng(2)
    px = rng.integers(0, 256, size=(5, 9, 3), dtype=np.uint8)
    assert np.array_equal(median_axis1(px), np.median(px, axis=1))
    assert np.array_equal(median_axis1(px[:, :8]), np.median(px[:, :8], axis=1))
    # A window of the darkest three by brightness: a bright outlier (glare) changes nothing.
    lum = px.astype(int).sum(axis=2)
    glare = px.copy()
    glare[np.arange(5), np.argmax(lum, axis=1)] = 255
    ranks = np.arange(3)
    assert np.array_equal(trimmed_median(glare, ranks), trimmed_median(px, ranks))
    darkest = np.take_along_axis(px, np.argsort(lum, axis=1)[:, :3, None], axis=1)
    assert np.array_equal(trimmed_median(px, ranks), np.median(darkest, axis=1))


def test_brightness_is_the_sum_of_the_channels_without_overflow():
    px = np.array([[[255, 255, 255], [0, 0, 0], [1, 2, 3]]], dtype=np.uint8)
    got = brightness(px)
    assert got.shape == (1, 3)
    assert got.tolist() == [[765, 0, 6]]


def test_log_linear_is_the_table_s_value_for_every_sample_of_any_layout():
    rng = np.random.default_rng(3)
    px = rng.integers(0, 256, (9, 31, 3), dtype=np.uint8)
    for view in (px, px.transpose(0, 2, 1), px[:, :, 1], px[:, ::2]):
        got = log_linear(view)
        assert got.dtype == np.float32 and got.shape == view.shape
        assert np.array_equal(got, LOG_LINEAR[view])


def test_lab_takes_the_cube_root_above_the_knee_and_the_linear_segment_at_and_below_it():
    knee = 216 / 24389  # CIE's epsilon, in Y over the white's
    grey = np.array([[1.0, 1.0, 1.0], [0.18, 0.18, 0.18], [knee, knee, knee], [0.001, 0.001, 0.001], [0.0, 0.0, 0.0], [-1e-3, -1e-3, -1e-3]])
    lab = linear_bgr_to_lab(grey)
    assert np.allclose(lab[:, 1:], 0.0, atol=1e-3)  # neutral: no a*, no b*
    assert np.allclose(lab[:, 0], [100.0, 116 * np.cbrt(0.18) - 16, 8.0, 24389 / 27 * 0.001, 0.0, -24389 / 27 * 1e-3], atol=1e-3)
    # The two segments meet at the knee, and the linear one runs on below black without a jump.
    assert np.allclose(lab_to_linear_bgr(lab), grey, atol=1e-9)


def _pixels_of_brightness(lum: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Pixels of the given brightness (channel sums), their channels split at random."""
    b = rng.integers(0, np.minimum(lum, 255) + 1)
    g = rng.integers(0, np.minimum(lum - b, 255) + 1)
    r = lum - b - g
    over = r > 255
    g[over] += r[over] - 255
    r[over] = 255
    px = np.stack([b, g, r], axis=-1)
    assert (px.sum(axis=-1) == lum).all() and px.max() <= 255
    return px.astype(np.uint8)


def test_equally_bright_pixels_enter_the_rank_window_in_their_order_in_the_disc():
    # Many ties at the window's edges: which of them are kept decides the median, and must not
    # depend on a sort's algorithm (the machine's), only on the pixels' places in the disc.
    rng = np.random.default_rng(5)
    lum = rng.choice([9, 30, 60, 300], size=(8, 149))
    px = _pixels_of_brightness(lum, rng)
    ranks = np.arange(7, 74)
    order = np.argsort(lum, axis=1, kind="stable")[:, ranks]
    kept = np.take_along_axis(px, order[:, :, None], axis=1)
    assert np.array_equal(trimmed_median(px, ranks), np.median(kept, axis=1))


def test_the_rank_window_holds_for_discs_of_any_size():
    rng = np.random.default_rng(6)
    for k in (1, 2, 17, 256, 257, 1500):
        px = rng.integers(0, 256, size=(3, k, 3), dtype=np.uint8)
        lo = k // 10
        ranks = np.arange(lo, max(k // 2, lo + 1))
        order = np.argsort(brightness(px), axis=1, kind="stable")[:, ranks]
        want = np.median(np.take_along_axis(px, order[:, :, None], axis=1), axis=1)
        assert np.array_equal(trimmed_median(px, ranks), want), k


def test_channel_statistics_are_numpy_s_reductions():
    rng = np.random.default_rng(7)
    px = rng.integers(0, 256, size=(11, 37, 3), dtype=np.uint8)
    assert np.array_equal(channel_means(px), px.mean(axis=1))
    dev = rng.normal(size=(11, 37, 3)).astype(np.float32)
    assert np.array_equal(channel_max(dev), dev.max(axis=2))
    assert np.array_equal(channel_min(dev), dev.min(axis=2))
    values = rng.normal(size=41)
    assert median_of(values) == float(np.median(values))
    assert median_of(values[:40]) == float(np.median(values[:40]))


def test_a_channel_is_clipped_where_a_fifth_of_the_disc_is_at_the_ceiling_and_another_is_not():
    px = np.full((2, 10, 3), 120, dtype=np.uint8)
    px[0, :2, 2] = 255  # two of ten red samples at the ceiling: a fifth
    px[1, :1, 2] = 255  # one: not enough
    med = median_axis1(px)
    got = clipped_channels(med, px)
    assert got.tolist() == [[False, False, True], [False, False, False]]


def test_each_channel_s_order_and_median_are_numpy_s():
    rng = np.random.default_rng(9)
    for k in (1, 2, 9, 40, 151):
        px = rng.integers(0, 256, size=(6, k, 3), dtype=np.uint8)
        assert np.array_equal(channel_order(px), np.sort(px, axis=1).transpose(0, 2, 1))
        assert np.array_equal(median_axis1(px), np.median(px, axis=1)), k
        grey = px[:, :, 0].astype(np.float32)
        assert np.array_equal(median_axis1(grey), np.median(grey, axis=1)), k
