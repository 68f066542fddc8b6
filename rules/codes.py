"""Codes and their feedback (black and white key pegs).

A code is a tuple of colour names. Colour names are free strings (the
table's vision reader and the arbiter's records decide them); the one
reserved name is :data:`EMPTY`, an empty hole, which counts as a colour of
its own wherever a variant allows blanks.

Two paths score a guess:

* :func:`score` compares two codes of strings, the reference definition;
* :func:`score_against_all` scores one guess, as colour indices, against
  every possible code at once with numpy. The consistency analysis uses it
  to ask "which secrets agree with the rows so far?" without the secret.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import BadInput

__all__ = [
    "EMPTY",
    "NO_COLOUR",
    "OCCLUDED",
    "UNKNOWN",
    "UNREAD",
    "Code",
    "CodeLengthError",
    "Feedback",
    "all_codes",
    "black_and_common",
    "code_count",
    "codes_by_hole",
    "colour_counts",
    "counts_by_colour",
    "is_read",
    "score",
    "score_against_all",
]

logger = logging.getLogger(__name__)

EMPTY = "empty"
"""The colour name of an empty hole."""

UNKNOWN = "unknown"
"""A hole the vision reader could not read with confidence."""

OCCLUDED = "occluded"
"""A hole the vision reader could not see (a hand, a sleeve)."""

UNREAD = frozenset({UNKNOWN, OCCLUDED})
"""Answers that are not colours: a code holding one is never judged."""

Code = tuple[str, ...]

NO_COLOUR = 255
"""Colour index that no code contains: a peg that cannot be in the secret
(an extra colour, or a blank in a variant without blanks) never matches."""

# 9 colours x 6 holes is 531441 codes and 8 x 7 is 2 million; 10 x 7 would
# be 10 million, which no variant needs, in over 100 MB of tables.
_MAX_CODES = 4_000_000


class CodeLengthError(BadInput):
    """Two codes that must be compared have different lengths."""


class Feedback(NamedTuple):
    """The key pegs for one row.

    ``black`` counts pegs of the right colour in the right hole (red
    indicator pegs in Hasbro sets); ``white`` counts further pegs of a right
    colour in a wrong hole.
    """

    black: int
    white: int

    def __str__(self) -> str:
        return f"{self.black}B{self.white}W"


def score(secret: Sequence[str], guess: Sequence[str]) -> Feedback:
    """Score ``guess`` against ``secret`` by the standard definition.

    black is the number of holes where both codes hold the same colour;
    black + white is the number of pegs the two codes have in common
    counting colours with multiplicity (sum over colours of the smaller
    count). An :data:`EMPTY` hole is compared like any colour.

    >>> score(("red", "red", "yellow", "blue"), ("red", "green", "blue", "yellow"))
    Feedback(black=1, white=2)
    """
    if len(secret) != len(guess):
        raise CodeLengthError(
            f"cannot score a {len(guess)}-peg guess against a {len(secret)}-peg code"
        )
    black = sum(1 for s, g in zip(secret, guess, strict=True) if s == g)
    common = sum((Counter(secret) & Counter(guess)).values())
    return Feedback(black, common - black)


def is_read(code: Sequence[str]) -> bool:
    """True unless some hole of ``code`` is :data:`UNKNOWN` or :data:`OCCLUDED`."""
    return not any(peg in UNREAD for peg in code)


def code_count(colours: int, holes: int) -> int:
    """How many codes there are with repeats allowed: ``colours ** holes``."""
    return int(colours**holes)


def _check_size(colours: int, holes: int) -> None:
    if not 1 <= colours < NO_COLOUR:
        raise BadInput(f"colours must be 1..{NO_COLOUR - 1}, got {colours}")
    if holes < 1:
        raise BadInput(f"holes must be at least 1, got {holes}")
    if code_count(colours, holes) > _MAX_CODES:
        raise BadInput(
            f"{colours} colours x {holes} holes is {code_count(colours, holes)} codes; "
            f"the vectorised path handles at most {_MAX_CODES}"
        )


@lru_cache(maxsize=8)
def _codes_by_hole(colours: int, holes: int) -> NDArray[np.uint8]:
    # Stored hole-major (holes, n) so that comparing one hole against a
    # guess peg reads one contiguous row: this is the hot loop.
    n = code_count(colours, holes)
    index = np.arange(n, dtype=np.int64)
    table = np.empty((holes, n), dtype=np.uint8)
    for hole in range(holes - 1, -1, -1):
        table[hole] = index % colours
        index //= colours
    table.flags.writeable = False
    return table


@lru_cache(maxsize=8)
def _counts_by_colour(colours: int, holes: int) -> NDArray[np.uint8]:
    by_hole = _codes_by_hole(colours, holes)
    counts = np.zeros((colours, by_hole.shape[1]), dtype=np.uint8)
    for hole in range(holes):
        for colour in range(colours):
            counts[colour] += by_hole[hole] == colour
    counts.flags.writeable = False
    return counts


def all_codes(colours: int, holes: int) -> NDArray[np.uint8]:
    """Every code on ``colours`` x ``holes``, one per row, as colour indices.

    Row ``i`` is ``i`` written in base ``colours`` (first hole most
    significant), so the order is lexicographic. The array is cached and
    read-only; shape ``(colours**holes, holes)``.
    """
    _check_size(colours, holes)
    return _codes_by_hole(colours, holes).T


def colour_counts(colours: int, holes: int) -> NDArray[np.uint8]:
    """How many pegs of each colour each code of :func:`all_codes` holds.

    Shape ``(colours**holes, colours)``; cached and read-only.
    """
    _check_size(colours, holes)
    return _counts_by_colour(colours, holes).T


def score_against_all(
    guess: Sequence[int], colours: int, holes: int
) -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
    """Score one guess against every code of :func:`all_codes`.

    ``guess`` holds colour indices ``0..colours-1``; :data:`NO_COLOUR` marks
    a peg that no code can contain. Returns ``(blacks, whites)``, two uint8
    arrays aligned with :func:`all_codes`; entry ``i`` equals
    ``score(all_codes[i], guess)``.
    """
    _check_size(colours, holes)
    if len(guess) != holes:
        raise CodeLengthError(f"cannot score a {len(guess)}-peg guess against {holes}-hole codes")
    for peg in guess:
        if not (0 <= peg < colours or peg == NO_COLOUR):
            raise BadInput(f"colour index {peg} is outside 0..{colours - 1}")
    blacks, common = black_and_common(
        guess, _codes_by_hole(colours, holes), _counts_by_colour(colours, holes)
    )
    return blacks, common - blacks


def codes_by_hole(colours: int, holes: int) -> NDArray[np.uint8]:
    """:func:`all_codes` transposed, ``(holes, n)``: one contiguous row per hole."""
    _check_size(colours, holes)
    return _codes_by_hole(colours, holes)


def counts_by_colour(colours: int, holes: int) -> NDArray[np.uint8]:
    """:func:`colour_counts` transposed, ``(colours, n)``."""
    _check_size(colours, holes)
    return _counts_by_colour(colours, holes)


def black_and_common(
    guess: Sequence[int], by_hole: NDArray[np.uint8], counts: NDArray[np.uint8]
) -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
    """The hot loop: black pegs and black + white for ``guess`` against a
    set of codes given hole-major (``by_hole``, ``(holes, n)``) with their
    colour counts (``counts``, ``(colours, n)``), any subset of all codes."""
    n = by_hole.shape[1]
    blacks = np.zeros(n, dtype=np.uint8)
    for hole, peg in enumerate(guess):
        if peg != NO_COLOUR:
            blacks += by_hole[hole] == peg
    common = np.zeros(n, dtype=np.uint8)
    for colour, times in Counter(p for p in guess if p != NO_COLOUR).items():
        # Colours absent from the guess add min(count, 0) = 0: skip them.
        common += np.minimum(counts[colour], np.uint8(times))
    return blacks, common
