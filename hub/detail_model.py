"""The view model of a table's detail: frozen dataclasses, no behaviour beyond small views.

Built by :func:`pegwatch.hub.detail.detail_from_events`; read by the template
(``hub/templates/table_detail.html``) and by the hub's API.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from pegwatch.rules.errors import BadInput

__all__ = [
    "Clocks",
    "DetailError",
    "EvidenceRef",
    "GameDetail",
    "GameOutcome",
    "HoleRead",
    "LogLine",
    "MatchOutcome",
    "PenaltyLine",
    "RowDetail",
    "Ruled",
    "RulingLine",
    "TableDetail",
    "Verdict",
]

#: A hole's word when the camera could not give its colour.
UNKNOWN: Final = "unknown"
OCCLUDED: Final = "occluded"
EMPTY: Final = "empty"


class DetailError(BadInput):
    """A table's events cannot be read into a detail; the message names the event."""


class Verdict(StrEnum):
    """A row's verdict, as the page colours it."""

    OK = "ok"
    """Judged: the marks are what the code gives (or cleared within bounds)."""
    MISMARK = "mismark"
    """Proved mis-marked against the code."""
    UNSURE = "unsure"
    """The camera could not decide, or what it read cannot be judged: the arbiter looks."""
    PENDING = "pending"
    """Not judged yet: the row is in play, or the code is hidden and nothing contradicts it."""


@dataclass(frozen=True)
class HoleRead:
    """One code hole as read: its colour, or ``None`` when the camera could not say.

    ``status`` is the reader's word (``ok``, ``unknown``, ``occluded``,
    ``empty``); ``confidence`` is 0..1 when the reading had one;
    ``candidates`` the colours a doubtful hole may hold (``None``: anything
    or not known)."""

    colour: str | None
    status: str = "ok"
    confidence: float | None = None
    candidates: tuple[str, ...] | None = None

    @property
    def label(self) -> str:
        if self.colour is not None:
            return self.colour
        if self.candidates:
            return " or ".join(self.candidates)
        return self.status if self.status != "ok" else UNKNOWN


@dataclass(frozen=True)
class Clocks:
    """Each seat's remaining time, in ms (seat 0, seat 1)."""

    remaining_ms: tuple[int, int]


@dataclass(frozen=True)
class EvidenceRef:
    """A frame the table kept: the seq of the ``reading`` event it answered."""

    seq: int
    game: int
    row: int
    phase: str
    """``guess``, ``marks`` or ``secret``."""
    pruned: bool = False
    """The image was evicted under ``[journal] max_mb``: only the reading stays."""
    shield: str | None = None
    """For the secret's frames: ``closed`` (as set) or ``open`` (at the end)."""


@dataclass(frozen=True)
class Ruled:
    """Who settled a row by hand, and how."""

    by: str
    how: str
    """``confirmed``, ``entered by hand`` or ``confirmed by both players``."""
    seq: int


@dataclass(frozen=True)
class RowDetail:
    """One row of one game."""

    row: int
    guess: tuple[HoleRead, ...]
    black: int | None
    white: int | None
    verdict: Verdict
    why: str
    expected: tuple[int, int] | None = None
    """The marks the code gives (black, white), when known and not masked."""
    black_bounds: tuple[int, int] | None = None
    white_bounds: tuple[int, int] | None = None
    clocks: Clocks | None = None
    """Both clocks just after the press that confirmed the marks."""
    guess_clocks: Clocks | None = None
    """Both clocks just after the codebreaker's press that confirmed the guess."""
    ruled: Ruled | None = None
    illegal: str | None = None
    """Why the guess is illegal (seed 004 §3.4), when it is."""
    guess_evidence: EvidenceRef | None = None
    evidence: EvidenceRef | None = None
    """The frame of the marks (the row as confirmed); the guess's is ``guess_evidence``."""
    trust: str | None = None

    @property
    def marks(self) -> str:
        """The marks as ``1B2W`` (``?`` where not known)."""
        b = "?" if self.black is None else str(self.black)
        w = "?" if self.white is None else str(self.white)
        return f"{b}B{w}W"


@dataclass(frozen=True)
class GameOutcome:
    """How a game ended, from its ``game`` verdict."""

    attempts: int
    solved: bool
    reason: str
    """``solved``, ``mis-mark``, ``time out``, ``last row``, ``loss`` or ``judged``."""
    solved_row: int | None = None
    mismarked_row: int | None = None
    codemaker_penalty_vp: float = 0.0
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class PenaltyLine:
    """A penalty the arbiter gave (seed 004 §5)."""

    seq: int
    game: int | None
    player: str
    kind: str
    """``warning``, ``time``, ``points`` or ``loss``."""
    by: str
    why: str
    time_ms: int | None = None
    points: float | None = None


@dataclass(frozen=True)
class RulingLine:
    """An arbiter's action at the table: pause, resume, adjust, confirm, undo, set, penalty, preset."""

    seq: int
    t_ms: int | None
    game: int | None
    action: str
    by: str
    text: str
    row: int | None = None


@dataclass(frozen=True)
class GameDetail:
    """One game: who made and broke the code, its rows, its secret and its end."""

    number: int
    codemaker: str | None
    codebreaker: str | None
    rows: tuple[RowDetail, ...]
    over: bool
    secret: tuple[str, ...] | None = None
    """The code, when it may be shown (always ``None`` while masked and not over)."""
    secret_source: str | None = None
    secret_evidence: tuple[EvidenceRef, ...] = ()
    outcome: GameOutcome | None = None
    flag: str | None = None
    """The player whose time ran out, if one did."""
    alarms: tuple[str, ...] = ()
    """What the arbiter must look at that is not a row: the code changed, no code fits..."""
    penalties: tuple[PenaltyLine, ...] = ()
    rulings: tuple[RulingLine, ...] = ()
    final_clocks: Clocks | None = None


@dataclass(frozen=True)
class MatchOutcome:
    """The match's result: VP, attempts and VP docked per player."""

    vp: Mapping[str, float]
    attempts: Mapping[str, int]
    penalties_vp: Mapping[str, float]
    illegal_moves: Mapping[str, int] | None = None


@dataclass(frozen=True)
class LogLine:
    """One event of the log, in words. ``t_ms`` is from the table's first event."""

    seq: int
    t_ms: int | None
    kind: str
    text: str
    game: int | None = None


@dataclass(frozen=True)
class TableDetail:
    """A table's match: everything the page and the report show."""

    players: tuple[str, str]
    games: tuple[GameDetail, ...]
    log: tuple[LogLine, ...]
    rules: str | None = None
    clock: str | None = None
    table: str | None = None
    match: MatchOutcome | None = None
    penalties: tuple[PenaltyLine, ...] = ()
    rulings: tuple[RulingLine, ...] = ()
    last_seq: int = 0
    masked: bool = False

    def game(self, number: int) -> GameDetail:
        """Game ``number``; :class:`DetailError` when there is none."""
        for g in self.games:
            if g.number == number:
                return g
        raise DetailError(f"no game {number} at this table (games: {[g.number for g in self.games]})")

    @property
    def evidence(self) -> tuple[EvidenceRef, ...]:
        """Every frame the detail names, in game and row order."""
        out: list[EvidenceRef] = []
        for g in self.games:
            out.extend(g.secret_evidence)
            for r in g.rows:
                out.extend(e for e in (r.guess_evidence, r.evidence) if e is not None)
        return tuple(out)
