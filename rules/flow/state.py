"""The match's state as the flow keeps it: phases, rows, games, and what an event changed.

Plain data, no behaviour beyond small views: :class:`~pegwatch.rules.flow.machine.MatchFlow`
changes it, the table program and the exporters read it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any

from pegwatch.rules.bounded import BoundedRow, CountRange
from pegwatch.rules.codes import Code, Feedback
from pegwatch.rules.errors import BadInput
from pegwatch.rules.judge import GameVerdict
from pegwatch.rules.record import Role

__all__ = [
    "OK",
    "ROLES",
    "TRUST_FULL",
    "EndReason",
    "FlowError",
    "FlowRow",
    "GameState",
    "IllegalMove",
    "Phase",
    "ReadPhase",
    "ReadRequest",
    "ReplayMismatch",
    "RowState",
    "Settled",
]

ROLES = ("codemaker", "codebreaker")
"""Clock players: 0 is the codemaker, 1 the codebreaker, in every game."""

OK = "ok"
"""The reading status that may be judged."""

TRUST_FULL = "full"
"""A reading's ``trust`` when it may lead to a verdict (``"low"``: shown only)."""


class FlowError(BadInput):
    """An event the flow cannot take (malformed payload, unknown kind)."""


class ReplayMismatch(BadInput):
    """Replaying a journal did not reach the verdicts it recorded."""



class Phase(Enum):
    """Where the current game is."""

    SETUP = "setup"
    """The codemaker sets the code; their press starts the codebreaker's clock."""
    GUESS = "guess"
    """The codebreaker's time: placing the next guess."""
    MARKS = "marks"
    """The codemaker's time: marking the guess just confirmed."""
    REVEAL = "reveal"
    """The game is over on the board; the secret is read with the shield open."""
    GAME_OVER = "game_over"
    """The game is judged; the next codemaker's press starts the next game."""
    MATCH_OVER = "match_over"
    """Both games are judged."""


class RowState(Enum):
    """How sure the table is of one half of a row (the guess or the marks)."""

    PENDING = "pending"
    """Confirmed by a press; the camera's reading has not come yet."""
    CHECK = "check"
    """The camera could not decide: the arbiter must confirm the row."""
    READ = "read"
    """Read with confidence, or confirmed by the arbiter."""
    BOUNDED = "bounded"
    """Read within bounds: the colours each doubtful hole may hold, or a
    range per key count. Judged over every completion; the arbiter is asked
    only when that leaves the verdict unsure."""


class ReadPhase(StrEnum):
    """Which half of a row (or the secret) a reading answers."""

    GUESS = "guess"
    MARKS = "marks"
    SECRET = "secret"
    """The secret row, with the shield open at the end of a game."""
    SECRET_HIDDEN = "secret_hidden"
    """The secret row under the closed shield: kept, never shown."""
    SECRET_WATCH = "secret_watch"
    """The accepted hidden secret, watched: answered only when it reads
    differently (the alarm), never when it stays."""


class EndReason(StrEnum):
    """Why a game ended on the board (the exported game's ``end``)."""

    LAST_ROW = "last row"
    FLAG = "flag"
    MISMARK = "mis-mark"
    SOLVED = "solved"


class Settled(StrEnum):
    """How an illegal guess's standing state ended (seed 004 §3.4)."""

    ACCEPTED = "accepted"
    """The opponent played on: "considered an acceptance of the previous move"."""
    CORRECTED = "corrected"
    """The arbiter entered the row again, legal now."""


@dataclass(frozen=True)
class ReadRequest:
    """A reading the flow waits for: the vision worker answers it with the
    first accepted reading of a frame taken at or after ``not_before_ns``."""

    game: int
    row: int
    phase: ReadPhase
    not_before_ns: int
    expect: Code | None = field(default=None, repr=False)
    """For :attr:`ReadPhase.SECRET_WATCH`: the code accepted (never shown)."""


