"""Time controls: frozen descriptions of how one player's time is given.

A :class:`TimeControl` is one or more :class:`Stage` objects followed by an
optional :class:`Overtime`. Every kind of control a tournament uses is a
combination of these:

* sudden death: one stage, nothing else;
* Fischer increment: ``Stage.increment_ns`` added after each press;
* Bronstein delay: ``Stage.delay_ns`` with ``DelayKind.BRONSTEIN``;
* US (simple) delay: ``Stage.delay_ns`` with ``DelayKind.US``;
* several stages with a move counter (``Stage.moves``), the next stage's
  time being added when the move count is reached (``StageAdvance.MOVES``)
  or when the stage's time runs out (``StageAdvance.FLAG``, FIDE style);
* Japanese byo-yomi and Canadian overtime after the last stage;
* two modes that are not a countdown (:class:`ControlMode`): count-up (the
  display counts the time used, no flag) and hourglass (the time a player
  uses is given to the opponent).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from pegwatch.rules.clock.durations import format_duration, parse_duration
from pegwatch.rules.clock.errors import InvalidTimeControlError

_PGN_FIELD = re.compile(r"(?:(\d+)/)?(\d+(?:\.\d+)?)(?:\+(\d+(?:\.\d+)?))?")


def _pgn_seconds(ns: int) -> str:
    whole, frac = divmod(ns, 1_000_000_000)
    return f"{whole}" + (f".{frac:09d}".rstrip("0") if frac else "")


class DelayKind(Enum):
    """How a per-move delay works."""

    US = "us"
    """Simple delay: the main time does not run until the delay is used up."""
    BRONSTEIN = "bronstein"
    """After the press, ``min(delay, time used this move)`` is added back."""


class StageAdvance(Enum):
    """When the next stage's time is added."""

    MOVES = "moves"
    """After the press that completes the stage's move count."""
    FLAG = "flag"
    """FIDE style: when the stage's time runs out, whatever the move count."""


class OvertimeKind(Enum):
    """The overtime systems taken from Go and shogi."""

    BYO_YOMI = "byo-yomi"
    """``periods`` periods of ``period_ns``: a move inside a period resets it."""
    CANADIAN = "canadian"
    """``moves`` moves must be made in ``period_ns``; then the period restarts."""


class ControlMode(Enum):
    """Which way the time runs (the DGT 3000 calls these modes too)."""

    COUNT_DOWN = "count-down"
    """The usual: main time counts down to a flag."""
    COUNT_UP = "count-up"
    """The display counts the time used up from the stage's time; no flag ever falls."""
    HOURGLASS = "hourglass"
    """The time a player uses is added to the opponent's (2 players; one stage, nothing else)."""


