"""The bare holes' own light: a frame whose bare holes stand darker than the calibration's reads them as bare."""

import numpy as np

from pegwatch.vision.bare_light import bare_distances, bare_model, fit_bare_gain, past_the_game
from pegwatch.vision.peg_light import MIN_PEG_HOLES, PegLight, scale_features
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import EMPTY, ROW_EMPTY


def test_the_rows_past_the_game_are_the_trailing_rows_that_show_no_peg():
    rows, holes, keys = 5, 2, 2
    light = np.zeros(rows * holes, dtype=bool)
    key_pegs = np.zeros(rows * keys, dtype=bool)
    assert past_the_game(light, key_pegs, rows=rows).all()  # nothing played
    light[1 * holes] = True  # row 2 shows a light peg
    assert past_the_game(light, key_pegs, rows=rows).tolist() == [False] * 4 + [True] * 6
    key_pegs[3 * keys + 1] = True  # row 4 shows a key peg: a dark guess is there
    assert past_the_game(light, key_pegs, rows=rows).tolist() == [False] * 8 + [True] * 2
    light[-1] = True
    assert not past_the_game(light, key_pegs, rows=rows).any()


def _bare_holes(invicta_table, invicta_cal):
    """The first calibration photo's code features, its reader, and which guess holes it reads bare."""
    reader = BoardReader(invicta_table.profile, invicta_cal)
    shot = invicta_table.calibration[0]
    loc = reader.localiser.locate(shot.image)
    f = reader.sampler.features_from_frame(shot.image, loc.image_to_board, invicta_cal.plastic_linear, covers=False)
    p = invicta_table.profile
    n = p.rows * p.holes
    model = reader.code_model
    bare = np.array([model.names[b] == EMPTY for b in model.classify(f.code[:n]).best])
    return reader, f.code[:n], f.code_linear[:n], bare


def test_a_shade_on_every_bare_hole_is_found_and_undone(invicta_table, invicta_cal):
    reader, feats, lin, bare = _bare_holes(invicta_table, invicta_cal)
    model = reader.code_model
    is_bare = np.array([n == EMPTY for n in model.names])
    assert bare.sum() >= MIN_PEG_HOLES
    plain = model.distances2(feats)
    assert fit_bare_gain(model, (feats, lin, None), plain, use=bare, bare_classes=is_bare) == 1.0
    # The recesses in the shade of their walls: 0.6 times the calibration's light.
    dark, dark_lin = feats.copy(), lin.copy()
    dark[bare] = scale_features(feats[bare], lin[bare], 0.6)
    dark_lin[bare] = lin[bare] * 0.6
    others = model.distances2(dark)
    gain = fit_bare_gain(model, (dark, dark_lin, None), others, use=bare, bare_classes=is_bare)
    assert abs(np.log(gain * 0.6)) < 0.1
    # In that light the bare class is where the holes are again; the pegs' classes are not moved.
    d2 = bare_distances(bare_model(model, is_bare), is_bare, gain, others, dark, dark_lin, None)
    assert np.median(d2[bare][:, is_bare]) < np.median(others[bare][:, is_bare]) / 2
    assert np.array_equal(d2[:, ~is_bare], others[:, ~is_bare])
    # Too few holes say nothing about the light, and a clipped hole says nothing at all.
    few = np.zeros(len(bare), dtype=bool)
    few[np.flatnonzero(bare)[: MIN_PEG_HOLES - 1]] = True
    assert fit_bare_gain(model, (dark, dark_lin, None), others, use=few, bare_classes=is_bare) == 1.0
    clipped = np.ones((len(bare), 3), dtype=bool)
    assert fit_bare_gain(model, (dark, dark_lin, clipped), others, use=bare, bare_classes=is_bare) == 1.0


def test_the_calibration_photos_keep_the_calibrations_bare_light(invicta_table, invicta_cal):
    reader = BoardReader(invicta_table.profile, invicta_cal)
    for shot in invicta_table.calibration:
        reader.read(shot.image, at_ns=0)
        assert reader.last_peg_light.bare == 1.0


def test_rows_past_the_game_read_bare_where_the_recesses_are_dark(pbr):
    """Issue 14's case 39: a low lamp, the bare holes a third darker than calibrated, rows 1-5 under a hand."""
    table, cal, cases = pbr
    board = next(b for b in cases if b.meta["index"] == 39)
    reader = BoardReader(table.profile, cal)
    reading = reader.read(board.image, at_ns=1)
    assert reader.last_peg_light.bare > 1.2
    for row in reading.rows[6:]:
        assert row.status == ROW_EMPTY, row


def test_a_bare_light_is_not_the_calibrations_light_but_leaves_the_pegs_in_it():
    light = PegLight(bare=1.4)
    assert not light.is_calibrations  # a hole read bare in a row in play must prove it
    assert light.pegs_in_calibrations  # the peg classes are not widened for it
    assert PegLight().is_calibrations and PegLight().pegs_in_calibrations
    assert not PegLight(code=0.5).pegs_in_calibrations
