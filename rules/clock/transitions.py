"""The clock's pure transitions: one :class:`ClockState` and an event in, the next out.

Nothing here keeps anything: every function takes the clock's
:class:`ClockSetup` (controls and flag rules) and a state, and returns a
new state. The :class:`~pegwatch.rules.clock.engine.Clock` checks its
arguments, calls these and keeps the event log; :mod:`.view` reads the
states for displays.

Flags are lazy: a flag falls at the exact instant the running player's
available time runs out (``turn start + available``). :func:`settle`
charges the running player up to a stamp and lets every flag on the way
fall at its exact instant, so the same events always give the same state
however often, and at whatever stamps, the display looked at the clock.
"""

from __future__ import annotations

import logging
from dataclasses import replace

from pegwatch.rules.clock.controls import (
    DEFAULT_READINGS,
    ClockReadings,
    ControlMode,
    DelayKind,
    OvertimeKind,
    StageAddAtFlag,
    StageAdvance,
    TimeControl,
)
from pegwatch.rules.clock.errors import ClockStateError
from pegwatch.rules.clock.events import ClockEvent, ClockEventKind
from pegwatch.rules.clock.state import (
    ClockSetup,
    ClockState,
    PlayerState,
    PressOutcome,
    StageExpiry,
    bump,
    put,
)

# The engine's logger, as before the split, so that log filters keep working.
logger = logging.getLogger("pegwatch.rules.clock.engine")


def run(
    p: PlayerState,
    tc: TimeControl,
    elapsed: int,
    start_ns: int,
    index: int,
    readings: ClockReadings = DEFAULT_READINGS,
) -> tuple[PlayerState, int | None, tuple[StageExpiry, ...]]:
    """Charge *elapsed* ns of running time to one player.

    Returns the new state, the offset into *elapsed* at which the flag fell
    (the player is charged only up to it) or ``None``, and any FIDE-style
    stage expiries on the way. Splitting *elapsed* into parts and running
    them one after another gives the same result: the state carries all the
    progress (delay used, periods left), which is what makes lazy flags and
    settling at arbitrary stamps exact.
    """
    if p.flag_at is not None:
        # A flagged player who keeps running (no freeze, no skip) shows 0.
        return (
            replace(p, used_ns=p.used_ns + elapsed, turn_used_ns=p.turn_used_ns + elapsed),
            None,
            (),
        )
    if tc.mode is ControlMode.COUNT_UP:
        # The display counts the time used; nothing ever runs out.
        return (
            replace(
                p,
                main_ns=p.main_ns + elapsed,
                used_ns=p.used_ns + elapsed,
                turn_used_ns=p.turn_used_ns + elapsed,
            ),
            None,
            (),
        )
    rest = elapsed
    offset = 0
    main, st, in_ot = p.main_ns, p.stage, p.in_overtime
    periods_left, period_left, block_moves = p.periods_left, p.period_left_ns, p.block_moves
    expiries: list[StageExpiry] = []
    flag: int | None = None
    ot = tc.overtime
    # The delay in force is that of the stage the turn began in, measured
    # against the time used this turn: a stage added mid-move (at the flag)
    # brings no delay of its own until the next move.
    turn_stage = tc.stages[p.turn_stage]
    # Bronstein adds nothing to an overtime period in either reading (the
    # default one gives it back on the press only outside overtime), so the
    # DGT reading spends no delay there either: the display shows none.
    delay_first = readings.counts_delay_first(turn_stage) and not (
        p.in_overtime and turn_stage.delay_kind is DelayKind.BRONSTEIN
    )
    while True:
        if delay_first:
            free = max(0, turn_stage.delay_ns - p.turn_used_ns - offset)
            spent = min(free, rest)
            rest -= spent
            offset += spent
            if spent < free:
                break  # still inside the delay: the main time waits
        if not in_ot:
            if main > rest:
                main -= rest
                offset += rest
                break
            # Time reaches zero at offset + main: the half-open interval of
            # available time ends exactly there.
            offset += main
            rest -= main
            main = 0
            if tc.advance is StageAdvance.FLAG and st + 1 < len(tc.stages):
                expiries.append(
                    StageExpiry(index, st, start_ns + offset, p.moves, tc.stage_end_moves(st))
                )
                st += 1
                main = tc.stages[st].time_ns
                continue
            if ot is not None:
                in_ot = True
                periods_left = ot.periods
                period_left = ot.period_ns
                block_moves = 0
                continue
            flag = offset
            break
        assert ot is not None
        if period_left > rest:
            period_left -= rest
            offset += rest
            break
        offset += period_left
        rest -= period_left
        period_left = 0
        if ot.kind is OvertimeKind.BYO_YOMI:
            periods_left -= 1
            if periods_left > 0:
                period_left = ot.period_ns
                continue
        flag = offset
        break
    new = replace(
        p,
        main_ns=main,
        stage=st,
        in_overtime=in_ot,
        periods_left=periods_left,
        period_left_ns=period_left,
        block_moves=block_moves,
        used_ns=p.used_ns + offset,
        turn_used_ns=p.turn_used_ns + offset,
    )
    return new, flag, tuple(expiries)


