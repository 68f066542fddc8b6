"""Worked examples for the pure game clock (pegwatch.rules.clock)."""

from __future__ import annotations

import pytest

from pegwatch.rules.clock import (
    Clock,
    ClockStateError,
    InvalidPlayerError,
    Overtime,
    OvertimeKind,
    PressOutcome,
    Stage,
    StageAdvance,
    TimeControl,
)
from pegwatch.rules.errors import PegwatchError

S = 1_000_000_000
MS = 1_000_000
MIN = 60 * S
T0 = 1_000 * S  # monotonic clocks do not start at zero


def two(tc: TimeControl, **options) -> Clock:
    return Clock([tc, tc], **options)


# ----------------------------------------------------------------------
# Remaining time comes from stamps


def test_remaining_is_computed_from_stamps_not_ticks() -> None:
    c = two(TimeControl.sudden_death(5 * MIN))
    c.start(0, T0)
    # A display looking at odd instants changes nothing...
    for k in range(1, 7):
        assert c.view(T0 + k * 333 * MS).remaining_ns[0] == 5 * MIN - k * 333 * MS
    # ...and the time between the last look (2.0 s) and the press (2.7 s) is charged.
    assert c.press(0, T0 + 2_700 * MS) is PressOutcome.ACCEPTED
    v = c.view(T0 + 2_700 * MS)
    assert v.remaining_ns == (5 * MIN - 2_700 * MS, 5 * MIN)
    assert v.on_move == 1
    assert v.moves == (1, 0)


def test_nanosecond_exact_charging() -> None:
    c = two(TimeControl.sudden_death(MIN), debounce_ns=0)
    c.start(0, T0)
    c.press(0, T0 + 1)
    c.press(1, T0 + 3)
    v = c.view(T0 + 10)
    assert v.remaining_ns == (MIN - 1 - 7, MIN - 2)
    assert v.used_ns == (8, 2)


def test_view_never_mutates() -> None:
    c = two(TimeControl.fischer(MIN, 2 * S))
    c.start(0, T0)
    before = c.view(T0 + 5 * S)
    c.view(T0 + 2 * MIN)  # far past the flag
    assert c.flags == ()
    assert c.view(T0 + 5 * S) == before


def test_earlier_stamp_is_taken_as_simultaneous() -> None:
    c = two(TimeControl.sudden_death(MIN))
    c.start(0, T0)
    c.pause(T0 + 10 * S)
    c.resume(T0 + 9 * S)  # arrived late: applied at T0 + 10 s
    assert c.view(T0 + 12 * S).remaining_ns[0] == MIN - 12 * S


# ----------------------------------------------------------------------
# Time controls


def test_fischer_increment_is_added_after_the_press() -> None:
    c = two(TimeControl.fischer(3 * MIN, 2 * S))  # blitz 3+2
    c.start(0, T0)
    assert c.view(T0 + 10 * S).remaining_ns[0] == 3 * MIN - 10 * S  # not before
    c.press(0, T0 + 10 * S)
    assert c.view(T0 + 10 * S).remaining_ns[0] == 3 * MIN - 10 * S + 2 * S
    # Move 1 earns the increment too (FIDE "from move 1").
    c.press(1, T0 + 11 * S)
    assert c.view(T0 + 11 * S).remaining_ns[1] == 3 * MIN - 1 * S + 2 * S


def test_bronstein_adds_back_min_of_delay_and_time_used() -> None:
    c = two(TimeControl.bronstein(25 * MIN, 10 * S))
    c.start(0, T0)
    # During the move the main time counts down.
    v = c.view(T0 + 4 * S)
    assert v.remaining_ns[0] == 25 * MIN - 4 * S
    assert v.delay_left_ns[0] == 6 * S
    c.press(0, T0 + 4 * S)  # used 4 s < 10 s: all 4 s come back
    assert c.view(T0 + 4 * S).remaining_ns[0] == 25 * MIN
    c.press(1, T0 + 19 * S)  # used 15 s > 10 s: only 10 s come back
    assert c.view(T0 + 19 * S).remaining_ns[1] == 25 * MIN - 5 * S


