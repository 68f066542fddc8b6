"""Bad input, everywhere, as a property (issue 12).

For every kind of file pegwatch reads, valid examples are mutated in
structure and in value, and the real CLI is run on them in-process: the
answer is exit status 2 with exactly one stderr line naming the file (and,
for a changed type, the key), or 0 when the mutation happens to stay valid;
never a traceback or a hang. One subprocess test per kind runs the installed
``pegwatch`` script on one damaged file.

``PEGWATCH_FUZZ_EXAMPLES=2000`` runs 2000 inputs per kind instead of the
quick default.
"""

from __future__ import annotations

import json
import sqlite3
import tomllib
from pathlib import Path
from typing import Any

import pytest
from edges_kit import (
    RAW_JSON,
    apply_damage,
    check_outcome,
    count,
    damage,
    dump_json,
    dump_toml,
    fuzz_settings,
    mutated,
    run_cli,
    smoke,
)
from hypothesis import given
from hypothesis import strategies as st

from pegwatch.device.table import run as table_run

ROOT = Path(__file__).resolve().parents[2]
RECORDS = [json.loads(p.read_text()) for p in sorted((ROOT / "examples").glob("*.json"))]
CONFIG = tomllib.loads((ROOT / "firmware_config" / "pegwatch.toml").read_text())
PROFILES = [
    tomllib.loads(p.read_text()) for p in sorted((ROOT / "firmware_config" / "boards").glob("*.toml"))
]


# --- game and match records: pegwatch judge -------------------------------------------


@fuzz_settings(60)
@given(case=mutated(RECORDS, "json"), as_json=st.booleans())
def test_judge_any_record(case, as_json, tmp_path, capsys):
    blob, m = case
    path = tmp_path / "edge-record.json"
    path.write_bytes(blob)
    count("records (pegwatch judge)")
    status, out, err = run_cli(["judge", str(path), *(["--json"] if as_json else [])], capsys)
    check_outcome(status, out, err, str(path), field=m.field)


@pytest.mark.parametrize(
    ("record", "where"),
    [
        ({"rules": "mso", "rows": [{"guess": ["d", "g", "e", "w"], "white": []}]}, "rows[0]"),
        ({"rules": "mso", "rows": [{"guess": ["d", "g", "e", "w"], "black": {}, "white": 1}]}, "rows[0]"),
        ({"rules": "mso", "rows": [], "timeout": ["codemaker"]}, "timeout"),
    ],
)
def test_judge_unhashable_marks(record, where, tmp_path, capsys):
    path = tmp_path / "g.json"
    path.write_text(json.dumps(record))
    status, out, err = run_cli(["judge", str(path)], capsys)
    assert status == 2
    check_outcome(status, out, err, str(path), field=where)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('{"rules": "mso", "rows": [{"guess": ["a","b","c","d"], "black": ' + "9" * 5000 + ', "white": 0}]}',
         "rows[0].black: the integer of 5000 digits is too large"),
        ("[" * 5000 + "]" * 5000, "nested more than 64 levels"),
        ('{"rules": "mso", "rows": [], "x": NaN}', "x: NaN is not a JSON number"),
        ('{"rules": "mso", "rows": [], "x": 1e999}', "x: the number 1e999 is too large"),
        ('{"rules": "mso", "rows": [], "x": "\\ud800"}', "unpaired surrogate"),
    ],
)
def test_judge_raw_tokens(text, needle, tmp_path, capsys):
    path = tmp_path / "g.json"
    path.write_text(text)
    status, out, err = run_cli(["judge", str(path)], capsys)
    assert status == 2 and needle in err, err
    check_outcome(status, out, err, str(path))


def test_judge_refuses_a_huge_record_before_parsing(tmp_path, capsys):
    path = tmp_path / "big.json"
    path.write_bytes(b" " * (10 * 1024 * 1024 + 1))
    status, out, err = run_cli(["judge", str(path)], capsys)
    assert status == 2 and "the limit is 10 MiB" in err
    check_outcome(status, out, err, str(path))


