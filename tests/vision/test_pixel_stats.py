"""The sampler's pixel statistics: the pixels gathered, and their medians."""

from __future__ import annotations

import numpy as np

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
