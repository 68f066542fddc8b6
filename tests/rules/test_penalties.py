"""Penalties as data (seed 004 §5): JSON round trip, one-line errors, the sums the judge uses."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pegwatch.rules.errors import BadInput
from pegwatch.rules.penalties import (
    Penalty,
    PenaltyError,
    PenaltyKind,
    games_lost,
    parse_penalties,
    points_docked,
)

penalties = st.one_of(
    st.builds(Penalty, st.just(PenaltyKind.WARNING), st.sampled_from(["Ann", "Bob"]),
              game=st.none() | st.integers(1, 2), why=st.text(max_size=20)),
    st.builds(Penalty, st.just(PenaltyKind.TIME), st.sampled_from(["Ann", "Bob"]),
              game=st.integers(1, 2), time_ns=st.integers(1, 10**12)),
    st.builds(Penalty, st.just(PenaltyKind.POINTS), st.sampled_from(["Ann", "Bob"]),
              game=st.integers(1, 2), points=st.sampled_from([0.5, 1, 10, 2.5])),
    st.builds(Penalty, st.just(PenaltyKind.LOSS), st.sampled_from(["Ann", "Bob"]),
              game=st.integers(1, 2), at_ns=st.none() | st.integers(0, 10**15)),
)


@given(penalty=penalties)
def test_json_round_trip(penalty: Penalty) -> None:
    assert Penalty.from_json(penalty.to_json()) == penalty
    assert "\n" not in penalty.text


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"kind": "exile", "player": "Bob"}, "penalties[0].kind: 'exile' is not one of warning, time, points, loss"),
        ({"kind": "time", "player": "Bob"}, "penalties[0]: penalty time_ns: a time penalty needs nanoseconds > 0, got None"),
        ({"kind": "points", "player": "Bob", "points": float("inf")}, "penalties[0]: penalty points: a points penalty needs points > 0, got inf"),
        ({"kind": "warning"}, "penalties[0].player: missing"),
        ({"kind": "warning", "player": "Bob", "colour": "red"}, "penalties[0].colour: unknown key"),
        ({"kind": "loss", "player": "Bob", "game": 0}, "penalties[0]: penalty game: expected a game number >= 1, got 0"),
        ({"kind": "warning", "player": "Bob", "why": 3}, "penalties[0].why: expected text, got 3"),
    ],
)
def test_bad_penalties_are_one_line(data: dict[str, object], message: str) -> None:
    with pytest.raises(PenaltyError) as err:
        parse_penalties([data])
    assert isinstance(err.value, BadInput)
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


def test_sums_for_the_judge() -> None:
    given_ = parse_penalties([
        {"kind": "points", "player": "Bob", "points": 10, "game": 1},
        {"kind": "points", "player": "Bob", "points": 0.5, "game": 2},
        {"kind": "warning", "player": "Ann", "game": 1},
        {"kind": "loss", "player": "Ann", "game": 2},
        {"kind": "loss", "player": "Bob", "game": 2},
    ])
    assert points_docked(given_, ["Ann", "Bob"]) == {"Ann": 0.0, "Bob": 10.5}
    assert games_lost(given_) == {2: "Ann"}
    assert parse_penalties(None) == ()
    with pytest.raises(PenaltyError, match="penalties: expected a list"):
        parse_penalties("warning")
