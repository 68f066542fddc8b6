"""The game clock: integer-nanosecond state driven by stamped events.

Nothing here reads a clock. Every method takes the ``time.monotonic_ns()``
stamp of the event, and remaining time is always *computed* from stamps:
the running player is charged ``at_ns - since_ns`` exactly when something
happens, so the time between the last display tick and a press is never
lost (the lichess-mobile bug) and nothing drifts (the per-tick decrement
bug).

Flags are lazy: a flag falls at the exact instant the running player's
available time runs out (``turn start + available``). :meth:`Clock.view`
shows it at any later stamp without changing anything; the next event
(press, pause, ...) settles it into the state at its exact instant, so the
same list of events always gives the same state however often, and at
whatever stamps, the display looked at the clock.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pegwatch.rules.clock.controls import DelayKind, OvertimeKind, StageAdvance, TimeControl
from pegwatch.rules.clock.durations import ceil_div, format_duration
from pegwatch.rules.clock.errors import ClockError, ClockStateError, InvalidPlayerError
from pegwatch.rules.clock.presets import ClockPreset, get_preset
from pegwatch.rules.clock.state import (
    DEFAULT_DEBOUNCE_NS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    ClockState,
    PlayerState,
    PressOutcome,
    StageExpiry,
    bump,
    put,
)

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ClockEvent:
    """One call made on a :class:`Clock`, as journalled and replayed.

    ``kind`` is one of ``start``, ``press``, ``pause``, ``resume``,
    ``adjust``, ``undo``, ``stop``.
    """

    kind: str
    at_ns: int
    player: int | None = None
    remaining_ns: int | None = None
    moves: int | None = None


@dataclass(frozen=True)
class ClockView:
    """A snapshot of the clock at one instant, for displays and the journal.

    ``remaining_ns`` is what the player's display shows: main time, or in
    overtime the time left in the current byo-yomi period or Canadian block
    (0 once flagged). ``delay_left_ns`` is the US or Bronstein delay still
    available in the current turn (the full delay for players not on move).
    ``flags`` lists players in the order their flags fell and
    ``flag_times_ns`` the exact instants.
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

    @property
    def players(self) -> int:
        """Number of players."""
        return len(self.remaining_ns)

    def is_flagged(self, player: int) -> bool:
        """True if *player*'s flag has fallen."""
        return player in self.flags


_Entry = tuple[ClockEvent, "PressOutcome | None", ClockState]


