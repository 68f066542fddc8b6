"""The hidden-secret check when some rows are known only within bounds.

:func:`pegwatch.rules.consistency.analyse` scores every code against the
fully read rows. Here the rows with doubtful holes or key counts
(:class:`~pegwatch.rules.bounded.BoundedRow`) join in. Each completion of
such a row agrees with some codes; a code *may fit* a row when some
completion of the row agrees with it, and *surely fits* it when every
completion does. Rows are independent, so:

* marks are proved inconsistent only when no code may fit every row, that
  is when no secret is consistent with any completion;
* they are surely consistent when some code surely fits every row;
* otherwise the check is unsure, and names the holes (and key counts)
  whose value decides whether any code fits, the other rows at their most
  permissive.

The fully read rows are scored first, which narrows the codes to the few
that fail at most one row; the bounded rows are scored on those only. A
completion is scored incrementally: the certain holes once, then per
doubtful hole one comparison and one colour-count gain per value. Past a
cap on the work a row is scored from score ranges (black between the
certain matches and those plus the holes that may match; common pegs
between the certain ones and those plus the doubtful holes), a relaxation
that can only widen "may fit" and narrow "surely fits", so it never
proves what is not so.
"""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.bounded import BoundedRow, deciding_positions
from pegwatch.rules.codes import (
    EMPTY,
    NO_COLOUR,
    Feedback,
    code_count,
    is_read,
)
from pegwatch.rules.consistency import (
    CertainPass,
    ConsistencyReport,
    analyse,
    certain_disagreement,
    colour_indices,
    marked_rows,
    narrow,
    record_row,
    start_pass,
)
from pegwatch.rules.record import Row
from pegwatch.rules.variants import Variant

__all__ = ["BoundedReport", "Consistency", "Deciding", "analyse_bounded"]

logger = logging.getLogger(__name__)

_WORK = 24_000_000
"""Code-completion pairs scored per bounded row before falling back to ranges
(when naming the deciding holes)."""

_FIT_WORK = 200_000_000
"""The same for "may fit" and "surely fits", where each completion is scored
only against the codes still in question, which shrink fast."""

_INCOMPLETE = -1
"""An empty hole where the variant has no blanks: the row's marks are not judged."""


class Consistency(Enum):
    """What the marks say together while the secret is hidden."""

    CONSISTENT = "consistent"
    INCONSISTENT = "inconsistent"
    UNSURE = "unsure"


@dataclass(frozen=True)
class Deciding:
    """The holes (1-based) and key counts of ``row`` whose value decides
    whether any code fits the marks."""

    row: int
    holes: tuple[int, ...]
    keys: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return {"row": self.row, "deciding_holes": list(self.holes), "deciding_keys": list(self.keys)}


@dataclass(frozen=True)
class BoundedReport:
    """The consistency report over every marked row, bounded rows included.

    ``report.consistent`` counts the codes that fit every row for some
    completion (an upper bound), ``consistent_at_least`` those that fit for
    every completion; ``report.suspect_rows`` are set when no code may fit.
    ``bounded_rows`` are the rows that took part within bounds.
    """

    report: ConsistencyReport
    consistent_at_least: int
    verdict: Consistency
    deciding: tuple[Deciding, ...] = ()
    bounded_rows: tuple[int, ...] = ()
    by_ranges: tuple[int, ...] = ()
    """Bounded rows whose "may fit" stayed at score ranges (too many
    completions): a code counted as fitting them may not, so
    ``first_failed`` may miss them."""


def _bounded_marked(rows: Sequence[Row], variant: Variant) -> list[tuple[int, BoundedRow]]:
    out = []
    for number, row in enumerate(rows, start=1):
        if is_read(row.guess) and row.marks_unread is None and row.bounds is None:
            continue
        if row.marks_unread is not None and row.bounds is None:
            continue  # counts not read at all: any code fits some count
        bounded = row.bounded
        if not bounded.is_marked:
            continue
        if not variant.blanks and any(h == (EMPTY,) for h in bounded.holes):
            continue  # incomplete whatever the doubtful holes hold: never judged
        out.append((number, bounded))
    return out


