"""Calibration: fitting, the JSON file, and clear errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pegwatch.simulation.hardset import calibration_contents, truth_record
from pegwatch.vision.calibrate import calibrate, truth_from_record
from pegwatch.vision.calibration import Calibration, CalibrationError
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import ReadingRecordError


def test_save_load_roundtrip(invicta_cal, tmp_path):
    path = tmp_path / "cal.json"
    invicta_cal.save(path)
    again = Calibration.load(path)
    assert again.profile == invicta_cal.profile and again.method == "markers"
    assert again.code_model.names == invicta_cal.code_model.names
    x = invicta_cal.code_model.means
    assert np.array_equal(again.code_model.classify(x).best, invicta_cal.code_model.classify(x).best)
    assert again.plastic_linear == pytest.approx(invicta_cal.plastic_linear)


def test_calibration_learns_every_colour_and_the_shield(invicta_cal, invicta_table):
    names = set(invicta_cal.code_model.names)
    assert set(invicta_table.profile.palette) | {"empty", "shield"} <= names
    assert set(invicta_cal.key_model.names) == {"red", "white", "empty"}


def test_missing_palette_colour_is_a_warning_not_a_refusal(invicta_table, caplog):
    p = invicta_table.profile
    r = invicta_table.calibration[0]
    record = truth_record(r.contents, p)
    # Pretend the truth never mentions purple: relabel it as blue.
    for row in record["rows"]:
        row["guess"] = ["blue" if c == "purple" else c for c in row["guess"]]
    if record["secret"]:
        record["secret"] = ["blue" if c == "purple" else c for c in record["secret"]]
    cal = calibrate([r.image], [truth_from_record(record, p, where="t.json")], p)
    assert cal.not_learned == ("purple",) and cal.trust == "low"
    assert "never saw purple" in caplog.text


def test_truth_with_a_colour_not_in_the_palette(invicta_table):
    p = invicta_table.profile
    record = truth_record(calibration_contents(p, 0, shield_open=True), p)
    record["rows"][0]["guess"][0] = "pink"
    with pytest.raises(CalibrationError, match=r"rows\[0\].guess\[0\]: 'pink' is not in the invicta-12x4 palette"):
        truth_from_record(record, p, where="t.json")


def test_truth_length_mismatch(invicta_table):
    p = invicta_table.profile
    record = truth_record(calibration_contents(p, 0, shield_open=True), p)
    record["rows"][2]["guess"] = record["rows"][2]["guess"][:3]
    with pytest.raises(ReadingRecordError, match="3 colours, the board has 4 holes"):
        truth_from_record(record, p, where="t.json")


def test_images_and_truths_must_pair_up(invicta_table):
    p = invicta_table.profile
    with pytest.raises(CalibrationError, match="2 images but 1 truth"):
        calibrate([r.image for r in invicta_table.calibration[:2]], invicta_table.calibration_truths()[:1], p)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("not json", "not valid JSON"),
        ('{"format": "other"}', "not a pegwatch calibration file"),
        ('{"format": "pegwatch-calibration", "version": 1, "profile": "x"}', "localisation.method: missing"),
    ],
)
def test_bad_calibration_file(tmp_path, text, match):
    path = tmp_path / "cal.json"
    path.write_text(text)
    with pytest.raises(CalibrationError, match=match):
        Calibration.load(path)


def test_bad_model_in_file_names_the_key(invicta_cal, tmp_path):
    data = invicta_cal.to_dict()
    data["code_model"]["classes"][0]["covariance"] = [[1, 0], [0, 1]]
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match="code_model"):
        Calibration.load(path)


def test_missing_file(tmp_path):
    with pytest.raises(CalibrationError, match="calibration file not found"):
        Calibration.load(tmp_path / "nope.json")


def test_corners_calibration_stores_reference_and_reads(invicta_table, calibrate_table, tmp_path):
    r0 = invicta_table.calibration[0]
    corners = [tuple(map(float, c)) for c in r0.corners_px]
    cal = calibrate_table(invicta_table, corners=corners)
    assert cal.method == "corners" and cal.corners_px is not None
    assert cal.reference is not None
    path = tmp_path / "cal.json"
    cal.save(path)
    again = Calibration.load(path)
    reader = BoardReader(invicta_table.profile, again)
    reading = reader.read(invicta_table.calibration[1].image, at_ns=1)
    assert reading.problem is None
    truth = truth_from_record(invicta_table.calibration_truths()[1], invicta_table.profile, where="t")
    assert [r.guess for r in reading.rows] == [r.guess for r in truth.rows]
    # The calibration fresh from ``calibrate``, never saved, reads the same.
    fresh = BoardReader(invicta_table.profile, cal).read(invicta_table.calibration[1].image, at_ns=1)
    assert fresh.problem is None and [r.guess for r in fresh.rows] == [r.guess for r in truth.rows]