def begin_turn(p: PlayerState) -> PlayerState:
    """*p* at the start of a turn: nothing used yet, in the stage they are in now."""
    return replace(p, turn_used_ns=0, turn_stage=p.stage)


def _share(
    setup: ClockSetup, state: ClockState, i: int, before: PlayerState, expiries: tuple[StageExpiry, ...]
) -> ClockState:
    """What player *i*'s running does to the others: hourglass time, stages added to both."""
    tc = setup.controls[i]
    both = bool(expiries) and setup.readings.stage_at_flag is StageAddAtFlag.BOTH
    if tc.mode is not ControlMode.HOURGLASS and not both:
        return state  # the common case: nothing to share, nothing copied
    players = state.players
    if tc.mode is ControlMode.HOURGLASS and before.flag_at is None:
        gained = players[i].used_ns - before.used_ns
        if gained:
            j = (i + 1) % setup.players
            players = put(players, j, replace(players[j], main_ns=players[j].main_ns + gained))
    if both:
        for e in expiries:
            for j, q in enumerate(players):
                tj = setup.controls[j]
                if (
                    j != i
                    and q.stage == e.stage
                    and tj.advance is StageAdvance.FLAG
                    and e.stage + 1 < len(tj.stages)
                ):
                    st = e.stage + 1
                    players = put(
                        players,
                        j,
                        replace(q, stage=st, turn_stage=st, main_ns=q.main_ns + tj.stages[st].time_ns),
                    )
    return replace(state, players=players)


def next_player(setup: ClockSetup, state: ClockState, after: int) -> int | None:
    """Who runs after *after*: the next index, skipping flagged players with ``skip_flagged``."""
    n = setup.players
    for k in range(1, n + 1):
        j = (after + k) % n
        if not setup.skip_flagged or state.players[j].flag_at is None:
            return j
    return None


def settle(setup: ClockSetup, state: ClockState, at: int) -> ClockState:
    """Charge the running player up to *at*, letting flags fall on the way."""
    if at < state.since_ns:  # pragma: no cover - callers clamp stamps
        at = state.since_ns
    while state.running:
        i = state.on_move
        before = state.players[i]
        p, flag, expiries = run(
            before, setup.controls[i], at - state.since_ns, state.since_ns, i, setup.readings
        )
        state = replace(
            state, players=put(state.players, i, p), expiries=state.expiries + expiries
        )
        state = _share(setup, state, i, before, expiries)
        if flag is None:
            return replace(state, since_ns=at)
        fell = state.since_ns + flag
        state = replace(
            state,
            players=put(state.players, i, replace(p, flag_at=fell)),
            flags=(*state.flags, i),
            flag_times=(*state.flag_times, fell),
            since_ns=fell,
        )
        logger.debug("flag of player %d fell at %d", i, fell)
        if setup.freeze_at_flag:
            return replace(state, frozen=True)
        if setup.skip_flagged:
            nxt = next_player(setup, state, i)
            if nxt is None:
                return state
            state = replace(
                state,
                on_move=nxt,
                players=put(state.players, nxt, begin_turn(state.players[nxt])),
            )
        # Otherwise the flagged player runs on at zero until they press;
        # the next round charges them the rest of the span.
    return state


