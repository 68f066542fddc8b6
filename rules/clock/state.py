"""The clock's data: limits, press outcomes and the immutable state.

Everything here is plain frozen data. The transitions that turn one
:class:`ClockState` into the next live in :mod:`.transitions`, the
snapshots a display reads in :mod:`.view`, and the :class:`~.engine.Clock`
that keeps the event log in :mod:`.engine`. :class:`ClockSetup`,
:class:`PlayerState` and :class:`ClockState` are the engine's internals:
:mod:`pegwatch.rules.clock` does not export them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

from pegwatch.rules.clock.controls import DEFAULT_READINGS, ClockReadings, TimeControl

MIN_PLAYERS = 2
MAX_PLAYERS = 4
DEFAULT_DEBOUNCE_NS = 50_000_000

_T = TypeVar("_T")


class PressOutcome(Enum):
    """What became of a player's press."""

    ACCEPTED = "accepted"
    """The presser's move ended; the next player's clock runs."""
    NOT_ON_MOVE = "not-on-move"
    """Ignored: the presser is not on move (counted in ``ignored_presses``)."""
    BOUNCE = "bounce"
    """Ignored: a repeat of the presser's accepted press within the debounce window."""
    PAUSED = "paused"
    """Ignored: the arbiter has paused the clock."""
    NOT_STARTED = "not-started"
    """Ignored: the clock has not been started."""
    FINISHED = "finished"
    """Ignored: the game is over on the clock (frozen at a flag, all flagged, stopped)."""
    FLAGGED = "flagged"
    """Ignored: the presser's flag has fallen and they are skipped in the turn order."""


@dataclass(frozen=True)
class StageExpiry:
    """A stage whose time ran out with the next stage added at the flag (FIDE style).

    The clock adds the next stage and plays on; whether the player had made
    the required moves is for the arbiter (``short_of_moves``).
    """

    player: int
    stage: int
    at_ns: int
    moves: int
    moves_required: int | None

    @property
    def short_of_moves(self) -> bool:
        """True if fewer moves were made than the stage asked for."""
        return self.moves_required is not None and self.moves < self.moves_required


@dataclass(frozen=True)
class ClockSetup:
    """What a clock is built with and never changes: the rules the transitions follow."""

    controls: tuple[TimeControl, ...]
    debounce_ns: int = DEFAULT_DEBOUNCE_NS
    freeze_at_flag: bool = True
    skip_flagged: bool = False
    readings: ClockReadings = DEFAULT_READINGS

    @property
    def players(self) -> int:
        return len(self.controls)


@dataclass(frozen=True)
class PlayerState:
    """One player's side of the clock."""

    main_ns: int
    stage: int = 0
    moves: int = 0
    in_overtime: bool = False
    periods_left: int = 0
    period_left_ns: int = 0
    block_moves: int = 0
    # Time charged in the current turn: what US delay and Bronstein use.
    turn_used_ns: int = 0
    # The stage the current turn began in: its delay is the turn's delay, so
    # a stage that begins in the middle of a move (advanced at the flag)
    # gives its delay from the next move on and the move's time counts once.
    turn_stage: int = 0
    used_ns: int = 0
    flag_at: int | None = None


@dataclass(frozen=True)
class ClockState:
    """The whole clock after one event: swapped, never changed in place."""

    players: tuple[PlayerState, ...]
    started: bool = False
    paused: bool = False
    frozen: bool = False
    stopped: bool = False
    on_move: int = 0
    # The stamp up to which the running player has been charged.
    since_ns: int = 0
    flags: tuple[int, ...] = ()
    flag_times: tuple[int, ...] = ()
    expiries: tuple[StageExpiry, ...] = ()
    last_accept_ns: tuple[int | None, ...] = ()
    ignored: tuple[int, ...] = ()
    bounces: tuple[int, ...] = ()

    @classmethod
    def initial(cls, controls: tuple[TimeControl, ...]) -> ClockState:
        """Every player at their control's initial time, nothing started."""
        n = len(controls)
        return cls(
            players=tuple(PlayerState(main_ns=tc.initial_ns) for tc in controls),
            last_accept_ns=(None,) * n,
            ignored=(0,) * n,
            bounces=(0,) * n,
        )

    @property
    def all_flagged(self) -> bool:
        return all(p.flag_at is not None for p in self.players)

    @property
    def finished(self) -> bool:
        return self.frozen or self.stopped or self.all_flagged

    @property
    def running(self) -> bool:
        return self.started and not self.paused and not self.finished


def bump(values: tuple[int, ...], i: int) -> tuple[int, ...]:
    """*values* with item *i* one higher."""
    return (*values[:i], values[i] + 1, *values[i + 1 :])


def put(values: tuple[_T, ...], i: int, value: _T) -> tuple[_T, ...]:
    """*values* with item *i* replaced by *value*."""
    return (*values[:i], value, *values[i + 1 :])


__all__ = [
    "DEFAULT_DEBOUNCE_NS",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "ClockSetup",
    "ClockState",
    "PlayerState",
    "PressOutcome",
    "StageExpiry",
    "bump",
    "put",
]
