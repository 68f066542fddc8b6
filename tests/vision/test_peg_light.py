"""The pegs' own light: a frame whose pegs stand brighter than the plastic says is read in their light."""

import numpy as np

from pegwatch.vision.censored import censored_distances
from pegwatch.vision.colour import lab_to_linear_bgr
from pegwatch.vision.peg_light import (
    MIN_PEG_HOLES,
    PEG_TINTS,
    fit_gain,
    fit_peg_light,
    peg_distances,
    scale_features,
    tint_factor,
)
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import EMPTY, UNKNOWN


def _brighten_pegs(reader, frame_features, factor):
    """The features of ``frame_features`` with every hole the calibration reads as a peg ``factor`` times brighter."""
    model = reader.code_model
    best = model.classify(frame_features).best
    is_peg = np.array([model.names[b] not in (EMPTY, "shield") for b in best])
    out = frame_features.copy()
    lin = lab_to_linear_bgr(out[:, 0:3])
    out[is_peg] = scale_features(out[is_peg], lin[is_peg], factor)
    return out, is_peg


def _calibration_features(table, cal):
    """A reader, the first calibration photo's features, the peg classes, and every hole in use."""
    reader = BoardReader(table.profile, cal)
    shot = table.calibration[0]
    loc = reader.localiser.locate(shot.image)
    f = reader.sampler.features_from_frame(shot.image, loc.image_to_board, cal.plastic_linear, covers=False)
    peg_classes = np.array([n not in (EMPTY, "shield") for n in reader.code_model.names])
    return reader, f, peg_classes, np.ones(len(f.code), dtype=bool)


def test_the_factor_is_found_from_the_pegs_alone(invicta_table, invicta_cal):
    reader, f, peg_classes, use = _calibration_features(invicta_table, invicta_cal)
    model = reader.code_model
    assert fit_gain(model, f.code, f.code_linear, use=use, peg_classes=peg_classes) == 1.0
    brighter, is_peg = _brighten_pegs(reader, f.code, 3.0)
    assert is_peg.sum() >= MIN_PEG_HOLES
    gain = fit_gain(model, brighter, lab_to_linear_bgr(brighter[:, 0:3]), use=use, peg_classes=peg_classes)
    # The fit undoes the brightening (to the grid's step), empty holes untouched.
    assert abs(np.log(gain * 3.0)) < 0.15
    # Too few pegs say nothing about the light.
    few = np.zeros(len(f.code), dtype=bool)
    few[np.flatnonzero(is_peg)[: MIN_PEG_HOLES - 1]] = True
    assert fit_gain(model, brighter, lab_to_linear_bgr(brighter[:, 0:3]), use=few, peg_classes=peg_classes) == 1.0


def test_the_calibration_photos_keep_the_calibrations_light(invicta_table, invicta_cal):
    reader = BoardReader(invicta_table.profile, invicta_cal)
    for shot in invicta_table.calibration:
        reading = reader.read(shot.image, at_ns=0)
        read = [h.colour for r in reading.rows for h in r.holes if h.colour not in (EMPTY, UNKNOWN)]
        assert len(read) >= MIN_PEG_HOLES
        assert reader.last_peg_light.code == 1.0
        assert reader.last_peg_light.is_calibrations  # no tint either


def test_a_tint_every_peg_shows_is_found_and_a_few_pegs_make_none(invicta_table, invicta_cal):
    """A warm lamp on the domed heads and a cool fill on the flat plastic: every peg looks warmer than calibrated."""
    reader, f, peg_classes, use = _calibration_features(invicta_table, invicta_cal)
    model = reader.code_model
    assert fit_peg_light(model, f.code, f.code_linear, use=use, peg_classes=peg_classes) == (1.0, 0.0)
    is_peg = np.array([model.names[b] not in (EMPTY, "shield") for b in model.classify(f.code).best])
    # 0.6 warmer (ln(R/B)): the inverse of what takes it back.
    warm = f.code.copy()
    warm_lin = f.code_linear.copy()
    warm[is_peg] = scale_features(f.code[is_peg], f.code_linear[is_peg], 1.0 / tint_factor(0.6))
    warm_lin[is_peg] = f.code_linear[is_peg] / tint_factor(0.6)
    gain, tint = fit_peg_light(model, warm, warm_lin, use=use, peg_classes=peg_classes)
    step = float(PEG_TINTS[1] - PEG_TINTS[0])
    assert abs(tint - 0.6) <= step / 2 + 1e-9
    assert abs(np.log(gain)) < 0.3  # a tint moves the brightness a little: the factor follows
    # The same tint on a few pegs only (a hand's warm shade) is no claim about the light.
    few = np.zeros(len(f.code), dtype=bool)
    few[np.flatnonzero(is_peg)[:3]] = True
    some = f.code.copy()
    some_lin = f.code_linear.copy()
    some[few] = warm[few]
    some_lin[few] = warm_lin[few]
    assert fit_peg_light(model, some, some_lin, use=use, peg_classes=peg_classes)[1] == 0.0


def test_pegs_are_measured_where_their_heads_stand_in_their_light_and_the_rest_where_the_hole_lies(invicta_table, invicta_cal):
    reader, f, peg_classes, _ = _calibration_features(invicta_table, invicta_cal)
    model = reader.code_model
    lin = lab_to_linear_bgr(f.code[:, 0:3])
    clipped = np.zeros(lin.shape, dtype=bool)
    clipped[::7, 2] = True
    # The heads' places: the holes' own samples a little brighter, as a lean would show them.
    head, head_lin = scale_features(f.code, lin, 1.1), lin * 1.1
    gain = np.array([1.2, 1.0, 0.9])
    got = peg_distances(model, peg_classes, gain, f.code, lin, clipped, head, head_lin, clipped)
    at_hole = censored_distances(model, f.code, lin, clipped)
    at_head = censored_distances(model, scale_features(head, head_lin, gain), head_lin * gain, clipped)
    assert np.allclose(got[:, ~peg_classes], at_hole[:, ~peg_classes], rtol=1e-12, atol=0.0)
    assert np.allclose(got[:, peg_classes], at_head[:, peg_classes], rtol=1e-12, atol=0.0)
    # No head and no light of their own: every class where the hole lies.
    assert np.allclose(peg_distances(model, peg_classes, 1.0, f.code, lin, clipped, None, None, None), at_hole, rtol=1e-12, atol=0.0)
