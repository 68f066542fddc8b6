"""Judging a game or a match (readings of the seeds in ``docs/rules.md``).

Under MSO rules (seed 000, THE CODEBREAKER FAILS and THE CODEMAKER FAILS):

* ``attempts`` is the row on which the code was solved;
* it is 13 when the code is not solved by the last row, or when the
  codebreaker's time runs out;
* a row is mis-marked when its marks differ from ``score(secret, guess)``;
* the first mis-marked row k credits the codebreaker with k+1 attempts (at
  most 13), except that if guess k was the code the codebreaker gets k
  attempts and the codemaker is penalised ½ VP;
* when the codemaker's time runs out, the current (last) row counts as
  incorrectly marked, with the same rule and exception;
* a mis-mark found at the end still applies after a later timeout or failure.

Home presets (seeds 002, 003) add codemaker points and the replay rule.

The judge works on a game in progress (no secret yet, last row unmarked):
the table calls it after every press. It never accuses on a guess: without
the secret it reports no mis-marked row, only how many codes still fit the
marks and which single rows could be wrong.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pegwatch.rules.codes import EMPTY, Feedback, is_read, score
from pegwatch.rules.consistency import analyse
from pegwatch.rules.errors import PegwatchError
from pegwatch.rules.legality import IllegalGuessError, check_guess, colours_in
from pegwatch.rules.match import match_vp
from pegwatch.rules.record import GameRecord, MatchRecord, Role, Row
from pegwatch.rules.variants import Scoring, Variant, get_variant

__all__ = [
    "GameVerdict",
    "IllegalRow",
    "MatchVerdict",
    "is_incomplete",
    "judge_game",
    "judge_match",
]

logger = logging.getLogger(__name__)

PENALTY_VP = 0.5
"""Seed 000: "the Codemaker is penalized by ½ VP"."""


@dataclass(frozen=True)
class IllegalRow:
    """A row whose guess breaks the variant's rules (seed 004, 3.4)."""

    row: int
    reason: str

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return {"row": self.row, "reason": self.reason}


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
    game would give if it stopped now.
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
            "illegal_rows": [r.to_json() for r in self.illegal_rows],
            "illegal_secret": self.illegal_secret,
            "unread_rows": list(self.unread_rows),
            "scoring": self.scoring.value,
        }
        if self.expected_marks is not None:
            out["expected_marks"] = [
                {"black": m.black, "white": m.white} for m in self.expected_marks
            ]
        if self.consistent is not None:
            out["consistent"] = self.consistent
            out["suspect_rows"] = list(self.suspect_rows or ())
        if self.scoring is Scoring.HOME:
            out["codemaker_points"] = self.codemaker_points
            out["decoder_bonus_points"] = self.decoder_bonus_points
            out["replay"] = self.replay
        out["notes"] = list(self.notes)
        return out


def is_incomplete(guess: tuple[str, ...], variant: Variant) -> bool:
    """True for an incomplete row: an empty hole where ``variant`` has no blanks.

    Its marks are never judged, neither for a mis-mark nor for consistency:
    how a codemaker marks a row that is not a code is not defined by the
    rules, and an "empty" read where a peg stands would make the expected
    marks wrong, so judging it could accuse a codemaker falsely (the worst
    error). The row is reported as illegal instead (seed 004 §3.4).
    """
    return not variant.blanks and EMPTY in guess


def _check_legality(
    record: GameRecord, variant: Variant
) -> tuple[tuple[IllegalRow, ...], str | None]:
    illegal_secret: str | None = None
    seen: set[str] = set()
    if record.secret is not None and is_read(record.secret):
        try:
            check_guess(record.secret, variant, what="secret")
            seen |= colours_in([record.secret])
        except IllegalGuessError as exc:
            illegal_secret = str(exc)
    illegal: list[IllegalRow] = []
    for number, row in enumerate(record.rows, start=1):
        if not is_read(row.guess):
            continue
        try:
            check_guess(row.guess, variant, colours_seen=seen, what=f"row {number}")
        except IllegalGuessError as exc:
            # Not added to the colours seen: every row using the stray colour
            # is reported, not just the first.
            illegal.append(IllegalRow(number, str(exc)))
        else:
            seen |= colours_in([row.guess])
    return tuple(illegal), illegal_secret


