"""Beside a cover, and anywhere in play for a hole read surely bare: whether it shows as a hole.

The cover test finds a hand or a sleeve where it differs from the
plastic's light (:mod:`~pegwatch.vision.cover`). A grey sleeve of the
plastic's tint and about its brightness differs too little: the part of
it the test finds is a lower bound of it. Under the rest, flat fabric lies
over the holes, and the colour model, which judges a hole against the
light of the cells beside it (the sleeve's own), reads such a hole as
bare, or as bare or a dark peg. Either claim rules out the peg under the
sleeve, and a correct row can be accused from it; a key hole read bare
there hides the key peg the row was marked with.

A bare hole is a recess: its disc is darker than its ring (CIELAB L*).
How much darker depends on the picture (the light's angle, the focus),
so the frame's own bare holes say it: those in rows not in play yet. In
a row a found cover lies over, or beside one, a hole read bare counts as
seen only where its step reaches :data:`RECESS_SHARE` of theirs (their
median; the calibration's bare hole where the frame shows too few).
Elsewhere nothing suggests a cover, and the profile's least step stands
(:func:`~pegwatch.vision.row_order.least_hole_step`) for a hole that may
be bare or a dark peg.

But a code hole read surely bare in a row in play is asked for its recess
wherever it lies: a grey sleeve held above the board may be found over
one row of the seven it hides, or over none (issue 14's seed 9, table
500, case 63: its fabric over rows 2-6 stepped 0.3-2.9 L* where the
frame's bare holes stepped a median 4, and read as eleven surely bare
holes). A hole truly bare in a row in play is rare (a game without blanks
has one only in the row being placed), so asking it costs little: over
issue 14's seeds 1 and 3-9, 4 of seed 9's 11 wrong holes read unknown (6
holes more uncertain), and elsewhere at most 2 holes a seed more
uncertain, nothing else moved. A hole left
bare or a dark peg (``dark_pegs.narrow``) keeps that answer
away from a cover: a black peg is no recess either, and the blocks round
it have already said what it is not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.colour import ColourModel
from pegwatch.vision.pixel_stats import median_of
from pegwatch.vision.reading import EMPTY, UNKNOWN, HoleReading

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

#: Near a found cover, a hole read bare must step down into its disc by at
#: least this share of the frame's bare holes' median step. Half: a truly
#: bare hole in play stepped down less than that on about one hole in
#: twenty of issue 14's physically based boards, a sleeve over a peg by
#: 0 to 3 L* against bare holes' 6 to 8.
RECESS_SHARE = 0.5
#: Fewer bare holes than this in the frame say too little: the calibration's
#: bare hole stands in.
MIN_REFERENCES = 4


def rows_near(covered: BoolArray) -> BoolArray:
    """Per row, whether a found cover lies over it or over a neighbouring row (``covered``: per row)."""
    out = np.asarray(covered, dtype=bool).copy()
    out[1:] |= covered[:-1]
    out[:-1] |= covered[1:]
    return out


def least_recess(steps: FloatArray, references: BoolArray, calibrated: float) -> float:
    """The step a hole near a cover must show: :data:`RECESS_SHARE` of the median of the
    frame's bare holes' ``steps`` (``references``), or of the ``calibrated`` bare hole's
    step when the frame shows fewer than :data:`MIN_REFERENCES`."""
    ref = steps[references]
    typical = median_of(ref) if len(ref) >= MIN_REFERENCES else calibrated
    return RECESS_SHARE * max(typical, 0.0)


@dataclass(frozen=True)
class RecessTest:
    """The calibration's bare code and key holes' steps (disc to ring, L*), for frames showing too few."""

    code_step: float
    key_step: float

    @classmethod
    def of(cls, code_model: ColourModel, key_model: ColourModel) -> RecessTest:
        steps = [
            float(m.means[m.index(EMPTY)][3] - m.means[m.index(EMPTY)][0]) if EMPTY in m.names else 0.0
            for m in (code_model, key_model)
        ]
        return cls(*steps)

    def flat(
        self, code_steps: FloatArray, key_steps: FloatArray, covered_rows: BoolArray, in_play: BoolArray, bare_unplayed: BoolArray
    ) -> tuple[BoolArray, BoolArray]:
        """Per guess hole and per key hole, whether it lies in a row in play near a found cover
        (``covered_rows``, :func:`rows_near`) and steps down into its disc by less than the
        frame's bare holes say a hole does (:func:`least_recess`; ``bare_unplayed``: per
        guess hole then key hole, read bare in a row not in play yet)."""
        near = rows_near(covered_rows) & in_play
        n_code = len(code_steps)
        out = []
        for steps, refs, calibrated in (
            (code_steps, bare_unplayed[:n_code], self.code_step),
            (key_steps, bare_unplayed[n_code:], self.key_step),
        ):
            least = least_recess(steps, refs, calibrated)
            out.append(np.repeat(near, len(steps) // len(near)) & (steps < least))
        return out[0], out[1]

    def bare_flat(self, code_steps: FloatArray, in_play: BoolArray, bare_unplayed: BoolArray) -> BoolArray:
        """Per guess hole, whether it lies in a row in play, near a cover or not, and steps down into
        its disc by less than the frame's bare holes say a hole does (``bare_unplayed``: as
        :meth:`flat`'s): a hole read surely bare there is doubted (the module's docstring)."""
        least = least_recess(code_steps, bare_unplayed[: len(code_steps)], self.code_step)
        return np.repeat(in_play, len(code_steps) // len(in_play)) & (code_steps < least)


def doubt_flat(holes: Sequence[HoleReading], doubt: BoolArray, *, surely_bare: BoolArray | None = None) -> list[HoleReading]:
    """``holes`` with those flagged in ``doubt`` (:meth:`RecessTest.flat`) that read bare,
    surely or as one of a doubtful hole's candidates, and those flagged in ``surely_bare``
    (:meth:`RecessTest.bare_flat`) that read surely bare, read unknown with nothing ruled out."""
    out = list(holes)
    anywhere = np.zeros(len(holes), dtype=bool) if surely_bare is None else np.asarray(surely_bare, dtype=bool)
    for i in (int(v) for v in np.flatnonzero(np.asarray(doubt, dtype=bool) | anywhere)):
        h = holes[i]
        if h.colour == EMPTY or (doubt[i] and h.colour == UNKNOWN and any(c == EMPTY for c, _ in h.candidates)):
            out[i] = HoleReading(UNKNOWN, h.confidence)
    return out
