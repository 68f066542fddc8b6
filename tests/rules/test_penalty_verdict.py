"""Penalties in ``pegwatch judge``'s verdict (issue 15 §5, seed 004 §5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pegwatch.device.cli import main
from pegwatch.rules.codes import score

SECRET1 = ["red", "green", "blue", "yellow"]
SECRET2 = ["white", "black", "red", "green"]


def game(secret: list[str], guesses: list[list[str]]) -> dict[str, object]:
    rows = []
    for guess in guesses:
        fb = score(tuple(guess), tuple(secret))
        rows.append({"guess": guess, "black": fb.black, "white": fb.white})
    return {"secret": secret, "rows": rows, "timeout": None}


def match(**extra: object) -> dict[str, object]:
    # Game 1: Ann sets, Bob breaks in 2; game 2: Bob sets, Ann breaks in 3. Bob wins.
    g1 = game(SECRET1, [["red", "red", "blue", "blue"], SECRET1])
    g2 = game(SECRET2, [["red", "red", "red", "red"], ["white", "white", "black", "black"], SECRET2])
    return {"rules": "mso", "players": ["Ann", "Bob"], "games": [g1, g2], **extra}


def judge(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: object, *flags: str) -> str:
    path = tmp_path / "match.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert main(["judge", str(path), *flags]) == 0
    return capsys.readouterr().out


def test_no_penalties_no_new_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = json.loads(judge(tmp_path, capsys, match(), "--json"))
    assert out["vp"] == {"Ann": 0.0, "Bob": 1.0}
    assert "penalties" not in out and "docked_vp" not in out


def test_points_docked_come_off_the_vp(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    given = [
        {"kind": "warning", "player": "Ann", "game": 1, "by": "arbiter", "why": "talking"},
        {"kind": "points", "player": "Bob", "game": 2, "points": 10, "by": "arbiter", "why": "late"},
        {"kind": "time", "player": "Ann", "game": 2, "time_ns": 120_000_000_000},
    ]
    out = json.loads(judge(tmp_path, capsys, match(penalties=given), "--json"))
    assert out["vp"] == {"Ann": 0.0, "Bob": -9.0}
    assert out["docked_vp"] == {"Ann": 0.0, "Bob": 10.0}
    assert out["penalties"][1]["why"] == "late" and len(out["penalties"]) == 3
    assert out["attempts"] == {"Ann": 3, "Bob": 2}  # as played
    text = judge(tmp_path, capsys, match(penalties=given))
    assert "Bob: 2 attempts, -9 VP, 10 VP docked by the arbiter" in text
    assert "penalty: game 2: Bob: 10 VP docked, by the arbiter (late)" in text
    assert "penalty: game 1: Ann: warning, by the arbiter (talking)" in text


def test_a_game_lost_by_penalty_is_its_losers_worst_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Bob broke game 1 in 2 and loses it by penalty: 13 attempts; Ann's 3 win.
    lost = [{"kind": "loss", "player": "Bob", "game": 1, "why": "phone rang"}]
    out = json.loads(judge(tmp_path, capsys, match(penalties=lost), "--json"))
    assert out["vp"] == {"Ann": 1.0, "Bob": 0.0}
    assert out["games_lost"] == {"1": "Bob"}
    # Bob as codemaker of game 2 loses it: Ann is credited with 1 attempt.
    lost = [{"kind": "loss", "player": "Bob", "game": 2}]
    out = json.loads(judge(tmp_path, capsys, match(penalties=lost), "--json"))
    assert out["vp"] == {"Ann": 1.0, "Bob": 0.0}
    text = judge(tmp_path, capsys, match(penalties=lost))
    assert "game 2 lost by Bob by penalty" in text


def test_penalties_in_the_games_of_a_match_count_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = match()
    data["games"][1]["penalties"] = [{"kind": "points", "player": "Bob", "game": 2, "points": 0.5}]  # type: ignore[index]
    out = json.loads(judge(tmp_path, capsys, data, "--json"))
    assert out["vp"] == {"Ann": 0.0, "Bob": 0.5}


def test_a_game_record_lists_its_penalties(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    g = {"rules": "mso", **game(SECRET1, [SECRET1]),
         "penalties": [{"kind": "warning", "player": "Bob", "game": 1}]}
    out = json.loads(judge(tmp_path, capsys, g, "--json"))
    assert out["penalties"] == [{"kind": "warning", "player": "Bob", "by": "arbiter", "why": "", "game": 1}]


def test_a_bad_penalty_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "match.json"
    path.write_text(json.dumps(match(penalties=[{"kind": "points", "player": "Bob"}])), encoding="utf-8")
    assert main(["judge", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert "match.json: penalties[0]: penalty points: a points penalty needs points > 0, got None" in err
