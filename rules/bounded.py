"""A row known only within bounds, judged against a known secret.

The camera does not always know a hole for certain: a hand, a shadow or a
colour between two learned ones leaves a *set* of colours the hole may hold,
and a key count may be known only as a range. :class:`BoundedRow` holds
what is known: per hole the possible colours (one for a certain hole, None
for "anything": any colour of the variant, or empty where the variant
allows blanks), and a :class:`CountRange` per key count. A *completion* is
one choice of a value for every hole and of every count.

:func:`judge_row` judges such a row against a known secret:

* ``MISMARK`` when **every** completion disagrees with the marks (proved:
  whatever the doubtful holes hold, the marks are wrong);
* ``CORRECT`` when no completion disagrees (the row is cleared);
* ``UNSURE`` otherwise, naming the holes and key counts whose value
  changes the verdict (:attr:`RowJudgement.deciding_holes`).

A completion holding an empty hole where the variant has no blanks is an
incomplete row, whose marks are never judged (see
:func:`pegwatch.rules.judge.is_incomplete`): it is never a disagreement, so
a row that may be incomplete is never proved mis-marked.

Holes are scored by equivalence class, not by name: against a known secret
every colour it does not hold behaves alike, so "any colour" is the
secret's colours, the blank, and one stand-in for all the others. The work
is capped (:data:`MAX_COMPLETIONS`); past the cap the row is judged from
score ranges (the least and most black and common pegs any completion can
have), which can still prove a mis-mark, and is otherwise unsure.
"""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from pegwatch.rules.codes import EMPTY, UNKNOWN, UNREAD, Code, Feedback, score
from pegwatch.rules.errors import BadInput
from pegwatch.rules.variants import Variant

__all__ = [
    "MAX_COMPLETIONS",
    "BoundedRow",
    "CountRange",
    "Judgement",
    "RowJudgement",
    "candidates_from_reading",
    "counts_from_reading",
    "deciding_positions",
    "judge_row",
]

logger = logging.getLogger(__name__)

MAX_COMPLETIONS = 4096
"""Guess completions enumerated for one row before falling back to score ranges."""

_OTHER = "\x00other"
"""Stands for every colour a known secret does not hold (never a real name)."""


class BoundsError(BadInput):
    """A count range or a hole's candidates make no sense."""


@dataclass(frozen=True)
class CountRange:
    """A key count known to lie in ``lo..hi`` (both included)."""

    lo: int
    hi: int

    def __post_init__(self) -> None:
        if self.lo < 0 or self.hi < self.lo:
            raise BoundsError(f"a count range needs 0 <= lo <= hi, got [{self.lo}, {self.hi}]")

    @classmethod
    def exact(cls, n: int) -> CountRange:
        """The range of one known count."""
        return cls(n, n)

    @property
    def is_exact(self) -> bool:
        """True when the count is known."""
        return self.lo == self.hi

    def __contains__(self, n: object) -> bool:
        return isinstance(n, int) and self.lo <= n <= self.hi

    def values(self) -> range:
        """Every count in the range."""
        return range(self.lo, self.hi + 1)

    def to_json(self) -> int | list[int]:
        """An int when exact, else ``[lo, hi]`` (the record's forms)."""
        return self.lo if self.is_exact else [self.lo, self.hi]

    def __str__(self) -> str:
        return str(self.lo) if self.is_exact else f"{self.lo}-{self.hi}"


Hole = tuple[str, ...] | None
"""The colours one hole may hold, best first; None: anything."""


