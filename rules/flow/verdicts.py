"""What the flow decides, as typed verdicts the table journals and shows.

Each verdict is a frozen dataclass named for what it says; its ``what``
is the ``"what"`` key of the JSON the journal holds, and
:func:`verdict_from_json` reads back what :meth:`to_json` wrote
(``verdict_from_json(v.to_json()) == v``). The JSON is a public contract
(``pegwatch replay --json``, journals arbiters keep): keys are only ever
added.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from pegwatch.rules.codes import Code, Feedback
from pegwatch.rules.flow.state import FlowError
from pegwatch.rules.verdict import GameVerdict

__all__ = [
    "VERDICT_TYPES",
    "BoundedJudged",
    "Check",
    "Entered",
    "Flag",
    "GameResult",
    "Illegal",
    "Inconsistent",
    "JointConfirm",
    "MatchResult",
    "Mismark",
    "Outcome",
    "RowJudged",
    "SecretChanged",
    "SecretSeen",
    "Start",
    "Verdict",
    "verdict_from_json",
]


class _Json:
    """``to_json`` and ``from_json`` for flat verdicts: their fields, plus ``what``."""

    what: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"what": self.what}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def _from_fields(cls, data: Mapping[str, Any]) -> Any:
        try:
            values = {f.name: data[f.name] for f in fields(cls)  # type: ignore[arg-type]
                      if f.name in data}
            return cls(**values)
        except (KeyError, TypeError) as exc:
            raise FlowError(f"verdict {cls.what!r}: {exc}") from None


@dataclass(frozen=True)
class Start(_Json):
    """The codemaker set the code and started the codebreaker's clock."""

    what: ClassVar[str] = "start"
    game: int
    codemaker: str
    codebreaker: str


@dataclass(frozen=True)
class JointConfirm(_Json):
    """Both players pressed together: they confirm the row waiting for a check."""

    what: ClassVar[str] = "joint_confirm"
    game: int
    row: int


@dataclass(frozen=True)
class Flag(_Json):
    """A player's time ran out."""

    what: ClassVar[str] = "flag"
    game: int
    player: str
    role: str


@dataclass(frozen=True)
class Check(_Json):
    """The camera could not decide ``half`` of ``row`` (0: the secret): the arbiter must.

    ``status`` ``"unsure"``: the row was read within bounds and its verdict
    depends on ``deciding_holes`` (1-based) and ``deciding_keys``; ``"low
    trust"``: a verdict would rest on a board read with low trust."""

    what: ClassVar[str] = "check"
    game: int
    row: int
    half: str
    status: str
    deciding_holes: tuple[int, ...] = ()
    deciding_keys: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("deciding_holes", "deciding_keys"):
            if isinstance(getattr(self, name), list):
                object.__setattr__(self, name, tuple(getattr(self, name)))


@dataclass(frozen=True)
class Illegal(_Json):
    """An illegal guess (seed 004 §3.4); ``count`` is the player's in this game."""

    what: ClassVar[str] = "illegal"
    game: int
    row: int
    reason: str
    player: str
    count: int


@dataclass(frozen=True)
class SecretSeen(_Json):
    """The camera saw the code under the shield: kept, never shown."""

    what: ClassVar[str] = "secret_seen"
    game: int


@dataclass(frozen=True)
class Entered(_Json):
    """A row entered or corrected by hand."""

    what: ClassVar[str] = "entered"
    game: int
    row: int
    by: str
    guess: Code | None
    black: int | None
    white: int | None

    def __post_init__(self) -> None:
        if isinstance(self.guess, list):
            object.__setattr__(self, "guess", tuple(self.guess))


@dataclass(frozen=True)
class RowJudged(_Json):
    """A row fully read and judged: exactly (``exact``) when the secret is
    known, and ``expected`` is then the marks it should have."""

    what: ClassVar[str] = "row"
    game: int
    row: int
    guess: Code
    black: int
    white: int
    exact: bool
    expected: Feedback | None = None

    def __post_init__(self) -> None:
        if isinstance(self.guess, list):
            object.__setattr__(self, "guess", tuple(self.guess))
        if isinstance(self.expected, Mapping):
            object.__setattr__(self, "expected", Feedback(int(self.expected["black"]),
                                                         int(self.expected["white"])))

    def to_json(self) -> dict[str, Any]:
        out = super().to_json()
        if self.expected is not None:
            out["expected"] = {"black": self.expected.black, "white": self.expected.white}
        return out


@dataclass(frozen=True)
class Mismark(_Json):
    """Row ``row`` was marked wrongly (judged against the seen secret).

    ``secret_source`` says who read that secret (``"camera"``: then
    ``secret_frame_ns`` stamps the frame kept as its evidence)."""

    what: ClassVar[str] = "mismark"
    game: int
    row: int
    attempts: int
    penalty_vp: float
    secret_source: str | None = None
    secret_frame_ns: int | None = None


