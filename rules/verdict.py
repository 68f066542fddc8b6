"""Verdicts: what the judge says of a game and of a match, as data that crosses files.

:class:`GameVerdict` and :class:`MatchVerdict` are what
:func:`pegwatch.rules.judge.judge_game` and ``judge_match`` return, what
``pegwatch judge --json`` prints and what the table journals;
``GameVerdict.from_json`` reads back what ``to_json`` wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pegwatch.rules.bounded import RowJudgement
from pegwatch.rules.bounded_consistency import Consistency, Deciding
from pegwatch.rules.codes import Feedback
from pegwatch.rules.record import Role
from pegwatch.rules.reveal import REVEAL_KEYS
from pegwatch.rules.variants import Scoring

__all__ = ["MATCH_REVEAL_KEYS", "BoundedRowVerdict", "GameVerdict", "IllegalRow", "MatchVerdict"]

MATCH_REVEAL_KEYS: tuple[str, ...] = (
    "vp", "attempts", "penalties_vp", "complete", "codemakers", "illegal_moves", "points",
)
"""The match-verdict keys ``MatchVerdict.reveal_can_change`` may list."""


@dataclass(frozen=True)
class IllegalRow:
    """A row whose guess breaks the variant's rules (seed 004, 3.4)."""

    row: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return {"row": self.row, "reason": self.reason}


