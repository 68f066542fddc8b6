"""Legal moves (seed 004, Rules of Competition 3.4 and 3.5).

A guess is checked when it is confirmed, that is when the codebreaker
presses the clock ("a move is confirmed once a player hits their clock").
An illegal guess is reported, never silently accepted, and counted against
the player who made it; what happens next is the arbiter's call (3.4).

A *record* that uses more distinct colours than its variant's set has is
another matter: no board can show that, so a colour name in it is wrong (a
misread or mistyped name, or the wrong preset). Judging it would score a
wrong name and could accuse the codemaker falsely, so the judge refuses it
as bad input (:func:`check_colour_count`, :class:`ColourCountError`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from pegwatch.rules.codes import EMPTY, UNREAD
from pegwatch.rules.errors import BadInput
from pegwatch.rules.record import RecordError
from pegwatch.rules.variants import Variant

__all__ = [
    "ColourCountError",
    "IllegalGuessError",
    "check_colour_count",
    "check_guess",
    "colours_in",
]


class IllegalGuessError(BadInput):
    """A guess (or a code) breaks the variant's rules; the message says how."""


class ColourCountError(RecordError):
    """A record uses more distinct colours than its variant has: bad input.

    The message names the file (when known) and the field where the count
    goes over, e.g. ``game.json: rows[6].guess: ...``; ``where`` holds the
    field alone."""

    def __init__(self, message: str, where: str) -> None:
        super().__init__(message)
        self.where = where


def check_colour_count(
    codes: Iterable[tuple[str, Sequence[str]]], variant: Variant, *, source: str = ""
) -> None:
    """Raise :class:`ColourCountError` when ``codes`` use more distinct colours
    than ``variant.colours``.

    ``codes`` are ``(field, code)`` pairs in record order, e.g.
    ``("secret", ...)``, ``("rows[0].guess", ...)``; the error names the
    first field that brings the count over. ``"empty"`` (a blank, legal or
    not: blanks are judged by :func:`check_guess`), ``"unknown"`` and
    ``"occluded"`` are not colours and are not counted.
    """
    seen: dict[str, None] = {}
    for where, code in codes:
        for peg in code:
            if peg != EMPTY and peg not in UNREAD:
                seen.setdefault(peg)
        if len(seen) > variant.colours:
            names = ", ".join(seen)
            place = ": ".join(p for p in (source, where) if p)
            raise ColourCountError(
                f"{place}: brings the distinct colours in the record to {len(seen)} "
                f"({names}); {variant.name} has {variant.colours}: a colour name is wrong "
                "(misread or mistyped) or the rules preset is",
                where,
            )


def colours_in(codes: Iterable[Sequence[str]]) -> frozenset[str]:
    """The distinct peg colours (not counting blanks) in ``codes``."""
    return frozenset(
        peg for code in codes for peg in code if peg != EMPTY and peg not in UNREAD
    )


def check_guess(
    guess: Sequence[str],
    variant: Variant,
    *,
    colours_seen: Iterable[str] = (),
    what: str = "guess",
) -> None:
    """Raise :class:`IllegalGuessError` unless ``guess`` is legal in ``variant``.

    ``colours_seen`` are the colours already used in this game (earlier
    rows, and the secret if known): a board of ``variant.colours`` colours
    cannot show more distinct colours than that, so the first guess that
    goes over is illegal (most likely a peg from another set, or a misread
    colour name). Holes the reader could not read (``unknown``,
    ``occluded``) are not a move at all and are not checked.
    """
    if len(guess) != variant.holes:
        raise IllegalGuessError(
            f"{what} has {len(guess)} pegs; the {variant.name} board has {variant.holes} holes"
        )
    blanks = [i + 1 for i, peg in enumerate(guess) if peg == EMPTY]
    if blanks and not variant.blanks:
        holes = ", ".join(str(h) for h in blanks)
        raise IllegalGuessError(
            f"{what} is incomplete: hole {holes} empty, and {variant.name} allows no blanks"
        )
    if not variant.repeats:
        repeated = sorted(c for c, n in Counter(guess).items() if n > 1 and c not in UNREAD)
        if repeated:
            raise IllegalGuessError(
                f"{what} repeats {repeated[0]!r}, and {variant.name} allows no repeated colours"
            )
    seen = set(colours_seen) - {EMPTY} - UNREAD
    new = [
        peg for peg in dict.fromkeys(guess) if peg != EMPTY and peg not in UNREAD and peg not in seen
    ]
    if len(seen) + len(new) > variant.colours:
        raise IllegalGuessError(
            f"{what} brings the colours used to {len(seen) + len(new)} "
            f"({', '.join(sorted(seen | set(new)))}); {variant.name} has {variant.colours}"
        )
