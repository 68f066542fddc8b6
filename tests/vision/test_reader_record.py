"""BoardReading <-> game-record JSON."""

from __future__ import annotations

import json

import pytest

from vision.reading import BoardReading, ReadingRecordError

TRUTH = {
    "rules": "mso",
    "secret": ["red", "green", "blue", "yellow"],
    "rows": [
        {"guess": ["red", "red", "green", "green"], "black": 1, "white": 1},
        {"guess": ["red", "green", "blue", "yellow"], "black": 4, "white": 0},
    ],
    "timeout": None,
}


def test_parse_truth_and_roundtrip():
    b = BoardReading.from_record(TRUTH, board_rows=12, keys_per_row=4)
    assert len(b.rows) == 12
    assert b.row(1).guess == ("red", "red", "green", "green")
    assert b.row(2).keys.black == 4
    assert b.row(3).status == "empty"
    assert b.secret is not None and b.secret[3].colour == "yellow"
    rec = json.loads(json.dumps(b.to_record()))
    assert rec["rows"][0]["guess"] == TRUTH["rows"][0]["guess"]
    assert len(rec["rows"]) == 2
    again = BoardReading.from_record(rec, keys_per_row=4)
    assert again.rows == b.rows and again.secret == b.secret


@pytest.mark.parametrize(
    ("record", "match"),
    [
        ({"rows": 3}, "'rows' must be a list"),
        ({"rows": [{"guess": "red"}]}, r"rows\[0\].guess"),
        ({"rows": [{"guess": ["red", "blue", "green"]}]}, "3 colours, the board has 4"),
        ({"rows": [{"guess": ["red"] * 4, "black": -1}]}, r"rows\[0\].black"),
        ({"rows": [{"guess": ["red"] * 4, "black": 3, "white": 2}]}, "exceeds"),
        ({"rows": [], "secret": ["red"]}, "secret"),
    ],
)
def test_bad_records_name_the_place(record, match):
    with pytest.raises(ReadingRecordError, match=match):
        BoardReading.from_record(record, holes=4, board_rows=12, keys_per_row=4, where="t.json")
