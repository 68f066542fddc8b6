"""Whether a row's key block shows a key peg anywhere in it, judged against the frame's own bare blocks.

A key hole read bare says only that its sample, at the hole's place,
looks like a hole. A key peg's small head stands off that place when the
camera looks at a slant, when the fit of the board is a few millimetres
off, or when a shaken camera smears it; then every hole of the row reads
bare, and a correctly marked row looks unmarked. So a row read wholly bare
counts as bare only when the holes lie outside every key peg's class
(``key_count``), which under another light than the calibration's they
rarely do: most rows truly left unmarked stayed uncertain.

The key block as a whole says more. Key pegs of the colours that stand out
from the plastic (brighter than it in some channel: white and red on a dark
board) light up part of the block wherever in it they stand; a bare block
is plastic and dark holes. Each block's score is a high quantile, over its
pixels, of how much brighter than the block's median (its plastic) a pixel
is in its brightest channel (a log ratio: a shadow or the light's level
scales a block as a whole and leaves it alone).

The frame judges its own blocks: rows not in play yet hold no key pegs,
and their blocks say how high a bare block scores in this picture (its
noise, blur, glare). A row in play is bare when its block scores no higher
than those plus a margin, and only when the frame shows that its key pegs
do stand out: every row whose key pegs were read surely scores well above
the bare ones, and each key colour is among them. A frame that cannot show
that (a light board, black key pegs, no marked row yet) proves nothing, and
its wholly bare rows stay uncertain.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.colour import srgb_to_linear
from pegwatch.vision.localise import Localisation
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.reading import EMPTY

FloatArray = NDArray[np.float64]

_LOG_LINEAR = np.log(np.maximum(srgb_to_linear(np.arange(256, dtype=np.uint8)), 1e-4)).astype(np.float32)

#: How far (mm) beyond the key holes' centres the block reaches: a key
#: peg's head radius and as much again for a lean or a fit a little off.
BLOCK_MARGIN_MM = 4.0
#: Samples per millimetre over the block: a key peg's head still holds a
#: score's worth of them (the top 2 %: about 5 %), at a fraction of the cost.
BLOCK_SAMPLES_PER_MM = 1.5
#: The block's score is this quantile of its pixels' brightness over its
#: plastic: a single key peg's head fills several times the rest.
BLOCK_QUANTILE = 0.98
#: A bare block may score this much (natural log) above the frame's highest
#: bare reference block.
BARE_MARGIN = 0.2
#: ... and every row with key pegs read surely must score this much above
#: that bound for the frame to count as showing its pegs.
WITNESS_MARGIN = 0.3
#: Fewer bare reference blocks than this say too little about the frame.
MIN_REFERENCES = 3


def block_scores(profile: BoardProfile, frame: NDArray[np.uint8], loc: Localisation, rows: Sequence[int]) -> FloatArray:
    """Per row of ``rows`` (1-based), its key block's score (see the module's docstring)."""
    if not rows:
        return np.zeros(0, dtype=np.float64)
    idx = _block_pixels(profile, loc, frame.shape[:2])[np.asarray(rows, dtype=np.intp) - 1]
    px = np.ascontiguousarray(frame.reshape(-1, 3)[idx].transpose(0, 2, 1))  # (rows, channel, sample)
    n = px.shape[2]
    # The median and the quantile of sRGB values are those of their linear light.
    plastic = np.partition(px, n // 2, axis=2)[:, :, n // 2]
    brighter = (_LOG_LINEAR[px] - _LOG_LINEAR[plastic][:, :, None]).max(axis=1)
    k = int(BLOCK_QUANTILE * (n - 1))
    out: FloatArray = np.partition(brighter, k, axis=1)[:, k].astype(np.float64)
    return out


_CACHE: dict[tuple[str, bytes, tuple[int, int]], NDArray[np.intp]] = {}


def _block_pixels(profile: BoardProfile, loc: Localisation, shape: tuple[int, ...]) -> NDArray[np.intp]:
    """Flat pixel indices of every row's key block (rows, samples), made once per fit of the board."""
    assert loc.image_to_board is not None
    key = (profile.name, np.asarray(loc.image_to_board, dtype=np.float64).tobytes() + repr(loc.warp).encode(), (int(shape[0]), int(shape[1])))
    got = _CACHE.get(key)
    if got is not None:
        return got
    step = 1.0 / BLOCK_SAMPLES_PER_MM
    first = np.asarray(profile.key_centres_mm(1), dtype=np.float64)
    (x0, y0), (x1, y1) = first.min(axis=0) - BLOCK_MARGIN_MM, first.max(axis=0) + BLOCK_MARGIN_MM
    gx, gy = np.meshgrid(np.arange(x0, x1, step), np.arange(y0, y1, step))
    grid = np.column_stack([gx.ravel(), gy.ravel()]) - first.mean(axis=0)
    centres = [np.asarray(profile.key_centres_mm(r), dtype=np.float64).mean(axis=0) for r in range(1, profile.rows + 1)]
    pts = np.concatenate([grid + c for c in centres])
    q = loc.to_image(pts)
    h, w = int(shape[0]), int(shape[1])
    x = np.clip(np.rint(q[:, 0]), 0, w - 1).astype(np.intp)
    y = np.clip(np.rint(q[:, 1]), 0, h - 1).astype(np.intp)
    out: NDArray[np.intp] = (y * w + x).reshape(profile.rows, len(grid))
    _CACHE.clear()  # one fixed camera's fit at a time
    _CACHE[key] = out
    return out