def test_bronstein_flag_falls_when_main_time_is_out() -> None:
    c = two(TimeControl.bronstein(5 * S, 10 * S))
    c.start(0, T0)
    v = c.view(T0 + 5 * S)
    assert v.flags == (0,)
    assert v.flag_times_ns == (T0 + 5 * S,)


def test_us_delay_main_time_waits_for_the_delay() -> None:
    c = two(TimeControl.us_delay(90 * MIN, 5 * S))
    c.start(0, T0)
    v = c.view(T0 + 3 * S)
    assert v.remaining_ns[0] == 90 * MIN  # main time has not moved
    assert v.delay_left_ns[0] == 2 * S
    c.press(0, T0 + 3 * S)
    assert c.view(T0 + 3 * S).remaining_ns[0] == 90 * MIN
    c.press(1, T0 + 11 * S)  # 8 s used: 5 s delay, then 3 s of main time
    v = c.view(T0 + 11 * S)
    assert v.remaining_ns[1] == 90 * MIN - 3 * S
    assert v.delay_left_ns == (5 * S, 5 * S)  # fresh delay for each turn


def test_us_delay_flag_instant_includes_the_delay() -> None:
    c = two(TimeControl.us_delay(10 * S, 5 * S))
    c.start(0, T0)
    assert c.view(T0 + 15 * S - 1).flags == ()
    v = c.view(T0 + 15 * S)
    assert v.flags == (0,) and v.flag_times_ns == (T0 + 15 * S,)


def test_stages_by_move_count_add_the_next_period() -> None:
    tc = TimeControl(
        (Stage(10 * S, moves=2, increment_ns=1 * S), Stage(5 * S, increment_ns=1 * S)),
        advance=StageAdvance.MOVES,
    )
    c = two(tc)
    c.start(0, T0)
    c.press(0, T0 + 2 * S)  # move 1: 10 - 2 + 1 = 9
    c.press(1, T0 + 3 * S)
    v = c.view(T0 + 3 * S)
    assert v.remaining_ns[0] == 9 * S and v.stage[0] == 0
    c.press(0, T0 + 6 * S)  # move 2 completes stage 1: 9 - 3 + 1 + 5 = 12
    v = c.view(T0 + 6 * S)
    assert v.remaining_ns[0] == 12 * S
    assert v.stage == (1, 0)
    assert v.moves == (2, 1)


def test_stage_by_move_count_flag_if_count_not_reached() -> None:
    tc = TimeControl((Stage(10 * S, moves=40), Stage(30 * MIN)))
    c = two(tc)
    c.start(0, T0)
    v = c.view(T0 + 10 * S)
    assert v.flags == (0,)  # the 30 minutes never came: move 40 was not reached
    assert v.finished


def test_stage_added_at_the_flag_fide_style() -> None:
    tc = TimeControl(
        (Stage(10 * S, moves=40, increment_ns=1 * S), Stage(30 * S, increment_ns=1 * S)),
        advance=StageAdvance.FLAG,
    )
    c = two(tc)
    c.start(0, T0)
    c.press(0, T0 + 4 * S)  # 10 - 4 + 1 = 7
    c.press(1, T0 + 5 * S)
    # Player 0's 7 s run out at T0 + 12 s: 30 s are added there, no flag.
    v = c.view(T0 + 20 * S)
    assert v.flags == ()
    assert v.stage == (1, 0)
    assert v.remaining_ns[0] == 30 * S - 8 * S
    (expiry,) = v.stage_expiries
    assert (expiry.player, expiry.stage, expiry.at_ns, expiry.moves) == (0, 0, T0 + 12 * S, 1)
    assert expiry.short_of_moves  # 1 move of 40: the arbiter decides
    # The next flag is final.
    v = c.view(T0 + 42 * S)
    assert v.flags == (0,) and v.flag_times_ns == (T0 + 42 * S,)


