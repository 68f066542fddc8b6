"""Verdicts cross files (the journal, ``pegwatch judge --json``): from_json mirrors to_json."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from pegwatch.rules.codes import Feedback, score
from pegwatch.rules.flow import verdicts as v
from pegwatch.rules.judge import judge_game
from pegwatch.rules.record import GameRecord, Row
from pegwatch.rules.verdict import GameVerdict

COLOURS = ("red", "green", "blue", "yellow", "white", "black", "orange", "pink")
code = st.tuples(*[st.sampled_from(COLOURS)] * 4)
names = st.text(min_size=1, max_size=12)
small = st.integers(0, 13)


@st.composite
def games(draw) -> GameRecord:
    secret = draw(code)
    rows = []
    for guess in draw(st.lists(code, min_size=1, max_size=12)):
        marks = score(secret, guess)
        if draw(st.booleans()) and marks.black < 4:
            marks = Feedback(marks.black + 1, 0)  # now and then a wrong mark
        rows.append(Row(guess, marks))
        if guess == secret:
            break
    hidden = draw(st.booleans())
    return GameRecord("mso", None if hidden else secret, tuple(rows), None)


@settings(max_examples=200, deadline=None)
@given(games())
def test_game_verdict_round_trips_through_json_text(record):
    verdict = judge_game(record)
    assert GameVerdict.from_json(json.loads(json.dumps(verdict.to_json()))) == verdict


flow_verdicts = st.one_of(
    st.builds(v.Start, small, names, names),
    st.builds(v.JointConfirm, small, small),
    st.builds(v.Flag, small, names, st.sampled_from(["codemaker", "codebreaker"])),
    st.builds(v.Check, small, small, st.sampled_from(["guess", "marks", "secret"]),
              st.sampled_from(["unknown", "occluded", "hidden"])),
    st.builds(v.Illegal, small, small, names, names, small),
    st.builds(v.SecretSeen, small),
    st.builds(v.Entered, small, small, names, st.none() | code, st.none() | small, st.none() | small),
    st.builds(v.RowJudged, small, small, code, small, small, st.booleans(),
              st.none() | st.builds(Feedback, small, small)),
    st.builds(v.Mismark, small, small, small, st.sampled_from([0.0, 0.5])),
    st.builds(v.Inconsistent, small, st.lists(small, max_size=4).map(tuple)),
    st.builds(v.MatchResult, st.dictionaries(names, st.sampled_from([0.0, 0.5, 1.0]), max_size=2),
              st.dictionaries(names, small, max_size=2), st.dictionaries(names, st.just(0.0), max_size=2),
              st.none() | st.dictionaries(names, small, max_size=2)),
)


@settings(max_examples=300, deadline=None)
@given(flow_verdicts)
def test_flow_verdicts_round_trip_through_json_text(verdict):
    data = json.loads(json.dumps(verdict.to_json()))
    assert data["what"] == verdict.what
    assert v.verdict_from_json(data) == verdict


def test_a_game_result_round_trips():
    record = GameRecord("mso", ("red", "red", "blue", "blue"),
                        (Row(("red", "green", "blue", "white"), Feedback(2, 0)),), None)
    result = v.GameResult(3, judge_game(record))
    assert v.verdict_from_json(json.loads(json.dumps(result.to_json()))) == result


def test_an_unknown_verdict_is_bad_input():
    import pytest

    from pegwatch.rules.errors import BadInput

    with pytest.raises(BadInput, match="unknown kind 'nonsense'"):
        v.verdict_from_json({"what": "nonsense"})
    with pytest.raises(BadInput, match="verdict 'mismark'"):
        v.verdict_from_json({"what": "mismark", "game": 1})
