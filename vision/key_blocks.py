"""Whether a key hole read bare has a key peg anywhere near it, judged against the frame's own bare holes.

A key hole read bare says only that its sample, at the hole's place,
looks like a hole. A key peg's small head stands off that place when the
camera looks at a slant, when the fit of the board is a millimetre or
three off, or when a shaken camera smears it: the hole then reads bare,
and a correctly marked row looks marked with fewer pegs. So a bare key
hole was evidence of nothing unless it lay outside every key peg's class
(``key_count``), which under another light than the calibration's it
rarely did, and nothing at all in a row in doubt for a code hole
(``reading.doubt_bare_keys``): most rows truly left short of marks stayed
uncertain.

The block around the hole says more: a disc 4 mm round its centre (a key
peg's head and as much again, short of the next key hole's peg). A key
peg of a colour that stands out from the plastic (brighter than it in
some channel: white and red on a dark board) lights part of it wherever in
it it stands; a bare block is plastic and a dark hole. A block's score is
a high quantile, over its pixels, of how much brighter than the block's
median (its plastic) a pixel is in its brightest channel (a log ratio: a
shadow or the light's level scales a block as a whole and leaves it
alone).

The frame judges its own blocks: rows not in play yet hold no key pegs,
and their holes' blocks say how high a bare block scores in this picture
(its noise, blur, glare). A hole in play is proved bare when its block
scores no higher than those plus a margin, and only when the frame shows
that its key pegs do stand out: every key peg read surely scores well
above the bare ones, and each key colour is among them, or is vouched for
by one that is, through the contrast the calibration measured for both.
A frame that cannot show that (a light board, black key pegs, no marked
row yet) proves nothing, and its bare key holes are what they were.

A frame with every row in play (a game gone to its last rows) has no
bare key hole to judge by. Its bare blocks are then blocks of the bare
plastic beside the key holes (the profile's plastic regions wide enough
to hold one): a bare key hole's block is plastic with a dark recess in
it, and its score, the bright end, is the plastic's. On seed 3's 400
boards the frame's bare key blocks' second highest lay within 0.2 of
the plastic blocks' (median 0.02).

The bare blocks alone tell one that shows a key peg standing: it scores
above their bound by as much as every key peg read surely must. The reader lets a
key hole read bare, or not at all, hold the peg its head's place shows
only where its block stands so (``key_count``, ``head_looks``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.blocks import LOG_LINEAR, DiscPixels, class_log_ratios, frame_bound, log_linear
from pegwatch.vision.colour import ColourModel
from pegwatch.vision.localise import Localisation
from pegwatch.vision.pixel_stats import by_channel, channel_order, pixels_at
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.reading import EMPTY

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

#: The block's radius (mm) round its key hole: a key peg's head radius and
#: as much again for a lean or a fit a little off, short of where the next
#: key hole's peg (7 mm off on the boards in use) begins.
BLOCK_MARGIN_MM = 4.0
#: Samples per millimetre over the block (about a hundred a block): a key
#: peg's head inside it still holds ten times the top 2 % of them.
BLOCK_SAMPLES_PER_MM = 1.5
#: The block's score is this quantile of its pixels' brightness over its
#: plastic: a sliver of a key peg's head is enough.
BLOCK_QUANTILE = 0.98
#: A bare block may score this much (natural log) above the frame's second
#: highest bare reference block.
BARE_MARGIN = 0.2
#: ... and every key peg read surely must score this much above that bound
#: for the frame to count as showing its pegs.
WITNESS_MARGIN = 0.3
#: Fewer bare reference rows than this say too little about the frame (the
#: row next to play is one) ...
MIN_REFERENCE_ROWS = 1
#: ... and so do fewer blocks of bare plastic than this, in their stead.
MIN_PLASTIC_BLOCKS = 4

_BLOCKS = DiscPixels(BLOCK_MARGIN_MM, BLOCK_SAMPLES_PER_MM)


def block_scores(frame: NDArray[np.uint8], loc: Localisation, centres_mm: FloatArray) -> FloatArray:
    """Per key hole (at ``centres_mm``), its block's score (see the module's docstring)."""
    idx = _BLOCKS.indices(loc, centres_mm, frame.shape[:2])
    samples = pixels_at(frame, idx)
    px = by_channel(samples)  # (holes, channel, sample)
    n = px.shape[2]
    # The median and the quantile of sRGB values are those of their linear light.
    plastic = channel_order(samples)[:, :, n // 2]
    brighter = (log_linear(px) - LOG_LINEAR[plastic][:, :, None]).max(axis=1)
    k = int(BLOCK_QUANTILE * (n - 1))
    out: FloatArray = np.partition(brighter, k, axis=1)[:, k].astype(np.float64)
    return out


def judge_blocks(
    scores: FloatArray,
    references: BoolArray,
    witnesses: Sequence[BoolArray],
    contrast: Sequence[float] | None = None,
) -> tuple[BoolArray, BoolArray]:
    """Which blocks (of ``scores``, per key hole) are bare, and which show a key peg standing:
    ``references`` are the holes of rows not in play read bare, ``witnesses`` per key colour
    the holes read surely as a key peg of that colour. Neither when the frame cannot tell.

    A block stands when it scores above the frame's bare bound by as much
    as every key peg read surely must: by the bare references alone, with
    or without such a peg in the frame (a block that scores so high is no
    bare one's, whatever the pegs score).

    To prove a block bare, every key colour must have a witness, or be vouched for by one that has:
    ``contrast``, per key colour, how far (natural log) its pegs stand above
    the plastic in their brightest channel, as calibrated. A score is such a
    log ratio, which neither the light's level nor its colour moves; so a
    colour absent from the frame stands at least as far above the bound as
    a witnessed one's weakest peg, less the amount its calibrated contrast
    falls short of that colour's.
    """
    nothing = np.zeros(len(scores), dtype=bool)
    # A block stands by the bare ones alone: what pegs score need not be shown to tell one that scores high.
    bare_bound = frame_bound(scores, references, [], margin=BARE_MARGIN, witness_margin=WITNESS_MARGIN, min_references=2)
    standing: BoolArray = nothing if bare_bound is None else (scores >= bare_bound + WITNESS_MARGIN) & ~references
    present = [w for w in witnesses if w.any()]
    if not present:
        return nothing, standing
    bound = frame_bound(scores, references, present, margin=BARE_MARGIN, witness_margin=WITNESS_MARGIN, min_references=2)
    if bound is None:
        return nothing, standing
    for absent in (i for i, w in enumerate(witnesses) if not w.any()):
        if contrast is None:
            return nothing, standing
        vouched = max(
            float(scores[w].min()) - bound - max(0.0, contrast[j] - contrast[absent])
            for j, w in enumerate(witnesses) if w.any()
        )
        if vouched < WITNESS_MARGIN:
            return nothing, standing
    bare: BoolArray = (scores <= bound) & ~references & ~np.logical_or.reduce(list(witnesses))
    return bare, standing


def plastic_blocks_mm(profile: BoardProfile) -> FloatArray:
    """Centres (mm) of blocks wholly on the profile's bare plastic: along the middle of each plastic
    region that can hold a block, one a block's width apart."""
    d = 2 * BLOCK_MARGIN_MM
    centres = [
        (cx, y + h / 2)
        for x, y, w, h in profile.plastic_regions_mm if min(w, h) >= d
        for cx in np.arange(x + BLOCK_MARGIN_MM, x + w - BLOCK_MARGIN_MM + 1e-9, d)
    ]
    return np.asarray(centres, dtype=np.float64).reshape(-1, 2)


def key_contrast(model: ColourModel, plastic_linear: Sequence[float], colours: Sequence[str]) -> tuple[float, ...]:
    """Per key colour, how far (natural log) its calibrated class stands above the plastic in its brightest channel."""
    top = class_log_ratios(model, plastic_linear).max(axis=1)
    return tuple(float(top[model.index(c)]) for c in colours)


def key_holes_seen(
    profile: BoardProfile,
    frame: NDArray[np.uint8],
    loc: Localisation,
    centres_mm: FloatArray,
    names: NDArray[np.str_],
    sure: NDArray[np.bool_],
    in_play: NDArray[np.bool_],
    *,
    shows: NDArray[np.bool_] | None = None,
    contrast: Sequence[float] | None = None,
    standing_asked: NDArray[np.bool_] | None = None,
) -> tuple[BoolArray, BoolArray]:
    """Per key hole (row by row): whether it is in play, read bare and its block shows no key peg;
    and whether it is in play and its block shows a key peg standing (see :func:`judge_blocks`).

    ``centres_mm``/``names``/``sure``: per key hole, where it is, the class read and whether it was
    read surely (accepted, nothing over it); ``in_play``: per row;
    ``shows``: per key hole, whether it shows as a recess (darker than the
    plastic around it): something flat and dark over a hole (a sleeve the
    cover test missed) hides it and would light nothing either. A hole read
    bare that does not show tells of such a thing over its row's block, whose
    edge the test has not found: the row's other key holes, a few
    millimetres off, may lie under it too, and none of them is proved bare;
    ``contrast``: the right-place and right-colour key colours' calibrated
    contrast (:func:`key_contrast`), to vouch for one the frame lacks;
    ``standing_asked``: the holes whose standing is asked (None: all); with
    none asked and no hole to prove bare, no block is scored.
    """
    n = profile.key_holes
    rows = np.repeat(np.arange(profile.rows), n)
    bare = sure & (names == EMPTY)
    row_bare = bare.reshape(profile.rows, n).all(axis=1)
    shown = np.ones(len(names), dtype=bool) if shows is None else np.asarray(shows, dtype=bool)
    veiled = (bare & ~shown).reshape(profile.rows, n).any(axis=1)[rows]
    need = bare & in_play[rows] & shown & ~veiled
    asked = need.any() or standing_asked is None or bool(standing_asked.any())
    nothing = np.zeros(len(names), dtype=bool)
    if not asked:
        return nothing, nothing
    references = row_bare[rows] & ~in_play[rows]
    plastic = np.empty((0, 2))
    if int((row_bare & ~in_play).sum()) < MIN_REFERENCE_ROWS:
        plastic = plastic_blocks_mm(profile)
        if len(plastic) < MIN_PLASTIC_BLOCKS:
            return nothing, nothing
    m = len(plastic)
    witnesses = [np.r_[sure & in_play[rows] & (names == c), np.zeros(m, dtype=bool)] for c in (profile.right_place_key, profile.right_colour_key)]
    scores = block_scores(frame, loc, np.vstack([centres_mm, plastic]))
    bare, standing = judge_blocks(scores, np.r_[references, np.ones(m, dtype=bool)], witnesses, contrast)
    return bare[: len(names)] & need, standing[: len(names)] & in_play[rows]
