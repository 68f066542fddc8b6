"""Calibration a real arbiter can do: colours learned bit by bit, keys on their own, empty boards, low trust."""

from __future__ import annotations

import copy

import cv2
import numpy as np
import pytest

from pegwatch.simulation.hardset import truth_record
from pegwatch.simulation.render import BoardContents, random_conditions, render
from pegwatch.vision.calibrate import calibrate, truth_from_record
from pegwatch.vision.calibration import Calibration, CalibrationError
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import EMPTY, UNKNOWN


def _truths(table, relabel: dict[str, str]):
    p = table.profile
    out = []
    for r in table.calibration:
        rec = truth_record(r.contents, p)
        for row in rec["rows"]:
            row["guess"] = [relabel.get(c, c) for c in row["guess"]]
        if rec["secret"]:
            rec["secret"] = [relabel.get(c, c) for c in rec["secret"]]
        out.append(truth_from_record(rec, p, where="t.json"))
    return out


def _empty_board(table, seed: int = 1):
    """A photo of ``table``'s board with nothing on it, from the same camera."""
    p = table.profile
    cond = random_conditions(np.random.default_rng([5, table.peg_set, 7]), difficulty="easy", profile=p, peg_set=table.peg_set)
    contents = BoardContents(guesses=(None,) * p.rows, keys=(None,) * p.rows, secret=None, shield_open=False)
    return render(p, contents, cond, seed=seed)


@pytest.fixture(scope="module")
def no_purple(invicta_table) -> Calibration:
    """The invicta table calibrated with every purple hole marked 'unknown' in the truth."""
    p = invicta_table.profile
    return calibrate([r.image for r in invicta_table.calibration], _truths(invicta_table, {"purple": UNKNOWN}), p)


def test_a_colour_not_seen_is_named_and_makes_the_calibration_low_trust(no_purple, caplog):
    assert no_purple.not_learned == ("purple",)
    assert no_purple.trust == "low"
    assert any("purple" in r for r in no_purple.trust_reasons)
    assert any("purple" in w for w in no_purple.warnings)
    assert "purple" in no_purple.to_dict()["not_learned"]["code"]


def test_a_colour_not_learned_reads_unknown_never_as_another(no_purple, invicta_table):
    reader = BoardReader(invicta_table.profile, no_purple)
    purple = wrong = read = 0
    for shot in invicta_table.calibration:
        reading = reader.read(shot.image, at_ns=0)
        assert reading.trust == "low"
        for r, guess in enumerate(shot.contents.guesses):
            if guess is None:
                continue
            for h, colour in zip(reading.rows[r].holes, guess, strict=True):
                if colour == "purple":
                    purple += 1
                    assert h.colour == UNKNOWN, (r + 1, h)
                elif h.colour != UNKNOWN:
                    read += 1
                    wrong += h.colour != colour
    assert purple > 5 and wrong == 0 and read > 50


def test_key_colours_are_learned_without_code_colours_of_their_names(invicta_table):
    # Red and white are the key colours; hide them from the code truth so
    # that the key model must learn them from the marked rows alone.
    p = invicta_table.profile
    cal = calibrate([r.image for r in invicta_table.calibration], _truths(invicta_table, {"red": UNKNOWN, "white": UNKNOWN}), p)
    assert set(cal.not_learned) == {"red", "white"}
    assert cal.keys_not_learned == ()
    reader = BoardReader(p, cal)
    checked = 0
    for shot in invicta_table.calibration:
        reading = reader.read(shot.image, at_ns=0)
        for r, keys in enumerate(shot.contents.keys):
            k = reading.rows[r].keys
            # Every key hole read surely (a row whose code holes are in doubt
            # gives its counts as bounds, but the pegs seen are still counted).
            if keys is None or k.black + k.white + k.empty != p.key_holes:
                continue
            assert (reading.rows[r].keys.black, reading.rows[r].keys.white) == keys
            checked += 1
    assert checked >= 15


