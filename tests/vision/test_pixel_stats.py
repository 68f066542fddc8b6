"""The sampler's pixel statistics: the pixels gathered, and their medians."""

from __future__ import annotations

import numpy as np

from pegwatch.vision.blocks import LOG_LINEAR, log_linear
from pegwatch.vision.colour import lab_to_linear_bgr, linear_bgr_to_lab
from pegwatch.vision.pixel_stats import brightness, median_axis1, pixels_at, trimmed_median


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
