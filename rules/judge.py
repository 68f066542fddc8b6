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
marks (every row is evidence, even rows after an all-black mark) and which
single rows could be wrong. Such a verdict is never ``final``: it says which
of its keys showing the secret can still change (``reveal_can_change``).

A row the camera read only within bounds (a doubtful hole, a count known
as a range) is judged over every completion (:mod:`pegwatch.rules.bounded`):
it counts as mis-marked only when every completion disagrees with its
marks; one that may go either way is listed in ``unsure_rows`` when it can
change the result. Without the secret such rows join the consistency check
(:mod:`pegwatch.rules.bounded_consistency`).

A record with more distinct colours than its variant has is bad input
(:class:`~pegwatch.rules.legality.ColourCountError`), not a game to judge.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Literal

from pegwatch.rules import legality
from pegwatch.rules.bounded import Judgement, RowJudgement, judge_row
from pegwatch.rules.bounded_consistency import BoundedReport, Consistency, analyse_bounded
from pegwatch.rules.codes import EMPTY, Feedback, is_read, score
from pegwatch.rules.errors import BadInput
from pegwatch.rules.legality import ColourCountError, IllegalGuessError, check_guess, colours_in
from pegwatch.rules.match import match_vp
from pegwatch.rules.record import GameRecord, MatchRecord, Role, Row
from pegwatch.rules.reveal import REVEAL_KEYS, reveal_can_change, settle
from pegwatch.rules.variants import Scoring, Variant, get_variant
from pegwatch.rules.verdict import (
    MATCH_REVEAL_KEYS,
    BoundedRowVerdict,
    GameVerdict,
    IllegalRow,
    MatchVerdict,
)

__all__ = [
    "MATCH_REVEAL_KEYS",
    "REVEAL_KEYS",
    "GameVerdict",
    "IllegalRow",
    "MatchVerdict",
    "is_incomplete",
    "judge_game",
    "judge_match",
]

logger = logging.getLogger(__name__)


# Which match keys a game key that may change can change.
_MATCH_KEYS_OF: dict[str, tuple[str, ...]] = {
    "attempts": ("vp", "attempts"),
    "codemaker_penalty_vp": ("vp", "penalties_vp"),
    # A replayed home game keeps its codemaker: every later role shifts.
    "replay": MATCH_REVEAL_KEYS,
    "codemaker_points": ("vp", "points"),
    "decoder_bonus_points": ("vp", "points"),
    "illegal_secret": ("illegal_moves",),
}


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


def _after(first: int, last: int) -> str:
    return f"row {last} comes" if first == last else f"rows {first}..{last} come"


