"""What a doubtful dark hole can hold, and whether a hole read bare is: its block against the plastic's light, judged by the frame.

A black peg on a dark board, in a light other than the calibration's,
lies about as far from every peg colour's class as from black's, so the
colour model rules none out and the row's verdict has eight colours to
try at that hole. A peg of a chromatic colour, or a white one, fills most
of a disc 4.5 mm round its hole (its head is 7 mm across) wherever in it
it leans, and differs there from the plastic's light at the hole (the
light model of the cells beside it) as no black peg and no bare hole
does: a chromatic one by the spread of its channels (a log ratio to the
plastic's, per channel: a shadow or the light's level moves them all
alike), a white one by being brighter in every channel. A block's two
scores are the 75th percentile of those over its pixels (most of it: a
black peg's sheen or a neighbour's edge is a small part).

The frame judges its own blocks: its bare holes (rows not in play yet)
say how high a hole without a peg scores in this picture; a hole scoring
no higher than those (plus a margin) holds no chromatic peg, or no white
one, only when the frame shows that its chromatic pegs, or its white ones,
do stand well above: every such peg read surely does. A frame that cannot
show it (a light board for white, no such peg read yet) rules out nothing.

A hole left with one dark peg or a bare hole is read as that peg where it
shines: a glossy dome catches the lamp somewhere, a bare recess does not.
Its core (a disc 2.5 mm round the hole, inside the rim and clear of a
neighbour's head) must rise above every bare hole of the frame by a
margin: above the highest, not the second, for a peg read where there is
none is the dangerous side.

The same blocks keep a hole in play from reading bare where a peg shows:
a fit 2 mm off, or a head leaning further than the pose says, leaves the
hole's sample on the peg's shadow, which reads as a bare hole, and a row
read one peg short may be accused. A hole read bare whose block shows more
colour or white than the frame's bare holes, or whose core shines, is
read unknown; so is a hole read as a dark peg whose block is whiter than
the bare holes (a white peg, sampled on its shadow), and one read as a
colour whose block is far whiter than them: a peg of a colour is darker
than the plastic in its weakest channel, a white peg under a warm lamp is
not. No witness is needed: doubt is the safe side.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.blocks import DiscPixels, class_log_ratios, frame_bound, log_linear
from pegwatch.vision.colour import ColourModel
from pegwatch.vision.localise import Localisation
from pegwatch.vision.pixel_stats import channel_max, channel_min, pixels_at
from pegwatch.vision.reading import EMPTY, UNKNOWN, HoleReading

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

#: The block's radius round its hole (mm): most of a code peg's head
#: wherever it leans, short of the next hole's (9 mm off).
BLOCK_RADIUS_MM = 4.5
BLOCK_SAMPLES_PER_MM = 1.5
#: Each score is this quantile over the block's pixels.
BLOCK_QUANTILE = 0.75
#: A hole scoring no more than this above the frame's second highest bare
#: hole holds no peg of that kind ...
MARGIN = 0.4
#: ... when every peg of that kind read surely scores this much above
#: that bound.
WITNESS_MARGIN = 0.5
#: Fewer bare holes than this say too little about the frame.
MIN_REFERENCES = 4
#: A frame with no white peg read surely may still show that its white
#: pegs would stand out: each chromatic class read surely puts a white
#: peg's block at its own weakest peg's whiteness plus how far the white
#: class stands above it in the weakest channel, as calibrated (log ratios
#: to the plastic: neither the light's level nor its colour moves them,
#: and the frame's shading is in the chromatic pegs' scores). The least of
#: these, less this, must stand WITNESS_MARGIN above the bound. On seed 3's
#: 400 boards the white pegs read surely lay at most 0.56 below it.
VOUCH_SHORTFALL = 0.6

#: A peg darker than the plastic in its weakest channel (on a dark board:
#: the blue of red, orange and yellow, the red of blue; see
#: :func:`dim_classes`) has its block at the bare holes' whiteness but for
#: a white neighbour's lean or a highlight. A white peg's lies several times
#: above it in every channel. This is the whiteness (natural log: e, about
#: 2.7 times) above the bare holes' second highest at which a hole read as
#: such a peg is a white one read wrong.
COLOUR_WHITE_MARGIN = 1.0

#: A dark peg's core: a disc this round its hole (mm), inside the hole's
#: rim (3.5 mm) and clear of a neighbour's head.
SHEEN_RADIUS_MM = 2.5
#: The core's score is this quantile of its pixels: a highlight is small.
SHEEN_QUANTILE = 0.98
#: A hole shines when its core scores this much (natural log) above the
#: frame's highest bare hole.
SHEEN_MARGIN = 0.5

#: A dark peg's dome stands in relief: its lit top, its shaded flank and
#: the shadow it casts span a wider range of light over its core than a
#: bare hole's rim and floor do. The core's relief is the spread between
#: these quantiles of its pixels' light (natural log, the channels' mean:
#: a tint moves both ends alike) ...
RELIEF_QUANTILES = (0.05, 0.95)
#: ... and a hole stands in relief when its relief lies this much above
#: the frame's highest bare hole's.
RELIEF_MARGIN = 0.5

_BLOCKS = DiscPixels(BLOCK_RADIUS_MM, BLOCK_SAMPLES_PER_MM)
_CORES = DiscPixels(SHEEN_RADIUS_MM, 2.0)


def _over_plastic(frame: NDArray[np.uint8], idx: NDArray[np.intp], plastic_linear: FloatArray) -> NDArray[np.float32]:
    """Per hole (a row of ``idx``) and pixel, each channel's log light over the plastic's light at the hole."""
    plastic = np.log(np.maximum(plastic_linear, 1e-4)).astype(np.float32)
    out: NDArray[np.float32] = log_linear(pixels_at(frame, idx)) - plastic[:, None, :]
    return out


def block_scores(
    frame: NDArray[np.uint8], loc: Localisation, centres_mm: FloatArray, plastic_linear: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Per hole (``centres_mm``, with the plastic's linear BGR light at each), its block's (chroma, whiteness)."""
    idx = _BLOCKS.indices(loc, centres_mm, frame.shape[:2])
    dev = _over_plastic(frame, idx, plastic_linear)
    hi, lo = channel_max(dev), channel_min(dev)
    k = int(BLOCK_QUANTILE * (idx.shape[1] - 1))
    chroma = np.partition(hi - lo, k, axis=1)[:, k].astype(np.float64)
    white = np.partition(lo, k, axis=1)[:, k].astype(np.float64)
    return chroma, white


