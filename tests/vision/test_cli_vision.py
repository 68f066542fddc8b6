"""``pegwatch calibrate`` and ``pegwatch read``: happy paths and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from pegwatch.device.cli import main


@pytest.fixture
def files(invicta_table, tmp_path):
    paths = []
    for i, r in enumerate(invicta_table.calibration):
        path = tmp_path / f"cal{i}.png"
        cv2.imwrite(str(path), r.image)
        paths.append(str(path))
    truths = []
    for i, t in enumerate(invicta_table.calibration_truths()):
        path = tmp_path / f"truth{i}.json"
        path.write_text(json.dumps(t))
        truths.append(str(path))
    return paths, truths, tmp_path


@pytest.fixture
def calibrated(files, capsys):
    images, truths, tmp = files
    out = tmp / "cal.json"
    args = ["calibrate", *images, "-o", str(out)]
    for t in truths:
        args += ["--truth", t]
    assert main(args) == 0
    assert "calibrated invicta-12x4 (markers)" in capsys.readouterr().out
    return images, truths, out


def test_calibrate_then_read_json(calibrated, invicta_table, capsys):
    images, _, cal = calibrated
    assert main(["read", images[0], "--calibration", str(cal), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    truth = invicta_table.calibration_truths()[0]
    assert record["rules"] == "mso"
    assert [r["guess"] for r in record["rows"]] == [r["guess"] for r in truth["rows"]]
    assert [(r["black"], r["white"]) for r in record["rows"]] == [(r["black"], r["white"]) for r in truth["rows"]]
    assert all(r["status"] == "ok" for r in record["rows"])
    assert all(len(r["confidence"]) == 4 for r in record["rows"])
    assert record["secret"] == truth["secret"]
    # Additions: how the board was found, what the picture is worth, per-hole candidates.
    assert record["found"] is True and record["found_by"] == "markers"
    assert record["px_per_mm"] > 2.5 and record["trust"] == "full" and record["trust_reasons"] == []
    assert record["shield"] == "open"
    assert all(r["candidates"] == [[]] * 4 for r in record["rows"])
    assert all(r["black_bounds"] is None and r["white_bounds"] is None for r in record["rows"])


def test_read_human_and_debug_with_temporal_filter(calibrated, tmp_path, capsys):
    images, _, cal = calibrated
    debug = tmp_path / "debug.png"
    # Three frames of the same board: the temporal filter accepts it.
    assert main(["read", images[1], images[1], images[1], "--calibration", str(cal), "--debug", str(debug)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("board invicta-12x4 (markers)")
    assert "row  1:" in out and "keys" in out and "UNKNOWN" not in out
    assert "found by markers" in out and "px/mm" in out and "trust full" in out
    img = cv2.imread(str(debug))
    assert img is not None and img.shape == (720, 1280, 3)


def test_read_two_different_frames_is_not_accepted_yet(calibrated, capsys):
    images, _, cal = calibrated
    assert main(["read", images[0], images[1], "--calibration", str(cal), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    # Every row changed between the two frames: seen as motion, nothing accepted.
    assert record["rows"]
    assert all(r["status"] in ("unknown", "occluded") for r in record["rows"])


def test_one_truth_for_all_images(files, tmp_path):
    images, truths, _ = files
    out = tmp_path / "one.json"
    assert main(["calibrate", images[0], images[0], "--truth", truths[0], "-o", str(out)]) == 0
    assert out.is_file()


def _fails(args, capsys, *needles):
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    for n in needles:
        assert n in err, err
    assert "Traceback" not in err


def test_missing_image(files, tmp_path, capsys):
    _, truths, _ = files
    _fails(["calibrate", str(tmp_path / "nope.png"), "--truth", truths[0], "-o", str(tmp_path / "c.json")], capsys, "nope.png", "not found")


def test_unreadable_image(files, tmp_path, capsys):
    _, truths, _ = files
    bad = tmp_path / "bad.png"
    bad.write_text("this is not an image")
    _fails(["calibrate", str(bad), "--truth", truths[0], "-o", str(tmp_path / "c.json")], capsys, "bad.png", "not a readable image")


def test_truth_length_mismatch(files, tmp_path, capsys):
    images, truths, _ = files
    rec = json.loads(Path(truths[0]).read_text())
    rec["rows"][1]["guess"].append("red")
    t = tmp_path / "t.json"
    t.write_text(json.dumps(rec))
    _fails(["calibrate", images[0], "--truth", str(t), "-o", str(tmp_path / "c.json")], capsys, "rows[1].guess", "5 colours")


def test_truth_count_mismatch(files, tmp_path, capsys):
    images, truths, _ = files
    _fails(["calibrate", *images, "--truth", truths[0], "--truth", truths[1], "-o", str(tmp_path / "c.json")], capsys, "--truth given 2 times for 3 images")


def test_bad_corners(files, tmp_path, capsys):
    images, truths, _ = files
    _fails(["calibrate", images[0], "--truth", truths[0], "--corners", "1,2,3", "-o", str(tmp_path / "c.json")], capsys, "--corners", "8 numbers")


def test_bad_calibration_json(calibrated, tmp_path, capsys):
    images, _, _ = calibrated
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    _fails(["read", images[0], "--calibration", str(bad)], capsys, "bad.json", "not valid JSON")


def test_unknown_profile(files, tmp_path, capsys):
    images, truths, _ = files
    _fails(["calibrate", images[0], "--truth", truths[0], "--profile", "nosuch", "-o", str(tmp_path / "c.json")], capsys, "nosuch")


def _hide_colour(truth_path, colour, out_path):
    """The truth with every ``colour`` peg said to be unknown (not learned from)."""
    record = json.loads(Path(truth_path).read_text())
    for row in record["rows"]:
        row["guess"] = ["unknown" if c == colour else c for c in row["guess"]]
    if record.get("secret"):
        record["secret"] = ["unknown" if c == colour else c for c in record["secret"]]
    Path(out_path).write_text(json.dumps(record))
    return str(out_path)


def test_calibrate_warns_of_colours_not_seen_and_base_adds_them(files, capsys):
    images, truths, tmp = files
    hidden = [_hide_colour(t, "purple", tmp / f"hidden{i}.json") for i, t in enumerate(truths)]
    first = tmp / "first.json"
    args = ["calibrate", *images, "-o", str(first)]
    for t in hidden:
        args += ["--truth", t]
    assert main(args) == 0
    out = capsys.readouterr().out
    learned = out.splitlines()[0].split(": ", 1)[1]
    assert "purple" not in learned
    assert "trust: low" in out
    assert "WARNING: colours not learned yet: purple" in out
    # The same photos with the whole truth, on top of the first: every colour.
    full = tmp / "full.json"
    args = ["calibrate", *images, "--base", str(first), "-o", str(full)]
    for t in truths:
        args += ["--truth", t]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "purple" in out.splitlines()[0]
    assert "trust: full" in out and "WARNING" not in out


def test_calibrate_base_that_is_not_a_calibration(files, tmp_path, capsys):
    images, truths, _ = files
    bad = tmp_path / "base.json"
    bad.write_text("[1, 2]")
    _fails(["calibrate", images[0], "--truth", truths[0], "--base", str(bad), "-o", str(tmp_path / "x.json")],
           capsys, "base.json")