def test_judge_smoke(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"rules": "mso", "rows": ' + "[" * 3000 + "]" * 3000 + "}")
    smoke(["judge", path.name], path.name, tmp_path)


# --- the table configuration ---------------------------------------------------------


@pytest.fixture
def config_only(monkeypatch):
    """``pegwatch run --config F`` that stops once the configuration is loaded and checked."""
    from pegwatch.device.table.config import load_config

    def loaded(config=None, **_: Any) -> int:
        load_config(config)
        return 0

    monkeypatch.setattr(table_run, "run_table", loaded)


@fuzz_settings(60)
@given(case=mutated([CONFIG], "toml"))
def test_run_any_config(case, config_only, tmp_path, capsys):
    blob, m = case
    path = tmp_path / "edge-config.toml"
    path.write_bytes(blob)
    count("table configurations (pegwatch run --config)")
    status, out, err = run_cli(["run", "--config", str(path)], capsys)
    check_outcome(status, out, err, str(path), field=m.field)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[camera]\nfps = " + "9" * 5000 + "\n", "an integer is too large"),
        ("[camera]\nfps = " + "9" * 30 + "\n", "camera.fps: the integer is too large"),
        ("[camera]\nfps = 1e999\n", "camera.fps: inf is out of range"),
        ("[camera]\nfps = nan\n", "camera.fps: nan is not a number"),
        ("[vision]\nmotion_threshold = 9223372036854775807\n", "vision.motion_threshold: 9.22337e+18 is out of range"),
        ("x = " + "[" * 3000 + "]" * 3000 + "\n", "nested more than 64 levels"),
    ],
)
def test_config_numbers(text, needle, config_only, tmp_path, capsys):
    path = tmp_path / "c.toml"
    path.write_text(text)
    status, out, err = run_cli(["run", "--config", str(path)], capsys)
    assert status == 2 and needle in err, err
    check_outcome(status, out, err, str(path))


def test_config_smoke(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_bytes(b"[camera]\nfps = \xff\n")
    line = smoke(["run", "--config", path.name, "--journal", "j.sqlite"], path.name, tmp_path)
    assert "not UTF-8" in line


# --- board profiles: pegwatch markers --profile ---------------------------------------------


@fuzz_settings(60)
@given(case=mutated(PROFILES, "toml"))
def test_markers_any_profile(case, tmp_path, capsys):
    blob, m = case
    path = tmp_path / "edge-profile.toml"
    path.write_bytes(blob)
    count("board profiles (pegwatch markers --profile)")
    status, out, err = run_cli(
        ["markers", "--profile", str(path), "-o", str(tmp_path / "sheet.png"), "--dpi", "72"], capsys
    )
    check_outcome(status, out, err, str(path), field=m.field)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda p: p | {"size_mm": [1e308, 80.0]}, "size_mm"),
        (lambda p: p | {"size_mm": [10**18, 80]}, "size_mm"),
        (lambda p: p | {"code_hole_diameter_mm": float("inf")}, "code_hole_diameter_mm"),
        (lambda p: p | {"aruco_dictionary": "DICT_NOPE"}, "aruco_dictionary"),
        (lambda p: p | {"markers": [{"id": 999, "centre_mm": [0, 0], "size_mm": 20.0}]}, "markers[0].id"),
        (lambda p: p | {"markers": [{"id": 1, "centre_mm": [0, 0], "size_mm": 0.01}]}, "markers[0].size_mm"),
        (lambda p: p | {"markers": []}, "markers"),
    ],
)
def test_markers_errors_name_the_profile(change, needle, tmp_path, capsys):
    path = tmp_path / "mine.toml"
    path.write_text(dump_toml(change(dict(PROFILES[0]))))
    status, out, err = run_cli(["markers", "--profile", str(path), "-o", str(tmp_path / "s.png")], capsys)
    assert status == 2, err
    check_outcome(status, out, err, str(path), field=needle)


def test_profile_not_utf8(tmp_path, capsys):
    path = tmp_path / "latin1.toml"
    path.write_bytes(dump_toml(PROFILES[0]).replace("Invicta", "Invicta \xe9").encode("latin-1"))
    status, out, err = run_cli(["markers", "--profile", str(path), "-o", str(tmp_path / "s.png")], capsys)
    assert status == 2 and "not UTF-8" in err
    check_outcome(status, out, err, str(path))