def bare_blocks(
    scores: Mapping[int, float], references: Sequence[int], witnesses: Mapping[str, Sequence[int]]
) -> set[int]:
    """The rows (keys of ``scores``) whose blocks are bare: ``references`` are
    rows not in play read bare, ``witnesses`` per key colour the rows whose
    key pegs of that colour were read surely (every key colour must have
    one). Empty when the frame cannot tell."""
    if len(references) < MIN_REFERENCES or not witnesses or any(not rows for rows in witnesses.values()):
        return set()
    # The second highest: one reference block with something over it that the cover test missed must not
    # raise the bar for all.
    bound = sorted(scores[r] for r in references)[-2] + BARE_MARGIN
    seen = {r for rows in witnesses.values() for r in rows}
    if min(scores[r] for r in seen) < bound + WITNESS_MARGIN:
        return set()
    return {r for r, s in scores.items() if r not in references and r not in seen and s <= bound}


def bare_key_rows(
    profile: BoardProfile,
    frame: NDArray[np.uint8],
    loc: Localisation,
    names: NDArray[np.str_],
    sure: NDArray[np.bool_],
    in_play: NDArray[np.bool_],
    *,
    shows: NDArray[np.bool_] | None = None,
) -> set[int]:
    """The rows in play (1-based) read wholly bare whose key blocks show no key peg.

    ``names``/``sure``: per key hole (row by row), the class read and
    whether it was read surely (accepted, nothing over it); ``in_play``:
    per row; ``shows``: per key hole, whether it shows as a recess (darker
    than the plastic around it). A row in play counts only when most of its
    holes do: something flat and dark over a block (a sleeve the cover test
    missed) hides its holes and would light nothing either.
    """
    n = profile.key_holes
    names = names.reshape(profile.rows, n)
    sure = sure.reshape(profile.rows, n)
    whole = sure.all(axis=1)
    bare = whole & (names == EMPTY).all(axis=1)
    holes_show = np.ones(profile.rows, dtype=bool) if shows is None else shows.reshape(profile.rows, n).sum(axis=1) > n // 2
    need = [int(r) + 1 for r in np.flatnonzero(bare & in_play & holes_show)]
    if not need:
        return set()
    references = [int(r) + 1 for r in np.flatnonzero(bare & ~in_play)]
    witnesses = {
        c: [int(r) + 1 for r in np.flatnonzero(whole & in_play & (names == c).any(axis=1))]
        for c in (profile.right_place_key, profile.right_colour_key)
    }
    rows = sorted({*need, *references, *(r for rs in witnesses.values() for r in rs)})
    scores = dict(zip(rows, block_scores(profile, frame, loc, rows).tolist(), strict=True))
    return bare_blocks(scores, references, witnesses) & set(need)
