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
def _key_classes(names: tuple[str, ...], place: str, colour: str) -> tuple[list[bool], list[bool], list[bool], NDArray[np.bool_]]:
    """Per class number: whether it is the bare hole, the right-place key, the right-colour key
    (plain lists: a row has four holes), and which classes are not the bare hole (for the distances)."""
    empty = [n == EMPTY for n in names]
    return empty, [n == place for n in names], [n == colour for n in names], ~np.array(empty, dtype=bool)


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
    unplayed: bool = False,
    head_bare: NDArray[np.bool_] | None = None,
    proved_bare: NDArray[np.bool_] | None = None,
    head_other: NDArray[np.bool_] | None = None,
    head_peg: NDArray[np.intp] | None = None,
) -> KeyReading:
    """Count a row's key pegs (``model``'s classes: ``best``, ``accepted``,
    ``conf`` and squared distances ``d2`` per key hole; ``occluded`` holes
    under a cover); bounds on the counts when some key holes are uncertain.

    ``unplayed``: the row lies after the first row read wholly bare
    (:func:`~pegwatch.vision.row_order.unplayed_bare`): it holds no guess,
    so no marks, and its key holes count as bare where every one of them
    lies nearest bare (whose light a warm lamp or a blur leaves short of a
    sure reading). A key peg read there leaves the row as read.
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
    # Four holes a row, twelve rows a frame: plain lists, not numpy's per-call overhead.
    cls_empty, cls_place, cls_colour, not_empty = _key_classes(model.names, profile.right_place_key, profile.right_colour_key)
    n = len(best)
    b: list[int] = best.tolist()
    acc: list[bool] = accepted.tolist()
    occ: list[bool] = occluded.tolist()
    sure = [True] * n if unplayed and not any(occ) and all(cls_empty[c] for c in b) else [acc[i] and not occ[i] for i in range(n)]
    hidden = [False] * n
    proved: list[bool] = [False] * n if proved_bare is None else proved_bare.tolist()
    if in_play and head_bare is not None:
        bare_head: list[bool] = head_bare.tolist()
        hidden = [sure[i] and cls_empty[b[i]] and not bare_head[i] for i in range(n)]
        sure = [sure[i] and not hidden[i] for i in range(n)]
    held = [False] * n
    if head_peg is not None:
        peg: list[int] = head_peg.tolist()
        held = [(hidden[i] or (not acc[i] and not occ[i])) and peg[i] >= 0 for i in range(n)]
        b = [peg[i] if held[i] else b[i] for i in range(n)]
        hidden = [hidden[i] and not held[i] for i in range(n)]
        sure = [sure[i] or held[i] for i in range(n)]
    if head_other is not None:
        # Two looks at one peg that disagree on its colour leave it any.
        contradicted: list[bool] = head_other.tolist()
        other = [sure[i] and not cls_empty[b[i]] and contradicted[i] and not held[i] for i in range(n)]
        hidden = [hidden[i] or other[i] for i in range(n)]
        sure = [sure[i] and not other[i] for i in range(n)]
    # "No key peg at all" is the marking a misread most often invents (white
    # key pegs under warm light, black ones in shade, all read as holes):
    # a row read wholly bare counts as bare only where each hole lies
    # outside every key peg's class, not merely nearer the hole's.
    if in_play and all(sure) and all(cls_empty[c] for c in b):
        inside: list[bool] = np.asarray((d2[:, not_empty] <= model.reject_distance2).any(axis=1), dtype=bool).tolist()
        sure = [sure[i] and (proved[i] or not inside[i]) for i in range(n)]
    black = sum(1 for i in range(n) if sure[i] and cls_place[b[i]])
    white = sum(1 for i in range(n) if sure[i] and cls_colour[b[i]])
    empty = sum(1 for i in range(n) if sure[i] and cls_empty[b[i]])
    kconf = float(conf.min()) if len(conf) else 1.0
    if all(sure):
        return KeyReading(black, white, empty, kconf, ROW_EMPTY if black + white == 0 else ROW_OK)
    may_black = may_white = 0
    for i in range(n):
        if sure[i]:
            continue
        cands = () if occ[i] or hidden[i] else model.candidates(d2[i][None, :])[0]
        seen = {c for c, _ in cands}
        may_black += (not seen) or profile.right_place_key in seen
        may_white += (not seen) or profile.right_colour_key in seen
    status = ROW_OCCLUDED if any(occ) else ROW_UNKNOWN
    if status == ROW_OCCLUDED:
        kconf = 0.0
    return KeyReading(
        black, white, empty, kconf, status,
        black_bounds=(black, black + may_black),
        white_bounds=(white, white + may_white),
    )