def test_profile_smoke(tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text(dump_toml(PROFILES[0]) + "x = " + "[" * 2000 + "]" * 2000 + "\n")
    smoke(["markers", "--profile", path.name, "-o", "s.png"], path.name, tmp_path)


# --- calibrations and truth files: pegwatch read / calibrate -----------------------------


@fuzz_settings(40)
@given(data=st.data())
def test_read_any_calibration(data, rendered, tmp_path, capsys):
    blob, _ = data.draw(mutated([rendered["calibration_data"]], "json"))
    path = tmp_path / "edge-cal.json"
    path.write_bytes(blob)
    count("calibrations (pegwatch read --calibration)")
    status, out, err = run_cli(["read", rendered["images"][0], "--calibration", str(path)], capsys)
    check_outcome(status, out, err, str(path), problem_ok=True)


@fuzz_settings(15)
@given(data=st.data())
def test_calibrate_any_truth(data, rendered, tmp_path, capsys):
    blob, _ = data.draw(mutated([rendered["truth_records"][0]], "json"))
    path = tmp_path / "edge-truth.json"
    path.write_bytes(blob)
    count("truth records (pegwatch calibrate --truth)")
    status, out, err = run_cli(
        ["calibrate", rendered["images"][0], "--truth", str(path), "-o", str(tmp_path / "c.json")],
        capsys,
        seconds=60,
    )
    if status == 2 and "board not found" in err:
        return  # a valid truth, but the photo: names the image, not the truth
    check_outcome(status, out, err, str(path))


def test_calibration_smoke(rendered, tmp_path):
    data = json.loads(json.dumps(rendered["calibration_data"]))
    data["code_model"]["classes"][0]["mean_lab"][0] = MARK_HUGE
    text = json.dumps(data).replace(json.dumps(MARK_HUGE), RAW_JSON["huge-int"](5000))
    path = tmp_path / "cal.json"
    path.write_text(text)
    line = smoke(["read", rendered["images"][0], "--calibration", path.name], path.name, tmp_path)
    assert "code_model.classes[0].mean_lab[0]" in line


MARK_HUGE = "@@HUGE@@"


def test_truth_smoke(rendered, tmp_path):
    path = tmp_path / "truth.json"
    path.write_bytes(b'{"rules": "mso", "rows": [\xff]}')
    smoke(["calibrate", rendered["images"][0], "--truth", path.name, "-o", "c.json"], path.name, tmp_path)


# --- journals: pegwatch replay / export ----------------------------------------------------


@fuzz_settings(40)
@given(recipe=damage(), command=st.sampled_from(["replay", "export"]))
def test_any_journal(recipe, command, journal_file, tmp_path, capsys):
    blob = apply_damage(journal_file.read_bytes(), recipe)
    path = tmp_path / "edge-journal.sqlite"
    for extra in ("-wal", "-shm"):
        Path(str(path) + extra).unlink(missing_ok=True)
    path.write_bytes(blob)
    count("journals (pegwatch replay / export)")
    argv = [command, str(path)] + (["-o", str(tmp_path / "out")] if command == "export" else [])
    status, out, err = run_cli(argv, capsys)
    if status == 1 and ("verdicts differ" in err or "no finished game" in err):
        assert len(err.splitlines()) == 1 and str(path) in err
        return
    check_outcome(status, out, err, str(path))


def test_foreign_sqlite_file(tmp_path, capsys):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE birds (name TEXT)")
    db.close()
    for command in ("replay", "export"):
        status, out, err = run_cli([command, str(path)], capsys)
        assert status == 2 and "not a pegwatch journal" in err
        check_outcome(status, out, err, str(path))


def test_journal_smoke(journal_file, tmp_path):
    path = tmp_path / "half.sqlite"
    path.write_bytes(journal_file.read_bytes()[:5000])
    smoke(["replay", path.name], path.name, tmp_path)


# --- images: pegwatch read / calibrate -----------------------------------------------------------


@fuzz_settings(40)
@given(recipe=damage(), kind=st.sampled_from(["png", "jpg"]))
def test_read_any_image(recipe, kind, rendered, tmp_path, capsys):
    source = rendered["images"][0] if kind == "png" else rendered["jpeg"]
    blob = apply_damage(Path(source).read_bytes(), recipe)
    path = tmp_path / f"edge-image.{kind}"
    path.write_bytes(blob)
    count("images (pegwatch read)")
    status, out, err = run_cli(["read", str(path), "--calibration", rendered["calibration"]], capsys)
    check_outcome(status, out, err, str(path), problem_ok=True)


def _png_header(width: int, height: int) -> bytes:
    import struct
    import zlib

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    head = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
    idat = b"IDAT" + zlib.compress(b"\x00" * 64)
    return head + struct.pack(">I", len(idat) - 4) + idat + struct.pack(">I", zlib.crc32(idat))


@pytest.mark.parametrize(
    ("blob", "needle"),
    [
        (b"", "empty file"),
        (b"this is not an image", "not a readable image"),
        (_png_header(100_000, 100_000), "too large for an image"),
        (_png_header(8000, 8000), "8000x8000 pixels is too large for an image"),
    ],
)
def test_image_faults(blob, needle, rendered, tmp_path, capsys):
    path = tmp_path / "photo.png"
    path.write_bytes(blob)
    status, out, err = run_cli(["read", str(path), "--calibration", rendered["calibration"]], capsys)
    assert status == 2 and needle in err, err
    check_outcome(status, out, err, str(path))


def test_image_smoke(rendered, tmp_path):
    path = tmp_path / "cut.jpg"
    path.write_bytes(Path(rendered["jpeg"]).read_bytes()[:20000])
    smoke(["read", path.name, "--calibration", rendered["calibration"]], path.name, tmp_path)


def test_dump_helpers_round_trip():
    assert tomllib.loads(dump_toml(PROFILES[0])) == PROFILES[0]
    assert json.loads(dump_json(RECORDS[0])) == RECORDS[0]
