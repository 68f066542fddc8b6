"""The plastic's light model: which cells are the plastic is not a vote."""

from __future__ import annotations

import numpy as np

from pegwatch.vision.cells import fit_light, light_design, plastic_like
from pegwatch.vision.tint import TINT_DIRECTION

PLASTIC = np.array([0.05, 0.05, 0.06])  # the calibration's plastic, linear BGR


def _board(rng: np.random.Generator, *, sleeve_bgr: tuple[float, float, float], tint: float) -> tuple:
    """Cells over a 260 x 85 mm board: the plastic under a lamp ``tint`` warmer and a
    light falling across it, and a sleeve over the middle 60 % of them."""
    pts = np.column_stack([rng.uniform(0, 260, 160), rng.uniform(0, 85, 160)])
    fall = np.exp(-0.4 * pts[:, 0] / 100.0)[:, None]
    plastic = PLASTIC * np.exp(tint * TINT_DIRECTION) * 2.0 * fall
    sleeve = np.asarray(sleeve_bgr) * fall
    under = (pts[:, 0] > 52) & (pts[:, 0] < 208)
    lin = np.where(under[:, None], sleeve, plastic) * np.exp(rng.normal(0, 0.02, (160, 3)))
    return pts, np.log(lin), under


def test_a_sleeve_over_most_of_the_board_is_not_taken_for_its_plastic():
    rng = np.random.default_rng(3)
    pts, values, under = _board(rng, sleeve_bgr=(0.05, 0.12, 0.02), tint=0.4)  # a green sleeve, a warm lamp
    design = light_design(pts)
    assert under.mean() > 0.5
    like = plastic_like(values, PLASTIC)
    assert like[~under].mean() > 0.95 and not like[under].any()
    coef, good = fit_light(design, values, PLASTIC)
    assert not good[under].any()
    resid = np.abs(values - design @ coef).max(axis=1)
    assert np.median(resid[~under]) < 0.05 < np.min(resid[under])
    # Without the calibration's plastic the majority wins: that is what it guards against.
    coef0, _ = fit_light(design, values)
    assert np.median(np.abs(values - design @ coef0).max(axis=1)[~under]) > 0.3


def test_a_navy_sleeve_is_no_plastic_under_any_lamp():
    rng = np.random.default_rng(4)
    # Navy: far bluer than any daylight makes the grey plastic.
    _pts, values, under = _board(rng, sleeve_bgr=(0.20, 0.05, 0.02), tint=0.0)
    like = plastic_like(values, PLASTIC)
    assert not like[under].any() and like[~under].mean() > 0.95


def test_a_tungsten_lamp_through_a_daylight_white_balance_is_still_the_plastic():
    """A warm lamp seen through a white balance set for daylight, a second, cooler lamp
    from one side: the plastic's tint runs from 1.0 to 1.7 across the board, beyond
    what a lamp alone gives. It is all the plastic, and the light model fits all of it."""
    rng = np.random.default_rng(5)
    pts = np.column_stack([rng.uniform(0, 260, 160), rng.uniform(0, 85, 160)])
    tint = 1.0 + 0.7 * pts[:, 0] / 260.0
    fall = np.exp(-0.4 * pts[:, 0] / 100.0)[:, None]
    lin = PLASTIC * np.exp(tint[:, None] * TINT_DIRECTION[None, :]) * 2.0 * fall * np.exp(rng.normal(0, 0.02, (160, 3)))
    values = np.log(lin)
    coef, good = fit_light(light_design(pts), values, PLASTIC)
    assert good.mean() > 0.95
    assert np.abs(values - light_design(pts) @ coef).max() < 0.15
