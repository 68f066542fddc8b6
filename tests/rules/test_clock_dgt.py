"""The clock an arbiter expects (issue 15 §5): the mid-move delay-stage fix,
the DGT 3000's readings as named options, count-up and hourglass, the period
set in pause mode."""

from __future__ import annotations

import pytest

from pegwatch.rules.clock import (
    NS_PER_S,
    BronsteinCount,
    Clock,
    ClockEvent,
    ClockReadings,
    ClockStateError,
    ControlMode,
    DelayKind,
    DelayWithMoves,
    InvalidTimeControlError,
    PresetFileError,
    PressOutcome,
    Stage,
    StageAddAtFlag,
    StageAdvance,
    TimeControl,
    get_preset,
    parse_presets,
)
from pegwatch.rules.errors import BadInput

S = NS_PER_S


# ----------------------------------------------------------------------
# The mid-move delay-stage bug: the two examples, to the nanosecond.


def test_us_delay_stage_begun_mid_move_gives_its_delay_from_the_next_move() -> None:
    """Stages [43 ns, 4 moves, +2.427 s] then [10 s, US delay 2 s], advanced at the flag;
    start(0)@0, a press at 19.05 s.

    The move began in the first stage, which has no delay; the second stage
    begins 43 ns into the move and its 10 s run at once. Of the two readings
    the issue names (10.000000043 s: the delay belongs to the stage the move
    began in; 12.000000043 s: a stage's delay starts when the stage starts),
    pegwatch takes the first, the one that also gives the issue's Bronstein
    answer (8.256442362 s, below) and the DGT 3000's (the delay is given at
    the start of each move). The old engine flagged at 12.000000000 s, the
    43 ns counted both as main time and as delay used.
    """
    tc = TimeControl(
        (Stage(43, moves=4, increment_ns=2_427_000_000), Stage(10 * S, delay_ns=2 * S)),
        advance=StageAdvance.FLAG,
    )
    clock = Clock([tc, tc])
    clock.start(0, 0)
    assert clock.press(0, 19_050_000_000) is PressOutcome.FINISHED
    view = clock.view(19_050_000_000)
    assert view.flags == (0,)
    assert view.flag_times_ns == (10_000_000_043,)
    assert view.used_ns == (10_000_000_043, 0)
    assert [(e.stage, e.at_ns) for e in view.stage_expiries] == [(0, 43)]


def test_bronstein_stage_begun_mid_move_gives_nothing_back_for_that_move() -> None:
    """Stages [10 s, 2 moves] then [8.256442363 s, Bronstein 4 s], advanced at the
    flag; start(1)@0, a press at 10.000000001 s: 8.256442362 s left (the old
    engine gave back 4 s for 1 ns spent and left 12.256442362 s)."""
    tc = TimeControl(
        (Stage(10 * S, moves=2), Stage(8_256_442_363, delay_ns=4 * S, delay_kind=DelayKind.BRONSTEIN)),
        advance=StageAdvance.FLAG,
    )
    clock = Clock([tc, tc])
    clock.start(1, 0)
    assert clock.press(1, 10_000_000_001) is PressOutcome.ACCEPTED
    view = clock.view(10_000_000_001)
    assert view.remaining_ns[1] == 8_256_442_362
    assert view.stage == (0, 1)
    # The next move is the first of the Bronstein stage: its delay counts.
    assert clock.press(0, 10_000_000_001 + 60) is PressOutcome.ACCEPTED
    assert clock.press(1, 10_000_000_001 + 60 + 3 * S) is PressOutcome.ACCEPTED
    assert clock.view(10_000_000_001 + 60 + 3 * S).remaining_ns[1] == 8_256_442_362


def test_a_delay_stage_begun_at_a_press_gives_its_delay_at_once() -> None:
    """With stages added after the move count, the new stage's first move has its delay."""
    tc = TimeControl(
        (Stage(60 * S, moves=1), Stage(60 * S, delay_ns=5 * S)), advance=StageAdvance.MOVES
    )
    clock = Clock([tc, tc])
    clock.start(0, 0)
    clock.press(0, 10 * S)  # move 1 done: 50 s + 60 s
    clock.press(1, 11 * S)
    clock.press(0, 11 * S + 4 * S)  # inside the 5 s delay: nothing charged
    assert clock.view(15 * S).remaining_ns[0] == 110 * S


