"""Key pegs the camera could not count are never judged (principle: never accuse on a guess)."""

import json

import pytest

from pegwatch.device.cli import main
from pegwatch.rules.judge import judge_game
from pegwatch.rules.record import RecordError, parse_record

SECRET = ["red", "red", "yellow", "blue"]
GUESS = ["red", "green", "blue", "yellow"]  # scores 1 black 2 white against SECRET


def game(first_row_marks):
    black, white = first_row_marks
    return {
        "rules": "mso",
        "secret": SECRET,
        "rows": [
            {"guess": GUESS, "black": black, "white": white},
            {"guess": ["green"] * 4, "black": 0, "white": 0},
        ],
    }


@pytest.mark.parametrize("why", ["unknown", "occluded"])
def test_unread_marks_on_a_middle_row_are_not_judged(why):
    """A row whose key pegs were not counted stands in the record but is never
    called mis-marked: "A row is mis-marked when its marks differ from
    score(secret, guess)" needs marks to compare."""
    record = parse_record(game((why, why)))
    row = record.rows[0]
    assert row.marks is None and row.marks_unread == why and not row.is_read
    verdict = judge_game(record)
    assert verdict.mismarked_row is None
    assert verdict.unread_rows == (1,)


def test_a_read_mis_mark_after_an_unread_row_is_still_caught():
    data = game(("unknown", "unknown"))
    data["rows"][1]["black"] = 1  # green x4 scores 0 0 against the secret
    verdict = judge_game(parse_record(data))
    assert verdict.mismarked_row == 2


def test_unread_marks_round_trip():
    record = parse_record(game(("occluded", "occluded")))
    again = parse_record(record.to_json())
    assert again == record
    assert again.rows[0].marks_unread == "occluded"


def test_half_unread_marks_are_a_record_error():
    with pytest.raises(RecordError, match=r'rows\[0\]: black "unknown" and white 2'):
        parse_record(game(("unknown", 2)))


def test_judge_cli_shows_unread_marks(tmp_path, capsys):
    path = tmp_path / "g.json"
    path.write_text(json.dumps(game(("unknown", "unknown"))))
    assert main(["judge", str(path)]) == 0
    out = capsys.readouterr().out
    assert "marks unknown  not fully read: not judged" in out
    assert "MIS-MARKED" not in out.splitlines()[1]
