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

from pegwatch.rules.codes import (
    EMPTY,
    NO_COLOUR,
    UNREAD,
    black_and_common,
    code_count,
    codes_by_hole,
    counts_by_colour,
    is_read,
)
from pegwatch.rules.record import Row
from pegwatch.rules.variants import Variant

__all__ = ["ConsistencyReport", "analyse", "colour_indices"]

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
        for peg in row.guess:
            if peg in mapping or peg == EMPTY or peg in UNREAD:
                continue
            if next_index < variant.colours:
                mapping[peg] = next_index
                next_index += 1
    return mapping


def analyse(rows: Sequence[Row], variant: Variant) -> ConsistencyReport:
    """Count the codes that agree with every marked row of ``rows``.

    Unmarked rows, and rows with a peg the reader could not read (see
    :data:`~pegwatch.rules.codes.UNREAD`), are ignored. ``suspect_rows`` is empty
    unless no code is consistent.
    """
    symbols = variant.symbols
    holes = variant.holes
    possible = code_count(symbols, holes)
    mapping = colour_indices(rows, variant)
    marked = [
        (number, row.guess, row.marks)
        for number, row in enumerate(rows, start=1)
        if row.marks is not None and is_read(row.guess)
    ]
    if not marked:
        return ConsistencyReport(possible, (), possible)
    # Only codes failing at most one row matter (consistent ones, and the
    # witnesses for suspects), so the set is narrowed as rows are scored;
    # after a few rows it is a small fraction of all codes.
    by_hole = codes_by_hole(symbols, holes)
    counts = counts_by_colour(symbols, holes)
    failures = np.zeros(possible, dtype=np.uint8)
    failed_row = np.zeros(possible, dtype=np.uint16)
    first_failed: list[tuple[int, int]] = []
    kept = possible
    for number, pegs, (black, white) in marked:
        guess = [mapping.get(peg, NO_COLOUR) for peg in pegs]
        blacks, common = black_and_common(guess, by_hole, counts)
        disagree = (blacks != black) | (common != black + white)
        # Codes consistent so far (never dropped) that fail this row first.
        first = int(np.count_nonzero(disagree[failures == 0]))
        if first:
            first_failed.append((number, first))
        failures += disagree
        # Where a code now fails a second row it is dropped below, so
        # overwriting its failed row loses nothing.
        np.copyto(failed_row, np.uint16(number), where=disagree)
        keep = failures <= 1
        kept = int(np.count_nonzero(keep))
        if kept == 0:
            break
        if kept < failures.size // 2:
            index = np.flatnonzero(keep)
            by_hole, counts = by_hole[:, index], counts[:, index]
            failures, failed_row = failures[index], failed_row[index]
    if kept == 0:
        # Every code fails two rows or more: no single row is to blame.
        logger.debug("consistency: no code fails fewer than two rows")
        return ConsistencyReport(0, (), possible, tuple(first_failed))
    consistent = int(np.count_nonzero(failures == 0))
    suspects: tuple[int, ...] = ()
    if consistent == 0:
        suspects = tuple(int(r) for r in np.unique(failed_row[failures == 1]))
    logger.debug("consistency: %d of %d codes, suspects %s", consistent, possible, suspects)
    return ConsistencyReport(consistent, suspects, possible, tuple(first_failed))