def white_ruled_out(
    white: FloatArray, references: BoolArray, read: NDArray[np.object_], sure: BoolArray, kinds: Kinds
) -> BoolArray:
    """Per hole, whether its whiteness proves it holds no white peg (:func:`ruled_out`), the white
    pegs read surely (``sure``, in play) witnessing for the frame, or, with none, its chromatic
    ones vouching (:data:`VOUCH_SHORTFALL`)."""
    witnesses = sure & np.isin(read, list(kinds.white))
    if witnesses.any() or not kinds.weakest:
        return ruled_out(white, references, witnesses)
    nothing = np.zeros(len(white), dtype=bool)
    bound = _bare_bound(white, references, MARGIN)
    whitest = min((kinds.weakest[c] for c in kinds.white), default=None)
    if bound is None or whitest is None:
        return nothing
    estimates = [
        float(white[pegs].min()) + whitest - kinds.weakest[c]
        for c in kinds.chromatic if (pegs := sure & (read == c)).any()
    ]
    if not estimates or min(estimates) - VOUCH_SHORTFALL < bound + WITNESS_MARGIN:
        return nothing
    out: BoolArray = white <= bound
    return out


def ruled_out(scores: FloatArray, references: BoolArray, witnesses: BoolArray) -> BoolArray:
    """Per hole, whether its score proves it holds no peg of the witnessed kind (see the module's docstring)."""
    bound = frame_bound(scores, references, [witnesses], margin=MARGIN, witness_margin=WITNESS_MARGIN, min_references=MIN_REFERENCES)
    out: BoolArray = np.zeros(len(scores), dtype=bool) if bound is None else scores <= bound
    return out