@dataclass(frozen=True)
class BoundedRow:
    """One row as far as it is known: candidates per hole and key-count ranges.

    ``black``/``white`` are None while the row is unmarked. A hole with one
    candidate is certain.
    """

    holes: tuple[Hole, ...]
    black: CountRange | None = None
    white: CountRange | None = None

    @classmethod
    def certain(cls, guess: Sequence[str], marks: Feedback | None) -> BoundedRow:
        """The bounded form of a fully read row."""
        holes = tuple((peg,) for peg in guess)
        if marks is None:
            return cls(holes)
        return cls(holes, CountRange.exact(marks.black), CountRange.exact(marks.white))

    @property
    def guess(self) -> Code:
        """The certain colours, :data:`~pegwatch.rules.codes.UNKNOWN` where a hole is not certain."""
        return tuple(h[0] if h is not None and len(h) == 1 else UNKNOWN for h in self.holes)

    @property
    def uncertain_holes(self) -> tuple[int, ...]:
        """The 0-based holes with more than one possible colour."""
        return tuple(i for i, h in enumerate(self.holes) if h is None or len(h) != 1)

    @property
    def is_marked(self) -> bool:
        """True when some key count is known, even within bounds."""
        return self.black is not None and self.white is not None

    @property
    def is_certain(self) -> bool:
        """True when every hole and both counts are known."""
        return (
            not self.uncertain_holes
            and self.black is not None and self.black.is_exact
            and self.white is not None and self.white.is_exact
        )

    def marks_pairs(self, holes: int) -> tuple[Feedback, ...]:
        """Every (black, white) the ranges allow on a row of ``holes`` holes."""
        if self.black is None or self.white is None:
            return ()
        return tuple(
            Feedback(b, w)
            for b in self.black.values() for w in self.white.values() if b + w <= holes
        )

    def hole_json(self) -> list[object]:
        """The guess in the record's form: a name, a list of candidates, or ``"unknown"``."""
        return [UNKNOWN if h is None else (h[0] if len(h) == 1 else list(h)) for h in self.holes]


class Judgement(Enum):
    """What is known of a row's marks against a known secret."""

    CORRECT = "correct"
    """No completion disagrees: the row is cleared."""
    MISMARK = "mismark"
    """Every completion disagrees: the marks are wrong, proved."""
    UNSURE = "unsure"
    """Some completions agree and some do not: the deciding holes say which."""


@dataclass(frozen=True)
class RowJudgement:
    """The judgement of one bounded row against a known secret.

    ``deciding_holes`` (1-based) and ``deciding_keys`` (``"black"``,
    ``"white"``) are those whose value changes the verdict; ``expected`` is
    the right marks when every completion scores the same; ``may_be_code``
    says some completion is the secret itself (then a wrong mark on it is
    the seed's exception: k attempts and ½ VP); ``by_ranges`` says the
    completions were too many and the row was judged from score ranges.
    """

    verdict: Judgement
    deciding_holes: tuple[int, ...] = ()
    deciding_keys: tuple[str, ...] = ()
    expected: Feedback | None = None
    may_be_code: bool = False
    # How the verdict was reached, for logs: not part of what it says.
    completions: int = field(default=0, compare=False)
    by_ranges: bool = field(default=False, compare=False)

    def to_json(self) -> dict[str, Any]:
        """Plain data (an entry of the verdict's ``bounded_rows``)."""
        return {
            "verdict": self.verdict.value,
            "deciding_holes": list(self.deciding_holes),
            "deciding_keys": list(self.deciding_keys),
            "expected": None if self.expected is None
            else {"black": self.expected.black, "white": self.expected.white},
            "may_be_code": self.may_be_code,
        }

    @classmethod
    def from_json(cls, data: Any) -> RowJudgement:
        """What :meth:`to_json` wrote."""
        expected = data.get("expected")
        return cls(
            Judgement(data["verdict"]),
            tuple(int(h) for h in data.get("deciding_holes", ())),
            tuple(str(k) for k in data.get("deciding_keys", ())),
            None if expected is None else Feedback(int(expected["black"]), int(expected["white"])),
            bool(data.get("may_be_code", False)),
        )


def _secret_domain(hole: Hole, secret: Code, variant: Variant) -> tuple[str, ...]:
    """The values of ``hole`` that score differently against ``secret``."""
    colours = {c for c in secret if c != EMPTY}
    other_exists = len(colours) < variant.colours
    if hole is None:
        names: Iterable[str] = [*sorted(colours), *([EMPTY] if variant.blanks else []),
                                *([_OTHER] if other_exists else [])]
    else:
        names = (c if c in colours or c == EMPTY else _OTHER for c in hole)
    return tuple(dict.fromkeys(names))