# ----------------------------------------------------------------------
# The DGT 3000's readings


def test_dgt_bronstein_adds_the_delay_first_and_flags_at_delay_plus_main() -> None:
    tc = TimeControl.bronstein(10 * S, 3 * S)
    dgt = Clock([tc, tc], readings=ClockReadings(bronstein=BronsteinCount.DGT))
    fide = Clock([tc, tc])
    for clock in (dgt, fide):
        clock.start(0, 0)
    # The DGT shows main + delay, counting down from the start of the move.
    assert dgt.view(0).remaining_ns == (13 * S, 10 * S)
    assert dgt.view(2 * S).remaining_ns[0] == 11 * S
    assert fide.view(2 * S).remaining_ns[0] == 8 * S
    # Both give the same after a press: never more than the move began with.
    dgt.press(0, 2 * S)
    fide.press(0, 2 * S)
    assert dgt.view(2 * S).remaining_ns[0] == fide.view(2 * S).remaining_ns[0] == 10 * S
    dgt.press(1, 2 * S + 7 * S)
    fide.press(1, 2 * S + 7 * S)
    assert dgt.view(9 * S).remaining_ns[1] == fide.view(9 * S).remaining_ns[1] == 6 * S
    # The flag: the DGT at delay + main (13 s into the move), FIDE at main 0 (10 s).
    dgt_flag = dgt.view(100 * S).flag_times_ns
    fide_flag = fide.view(100 * S).flag_times_ns
    assert dgt_flag == (9 * S + 13 * S,)
    assert fide_flag == (9 * S + 10 * S,)
    assert dgt.next_change_ns(9 * S, resolution_ns=S) == 10 * S


def test_stage_added_to_both_at_the_flag_as_the_dgt_does() -> None:
    tc = TimeControl((Stage(10 * S, moves=40), Stage(5 * S)), advance=StageAdvance.FLAG)
    both = Clock([tc, tc], readings=ClockReadings(stage_at_flag=StageAddAtFlag.BOTH))
    each = Clock([tc, tc])
    for clock in (both, each):
        clock.start(0, 0)
        clock.press(0, 4 * S)  # 6 s left
        # Player 1's stage runs out at 14 s: the DGT adds the period to both.
        clock.press(1, 15 * S)
    assert each.view(15 * S).remaining_ns == (6 * S, 4 * S)
    assert each.view(15 * S).stage == (0, 1)
    assert both.view(15 * S).remaining_ns == (11 * S, 4 * S)
    assert both.view(15 * S).stage == (1, 1)
    assert [e.player for e in both.view(15 * S).stage_expiries] == [1]
    # Player 0 is in the last stage now: the flag at 15 + 11 s.
    assert both.view(60 * S).flag_times_ns == (26 * S,)


def test_a_delay_stage_with_a_move_count_is_refused_under_the_dgt_reading() -> None:
    tc = TimeControl(
        (Stage(90 * 60 * S, moves=40, delay_ns=5 * S), Stage(30 * 60 * S, delay_ns=5 * S))
    )
    Clock([tc, tc])  # allowed by default: FIDE art. 6 does not forbid it
    with pytest.raises(InvalidTimeControlError) as err:
        Clock([tc, tc], readings=ClockReadings(delay_with_moves=DelayWithMoves.REFUSE))
    assert isinstance(err.value, BadInput)
    message = str(err.value)
    assert "\n" not in message
    assert "player 0: stage 1" in message and "delay_with_moves='refuse'" in message
    with pytest.raises(InvalidTimeControlError):
        Clock([tc, tc], readings=ClockReadings.dgt3000())


def test_readings_in_a_preset_file() -> None:
    text = """
[presets.dgt-bronstein]
readings = "dgt3000"
control = { time = "5:00", delay = "3s", delay_kind = "bronstein" }
[presets.mixed]
readings = { bronstein = "dgt" }
control = { time = "5:00" }
[presets.count]
control = { time = "0", mode = "count-up" }
"""
    presets = parse_presets(text, source="event.toml")
    assert presets["dgt-bronstein"].readings == ClockReadings.dgt3000()
    assert presets["mixed"].readings == ClockReadings(bronstein=BronsteinCount.DGT)
    assert Clock.from_preset(presets["dgt-bronstein"]).readings == ClockReadings.dgt3000()
    assert presets["count"].controls[0].mode is ControlMode.COUNT_UP
    with pytest.raises(PresetFileError, match=r"event.toml: presets.x.readings.bronstein"):
        parse_presets('[presets.x]\nreadings = { bronstein = "dgtx" }\ncontrol = { time = "1:00" }',
                      source="event.toml")
    with pytest.raises(PresetFileError, match=r"presets.y.readings: role 'player': stage 1"):
        parse_presets(
            '[presets.y]\nreadings = "dgt3000"\n[presets.y.control]\n'
            'stages = [{ time = "1:00", moves = 2, delay = "2s" }, { time = "1:00" }]',
            source="event.toml",
        )