#: A hole may be a dark peg only where its block is no brighter than this
#: above the frame's second brightest bare hole: a black peg, like a bare
#: hole, is darker than its plastic; a grey sleeve over a dark board is not.
#: A black peg's lit dome may lift its block further, short of the bounds
#: that rule out a lit peg's colour and white (:data:`MARGIN`): such a hole
#: may be dark too where its core shines or stands in relief, which a flat
#: sleeve's does not.
DARK_MARGIN = 0.1


def _bare_bound(scores: FloatArray, references: BoolArray, margin: float) -> float | None:
    """The frame's bare holes' second highest score plus ``margin``; None with too few of them."""
    return frame_bound(scores, references, (), margin=margin, witness_margin=0.0, min_references=MIN_REFERENCES)


def no_brighter_than_bare(white: FloatArray, references: BoolArray) -> BoolArray:
    """Per hole, whether its block (``white``: its whiteness) is no brighter than the frame's bare holes'."""
    bound = _bare_bound(white, references, DARK_MARGIN)
    out: BoolArray = np.zeros(len(white), dtype=bool) if bound is None else white <= bound
    return out


def sheen_scores(
    frame: NDArray[np.uint8], loc: Localisation, centres_mm: FloatArray, plastic_linear: FloatArray
) -> FloatArray:
    """Per hole, how far its core's brightest pixels rise over the plastic's light in their brightest channel."""
    idx = _CORES.indices(loc, centres_mm, frame.shape[:2])
    above = channel_max(_over_plastic(frame, idx, plastic_linear))
    k = int(SHEEN_QUANTILE * (idx.shape[1] - 1))
    out: FloatArray = np.partition(above, k, axis=1)[:, k].astype(np.float64)
    return out


def relief_scores(
    frame: NDArray[np.uint8], loc: Localisation, centres_mm: FloatArray, plastic_linear: FloatArray
) -> FloatArray:
    """Per hole, the spread of its core's light (:data:`RELIEF_QUANTILES`, over the plastic's light)."""
    idx = _CORES.indices(loc, centres_mm, frame.shape[:2])
    light = _over_plastic(frame, idx, plastic_linear).mean(axis=2)
    lo, hi = np.quantile(light, RELIEF_QUANTILES, axis=1)
    out: FloatArray = (hi - lo).astype(np.float64)
    return out


def _above_every_bare(scores: FloatArray, references: BoolArray, margin: float) -> BoolArray:
    """Per hole, whether its score lies ``margin`` above every bare hole's of the frame (the highest,
    not the second: a peg read where there is none is the dangerous side); none with too few."""
    if int(references.sum()) < MIN_REFERENCES:
        return np.zeros(len(scores), dtype=bool)
    out: BoolArray = scores > float(scores[references].max()) + margin
    return out


def shines(scores: FloatArray, references: BoolArray) -> BoolArray:
    """Per hole, whether its core shines above every bare hole of the frame by SHEEN_MARGIN."""
    return _above_every_bare(scores, references, SHEEN_MARGIN)


def in_relief(scores: FloatArray, references: BoolArray) -> BoolArray:
    """Per hole, whether its core's relief lies above every bare hole's of the frame by RELIEF_MARGIN."""
    return _above_every_bare(scores, references, RELIEF_MARGIN)


def _above_bare(scores: FloatArray, references: BoolArray, margin: float) -> BoolArray:
    """Per hole, whether its score lies ``margin`` above the frame's bare holes' second highest;
    none when the frame has too few bare holes to say."""
    bound = _bare_bound(scores, references, margin)
    out: BoolArray = np.zeros(len(scores), dtype=bool) if bound is None else scores > bound
    return out