def test_byo_yomi_periods() -> None:
    c = two(TimeControl.byo_yomi(10 * S, periods=3, period_ns=5 * S))
    c.start(0, T0)
    v = c.view(T0 + 12 * S)  # main time gone at 10 s; 2 s into period 1
    assert v.remaining_ns[0] == 3 * S
    assert v.overtime == ("byo-yomi 3×5s", None)
    assert v.periods_left == (3, 3)
    c.press(0, T0 + 12 * S)  # the move is made inside the period: it resets
    assert c.view(T0 + 12 * S).remaining_ns[0] == 5 * S
    c.press(1, T0 + 13 * S)
    v = c.view(T0 + 20 * S)  # 7 s used: one period lost, 2 s into the next
    assert v.remaining_ns[0] == 3 * S
    assert v.overtime[0] == "byo-yomi 2×5s"
    c.press(0, T0 + 20 * S)  # the new period resets, still 2 left
    c.press(1, T0 + 21 * S)
    v = c.view(T0 + 21 * S)
    assert v.remaining_ns[0] == 5 * S and v.periods_left[0] == 2
    # Flag when the last period runs out: 2 periods of 5 s from T0 + 21 s.
    assert c.view(T0 + 31 * S - 1).flags == ()
    v = c.view(T0 + 31 * S)
    assert v.flags == (0,) and v.flag_times_ns == (T0 + 31 * S,)


def test_canadian_overtime_n_moves_in_t() -> None:
    c = two(TimeControl.canadian(10 * S, moves=3, period_ns=20 * S), debounce_ns=0)
    c.start(0, T0)
    t = T0 + 12 * S  # 2 s into the block
    c.press(0, t)
    v = c.view(t)
    assert v.remaining_ns[0] == 18 * S  # a block does not reset per move
    assert v.overtime[0] == "2 moves in 20s"
    for _ in range(2):
        c.press(1, t + 1)
        t += 1 + 5 * S
        c.press(0, t)
    v = c.view(t)
    # 3 moves made in 2 + 5 + 5 = 12 s of the block: a new block of 20 s.
    assert v.remaining_ns[0] == 20 * S
    assert v.overtime[0] == "3 moves in 20s"
    c.press(1, t + 1)
    assert c.view(t + 1 + 20 * S).flags == (0,)
    assert c.view(t + 1 + 20 * S).flag_times_ns == (t + 1 + 20 * S,)


def test_different_times_per_player() -> None:
    c = Clock([TimeControl.sudden_death(5 * MIN), TimeControl.sudden_death(4 * MIN)])
    assert c.view(T0).remaining_ns == (5 * MIN, 4 * MIN)


# ----------------------------------------------------------------------
# Flags


def test_flag_falls_at_exact_instant_and_freezes() -> None:
    c = two(TimeControl.fischer(10 * S, 1 * S))
    c.start(0, T0)
    c.press(0, T0 + 3 * S)  # 8 s left
    c.press(1, T0 + 4 * S)  # player 0 runs from T0 + 4 s with 8 s
    assert c.view(T0 + 12 * S - 1).flags == ()
    v = c.view(T0 + 30 * S)  # discovered late, instant exact
    assert v.flags == (0,)
    assert v.flag_times_ns == (T0 + 12 * S,)
    assert v.finished and not v.running and v.on_move is None
    assert v.remaining_ns[0] == 0
    assert v.remaining_ns[1] == 10 * S  # frozen: player 1 keeps their time
    assert c.press(0, T0 + 30 * S) is PressOutcome.FINISHED
    assert c.flags == (0,)  # settled by the press at its exact instant
    assert c.view(T0 + 99 * S).used_ns == (3 * S + 8 * S, 1 * S)


def test_press_at_the_flag_instant_is_late() -> None:
    c = two(TimeControl.sudden_death(10 * S))
    c.start(0, T0)
    assert c.press(0, T0 + 10 * S) is PressOutcome.FINISHED
    assert c.flags == (0,)


def test_no_freeze_flagged_player_plays_on_without_increment() -> None:
    c = two(TimeControl.fischer(10 * S, 5 * S), freeze_at_flag=False)
    c.start(0, T0)
    assert c.view(T0 + 15 * S).flags == (0,)
    assert c.view(T0 + 15 * S).running
    assert c.press(0, T0 + 15 * S) is PressOutcome.ACCEPTED
    v = c.view(T0 + 15 * S)
    assert v.remaining_ns[0] == 0  # no increment after a flag
    assert v.moves[0] == 1
    assert v.on_move == 1 and not v.finished
    c.press(1, T0 + 20 * S)
    v = c.view(T0 + 40 * S)
    assert v.remaining_ns[1] == 10 * S  # 10 - 5 + 5
    assert v.flags == (0,)
    assert v.used_ns == (15 * S + 20 * S, 5 * S)
    c.press(0, T0 + 40 * S)
    v = c.view(T0 + 60 * S)
    assert v.flags == (0, 1) and v.flag_times_ns == (T0 + 10 * S, T0 + 50 * S)
    assert v.finished