def judge_game(
    record: GameRecord,
    variant: Variant | None = None,
    *,
    source: str = "",
    where: str = "",
    extra_colours: Literal["raise", "unjudged"] = "raise",
) -> GameVerdict:
    """Judge one game (finished or in progress) under its variant's rules.

    A record using more distinct colours than the variant has raises
    :class:`~pegwatch.rules.legality.ColourCountError` naming ``source`` (the
    file) and the field (``where`` prefixes it inside a match, e.g.
    ``games[1]``). With ``extra_colours="unjudged"`` (a table that must go
    on) such a game is judged instead without judging any marks.
    """
    if variant is None:
        variant = get_variant(record.rules)
    holes = variant.holes
    rows = record.rows
    secret = record.secret
    notes: list[str] = []
    colours_wrong = False
    try:
        prefix = f"{where}." if where else ""
        fields = [(f"{prefix}rows[{i}].guess", row.guess) for i, row in enumerate(rows)]
        if secret is not None:
            fields.insert(0, (f"{prefix}secret", secret))
        legality.check_colour_count(fields, variant, source=source)
    except ColourCountError as exc:
        if extra_colours == "raise":
            raise
        colours_wrong = True
        notes.append(f"{exc}; no marks are judged until the colour names are corrected")
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
    # The rows whose marks are judged: read, complete and marked.
    judged = tuple(
        n for n, row in enumerate(rows, start=1)
        if n not in unread and n not in incomplete and row.marks is not None
    )

    expected: tuple[Feedback, ...] | None = None
    bounded: tuple[BoundedRowVerdict, ...] = ()
    unsure: tuple[int, ...] = ()
    bounded_report: BoundedReport | None = None
    consistent: int | None = None
    suspects: tuple[int, ...] | None = None
    reveal: tuple[str, ...]
    if secret is not None:
        solved_row = next((n for n, row in enumerate(rows, start=1) if row.guess == secret), None)
        last_relevant = solved_row if solved_row is not None else len(rows)
        expected = tuple(score(secret, row.guess) for row in rows)
        wrong = {n for n in judged if rows[n - 1].marks != expected[n - 1]}
        if not colours_wrong:
            bounded = _judge_bounded(rows, secret, variant, unread, last_relevant)
            wrong |= {b.row for b in bounded if b.judgement.verdict is Judgement.MISMARK}
        mismarked_by_marks = None if colours_wrong else min(
            (n for n in wrong if n <= last_relevant), default=None)
        # Only a doubtful row before the result can change it.
        horizon = last_relevant if mismarked_by_marks is None else mismarked_by_marks
        unsure = tuple(b.row for b in bounded if b.row <= horizon and (
            b.judgement.verdict is Judgement.UNSURE or b.judgement.may_be_code))
        notes.extend(_bounded_notes(bounded))
        outcome = settle(rows, variant, record.timeout, solved_row, mismarked_by_marks,
                          secret_known=True)
        if last_relevant < len(rows):
            notes.append(f"{_after(last_relevant + 1, len(rows))} after the code was solved "
                         f"on row {last_relevant}: ignored")
        if unsure:
            notes.append(f"the result may change once {_rows(unsure)} "
                         f"{'is' if len(unsure) == 1 else 'are'} read for certain")
        final = not colours_wrong
        reveal = () if final else REVEAL_KEYS
    else:
        # Without the secret only the codemaker's own "all black" says the
        # code was placed; the result is provisional.
        solved_row = next(
            (n for n, row in enumerate(rows, start=1)
             if row.marks == Feedback(holes, 0) and n not in incomplete),
            None,
        )
        outcome = settle(rows, variant, record.timeout, solved_row, None, secret_known=False)
        if solved_row is not None and solved_row < len(rows):
            notes.append(
                f"{_after(solved_row + 1, len(rows))} after row {solved_row} was marked all "
                "black: play went on after the "
                "codemaker called the code solved, so either that mark was wrong or the later "
                "rows are irrelevant; every row is kept as evidence for the consistency check"
            )
        if not colours_wrong:
            try:
                # Incomplete rows count as unmarked: the numbering of the rows stays.
                counted = [
                    Row(row.guess, None) if n in incomplete else row
                    for n, row in enumerate(rows, start=1)
                ]
                bounded_report = analyse_bounded(counted, variant)
            except BadInput as exc:
                # A custom preset too large for the search: judge the rest anyway.
                notes.append(f"consistency not analysed: {exc}")
            else:
                consistent = bounded_report.report.consistent
                suspects = bounded_report.report.suspect_rows
                if bounded_report.verdict is Consistency.UNSURE:
                    notes.append("whether any code fits the marks depends on "
                                 + "; ".join(_deciding_text(d.row, d.holes, d.keys)
                                             for d in bounded_report.deciding))
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
        final = False
        reveal = REVEAL_KEYS if colours_wrong else reveal_can_change(
            rows, variant, record.timeout, judged, outcome,
            None if bounded_report is None else bounded_report.report,
            bounded={n: rows[n - 1].bounded for n in bounded_report.bounded_rows}
            if bounded_report is not None else None,
            approximate=() if bounded_report is None else bounded_report.by_ranges,
        )

    if record.timeout is Role.CODEMAKER and outcome.ended_on_board:
        notes.append("the codemaker's timeout came after the game had ended; it changes nothing")
    elif record.timeout is Role.CODEBREAKER and solved_row is not None:
        notes.append("the codebreaker's timeout came after the code was solved; it changes nothing")
    k = outcome.mismarked_row
    if secret is None and k is not None and variant.scoring is Scoring.MSO:
        notes.append(
            f"secret unknown: if row {k} was the code, the codebreaker "
            f"gets {k} attempts and the codemaker loses ½ VP instead"
        )
    if secret is None and variant.scoring is Scoring.HOME:
        notes.append("secret unknown: an indication error (replay) cannot be judged yet")
    if secret is None:
        changes = [key for key in reveal if key != "illegal_secret"]
        notes.append(
            "provisional until the secret is shown: showing it can still change "
            + (", ".join(changes) if changes else "no result, only whether the code itself is legal")
        )

    return GameVerdict(
        rules=record.rules,
        scoring=variant.scoring,
        attempts=outcome.attempts,
        solved=outcome.solved_row is not None,
        solved_row=outcome.solved_row,
        mismarked_row=outcome.mismarked_row,
        mismark_by_timeout=outcome.by_timeout,
        codemaker_penalty_vp=outcome.penalty,
        finished=outcome.finished,
        consistent=consistent,
        suspect_rows=suspects,
        illegal_rows=illegal_rows,
        illegal_secret=illegal_secret,
        unread_rows=unread,
        expected_marks=expected,
        codemaker_points=outcome.codemaker_points,
        decoder_bonus_points=outcome.bonus,
        replay=outcome.replay,
        notes=tuple(notes),
        final=final,
        reveal_can_change=reveal,
        bounded_rows=bounded,
        unsure_rows=unsure,
        consistent_at_least=None if bounded_report is None else bounded_report.consistent_at_least,
        consistency=None if bounded_report is None else bounded_report.verdict,
        consistency_deciding=() if bounded_report is None else bounded_report.deciding,
        secret_source=_secret_source(record) if secret is not None else None,
    )


