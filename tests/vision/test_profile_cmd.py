"""``pegwatch profile`` from the shell: points files, --point, --click, and bad input."""

from __future__ import annotations

import csv
import json

import cv2
import numpy as np
import pytest

from pegwatch.device.cli import main
from pegwatch.vision.profile import load_profile

SCALE = 3.0
OFFSET = (40.0, 30.0)


def _rows() -> list[dict]:
    p = load_profile("invicta-12x4")
    out = []

    def px(mm):
        return round(mm[0] * SCALE + OFFSET[0], 2), round(mm[1] * SCALE + OFFSET[1], 2)

    for r in range(1, p.rows + 1):
        for j, c in enumerate(p.hole_centres_mm(r), 1):
            out.append({"kind": "code", "row": r, "index": j, "x": px(c)[0], "y": px(c)[1]})
    for k, c in enumerate(p.key_centres_mm(1), 1):
        out.append({"kind": "key", "row": 1, "index": k, "x": px(c)[0], "y": px(c)[1]})
    for j, c in enumerate(p.secret_centres_mm(), 1):
        out.append({"kind": "secret", "index": j, "x": px(c)[0], "y": px(c)[1]})
    return out


@pytest.fixture
def photo(tmp_path):
    path = tmp_path / "board.png"
    cv2.imwrite(str(path), np.full((400, 900, 3), 90, np.uint8))
    return str(path)


def _check_profile(path, capsys):
    out = capsys.readouterr().out
    assert "wrote" in out and "--corners" in out
    fitted = load_profile(str(path))
    shipped = load_profile("invicta-12x4")
    assert (fitted.rows, fitted.holes, fitted.key_layout) == (12, 4, "2x2")
    assert np.allclose(fitted.row_step_mm, shipped.row_step_mm, atol=0.05)
    assert np.allclose(np.subtract(fitted.key_offsets_mm, fitted.hole_offsets_mm[0]),
                       np.subtract(shipped.key_offsets_mm, shipped.hole_offsets_mm[0]), atol=0.05)


@pytest.mark.parametrize("fmt", ["json", "csv", "toml"])
def test_points_file_to_profile(fmt, photo, tmp_path, capsys):
    rows = _rows()
    src = tmp_path / f"points.{fmt}"
    if fmt == "json":
        src.write_text(json.dumps({"points": rows}))
    elif fmt == "csv":
        with src.open("w", newline="") as f:
            w = csv.DictWriter(f, ["kind", "row", "index", "x", "y"])
            w.writeheader()
            for r in rows:
                w.writerow({"row": "", **r})
    else:
        src.write_text("".join(
            "[[points]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in r.items()) for r in rows
        ))
    out = tmp_path / "mine.toml"
    assert main(["profile", photo, "--points", str(src), "--hole-pitch-mm", "9", "-o", str(out)]) == 0
    _check_profile(out, capsys)


def test_points_on_the_command_line_and_a_base(photo, tmp_path, capsys):
    specs = []
    for r in _rows():
        if r["kind"] == "code" and r["row"] in (1, 12):
            specs += ["--point", f"code:{r['row']}:{r['index']}={r['x']},{r['y']}"]
    out = tmp_path / "mine.toml"
    args = ["profile", photo, *specs, "--row-pitch-mm", "16", "--base", "invicta-12x4", "-o", str(out)]
    assert main(args) == 0
    _check_profile(out, capsys)