def test_mensa_four_players_skip_the_flagged_player() -> None:
    c = Clock.from_preset("mensa-connection", players=4)
    assert c.skip_flagged and not c.freeze_at_flag
    c.adjust(1, remaining_ns=30 * S, at_ns=T0)
    c.start(0, T0)
    c.press(0, T0 + 10 * S)
    # Player 1's flag falls at T0 + 40 s; player 2's clock starts right then.
    v = c.view(T0 + 50 * S)
    assert v.flags == (1,) and v.flag_times_ns == (T0 + 40 * S,)
    assert v.on_move == 2
    assert v.remaining_ns[2] == 20 * MIN - 10 * S
    assert not v.finished
    assert c.press(1, T0 + 50 * S) is PressOutcome.FLAGGED
    assert c.press(2, T0 + 60 * S) is PressOutcome.ACCEPTED
    c.press(3, T0 + 70 * S)
    assert c.view(T0 + 70 * S).on_move == 0
    c.press(0, T0 + 80 * S)
    assert c.view(T0 + 80 * S).on_move == 2  # player 1 is skipped
    assert c.ignored_presses == (0, 0, 0, 0)


def test_two_flags_discovered_in_one_call_keep_their_order() -> None:
    c = Clock.from_preset("mensa-connection", players=4)
    for player, left in ((1, 5 * S), (2, 3 * S), (3, 7 * S)):
        c.adjust(player, remaining_ns=left, at_ns=T0)
    c.start(0, T0)
    c.press(0, T0 + 1 * S)
    # 1 flags at +6 s, 2 at +9 s, 3 at +16 s; player 0 then runs on alone.
    v = c.view(T0 + 100 * S)
    assert v.flags == (1, 2, 3)
    assert v.flag_times_ns == (T0 + 6 * S, T0 + 9 * S, T0 + 16 * S)
    assert v.on_move == 0 and v.running and not v.finished
    assert v.remaining_ns[0] == 20 * MIN - 1 * S - 84 * S
    # The same flags, at the same instants, once an event settles them.
    c.press(0, T0 + 100 * S)
    assert c.flags == (1, 2, 3)
    assert c.view(T0 + 100 * S).on_move == 0  # the only one left


def test_all_flagged_is_finished() -> None:
    c = Clock([TimeControl.sudden_death(1 * S)] * 2, freeze_at_flag=False, skip_flagged=True)
    c.start(0, T0)
    v = c.view(T0 + 5 * S)
    assert v.flags == (0, 1)
    assert v.flag_times_ns == (T0 + 1 * S, T0 + 2 * S)
    assert v.finished and not v.running


def test_mso_mastermind_roles_and_start() -> None:
    # Game 1: player 0 (first named) is codemaker and starts the codebreaker's clock.
    g1 = Clock.from_preset("mso-mastermind")
    assert g1.view(T0).remaining_ns == (4 * MIN, 8 * MIN)
    g1.start(1, T0)
    assert g1.view(T0 + S).on_move == 1
    # Game 2: the roles swap.
    g2 = Clock.from_preset("mso-mastermind", roles=("codebreaker", "codemaker"))
    assert g2.view(T0).remaining_ns == (8 * MIN, 4 * MIN)
    v = g1.view(T0 + 8 * MIN)
    assert v.flags == (1,) and v.finished


# ----------------------------------------------------------------------
# Presses


def test_press_by_player_not_on_move_is_ignored_and_counted() -> None:
    c = two(TimeControl.sudden_death(MIN))
    c.start(0, T0)
    assert c.press(1, T0 + 1 * S) is PressOutcome.NOT_ON_MOVE
    assert c.press(1, T0 + 2 * S) is PressOutcome.NOT_ON_MOVE
    assert c.ignored_presses == (0, 2)
    v = c.view(T0 + 3 * S)
    assert v.on_move == 0 and v.remaining_ns == (MIN - 3 * S, MIN)


