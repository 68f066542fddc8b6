"""A peg read confidently but not surely names what it may still be (issue 14)."""

from __future__ import annotations

import pytest

from pegwatch.simulation.pbr.yardstick import MISMARK, judge_row
from pegwatch.vision.could_be import SURE_POSTERIOR, could_be, peg_reading
from pegwatch.vision.profile import load_profile


def test_a_peg_under_the_sure_posterior_keeps_the_colours_that_make_it_up() -> None:
    # Orange read yellow at 0.994 under a warm lamp: orange is what it may still be.
    cands = (("yellow", 0.9935), ("orange", 0.0065), ("white", 1e-7))
    assert [c for c, _ in could_be("yellow", cands, blanks=False)] == ["yellow", "orange"]
    # Sure enough alone: nothing else named.
    assert could_be("yellow", (("yellow", 0.9995), ("orange", 0.0005)), blanks=False) == ()
    # As many as it takes to hold the sure share, best first.
    three = (("black", 0.995), ("purple", 0.003), ("blue", 0.0015), ("green", 0.0005))
    assert [c for c, _ in could_be("black", three, blanks=False)] == ["black", "purple", "blue"]


def test_a_bare_hole_is_no_candidate_of_a_peg_where_the_game_has_no_blanks() -> None:
    cands = (("black", 0.9987), ("empty", 0.0013), ("blue", 4e-5))
    assert could_be("black", cands, blanks=False) == ()  # 0.99996 of what is left
    assert [c for c, _ in could_be("black", cands, blanks=True)] == ["black", "empty"]
    kept = could_be("black", (("black", 0.99), ("empty", 0.005), ("blue", 0.005)), blanks=False)
    assert [c for c, _ in kept] == ["black", "blue"]
    assert sum(p for _, p in kept) == pytest.approx(1.0)


def test_the_peg_read_comes_first_and_must_be_among_the_candidates() -> None:
    assert [c for c, _ in could_be("blue", (("purple", 0.6), ("blue", 0.4)), blanks=False)] == ["blue", "purple"]
    assert could_be("red", (("purple", 0.6), ("blue", 0.4)), blanks=False) == ()


def test_the_candidates_are_asked_only_below_the_sure_posterior() -> None:
    def never() -> tuple[tuple[str, float], ...]:
        raise AssertionError("asked")

    sure = peg_reading("red", SURE_POSTERIOR, never, blanks=False)
    assert sure.possible == ("red",) and sure.candidates == ()
    assert peg_reading("empty", 0.991, never, blanks=False).possible == ("empty",)
    shaky = peg_reading("yellow", 0.9935, lambda: (("yellow", 0.9935), ("orange", 0.0065)), blanks=False)
    assert shaky.is_certain and shaky.colour == "yellow" and shaky.possible == ("yellow", "orange")


def test_the_orange_peg_read_yellow_under_a_warm_lamp_accuses_nobody(pbr_case) -> None:
    """Seed 8, table 500, case 17 of the physically based set: row 5 (green
    yellow blue orange, rightly marked 0B2W against orange white orange
    green) has its orange peg read yellow at 0.994. Read so, the row scores
    0B1W: the hard set's one false accusation. The peg names orange too now,
    and the row is unsure."""
    truth, reading = pbr_case(8, 500, "case-17")
    row = reading.row(5)
    assert truth.row(5).holes[3].colour == "orange" and "orange" in (row.holes[3].possible or ())
    verdict = judge_row(load_profile("invicta-12x4"), ("orange", "white", "orange", "green"), row, is_last=False)
    assert verdict != MISMARK


def test_what_the_model_left_unnamed_still_counts_against_the_peg() -> None:
    # 0.9986 read, 0.0006 named and 0.0008 in classes too unlikely to name: not sure.
    named = could_be("blue", (("blue", 0.9986), ("purple", 0.0006)), blanks=False)
    assert [c for c, _ in named] == ["blue", "purple"]


def test_pegwatch_read_shows_what_a_peg_not_quite_sure_may_be() -> None:
    from pegwatch.device.cli.vision_cmd import format_reading
    from pegwatch.vision.reading import BoardReading, HoleReading, KeyReading, RowReading, empty_row

    shaky = peg_reading("yellow", 0.9935, lambda: (("yellow", 0.9935), ("orange", 0.0065)), blanks=False)
    doubtful = HoleReading("unknown", 0.6, (("blue", 0.6), ("purple", 0.4)))
    row = RowReading(1, (HoleReading("red", 1.0), shaky, doubtful, HoleReading("green", 1.0)),
                     KeyReading(1, 1, 2, 1.0, "ok"), "unknown")
    reading = BoardReading("invicta-12x4", (row, *(empty_row(n, 4, 4) for n in range(2, 13))), None, None, 0)
    text = format_reading(reading)
    assert "hole 2: read yellow, not surely: may also be orange" in text
    assert "hole 3: may be blue or purple" in text and "hole 1:" not in text


def test_a_secret_hole_is_never_read_less_surely_than_an_accusation_needs() -> None:
    from pegwatch.vision.could_be import secret_posterior

    # Twelve rows judged against it: 0.01 / 12 of doubt at most, surer than SURE_POSTERIOR.
    assert secret_posterior(0.99, 12) == pytest.approx(1 - 0.01 / 12)
    # A board of eight rows would allow 0.00125: the secret names no alternative, so 0.999 it is.
    assert secret_posterior(0.99, 8) == SURE_POSTERIOR
