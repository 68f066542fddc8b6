"""Penalties an arbiter gives (seed 004 §5), as data that crosses files.

Seed 004 §5.1 lists a formal warning, points docked in the game in
question, and the automatic loss of the game (disqualifications are for the
organisers, not the table). Arbiters also add time to the opponent's clock,
as FIDE art. 7.5.5 does for an illegal move. A :class:`Penalty` says which,
against whom, in which game, who gave it and why; the table journals it, the
exported records carry it (``penalties``, a list of :meth:`Penalty.to_json`)
and ``pegwatch judge`` applies it to its verdict (:func:`points_docked`,
:func:`games_lost`).

>>> p = Penalty(PenaltyKind.POINTS, "Bob", game=1, by="arbiter", why="talking", points=10)
>>> Penalty.from_json(p.to_json()) == p
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from pegwatch.rules.errors import BadInput

__all__ = [
    "Penalty",
    "PenaltyError",
    "PenaltyKind",
    "games_lost",
    "parse_penalties",
    "points_docked",
]


class PenaltyError(BadInput):
    """A penalty is malformed; the message names the place."""


class PenaltyKind(StrEnum):
    """What the penalty does (each member equals its JSON string)."""

    WARNING = "warning"
    """A formal warning: recorded, nothing else changes."""
    TIME = "time"
    """``time_ns`` added to the opponent's clock."""
    POINTS = "points"
    """``points`` victory points docked from the player's match score."""
    LOSS = "loss"
    """The player loses the game."""


_KEYS = ("kind", "player", "game", "by", "why", "time_ns", "points", "at_ns")


@dataclass(frozen=True)
class Penalty:
    """One penalty given by an arbiter.

    ``player`` is the penalised player's name; ``game`` the game it was
    given in (``None``: the match). ``time_ns`` goes with ``TIME`` (added
    to the opponent), ``points`` with ``POINTS`` (docked from the player).
    ``at_ns`` is the table's continuous time of the ruling, when known.
    """

    kind: PenaltyKind
    player: str
    game: int | None = None
    by: str = "arbiter"
    why: str = ""
    time_ns: int | None = None
    points: float | None = None
    at_ns: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", _kind(self.kind, "kind"))
        if not isinstance(self.player, str) or not self.player:
            raise PenaltyError(f"penalty player: expected a name, got {self.player!r}")
        if self.game is not None and (isinstance(self.game, bool) or not isinstance(self.game, int) or self.game < 1):
            raise PenaltyError(f"penalty game: expected a game number >= 1, got {self.game!r}")
        if self.kind is PenaltyKind.TIME and (
            isinstance(self.time_ns, bool) or not isinstance(self.time_ns, int) or self.time_ns <= 0
        ):
            raise PenaltyError(f"penalty time_ns: a time penalty needs nanoseconds > 0, got {self.time_ns!r}")
        if self.kind is PenaltyKind.POINTS and (
            isinstance(self.points, bool)
            or not isinstance(self.points, int | float)
            or not math.isfinite(self.points)
            or self.points <= 0
        ):
            raise PenaltyError(f"penalty points: a points penalty needs points > 0, got {self.points!r}")

    @property
    def text(self) -> str:
        """One line for a display, a transcript or the judge's text."""
        where = f"game {self.game}: " if self.game is not None else ""
        if self.kind is PenaltyKind.TIME:
            what = f"{(self.time_ns or 0) / 1e9:g} s to the opponent"
        elif self.kind is PenaltyKind.POINTS:
            what = f"{self.points or 0:g} VP docked"
        else:
            what = "warning" if self.kind is PenaltyKind.WARNING else "loss of the game"
        # One line whatever was typed: a reason may hold line breaks.
        reason = " ".join(self.why.split())
        why = f" ({reason})" if reason else ""
        return f"{where}{self.player}: {what}, by the {self.by}{why}"

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict; keys that do not apply are left out."""
        out: dict[str, object] = {"kind": self.kind.value, "player": self.player, "by": self.by, "why": self.why}
        for key in ("game", "time_ns", "points", "at_ns"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out

    @classmethod
    def from_json(cls, data: object, where: str = "penalty") -> Penalty:
        """The penalty :meth:`to_json` wrote; :class:`PenaltyError` naming *where* otherwise."""
        if not isinstance(data, Mapping):
            raise PenaltyError(f"{where}: expected an object, got {type(data).__name__}")
        unknown = sorted(str(k) for k in data if k not in _KEYS)
        if unknown:
            raise PenaltyError(f"{where}.{unknown[0]}: unknown key; allowed: {', '.join(_KEYS)}")
        for key in ("kind", "player"):
            if key not in data:
                raise PenaltyError(f"{where}.{key}: missing")
        for key in ("by", "why"):
            if key in data and not isinstance(data[key], str):
                raise PenaltyError(f"{where}.{key}: expected text, got {data[key]!r}")
        at_ns = data.get("at_ns")
        if at_ns is not None and (isinstance(at_ns, bool) or not isinstance(at_ns, int)):
            raise PenaltyError(f"{where}.at_ns: expected an integer, got {at_ns!r}")
        kind = _kind(data["kind"], f"{where}.kind")
        try:
            # The values' types are checked by __post_init__, in one place.
            return cls(
                kind,
                data["player"],
                data.get("game"),
                str(data.get("by", "arbiter")),
                str(data.get("why", "")),
                data.get("time_ns"),
                data.get("points"),
                at_ns,
            )
        except PenaltyError as exc:
            raise PenaltyError(f"{where}: {exc}") from None


def _kind(value: object, where: str) -> PenaltyKind:
    if isinstance(value, PenaltyKind):
        return value
    if isinstance(value, str):
        try:
            return PenaltyKind(value)
        except ValueError:
            pass
    allowed = ", ".join(k.value for k in PenaltyKind)
    raise PenaltyError(f"{where}: {value!r} is not one of {allowed}")


def parse_penalties(data: object, where: str = "penalties") -> tuple[Penalty, ...]:
    """A record's ``penalties`` list (absent or null: none)."""
    if data is None:
        return ()
    if not isinstance(data, Sequence) or isinstance(data, str | bytes):
        raise PenaltyError(f"{where}: expected a list, got {type(data).__name__}")
    return tuple(Penalty.from_json(item, f"{where}[{i}]") for i, item in enumerate(data))


def points_docked(penalties: Iterable[Penalty], players: Iterable[str]) -> dict[str, float]:
    """Victory points docked per player (every player named, 0 when none)."""
    out = {name: 0.0 for name in players}
    for p in penalties:
        if p.kind is PenaltyKind.POINTS and p.points is not None:
            out[p.player] = out.get(p.player, 0.0) + float(p.points)
    return out


def games_lost(penalties: Iterable[Penalty]) -> dict[int, str]:
    """Game number -> the player who lost it by penalty (the first such penalty counts)."""
    out: dict[int, str] = {}
    for p in penalties:
        if p.kind is PenaltyKind.LOSS and p.game is not None:
            out.setdefault(p.game, p.player)
    return out