def test_debounce_counts_two_close_presses_once() -> None:
    c = two(TimeControl.fischer(MIN, 1 * S), debounce_ns=50 * MS)
    c.start(0, T0)
    assert c.press(0, T0 + S) is PressOutcome.ACCEPTED
    assert c.press(0, T0 + S + 49 * MS) is PressOutcome.BOUNCE
    assert c.ignored_presses == (0, 0)
    assert c.bounces == (1, 0)
    assert c.view(T0 + 2 * S).moves == (1, 0)
    assert c.press(0, T0 + S + 50 * MS) is PressOutcome.NOT_ON_MOVE
    assert c.ignored_presses == (1, 0)


def test_press_before_start_and_while_paused() -> None:
    c = two(TimeControl.sudden_death(MIN))
    assert c.press(0, T0) is PressOutcome.NOT_STARTED
    c.start(0, T0)
    c.pause(T0 + S)
    assert c.press(0, T0 + 2 * S) is PressOutcome.PAUSED
    assert c.view(T0 + 2 * S).moves == (0, 0)


# ----------------------------------------------------------------------
# Arbiter actions


def test_pause_and_resume_keep_player_and_delay() -> None:
    c = two(TimeControl.us_delay(MIN, 5 * S))
    c.start(0, T0)
    c.press(0, T0 + S)
    c.pause(T0 + 3 * S)  # player 1 has used 2 s of the delay
    v = c.view(T0 + 100 * S)
    assert v.paused and not v.running
    assert v.on_move == 1
    assert v.delay_left_ns[1] == 3 * S
    c.resume(T0 + 100 * S)
    v = c.view(T0 + 104 * S)
    assert v.on_move == 1 and v.delay_left_ns[1] == 0
    assert v.remaining_ns[1] == MIN - 1 * S
    assert c.next_change_ns(T0 + 50 * S, resolution_ns=S) is not None


def test_adjust_time_and_moves() -> None:
    c = two(TimeControl.sudden_death(MIN))
    c.start(0, T0)
    c.adjust(1, remaining_ns=30 * S, moves=7, at_ns=T0 + S)
    c.adjust(0, remaining_ns=45 * S, at_ns=T0 + 2 * S)
    v = c.view(T0 + 5 * S)
    assert v.remaining_ns == (42 * S, 30 * S)
    assert v.moves == (0, 7)


def test_adjust_lifts_a_flag_and_leaves_the_clock_paused() -> None:
    c = two(TimeControl.sudden_death(10 * S))
    c.start(0, T0)
    c.adjust(0, remaining_ns=20 * S, at_ns=T0 + 60 * S)  # flag fell at +10 s
    v = c.view(T0 + 70 * S)
    assert v.flags == () and v.paused and not v.finished
    assert v.remaining_ns[0] == 20 * S
    c.resume(T0 + 70 * S)
    assert c.view(T0 + 75 * S).remaining_ns[0] == 15 * S


def test_undo_a_mis_press() -> None:
    c = two(TimeControl.fischer(MIN, 2 * S))
    c.start(0, T0)
    c.press(0, T0 + 10 * S)
    c.press(1, T0 + 15 * S)
    c.press(0, T0 + 20 * S)  # a mis-press by player 0
    c.undo(T0 + 23 * S)
    v = c.view(T0 + 23 * S)
    # State as before the press; the 3 s since go to player 0, who ran on.
    assert v.on_move == 0
    assert v.moves == (1, 1)
    assert v.remaining_ns == (MIN - 10 * S + 2 * S - 8 * S, MIN - 5 * S + 2 * S)
    assert c.press(0, T0 + 25 * S) is PressOutcome.ACCEPTED
    assert c.view(T0 + 25 * S).remaining_ns[0] == MIN - 10 * S + 2 * S - 10 * S + 2 * S


def test_undo_twice_and_nothing_to_undo() -> None:
    c = two(TimeControl.sudden_death(MIN))
    with pytest.raises(ClockStateError):
        c.undo(T0)
    c.start(0, T0)
    c.press(0, T0 + S)
    c.press(1, T0 + 2 * S)
    c.undo(T0 + 3 * S)
    c.undo(T0 + 4 * S)
    v = c.view(T0 + 4 * S)
    assert v.on_move == 0 and v.moves == (0, 0)
    assert v.remaining_ns == (MIN - 4 * S, MIN)
    with pytest.raises(ClockStateError, match="no accepted press"):
        c.undo(T0 + 5 * S)