def test_empty_board_calibrates_geometry_plastic_and_empty_holes_then_colours_follow(invicta_table):
    p = invicta_table.profile
    empty = _empty_board(invicta_table)
    cal = calibrate([empty.image], [{"rules": "mso", "secret": None, "rows": [], "timeout": None}], p)
    assert cal.method == "markers" and cal.trust == "low"
    assert set(cal.not_learned) == set(p.palette)
    assert set(cal.keys_not_learned) == {"red", "white"}
    # Pegs it has never seen are unknown, never a colour; empty holes are empty.
    reader = BoardReader(p, cal)
    shot = invicta_table.calibration[0]
    reading = reader.read(shot.image, at_ns=0)
    for r, guess in enumerate(shot.contents.guesses):
        for j, h in enumerate(reading.rows[r].holes):
            truth = EMPTY if guess is None else guess[j]
            assert h.colour in (UNKNOWN, EMPTY, "occluded")
            if truth != EMPTY:
                assert h.colour != EMPTY, (r + 1, j + 1)
    # Colours follow later, on top: geometry and plastic are kept.
    full = calibrate(
        [r.image for r in invicta_table.calibration], _truths(invicta_table, {}), p, base=cal
    )
    assert full.trust == "full" and full.not_learned == () and full.keys_not_learned == ()
    assert full.plastic_linear == cal.plastic_linear
    # It reads as a calibration made from the same photos in one go, and never wrongly.
    fresh = calibrate([r.image for r in invicta_table.calibration], _truths(invicta_table, {}), p)
    again = BoardReader(p, full).read(shot.image, at_ns=0)
    once = BoardReader(p, fresh).read(shot.image, at_ns=0)
    assert [h.colour for r in again.rows for h in r.holes] == [h.colour for r in once.rows for h in r.holes]
    read = [(h.colour, c) for r, g in zip(again.rows, shot.contents.guesses, strict=True) if g for h, c in zip(r.holes, g, strict=True)]
    assert all(a in (b, UNKNOWN) for a, b in read) and sum(a == b for a, b in read) >= 0.75 * len(read)


def test_a_board_with_no_empty_hole_is_refused(invicta_table):
    p = invicta_table.profile
    shot = invicta_table.calibration[0]
    rec = truth_record(shot.contents, p)
    for row in rec["rows"]:
        row["guess"] = [UNKNOWN if c == EMPTY else c for c in row["guess"]]
    unsure = {"guess": [UNKNOWN] * p.holes, "black": "unknown", "white": "unknown"}
    rec["rows"] += [unsure] * (p.rows - len(rec["rows"]))
    with pytest.raises(CalibrationError, match="never show an empty hole"):
        calibrate([shot.image], [truth_from_record(rec, p, where="t.json")], p)


def test_partial_calibration_survives_the_file_and_old_files_load_as_full(no_purple, tmp_path):
    path = tmp_path / "cal.json"
    no_purple.save(path)
    again = Calibration.load(path)
    assert again.trust == "low" and again.not_learned == ("purple",) and again.trust_reasons == no_purple.trust_reasons
    i = again.code_model.names.index("purple")
    assert again.code_model.counts[i] == 0
    # The guard is never accepted, even at its own mean.
    c = again.code_model.classify(again.code_model.means[i : i + 1])
    assert not c.accepted[0]
    old = copy.deepcopy(no_purple.to_dict())
    for key in ("trust", "trust_reasons", "not_learned", "warnings"):
        del old[key]
    del old["localisation"]["check"]
    loaded = Calibration.from_dict(old, where="old.json")
    assert loaded.trust == "full" and loaded.not_learned == () and loaded.board_check


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [("trust", "medium", "trust: 'medium' is not one of full, low"), ("trust_reasons", [3], "trust_reasons"),
     ("not_learned", {"code": "purple"}, "not_learned.code")],
)
def test_bad_added_keys_name_the_key(no_purple, key, value, match):
    data = no_purple.to_dict()
    data[key] = value
    with pytest.raises(CalibrationError, match=match):
        Calibration.from_dict(data, where="c.json")


def test_a_board_the_check_refuses_is_read_low_trust_and_never_judged(invicta_table):
    p = invicta_table.profile
    shot = invicta_table.calibration[0]
    # A sheet over rows 1-10: two rows are too few for the board check, though the corners are exact.
    x_end = p.row_box_mm(10)[0] + p.row_box_mm(10)[2] + 2.0
    sheet = np.array([(-5.0, -5.0), (x_end, -5.0), (x_end, p.size_mm[1] + 5), (-5.0, p.size_mm[1] + 5)])
    q = np.c_[sheet, np.ones(4)] @ shot.board_to_image.T
    image = shot.image.copy()
    cv2.fillConvexPoly(image, np.round(q[:, :2] / q[:, 2:]).astype(np.int32), (150, 160, 170))
    corners = [tuple(c) for c in shot.corners_px]
    truth = [truth_record(shot.contents, p)] * 2
    with pytest.raises(CalibrationError, match="image 2: board not found"):
        calibrate([shot.image, image], truth, p, corners, allow_low_trust=False)
    cal = calibrate([shot.image, image], truth, p, corners)
    assert cal.trust == "low" and not cal.board_check
    assert any("board check" in r for r in cal.trust_reasons)
    reading = BoardReader(p, Calibration.from_dict(cal.to_dict())).read(image, at_ns=0)
    assert reading.problem is None and reading.trust == "low"
