"""What a display reads: :class:`ClockView` snapshots and the next visible change.

Both are computed from a settled copy of the state and change nothing, so
a display thread may ask at any stamp while the event thread goes on.
"""

from __future__ import annotations

from dataclasses import dataclass

from pegwatch.rules.clock.controls import BronsteinCount, ControlMode, DelayKind, OvertimeKind
from pegwatch.rules.clock.durations import ceil_div, format_duration
from pegwatch.rules.clock.errors import ClockStateError
from pegwatch.rules.clock.state import ClockSetup, ClockState, StageExpiry
from pegwatch.rules.clock.transitions import settle


@dataclass(frozen=True)
class ClockView:
    """A snapshot of the clock at one instant, for displays and the journal.

    ``remaining_ns`` is what the player's display shows: main time, or in
    overtime the time left in the current byo-yomi period or Canadian block
    (0 once flagged). ``delay_left_ns`` is the US or Bronstein delay still
    available in the current turn (the full delay for players not on move).
    ``flags`` lists players in the order their flags fell and
    ``flag_times_ns`` the exact instants. ``count_up`` is true for a
    player whose display counts up (``remaining_ns`` is then the count
    shown). With the DGT reading of Bronstein the running player's
    ``remaining_ns`` includes the delay left, as the DGT 3000 shows it.
    """

    at_ns: int
    remaining_ns: tuple[int, ...]
    on_move: int | None
    running: bool
    paused: bool
    started: bool
    flags: tuple[int, ...]
    moves: tuple[int, ...]
    delay_left_ns: tuple[int, ...]
    stage: tuple[int, ...]
    overtime: tuple[str | None, ...]
    finished: bool
    flag_times_ns: tuple[int, ...] = ()
    used_ns: tuple[int, ...] = ()
    periods_left: tuple[int | None, ...] = ()
    stage_expiries: tuple[StageExpiry, ...] = ()
    stopped: bool = False
    count_up: tuple[bool, ...] = ()

    @property
    def players(self) -> int:
        """Number of players."""
        return len(self.remaining_ns)

    def is_flagged(self, player: int) -> bool:
        """True if *player*'s flag has fallen."""
        return player in self.flags


def view_at(setup: ClockSetup, state: ClockState, at: int) -> ClockView:
    """The view of *state* at *at* (not before the state's last event)."""
    s = settle(setup, state, at)
    remaining: list[int] = []
    delay_left: list[int] = []
    overtime: list[str | None] = []
    periods: list[int | None] = []
    for i, (p, tc) in enumerate(zip(s.players, setup.controls, strict=True)):
        stage = tc.stages[p.turn_stage]
        left = max(0, stage.delay_ns - p.turn_used_ns) if stage.delay_ns else 0
        if p.flag_at is not None:
            remaining.append(0)
        elif p.in_overtime:
            remaining.append(p.period_left_ns)
        elif _shows_delay(setup, s, i):
            remaining.append(p.main_ns + left)
        else:
            remaining.append(p.main_ns)
        delay_left.append(left)
        ot = tc.overtime
        if ot is None or not p.in_overtime:
            overtime.append(None)
            periods.append(
                None if ot is None or ot.kind is not OvertimeKind.BYO_YOMI else ot.periods
            )
        elif ot.kind is OvertimeKind.BYO_YOMI:
            overtime.append(f"byo-yomi {p.periods_left}×{format_duration(ot.period_ns)}")
            periods.append(p.periods_left)
        else:
            overtime.append(f"{ot.moves - p.block_moves} moves in {format_duration(ot.period_ns)}")
            periods.append(None)
    return ClockView(
        at_ns=at,
        remaining_ns=tuple(remaining),
        on_move=None if not s.started or s.finished else s.on_move,
        running=s.running,
        paused=s.paused and not s.finished,
        started=s.started,
        flags=s.flags,
        moves=tuple(p.moves for p in s.players),
        delay_left_ns=tuple(delay_left),
        stage=tuple(p.stage for p in s.players),
        overtime=tuple(overtime),
        finished=s.finished,
        flag_times_ns=s.flag_times,
        used_ns=tuple(p.used_ns for p in s.players),
        periods_left=tuple(periods),
        stage_expiries=s.expiries,
        stopped=s.stopped,
        count_up=tuple(tc.mode is ControlMode.COUNT_UP for tc in setup.controls),
    )


def _shows_delay(setup: ClockSetup, s: ClockState, i: int) -> bool:
    """True if player *i*'s display adds the delay left to the main time (DGT Bronstein)."""
    p = s.players[i]
    stage = setup.controls[i].stages[p.turn_stage]
    return (
        setup.readings.bronstein is BronsteinCount.DGT
        and stage.delay_kind is DelayKind.BRONSTEIN
        and stage.delay_ns > 0
        and s.started
        and not s.finished
        and s.on_move == i
    )


def next_change_at(
    setup: ClockSetup, state: ClockState, at: int, resolution_ns: int
) -> int | None:
    """The next stamp after *at* at which the display or a flag changes.

    See :meth:`~pegwatch.rules.clock.engine.Clock.next_change_ns`.
    """
    if resolution_ns <= 0:
        raise ClockStateError(f"resolution_ns must be > 0, got {resolution_ns}")
    s = settle(setup, state, at)
    if not s.running:
        return None
    p = s.players[s.on_move]
    if p.flag_at is not None:
        return None
    tc = setup.controls[s.on_move]
    if tc.mode is ControlMode.COUNT_UP:
        # Counting up, the shown figure changes when a whole step is reached.
        return at + (resolution_ns - p.main_ns % resolution_ns)
    stage = tc.stages[p.turn_stage]
    quantities: list[int] = []
    delay_left = max(0, stage.delay_ns - p.turn_used_ns) if stage.delay_ns else 0
    if not p.in_overtime and _shows_delay(setup, s, s.on_move):
        quantities.append(p.main_ns + delay_left)
    elif delay_left and setup.readings.counts_delay_first(stage):
        quantities.append(delay_left)
    else:
        quantities.append(p.period_left_ns if p.in_overtime else p.main_ns)
        if delay_left:
            quantities.append(delay_left)
    steps = [q - (ceil_div(q, resolution_ns) - 1) * resolution_ns for q in quantities if q > 0]
    # After settling, the running quantity is always > 0; the fallback
    # only guards a display loop against spinning.
    return at + (min(steps) if steps else resolution_ns)


__all__ = ["ClockView", "next_change_at", "view_at"]
