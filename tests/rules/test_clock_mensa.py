"""A whole Mensa Connection round on the pure clock: four players, the
flagged one skipped (seed 001). The match table runs Mastermind only, so
this clock is tested here, with the stamps a table would give it."""

from __future__ import annotations

from pegwatch.rules.clock.controls import TimeControl
from pegwatch.rules.clock.engine import Clock, ClockEvent, PressOutcome

S = 1_000_000_000
MIN = 60 * S
T0 = 1_000 * S  # monotonic clocks do not start at zero


def test_mensa_connection_four_players_skip_the_flagged() -> None:
    clock = Clock((TimeControl.sudden_death(20 * MIN),) * 4, freeze_at_flag=False,
                  skip_flagged=True)
    t = T0
    clock.start(0, t)  # the first-named player (Ann) starts
    assert clock.view(t).on_move == 0
    # A round: everyone plays once, 1 minute each, Cy thinks for 15.
    for player, think in ((0, 60), (1, 60), (2, 15 * 60), (3, 60)):
        t += think * S
        assert clock.press(player, t) is PressOutcome.ACCEPTED
    assert clock.view(t).remaining_ns == (19 * MIN, 19 * MIN, 5 * MIN, 19 * MIN)
    assert clock.view(t).on_move == 0
    for player in (0, 1):
        t += 60 * S
        clock.press(player, t)
    assert clock.view(t).on_move == 2
    # Cy runs out of time; Dee's clock starts at that exact instant.
    now = t + 5 * MIN + 3 * S
    view = clock.view(now)
    assert view.flags == (2,)
    assert view.flag_times_ns == (t + 5 * MIN,)
    assert view.on_move == 3 and view.running
    assert view.remaining_ns[3] == 19 * MIN - 3 * S
    # Cy's button no longer counts; the others play on, skipping Cy.
    now += S
    assert clock.press(2, now) is PressOutcome.FLAGGED
    assert clock.view(now).on_move == 3
    for player in (3, 0, 1):
        now += 30 * S
        assert clock.press(player, now) is PressOutcome.ACCEPTED
    assert clock.view(now).on_move == 3
    assert clock.view(now).flags == (2,)
    assert clock.apply(ClockEvent("press", now, 2)) is PressOutcome.FLAGGED
    assert clock.view(now).on_move == 3