def _run(
    p: PlayerState, tc: TimeControl, elapsed: int, start_ns: int, index: int
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
    rest = elapsed
    offset = 0
    main, st, in_ot = p.main_ns, p.stage, p.in_overtime
    periods_left, period_left, block_moves = p.periods_left, p.period_left_ns, p.block_moves
    expiries: list[StageExpiry] = []
    flag: int | None = None
    ot = tc.overtime
    while True:
        stage = tc.stages[st]
        if stage.delay_ns and stage.delay_kind is DelayKind.US:
            # Checked again after a stage change: the delay in force is the
            # current stage's, measured against the time used this turn.
            free = max(0, stage.delay_ns - p.turn_used_ns - offset)
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


class Clock:
    """A chess-style clock for 2 to 4 players, pure and exact.

    *controls* gives one :class:`TimeControl` per player; players take turns
    in index order from the one :meth:`start` is given. With
    *freeze_at_flag* (FIDE) the whole clock stops at the first flag; without
    it (US Chess) play goes on. With *skip_flagged* (Mensa Connection) a
    player whose flag falls is skipped and the next player's clock starts at
    that exact instant.

    Stamps must come from ``time.monotonic_ns()``. Events are applied in
    call order; a stamp earlier than the previous event's is taken as
    simultaneous with it (so a late-arriving press is never lost).
    """

    def __init__(
        self,
        controls: Sequence[TimeControl],
        *,
        debounce_ns: int = DEFAULT_DEBOUNCE_NS,
        freeze_at_flag: bool = True,
        skip_flagged: bool = False,
    ) -> None:
        controls = tuple(controls)
        if not MIN_PLAYERS <= len(controls) <= MAX_PLAYERS:
            raise InvalidPlayerError(
                f"a clock has {MIN_PLAYERS} to {MAX_PLAYERS} players, got {len(controls)} time controls"
            )
        for i, tc in enumerate(controls):
            if not isinstance(tc, TimeControl):
                raise InvalidPlayerError(f"player {i}: {tc!r} is not a TimeControl")
        if debounce_ns < 0:
            raise ClockStateError(f"debounce_ns must be >= 0, got {debounce_ns}")
        self._controls = controls
        self._debounce_ns = debounce_ns
        self._freeze_at_flag = freeze_at_flag
        self._skip_flagged = skip_flagged
        n = len(controls)
        self._initial = ClockState(
            players=tuple(PlayerState(main_ns=tc.initial_ns) for tc in controls),
            last_accept_ns=(None,) * n,
            ignored=(0,) * n,
            bounces=(0,) * n,
        )
        self._state = self._initial
        self._last_at: int | None = None
        self._events: list[ClockEvent] = []
        # What rebuilds the state on undo: effective events with the outcome
        # each had (so replaying never re-judges an old press) and the state
        # after each (so an undo replays only the events since the press).
        self._effective: list[_Entry] = []

    # ------------------------------------------------------------------
    # Construction helpers

    @classmethod
    def from_preset(
        cls,
        preset: ClockPreset | str,
        *,
        players: int = 2,
        roles: Sequence[str] | None = None,
        **options: Any,
    ) -> Clock:
        """Build a clock from a preset (or a preset name).

        Player ``i`` gets the control of ``roles[i]``; without *roles* a
        preset with one role gives it to everybody and a preset with one
        role per player uses its own role order. *options* (``debounce_ns``,
        ``freeze_at_flag``, ``skip_flagged``) override the preset's defaults.
        """
        p = get_preset(preset) if isinstance(preset, str) else preset
        controls = p.controls_for(players, roles)
        kwargs: dict[str, Any] = {
            "freeze_at_flag": p.freeze_at_flag,
            "skip_flagged": p.skip_flagged,
        }
        unknown = set(options) - {"debounce_ns", "freeze_at_flag", "skip_flagged"}
        if unknown:
            raise ClockStateError(f"unknown clock option(s): {', '.join(sorted(unknown))}")
        kwargs.update(options)
        return cls(controls, **kwargs)

    @classmethod
    def replay(
        cls, controls: Sequence[TimeControl], events: Iterable[ClockEvent], **options: Any
    ) -> Clock:
        """Build a clock and apply *events* in order (after a power cut).

        Events that were refused when first applied (a :class:`ClockError`)
        are refused again and skipped, so the result is identical.
        """
        clock = cls(controls, **options)
        for event in events:
            with contextlib.suppress(ClockError):
                clock.apply(event)
        return clock

    def apply(self, event: ClockEvent) -> PressOutcome | None:
        """Apply one journalled event; returns the outcome for presses."""
        k = event.kind
        if k == "press":
            return self.press(self._need_player(event), event.at_ns)
        if k == "start":
            self.start(self._need_player(event), event.at_ns)
        elif k == "pause":
            self.pause(event.at_ns)
        elif k == "resume":
            self.resume(event.at_ns)
        elif k == "adjust":
            self.adjust(
                self._need_player(event),
                remaining_ns=event.remaining_ns,
                moves=event.moves,
                at_ns=event.at_ns,
            )
        elif k == "undo":
            self.undo(event.at_ns)
        elif k == "stop":
            self.stop(event.at_ns)
        else:
            raise ClockStateError(f"unknown clock event kind {k!r}")
        return None

    @staticmethod
    def _need_player(event: ClockEvent) -> int:
        if event.player is None:
            raise InvalidPlayerError(f"clock event {event.kind!r} at {event.at_ns} needs a player")
        return event.player

    # ------------------------------------------------------------------
    # Read-only attributes

    @property
    def players(self) -> int:
        """Number of players (2 to 4)."""
        return len(self._controls)

    @property
    def debounce_ns(self) -> int:
        """A second press by the same player within this of an accepted one is a bounce."""
        return self._debounce_ns

    @property
    def freeze_at_flag(self) -> bool:
        """True if every clock stops at the first flag (FIDE)."""
        return self._freeze_at_flag

    @property
    def skip_flagged(self) -> bool:
        """True if a flagged player is skipped and the others play on (Mensa Connection)."""
        return self._skip_flagged

    @property
    def controls(self) -> tuple[TimeControl, ...]:
        """The time control of each player."""
        return self._controls

    @property
    def events(self) -> tuple[ClockEvent, ...]:
        """Every event applied so far, in order, for journalling and :meth:`replay`."""
        return tuple(self._events)

    @property
    def flags(self) -> tuple[int, ...]:
        """Players in the order their flags fell, as of the last event.

        Use ``view(now).flags`` to also see a flag that fell since then.
        """
        return self._state.flags

    @property
    def ignored_presses(self) -> tuple[int, ...]:
        """Per player, presses ignored because the player was not on move."""
        return self._state.ignored

    @property
    def bounces(self) -> tuple[int, ...]:
        """Per player, presses ignored as contact bounce."""
        return self._state.bounces

    @property
    def started(self) -> bool:
        """True once :meth:`start` has been called."""
        return self._state.started

    @property
    def last_event_ns(self) -> int | None:
        """Stamp of the last event applied (``None`` before any)."""
        return self._last_at

    # ------------------------------------------------------------------
    # Events

    def start(self, player: int, at_ns: int) -> None:
        """Start the clock with *player*'s time running.

        MSO Mastermind: the codemaker starts the codebreaker's clock, so
        *player* is the codebreaker.
        """
        self._check_player(player)
        if self._state.started:
            raise ClockStateError("the clock has already been started")
        at = self._stamp(at_ns)
        self._state = self._do_start(self._state, player, at)
        self._record(ClockEvent("start", at_ns, player), at, None)

    def press(self, player: int, at_ns: int) -> PressOutcome:
        """*player* presses their button: ends their turn if they are on move."""
        self._check_player(player)
        at = self._stamp(at_ns)
        state = self._settle(self._state, at)
        outcome = self._judge(state, player, at)
        if outcome is PressOutcome.ACCEPTED:
            state = self._accept(state, player, at)
        else:
            state = self._count(state, player, outcome)
            logger.debug("press by player %d at %d ignored: %s", player, at, outcome.value)
        self._state = state
        self._record(ClockEvent("press", at_ns, player), at, outcome)
        return outcome

    def pause(self, at_ns: int) -> None:
        """Arbiter: stop all clocks; :meth:`resume` continues with the same player."""
        at = self._stamp(at_ns)
        state = self._do_pause(self._settle(self._state, at), at)
        self._state = state
        self._record(ClockEvent("pause", at_ns), at, None)

    def resume(self, at_ns: int) -> None:
        """Arbiter: continue after :meth:`pause`; the delay left is kept."""
        at = self._stamp(at_ns)
        state = self._do_resume(self._state, at)
        self._state = state
        self._record(ClockEvent("resume", at_ns), at, None)

    def adjust(
        self,
        player: int,
        *,
        remaining_ns: int | None = None,
        moves: int | None = None,
        at_ns: int,
    ) -> None:
        """Arbiter: set *player*'s main time left and/or their move counter.

        Setting ``remaining_ns`` puts the player back in main time of their
        current stage (overtime starts afresh when it runs out). Giving a
        flagged player time above zero lifts their flag; a clock frozen by
        that flag is left paused for the arbiter to resume.
        """
        self._check_player(player)
        if remaining_ns is not None and (isinstance(remaining_ns, bool) or remaining_ns < 0):
            raise ClockStateError(
                f"remaining time for player {player} must be >= 0 ns, got {remaining_ns}"
            )
        if moves is not None and (isinstance(moves, bool) or moves < 0):
            raise ClockStateError(f"move count for player {player} must be >= 0, got {moves}")
        at = self._stamp(at_ns)
        self._state = self._do_adjust(self._settle(self._state, at), player, remaining_ns, moves)
        self._record(ClockEvent("adjust", at_ns, player, remaining_ns, moves), at, None)

    def undo(self, at_ns: int) -> None:
        """Arbiter: undo the last accepted press (a mis-press).

        The clock returns to the state just before that press, as if it had
        never happened: the player who pressed by mistake was running all
        along and is charged the running time since (pauses excluded), and
        the player who was started by mistake gets that time back. Ignored
        presses stay counted. Repeated undos go back press by press.
        """
        at = self._stamp(at_ns)
        if self._state.stopped:
            raise ClockStateError("the clock has been stopped; nothing to undo")
        index = next(
            (
                i
                for i in range(len(self._effective) - 1, -1, -1)
                if self._effective[i][1] is PressOutcome.ACCEPTED
            ),
            None,
        )
        if index is None:
            raise ClockStateError("no accepted press to undo")
        base = self._effective[index - 1][2] if index else self._initial
        kept = self._effective[:index]
        for event, outcome, _ in self._effective[index + 1 :]:
            base = self._reapply(base, event, outcome)
            kept.append((event, outcome, base))
        self._state = base
        self._effective = kept
        self._events.append(ClockEvent("undo", at_ns))
        self._last_at = at

    def stop(self, at_ns: int) -> None:
        """End the game on the clock (e.g. the code was solved); nothing runs after."""
        at = self._stamp(at_ns)
        if not self._state.started:
            raise ClockStateError("the clock has not been started")
        self._state = replace(self._settle(self._state, at), stopped=True, since_ns=at)
        self._record(ClockEvent("stop", at_ns), at, None)

    # ------------------------------------------------------------------
    # Queries

    def view(self, at_ns: int) -> ClockView:
        """A snapshot at *at_ns*; never changes the clock.

        A stamp before the last event is read as the last event's stamp.
        """
        s, at = self._snapshot(at_ns)
        s = self._settle(s, at)
        remaining: list[int] = []
        delay_left: list[int] = []
        overtime: list[str | None] = []
        periods: list[int | None] = []
        for p, tc in zip(s.players, self._controls, strict=True):
            stage = tc.stages[p.stage]
            if p.flag_at is not None:
                remaining.append(0)
            else:
                remaining.append(p.period_left_ns if p.in_overtime else p.main_ns)
            delay_left.append(max(0, stage.delay_ns - p.turn_used_ns) if stage.delay_ns else 0)
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
                overtime.append(
                    f"{ot.moves - p.block_moves} moves in {format_duration(ot.period_ns)}"
                )
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
        )

    def next_change_ns(self, at_ns: int, *, resolution_ns: int) -> int | None:
        """The next stamp after *at_ns* at which the display or a flag changes.

        Displays are taken to show each time rounded *up* to
        *resolution_ns* (``ceil(remaining / resolution)``), so that a
        display shows zero exactly when the flag falls. The answer covers
        the running player's time, delay, stage, period and flag; it is
        ``None`` when nothing runs (not started, paused, finished, or a
        flagged player running on at zero). A display loop can sleep until
        it instead of polling.
        """
        if resolution_ns <= 0:
            raise ClockStateError(f"resolution_ns must be > 0, got {resolution_ns}")
        s, at = self._snapshot(at_ns)
        s = self._settle(s, at)
        if not s.running:
            return None
        p = s.players[s.on_move]
        if p.flag_at is not None:
            return None
        tc = self._controls[s.on_move]
        stage = tc.stages[p.stage]
        quantities: list[int] = []
        delay_left = max(0, stage.delay_ns - p.turn_used_ns) if stage.delay_ns else 0
        if delay_left and stage.delay_kind is DelayKind.US:
            quantities.append(delay_left)
        else:
            quantities.append(p.period_left_ns if p.in_overtime else p.main_ns)
            if delay_left:
                quantities.append(delay_left)
        steps = [q - (ceil_div(q, resolution_ns) - 1) * resolution_ns for q in quantities if q > 0]
        # After settling, the running quantity is always > 0; the fallback
        # only guards a display loop against spinning.
        return at + (min(steps) if steps else resolution_ns)

    # ------------------------------------------------------------------
    # Internals

    def _snapshot(self, at_ns: int) -> tuple[ClockState, int]:
        # One read of the immutable state, so a display thread may call
        # view() while another thread applies events; a stamp before the
        # state's last event is read as that event's stamp.
        state = self._state
        last = self._last_at
        at = max(at_ns, state.since_ns) if last is None else max(at_ns, state.since_ns, last)
        return state, at

    def _check_player(self, player: int) -> None:
        if (
            isinstance(player, bool)
            or not isinstance(player, int)
            or not 0 <= player < self.players
        ):
            raise InvalidPlayerError(f"player {player!r} is not one of 0..{self.players - 1}")

    def _stamp(self, at_ns: int) -> int:
        if isinstance(at_ns, bool) or not isinstance(at_ns, int):
            raise ClockStateError(f"stamp {at_ns!r} is not integer nanoseconds")
        if self._last_at is not None and at_ns < self._last_at:
            logger.debug(
                "stamp %d before last event %d: taken as simultaneous", at_ns, self._last_at
            )
            return self._last_at
        return at_ns

    def _record(self, event: ClockEvent, at: int, outcome: PressOutcome | None) -> None:
        # Callers have already moved self._state past the event.
        self._events.append(event)
        self._effective.append((replace(event, at_ns=at), outcome, self._state))
        self._last_at = at

    def _reapply(self, state: ClockState, event: ClockEvent, outcome: PressOutcome | None) -> ClockState:
        """Apply an effective event again during an undo, with its old outcome."""
        at = event.at_ns
        k = event.kind
        if k == "start":
            assert event.player is not None
            return self._do_start(state, event.player, at)
        if k == "press":
            assert event.player is not None and outcome is not None
            state = self._settle(state, at)
            if outcome is PressOutcome.ACCEPTED:
                return self._accept(state, event.player, at)
            return self._count(state, event.player, outcome)
        if k == "adjust":
            assert event.player is not None
            return self._do_adjust(
                self._settle(state, at), event.player, event.remaining_ns, event.moves
            )
        if k == "stop":
            return replace(self._settle(state, at), stopped=True, since_ns=at)
        # An arbiter pause or resume that no longer fits the corrected
        # history (say the mis-pressing player's flag fell before it) is
        # dropped.
        try:
            if k == "pause":
                return self._do_pause(self._settle(state, at), at)
            return self._do_resume(state, at)
        except ClockStateError:
            logger.debug("undo: %s at %d no longer applies", k, at)
            return state

    def _do_start(self, state: ClockState, player: int, at: int) -> ClockState:
        return replace(state, started=True, on_move=player, since_ns=at)

    def _do_pause(self, state: ClockState, at: int) -> ClockState:
        if not state.started:
            raise ClockStateError("the clock has not been started")
        if state.finished:
            raise ClockStateError("the game is over on the clock")
        if state.paused:
            raise ClockStateError("the clock is already paused")
        return replace(state, paused=True, since_ns=at)

    def _do_resume(self, state: ClockState, at: int) -> ClockState:
        if not state.paused or state.finished:
            raise ClockStateError("the clock is not paused")
        return replace(state, paused=False, since_ns=at)

    def _do_adjust(
        self, state: ClockState, player: int, remaining_ns: int | None, moves: int | None
    ) -> ClockState:
        p = state.players[player]
        if moves is not None:
            p = replace(p, moves=moves)
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

    def _next_player(self, state: ClockState, after: int) -> int | None:
        n = self.players
        for k in range(1, n + 1):
            j = (after + k) % n
            if not self.skip_flagged or state.players[j].flag_at is None:
                return j
        return None

    def _settle(self, state: ClockState, at: int) -> ClockState:
        """Charge the running player up to *at*, letting flags fall on the way."""
        if at < state.since_ns:  # pragma: no cover - callers clamp stamps
            at = state.since_ns
        while state.running:
            i = state.on_move
            p, flag, expiries = _run(
                state.players[i], self._controls[i], at - state.since_ns, state.since_ns, i
            )
            state = replace(
                state, players=put(state.players, i, p), expiries=state.expiries + expiries
            )
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
            if self.freeze_at_flag:
                return replace(state, frozen=True)
            if self.skip_flagged:
                nxt = self._next_player(state, i)
                if nxt is None:
                    return state
                state = replace(
                    state,
                    on_move=nxt,
                    players=put(state.players, nxt, replace(state.players[nxt], turn_used_ns=0)),
                )
            # Otherwise the flagged player runs on at zero until they press;
            # the next round charges them the rest of the span.
        return state

    def _judge(self, state: ClockState, player: int, at: int) -> PressOutcome:
        if not state.started:
            return PressOutcome.NOT_STARTED
        if state.finished:
            return PressOutcome.FINISHED
        last = state.last_accept_ns[player]
        if last is not None and at - last < self.debounce_ns:
            return PressOutcome.BOUNCE
        if state.paused:
            return PressOutcome.PAUSED
        if player != state.on_move:
            if self.skip_flagged and state.players[player].flag_at is not None:
                return PressOutcome.FLAGGED
            return PressOutcome.NOT_ON_MOVE
        return PressOutcome.ACCEPTED

    def _count(self, state: ClockState, player: int, outcome: PressOutcome) -> ClockState:
        if outcome is PressOutcome.NOT_ON_MOVE:
            return replace(state, ignored=bump(state.ignored, player))
        if outcome is PressOutcome.BOUNCE:
            return replace(state, bounces=bump(state.bounces, player))
        return state

    def _accept(self, state: ClockState, i: int, at: int) -> ClockState:
        p = state.players[i]
        tc = self._controls[i]
        stage = tc.stages[p.stage]
        moves = p.moves + 1
        if p.flag_at is None:
            ot = tc.overtime
            if not p.in_overtime:
                main = p.main_ns
                if stage.delay_kind is DelayKind.BRONSTEIN:
                    main += min(stage.delay_ns, p.turn_used_ns)
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
        p = replace(p, moves=moves, turn_used_ns=0)
        players = put(state.players, i, p)
        state = replace(state, players=players, last_accept_ns=put(state.last_accept_ns, i, at))
        nxt = self._next_player(state, i)
        if nxt is None:  # pragma: no cover - the presser is on move, so not flagged-and-skipped
            return state
        return replace(
            state,
            on_move=nxt,
            since_ns=at,
            players=put(state.players, nxt, replace(state.players[nxt], turn_used_ns=0)),
        )


__all__ = [
    "DEFAULT_DEBOUNCE_NS",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "Clock",
    "ClockEvent",
    "ClockView",
    "PressOutcome",
    "StageExpiry",
]