@dataclass(frozen=True)
class BoundedRowVerdict:
    """A row known only within bounds, judged against the known secret
    (:func:`pegwatch.rules.bounded.judge_row`)."""

    row: int
    judgement: RowJudgement

    def to_json(self) -> dict[str, Any]:
        """Plain data: the row and the judgement's keys."""
        return {"row": self.row, **self.judgement.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BoundedRowVerdict:
        """What :meth:`to_json` wrote."""
        return cls(int(data["row"]), RowJudgement.from_json(data))


@dataclass(frozen=True)
class GameVerdict:
    """The judgement of one game.

    ``attempts`` is what the codebreaker is credited with (1 up to the
    variant's ``failure_attempts``, 13 for MSO). ``solved`` says the
    codebreaker placed the code on a row (row ``solved_row``).
    ``mismarked_row`` is the first row judged incorrectly marked (1-based),
    including the row current at a codemaker timeout. ``consistent`` and
    ``suspect_rows`` are set when the secret is unknown. ``unread_rows``
    hold a peg the reader could not read and are not judged. ``finished`` is
    False while the game can still go on; ``attempts`` is then what the
    game would give if it stopped now. ``final`` is True only when the
    secret is known and read (and every colour name makes sense): otherwise
    showing the secret can still change the verdict, and
    ``reveal_can_change`` lists which keys of :data:`REVEAL_KEYS` it can
    change.

    Rows known only within bounds (doubtful holes, ranged key counts) are
    judged over every completion: with the secret, ``bounded_rows`` gives
    each one's judgement and ``unsure_rows`` those whose reading can still
    change the result (then ``final`` is False); without it,
    ``consistency`` says whether the marks surely fit some code, surely
    fit none, or depend on the holes in ``consistency_deciding``, and
    ``consistent_at_least`` counts the codes that fit whatever those hold.
    ``secret_source`` says who read the secret the verdict rests on
    (``"camera"``, ``"arbiter"``, ...), when the record says.
    """

    rules: str
    scoring: Scoring
    attempts: int
    solved: bool
    solved_row: int | None
    mismarked_row: int | None
    mismark_by_timeout: bool
    codemaker_penalty_vp: float
    finished: bool
    consistent: int | None = None
    suspect_rows: tuple[int, ...] | None = None
    illegal_rows: tuple[IllegalRow, ...] = ()
    illegal_secret: str | None = None
    unread_rows: tuple[int, ...] = ()
    expected_marks: tuple[Feedback, ...] | None = None
    codemaker_points: int | None = None
    decoder_bonus_points: int | None = None
    replay: bool | None = None
    notes: tuple[str, ...] = ()
    final: bool = False
    reveal_can_change: tuple[str, ...] = REVEAL_KEYS
    bounded_rows: tuple[BoundedRowVerdict, ...] = ()
    unsure_rows: tuple[int, ...] = ()
    consistent_at_least: int | None = None
    consistency: Consistency | None = None
    consistency_deciding: tuple[Deciding, ...] = ()
    secret_source: str | None = None
    #: The arbiter's penalties in this game (rules/penalties.py, as JSON).
    penalties: tuple[Mapping[str, Any], ...] = ()

    @property
    def illegal_moves(self) -> dict[Role, int]:
        """Illegal moves per role in this game."""
        return {
            Role.CODEBREAKER: len(self.illegal_rows),
            Role.CODEMAKER: 1 if self.illegal_secret else 0,
        }

    def to_json(self) -> dict[str, Any]:
        """Plain data (the ``pegwatch judge --json`` output for a game)."""
        out: dict[str, Any] = {
            "rules": self.rules,
            "attempts": self.attempts,
            "solved": self.solved,
            "solved_row": self.solved_row,
            "mismarked_row": self.mismarked_row,
            "mismark_by_timeout": self.mismark_by_timeout,
            "codemaker_penalty_vp": self.codemaker_penalty_vp,
            "finished": self.finished,
            "final": self.final,
            "reveal_can_change": list(self.reveal_can_change),
            "illegal_rows": [r.to_json() for r in self.illegal_rows],
            "illegal_secret": self.illegal_secret,
            "unread_rows": list(self.unread_rows),
            "unsure_rows": list(self.unsure_rows),
            "scoring": self.scoring.value,
            "secret_source": self.secret_source,
        }
        if self.bounded_rows:
            out["bounded_rows"] = [b.to_json() for b in self.bounded_rows]
        if self.expected_marks is not None:
            out["expected_marks"] = [
                {"black": m.black, "white": m.white} for m in self.expected_marks
            ]
        if self.consistent is not None:
            out["consistent"] = self.consistent
            out["suspect_rows"] = list(self.suspect_rows or ())
            if self.consistency is not None:
                out["consistency"] = self.consistency.value
                out["consistent_at_least"] = self.consistent_at_least
                out["consistency_deciding"] = [d.to_json() for d in self.consistency_deciding]
        if self.scoring is Scoring.HOME:
            out["codemaker_points"] = self.codemaker_points
            out["decoder_bonus_points"] = self.decoder_bonus_points
            out["replay"] = self.replay
        out["notes"] = list(self.notes)
        if self.penalties:
            out["penalties"] = [dict(p) for p in self.penalties]
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GameVerdict:
        """The verdict :meth:`to_json` wrote (``from_json(v.to_json()) == v``).

        Keys that later versions added are optional, so a verdict from an
        older journal reads as it was: ``final`` False, and everything
        listed as changeable by a reveal.
        """
        expected = data.get("expected_marks")
        return cls(
            rules=str(data["rules"]),
            scoring=Scoring(data.get("scoring", Scoring.MSO.value)),
            attempts=int(data["attempts"]),
            solved=bool(data["solved"]),
            solved_row=data.get("solved_row"),
            mismarked_row=data.get("mismarked_row"),
            mismark_by_timeout=bool(data.get("mismark_by_timeout", False)),
            codemaker_penalty_vp=float(data.get("codemaker_penalty_vp", 0.0)),
            finished=bool(data["finished"]),
            consistent=data.get("consistent"),
            suspect_rows=tuple(data["suspect_rows"]) if "suspect_rows" in data else None,
            illegal_rows=tuple(IllegalRow(int(r["row"]), str(r["reason"]))
                               for r in data.get("illegal_rows", ())),
            illegal_secret=data.get("illegal_secret"),
            unread_rows=tuple(data.get("unread_rows", ())),
            expected_marks=None if expected is None else tuple(
                Feedback(int(m["black"]), int(m["white"])) for m in expected),
            codemaker_points=data.get("codemaker_points"),
            decoder_bonus_points=data.get("decoder_bonus_points"),
            replay=data.get("replay"),
            notes=tuple(str(n) for n in data.get("notes", ())),
            final=bool(data.get("final", False)),
            reveal_can_change=tuple(data.get("reveal_can_change", REVEAL_KEYS)),
            bounded_rows=tuple(BoundedRowVerdict.from_json(b) for b in data.get("bounded_rows", ())),
            unsure_rows=tuple(int(n) for n in data.get("unsure_rows", ())),
            consistent_at_least=data.get("consistent_at_least"),
            consistency=None if data.get("consistency") is None else Consistency(data["consistency"]),
            consistency_deciding=tuple(
                Deciding(int(d["row"]), tuple(d.get("deciding_holes", ())), tuple(d.get("deciding_keys", ())))
                for d in data.get("consistency_deciding", ())),
            secret_source=data.get("secret_source"),
            penalties=tuple(dict(p) for p in data.get("penalties", ())),
        )


@dataclass(frozen=True)
class MatchVerdict:
    """The judgement of a match.

    ``attempts`` are each player's attempts as codebreaker; ``vp`` the
    victory points after penalties (MSO) or, for home presets, 1 / ½ / 0 by
    ``points``. ``complete`` is False while games are missing, and ``vp``
    is then all zero (less any penalties). ``codemakers`` names the
    codemaker of each game: the roles alternate, except that a replayed home
    game keeps its codemaker. ``final`` is True when every game's verdict
    is; otherwise ``reveal_can_change`` lists the keys of
    :data:`MATCH_REVEAL_KEYS` that showing the hidden secrets can change.
    """

    rules: str
    players: tuple[str, str]
    vp: dict[str, float]
    attempts: dict[str, int]
    games: tuple[GameVerdict, ...]
    penalties_vp: dict[str, float]
    complete: bool
    game_attempts: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    codemakers: tuple[str, ...] = ()
    points: dict[str, int] | None = None
    illegal_moves: dict[str, int] = field(default_factory=dict)
    final: bool = False
    reveal_can_change: tuple[str, ...] = MATCH_REVEAL_KEYS
    #: The arbiter's penalties (rules/penalties.py, as JSON), already applied
    #: to ``vp``: ``docked_vp`` per player, ``games_lost`` game -> loser.
    penalties: tuple[Mapping[str, Any], ...] = ()
    docked_vp: dict[str, float] = field(default_factory=dict)
    games_lost: dict[int, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Plain data (the ``pegwatch judge --json`` output for a match)."""
        out: dict[str, Any] = {
            "rules": self.rules,
            "players": list(self.players),
            "vp": dict(self.vp),
            "attempts": dict(self.attempts),
            "penalties_vp": dict(self.penalties_vp),
            "complete": self.complete,
            "final": self.final,
            "reveal_can_change": list(self.reveal_can_change),
            "codemakers": list(self.codemakers),
            "illegal_moves": dict(self.illegal_moves),
            "games": [g.to_json() for g in self.games],
        }
        if self.points is not None:
            out["points"] = dict(self.points)
        if self.penalties:
            out["penalties"] = [dict(p) for p in self.penalties]
            out["docked_vp"] = dict(self.docked_vp)
            out["games_lost"] = {str(g): p for g, p in self.games_lost.items()}
        return out