def _score_ranges(row: BoundedRow, secret: Code, domains: Sequence[tuple[str, ...]],
                  uncertain: Sequence[int]) -> tuple[int, int, int, int]:
    """Least and most black, least and most common pegs over every completion."""
    fixed = [i for i in range(len(secret)) if i not in uncertain]
    fixed_guess = [row.holes[i][0] for i in fixed]  # type: ignore[index]
    black_min = sum(1 for i, peg in zip(fixed, fixed_guess, strict=True) if secret[i] == peg)
    black_max = black_min + sum(1 for i, dom in zip(uncertain, domains, strict=True) if secret[i] in dom)
    common_min = sum((Counter(secret) & Counter(fixed_guess)).values())
    common_max = min(len(secret), common_min + len(uncertain))
    return black_min, black_max, common_min, common_max


def deciding_positions(
    assignments: Sequence[tuple[str, ...]],
    pairs: Sequence[Feedback],
    outcome: dict[tuple[int, int], bool],
) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Which uncertain positions and key counts change an outcome.

    ``outcome[(a, p)]`` is the outcome of assignment ``assignments[a]`` (one
    value per uncertain hole) with marks ``pairs[p]``. Position ``j`` decides
    when two completions differing only in position ``j`` differ; "black"
    (or "white") when two differing only in the black (white) count do.
    Returns the 0-based positions and the key names.
    """
    width = len(assignments[0]) if assignments else 0
    positions: list[int] = []
    for j in range(width):
        groups: dict[tuple[tuple[str, ...], int], set[bool]] = {}
        for a, values in enumerate(assignments):
            rest = values[:j] + values[j + 1:]
            for p in range(len(pairs)):
                groups.setdefault((rest, p), set()).add(outcome[(a, p)])
        if any(len(seen) > 1 for seen in groups.values()):
            positions.append(j)
    keys: list[str] = []
    for name, other in (("black", 1), ("white", 0)):
        key_groups: dict[tuple[int, int], set[bool]] = {}
        for a in range(len(assignments)):
            for p, pair in enumerate(pairs):
                key_groups.setdefault((a, pair[other]), set()).add(outcome[(a, p)])
        if any(len(seen) > 1 for seen in key_groups.values()):
            keys.append(name)
    return tuple(positions), tuple(keys)


def judge_row(
    secret: Sequence[str], row: BoundedRow, variant: Variant, *, cap: int = MAX_COMPLETIONS
) -> RowJudgement:
    """Judge ``row`` against ``secret`` over every completion (see the module doc).

    The row must be marked (both counts known at least within bounds) and
    ``secret`` fully read.
    """
    code = tuple(secret)
    if len(row.holes) != len(code):
        raise BoundsError(f"a {len(row.holes)}-hole row cannot be judged against a {len(code)}-peg secret")
    if any(peg in UNREAD for peg in code):
        raise BoundsError("a row is judged only against a fully read secret")
    pairs = row.marks_pairs(len(code))
    if not row.is_marked:
        raise BoundsError("an unmarked row has no marks to judge")
    uncertain = row.uncertain_holes
    domains = [_secret_domain(row.holes[i], code, variant) for i in uncertain]
    count = 1
    for dom in domains:
        count *= len(dom)
    if count * max(1, len(pairs)) > cap:
        return _judge_by_ranges(row, code, variant, pairs, domains, uncertain, count)
    base = list(row.guess)
    assignments = list(itertools.product(*domains))
    outcome: dict[tuple[int, int], bool] = {}
    scores: set[Feedback] = set()
    may_be_code = False
    every_wrong = True
    none_wrong = True
    for a, values in enumerate(assignments):
        guess = list(base)
        for i, value in zip(uncertain, values, strict=True):
            guess[i] = value
        incomplete = not variant.blanks and EMPTY in guess
        truth = score(code, guess)
        if not incomplete:
            scores.add(truth)
        may_be_code = may_be_code or tuple(guess) == code
        for p, pair in enumerate(pairs):
            wrong = not incomplete and pair != truth
            outcome[(a, p)] = wrong
            every_wrong = every_wrong and wrong
            none_wrong = none_wrong and not wrong
    verdict = (Judgement.MISMARK if every_wrong and pairs else
               Judgement.CORRECT if none_wrong else Judgement.UNSURE)
    holes: tuple[int, ...] = ()
    keys: tuple[str, ...] = ()
    if verdict is Judgement.UNSURE:
        positions, keys = deciding_positions(assignments, pairs, outcome)
        holes = tuple(uncertain[j] + 1 for j in positions)
    return RowJudgement(
        verdict, holes, keys,
        expected=next(iter(scores)) if len(scores) == 1 else None,
        may_be_code=may_be_code, completions=len(assignments) * len(pairs),
    )


def _judge_by_ranges(
    row: BoundedRow, code: Code, variant: Variant, pairs: Sequence[Feedback],
    domains: Sequence[tuple[str, ...]], uncertain: Sequence[int], count: int,
) -> RowJudgement:
    black_min, black_max, common_min, common_max = _score_ranges(row, code, domains, uncertain)
    may_be_code = all(code[i] in dom for i, dom in zip(uncertain, domains, strict=True)) and all(
        row.holes[i] == (code[i],) for i in range(len(code)) if i not in uncertain)
    may_be_incomplete = not variant.blanks and any(EMPTY in dom for dom in domains)
    reachable = any(
        black_min <= b <= black_max and common_min <= b + w <= common_max for b, w in pairs)
    logger.debug("bounded row judged by ranges: %d completions over the cap", count)
    if not reachable and not may_be_incomplete:
        return RowJudgement(Judgement.MISMARK, may_be_code=may_be_code,
                            completions=count * len(pairs), by_ranges=True)
    keys = tuple(name for name, rng in (("black", row.black), ("white", row.white))
                 if rng is not None and not rng.is_exact)
    return RowJudgement(Judgement.UNSURE, tuple(i + 1 for i in uncertain), keys,
                        may_be_code=may_be_code, completions=count * len(pairs), by_ranges=True)


def candidates_from_reading(guess: Code, raw: object) -> tuple[tuple[str, ...] | None, ...] | None:
    """The candidates a reading record (``pegwatch read --json``) gives for
    its doubtful holes: per hole ``[[name, confidence], ...]`` or names. A
    peg read not quite surely names its colour first and then what else it
    may be: it is judged as any of them. Anything else there is an extra key
    like any other, and ignored."""
    if not isinstance(raw, list) or len(raw) != len(guess):
        return None
    holes: list[tuple[str, ...] | None] = []
    for peg, entry in zip(guess, raw, strict=True):
        names = [c[0] if isinstance(c, list) and c else c for c in entry] if isinstance(entry, list) else []
        cleaned = tuple(dict.fromkeys(n.strip().lower() for n in names if isinstance(n, str) and n.strip()))
        if peg not in UNREAD:
            holes.append((peg,) if cleaned[:1] != (peg,) or set(cleaned) & UNREAD else cleaned)
            continue
        holes.append(None if not cleaned or set(cleaned) & UNREAD else cleaned)
    return tuple(holes) if any(h is not None and len(h) > 1 for h in holes) else None


def counts_from_reading(d: dict[str, Any], holes: int) -> dict[str, Any]:
    """Uncounted key pegs ("unknown" in both) with a reading record's
    ``black_bounds``/``white_bounds``: the counts as ranges."""
    words = [d.get(key) for key in ("black", "white")]
    if not all(isinstance(w, str) and w in UNREAD for w in words):
        return d
    out = dict(d)
    for key in ("black", "white"):
        b = d.get(f"{key}_bounds")
        if not (isinstance(b, list) and len(b) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) for v in b)
                and 0 <= b[0] <= b[1] <= holes):
            return d
        out[key] = list(b)
    return out