@dataclass(frozen=True)
class FlowRow:
    """One row of the current game as the table knows it."""

    number: int
    guess_ns: int
    guess: Code | None = None
    guess_state: RowState = RowState.PENDING
    marks_ns: int | None = None
    marks: Feedback | None = None
    marks_state: RowState | None = None
    #: What the camera saw in the guess holes, even when it was unsure (an
    #: unread hole as "unknown"): the start of the arbiter's hand entry.
    seen_guess: Code | None = None
    confirmed_by: str | None = None
    #: The colours each hole may hold (one: certain; None: anything) when
    #: ``guess_state`` is BOUNDED; ``guess`` then holds "unknown" there.
    guess_bounds: tuple[tuple[str, ...] | None, ...] | None = None
    #: The black and white ranges when ``marks_state`` is BOUNDED.
    marks_bounds: tuple[CountRange, CountRange] | None = None
    #: Read from a board the camera trusts little: shown, never accused from.
    low_trust: bool = False

    @property
    def bounded(self) -> BoundedRow | None:
        """The row within bounds, when some half is BOUNDED."""
        if RowState.BOUNDED not in (self.guess_state, self.marks_state) or self.guess is None:
            return None
        holes = self.guess_bounds or tuple((peg,) for peg in self.guess)
        if self.marks_state is RowState.BOUNDED and self.marks_bounds is not None:
            return BoundedRow(holes, *self.marks_bounds)
        if self.marks is not None and self.marks_state is RowState.READ:
            return BoundedRow(holes, CountRange.exact(self.marks.black), CountRange.exact(self.marks.white))
        return BoundedRow(holes)

    @property
    def needs_check(self) -> bool:
        """True while the arbiter must confirm this row."""
        return RowState.CHECK in (self.guess_state, self.marks_state)

    @property
    def is_judgeable(self) -> bool:
        """Both halves are known for certain."""
        return self.guess_state is RowState.READ and self.marks_state is RowState.READ

    @property
    def is_known(self) -> bool:
        """Both halves are known, for certain or within bounds."""
        known = (RowState.READ, RowState.BOUNDED)
        return self.guess_state in known and self.marks_state in known


@dataclass
class IllegalMove:
    """An illegal guess reported at the table (seed 004 §3.4).

    ``number`` is the player's count of illegal moves in this game, this one
    included (from the second on, the arbiter is called). ``settled`` is
    None while the row's illegal state stands, then ``"accepted"`` (the
    codemaker pressed for marks after it was reported: "as soon as the
    opponent makes a move of their own this is considered an acceptance")
    or ``"corrected"`` (the arbiter entered the row again, legal now). An
    undone or corrected move still counts: seed 004 counts the moves made.
    """

    row: int
    player: int
    reason: str
    number: int
    settled: Settled | None = None

    def to_json(self, players: tuple[str, str]) -> dict[str, Any]:
        """Plain data, the player by name (an extra key of the exported game)."""
        return {"row": self.row, "player": players[self.player], "reason": self.reason,
                "number": self.number, "settled": self.settled}


@dataclass
class GameState:
    """One game in progress or finished."""

    number: int
    codemaker: int
    started_ns: int | None = None
    rows: list[FlowRow] = field(default_factory=list)
    secret_hidden: Code | None = None
    secret: Code | None = None
    secret_state: RowState | None = None
    timeout: Role | None = None
    ended_ns: int | None = None
    end_reason: EndReason | None = None
    verdict: GameVerdict | None = None
    final: bool = False
    announced_mismark: int | None = None
    announced_inconsistent: bool = False
    reported: set[int] = field(default_factory=set)
    secret_probed: bool = False
    illegal_moves: list[IllegalMove] = field(default_factory=list)
    #: Who read the secret the game is judged by ("camera", "arbiter", ...),
    #: and the stamp of the camera's frame (its evidence in the journal).
    secret_source: str | None = None
    secret_frame_ns: int | None = None
    #: The secret read differently after it was accepted: the alarm stands
    #: until the arbiter confirms the code; the camera's secret is not used.
    secret_changed: bool = False
    low_trust_noted: bool = False
    #: The holes an unsure hidden-secret check last named (said once).
    consistency_note: str | None = None

    @property
    def standing_illegal(self) -> tuple[IllegalMove, ...]:
        """Illegal guesses neither accepted nor corrected yet, oldest first."""
        return tuple(m for m in self.illegal_moves if m.settled is None)

    @property
    def codebreaker(self) -> int:
        """The codebreaker's seat."""
        return 1 - self.codemaker

    def role_of(self, seat: int) -> Role:
        """The role of ``seat`` in this game."""
        return Role.CODEMAKER if seat == self.codemaker else Role.CODEBREAKER


