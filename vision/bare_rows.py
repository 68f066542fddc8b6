"""The rows no game has reached yet, from holes read bare that also look like the frame's bare holes.

Rows are played in order, so from the first row read wholly bare on no
row holds a peg yet (:func:`~pegwatch.vision.row_order.unplayed_bare`):
there a hole read bare is taken as seen, and those rows' bare holes are the
frame's own picture of a bare hole (:mod:`~pegwatch.vision.recess`). The
colour model alone makes that first row of anything it reads surely bare:
a grey sleeve held over the board, its fabric about the plastic's grey
and brightness, over rows of pegs (issue 14's seed 8, table 500, case 150:
rows 3 and 5-7 under one read as sixteen surely bare holes, and every row
from row 3 on was taken as not in play).

A bare hole is a recess, and its picture says so whatever the light
(:class:`~pegwatch.vision.recess.RecessShapes`). So a hole read surely
bare whose patch correlates with the frame's bare holes under
:data:`~pegwatch.vision.recess.RECESS_DOUBT` does not make its row wholly
bare: the rows not in play are found again without it, and its row stays
in play, where such a hole reads unknown with nothing ruled out (as one
that shows no recess's depth: ``BoardReader``) and no key hole of its row
is proved bare while it is in doubt.
Over issue 14's physically based seeds 3-9 (rows no hand is over,
full-trust boards), 29 of 45,534 truly bare holes read surely bare lie
under that bound, and 577 of the 633 pegs the colour model reads surely
bare (black pegs, and fabric over pegs).

The board's last rows speak for each other too (:func:`bare_tail`). In a
frame the colour model reads less surely than its calibration (blurred,
small, under a warm lamp) a bare hole may lie nearer bare than anything
else and still short of a sure reading: every row of an unfinished game
then stays in play and its bare holes unread (issue 14's seed 8, table
501, case 49: twenty-eight bare holes of rows 6-12 read unknown, and no
bare hole left to judge the frame's dark pegs by). Where the board's last
two rows or more all lie nearest bare, every code hole stepping down as a
hole does and every key hole nearest bare, the rows after the first of
them hold no peg: a peg there would make that first row a guess too, of
four pegs each read nearest bare (black ones), and a guess after it one of
the same. Their holes nearest bare count as read bare, and are asked for a
recess's shape like any other. The first row of the run may be the newest
guess, four black pegs not marked yet: it reads bare only where each of its
holes looks like the frame's bare holes (:data:`~pegwatch.vision.recess.RECESS_LIKENESS`,
under which a black peg read bare lies 99 times in 100), on a fit trusted
to accuse from.

Asked only on a fit trusted to accuse from (``doubt``): the patches are
centred where the fit puts the holes, and a fit in doubt may put them off a
hole. A bare hole seen off its centre looks less like one; that can only
keep a row from being seen whole (:meth:`~pegwatch.vision.recess.RecessTest.seen_bare`),
the safe side, but it could move the rows in play of a fit in doubt: on
issue 14's seed 10 it misread four more holes of one such board (table
501, case 96) and two of another.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.localise import Localisation
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.recess import MIN_REFERENCES, RECESS_DOUBT, RECESS_LIKENESS, RecessShapes
from pegwatch.vision.row_order import unplayed_bare

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]


@dataclass(frozen=True)
class BareRows:
    """What the frame says of the rows not in play yet.

    ``unlike``: per guess hole, read surely bare but unlike the frame's bare
    holes. ``unplayed`` and ``not_in_play``: as
    :func:`~pegwatch.vision.row_order.unplayed_bare` gives them, without
    those holes. ``likeness``: per guess hole, against the bare holes of the
    rows not in play (None: they are too few, or do not agree). ``tail``:
    per guess hole, read bare from the board's last rows (:func:`bare_tail`)
    and not in play.
    """

    unlike: BoolArray
    unplayed: BoolArray
    not_in_play: BoolArray
    likeness: FloatArray | None
    tail: BoolArray


def bare_tail(
    profile: BoardProfile, nearest_bare: BoolArray, key_nearest_bare: BoolArray, recess: BoolArray
) -> tuple[BoolArray, BoolArray]:
    """Per guess hole, whether it lies after the first of the board's last rows (two or more) whose
    code holes all lie nearest bare (``nearest_bare``) and show as holes (``recess``), and whose key
    holes all lie nearest bare (``key_nearest_bare``): rows no game has reached yet; and whether it
    lies in that first row."""
    p = profile
    code_rows = np.asarray((nearest_bare & recess).reshape(p.rows, p.holes).all(axis=1), dtype=bool)
    key_rows = np.asarray(key_nearest_bare.reshape(p.rows, p.key_holes).all(axis=1), dtype=bool)
    looks_bare: list[bool] = (code_rows & key_rows).tolist()
    first = p.rows
    while first > 0 and looks_bare[first - 1]:
        first -= 1
    after, lead = np.zeros(p.rows * p.holes, dtype=bool), np.zeros(p.rows * p.holes, dtype=bool)
    if p.rows - first >= 2:
        after[(first + 1) * p.holes :] = True
        lead[first * p.holes : (first + 1) * p.holes] = True
    return after, lead


def bare_rows(
    profile: BoardProfile,
    code_bare: BoolArray,
    key_bare: BoolArray,
    *,
    key_unmarked: BoolArray,
    shapes: RecessShapes,
    frame: NDArray[np.uint8] | None,
    loc: Localisation | None,
    centres_mm: FloatArray,
    doubt: bool = True,
    nearest_bare: BoolArray | None = None,
    recess: BoolArray | None = None,
) -> BareRows:
    """The rows not in play from ``code_bare``/``key_bare`` (per guess and key hole, read surely
    bare) and ``key_unmarked`` (nearest to bare), each guess hole read bare asked whether it looks
    like the frame's bare holes (``centres_mm``: the guess holes'; no frame, nothing asked; ``doubt``
    False: the likeness given, nothing doubted). With ``nearest_bare`` and ``recess`` (per guess
    hole: nearest bare, and showing as a hole), the board's last rows read bare too (:func:`bare_tail`)."""
    n = len(code_bare)
    none = np.zeros(n, dtype=bool)
    tail, lead = (none, none) if nearest_bare is None or recess is None else bare_tail(profile, nearest_bare, key_unmarked, recess)
    code_bare = code_bare | tail
    unplayed, not_in_play = unplayed_bare(profile, code_bare, key_bare, key_unmarked=key_unmarked)
    if frame is None or loc is None:
        return BareRows(np.zeros(n, dtype=bool), unplayed, not_in_play, None, tail & not_in_play[:n])
    # The rows found again without a hole lie after it, so their bare holes are a subset: too few
    # now, too few then, and the patches are taken only where they may be asked.
    light = shapes.patches(frame, loc, centres_mm) if int(not_in_play[:n].sum()) >= MIN_REFERENCES else None
    likeness = None if light is None else shapes.against(light, not_in_play[:n])
    if doubt and light is not None and likeness is not None and lead.any() and bool((likeness[lead] >= RECESS_LIKENESS).all()):
        tail, code_bare = tail | lead, code_bare | lead
        unplayed, not_in_play = unplayed_bare(profile, code_bare, key_bare, key_unmarked=key_unmarked)
        likeness = shapes.against(light, not_in_play[:n])
    unlike: BoolArray = np.zeros(n, dtype=bool) if likeness is None or not doubt else np.asarray(code_bare & (likeness < RECESS_DOUBT), dtype=bool)
    if unlike.any() and light is not None:
        unplayed, not_in_play = unplayed_bare(profile, code_bare & ~unlike, key_bare, key_unmarked=key_unmarked)
        likeness = shapes.against(light, not_in_play[:n])
    return BareRows(unlike, unplayed, not_in_play, likeness, tail & not_in_play[:n])