class _RowScorer:
    """Scores completions of one bounded row against a set of codes."""

    def __init__(self, row: BoundedRow, mapping: dict[str, int], variant: Variant,
                 by_hole: NDArray[np.uint8], counts: NDArray[np.uint8]) -> None:
        self.by_hole, self.counts = by_hole, counts
        n = by_hole.shape[1]
        self.holes = variant.holes
        self.uncertain = row.uncertain_holes
        everything = list(range(variant.symbols))
        self.domains: list[list[int]] = []
        for i in self.uncertain:
            hole = row.holes[i]
            names = everything if hole is None else [self._index(c, mapping, variant) for c in hole]
            self.domains.append(list(dict.fromkeys(names)))
        fixed = [self._index(h[0], mapping, variant) for i, h in enumerate(row.holes)  # type: ignore[index]
                 if i not in self.uncertain]
        self.incomplete_fixed = _INCOMPLETE in fixed
        self.black = np.zeros(n, dtype=np.uint8)
        positions = [i for i in range(len(row.holes)) if i not in self.uncertain]
        for i, peg in zip(positions, fixed, strict=True):
            if peg >= 0 and peg != NO_COLOUR:
                self.black += by_hole[i] == peg
        self.fixed_counts = Counter(p for p in fixed if p >= 0 and p != NO_COLOUR)
        self.common = np.zeros(n, dtype=np.uint8)
        for colour, times in self.fixed_counts.items():
            self.common += np.minimum(counts[colour], np.uint8(times))
        self._eq: dict[tuple[int, int], NDArray[np.uint8]] = {}
        self._gain: dict[tuple[int, int], NDArray[np.uint8]] = {}
        self.pairs = row.marks_pairs(variant.holes)
        self.row = row
        self.mapping, self.variant = mapping, variant
        #: True when "may fit" was left at the score ranges (too much work).
        self.by_ranges = False

    @staticmethod
    def _index(name: str, mapping: dict[str, int], variant: Variant) -> int:
        if name == EMPTY and not variant.blanks:
            return _INCOMPLETE
        return mapping.get(name, NO_COLOUR)

    @property
    def count(self) -> int:
        total = 1
        for dom in self.domains:
            total *= len(dom)
        return total

    def _eq_of(self, j: int, value: int) -> NDArray[np.uint8]:
        key = (j, value)
        if key not in self._eq:
            hole = self.uncertain[j]
            self._eq[key] = (self.by_hole[hole] == value).astype(np.uint8)
        return self._eq[key]

    def _gain_of(self, colour: int, times: int) -> NDArray[np.uint8]:
        key = (colour, times)
        if key not in self._gain:
            have = np.uint8(self.fixed_counts.get(colour, 0))
            row = self.counts[colour]
            self._gain[key] = np.minimum(row, have + np.uint8(times)) - np.minimum(row, have)
        return self._gain[key]

    def completions(self) -> Iterator[tuple[tuple[int, ...], NDArray[np.uint8] | None, NDArray[np.uint8] | None]]:
        """Each assignment of the doubtful holes with its black and common
        arrays; None, None for an incomplete row (its marks say nothing)."""
        for values in itertools.product(*self.domains):
            if _INCOMPLETE in values:
                yield values, None, None
                continue
            yield values, *self._scores(values)

    def _scores(self, values: tuple[int, ...]) -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
        """Black and common pegs of one (complete) completion against every code."""
        black = self.black.copy()
        common = self.common.copy()
        for j, value in enumerate(values):
            if value != NO_COLOUR:
                black += self._eq_of(j, value)
        for colour, times in Counter(v for v in values if v != NO_COLOUR).items():
            common += self._gain_of(colour, times)
        return black, common

    def agree(self, black: NDArray[np.uint8], common: NDArray[np.uint8],
              pairs: Sequence[Feedback]) -> NDArray[np.bool_]:
        """Codes scoring one of ``pairs`` (given black and common pegs)."""
        out = np.zeros(black.shape, dtype=bool)
        for b, w in pairs:
            out |= (black == b) & (common == b + w)
        return out

    def _scores_of(self, values: tuple[int, ...], idx: NDArray[np.intp]
                   ) -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
        """Black and common pegs of one completion against the codes ``idx``."""
        black = self.black[idx]
        common = self.common[idx]
        for j, value in enumerate(values):
            if value != NO_COLOUR:
                black += self.by_hole[self.uncertain[j], idx] == value
        for colour, times in Counter(v for v in values if v != NO_COLOUR).items():
            have = np.uint8(self.fixed_counts.get(colour, 0))
            row = self.counts[colour, idx]
            common += np.minimum(row, have + np.uint8(times)) - np.minimum(row, have)
        return black, common

    def fits(self) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        """Per code: may fit (some completion agrees), surely fits (every one does).

        Each completion is scored only against the codes still in question:
        those no completion has fitted yet, and those every one has so far;
        both sets shrink fast."""
        n = self.black.shape[0]
        if self.incomplete_fixed:
            return np.ones(n, dtype=bool), np.ones(n, dtype=bool)
        if self.count * max(1, n) <= _WORK:
            return self._fits_exact()
        # Many codes: the score ranges rule most out cheaply (a code they
        # rule out fits no completion), and only the rest are enumerated.
        loose = self._fits_by_ranges()
        ids = np.flatnonzero(loose)
        if self.count * ids.size > _FIT_WORK:
            self.by_ranges = True
            return loose, np.zeros(n, dtype=bool)
        may_sub, sure_sub = _RowScorer(self.row, self.mapping, self.variant,
                                       self.by_hole[:, ids], self.counts[:, ids])._fits_exact()
        may = np.zeros(n, dtype=bool)
        sure = np.zeros(n, dtype=bool)
        may[ids] = may_sub
        sure[ids] = sure_sub
        return may, sure

    def _fits_exact(self) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        n = self.black.shape[0]
        may = np.zeros(n, dtype=bool)
        # The codes no completion has fitted yet, scored by a scorer of
        # their own (cached per value), rebuilt when they are half as many.
        scorer, ids = self, np.arange(n)
        unfitted = np.ones(n, dtype=bool)
        left = n
        surely = np.arange(n) if len(self.pairs) == 1 else np.arange(0)
        first = True
        for values in itertools.product(*self.domains):
            if _INCOMPLETE in values:
                may[:] = True  # an incomplete row's marks say nothing
                left = 0
                continue
            if left:
                agree = scorer.agree(*scorer._scores(values), self.pairs) & unfitted
                if first and surely.size:
                    # Every code is still in both sets: one scoring serves both.
                    surely = np.flatnonzero(agree)
                    first = False
                    may[agree] = True
                    unfitted &= ~agree
                    left = int(np.count_nonzero(unfitted))
                    continue
                first = False
                may[ids[agree]] = True
                unfitted &= ~agree
                left = int(np.count_nonzero(unfitted))
                if left and left < unfitted.size // 2:
                    ids = ids[unfitted]
                    scorer = _RowScorer(self.row, self.mapping, self.variant,
                                        self.by_hole[:, ids], self.counts[:, ids])
                    unfitted = np.ones(left, dtype=bool)
            if surely.size:
                black, common = self._scores_of(values, surely)
                surely = surely[self.agree(black, common, self.pairs)]
            if not left and not surely.size:
                break
        sure = np.zeros(n, dtype=bool)
        sure[surely] = True
        return may, sure

    def _fits_by_ranges(self) -> NDArray[np.bool_]:
        n = self.black.shape[0]
        if any(_INCOMPLETE in dom for dom in self.domains):
            return np.ones(n, dtype=bool)
        black_max = self.black.copy()
        for j, dom in enumerate(self.domains):
            table = np.zeros(256, dtype=np.uint8)  # colour index -> may match
            table[[v for v in dom if v >= 0]] = 1
            black_max += table[self.by_hole[self.uncertain[j]]]
        k = np.uint8(len(self.domains))
        common_max = np.minimum(self.common + k, np.uint8(self.holes))
        may = np.zeros(n, dtype=bool)
        for b, w in self.pairs:
            may |= ((self.black <= b) & (black_max >= b)
                    & (self.common <= b + w) & (common_max >= b + w))
        return may


