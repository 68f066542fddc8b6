"""The CIELAB colour model: fitting, rejection, margins, JSON form."""

from __future__ import annotations

import numpy as np
import pytest

from pegwatch.vision.colour import (
    ColourModel,
    ColourModelError,
    chi2_3_quantile,
    linear_bgr_to_lab,
    srgb_bgr_to_lab,
)

CENTRES = {
    "red": (45.0, 60.0, 40.0),
    "green": (55.0, -50.0, 40.0),
    "blue": (35.0, 20.0, -60.0),
    "white": (92.0, 0.0, 2.0),
    "empty": (15.0, 2.0, 3.0),
}


def _samples(rng, n=20, sigma=1.5):
    return {k: np.array(c) + rng.normal(0, sigma, (n, 3)) for k, c in CENTRES.items()}


def test_lab_conversion_matches_known_values():
    lab = srgb_bgr_to_lab(np.array([[255, 255, 255], [0, 0, 0], [0, 0, 255]], dtype=np.uint8))
    assert lab[0] == pytest.approx([100.0, 0.0, 0.0], abs=0.05)
    assert lab[1] == pytest.approx([0.0, 0.0, 0.0], abs=0.05)
    # sRGB red is L 53.24, a 80.09, b 67.20
    assert lab[2] == pytest.approx([53.24, 80.09, 67.20], abs=0.1)
    assert linear_bgr_to_lab(np.array([0.5, 0.5, 0.5]))[1:] == pytest.approx([0, 0], abs=0.01)


def test_chi2_quantiles_are_sane():
    assert chi2_3_quantile(1e-3) == pytest.approx(16.266)
    assert chi2_3_quantile(0.05) == pytest.approx(7.815, rel=0.02)


def test_classifies_its_own_classes():
    rng = np.random.default_rng(1)
    model = ColourModel.fit(_samples(rng))
    test = _samples(np.random.default_rng(2), n=10)
    for name, arr in test.items():
        c = model.classify(arr)
        assert all(model.names[i] == name for i in c.best)
        assert c.accepted.all()
        assert (c.confidence > 0.99).all()


def test_rejects_far_colours():
    model = ColourModel.fit(_samples(np.random.default_rng(3)))
    far = np.array([[70.0, 20.0, 30.0], [60.0, 0.0, 80.0], [45.0, 60.0, 10.0]])  # skin-ish, yellow, magenta-ish
    c = model.classify(far)
    assert not c.accepted.any()
    assert (c.confidence < 0.5).all()


def test_rejects_between_two_classes():
    model = ColourModel.fit(_samples(np.random.default_rng(4)))
    mid = (np.array(CENTRES["red"]) + np.array(CENTRES["blue"])) / 2
    assert not model.classify(mid[None, :]).accepted[0]


def test_margin_between_close_classes():
    rng = np.random.default_rng(5)
    s = {"a": np.array([50.0, 10.0, 10.0]) + rng.normal(0, 1, (20, 3)),
         "b": np.array([50.0, 16.0, 10.0]) + rng.normal(0, 1, (20, 3))}
    model = ColourModel.fit(s)
    c = model.classify(np.array([[50.0, 13.0, 10.0]]))
    assert not c.accepted[0]
    assert c.posterior[0] < 0.999


def test_outlying_calibration_sample_does_not_widen_class():
    rng = np.random.default_rng(6)
    s = _samples(rng)
    clean = ColourModel.fit(s)
    s["red"] = np.vstack([s["red"], [[90.0, 0.0, 0.0]]])  # a glared hole mislabelled red
    dirty = ColourModel.fit(s)
    i = clean.index("red")
    assert np.allclose(clean.covariances[i], dirty.covariances[i], atol=0.5)


def test_allowed_mask_excludes_classes():
    model = ColourModel.fit(_samples(np.random.default_rng(7)))
    allowed = [n != "red" for n in model.names]
    c = model.classify(np.array([CENTRES["red"]]), allowed=allowed)
    assert model.names[c.best[0]] != "red"
    assert not c.accepted[0]


def test_dict_roundtrip():
    model = ColourModel.fit(_samples(np.random.default_rng(8)))
    again = ColourModel.from_dict(model.to_dict())
    x = np.array(list(CENTRES.values()))
    assert np.array_equal(model.classify(x).best, again.classify(x).best)
    assert again.names == model.names


def test_bad_dict_is_a_clear_error():
    with pytest.raises(ColourModelError, match="malformed"):
        ColourModel.from_dict({"classes": [{"name": "red"}]}, where="cal.json")
    with pytest.raises(ColourModelError, match="no calibration samples"):
        ColourModel.fit({"red": np.zeros((0, 3))})
