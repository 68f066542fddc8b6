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
* Japanese byo-yomi and Canadian overtime after the last stage.
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
        if self.initial_ns == 0 and self.overtime is None:
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
        if self.overtime is not None or any(s.delay_ns for s in self.stages):
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
        text = ", then ".join(str(s) for s in self.stages)
        if len(self.stages) > 1 and self.advance is StageAdvance.FLAG:
            text += " (next stage added at the flag)"
        if self.overtime is not None:
            text += f", then {self.overtime}"
        return text
