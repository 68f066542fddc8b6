"""``pegwatch judge``: verdicts for people and for programs, and bad input as
one line on stderr with exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pegwatch.device.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["judge", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def write(tmp_path: Path, data: object, name: str = "game.json") -> str:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=1))
    return str(path)


def test_sample_game_json(capsys: pytest.CaptureFixture[str]) -> None:
    """Seed 000: "Codemaker incorrectly marks line 3. Codebreaker is credited
    with having solved the code in four attempts." """
    status, out, err = run(capsys, str(EXAMPLES / "sample-game.json"), "--json")
    assert status == 0 and err == ""
    verdict = json.loads(out)
    assert verdict["attempts"] == 4
    assert verdict["solved"] is True
    assert verdict["mismarked_row"] == 3
    assert verdict["codemaker_penalty_vp"] == 0


def test_sample_game_for_a_person(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, str(EXAMPLES / "sample-game.json"))
    assert status == 0
    assert "row  3" in out and "MIS-MARKED (should be 3 black 0 white)" in out
    assert "verdict: 4 attempts; row 3 incorrectly marked" in out


def test_sample_match_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, str(EXAMPLES / "sample-match.json"), "--json")
    assert status == 0
    verdict = json.loads(out)
    assert set(verdict["vp"]) == set(verdict["attempts"]) == {"Alice", "Bob"}
    assert sum(verdict["vp"].values()) in (0.0, 1.0)
    assert len(verdict["games"]) == 2


def test_match_with_penalty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Seed 000: "the Codemaker is penalized by ½ VP", taken from the
    codemaker who earned it."""
    code = ["red", "red", "yellow", "blue"]
    game1 = {"secret": code, "rows": [{"guess": code, "black": 3, "white": 0}]}
    game2 = {"secret": code, "rows": [
        {"guess": ["red", "red", "yellow", "black"], "black": 3, "white": 0},
        {"guess": code, "black": 4, "white": 0}]}
    path = write(tmp_path, {"rules": "mso", "players": ["A", "B"], "games": [game1, game2]})
    status, out, _ = run(capsys, path, "--json")
    verdict = json.loads(out)
    # B broke game 1 in 1 (A mis-marked the code: A loses ½); A broke game 2 in 2.
    assert verdict["attempts"] == {"A": 2, "B": 1}
    assert verdict["vp"] == {"A": -0.5, "B": 1.0}
    status, text, _ = run(capsys, path)
    assert status == 0
    assert "A: 2 attempts, -0.5 VP (after a 0.5 VP penalty)" in text


def test_hidden_secret_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, str(EXAMPLES / "hidden-secret.json"), "--json")
    assert status == 0
    verdict = json.loads(out)
    assert verdict["mismarked_row"] is None
    assert verdict["consistent"] == 0 and verdict["suspect_rows"]


def test_home_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, str(EXAMPLES / "hasbro-game.json"), "--json")
    assert status == 0
    verdict = json.loads(out)
    assert (verdict["replay"], verdict["decoder_bonus_points"], verdict["codemaker_points"]) == (
        True, 3, 0,
    )


def test_custom_presets_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    presets = tmp_path / "club.toml"
    presets.write_text('[club]\ncolours = 6\nholes = 3\nrows = 8\nscoring = "mso"\n')
    path = write(tmp_path, {"rules": "club", "secret": ["a", "b", "c"],
                            "rows": [{"guess": ["a", "b", "c"], "black": 3, "white": 0}]})
    status, out, _ = run(capsys, path, "--json", "--variants", str(presets))
    assert status == 0 and json.loads(out)["attempts"] == 1


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"rules": "mso",\n "secret": [}', "game.json:2:13: malformed JSON"),
        ({"rules": "nope", "secret": None, "rows": []}, "known presets: hasbro, hasbro-advanced, lego"),
        ({"rules": "mso", "secret": ["red"] * 5, "rows": []}, "secret: expected 4 pegs for mso, got 5"),
        ({"rules": "mso", "players": ["A", "B"], "games": [
            {"secret": None, "rows": []},
            {"secret": None, "rows": [{"guess": ["red"] * 4, "black": 0, "white": 0}] * 3
             + [{"guess": ["red"] * 4, "black": "two", "white": 0}]}]},
         'games[1].rows[3].black: expected an integer 0..4, got "two"'),
    ],
)
def test_bad_input_is_one_line_and_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: object, expected: str
) -> None:
    path = write(tmp_path, content)
    status, out, err = run(capsys, path)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"pegwatch judge: {path}")
    assert expected in err


def test_missing_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, str(tmp_path / "absent.json"))
    assert status == 2 and err.count("\n") == 1 and "absent.json" in err


def test_bad_presets_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    presets = tmp_path / "club.toml"
    presets.write_text('[club]\ncolours = "six"\nholes = 3\nrows = 8\nscoring = "mso"\n')
    status, _, err = run(capsys, str(EXAMPLES / "sample-game.json"), "--variants", str(presets))
    assert status == 2 and err.count("\n") == 1
    assert "[club].colours: expected an integer" in err


def test_binary_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "photo.json"
    path.write_bytes(b"\xff\xd8\xff\xe0 not json")
    status, _, err = run(capsys, str(path))
    assert status == 2 and err.count("\n") == 1 and "not UTF-8" in err


def test_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO((EXAMPLES / "sample-game.json").read_text()))
    status, out, _ = run(capsys, "-", "--json")
    assert status == 0 and json.loads(out)["attempts"] == 4


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.json")))
def test_every_example_is_judged(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, str(EXAMPLES / name), "--json")
    assert status == 0 and err == ""
    verdict = json.loads(out)
    assert "vp" in verdict or "attempts" in verdict


def test_penalty_match_example(capsys: pytest.CaptureFixture[str]) -> None:
    """Seed 000: "the Codebreaker is credited with the correct number of
    attempts and the Codemaker is penalized by ½ VP"."""
    status, out, _ = run(capsys, str(EXAMPLES / "penalty-match.json"), "--json")
    verdict = json.loads(out)
    assert status == 0
    assert verdict["attempts"] == {"Carol": 4, "Dave": 2}
    assert verdict["vp"] == {"Carol": -0.5, "Dave": 1.0}
    assert verdict["codemakers"] == ["Carol", "Dave"]
