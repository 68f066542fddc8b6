"""The game clock: integer-nanosecond state driven by stamped events.

Nothing here reads a clock. Every method takes the ``time.monotonic_ns()``
stamp of the event, and remaining time is always *computed* from stamps:
the running player is charged ``at_ns - since_ns`` exactly when something
happens, so the time between the last display tick and a press is never
lost (the lichess-mobile bug) and nothing drifts (the per-tick decrement
bug).

Each module of the package imports only those before it: ``state``
(limits, outcomes, the immutable state), ``events`` (:class:`ClockEvent`),
``transitions`` (the pure function of each event kind; lazy flags),
``view`` (:class:`ClockView`, the next visible change), ``presets``, and
here :class:`Clock`: argument checks, the event log, replay and undo. The
names once defined here are still importable from here.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any, assert_never

from pegwatch.rules.clock import transitions
from pegwatch.rules.clock.controls import DEFAULT_READINGS, ClockReadings, ControlMode, TimeControl
from pegwatch.rules.clock.errors import (
    ClockError,
    ClockStateError,
    InvalidPlayerError,
    InvalidTimeControlError,
)
from pegwatch.rules.clock.events import ClockEvent, ClockEventKind
from pegwatch.rules.clock.presets import ClockPreset, get_preset
from pegwatch.rules.clock.state import (
    DEFAULT_DEBOUNCE_NS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    ClockSetup,
    ClockState,
    PressOutcome,
    StageExpiry,
)
from pegwatch.rules.clock.view import ClockView, next_change_at, view_at

logger = logging.getLogger(__name__)

_Entry = tuple[ClockEvent, PressOutcome | None, ClockState]


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

    *readings* chooses, where the DGT 3000 manual and FIDE art. 6 differ,
    which one the clock follows (:class:`ClockReadings`; docs/clock.md).
    """

    def __init__(
        self,
        controls: Sequence[TimeControl],
        *,
        debounce_ns: int = DEFAULT_DEBOUNCE_NS,
        freeze_at_flag: bool = True,
        skip_flagged: bool = False,
        readings: ClockReadings = DEFAULT_READINGS,
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
        if not isinstance(readings, ClockReadings):
            raise ClockStateError(f"readings must be a ClockReadings, got {readings!r}")
        for i, tc in enumerate(controls):
            readings.check(tc, f"player {i}")
        hourglass = [tc.mode is ControlMode.HOURGLASS for tc in controls]
        if any(hourglass) and (len(controls) != 2 or not all(hourglass)):
            raise InvalidTimeControlError(
                "hourglass is for two players who both play hourglass: "
                "what one uses is given to the other"
            )
        self._setup = ClockSetup(controls, debounce_ns, freeze_at_flag, skip_flagged, readings)
        self._initial = ClockState.initial(controls)
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
        ``freeze_at_flag``, ``skip_flagged``, ``readings``) override the
        preset's defaults.
        """
        p = get_preset(preset) if isinstance(preset, str) else preset
        controls = p.controls_for(players, roles)
        kwargs: dict[str, Any] = {
            "freeze_at_flag": p.freeze_at_flag,
            "skip_flagged": p.skip_flagged,
        }
        if p.readings is not None:
            kwargs["readings"] = p.readings
        unknown = set(options) - {"debounce_ns", "freeze_at_flag", "skip_flagged", "readings"}
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
        if k is ClockEventKind.PRESS:
            return self.press(self._need_player(event), event.at_ns)
        if k is ClockEventKind.START:
            self.start(self._need_player(event), event.at_ns)
        elif k is ClockEventKind.PAUSE:
            self.pause(event.at_ns)
        elif k is ClockEventKind.RESUME:
            self.resume(event.at_ns)
        elif k is ClockEventKind.ADJUST:
            self.adjust(
                self._need_player(event),
                remaining_ns=event.remaining_ns,
                moves=event.moves,
                stage=event.stage,
                at_ns=event.at_ns,
            )
        elif k is ClockEventKind.UNDO:
            self.undo(event.at_ns)
        elif k is ClockEventKind.STOP:
            self.stop(event.at_ns)
        else:  # pragma: no cover - ClockEvent() refuses unknown kinds
            assert_never(k)
        return None

    @staticmethod
    def _need_player(event: ClockEvent) -> int:
        if event.player is None:
            raise InvalidPlayerError(f"clock event {event.kind.value!r} at {event.at_ns} needs a player")
        return event.player

    # ------------------------------------------------------------------
    # Read-only attributes

    @property
    def players(self) -> int:
        """Number of players (2 to 4)."""
        return self._setup.players

    @property
    def debounce_ns(self) -> int:
        """A second press by the same player within this of an accepted one is a bounce."""
        return self._setup.debounce_ns

    @property
    def freeze_at_flag(self) -> bool:
        """True if every clock stops at the first flag (FIDE)."""
        return self._setup.freeze_at_flag

    @property
    def skip_flagged(self) -> bool:
        """True if a flagged player is skipped and the others play on (Mensa Connection)."""
        return self._setup.skip_flagged

    @property
    def readings(self) -> ClockReadings:
        """The readings the clock follows where the sources differ."""
        return self._setup.readings

    @property
    def controls(self) -> tuple[TimeControl, ...]:
        """The time control of each player."""
        return self._setup.controls

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
        self._state = transitions.start(self._state, player, at)
        self._record(ClockEvent(ClockEventKind.START, at_ns, player), at, None)

    def press(self, player: int, at_ns: int) -> PressOutcome:
        """*player* presses their button: ends their turn if they are on move."""
        self._check_player(player)
        at = self._stamp(at_ns)
        self._state, outcome = transitions.press(self._setup, self._state, player, at)
        self._record(ClockEvent(ClockEventKind.PRESS, at_ns, player), at, outcome)
        return outcome

    def pause(self, at_ns: int) -> None:
        """Arbiter: stop all clocks; :meth:`resume` continues with the same player."""
        at = self._stamp(at_ns)
        self._state = transitions.pause(self._setup, self._state, at)
        self._record(ClockEvent(ClockEventKind.PAUSE, at_ns), at, None)

    def resume(self, at_ns: int) -> None:
        """Arbiter: continue after :meth:`pause`; the delay left is kept."""
        at = self._stamp(at_ns)
        self._state = transitions.resume(self._state, at)
        self._record(ClockEvent(ClockEventKind.RESUME, at_ns), at, None)

    def adjust(
        self,
        player: int,
        *,
        remaining_ns: int | None = None,
        moves: int | None = None,
        stage: int | None = None,
        at_ns: int,
    ) -> None:
        """Arbiter: set *player*'s main time left, their move counter and/or their stage.

        Setting ``remaining_ns`` puts the player back in main time of their
        current stage (overtime starts afresh when it runs out). Giving a
        flagged player time above zero lifts their flag; a clock frozen by
        that flag is left paused for the arbiter to resume. ``stage`` (the
        DGT's period, counted from 0) changes which stage's increment, delay
        and move count apply; it does not change the time (set that too).
        For a count-up control ``remaining_ns`` is the count shown.
        """
        self._check_player(player)
        if remaining_ns is not None and (isinstance(remaining_ns, bool) or remaining_ns < 0):
            raise ClockStateError(
                f"remaining time for player {player} must be >= 0 ns, got {remaining_ns}"
            )
        if moves is not None and (isinstance(moves, bool) or moves < 0):
            raise ClockStateError(f"move count for player {player} must be >= 0, got {moves}")
        stages = len(self._setup.controls[player].stages)
        if stage is not None and (isinstance(stage, bool) or not 0 <= stage < stages):
            raise ClockStateError(
                f"stage for player {player} must be 0..{stages - 1} (counted from 0), got {stage}"
            )
        at = self._stamp(at_ns)
        self._state = transitions.adjust(
            self._setup, self._state, player, remaining_ns, moves, at, stage
        )
        self._record(
            ClockEvent(ClockEventKind.ADJUST, at_ns, player, remaining_ns, moves, stage), at, None
        )

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
            base = transitions.reapply(self._setup, base, event, outcome)
            kept.append((event, outcome, base))
        self._state = base
        self._effective = kept
        self._events.append(ClockEvent(ClockEventKind.UNDO, at_ns))
        self._last_at = at

    def stop(self, at_ns: int) -> None:
        """End the game on the clock (e.g. the code was solved); nothing runs after."""
        at = self._stamp(at_ns)
        if not self._state.started:
            raise ClockStateError("the clock has not been started")
        self._state = transitions.stop(self._setup, self._state, at)
        self._record(ClockEvent(ClockEventKind.STOP, at_ns), at, None)

    # ------------------------------------------------------------------
    # Queries

    def view(self, at_ns: int) -> ClockView:
        """A snapshot at *at_ns*; never changes the clock.

        A stamp before the last event is read as the last event's stamp.
        """
        state, at = self._snapshot(at_ns)
        return view_at(self._setup, state, at)

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
        state, at = self._snapshot(at_ns)
        return next_change_at(self._setup, state, at, resolution_ns)

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


__all__ = [
    "DEFAULT_DEBOUNCE_NS",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "Clock",
    "ClockEvent",
    "ClockEventKind",
    "ClockView",
    "PressOutcome",
    "StageExpiry",
]