def seat_of(payload: Mapping[str, Any], key: str = "player") -> int:
    value = payload.get(key)
    if isinstance(value, bool) or value not in (0, 1):
        raise FlowError(f"{key}: expected seat 0 or 1, got {value!r}")
    return int(value)


def int_of(payload: Mapping[str, Any], key: str) -> int:
    value = payload.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise FlowError(f"{key}: expected an integer, got {value!r}")
    return value


def code_of(value: object, holes: int, where: str) -> Code:
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != holes:
        raise FlowError(f"{where}: expected {holes} colour names, got {value!r}")
    return tuple(str(c).strip().lower() for c in value)



def holes_of(payload: Mapping[str, Any], holes: int) -> tuple[tuple[str, ...] | None, ...] | None:
    """A reading's ``candidates``: per hole the colours it may hold (a list
    of names, or of ``[name, confidence]`` pairs) or null for anything.
    None when the reading gives none (then it is never judged in bounds)."""
    raw = payload.get("candidates")
    if raw is None:
        return None
    if not isinstance(raw, Sequence) or isinstance(raw, str) or len(raw) != holes:
        raise FlowError(f"reading.candidates: expected {holes} candidate lists, got {raw!r}")
    out: list[tuple[str, ...] | None] = []
    for i, hole in enumerate(raw):
        if hole is None:
            out.append(None)
            continue
        if not isinstance(hole, Sequence) or isinstance(hole, str) or not hole:
            raise FlowError(f"reading.candidates[{i}]: expected a list of colour names or null, got {hole!r}")
        names = [c[0] if isinstance(c, Sequence) and not isinstance(c, str) and c else c for c in hole]
        if not all(isinstance(c, str) and c.strip() for c in names):
            raise FlowError(f"reading.candidates[{i}]: expected colour names, got {hole!r}")
        cleaned = tuple(dict.fromkeys(str(c).strip().lower() for c in names))
        out.append(None if set(cleaned) & {"unknown", "occluded"} else cleaned)
    return tuple(out)


def count_ranges(payload: Mapping[str, Any], holes: int) -> tuple[CountRange, CountRange]:
    """The key counts of a marks reading: exact when ``keys_status`` is
    certain, else ``black_bounds``/``white_bounds`` (null: 0..holes)."""
    if payload.get("keys_status") in ("ok", "empty"):
        return CountRange.exact(int_of(payload, "black")), CountRange.exact(int_of(payload, "white"))
    out = []
    for key in ("black_bounds", "white_bounds"):
        raw = payload.get(key)
        if raw is None:
            out.append(CountRange(0, holes))
            continue
        if (not isinstance(raw, Sequence) or isinstance(raw, str) or len(raw) != 2
                or any(isinstance(v, bool) or not isinstance(v, int) for v in raw)
                or not 0 <= raw[0] <= raw[1] <= holes):
            raise FlowError(f"reading.{key}: expected [lo, hi] within 0..{holes}, got {raw!r}")
        out.append(CountRange(raw[0], raw[1]))
    black, white = out
    # The counts share the key holes: each is at most what the other leaves.
    return (CountRange(black.lo, max(black.lo, min(black.hi, holes - white.lo))),
            CountRange(white.lo, max(white.lo, min(white.hi, holes - black.lo))))


def show_holes(holes: Sequence[tuple[str, ...] | None]) -> str:
    """A guess within bounds for a line: ``red {green|blue} ? yellow``."""
    return " ".join("?" if h is None else h[0] if len(h) == 1 else "{" + "|".join(h) + "}" for h in holes)
