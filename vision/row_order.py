"""Rows are played in order: what a board's rows say about what lies over them.

A black sleeve over a black board reads as rows of empty holes, and no
colour or cover test tells it from an empty board. The order of play
does: a row that shows no peg at all, before one that holds pegs, is not
bare. The other way round, past a row seen bare and the last peg seen, no
row holds a peg yet: a hole there that may be bare is, and a row something
lies over is empty.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.pixel_stats import median_axis1
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.reading import (
    EMPTY,
    ROW_EMPTY,
    ROW_OCCLUDED,
    ROW_UNKNOWN,
    UNKNOWN,
    HoleReading,
    KeyReading,
    RowReading,
    doubt_bare_keys,
    empty_row,
    unreadable_row,
)
from pegwatch.vision.recess import least_recess, rows_near

#: How much darker (CIELAB L*, the median over a row) a bare hole's disc
#: must look than the plastic ring around it for the row to be seen bare.
#: A hole is a recess: even under a 1/30 s exposure's blur the median step
#: of a truly bare row was 3 or more on nineteen rows in twenty of issue 14's
#: physically based boards, while a dark sleeve, flat over the holes,
#: leaves none (about 1).
MIN_HOLE_STEP = 2.0


def _has_pegs(row: RowReading) -> bool:
    return any(h.is_certain and h.colour != EMPTY for h in row.holes)


def covered_before_played(rows: Sequence[RowReading], *, key_holes: int, dark: Collection[str]) -> list[RowReading]:
    """``rows`` with the rows a dark cover must lie over occluded.

    A row that shows no peg and some bare hole, before the last row that
    holds pegs, is covered, and so is the next row that cover may reach.
    Beside them, the cover's dark edge may still lie over a hole: there a
    ``dark`` reading (a dark neutral peg, or a bare hole) is what the cover
    itself looks like, and reads as unknown.

    A row with some pegs and a bare hole is left as read: an incomplete row
    is an illegal move the table must see. For boards whose rules allow
    blank holes, do not call this.
    """
    out = list(rows)
    played = [i for i, row in enumerate(out) if _has_pegs(row)]
    if not played:
        return out
    last = played[-1]
    bare = [
        i for i in range(last)
        if not _has_pegs(out[i]) and any(h.is_certain and h.colour == EMPTY for h in out[i].holes)
    ]
    if not bare:
        return out
    reach = {*bare, min(bare[-1] + 1, last)}
    for i in reach:
        row = out[i]
        out[i] = unreadable_row(row.row, len(row.holes), key_holes, ROW_OCCLUDED)
    for i in {min(reach) - 1, max(reach) + 1} - reach:
        if not 0 <= i < len(out) or out[i].status == ROW_OCCLUDED:
            continue
        row = out[i]
        holes = tuple(
            HoleReading(UNKNOWN, h.confidence) if h.is_certain and h.colour in dark else h for h in row.holes
        )
        if holes != row.holes:
            out[i] = RowReading(row.row, holes, doubt_bare_keys(row.keys), ROW_UNKNOWN)
    return out


def covered_beside_dark(
    rows: Sequence[RowReading], beside: Collection[int], *, key_holes: int, seen_bare: NDArray[np.bool_] | None = None
) -> list[RowReading]:
    """``rows`` with those that show no peg, where the tray beside them is
    dark (``beside``: 0-based row indexes, see
    :meth:`~pegwatch.vision.tray.TrayWatch.rows_beside_dark`), occluded: a
    dark sleeve reaching over them reads as bare holes. Not the rows
    ``seen_bare`` (per row, :meth:`~pegwatch.vision.recess.RecessTest.seen_bare`):
    their holes show their recesses, which a sleeve over them would hide;
    the arm over the tray stops short of them."""
    out = list(rows)
    for i in beside:
        row = out[i]
        if seen_bare is not None and seen_bare[i]:
            continue
        if not _has_pegs(row) and row.status != ROW_OCCLUDED:
            out[i] = unreadable_row(row.row, len(row.holes), key_holes, ROW_OCCLUDED)
    return out


def least_hole_step(bare_mean: Sequence[float] | None) -> float:
    """The step a bare row must show (see :func:`covered_flat`): ``MIN_HOLE_STEP``,
    or half the calibration's bare hole's own (``bare_mean``: its class
    mean, disc L* first, ring L* fourth) on a board whose holes look shallow."""
    if bare_mean is None or len(bare_mean) < 4:
        return MIN_HOLE_STEP
    return min(MIN_HOLE_STEP, 0.5 * float(bare_mean[3] - bare_mean[0]))


def covered_flat(
    rows: Sequence[RowReading], hole_steps: NDArray[np.float64], *, key_holes: int, least: float = MIN_HOLE_STEP
) -> list[RowReading]:
    """``rows`` with those read wholly bare whose holes do not look like
    holes occluded: ``hole_steps`` per code hole of the guess rows (row by
    row), how much darker its disc is than its ring (L*); ``least``, the
    step a bare row's median must reach. Something flat and dark lies over
    them (a sleeve), not an empty stretch of board.

    Beside a covered row, a bare row's median must also reach
    :data:`~pegwatch.vision.recess.RECESS_SHARE` of the steps of the
    frame's bare rows beside no cover, as a hole read bare beside a found
    cover must (:mod:`~pegwatch.vision.recess`). A light grey sleeve's
    fabric shows a faint step: seed 2, table 502, case 126 (its lens
    known) read the row at the sleeve's edge bare, its holes stepping 1.2
    to 3.6 L*, where the bare rows beyond stepped 3.1 to 8.1, and so read
    a played row empty. Each row found so puts its own neighbour beside a
    cover.
    """
    out = list(rows)
    if not rows:
        return out
    n = len(rows[0].holes)
    steps = np.asarray(hole_steps, dtype=np.float64)[: len(rows) * n]
    bare = np.array([all(h.is_certain and h.colour == EMPTY for h in row.holes) for row in rows], dtype=bool)
    medians = median_axis1(steps.reshape(len(rows), n))
    flat = bare & (medians < least)
    if not flat.any() and not any(row.status == ROW_OCCLUDED for row in rows):
        return out
    while True:
        for i in np.flatnonzero(flat):
            out[i] = unreadable_row(out[i].row, n, key_holes, ROW_OCCLUDED)
        covered = np.array([row.status == ROW_OCCLUDED for row in out], dtype=bool)
        near = rows_near(covered) & ~covered
        flat = bare & near & (medians < least_recess(steps, np.repeat(bare & ~covered & ~near, n), 0.0))
        if not flat.any():
            return out


#: A run of rows read bare between two covered rows, no wider than this
#: (mm: the run's rows times the row step), lies under the same cover: an
#: arm or a sleeve is some 60 to 80 mm across, and a grey one over pegs
#: may read as bare plastic in its middle (issue 14's boards: a sleeve
#: found over the rows on each side of two rows of pegs it read as bare).
#: A wider gap is more likely two things, or one and a shadow.
SLEEVE_GAP_MM = 35.0


def bare_between_covers(rows: Sequence[RowReading], *, key_holes: int, max_run: int) -> list[RowReading]:
    """``rows`` (in order) with each run of at most ``max_run`` rows read
    wholly bare, between two occluded rows, occluded: one object lies over
    all of them (see :data:`SLEEVE_GAP_MM`; ``max_run`` is that many rows
    of the board's step). A row reads bare when every code hole reads
    surely bare and no key peg shows, whether or not its key counts are
    sure: under a grey sleeve the key holes may read doubtful where the
    code holes read bare."""
    out = list(rows)
    i = 1
    while i < len(out):
        if not _reads_bare(out[i]) or out[i - 1].status != ROW_OCCLUDED:
            i += 1
            continue
        end = i
        while end < len(out) and _reads_bare(out[end]):
            end += 1
        if end < len(out) and out[end].status == ROW_OCCLUDED and end - i <= max_run:
            for k in range(i, end):
                out[k] = unreadable_row(out[k].row, len(out[k].holes), key_holes, ROW_OCCLUDED)
        i = end
    return out


def bare_beside_cover(rows: Sequence[RowReading], in_play: NDArray[np.bool_]) -> list[RowReading]:
    """``rows`` (in order) with the holes read bare, in occluded rows not shown to be unplayed, read unknown.

    Something lies over part of such a row (a hole, or its key holes); a
    hole beside it that looks bare may be the cover's edge over a peg, or a
    peg whose head the cover's shadow hides. Rows not in play yet hold no
    peg, so their bare holes stand: but a row is known not to be in play
    only where an earlier row is seen wholly bare with nothing over it (the
    game fills rows in order). A grey sleeve over played rows can read as
    bare plastic: the rows under it then look unplayed, and only their
    covered key holes give the sleeve away. An occluded row is never
    judged: this changes what the row shows, not a verdict.
    """
    out = list(rows)
    unplayed_seen = False
    for i, row in enumerate(out):
        vouched = unplayed_seen
        unplayed_seen |= row.status == ROW_EMPTY
        if row.status != ROW_OCCLUDED or (not in_play[i] and vouched):
            continue
        holes = tuple(HoleReading(UNKNOWN, h.confidence) if h.is_certain and h.colour == EMPTY else h for h in row.holes)
        if holes != row.holes:
            out[i] = RowReading(row.row, holes, row.keys, row.status)
    return out


def unplayed_bare(
    profile: BoardProfile,
    code_empty: NDArray[np.bool_],
    key_empty: NDArray[np.bool_],
    *,
    key_unmarked: NDArray[np.bool_] | None = None,
) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """Holes read as bare (code holes, the secret's, then key holes) in rows after, and from,
    the first row read wholly bare (``code_empty``/``key_empty``: per guess and key hole).

    ``key_unmarked`` (per key hole, default ``key_empty``) says which key
    holes show no key peg when looking for that row: nearest to bare,
    though perhaps not surely (under a warm lamp a bare key hole lies near
    the white key pegs' class). A row whose code holes all read surely
    bare holds no guess, so it holds no marks either; its key holes only
    guard against code pegs read as bare (black ones in shade), and a key
    peg there would show as one.

    Rows are played in order, so after a row with no peg at all no row
    holds one yet: there a hole that reads bare next to a cover (the
    shield's body, a hand resting beyond the game) is taken as seen.
    Nearer a game in progress a peg's head, leaning off its hole, can
    leave the hole looking bare: there a cover's reach still occludes.
    The first bare row itself is the next to play: its holes are not in
    play yet either (the second mask).
    """
    p = profile
    code_rows = code_empty.reshape(p.rows, p.holes).all(axis=1)
    key_rows = (key_empty if key_unmarked is None else key_unmarked).reshape(p.rows, p.key_holes).all(axis=1)
    empty_rows = np.flatnonzero(code_rows & key_rows)
    masks: list[NDArray[np.bool_]] = []
    for skip in (1, 0):
        bare = np.zeros(len(code_empty) + p.holes + len(key_empty), dtype=bool)
        if len(empty_rows):
            after = int(empty_rows[0]) + skip
            bare[after * p.holes : p.rows * p.holes] = code_empty[after * p.holes :]
            start = p.rows * p.holes + p.holes
            bare[start + after * p.key_holes :] = key_empty[after * p.key_holes :]
        masks.append(bare)
    return masks[0], masks[1]


def _reads_bare(row: RowReading) -> bool:
    """Every code hole read surely bare, and no key peg shown (its counts may be in doubt)."""
    return row.status in (ROW_EMPTY, ROW_UNKNOWN) and all(h.is_certain and h.colour == EMPTY for h in row.holes) and not _shows_a_peg(row)


def _shows_a_peg(row: RowReading) -> bool:
    keys = row.keys
    marked = keys.black + keys.white > 0 if keys.is_certain else (
        keys.black_bounds is not None and keys.white_bounds is not None and keys.black_bounds[0] + keys.white_bounds[0] > 0
    )
    return _has_pegs(row) or marked


def unplayed_read_bare(
    rows: Sequence[RowReading], hole_steps: NDArray[np.float64], *, key_holes: int, least: float = MIN_HOLE_STEP
) -> list[RowReading]:
    """``rows`` (in order) with the doubtful holes of rows the game has not reached read bare.

    The game fills rows in order: past a row seen wholly bare (nothing over
    it), and past the last row showing a peg read surely (a code peg, or a
    key peg its count must hold), no row holds a peg yet. There a hole the
    colour model could not read but could not rule out bare either (bare
    among its candidates), and that shows as a recess (``hole_steps``, per
    code hole of the guess rows: its disc darker than its ring by ``least``,
    see :func:`covered_flat`), is bare; a row whose code holes are all bare
    holds no key peg (a row is marked only once guessed). A hole that may
    hold anything or shows no recess (something flat over it) is left as
    read. A row something lies over (a hand reaching across the board, or
    the edge of one over the rows beside it) hides no peg there either, past
    a row seen bare with no cover beside it (a sleeve's edge over played
    rows may read bare beside the sleeve): it reads empty, as sure as that
    row. Nothing is judged from this: a row without a peg is no guess.
    """
    out = list(rows)
    first_bare = next((i for i, row in enumerate(out) if row.status == ROW_EMPTY), None)
    if first_bare is None:
        return out
    last_peg = max((i for i, row in enumerate(out) if _shows_a_peg(row)), default=-1)
    covered = [row.status == ROW_OCCLUDED for row in out]
    clear_bare = next(
        (i for i in range(first_bare, len(out)) if out[i].status == ROW_EMPTY and not any(covered[max(i - 1, 0) : i + 2])),
        len(out),
    )
    past = [i for i in range(max(clear_bare, last_peg) + 1, len(out)) if covered[i]]
    if past:
        seen_bare = min(h.confidence for h in out[clear_bare].holes)
        for i in past:
            out[i] = empty_row(out[i].row, len(out[i].holes), key_holes, seen_bare)
    for i in range(max(first_bare, last_peg) + 1, len(out)):
        row = out[i]
        if row.status in (ROW_OCCLUDED, ROW_EMPTY):
            continue
        steps = hole_steps[i * len(row.holes) : (i + 1) * len(row.holes)]
        bare = [dict(h.candidates).get(EMPTY) if h.colour == UNKNOWN else None for h in row.holes]
        holes = tuple(
            HoleReading(EMPTY, conf) if conf is not None and step >= least else h
            for h, conf, step in zip(row.holes, bare, steps, strict=True)
        )
        keys = row.keys
        if all(h.colour == EMPTY for h in holes) and keys.status != ROW_OCCLUDED:
            keys = KeyReading(0, 0, key_holes, keys.confidence, ROW_EMPTY)
            out[i] = RowReading(row.row, holes, keys, ROW_EMPTY)
        elif holes != row.holes:
            out[i] = RowReading(row.row, holes, keys, row.status)
    return out