@dataclass(frozen=True)
class Stage:
    """One period of main time.

    ``moves`` is how many moves the stage lasts (``None`` for the rest of the
    game, which only the last stage may be). ``time_ns`` is added to what is
    left of the previous stage when the stage begins.
    """

    time_ns: int
    moves: int | None = None
    increment_ns: int = 0
    delay_ns: int = 0
    delay_kind: DelayKind = DelayKind.US

    def __post_init__(self) -> None:
        for name in ("time_ns", "increment_ns", "delay_ns"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise InvalidTimeControlError(
                    f"stage {name} must be a whole number >= 0, got {value!r}"
                )
        if self.moves is not None and (
            not isinstance(self.moves, int) or isinstance(self.moves, bool) or self.moves < 1
        ):
            raise InvalidTimeControlError(
                f"stage moves must be a whole number >= 1, got {self.moves!r}"
            )

    def __str__(self) -> str:
        text = format_duration(self.time_ns)
        if self.moves is not None:
            text = f"{self.moves} moves in {text}"
        if self.increment_ns:
            text += f" + {format_duration(self.increment_ns)}/move"
        if self.delay_ns:
            kind = "Bronstein" if self.delay_kind is DelayKind.BRONSTEIN else "US"
            text += f" {kind} delay {format_duration(self.delay_ns)}"
        return text


@dataclass(frozen=True)
class Overtime:
    """What follows the last stage: byo-yomi or Canadian overtime."""

    kind: OvertimeKind
    period_ns: int
    periods: int = 1
    moves: int = 1

    def __post_init__(self) -> None:
        if (
            not isinstance(self.period_ns, int)
            or isinstance(self.period_ns, bool)
            or self.period_ns <= 0
        ):
            raise InvalidTimeControlError(f"overtime period must be > 0, got {self.period_ns!r}")
        if not isinstance(self.periods, int) or isinstance(self.periods, bool) or self.periods < 1:
            raise InvalidTimeControlError(f"overtime periods must be >= 1, got {self.periods!r}")
        if not isinstance(self.moves, int) or isinstance(self.moves, bool) or self.moves < 1:
            raise InvalidTimeControlError(f"overtime moves must be >= 1, got {self.moves!r}")

    def __str__(self) -> str:
        if self.kind is OvertimeKind.BYO_YOMI:
            return f"byo-yomi {self.periods}×{format_duration(self.period_ns)}"
        return f"Canadian {self.moves} moves in {format_duration(self.period_ns)}"


@dataclass(frozen=True)
class TimeControl:
    """How one player's time is given: stages, then optional overtime."""

    stages: tuple[Stage, ...]
    advance: StageAdvance = StageAdvance.MOVES
    overtime: Overtime | None = None
    mode: ControlMode = ControlMode.COUNT_DOWN

    def __post_init__(self) -> None:
        if not isinstance(self.stages, tuple):
            object.__setattr__(self, "stages", tuple(self.stages))
        if not self.stages:
            raise InvalidTimeControlError("a time control needs at least one stage")
        for i, stage in enumerate(self.stages[:-1]):
            if stage.moves is None:
                raise InvalidTimeControlError(
                    f"stage {i + 1} of {len(self.stages)} needs a move count (only the last stage lasts the rest of the game)"
                )
        if self.stages[-1].moves is not None:
            raise InvalidTimeControlError(
                "the last stage lasts the rest of the game and must not have a move count"
            )
        if self.mode is not ControlMode.COUNT_DOWN:
            s0 = self.stages[0]
            if len(self.stages) > 1 or self.overtime is not None or s0.increment_ns or s0.delay_ns:
                raise InvalidTimeControlError(
                    f"{self.mode.value} is one stage of time alone: no stages, increment, "
                    "delay or overtime"
                )
        if self.initial_ns == 0 and self.overtime is None and self.mode is not ControlMode.COUNT_UP:
            raise InvalidTimeControlError("a time control must give some time")

    # Convenience constructors for the common single-stage controls.
    @classmethod
    def sudden_death(cls, time_ns: int) -> TimeControl:
        """All moves in *time_ns*."""
        return cls((Stage(time_ns),))

    @classmethod
    def fischer(cls, time_ns: int, increment_ns: int) -> TimeControl:
        """*time_ns* plus *increment_ns* added after every press."""
        return cls((Stage(time_ns, increment_ns=increment_ns),))

    @classmethod
    def bronstein(cls, time_ns: int, delay_ns: int) -> TimeControl:
        """*time_ns*; after each press ``min(delay_ns, time used)`` comes back."""
        return cls((Stage(time_ns, delay_ns=delay_ns, delay_kind=DelayKind.BRONSTEIN),))

    @classmethod
    def us_delay(cls, time_ns: int, delay_ns: int) -> TimeControl:
        """*time_ns*; each move's first *delay_ns* is free."""
        return cls((Stage(time_ns, delay_ns=delay_ns, delay_kind=DelayKind.US),))

    @classmethod
    def byo_yomi(cls, time_ns: int, periods: int, period_ns: int) -> TimeControl:
        """*time_ns* main time, then *periods* byo-yomi periods of *period_ns*."""
        return cls(
            (Stage(time_ns),), overtime=Overtime(OvertimeKind.BYO_YOMI, period_ns, periods=periods)
        )

    @classmethod
    def canadian(cls, time_ns: int, moves: int, period_ns: int) -> TimeControl:
        """*time_ns* main time, then *moves* moves in every *period_ns*."""
        return cls(
            (Stage(time_ns),), overtime=Overtime(OvertimeKind.CANADIAN, period_ns, moves=moves)
        )

    @classmethod
    def count_up(cls, from_ns: int = 0) -> TimeControl:
        """The display counts the time used up from *from_ns*; no flag falls."""
        return cls((Stage(from_ns),), mode=ControlMode.COUNT_UP)

    @classmethod
    def hourglass(cls, time_ns: int) -> TimeControl:
        """*time_ns* each; what one player uses is added to the other's time."""
        return cls((Stage(time_ns),), mode=ControlMode.HOURGLASS)

    @classmethod
    def from_pgn(cls, text: str, *, advance: StageAdvance = StageAdvance.MOVES) -> TimeControl:
        """Read a PGN ``TimeControl`` tag value (PGN standard 9.6.1, with increments).

        Fields are separated by ``:``: ``"300"`` (sudden death, seconds),
        ``"180+2"`` (with increment), ``"40/5400+30:1800+30"`` (40 moves in
        90 minutes, then 30 minutes, 30 s per move throughout). The last
        field must be sudden death: repeating periods are not supported, nor
        are ``?``, ``-`` and sandglass ``*`` fields.
        """
        fields = text.strip().split(":")
        stages = []
        for i, f in enumerate(fields):
            m = _PGN_FIELD.fullmatch(f.strip())
            if m is None:
                raise InvalidTimeControlError(
                    f"time control {text!r}: field {i + 1} {f!r} is not 'seconds', "
                    "'seconds+increment' or 'moves/seconds[+increment]'"
                )
            moves, seconds, increment = m.groups()
            try:
                stages.append(
                    Stage(
                        parse_duration(seconds),
                        moves=int(moves) if moves else None,
                        increment_ns=parse_duration(increment) if increment else 0,
                    )
                )
            except (InvalidTimeControlError, ValueError) as exc:
                raise InvalidTimeControlError(f"time control {text!r}: {exc}") from None
        if stages[-1].moves is not None:
            raise InvalidTimeControlError(
                f"time control {text!r}: repeating periods are not supported; "
                "end with a sudden-death field such as ':1800+30'"
            )
        try:
            return cls(tuple(stages), advance=advance)
        except InvalidTimeControlError as exc:
            raise InvalidTimeControlError(f"time control {text!r}: {exc}") from None

    def to_pgn(self) -> str:
        """Write the control as a PGN ``TimeControl`` tag value (see :meth:`from_pgn`).

        Raises :class:`InvalidTimeControlError` for delays and overtime, which
        the tag cannot express. The stage advance rule is not written.
        """
        if (
            self.overtime is not None
            or any(s.delay_ns for s in self.stages)
            or self.mode is not ControlMode.COUNT_DOWN
        ):
            raise InvalidTimeControlError(f"{self} has no PGN TimeControl form")
        parts = []
        for s in self.stages:
            text = _pgn_seconds(s.time_ns)
            if s.moves is not None:
                text = f"{s.moves}/{text}"
            if s.increment_ns:
                text += f"+{_pgn_seconds(s.increment_ns)}"
            parts.append(text)
        return ":".join(parts)

    @property
    def initial_ns(self) -> int:
        """Main time on the clock before the first move."""
        return self.stages[0].time_ns

    def stage_end_moves(self, stage: int) -> int | None:
        """Total moves after which *stage* ends (cumulative), or ``None`` for the last."""
        total = 0
        for s in self.stages[: stage + 1]:
            if s.moves is None:
                return None
            total += s.moves
        return total

    def __str__(self) -> str:
        if self.mode is ControlMode.COUNT_UP:
            return f"count-up from {format_duration(self.initial_ns)}"
        if self.mode is ControlMode.HOURGLASS:
            return f"hourglass {format_duration(self.initial_ns)}"
        text = ", then ".join(str(s) for s in self.stages)
        if len(self.stages) > 1 and self.advance is StageAdvance.FLAG:
            text += " (next stage added at the flag)"
        if self.overtime is not None:
            text += f", then {self.overtime}"
        return text


class BronsteinCount(Enum):
    """How a Bronstein delay is counted where the sources differ (docs/clock.md)."""

    GIVE_BACK = "give-back"
    """The main time counts down; after the press ``min(delay, time used)`` is given
    back; the flag falls when the main time reaches zero (FIDE Laws art. 6, the default)."""
    DGT = "dgt"
    """DGT 3000: the delay is added when the move begins and the total counts down;
    the flag falls at delay + main time; after the press the total is never above what
    it was when the move began."""


class StageAddAtFlag(Enum):
    """Who gets the next stage when a stage runs out with ``StageAdvance.FLAG``."""

    PER_PLAYER = "per-player"
    """Each player's next stage is added when their own stage runs out (the default)."""
    BOTH = "both"
    """DGT 3000: when one player's stage runs out, the next stage is added to every
    player still in that stage, at once."""


class DelayWithMoves(Enum):
    """Whether a stage may have both a move count and a delay."""

    ALLOW = "allow"
    """FIDE Laws art. 6 do not forbid it (the default)."""
    REFUSE = "refuse"
    """DGT 3000: a delay stage has no move count; such a control is refused when the
    clock is built, in one line naming the player and the stage."""


@dataclass(frozen=True)
class ClockReadings:
    """The named readings where the DGT 3000 manual and FIDE art. 6 differ.

    The defaults are pegwatch's (and the reference clock's) reading of FIDE
    art. 6; :meth:`dgt3000` takes every DGT 3000 reading.
    """

    bronstein: BronsteinCount = BronsteinCount.GIVE_BACK
    stage_at_flag: StageAddAtFlag = StageAddAtFlag.PER_PLAYER
    delay_with_moves: DelayWithMoves = DelayWithMoves.ALLOW

    @classmethod
    def dgt3000(cls) -> ClockReadings:
        """Every reading as the DGT 3000 manual gives it."""
        return cls(BronsteinCount.DGT, StageAddAtFlag.BOTH, DelayWithMoves.REFUSE)

    def check(self, tc: TimeControl, who: str) -> None:
        """Refuse *tc* (the control of *who*, for the message) if these readings do not allow it."""
        if self.delay_with_moves is DelayWithMoves.REFUSE:
            for k, stage in enumerate(tc.stages):
                if stage.delay_ns and stage.moves is not None:
                    raise InvalidTimeControlError(
                        f"{who}: stage {k + 1} ({stage}) has a move count and a delay; "
                        "with delay_with_moves='refuse' (the DGT 3000 reading) a delay stage has no move count"
                    )

    def counts_delay_first(self, stage: Stage) -> bool:
        """True if *stage*'s delay is spent before the main time runs (US delay, DGT Bronstein)."""
        if not stage.delay_ns:
            return False
        return stage.delay_kind is DelayKind.US or self.bronstein is BronsteinCount.DGT


#: FIDE art. 6 as pegwatch reads it: the readings a clock follows unless told otherwise.
DEFAULT_READINGS = ClockReadings()