def test_undo_keeps_pauses_and_ignored_presses() -> None:
    c = two(TimeControl.sudden_death(MIN))
    c.start(0, T0)
    c.press(0, T0 + 10 * S)
    assert c.press(0, T0 + 11 * S) is PressOutcome.NOT_ON_MOVE
    c.pause(T0 + 12 * S)
    c.resume(T0 + 30 * S)
    c.undo(T0 + 31 * S)
    v = c.view(T0 + 31 * S)
    assert v.remaining_ns == (MIN - 12 * S - 1 * S, MIN)
    assert c.ignored_presses == (1, 0)


def test_stop_ends_the_game() -> None:
    c = two(TimeControl.sudden_death(MIN))
    c.start(0, T0)
    c.stop(T0 + 5 * S)
    v = c.view(T0 + 2 * MIN)
    assert v.finished and v.stopped and v.flags == ()
    assert v.remaining_ns == (MIN - 5 * S, MIN)
    assert c.press(0, T0 + 2 * MIN) is PressOutcome.FINISHED


def test_arbiter_actions_that_make_no_sense_raise_pegwatch_errors() -> None:
    c = two(TimeControl.sudden_death(MIN))
    with pytest.raises(ClockStateError):
        c.pause(T0)
    c.start(0, T0)
    with pytest.raises(ClockStateError):
        c.start(1, T0)
    with pytest.raises(ClockStateError):
        c.resume(T0 + S)
    c.pause(T0 + S)
    with pytest.raises(ClockStateError):
        c.pause(T0 + S)
    with pytest.raises(InvalidPlayerError):
        c.press(2, T0 + S)
    with pytest.raises(PegwatchError, match="remaining"):
        c.adjust(0, remaining_ns=-1, at_ns=T0 + S)
    with pytest.raises(InvalidPlayerError):
        Clock([TimeControl.sudden_death(MIN)])
    with pytest.raises(InvalidPlayerError):
        Clock([TimeControl.sudden_death(MIN)] * 5)


def test_replay_of_events_gives_identical_state() -> None:
    c = two(TimeControl.byo_yomi(10 * S, 2, 3 * S), freeze_at_flag=False)
    c.start(0, T0)
    c.press(0, T0 + 4 * S)
    c.press(0, T0 + 4 * S + MS)  # bounce
    c.press(0, T0 + 5 * S)  # not on move
    c.pause(T0 + 6 * S)
    c.resume(T0 + 9 * S)
    c.press(1, T0 + 12 * S)
    c.undo(T0 + 13 * S)
    c.adjust(0, moves=3, at_ns=T0 + 14 * S)
    c.press(1, T0 + 40 * S)
    r = Clock.replay(c.controls, c.events, freeze_at_flag=False)
    for t in (T0 + 40 * S, T0 + 41 * S, T0 + 90 * S):
        assert r.view(t) == c.view(t)
    assert r.ignored_presses == c.ignored_presses and r.bounces == c.bounces


# ----------------------------------------------------------------------
# Display scheduling


def test_next_change_rounds_up_and_hits_the_flag() -> None:
    c = two(TimeControl.sudden_death(10 * S))
    assert c.next_change_ns(T0, resolution_ns=S) is None  # not started
    c.start(0, T0)
    # 10 s shows "10" until it drops to 9 s: one second later.
    assert c.next_change_ns(T0, resolution_ns=S) == T0 + S
    assert c.next_change_ns(T0 + 300 * MS, resolution_ns=S) == T0 + S
    assert c.next_change_ns(T0 + 9_500 * MS, resolution_ns=S) == T0 + 10 * S
    assert c.next_change_ns(T0 + 10 * S, resolution_ns=S) is None  # frozen at the flag
    assert c.next_change_ns(T0 + 300 * MS, resolution_ns=100 * MS) == T0 + 400 * MS


def test_next_change_during_us_delay() -> None:
    c = two(TimeControl.us_delay(10 * S, 2_500 * MS))
    c.start(0, T0)
    assert c.next_change_ns(T0, resolution_ns=S) == T0 + 500 * MS
    assert c.next_change_ns(T0 + 2 * S, resolution_ns=S) == T0 + 2_500 * MS
    assert c.next_change_ns(T0 + 2_500 * MS, resolution_ns=S) == T0 + 3_500 * MS