def judge_game(record: GameRecord, variant: Variant | None = None) -> GameVerdict:
    """Judge one game (finished or in progress) under its variant's rules."""
    if variant is None:
        variant = get_variant(record.rules)
    holes = variant.holes
    failure = variant.failure_attempts
    rows = record.rows
    secret = record.secret
    notes: list[str] = []
    if secret is not None and not is_read(secret):
        # Never accuse on a guess: a half-read secret judges nothing.
        notes.append("the secret was not fully read, so the game is judged as if unseen")
        secret = None
    unread = tuple(n for n, row in enumerate(rows, start=1) if not row.is_read)
    for number in unread:
        notes.append(f"row {number} was not fully read, so it is not judged")
    incomplete = tuple(
        n for n, row in enumerate(rows, start=1) if n not in unread and is_incomplete(row.guess, variant)
    )
    for number in incomplete:
        if rows[number - 1].marks is not None:
            notes.append(f"row {number} is incomplete (an empty hole), so its marks are not judged")
    illegal_rows, illegal_secret = _check_legality(record, variant)
    for bad in illegal_rows:
        notes.append(f"illegal guess: {bad.reason}")
    if illegal_secret:
        notes.append(f"illegal code: {illegal_secret}")

    # Row on which the code was placed. Without the secret, only the
    # codemaker's own "all black" says so.
    solved_row: int | None = None
    for number, row in enumerate(rows, start=1):
        if (secret is not None and row.guess == secret) or (
            secret is None and row.marks == Feedback(holes, 0) and number not in incomplete
        ):
            solved_row = number
            break
    last_relevant = solved_row if solved_row is not None else len(rows)
    if last_relevant < len(rows):
        later = (
            f"row {len(rows)} comes"
            if last_relevant + 1 == len(rows)
            else f"rows {last_relevant + 1}..{len(rows)} come"
        )
        notes.append(f"{later} after the code was solved on row {last_relevant}: ignored")

    expected: tuple[Feedback, ...] | None = None
    mismarked_by_marks: int | None = None
    if secret is not None:
        expected = tuple(score(secret, row.guess) for row in rows)
        for number, row in enumerate(rows[:last_relevant], start=1):
            if number in unread or number in incomplete:
                continue
            if row.marks is not None and row.marks != expected[number - 1]:
                mismarked_by_marks = number
                break

    # Has the game ended on the board alone (before any timeout)? The last
    # row that counts is marked, and it solved the code or filled the board.
    closing = rows[last_relevant - 1] if last_relevant else None
    ended_on_board = (
        closing is not None
        and closing.marks is not None
        and (solved_row is not None or last_relevant >= variant.rows)
    )

    timeout_row: int | None = None
    if record.timeout is Role.CODEMAKER:
        if ended_on_board:
            notes.append("the codemaker's timeout came after the game had ended; it changes nothing")
        else:
            timeout_row = last_relevant
    elif record.timeout is Role.CODEBREAKER and solved_row is not None:
        notes.append("the codebreaker's timeout came after the code was solved; it changes nothing")

    candidates = [k for k in (mismarked_by_marks, timeout_row) if k is not None]
    mismarked_row = min(candidates) if candidates else None
    by_timeout = mismarked_row is not None and mismarked_row == timeout_row and (
        mismarked_by_marks is None or timeout_row < mismarked_by_marks
    )

    penalty = 0.0
    if mismarked_row is not None:
        was_code = secret is not None and rows[mismarked_row - 1].guess == secret
        if was_code:
            attempts = mismarked_row
            penalty = PENALTY_VP
        else:
            attempts = min(mismarked_row + 1, failure)
            if secret is None:
                notes.append(
                    f"secret unknown: if row {mismarked_row} was the code, the codebreaker "
                    f"gets {mismarked_row} attempts and the codemaker loses ½ VP instead"
                )
    elif solved_row is not None:
        attempts = solved_row
    else:
        attempts = failure

    # Once the secret shows a mis-mark, later rows cannot change the result.
    finished = record.timeout is not None or ended_on_board or (
        secret is not None and mismarked_row is not None
    )

    consistent: int | None = None
    suspects: tuple[int, ...] | None = None
    if secret is None:
        try:
            # Incomplete rows count as unmarked: the numbering of the rows stays.
            counted = [
                Row(row.guess, None) if n in incomplete else row
                for n, row in enumerate(rows[:last_relevant], start=1)
            ]
            report = analyse(counted, variant)
        except PegwatchError as exc:
            # A custom preset too large for the search: judge the rest anyway.
            notes.append(f"consistency not analysed: {exc}")
        else:
            consistent, suspects = report.consistent, report.suspect_rows
        if consistent == 0:
            notes.append(
                "no code agrees with the marks, so some row is mis-marked; "
                + (
                    f"if only one row is wrong, it is one of rows {', '.join(map(str, suspects))}"
                    if suspects
                    else "more than one row must be wrong"
                )
                + "; reveal the secret to judge it"
            )

    codemaker_points: int | None = None
    bonus: int | None = None
    replay: bool | None = None
    if variant.scoring is Scoring.HOME:
        replay = mismarked_by_marks is not None
        if replay:
            # The game is replayed, so its rows score nothing; the decoder
            # gets the bonus (seed 002 "Indication Errors").
            codemaker_points, bonus = 0, variant.mismark_bonus_points
        else:
            codemaker_points, bonus = min(last_relevant, variant.rows), 0
        if secret is None:
            notes.append("secret unknown: an indication error (replay) cannot be judged yet")
        penalty = 0.0

    return GameVerdict(
        rules=record.rules,
        scoring=variant.scoring,
        attempts=attempts,
        solved=solved_row is not None,
        solved_row=solved_row,
        mismarked_row=mismarked_row,
        mismark_by_timeout=by_timeout,
        codemaker_penalty_vp=penalty,
        finished=finished,
        consistent=consistent,
        suspect_rows=suspects,
        illegal_rows=illegal_rows,
        illegal_secret=illegal_secret,
        unread_rows=unread,
        expected_marks=expected,
        codemaker_points=codemaker_points,
        decoder_bonus_points=bonus,
        replay=replay,
        notes=tuple(notes),
    )