# ----------------------------------------------------------------------
# Count-up and hourglass


def test_count_up_counts_the_time_used_and_never_flags() -> None:
    tc = TimeControl.count_up()
    clock = Clock([tc, tc])
    assert str(tc) == "count-up from 0s"
    clock.start(0, 0)
    assert clock.view(0).count_up == (True, True)
    clock.press(0, 7 * S)
    clock.pause(9 * S)
    clock.resume(20 * S)
    clock.press(1, 21 * S)
    view = clock.view(10**6 * S)
    assert view.flags == ()
    assert view.remaining_ns == (7 * S + (10**6 - 21) * S, 3 * S)
    assert clock.next_change_ns(21 * S + 300_000_000, resolution_ns=S) == 22 * S
    # The arbiter sets the count in pause mode.
    clock.pause(30 * S)
    clock.adjust(1, remaining_ns=60 * S, at_ns=31 * S)
    assert clock.view(40 * S).remaining_ns[1] == 60 * S


def test_hourglass_gives_the_time_used_to_the_opponent() -> None:
    tc = TimeControl.hourglass(60 * S)
    clock = Clock([tc, tc])
    clock.start(0, 0)
    clock.press(0, 10 * S)
    assert clock.view(10 * S).remaining_ns == (50 * S, 70 * S)
    clock.press(1, 15 * S)
    assert clock.view(15 * S).remaining_ns == (55 * S, 65 * S)
    # Player 0 thinks 55 s: the flag falls, and the sand is all on the other side.
    view = clock.view(100 * S)
    assert view.flag_times_ns == (70 * S,)
    assert view.remaining_ns == (0, 120 * S)


def test_hourglass_needs_two_hourglass_players_and_a_bare_stage() -> None:
    with pytest.raises(InvalidTimeControlError, match="two players"):
        Clock([TimeControl.hourglass(S), TimeControl.sudden_death(S)])
    with pytest.raises(InvalidTimeControlError, match="two players"):
        Clock([TimeControl.hourglass(S)] * 3)
    with pytest.raises(InvalidTimeControlError, match="one stage"):
        TimeControl((Stage(S, increment_ns=S),), mode=ControlMode.HOURGLASS)
    with pytest.raises(InvalidTimeControlError, match="no PGN"):
        TimeControl.count_up().to_pgn()


# ----------------------------------------------------------------------
# Pause mode: both times, the move counts and the period


def test_pause_mode_sets_times_moves_and_period() -> None:
    tc = get_preset("fide-90-40").controls[0]
    clock = Clock([tc, tc])
    clock.start(0, 0)
    clock.press(0, S)
    clock.pause(2 * S)
    clock.adjust(0, remaining_ns=20 * 60 * S, moves=40, stage=1, at_ns=3 * S)
    clock.adjust(1, remaining_ns=25 * 60 * S, moves=39, at_ns=3 * S)
    view = clock.view(4 * S)
    assert view.remaining_ns == (20 * 60 * S, 25 * 60 * S)
    assert view.moves == (40, 39)
    assert view.stage == (1, 0)
    assert clock.events[-2] == ClockEvent("adjust", 3 * S, 0, 20 * 60 * S, 40, 1)
    assert ClockEvent.from_json(clock.events[-2].to_json()) == clock.events[-2]
    assert clock.events[-2].to_json()["stage"] == 1
    assert "stage" not in clock.events[-1].to_json()  # old journals read alike
    with pytest.raises(ClockStateError, match=r"stage for player 0 must be 0..1"):
        clock.adjust(0, stage=2, at_ns=5 * S)
    replayed = Clock.replay([tc, tc], clock.events)
    assert replayed.view(4 * S) == view