def test_overtime_control_validation() -> None:
    with pytest.raises(PegwatchError):
        Overtime(OvertimeKind.BYO_YOMI, 0)
    with pytest.raises(PegwatchError, match="move count"):
        TimeControl((Stage(MIN), Stage(MIN)))
    with pytest.raises(PegwatchError, match="last stage"):
        TimeControl((Stage(MIN, moves=40),))
    with pytest.raises(PegwatchError):
        Stage(-1)


def test_fide_90_40_worked_example_from_the_docs() -> None:
    c = Clock.from_preset("fide-90-40")
    c.start(0, T0)
    c.adjust(0, remaining_ns=12 * MIN + 40 * S, moves=39, at_ns=T0)
    c.press(0, T0 + 30 * S)  # move 40 with 12:10 left
    v = c.view(T0 + 30 * S)
    assert v.remaining_ns[0] == 42 * MIN + 40 * S  # 12:10 + 30 s + 30:00
    assert v.stage[0] == 1 and v.moves[0] == 40


def test_bronstein_pause_keeps_the_delay_left() -> None:
    c = two(TimeControl.bronstein(MIN, 10 * S))
    c.start(0, T0)
    c.pause(T0 + 4 * S)
    v = c.view(T0 + 50 * S)
    assert v.delay_left_ns[0] == 6 * S and v.remaining_ns[0] == MIN - 4 * S
    c.resume(T0 + 50 * S)
    c.press(0, T0 + 53 * S)  # 7 s used in all: all 7 come back
    assert c.view(T0 + 53 * S).remaining_ns[0] == MIN


def test_three_players_take_turns_in_index_order() -> None:
    c = Clock([TimeControl.sudden_death(MIN)] * 3)
    c.start(2, T0)
    assert c.press(2, T0 + S) is PressOutcome.ACCEPTED
    assert c.view(T0 + S).on_move == 0
    c.press(0, T0 + 2 * S)
    assert c.view(T0 + 2 * S).on_move == 1


def test_flag_of_a_player_adjusted_to_zero_falls_at_their_turn() -> None:
    c = Clock.from_preset("mensa-connection", players=4)
    c.adjust(1, remaining_ns=0, at_ns=T0)
    c.start(0, T0)
    c.press(0, T0 + 5 * S)
    v = c.view(T0 + 5 * S)
    assert v.flags == (1,) and v.flag_times_ns == (T0 + 5 * S,)
    assert v.on_move == 2


def test_events_journal_every_call_in_order() -> None:
    c = two(TimeControl.sudden_death(MIN))
    c.start(0, T0)
    c.press(1, T0 + S)
    c.press(0, T0 + 2 * S)
    c.adjust(0, moves=4, at_ns=T0 + 3 * S)
    c.undo(T0 + 4 * S)
    c.stop(T0 + 5 * S)
    assert [(e.kind, e.player, e.at_ns) for e in c.events] == [
        ("start", 0, T0),
        ("press", 1, T0 + S),
        ("press", 0, T0 + 2 * S),
        ("adjust", 0, T0 + 3 * S),
        ("undo", None, T0 + 4 * S),
        ("stop", None, T0 + 5 * S),
    ]
    assert c.events[3].moves == 4
    # A refused call is not journalled.
    with pytest.raises(ClockStateError):
        c.pause(T0 + 6 * S)
    assert len(c.events) == 6


def test_replay_skips_calls_that_were_refused() -> None:
    from pegwatch.rules.clock import ClockEvent

    journal = [
        ClockEvent("pause", T0 - S),  # refused: not started
        ClockEvent("start", T0, 0),
        ClockEvent("press", T0 + S, 5),  # refused: no such player
        ClockEvent("press", T0 + 2 * S, 0),
        ClockEvent("resume", T0 + 3 * S),  # refused: not paused
    ]
    c = Clock.replay([TimeControl.sudden_death(MIN)] * 2, journal)
    v = c.view(T0 + 4 * S)
    assert v.on_move == 1 and v.remaining_ns == (MIN - 2 * S, MIN - 2 * S)
    with pytest.raises(ClockStateError, match="unknown clock event kind"):
        c.apply(ClockEvent("explode", T0 + 5 * S))