def whiter_than_bare(scores: FloatArray, references: BoolArray) -> BoolArray:
    """Per hole, whether its block's score (whiteness, or chroma) lies above the frame's bare holes'
    by MARGIN over the second highest; none when the frame has too few bare holes to say."""
    return _above_bare(scores, references, MARGIN)


def too_white_for_a_colour(white: FloatArray, references: BoolArray) -> BoolArray:
    """Per hole, whether its block's whiteness lies COLOUR_WHITE_MARGIN above the frame's bare
    holes' second highest: no peg of a colour is that bright in all three channels."""
    return _above_bare(white, references, COLOUR_WHITE_MARGIN)


def _peg_shows(
    frame: NDArray[np.uint8], loc: Localisation, centres_mm: FloatArray, plastic_linear: FloatArray, bare: BoolArray,
    sheen: BoolArray | None,
) -> BoolArray:
    """Per hole, whether its core shines (``sheen``, if already known) or stands in relief above every bare hole of the frame."""
    if sheen is None:
        sheen = shines(sheen_scores(frame, loc, centres_mm, plastic_linear), bare)
    out: BoolArray = sheen | in_relief(relief_scores(frame, loc, centres_mm, plastic_linear), bare)
    return out


def shows_a_peg(chroma: FloatArray, white: FloatArray, sheen: BoolArray, references: BoolArray) -> BoolArray:
    """Per hole, whether its block shows more colour or white than the frame's bare holes, or its
    core shines: a peg is there, or near enough to hide the hole."""
    out: BoolArray = sheen | whiter_than_bare(chroma, references) | whiter_than_bare(white, references)
    return out


@dataclass(frozen=True)
class Kinds:
    """The colour model's classes by what a block can see of them."""

    chromatic: frozenset[str]  # lit, with a colour of their own
    white: frozenset[str]  # lit and neutral
    dark: frozenset[str]  # dark neutral pegs, and the bare hole
    #: lit, and darker than the plastic in their weakest channel, as calibrated (:func:`dim_classes`)
    dim: frozenset[str] = frozenset()
    #: per class, its weakest channel over the plastic's, as calibrated (:func:`weakest_channels`)
    weakest: Mapping[str, float] = field(default_factory=dict)


def weakest_channels(model: ColourModel, plastic_linear: Sequence[float]) -> dict[str, float]:
    """Per class of ``model``, the natural log of its calibrated colour over the plastic's in its
    weakest channel (a log ratio, which neither the light's level nor its colour moves)."""
    weakest = class_log_ratios(model, plastic_linear).min(axis=1)
    return {str(n): float(weakest[model.index(n)]) for n in model.names}


def dim_classes(weakest: Mapping[str, float], names: Iterable[str]) -> frozenset[str]:
    """The classes among ``names`` whose calibrated colour is darker than the plastic's in its
    weakest channel (``weakest``: :func:`weakest_channels`)."""
    return frozenset(n for n in names if weakest[n] < 0.0)


