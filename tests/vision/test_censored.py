"""Clipped holes: the distance to each class is the best over the values clipping hides."""

from __future__ import annotations

import itertools

import numpy as np

from pegwatch.vision.censored import CLIP_FACTORS, censored_distances
from pegwatch.vision.colour import ColourModel, linear_bgr_to_lab


def _model() -> ColourModel:
    # Three classes over disc CIELAB and one more feature: what a clipped hole may turn out to be.
    lab = linear_bgr_to_lab(np.array([[0.9, 0.9, 0.9], [0.1, 0.5, 0.95], [0.05, 0.6, 0.9]]))
    means = np.column_stack([lab, [0.0, 1.0, 2.0]])
    return ColourModel(names=("white", "orange", "yellow"), means=means, covariances=np.stack([np.eye(4) * 4.0] * 3), counts=(40, 40, 40))


def _one_by_one(model: ColourModel, features: np.ndarray, linear: np.ndarray, clipped: np.ndarray) -> np.ndarray:
    """Each hole alone, every combination of factors on its clipped channels."""
    out = model.distances2(features)
    for i in np.flatnonzero(clipped.any(axis=1)):
        chans = np.flatnonzero(clipped[i])
        for combo in itertools.product(CLIP_FACTORS, repeat=len(chans)):
            scale = np.ones(3)
            scale[chans] = combo
            f = np.r_[linear_bgr_to_lab(linear[i] * scale), features[i, 3:]]
            out[i] = np.minimum(out[i], model.distances2(f[None, :])[0])
    return out


def test_each_clipped_hole_takes_its_best_over_the_values_clipping_hides_whatever_channels_clip():
    model = _model()
    rng = np.random.default_rng(7)
    linear = rng.uniform(0.05, 0.9, (9, 3))
    clipped = np.array([
        [False, False, True], [False, False, False], [False, True, True], [False, False, True], [True, False, False],
        [False, True, True], [True, True, False], [False, False, False], [False, True, False],
    ])
    features = np.column_stack([linear_bgr_to_lab(linear), rng.uniform(0, 2, 9)])
    got = censored_distances(model, features, linear, clipped)
    assert np.allclose(got, _one_by_one(model, features, linear, clipped))
    # Unclipped holes keep their plain distances; a clipped one can only come nearer a class.
    plain = model.distances2(features)
    assert np.array_equal(got[~clipped.any(axis=1)], plain[~clipped.any(axis=1)])
    assert (got <= plain).all() and (got[clipped.any(axis=1)] < plain[clipped.any(axis=1)]).any()


def test_the_distances_to_some_classes_are_those_columns_of_the_distances_to_all():
    model = _model()
    rng = np.random.default_rng(8)
    linear = rng.uniform(0.05, 0.9, (9, 3))
    clipped = rng.random((9, 3)) < 0.3
    features = np.column_stack([linear_bgr_to_lab(linear), rng.uniform(0, 2, 9)])
    every = censored_distances(model, features, linear, clipped)
    for classes in ([True, False, True], [False, True, False], [True, True, True]):
        mask = np.array(classes)
        some = censored_distances(model, features, linear, clipped, classes=mask)
        assert some.shape == (9, int(mask.sum()))
        assert np.allclose(some, every[:, mask], rtol=1e-12, atol=0.0)
        assert np.allclose(model.distances2(features, classes=mask), model.distances2(features)[:, mask], rtol=1e-12, atol=0.0)