def judge(setup: ClockSetup, state: ClockState, player: int, at: int) -> PressOutcome:
    """What a press by *player* at *at* would be, on a settled state."""
    if not state.started:
        return PressOutcome.NOT_STARTED
    if state.finished:
        return PressOutcome.FINISHED
    last = state.last_accept_ns[player]
    if last is not None and at - last < setup.debounce_ns:
        return PressOutcome.BOUNCE
    if state.paused:
        return PressOutcome.PAUSED
    if player != state.on_move:
        if setup.skip_flagged and state.players[player].flag_at is not None:
            return PressOutcome.FLAGGED
        return PressOutcome.NOT_ON_MOVE
    return PressOutcome.ACCEPTED


def count(state: ClockState, player: int, outcome: PressOutcome) -> ClockState:
    """Count an ignored press (not on move, or a bounce)."""
    if outcome is PressOutcome.NOT_ON_MOVE:
        return replace(state, ignored=bump(state.ignored, player))
    if outcome is PressOutcome.BOUNCE:
        return replace(state, bounces=bump(state.bounces, player))
    return state


def accept(setup: ClockSetup, state: ClockState, i: int, at: int) -> ClockState:
    """Player *i* ends their move at *at*: increment, delay, stage, period; the next one runs."""
    p = state.players[i]
    tc = setup.controls[i]
    stage = tc.stages[p.stage]
    moves = p.moves + 1
    if p.flag_at is None:
        ot = tc.overtime
        if not p.in_overtime:
            main = p.main_ns
            turn_stage = tc.stages[p.turn_stage]
            if (
                turn_stage.delay_kind is DelayKind.BRONSTEIN
                and not setup.readings.counts_delay_first(turn_stage)
            ):
                # The delay of the stage the move began in, and only the time
                # the move used: never more than the move began with.
                main += min(turn_stage.delay_ns, p.turn_used_ns)
            main += stage.increment_ns
            st = p.stage
            if tc.advance is StageAdvance.MOVES:
                while st + 1 < len(tc.stages):
                    end = tc.stage_end_moves(st)
                    if end is None or moves < end:
                        break
                    st += 1
                    main += tc.stages[st].time_ns
            p = replace(p, main_ns=main, stage=st)
        elif ot is not None and ot.kind is OvertimeKind.BYO_YOMI:
            p = replace(p, period_left_ns=ot.period_ns)
        elif ot is not None:
            block = p.block_moves + 1
            if block >= ot.moves:
                p = replace(p, block_moves=0, period_left_ns=ot.period_ns)
            else:
                p = replace(p, block_moves=block)
    # No increment, delay or period reset once the flag has fallen.
    p = replace(p, moves=moves, turn_used_ns=0, turn_stage=p.stage)  # begin_turn, one copy
    players = put(state.players, i, p)
    state = replace(state, players=players, last_accept_ns=put(state.last_accept_ns, i, at))
    nxt = next_player(setup, state, i)
    if nxt is None:  # pragma: no cover - the presser is on move, so not flagged-and-skipped
        return state
    return replace(
        state,
        on_move=nxt,
        since_ns=at,
        players=put(state.players, nxt, begin_turn(state.players[nxt])),
    )


# ----------------------------------------------------------------------
# One function per event kind. Arguments are already checked by the Clock;
# a call that makes no sense in this state raises ClockStateError.


def start(state: ClockState, player: int, at: int) -> ClockState:
    """*player*'s time starts running at *at*."""
    return replace(state, started=True, on_move=player, since_ns=at)


