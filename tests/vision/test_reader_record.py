"""BoardReading <-> game-record JSON."""

from __future__ import annotations

import json

import pytest

from pegwatch.vision.reading import BoardReading, ReadingRecordError

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


def _reading(keys_last, keys_first=("ok", 1, 1)):
    from pegwatch.vision.reading import HoleReading, KeyReading, RowReading

    def row(n, colours, keys):
        status, black, white = keys
        return RowReading(
            row=n,
            holes=tuple(HoleReading(c, 0.99) for c in colours),
            keys=KeyReading(black, white, 4 - black - white, 0.9, status),
            status="ok" if status in ("ok", "empty") else status,
        )

    rows = (
        row(1, ("red", "green", "blue", "yellow"), keys_first),
        row(2, ("red", "yellow", "green", "green"), keys_last),
    )
    return BoardReading("invicta-12x4", rows, None, None, 0)


@pytest.mark.parametrize("status", ["unknown", "occluded"])
def test_uncounted_keys_never_reach_the_judge_as_numbers(status):
    """Never accuse on a guess: a key count the reader is unsure of is written
    as "unknown"/"occluded", which the judge does not judge."""
    from pegwatch.rules.judge import judge_game
    from pegwatch.rules.record import parse_record

    rec = _reading(("ok", 1, 1), keys_first=(status, 2, 0)).to_record()
    assert rec["rows"][0]["black"] == rec["rows"][0]["white"] == status
    rec["secret"] = ["red", "red", "yellow", "blue"]
    verdict = judge_game(parse_record(rec))
    assert verdict.mismarked_row is None and 1 in verdict.unread_rows
    again = BoardReading.from_record(rec)
    assert again.rows[0].keys.status == status and not again.rows[0].keys.is_certain


def test_bare_key_holes_on_the_last_row_read_as_unmarked():
    """A photo cannot tell "not marked yet" from "marked with no pegs" on the
    last row; unmarked is the reading that can never accuse."""
    rec = _reading(("empty", 0, 0)).to_record()
    assert rec["rows"][1]["black"] is None and rec["rows"][1]["white"] is None
    assert rec["rows"][0]["black"] == 1
    again = BoardReading.from_record(rec)
    assert (again.rows[1].keys.black, again.rows[1].keys.white) == (0, 0)


def test_the_readers_additions_round_trip_and_old_records_still_load():
    from pegwatch.vision.reading import HoleReading, KeyReading, RowReading

    holes = (
        HoleReading("red", 0.999),
        HoleReading("unknown", 0.4, (("orange", 0.6), ("yellow", 0.4))),
        HoleReading("occluded", 0.0),
        HoleReading("blue", 0.998),
    )
    keys = KeyReading(1, 0, 2, 0.5, "unknown", black_bounds=(1, 2), white_bounds=(0, 1))
    b = BoardReading(
        "invicta-12x4", (RowReading(1, holes, keys, "occluded"),), None, None, 7,
        trust="low", trust_reasons=("the board was found by best effort",), found_by="best-effort",
        px_per_mm=3.21, sharpness=0.55, shield="closed",
    )
    rec = json.loads(json.dumps(b.to_record()))
    row = rec["rows"][0]
    assert row["candidates"] == [[], [["orange", 0.6], ["yellow", 0.4]], [], []]
    assert row["black_bounds"] == [1, 2] and row["white_bounds"] == [0, 1]
    assert row["black"] == row["white"] == "unknown"  # the old keys keep their meaning
    assert (rec["found"], rec["found_by"], rec["trust"], rec["shield"]) == (True, "best-effort", "low", "closed")
    assert rec["px_per_mm"] == 3.21 and rec["sharpness"] == 0.55
    assert rec["trust_reasons"] == ["the board was found by best effort"]
    again = BoardReading.from_record(rec, keys_per_row=4)
    assert again.rows[0].holes[1].candidates == (("orange", 0.6), ("yellow", 0.4))
    assert again.rows[0].keys.black_bounds == (1, 2) and again.rows[0].keys.white_bounds == (0, 1)
    assert (again.trust, again.found_by, again.shield, again.px_per_mm) == ("low", "best-effort", "closed", 3.21)
    # A record from before these keys: full trust, nothing named.
    old = BoardReading.from_record(TRUTH, board_rows=12, keys_per_row=4)
    assert old.trust == "full" and old.found_by is None and old.px_per_mm is None
    assert all(h.candidates == () for r in old.rows for h in r.holes)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"candidates": [[["red", 2.0]], [], [], []]}, r"rows\[0\].candidates\[0\]"),
        ({"candidates": [[]]}, r"rows\[0\].candidates"),
        ({"black_bounds": [2, 1]}, r"rows\[0\].black_bounds"),
    ],
)
def test_bad_additions_name_the_place(change, match):
    rec = {"rows": [{"guess": ["red"] * 4, "black": 1, "white": 0, **change}]}
    with pytest.raises(ReadingRecordError, match=match):
        BoardReading.from_record(rec, holes=4, board_rows=12, keys_per_row=4, where="t.json")


def test_a_bad_trust_word_names_the_key():
    with pytest.raises(ReadingRecordError, match="trust"):
        BoardReading.from_record({**TRUTH, "trust": "total"}, board_rows=12, keys_per_row=4)
