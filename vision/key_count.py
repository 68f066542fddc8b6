"""Counting a row's key pegs from its key holes' classes, with bounds where some are uncertain.

What a bare key hole must prove before it counts as bare is here: "no key
peg" is what makes a correctly marked row look mis-marked (see
``docs/vision.md``, What "bare" must prove).
"""

from __future__ import annotations

import functools

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.colour import ColourModel
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.reading import EMPTY, ROW_EMPTY, ROW_OCCLUDED, ROW_OK, ROW_UNKNOWN, KeyReading

FloatArray = NDArray[np.float64]


@functools.lru_cache(maxsize=16)
def _key_classes(names: tuple[str, ...], place: str, colour: str) -> tuple[NDArray[np.bool_], ...]:
    """Which of the model's classes are the bare hole, the right-place key and the right-colour key."""
    arr = np.array(names, dtype=object)
    return arr == EMPTY, arr == place, arr == colour


def count_keys(
    profile: BoardProfile,
    model: ColourModel,
    best: NDArray[np.intp],
    accepted: NDArray[np.bool_],
    conf: FloatArray,
    occluded: NDArray[np.bool_],
    d2: FloatArray,
    *,
    in_play: bool = True,
    head_bare: NDArray[np.bool_] | None = None,
    proved_bare: NDArray[np.bool_] | None = None,
    head_other: NDArray[np.bool_] | None = None,
    head_peg: NDArray[np.intp] | None = None,
) -> KeyReading:
    """Count a row's key pegs (``model``'s classes: ``best``, ``accepted``,
    ``conf`` and squared distances ``d2`` per key hole; ``occluded`` holes
    under a cover); bounds on the counts when some key holes are uncertain.

    ``head_bare``: per key hole, whether the place where a key peg's head
    would stand looks bare too (``BoardReader._head_classes``), and, near
    a found cover, whether the hole shows as a recess
    (:mod:`~pegwatch.vision.recess`). In a row in play, a hole read bare
    counts only when these agree.
    ``head_other``: per key hole, whether the head's place contradicts the
    class read (``BoardReader._head_classes``: the other key colour, or
    bare against a lit colour): a hole read as a key peg there counts as
    any (a white key peg's shaded side, left at the hole under a warm lamp,
    reads as a red one).
    ``proved_bare``: per key hole, whether its block shows no key peg
    (:mod:`~pegwatch.vision.key_blocks`), which proves a hole read bare
    bare in a row read wholly bare (never one whose head's place shows a
    peg: the reader leaves those out).
    ``head_peg``: per key hole, the key class its head's place shows surely
    (a colour that stands out, in a block that shows a peg standing:
    ``BoardReader._head_classes``, :func:`~pegwatch.vision.key_blocks.key_holes_seen`),
    or -1: a hole read bare there, or read not at all, holds that peg.
    """
    is_empty, is_place, is_colour = _key_classes(model.names, profile.right_place_key, profile.right_colour_key)
    sure = accepted & ~occluded
    hidden = np.zeros(len(best), dtype=bool)
    proved = np.zeros(len(best), dtype=bool) if proved_bare is None else proved_bare
    if in_play and head_bare is not None:
        hidden = sure & is_empty[best] & ~head_bare
        sure &= ~hidden
    held = np.zeros(len(best), dtype=bool)
    if head_peg is not None:
        held = (hidden | (~accepted & ~occluded)) & (head_peg >= 0)
        best = np.where(held, head_peg, best)
        hidden &= ~held
        sure |= held
    if head_other is not None:
        # Two looks at one peg that disagree on its colour leave it any.
        other = sure & ~is_empty[best] & head_other & ~held
        hidden |= other
        sure &= ~other
    # "No key peg at all" is the marking a misread most often invents (white
    # key pegs under warm light, black ones in shade, all read as holes):
    # a row read wholly bare counts as bare only where each hole lies
    # outside every key peg's class, not merely nearer the hole's.
    if in_play and sure.all() and is_empty[best].all():
        sure &= proved | ~(d2[:, ~is_empty] <= model.reject_distance2).any(axis=1)
    black = int(is_place[best[sure]].sum())
    white = int(is_colour[best[sure]].sum())
    empty = int(is_empty[best[sure]].sum())
    kconf = float(conf.min()) if len(conf) else 1.0
    if sure.all():
        return KeyReading(black, white, empty, kconf, ROW_EMPTY if black + white == 0 else ROW_OK)
    may_black = may_white = 0
    for i in np.flatnonzero(~sure):
        cands = () if occluded[i] or hidden[i] else model.candidates(d2[i][None, :])[0]
        seen = {c for c, _ in cands}
        may_black += (not seen) or profile.right_place_key in seen
        may_white += (not seen) or profile.right_colour_key in seen
    status = ROW_OCCLUDED if occluded.any() else ROW_UNKNOWN
    if status == ROW_OCCLUDED:
        kconf = 0.0
    return KeyReading(
        black, white, empty, kconf, status,
        black_bounds=(black, black + may_black),
        white_bounds=(white, white + may_white),
    )
