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
holes); on a trusted fit it is asked for a recess's shape as well
(:mod:`~pegwatch.vision.bare_rows`). A hole truly bare in a row in play is rare (a game without blanks
has one only in the row being placed), so asking it costs little: over
issue 14's seeds 1 and 3-9, 4 of seed 9's 11 wrong holes read unknown (6
holes more uncertain), and elsewhere at most 2 holes a seed more
uncertain, nothing else moved. A hole left
bare or a dark peg (``dark_pegs.narrow``) keeps that answer
away from a cover: a black peg is no recess either, and the blocks round
it have already said what it is not.

The recess speaks for a row the other way too (:meth:`RecessTest.seen_bare`):
a row whose every code hole reads surely bare, steps down as deep as both
the frame's bare holes and the calibration's say a hole does, and looks
like the frame's bare holes (:class:`RecessShapes`) is seen whole, whatever
lies beside it: a hand's shadow or a dark arm on the tray beside it hides
no hole. The depth alone does not tell a bare row from fabric held over
pegs: issue 14's seed 8 (table 501, case 7) has a grey sleeve whose fabric
over row 3's pegs stepped 2.4-3.6 L* where the frame's bare holes stepped a
median 3.2, and read as four surely bare holes. Its shape does. A bare
hole is a dark disc in a lighter ring whatever the light (a shadow scales
it, which the log of the light turns into an offset, and a correlation
ignores both); fabric over a peg is a bump or nothing. Over issue 14's
seeds 3-8, the frame's bare holes correlate with the others at a median of
0.83 (5 % below 0.51); the rows of pegs under a sleeve that read wholly
bare and deep enough, at most 0.01 at their least alike hole on full-trust
boards (0.46 on one low-trust board whose references were all fabric,
which :class:`RecessShapes` refuses); black pegs read surely bare, 0.38 at
their 99th percentile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.blocks import DiscPixels, log_linear
from pegwatch.vision.colour import ColourModel
from pegwatch.vision.localise import Localisation
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
#: A row is seen whole only where each of its holes looks like the frame's
#: bare holes: the correlation of its patch with theirs at least this. About
#: halfway between what fabric over pegs gives (0 or below) and a bare hole's
#: median (0.8); a black peg read bare lies under it 99 times in 100, and a
#: row asks it of four holes, each already read surely bare.
RECESS_LIKENESS = 0.4
#: A hole's patch reaches this share of its radius: the ring round the rim
#: is half of a recess's shape.
PATCH_RADIUS_SHARE = 1.5
#: A hole read bare that correlates with the frame's bare holes under this
#: looks like none of them: about where fabric over a peg and a black peg
#: lie (0 and below), under a bare hole's least (0.35 one time in a
#: hundred, 0.19 one in a thousand).
RECESS_DOUBT = 0.2
#: The frame's mean bare hole is a recess: its disc (within DISC_SHARE of
#: the radius) darker than its ring (beyond RIM_SHARE) by at least this, in
#: standard deviations of the patch. Bare references: 1.0 one time in a
#: hundred, 1.9 at the median; fabric over pegs: 0 or below.
RECESS_CONTRAST = 0.5
DISC_SHARE = 0.7
RIM_SHARE = 1.15
#: Samples per millimetre of a hole's patch.
PATCH_PER_MM = 2.0


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

    def seen_bare(
        self, code_steps: FloatArray, key_steps: FloatArray, code_bare: BoolArray, key_bare: BoolArray,
        bare_unplayed: BoolArray, likeness: FloatArray | None, *, holes: int, key_holes: int,
    ) -> tuple[BoolArray, BoolArray]:
        """The holes of the rows seen bare, wherever a cover lies: per guess hole, secret hole
        (never) and key hole, as :func:`~pegwatch.vision.row_order.unplayed_bare` gives them;
        and per row, whether it is seen bare.

        A row is seen bare when every code hole reads surely bare (``code_bare``), steps
        down into its disc by at least :data:`RECESS_SHARE` of both the frame's bare holes'
        median step (``bare_unplayed``, as for :meth:`flat`) and the calibration's bare hole's,
        and looks like the frame's bare holes (``likeness``, :meth:`RecessShapes.against`;
        None: no row is seen). Both steps: a dark sleeve over the rows not in play reads bare
        and flat, and would make the frame's own reference shallow. Its key holes read bare
        (``key_bare``) that step are seen as well; the rest of them stay the cover's. Whole
        rows only: in a row in play a peg's head leaning off its hole, under a hand, can
        leave the hole itself looking bare.
        """
        n_code = len(code_steps)
        if likeness is None:
            none = np.zeros(n_code + holes + len(key_steps), dtype=bool)
            return none, np.zeros(n_code // holes, dtype=bool)
        sure: list[BoolArray] = []
        for steps, refs, calibrated, bare in (
            (code_steps, bare_unplayed[:n_code], self.code_step, code_bare),
            (key_steps, bare_unplayed[n_code:], self.key_step, key_bare),
        ):
            least = max(least_recess(steps, refs, calibrated), RECESS_SHARE * calibrated)
            sure.append(np.asarray(bare, dtype=bool) & (steps >= least))
        alike = sure[0] & (likeness >= RECESS_LIKENESS)
        rows: BoolArray = np.asarray(alike.reshape(-1, holes).all(axis=1), dtype=bool)
        mask: BoolArray = np.concatenate([alike & np.repeat(rows, holes), np.zeros(holes, dtype=bool), sure[1] & np.repeat(rows, key_holes)])
        return mask, rows

    def bare_flat(self, code_steps: FloatArray, in_play: BoolArray, bare_unplayed: BoolArray) -> BoolArray:
        """Per guess hole, whether it lies in a row in play, near a cover or not, and steps down into
        its disc by less than the frame's bare holes say a hole does (``bare_unplayed``: as
        :meth:`flat`'s): a hole read surely bare there is doubted (the module's docstring)."""
        least = least_recess(code_steps, bare_unplayed[: len(code_steps)], self.code_step)
        return np.repeat(in_play, len(code_steps) // len(in_play)) & (code_steps < least)


class RecessShapes:
    """How much each code hole looks like the frame's bare holes: a patch of the log of its
    light round the hole, correlated with the mean of theirs.

    The frame's bare holes are those read bare in the rows not in play, and
    a sleeve over rows of pegs can be read so too: its fabric shares no
    shape with a hole, and little with itself. So the references are
    trusted only where they agree (their median correlation with the
    others' mean at least :data:`RECESS_LIKENESS`) on a recess (their mean
    patch darker in the disc than round the rim by :data:`RECESS_CONTRAST`);
    where they do not, those that look like none of the others (under
    :data:`RECESS_DOUBT`) are left out once and the rest asked again.
    """

    def __init__(self, hole_radius_mm: float) -> None:
        self._patches = DiscPixels(PATCH_RADIUS_SHARE * hole_radius_mm, PATCH_PER_MM)
        offsets = np.hypot(self._patches.disc[:, 0], self._patches.disc[:, 1]) / hole_radius_mm
        self._disc, self._rim = offsets <= DISC_SHARE, offsets >= RIM_SHARE

    def patches(self, frame: NDArray[np.uint8], loc: Localisation, centres_mm: FloatArray) -> FloatArray:
        """Per hole at ``centres_mm``, its patch: the log of the light round it, standardised (a
        shadow's scale and offset taken out). Asked once a frame, whatever the references."""
        idx = self._patches.indices(loc, centres_mm, frame.shape[:2])
        light: FloatArray = log_linear(frame.reshape(-1, 3)[idx]).mean(axis=2, dtype=np.float64)
        light -= light.mean(axis=1, keepdims=True)
        light /= np.maximum(np.sqrt((light * light).mean(axis=1, keepdims=True)), 1e-6)
        return light

    def against(self, light: FloatArray, references: BoolArray) -> FloatArray | None:
        """Per hole of ``light`` (their :meth:`patches`), the correlation of its patch with the mean
        patch of the ``references`` (bare holes; each of them against the others'); None where they
        are fewer than :data:`MIN_REFERENCES`, or do not agree on a recess (the class docstring)."""
        refs = np.asarray(references, dtype=bool)
        if int(refs.sum()) < MIN_REFERENCES:
            return None
        out, agreed = self._against(light, refs)
        if not agreed:
            kept = refs & (out >= RECESS_DOUBT)
            if int(kept.sum()) < MIN_REFERENCES or kept.sum() == refs.sum():
                return None
            out, agreed = self._against(light, kept)
        return out if agreed else None

    def _against(self, light: FloatArray, refs: BoolArray) -> tuple[FloatArray, bool]:
        """Each patch of ``light`` (standardised) against the mean of the ``refs``' (each of those
        against the others'), and whether the refs agree on a recess."""
        k = int(refs.sum())
        total = light[refs].sum(axis=0)
        template = np.where(refs[:, None], (total[None, :] - light) / (k - 1), total[None, :] / k)
        norm = np.maximum(np.sqrt((template * template).mean(axis=1)), 1e-6)
        out: FloatArray = (light * template).mean(axis=1) / norm
        mean = total / k
        recess = float(mean[self._rim].mean() - mean[self._disc].mean()) >= RECESS_CONTRAST
        return out, recess and float(np.median(out[refs])) >= RECESS_LIKENESS


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