@dataclass(frozen=True)
class BoundedJudged(_Json):
    """A row read within bounds (doubtful holes as candidate lists or
    ``"unknown"``, counts as ``[lo, hi]``), judged against the seen secret
    over every completion: ``verdict`` ``correct`` (cleared), ``mismark``
    (proved) or ``unsure`` (``deciding_holes`` and ``deciding_keys`` decide)."""

    what: ClassVar[str] = "bounded_row"
    game: int
    row: int
    guess: tuple[Any, ...]
    black: Any
    white: Any
    verdict: str
    deciding_holes: tuple[int, ...] = ()
    deciding_keys: tuple[str, ...] = ()
    secret_source: str | None = None

    def __post_init__(self) -> None:
        for name in ("guess", "deciding_holes", "deciding_keys"):
            if isinstance(getattr(self, name), list):
                object.__setattr__(self, name, tuple(getattr(self, name)))


@dataclass(frozen=True)
class SecretChanged(_Json):
    """The secret read differently after it was accepted (``when``:
    ``"hidden"`` under the shield, ``"reveal"`` when it opened): an alarm;
    the first reading is not replaced, and the arbiter confirms the code."""

    what: ClassVar[str] = "secret_changed"
    game: int
    when: str


@dataclass(frozen=True)
class Inconsistent(_Json):
    """No code fits the marks; ``suspects`` could each be the single wrong row."""

    what: ClassVar[str] = "inconsistent"
    game: int
    suspects: tuple[int, ...]

    def __post_init__(self) -> None:
        if isinstance(self.suspects, list):
            object.__setattr__(self, "suspects", tuple(self.suspects))


@dataclass(frozen=True)
class GameResult:
    """A game judged for good."""

    what: ClassVar[str] = "game"
    game: int
    verdict: GameVerdict

    def to_json(self) -> dict[str, Any]:
        return {"what": self.what, "game": self.game, "verdict": self.verdict.to_json()}

    @classmethod
    def _from_fields(cls, data: Mapping[str, Any]) -> GameResult:
        try:
            return cls(int(data["game"]), GameVerdict.from_json(data["verdict"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise FlowError(f"verdict 'game': {exc}") from None


@dataclass(frozen=True)
class MatchResult:
    """The match is over: victory points, attempts and penalties per player."""

    what: ClassVar[str] = "match"
    vp: Mapping[str, float]
    attempts: Mapping[str, int]
    penalties_vp: Mapping[str, float]
    #: Illegal moves per player, given only when there were any (so journals
    #: written before the count existed replay to the same verdicts).
    illegal_moves: Mapping[str, int] | None = field(default=None)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"what": self.what, "vp": dict(self.vp), "attempts": dict(self.attempts),
                               "penalties_vp": dict(self.penalties_vp)}
        if self.illegal_moves is not None:
            out["illegal_moves"] = dict(self.illegal_moves)
        return out

    @classmethod
    def _from_fields(cls, data: Mapping[str, Any]) -> MatchResult:
        try:
            illegal = data.get("illegal_moves")
            return cls(dict(data["vp"]), dict(data["attempts"]), dict(data["penalties_vp"]),
                       None if illegal is None else dict(illegal))
        except (KeyError, TypeError, ValueError) as exc:
            raise FlowError(f"verdict 'match': {exc}") from None


Verdict = (Start | JointConfirm | Flag | Check | Illegal | SecretSeen | Entered | RowJudged
           | Mismark | Inconsistent | GameResult | MatchResult | BoundedJudged | SecretChanged)
"""Every verdict the flow gives."""



VERDICT_TYPES = (Start, JointConfirm, Flag, Check, Illegal, SecretSeen, Entered, RowJudged,
                 Mismark, Inconsistent, GameResult, MatchResult, BoundedJudged, SecretChanged)


def verdict_from_json(data: Mapping[str, Any]) -> Verdict:
    """The verdict a journal holds (the inverse of ``to_json``)."""
    cls = {c.what: c for c in VERDICT_TYPES}.get(str(data.get("what")))
    if cls is None:
        raise FlowError(f"verdict: unknown kind {data.get('what')!r}")
    verdict: Verdict = cls._from_fields(data)
    return verdict


@dataclass(frozen=True)
class Outcome:
    """What one event changed: verdict payloads for the journal and lines
    for the transcript and the display."""

    verdicts: tuple[Verdict, ...] = ()
    lines: tuple[str, ...] = ()
    ignored: str | None = None
