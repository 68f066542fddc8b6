"""Peg classes widened along the light's tint: a warm-lit white is not a sure yellow."""

from __future__ import annotations

import numpy as np

from pegwatch.vision.colour import lab_to_linear_bgr, linear_bgr_to_lab
from pegwatch.vision.tint import TINT_DIRECTION, TINT_SIGMA, tint_jacobian, widened


def _tinted(features: np.ndarray, t: float) -> np.ndarray:
    """Class-mean features (disc then ring CIELAB) under a light ``t`` warmer in ln(R/B)."""
    out = np.array(features, dtype=np.float64, copy=True)
    gain = np.exp(t * TINT_DIRECTION)
    for lo in (0, 3):
        out[:, lo : lo + 3] = linear_bgr_to_lab(lab_to_linear_bgr(features[:, lo : lo + 3]) * gain)
    return out


def test_a_warmer_light_moves_a_neutral_towards_yellow():
    grey = np.array([[60.0, 0.0, 0.0, 55.0, 0.0, 0.0, 0.0]])
    j = tint_jacobian(grey)[0]
    assert j[2] > 10 * abs(j[0]) and j[5] > 10 * abs(j[3])  # b* moves, lightness hardly
    assert j[6] == 0.0  # the key holes' dark fraction is no colour
    # One unit of tint is about the shift from daylight to a tungsten lamp.
    assert np.allclose(np.log(np.exp(TINT_DIRECTION))[[0, 2]] @ [-1, 1], 1.0)


def test_a_white_lit_warmer_than_the_plastic_is_not_a_sure_yellow(invicta_cal):
    model = invicta_cal.code_model
    names = list(model.names)
    pegs = np.array([n not in ("empty", "shield") for n in names])
    white = model.means[names.index("white")][None, :]
    warm = _tinted(white, 3 * TINT_SIGMA)
    plain = model.classify_distances(model.distances2(warm))
    wide_model = widened(model, pegs)
    wide = wide_model.classify_distances(wide_model.distances2(warm))
    assert not plain.accepted[0]  # the calibration's classes cannot say what it is
    assert wide.accepted[0] and names[wide.best[0]] == "white"
    # A colour no light's tint explains is still no class.
    far = _tinted(white, 12 * TINT_SIGMA)
    assert not wide_model.classify_distances(wide_model.distances2(far)).accepted[0]
    # A true yellow is still read as yellow, and empty holes keep their class.
    yellow = model.means[names.index("yellow")][None, :]
    y = wide_model.classify_distances(wide_model.distances2(yellow))
    assert y.accepted[0] and names[y.best[0]] == "yellow"
    e = names.index("empty")
    assert np.array_equal(wide_model.covariances[e], model.covariances[e])