def _judge_bounded(
    rows: tuple[Row, ...], secret: tuple[str, ...], variant: Variant,
    unread: tuple[int, ...], last_relevant: int,
) -> tuple[BoundedRowVerdict, ...]:
    """The rows not fully read, judged over every completion against the secret."""
    out = []
    for n in unread:
        if n > last_relevant:
            continue
        if rows[n - 1].marks_unread is not None and rows[n - 1].bounds is None:
            continue  # counts not read at all: every mark is possible, nothing to prove
        bounded = rows[n - 1].bounded
        if not bounded.is_marked or (not variant.blanks and (EMPTY,) in bounded.holes):
            continue  # unmarked, or incomplete whatever it holds: nothing to judge
        out.append(BoundedRowVerdict(n, judge_row(secret, bounded, variant)))
    return tuple(out)


def _rows(numbers: tuple[int, ...]) -> str:
    return ("row " if len(numbers) == 1 else "rows ") + ", ".join(map(str, numbers))


def _deciding_text(row: int, holes: tuple[int, ...], keys: tuple[str, ...]) -> str:
    parts = []
    if holes:
        parts.append(("hole " if len(holes) == 1 else "holes ") + ", ".join(map(str, holes)))
    parts.extend(f"the {key} count" for key in keys)
    return f"row {row}: " + (" and ".join(parts) if parts else "what it holds")


def _bounded_notes(bounded: tuple[BoundedRowVerdict, ...]) -> list[str]:
    notes = []
    for b in bounded:
        j: RowJudgement = b.judgement
        if j.verdict is Judgement.MISMARK:
            notes.append(f"row {b.row} was not fully read, but every reading of it is mis-marked")
        elif j.verdict is Judgement.CORRECT:
            notes.append(f"row {b.row} was not fully read, but every reading of it is marked correctly")
        else:
            notes.append("unsure: " + _deciding_text(b.row, j.deciding_holes, j.deciding_keys)
                         + " decides whether it is mis-marked")
        if j.may_be_code:
            notes.append(f"row {b.row} may be the code itself, which it is decides the result")
    return notes


def _secret_source(record: GameRecord) -> str | None:
    source = record.extra.get("secret_source")
    return source if isinstance(source, str) else None


def judge_match(
    record: MatchRecord,
    variant: Variant | None = None,
    *,
    source: str = "",
    extra_colours: Literal["raise", "unjudged"] = "raise",
) -> MatchVerdict:
    """Judge a match: each game, then attempts, VP and penalties per player.

    ``source`` and ``extra_colours`` are as for :func:`judge_game`; an error
    names the game's field, e.g. ``games[1].rows[3].guess``."""
    if variant is None:
        variant = get_variant(record.rules)
    players = record.players
    games = tuple(
        judge_game(g, variant, source=source, where=f"games[{i}]", extra_colours=extra_colours)
        for i, g in enumerate(record.games)
    )
    changing = {key for g in games for k in g.reveal_can_change for key in _MATCH_KEYS_OF.get(k, ())}
    if variant.scoring is not Scoring.HOME:
        changing.discard("points")
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
        final=all(g.final for g in games),
        reveal_can_change=tuple(k for k in MATCH_REVEAL_KEYS if k in changing),
    )
