"""Helpers shared by the rules tests: build records without writing JSON."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pegwatch.rules.codes import Feedback, score
from pegwatch.rules.record import GameRecord, Role, Row


def make_game(
    secret: Sequence[str] | None,
    guesses: Sequence[Sequence[str]],
    *,
    marks: Mapping[int, tuple[int, int] | None] | None = None,
    true_secret: Sequence[str] | None = None,
    timeout: Role | None = None,
    rules: str = "mso",
) -> GameRecord:
    """A game whose rows are marked correctly against ``true_secret`` (or
    ``secret``) except the 1-based rows in ``marks``, marked as given (None:
    unmarked)."""
    truth = tuple(true_secret if true_secret is not None else secret or ())
    rows = []
    for number, guess in enumerate(guesses, start=1):
        fb: Feedback | None = score(truth, guess)
        if marks and number in marks:
            given = marks[number]
            fb = None if given is None else Feedback(*given)
        rows.append(Row(tuple(guess), fb))
    return GameRecord(rules, None if secret is None else tuple(secret), tuple(rows), timeout)


SECRET = ("red", "red", "yellow", "blue")
GUESSES = [
    ("red", "green", "blue", "yellow"),
    ("red", "red", "orange", "orange"),
    ("white", "red", "yellow", "blue"),
    ("red", "red", "yellow", "black"),
    ("red", "red", "yellow", "blue"),
]
MISSES = [
    ("green", "green", "green", "green"),
    ("orange", "orange", "orange", "orange"),
    ("white", "white", "black", "black"),
    ("pink", "pink", "pink", "pink"),
    ("red", "yellow", "red", "blue"),
    ("blue", "red", "yellow", "red"),
    ("red", "red", "blue", "yellow"),
    ("yellow", "red", "red", "blue"),
    ("red", "blue", "yellow", "red"),
    ("blue", "yellow", "red", "red"),
    ("red", "red", "yellow", "pink"),
    ("red", "red", "yellow", "white"),
]
"""Twelve guesses none of which is SECRET."""