def analyse_bounded(rows: Sequence[Row], variant: Variant) -> BoundedReport:
    """The hidden-secret check over every marked row (see the module doc).

    Rows are scored in order, so that ``first_failed`` counts, for each row,
    the codes that fit every row before it and surely not this one: for a
    bounded row, "surely not" is what :func:`pegwatch.rules.bounded.judge_row`
    proves a mis-mark, so the judge's ``reveal_can_change`` stays exact.
    """
    bounded = dict(_bounded_marked(rows, variant))
    if not bounded:
        report = analyse(rows, variant)
        verdict = Consistency.INCONSISTENT if report.consistent == 0 else Consistency.CONSISTENT
        return BoundedReport(report, report.consistent, verdict)
    possible = code_count(variant.symbols, variant.holes)
    mapping = colour_indices(rows, variant)
    certain = {number: (guess, marks) for number, guess, marks in marked_rows(rows)}
    numbers = tuple(bounded)
    state = start_pass(variant)
    sure = np.ones(possible, dtype=bool)
    approximate: list[int] = []
    for number in sorted({*certain, *bounded}):
        if number in certain:
            disagree = certain_disagreement(state, mapping, *certain[number])
            surely = ~disagree
        else:
            scorer = _RowScorer(bounded[number], mapping, variant, state.by_hole, state.counts)
            may, surely = scorer.fits()
            disagree = ~may
            if scorer.by_ranges:
                approximate.append(number)
        sure &= surely
        keep = record_row(state, number, disagree)
        if state.kept == 0:
            break
        if keep is not None:
            sure = sure[keep]
    if state.kept == 0:
        report = ConsistencyReport(0, (), possible, tuple(state.first_failed))
        return BoundedReport(report, 0, Consistency.INCONSISTENT, (), numbers, tuple(approximate))
    upper = int(np.count_nonzero(state.failures == 0))
    lower = int(np.count_nonzero(sure & (state.failures == 0)))
    suspects: tuple[int, ...] = ()
    if upper == 0:
        suspects = tuple(int(r) for r in np.unique(state.failed_row[state.failures == 1]))
    report = ConsistencyReport(upper, suspects, possible, tuple(state.first_failed))
    if upper == 0:
        return BoundedReport(report, 0, Consistency.INCONSISTENT, (), numbers, tuple(approximate))
    if lower > 0:
        return BoundedReport(report, lower, Consistency.CONSISTENT, (), numbers, tuple(approximate))
    fits_all = state.failures == 0
    found = [_deciding(number, row, fits_all, state, mapping, variant)
             for number, row in bounded.items()]
    deciding = tuple(d for d, _ in found if d.holes or d.keys)
    if all(always for _, always in found):
        if len(found) == 1 or _jointly_always(bounded, fits_all, state, mapping, variant):
            # A code fits each reading of the doubtful rows taken together.
            return BoundedReport(report, lower, Consistency.CONSISTENT, (), numbers, tuple(approximate))
        # Each row alone always leaves a code, but together they may not (or
        # they are too many to try): every doubtful hole may decide.
        deciding = tuple(
            Deciding(number, tuple(i + 1 for i in row.uncertain_holes),
                     tuple(k for k, r in (("black", row.black), ("white", row.white))
                           if r is not None and not r.is_exact))
            for number, row in bounded.items())
    logger.debug("consistency unsure: %d codes may fit, none surely", upper)
    return BoundedReport(report, lower, Consistency.UNSURE, deciding, numbers, tuple(approximate))