def press(
    setup: ClockSetup, state: ClockState, player: int, at: int
) -> tuple[ClockState, PressOutcome]:
    """*player* presses at *at*: the new state and what became of the press."""
    state = settle(setup, state, at)
    outcome = judge(setup, state, player, at)
    if outcome is PressOutcome.ACCEPTED:
        return accept(setup, state, player, at), outcome
    logger.debug("press by player %d at %d ignored: %s", player, at, outcome.value)
    return count(state, player, outcome), outcome


def pause(setup: ClockSetup, state: ClockState, at: int) -> ClockState:
    """Arbiter: every clock stops at *at*."""
    state = settle(setup, state, at)
    if not state.started:
        raise ClockStateError("the clock has not been started")
    if state.finished:
        raise ClockStateError("the game is over on the clock")
    if state.paused:
        raise ClockStateError("the clock is already paused")
    return replace(state, paused=True, since_ns=at)


def resume(state: ClockState, at: int) -> ClockState:
    """Arbiter: the paused player's time runs again from *at*."""
    if not state.paused or state.finished:
        raise ClockStateError("the clock is not paused")
    return replace(state, paused=False, since_ns=at)


def adjust(
    setup: ClockSetup,
    state: ClockState,
    player: int,
    remaining_ns: int | None,
    moves: int | None,
    at: int,
    stage: int | None = None,
) -> ClockState:
    """Arbiter: set *player*'s main time, move counter and/or stage at *at*."""
    state = settle(setup, state, at)
    p = state.players[player]
    if moves is not None:
        p = replace(p, moves=moves)
    if stage is not None:
        # The DGT's pause mode sets the period: its delay applies at once.
        p = replace(p, stage=stage, turn_stage=stage)
    flags, times, frozen = state.flags, state.flag_times, state.frozen
    paused = state.paused
    if remaining_ns is not None:
        p = replace(
            p,
            main_ns=remaining_ns,
            in_overtime=False,
            periods_left=0,
            period_left_ns=0,
            block_moves=0,
        )
        if p.flag_at is not None and remaining_ns > 0:
            k = flags.index(player)
            flags = flags[:k] + flags[k + 1 :]
            times = times[:k] + times[k + 1 :]
            p = replace(p, flag_at=None)
            if frozen and not flags:
                frozen, paused = False, True
            elif not frozen and state.started and not state.stopped and state.all_flagged:
                # Everyone had flagged: play resumes from a pause.
                paused = True
    return replace(
        state,
        players=put(state.players, player, p),
        flags=flags,
        flag_times=times,
        frozen=frozen,
        paused=paused,
    )


def stop(setup: ClockSetup, state: ClockState, at: int) -> ClockState:
    """The game ends on the clock at *at*."""
    return replace(settle(setup, state, at), stopped=True, since_ns=at)


def reapply(
    setup: ClockSetup, state: ClockState, event: ClockEvent, outcome: PressOutcome | None
) -> ClockState:
    """Apply an effective event again during an undo, with its old outcome.

    *event* carries the effective stamp. A press is not judged again: it
    has the *outcome* it had the first time.
    """
    at = event.at_ns
    k = event.kind
    if k is ClockEventKind.START:
        assert event.player is not None
        return start(state, event.player, at)
    if k is ClockEventKind.PRESS:
        assert event.player is not None and outcome is not None
        state = settle(setup, state, at)
        if outcome is PressOutcome.ACCEPTED:
            return accept(setup, state, event.player, at)
        return count(state, event.player, outcome)
    if k is ClockEventKind.ADJUST:
        assert event.player is not None
        return adjust(setup, state, event.player, event.remaining_ns, event.moves, at, event.stage)
    if k is ClockEventKind.STOP:
        return stop(setup, state, at)
    # An undo is never effective, so never replayed. An arbiter pause or
    # resume that no longer fits the corrected history (say the
    # mis-pressing player's flag fell before it) is dropped.
    try:
        if k is ClockEventKind.PAUSE:
            return pause(setup, state, at)
        return resume(state, at)
    except ClockStateError:
        logger.debug("undo: %s at %d no longer applies", k, at)
        return state
