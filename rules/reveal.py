"""What showing a hidden secret can still change in a verdict.

The result of a game (seed 000, THE CODEBREAKER FAILS / THE CODEMAKER
FAILS) depends on the secret only through two rows: the first row whose
guess is the code, and the first judged row whose marks are wrong.
:func:`settle` gives the result from those two; :func:`reveal_can_change`
tries every pair a legal secret can produce and lists the verdict keys that
differ from the verdict given blind. The readings are in ``docs/rules.md``
("The hidden-secret judge").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from pegwatch.rules.bounded import BoundedRow, Judgement, judge_row
from pegwatch.rules.codes import EMPTY, Code, is_read, score
from pegwatch.rules.consistency import ConsistencyReport
from pegwatch.rules.record import Role, Row
from pegwatch.rules.variants import Scoring, Variant

__all__ = ["PENALTY_VP", "REVEAL_KEYS", "Outcome", "reveal_can_change", "settle"]

PENALTY_VP = 0.5
"""Seed 000: "the Codemaker is penalized by ½ VP"."""

REVEAL_KEYS: tuple[str, ...] = (
    "attempts",
    "solved",
    "solved_row",
    "mismarked_row",
    "mismark_by_timeout",
    "codemaker_penalty_vp",
    "finished",
    "replay",
    "codemaker_points",
    "decoder_bonus_points",
    "illegal_secret",
)
"""The game-verdict keys that showing a hidden secret may change, in the
order ``reveal_can_change`` lists them. Showing it always drops
``consistent`` and ``suspect_rows``, adds ``expected_marks`` and changes
``notes``, ``final`` and ``reveal_can_change``: those are never listed."""

@dataclass(frozen=True)
class Outcome:
    """The result fields of a verdict, given where the code was placed
    (``solved_row``) and the first row whose marks are wrong."""

    attempts: int
    solved_row: int | None
    mismarked_row: int | None
    by_timeout: bool
    penalty: float
    finished: bool
    ended_on_board: bool
    replay: bool | None
    codemaker_points: int | None
    bonus: int | None

    def keys(self) -> dict[str, object]:
        """The verdict's JSON keys these fields give (see :data:`REVEAL_KEYS`)."""
        return {
            "attempts": self.attempts,
            "solved": self.solved_row is not None,
            "solved_row": self.solved_row,
            "mismarked_row": self.mismarked_row,
            "mismark_by_timeout": self.by_timeout,
            "codemaker_penalty_vp": self.penalty,
            "finished": self.finished,
            "replay": self.replay,
            "codemaker_points": self.codemaker_points,
            "decoder_bonus_points": self.bonus,
        }


def settle(
    rows: tuple[Row, ...],
    variant: Variant,
    timeout: Role | None,
    solved_row: int | None,
    mismarked_by_marks: int | None,
    *,
    secret_known: bool,
) -> Outcome:
    """Seed 000's THE CODEBREAKER FAILS / THE CODEMAKER FAILS, given the
    solving row and the first mis-marked row (None when none). With the
    secret known, a mis-marked row is the code exactly when it is the
    solving row (no row after the solving row is judged)."""
    failure = variant.failure_attempts
    last_relevant = solved_row if solved_row is not None else len(rows)
    # Has the game ended on the board alone (before any timeout)? The last
    # row that counts is marked, and it solved the code or filled the board.
    closing = rows[last_relevant - 1] if last_relevant else None
    ended_on_board = (
        closing is not None
        and closing.marks is not None
        and (solved_row is not None or last_relevant >= variant.rows)
    )
    timeout_row: int | None = None
    if timeout is Role.CODEMAKER and not ended_on_board and last_relevant:
        timeout_row = last_relevant
    candidates = [k for k in (mismarked_by_marks, timeout_row) if k is not None]
    mismarked_row = min(candidates) if candidates else None
    by_timeout = mismarked_row is not None and mismarked_row == timeout_row and (
        mismarked_by_marks is None or mismarked_row < mismarked_by_marks
    )
    penalty = 0.0
    if mismarked_row is not None:
        if secret_known and mismarked_row == solved_row:
            attempts = mismarked_row
            penalty = PENALTY_VP
        else:
            attempts = min(mismarked_row + 1, failure)
    elif solved_row is not None:
        attempts = solved_row
    else:
        attempts = failure
    # Once the secret shows a mis-mark, later rows cannot change the result.
    finished = timeout is not None or ended_on_board or (
        secret_known and mismarked_row is not None
    )
    replay: bool | None = None
    points: int | None = None
    bonus: int | None = None
    if variant.scoring is Scoring.HOME:
        replay = mismarked_by_marks is not None
        if replay:
            # The game is replayed, so its rows score nothing; the decoder
            # gets the bonus (seed 002 "Indication Errors").
            points, bonus = 0, variant.mismark_bonus_points
        else:
            points, bonus = min(last_relevant, variant.rows), 0
        penalty = 0.0
    return Outcome(
        attempts, solved_row, mismarked_row, by_timeout, penalty, finished,
        ended_on_board, replay, points, bonus,
    )