def test_click_without_a_display_is_one_line(photo, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    status = main(["profile", photo, "--click", "--base", "invicta-12x4", "-o", str(tmp_path / "x.toml")])
    err = capsys.readouterr().err.splitlines()
    assert status == 2 and len(err) == 1 and "no display" in err[0]
    assert not (tmp_path / "x.toml").exists()


def test_click_plan_asks_for_corners_keys_and_secret():
    from pegwatch.device.cli.profile_cmd import click_plan

    plan = click_plan(12, 4, 4)
    assert plan[:4] == [("code", 1, 1), ("code", 1, 4), ("code", 12, 1), ("code", 12, 4)]
    assert [p for p in plan if p[0] == "key"] == [("key", 1, k) for k in range(1, 5)]
    assert len([p for p in plan if p[0] == "secret"]) == 4


@pytest.mark.parametrize(
    ("content", "name", "match"),
    [
        ("{", "p.json", "p.json:.*not valid JSON"),
        ('{"points": [{"kind": "peg", "row": 1, "index": 1, "x": 1, "y": 2}]}', "p.json", r"p.json: points\[0\].kind"),
        ('{"points": [{"kind": "code", "row": 1, "index": 1, "x": "a", "y": 2}]}', "p.json", r"p.json: points\[0\].x"),
        ("a,b\n1,2\n", "p.csv", "p.csv: the header must name"),
        ("x = 1\n", "p.toml", "p.toml: expected a list"),
        ("", "p.txt", "p.txt: a points file is .json, .csv or .toml"),
        ('{"points": [[1, 2, 3]]}', "p.json", r"points\[0\]: a list point is"),
    ],
)
def test_bad_points_files_are_one_line_naming_the_file(photo, tmp_path, capsys, content, name, match):
    src = tmp_path / name
    src.write_text(content)
    status = main(["profile", photo, "--points", str(src), "--hole-pitch-mm", "9", "-o", str(tmp_path / "x.toml")])
    err = capsys.readouterr().err.splitlines()
    assert status == 2 and len(err) == 1, err
    import re

    assert re.search(match, err[0]), err[0]


def test_bad_fits_and_specs_are_one_line(photo, tmp_path, capsys):
    src = tmp_path / "p.json"
    src.write_text(json.dumps({"points": _rows()}))
    cases = [
        (["--points", str(src)], "p.json: the photo does not show the board's scale"),
        (["--point", "code:1=3,4"], "--point 'code:1=3,4': expected"),
        (["--points", str(tmp_path / "none.json")], "none.json: points file not found"),
        (["--points", str(src), "--hole-pitch-mm", "-3"], "--hole-pitch-mm: -3.0 is not a length"),
    ]
    for extra, match in cases:
        status = main(["profile", photo, *extra, "-o", str(tmp_path / "x.toml")])
        err = capsys.readouterr().err.splitlines()
        assert status == 2 and len(err) == 1 and match in err[0], (extra, err)
    far = [dict(r, x=r["x"] + 5000) if r.get("row") == 2 else r for r in _rows()]
    src.write_text(json.dumps(far))
    status = main(["profile", photo, "--points", str(src), "--hole-pitch-mm", "9", "-o", str(tmp_path / "x.toml")])
    err = capsys.readouterr().err.splitlines()
    assert status == 2 and "outside the 900x400 photo" in err[0] and photo in err[0]


def test_the_photo_index_with_a_base_profile(tmp_path, capsys):
    from pathlib import Path

    photos = Path(__file__).resolve().parents[3] / "shared" / "photos"
    photo = photos / "wilort__mastermind-solver" / "mastermind.jpg"
    base = photos / "profiles" / "wilort-10x4.toml"
    if not (photo.is_file() and base.is_file() and (photos / "index.json").is_file()):
        pytest.skip(f"the development photos are not at {photos}")
    out = tmp_path / "wilort-fit.toml"
    args = ["profile", str(photo), "--points", str(photos / "index.json"), "--base", str(base), "-o", str(out)]
    assert main(args) == 0
    assert "--corners" in capsys.readouterr().out
    fitted, wilort = load_profile(str(out)), load_profile(str(base))
    # The 18 hole centres measured by eye give the board's own pitches.
    assert np.hypot(*fitted.row_step_mm) == pytest.approx(14.0, abs=0.3)
    assert np.hypot(*np.subtract(fitted.hole_offsets_mm[3], fitted.hole_offsets_mm[0])) == pytest.approx(30.0, abs=0.6)
    assert fitted.key_layout == wilort.key_layout
    other = tmp_path / "other.png"
    cv2.imwrite(str(other), np.zeros((50, 50, 3), np.uint8))
    assert main(["profile", str(other), "--points", str(photos / "index.json"), "--base", str(base), "-o", str(out)]) == 2
    assert "a photo index with no entry for" in capsys.readouterr().err