_JOINT = 4096
"""Joint completions of several doubtful rows tried together, at most."""


def _jointly_always(bounded: dict[int, BoundedRow], fits_all: NDArray[np.bool_],
                    state: CertainPass, mapping: dict[str, int], variant: Variant) -> bool:
    """True when every joint completion of the doubtful rows leaves a code
    that fits them all; False when some does not, or they are too many."""
    keep = CertainPass(state.by_hole, state.counts, state.failures, state.failed_row, [], 0)
    narrow(keep, fits_all)
    n = keep.by_hole.shape[1]
    per_row: list[list[NDArray[np.bool_]]] = []
    joint = 1
    for row in bounded.values():
        scorer = _RowScorer(row, mapping, variant, keep.by_hole, keep.counts)
        joint *= scorer.count * len(scorer.pairs)
        if joint > _JOINT or joint * n > _WORK:
            return False
        agreeing = []
        for _values, black, common in scorer.completions():
            for pair in scorer.pairs:
                agreeing.append(np.ones(n, dtype=bool) if black is None or common is None
                                else scorer.agree(black, common, (pair,)))
        per_row.append(agreeing)
    return all(bool(np.any(np.logical_and.reduce(combo))) for combo in itertools.product(*per_row))


def _deciding(number: int, row: BoundedRow, fits_all: NDArray[np.bool_], state: CertainPass,
              mapping: dict[str, int], variant: Variant) -> tuple[Deciding, bool]:
    """The holes and counts of ``row`` whose value decides whether some code
    fits, with every other row at its most permissive, and whether some code
    fits every completion of the row (the other rows permissive).

    Only codes that may fit every row are tried: one that surely fails
    another row fits no completion of this one's either."""
    keep = CertainPass(state.by_hole, state.counts, state.failures, state.failed_row, [], 0)
    narrow(keep, fits_all)
    scorer = _RowScorer(row, mapping, variant, keep.by_hole, keep.counts)
    pairs = scorer.pairs
    n = keep.by_hole.shape[1]
    ranged = tuple(name for name, rng in (("black", row.black), ("white", row.white))
                   if rng is not None and not rng.is_exact)
    if scorer.count * len(pairs) * max(1, n) > _WORK:
        return Deciding(number, tuple(i + 1 for i in scorer.uncertain), ranged), False
    assignments: list[tuple[str, ...]] = []
    outcome: dict[tuple[int, int], bool] = {}
    for a, (values, black, common) in enumerate(scorer.completions()):
        assignments.append(tuple(str(v) for v in values))
        for p, pair in enumerate(pairs):
            if black is None or common is None:
                outcome[(a, p)] = n > 0
            else:
                outcome[(a, p)] = bool(np.any(scorer.agree(black, common, (pair,))))
    positions, keys = deciding_positions(assignments, pairs, outcome)
    holes = tuple(scorer.uncertain[j] + 1 for j in positions)
    return Deciding(number, holes, keys), all(outcome.values())