# ----------------------------------------------------------------------
# Event kinds and the events' JSON


def test_event_kinds_are_their_strings() -> None:
    from pegwatch.rules.clock import ClockEvent, ClockEventKind

    assert ClockEventKind.PRESS == "press" and f"{ClockEventKind.UNDO}" == "undo"
    assert [k.value for k in ClockEventKind] == [
        "start", "press", "pause", "resume", "adjust", "undo", "stop",
    ]  # fmt: skip
    e = ClockEvent("adjust", T0, 1, remaining_ns=5 * S)
    assert e.kind is ClockEventKind.ADJUST and e.kind == "adjust"
    assert e == ClockEvent(ClockEventKind.ADJUST, T0, 1, 5 * S)
    c = two(TimeControl.sudden_death(MIN))
    c.start(0, T0)
    c.press(0, T0 + S)
    assert [type(e.kind) for e in c.events] == [ClockEventKind, ClockEventKind]
    assert [e.kind for e in c.events] == ["start", "press"]


@pytest.mark.parametrize("kind", ["explode", "Press", "", None, 3, ["press"]])
def test_unknown_event_kind_is_refused_at_construction(kind: object) -> None:
    from pegwatch.rules.clock import ClockEvent

    with pytest.raises(ClockStateError, match=r"^unknown clock event kind .*; known: start, press"):
        ClockEvent(kind, T0)  # type: ignore[arg-type]


def test_event_json_is_flat_and_symmetric() -> None:
    import json

    from pegwatch.rules.clock import ClockEvent

    press = ClockEvent("press", T0, 1)
    assert press.to_json() == {"kind": "press", "at_ns": T0, "player": 1}
    assert json.dumps(ClockEvent("undo", T0).to_json()) == f'{{"kind": "undo", "at_ns": {T0}}}'
    adjust = ClockEvent("adjust", T0, 0, remaining_ns=0, moves=3)
    assert ClockEvent.from_json(json.loads(json.dumps(adjust.to_json()))) == adjust
    assert ClockEvent.from_json({"kind": "press", "at_ns": T0, "player": 1, "moves": None}) == press


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (["press", 1], "must be a JSON object, got list"),
        ({"kind": "press"}, "'at_ns' is missing"),
        ({"at_ns": 1}, "'kind' is missing"),
        ({"kind": "press", "at_ns": 1, "who": 0}, "unknown key 'who'"),
        ({"kind": "explode", "at_ns": 1}, "unknown clock event kind 'explode'"),
        ({"kind": "press", "at_ns": "1"}, "at_ns: must be a whole number"),
        ({"kind": "press", "at_ns": 1.5}, "at_ns: must be a whole number"),
        ({"kind": "press", "at_ns": 1, "player": True}, "player: must be a whole number"),
    ],
)
def test_bad_event_json_is_one_clock_error(data: object, message: str) -> None:
    from pegwatch.rules.clock import ClockEvent

    with pytest.raises(ClockStateError, match=message) as info:
        ClockEvent.from_json(data)
    assert "\n" not in str(info.value)


def test_clock_modules_import_one_way() -> None:
    """No import cycle inside rules/clock: each module imports only those before it."""
    import ast
    from pathlib import Path

    import pegwatch.rules.clock as package

    order = ["errors", "durations", "controls", "state", "events", "transitions", "view",
             "presets", "engine", "__init__"]  # fmt: skip
    folder = Path(package.__file__).parent
    assert sorted(p.stem for p in folder.glob("*.py")) == sorted(order)
    for i, name in enumerate(order):
        tree = ast.parse((folder / f"{name}.py").read_text(encoding="utf-8"))
        used = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module == "pegwatch.rules.clock":
                    used.update(a.name for a in node.names)
                elif node.module.startswith("pegwatch.rules.clock."):
                    used.add(node.module.rsplit(".", 1)[1])
            elif isinstance(node, ast.Import):
                used.update(
                    a.name.rsplit(".", 1)[1]
                    for a in node.names
                    if a.name.startswith("pegwatch.rules.clock.")
                )
        assert used <= set(order[:i]), f"{name} imports {sorted(used - set(order[:i]))}"