@dataclass(frozen=True)
class MatchVerdict:
    """The judgement of a match.

    ``attempts`` are each player's attempts as codebreaker; ``vp`` the
    victory points after penalties (MSO) or, for home presets, 1 / ½ / 0 by
    ``points``. ``complete`` is False while games are missing, and ``vp``
    is then all zero (less any penalties). ``codemakers`` names the
    codemaker of each game: the roles alternate, except that a replayed home
    game keeps its codemaker.
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

    def to_json(self) -> dict[str, Any]:
        """Plain data (the ``pegwatch judge --json`` output for a match)."""
        out: dict[str, Any] = {
            "rules": self.rules,
            "players": list(self.players),
            "vp": dict(self.vp),
            "attempts": dict(self.attempts),
            "penalties_vp": dict(self.penalties_vp),
            "complete": self.complete,
            "codemakers": list(self.codemakers),
            "illegal_moves": dict(self.illegal_moves),
            "games": [g.to_json() for g in self.games],
        }
        if self.points is not None:
            out["points"] = dict(self.points)
        return out


def judge_match(record: MatchRecord, variant: Variant | None = None) -> MatchVerdict:
    """Judge a match: each game, then attempts, VP and penalties per player."""
    if variant is None:
        variant = get_variant(record.rules)
    players = record.players
    games = tuple(judge_game(g, variant) for g in record.games)
    attempts: Counter[str] = Counter({p: 0 for p in players})
    failure_total: Counter[str] = Counter({p: 0 for p in players})
    penalties: dict[str, float] = {p: 0.0 for p in players}
    per_game: dict[str, list[int]] = {p: [] for p in players}
    illegal: Counter[str] = Counter({p: 0 for p in players})
    points: dict[str, int] = {p: 0 for p in players}
    codemakers: list[str] = []
    turn = 0
    for verdict in games:
        maker, breaker = players[turn % 2], players[(turn + 1) % 2]
        codemakers.append(maker)
        attempts[breaker] += verdict.attempts
        failure_total[breaker] += variant.failure_attempts
        per_game[breaker].append(verdict.attempts)
        penalties[maker] += verdict.codemaker_penalty_vp
        illegal[breaker] += verdict.illegal_moves[Role.CODEBREAKER]
        illegal[maker] += verdict.illegal_moves[Role.CODEMAKER]
        points[maker] += verdict.codemaker_points or 0
        points[breaker] += verdict.decoder_bonus_points or 0
        # Seed 002: "replay the game": the same codemaker sets a code again.
        if not verdict.replay:
            turn += 1
    complete = turn >= variant.games_per_match
    if variant.scoring is Scoring.HOME:
        a, b = players
        if not complete:
            vp = {a: 0.0, b: 0.0}
        elif points[a] == points[b]:
            vp = {a: 0.5, b: 0.5}
        else:
            vp = {a: float(points[a] > points[b]), b: float(points[b] > points[a])}
    elif complete:
        vp = match_vp(dict(attempts), failure_total=failure_total, penalties=penalties)
    else:
        vp = {p: 0.0 - penalties[p] for p in players}
    return MatchVerdict(
        rules=record.rules,
        players=players,
        vp=vp,
        attempts=dict(attempts),
        games=games,
        penalties_vp=penalties,
        complete=complete,
        game_attempts={p: tuple(v) for p, v in per_game.items()},
        codemakers=tuple(codemakers),
        points=points if variant.scoring is Scoring.HOME else None,
        illegal_moves=dict(illegal),
    )