def reveal_can_change(
    rows: tuple[Row, ...],
    variant: Variant,
    timeout: Role | None,
    judged: tuple[int, ...],
    blind: Outcome,
    report: ConsistencyReport | None,
    *,
    bounded: Mapping[int, BoundedRow] | None = None,
    approximate: tuple[int, ...] = (),
) -> tuple[str, ...]:
    """The verdict keys that some legal secret, once shown, would change.

    The verdict with a secret S depends on S only through the row that
    placed it (the first row whose guess is S, or none) and the first judged
    row whose marks differ from score(S, guess). For a secret some row
    played, both are found directly; for a secret no row played, the
    consistency pass says which first wrong rows some code allows
    (``first_failed``), less the codes that rows played. Each such pair is
    judged as if revealed and compared with the blind verdict. ``bounded``
    rows (known only within bounds, by number) count as wrong for a secret
    when every completion disagrees with it, as the judge counts them;
    ``approximate`` rows (scored by ranges only) may each be the first wrong.
    """
    base = blind.keys()

    within = dict(bounded or {})

    def first_wrong(code: Code) -> int | None:
        for number in sorted({*judged, *within}):
            if number in within:
                if judge_row(code, within[number], variant).verdict is Judgement.MISMARK:
                    return number
            elif score(code, rows[number - 1].guess) != rows[number - 1].marks:
                return number
        return None

    # Guesses that are codes of the variant's space, with their first row.
    played: dict[Code, int] = {}
    for number, row in enumerate(rows, start=1):
        guess = row.guess
        if is_read(guess) and (variant.blanks or EMPTY not in guess) and guess not in played:
            played[guess] = number
    scenarios: set[tuple[int | None, int | None]] = set()
    wrong_first: Counter[int | None] = Counter()
    for guess, number in played.items():
        first = first_wrong(guess)
        wrong_first[first] += 1
        if variant.repeats or len(set(guess)) == len(guess):
            # A legal code: the secret may be this row's guess.
            scenarios.add((number, first if first is not None and first <= number else None))
    if report is None:
        # No analysis (too large a preset): any judged row may be the first wrong.
        scenarios.add((None, None))
        scenarios.update((None, n) for n in judged)
    else:
        if report.consistent - wrong_first[None] > 0:
            scenarios.add((None, None))
        for number, count in report.first_failed:
            if count - wrong_first[number] > 0:
                scenarios.add((None, number))
    # Rows the consistency pass scored by ranges only may be the first wrong
    # for codes it could not single out: listed as possible (a superset).
    scenarios.update((None, number) for number in approximate)
    changed = {"illegal_secret"}  # the secret shown may itself break the rules
    for solved_row, first in scenarios:
        shown = settle(rows, variant, timeout, solved_row, first, secret_known=True).keys()
        changed |= {key for key, value in shown.items() if value != base[key]}
    return tuple(key for key in REVEAL_KEYS if key in changed)