def narrow(
    holes: Sequence[HoleReading],
    frame: NDArray[np.uint8],
    loc: Localisation,
    centres_mm: FloatArray,
    plastic_linear: FloatArray,
    *,
    per_row: int,
    in_play: BoolArray,
    sure: BoolArray,
    kinds: Kinds,
) -> list[HoleReading]:
    """``holes`` (the guess holes, row by row, ``per_row`` to a row: ``centres_mm``, the plastic's
    light at each, whether each is in play and read surely) with the chromatic and white candidates
    dropped from the doubtful ones that may be a dark peg, where their blocks prove such pegs absent;
    and those left with one dark peg or a bare hole read as that peg where they shine (:func:`shines`);
    and those read bare doubted where their blocks show a peg (:func:`shows_a_peg`), those read
    as a dark peg where their blocks are whiter than the bare holes (:func:`whiter_than_bare`),
    those read as a colour where their blocks are far whiter still (:func:`too_white_for_a_colour`).

    Only in a row showing a peg read surely in a colour of its own light:
    something flat and dark over a whole row (a sleeve the cover test
    missed) shows none. And only where the block is no brighter than the
    frame's bare holes (:func:`no_brighter_than_bare`), or, where its core
    shines or stands in relief, where its colour and whiteness rule out
    every lit peg (a black peg's lit dome: :data:`DARK_MARGIN`).
    """
    lit = kinds.chromatic | kinds.white
    shown = {i // per_row for i, h in enumerate(holes) if h.is_certain and h.colour in lit}
    doubtful = [
        i for i, h in enumerate(holes)
        if in_play[i] and i // per_row in shown and h.colour == UNKNOWN and any(c in kinds.dark for c, _ in h.candidates)
    ]
    read = np.array([h.colour for h in holes], dtype=object)
    read_bare = [i for i in range(len(holes)) if in_play[i] and sure[i] and read[i] == EMPTY]
    read_dark = [i for i in range(len(holes)) if in_play[i] and sure[i] and read[i] in kinds.dark and read[i] != EMPTY]
    read_colour = [i for i in range(len(holes)) if in_play[i] and sure[i] and read[i] in kinds.dim]
    out = list(holes)
    if not doubtful and not read_bare and not read_dark and not read_colour:
        return out
    chroma, white = block_scores(frame, loc, centres_mm, plastic_linear)
    bare = sure & ~in_play & (read == EMPTY)
    sheen: BoolArray | None = None
    doubted: list[int] = []
    if read_bare:
        sheen = shines(sheen_scores(frame, loc, centres_mm, plastic_linear), bare)
        unproved = shows_a_peg(chroma, white, sheen, bare)
        doubted += [i for i in read_bare if unproved[i]]
    if read_dark:
        # A dark peg is no whiter than a bare hole: a white one read dark is a fit a little off.
        whiter = whiter_than_bare(white, bare)
        doubted += [i for i in read_dark if whiter[i]]
    if read_colour:
        # A white peg under a warm lamp, or mixed with a neighbour's colour, may read as a colour.
        too_white = too_white_for_a_colour(white, bare)
        doubted += [i for i in read_colour if too_white[i]]
    for i in doubted:
        out[i] = HoleReading(UNKNOWN, holes[i].confidence)
    no_colour = ruled_out(chroma, bare, sure & in_play & np.isin(read, list(kinds.chromatic)))
    no_white = white_ruled_out(white, bare, read, sure & in_play, kinds)
    dark = no_brighter_than_bare(white, bare)
    peg_shows: BoolArray | None = None
    if any(not dark[i] and no_colour[i] and no_white[i] for i in doubtful):
        # A black peg's lit dome may lift its block a little over a bare hole's, short of any lit peg's
        # colour or white: dark too where its core shines or stands in relief, as no flat sleeve does.
        peg_shows = _peg_shows(frame, loc, centres_mm, plastic_linear, bare, sheen)
        dark = dark | (no_colour & no_white & peg_shows)
    for i in (i for i in doubtful if dark[i]):
        drop = (kinds.chromatic if no_colour[i] else frozenset()) | (kinds.white if no_white[i] else frozenset())
        kept = tuple((c, pr) for c, pr in holes[i].candidates if c not in drop)
        if not kept:
            continue
        if len(kept) < len(holes[i].candidates):
            out[i] = replace(holes[i], candidates=kept)
        pegs = {c for c, _ in kept} - {EMPTY}
        if len(pegs) == 1 and len(kept) == 2:
            if peg_shows is None:
                peg_shows = _peg_shows(frame, loc, centres_mm, plastic_linear, bare, sheen)
            if peg_shows[i]:
                total = sum(pr for _, pr in holes[i].candidates)
                out[i] = HoleReading(pegs.pop(), sum(pr for _, pr in kept) / max(total, 1e-9))
    return out
