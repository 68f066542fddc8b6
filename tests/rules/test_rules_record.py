"""Records: parse(format(x)) == x, extra keys kept, and one clear line with a
location for every kind of bad input."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pegwatch.rules.codes import Feedback
from pegwatch.rules.record import (
    GameRecord,
    MatchRecord,
    RecordError,
    Role,
    Row,
    load_record,
    parse_record,
)
from pegwatch.rules.variants import get_variant

GAME = {
    "rules": "mso",
    "secret": ["red", "red", "yellow", "blue"],
    "rows": [
        {"guess": ["red", "green", "blue", "yellow"], "black": 1, "white": 2,
         "confidence": [0.9, 0.8, 0.95, 0.7]},
        {"guess": ["red", "red", "orange", "orange"]},
    ],
    "timeout": None,
    "table": 7,
}


def test_game_parses_and_keeps_extra_keys() -> None:
    rec = parse_record(GAME)
    assert isinstance(rec, GameRecord)
    assert rec.secret == ("red", "red", "yellow", "blue")
    assert rec.rows[0].marks == Feedback(1, 2)
    assert rec.rows[1].marks is None
    assert rec.rows[0].extra == {"confidence": [0.9, 0.8, 0.95, 0.7]}
    assert rec.extra == {"table": 7}
    out = rec.to_json()
    assert out["table"] == 7 and out["rows"][0]["confidence"] == [0.9, 0.8, 0.95, 0.7]
    assert parse_record(out) == rec
    assert hash(rec) == hash(parse_record(json.loads(json.dumps(out))))


def test_match_round_trips_and_inherits_rules() -> None:
    data = {"rules": "mso", "players": ["A", "B"], "games": [
        {"secret": None, "rows": [], "timeout": "codebreaker"},
        {"rules": "mso", "secret": ["red"] * 4, "rows": [{"guess": ["red"] * 4, "black": 4, "white": 0}]},
    ]}
    rec = parse_record(data)
    assert isinstance(rec, MatchRecord)
    assert rec.games[0].timeout is Role.CODEBREAKER and rec.games[0].rules == "mso"
    assert (rec.codemaker(0), rec.codebreaker(0), rec.codemaker(1)) == ("A", "B", "B")
    assert parse_record(rec.to_json()) == rec


colour = st.sampled_from(["red", "green", "blue", "yellow", "white", "black", "orange", "pink"])
code4 = st.lists(colour, min_size=4, max_size=4).map(tuple)
marks = st.tuples(st.integers(0, 4), st.integers(0, 4)).filter(lambda m: sum(m) <= 4).map(
    lambda m: Feedback(*m)
)


@settings(max_examples=50)
@given(
    st.one_of(st.none(), code4),
    st.lists(st.tuples(code4, marks), max_size=12),
    st.sampled_from([None, Role.CODEBREAKER]),
)
def test_parse_format_round_trip(secret, rows, timeout) -> None:  # type: ignore[no-untyped-def]
    rec = GameRecord("mso", secret, tuple(Row(g, m) for g, m in rows), timeout)
    assert parse_record(json.loads(json.dumps(rec.to_json()))) == rec


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({**GAME, "rules": "chess"}, "g.json: rules: unknown rules preset 'chess'; known presets: hasbro, "),
        ({**GAME, "secret": ["red"]}, "g.json: secret: expected 4 pegs for mso, got 1"),
        ({**GAME, "secret": "red"}, 'g.json: secret: expected a list of 4 colour names, got "red"'),
        ({**GAME, "rows": [{"guess": ["red"] * 4, "black": "two", "white": 0}]},
         'g.json: rows[0].black: expected an integer 0..4, got "two"'),
        ({**GAME, "rows": [{"guess": ["red"] * 4, "black": 3, "white": 2}]},
         "g.json: rows[0]: black 3 + white 2 exceeds the 4 holes of mso"),
        ({**GAME, "rows": [{"guess": ["red"] * 4, "black": 1}]},
         'g.json: rows[0]: "white" is missing'),
        ({**GAME, "rows": [{"guess": ["red"] * 4}, {"guess": ["red"] * 4}]},
         "g.json: rows[0]: only the last row may be unmarked"),
        ({**GAME, "rows": [{"guess": ["red", 3, "red", "red"], "black": 0, "white": 0}]},
         "g.json: rows[0].guess[1]: expected a colour name, got 3"),
        ({**GAME, "rows": [{"guess": ["red"] * 4, "black": 0, "white": 0}] * 13},
         "g.json: rows: 13 rows, but the mso board has 12"),
        ({**GAME, "timeout": "arbiter"},
         'g.json: timeout: expected null, "codebreaker" or "codemaker", got "arbiter"'),
        ({**GAME, "rows": [], "timeout": "codemaker"}, "g.json: timeout: the codemaker's clock"),
        ([1, 2], "g.json: expected an object, got [1, 2]"),
        ({"rows": []}, 'g.json: missing key "rules"'),
        ({"rules": "mso", "players": ["A"], "games": []}, "g.json: players: expected two player names"),
        ({"rules": "mso", "games": []}, 'g.json: a match needs "players"'),
        ({"rules": "mso", "players": ["A", "B"], "games": [GAME, GAME, GAME]},
         "g.json: games: 3 games, but a mso match has 2"),
        ({"rules": "mso", "players": ["A", "B"], "games": [
            GAME, {**GAME, "rows": [{"guess": ["red"] * 4, "black": 5, "white": 0}]}]},
         "g.json: games[1].rows[0].black: expected an integer 0..4, got 5"),
        ({"rules": "mso", "players": ["A", "B"], "games": [{**GAME, "rules": "lego"}]},
         'g.json: games[0].rules: "lego" differs from the match\'s "mso"'),
    ],
)
def test_bad_input_names_the_place(data: object, message: str) -> None:
    with pytest.raises(RecordError) as info:
        parse_record(data, source="g.json")
    text = str(info.value)
    assert text.startswith(message), text
    assert "\n" not in text


def test_malformed_json_gives_line_and_column() -> None:
    with pytest.raises(RecordError, match=r"^g\.json:3:5: malformed JSON: "):
        load_record('{\n "rules": "mso",\n    ]', source="g.json")


def test_custom_presets_are_accepted() -> None:
    big = get_variant("mso-5")
    rec = parse_record({"rules": "club", "secret": None, "rows": []},
                       variants={"club": big})
    assert rec.rules == "club"
