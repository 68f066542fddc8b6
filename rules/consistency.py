"""What the rows say while the secret is still behind the shield.

Every possible secret is scored against every marked row at once (numpy),
giving for each code the number of rows it disagrees with. Codes that
disagree with no row are *consistent*. When none is, a row is a *suspect*
when some code disagrees with that row alone: removing it would restore
consistency, so it could be the single mis-marked row. That takes one pass
over the rows (a per-code failure count and the number of the row it
failed), not one pass per removed row, and codes failing two rows are
dropped as soon as they do, so each row scores fewer codes than the last.
The same pass counts, for each row, the codes that agree with every marked
row before it and not with it (``first_failed``): the judge uses it to say
which row a secret that is still hidden could show as the first mis-marked.

Every marked row is evidence, including rows placed after a row marked all
black (the codemaker called the code solved, yet play went on): either that
mark was wrong or the later rows are irrelevant, and only all the marks
together tell which.

Colour names in records are free strings, so colours are numbered in order
of first appearance; colours never used yet are interchangeable, so which
index they get does not matter. A peg that cannot be in any code (a blank
where blanks are not allowed, or a colour beyond the variant's count) gets
:data:`~pegwatch.rules.codes.NO_COLOUR` and simply never matches.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.codes import (
    EMPTY,
    NO_COLOUR,
    UNREAD,
    Code,
    Feedback,
    black_and_common,
    code_count,
    codes_by_hole,
    counts_by_colour,
    is_read,
)
from pegwatch.rules.record import Row
from pegwatch.rules.variants import Variant

__all__ = ["CertainPass", "ConsistencyReport", "analyse", "colour_indices", "marked_rows",
           "narrow", "score_certain_rows"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ConsistencyReport:
    """``consistent`` codes agree with every marked row; when that is 0,
    ``suspect_rows`` (1-based) are the rows whose removal alone restores
    consistency. ``possible`` is the size of the code space.
    ``first_failed`` holds ``(row, n)`` pairs, rows in order and ``n > 0``:
    ``n`` codes agree with every marked row before ``row`` and not with
    ``row`` (a secret among them makes ``row`` the first wrong mark)."""

    consistent: int
    suspect_rows: tuple[int, ...]
    possible: int
    first_failed: tuple[tuple[int, int], ...] = ()

    def to_json(self) -> dict[str, object]:
        """Plain data."""
        return {
            "consistent": self.consistent,
            "suspect_rows": list(self.suspect_rows),
            "possible": self.possible,
        }


def colour_indices(rows: Sequence[Row], variant: Variant) -> dict[str, int]:
    """Number the colours used in ``rows`` for the vectorised path.

    With blanks, :data:`EMPTY` is the last symbol; other colours are
    numbered in order of first appearance. Colours beyond the variant's
    count are left out (they map to NO_COLOUR).
    """
    mapping: dict[str, int] = {}
    if variant.blanks:
        mapping[EMPTY] = variant.colours
    next_index = 0
    for row in rows:
        names = list(row.guess)
        if row.bounds is not None:
            # A doubtful hole's candidates are colours of the game too.
            names += [c for hole in row.bounds.holes if hole is not None for c in hole]
        for peg in names:
            if peg in mapping or peg == EMPTY or peg in UNREAD:
                continue
            if next_index < variant.colours:
                mapping[peg] = next_index
                next_index += 1
    return mapping


@dataclass
class CertainPass:
    """The state after scoring the fully read marked rows: the codes that fail
    at most one of them (hole-major ``by_hole``, ``counts``), how many each
    fails and which, and the codes consistent so far that fail each row first."""

    by_hole: NDArray[np.uint8]
    counts: NDArray[np.uint8]
    failures: NDArray[np.uint8]
    failed_row: NDArray[np.uint16]
    first_failed: list[tuple[int, int]]
    kept: int


def score_certain_rows(
    marked: Sequence[tuple[int, Code, Feedback]], mapping: dict[str, int], variant: Variant
) -> CertainPass:
    """Score every code against ``marked`` rows ``(number, guess, marks)``,
    dropping codes as soon as they fail two rows (see the module doc)."""
    state = start_pass(variant)
    for number, pegs, marks in marked:
        record_row(state, number, certain_disagreement(state, mapping, pegs, marks))
        if state.kept == 0:
            break
    return state


def start_pass(variant: Variant) -> CertainPass:
    """Every code of ``variant``, none failing a row yet."""
    symbols, holes = variant.symbols, variant.holes
    possible = code_count(symbols, holes)
    return CertainPass(codes_by_hole(symbols, holes), counts_by_colour(symbols, holes),
                       np.zeros(possible, dtype=np.uint8), np.zeros(possible, dtype=np.uint16),
                       [], possible)


def certain_disagreement(
    state: CertainPass, mapping: dict[str, int], pegs: Code, marks: Feedback
) -> NDArray[np.bool_]:
    """Which codes still in ``state`` the row ``pegs`` marked ``marks`` rules out."""
    black, white = marks
    guess = [mapping.get(peg, NO_COLOUR) for peg in pegs]
    blacks, common = black_and_common(guess, state.by_hole, state.counts)
    disagree: NDArray[np.bool_] = (blacks != black) | (common != black + white)
    return disagree


def record_row(state: CertainPass, number: int, disagree: NDArray[np.bool_]) -> NDArray[np.bool_] | None:
    """Count row ``number``'s failures (``disagree``) into ``state``.

    Only codes failing at most one row matter (consistent ones, and the
    witnesses for suspects), so the set is narrowed as rows are scored, once
    it has halved; after a few rows it is a small fraction of all codes.
    Returns the mask of the codes kept when it narrowed (for arrays kept
    beside the state), else None; ``state.kept == 0`` means none is left.
    """
    # Codes consistent so far (never dropped) that fail this row first.
    first = int(np.count_nonzero(disagree[state.failures == 0]))
    if first:
        state.first_failed.append((number, first))
    state.failures += disagree
    # Where a code now fails a second row it is dropped below, so
    # overwriting its failed row loses nothing.
    np.copyto(state.failed_row, np.uint16(number), where=disagree)
    keep = state.failures <= 1
    state.kept = int(np.count_nonzero(keep))
    if state.kept and state.kept < state.failures.size // 2:
        narrow(state, keep)
        return keep
    return None


def narrow(state: CertainPass, keep: NDArray[np.bool_]) -> None:
    """Keep only the codes where ``keep`` is true."""
    index = np.flatnonzero(keep)
    state.by_hole, state.counts = state.by_hole[:, index], state.counts[:, index]
    state.failures, state.failed_row = state.failures[index], state.failed_row[index]


def marked_rows(rows: Sequence[Row]) -> list[tuple[int, Code, Feedback]]:
    """``(number, guess, marks)`` of the fully read, marked rows."""
    return [
        (number, row.guess, row.marks)
        for number, row in enumerate(rows, start=1)
        if row.marks is not None and is_read(row.guess)
    ]


def analyse(rows: Sequence[Row], variant: Variant) -> ConsistencyReport:
    """Count the codes that agree with every marked row of ``rows``.

    Unmarked rows, and rows with a peg the reader could not read (see
    :data:`~pegwatch.rules.codes.UNREAD`), are ignored (the bounded
    analysis, :mod:`pegwatch.rules.bounded_consistency`, takes them in).
    ``suspect_rows`` is empty unless no code is consistent.
    """
    possible = code_count(variant.symbols, variant.holes)
    marked = marked_rows(rows)
    if not marked:
        return ConsistencyReport(possible, (), possible)
    state = score_certain_rows(marked, colour_indices(rows, variant), variant)
    if state.kept == 0:
        # Every code fails two rows or more: no single row is to blame.
        logger.debug("consistency: no code fails fewer than two rows")
        return ConsistencyReport(0, (), possible, tuple(state.first_failed))
    consistent = int(np.count_nonzero(state.failures == 0))
    suspects: tuple[int, ...] = ()
    if consistent == 0:
        suspects = tuple(int(r) for r in np.unique(state.failed_row[state.failures == 1]))
    logger.debug("consistency: %d of %d codes, suspects %s", consistent, possible, suspects)
    return ConsistencyReport(consistent, suspects, possible, tuple(state.first_failed))
