"""The rows not in play yet: a hole read bare that looks like no bare hole is not taken as seen."""

from __future__ import annotations

import numpy as np

from pegwatch.vision.bare_rows import bare_rows, bare_tail
from pegwatch.vision.key_count import count_keys
from pegwatch.vision.profile import load_profile
from pegwatch.vision.reading import EMPTY, ROW_EMPTY, ROW_OCCLUDED, ROW_OK
from pegwatch.vision.recess import RECESS_DOUBT, RECESS_LIKENESS


class _Shapes:
    """RecessShapes' interface with a likeness given per guess hole (None: the frame says nothing)."""

    def __init__(self, likeness: np.ndarray | None) -> None:
        self.given = likeness
        self.asked: list[np.ndarray] = []

    def patches(self, frame, loc, centres_mm):
        return np.zeros((len(centres_mm), 1))

    def against(self, light, references):
        self.asked.append(np.asarray(references, dtype=bool).copy())
        return None if self.given is None else self.given.copy()


def _board():
    p = load_profile("invicta-12x4")
    n = p.rows * p.holes
    code_bare = np.arange(n) >= 2 * p.holes  # rows 1-2 played, rows 3-12 read surely bare
    keys = np.ones(p.rows * p.key_holes, dtype=bool)
    return p, n, code_bare, keys


def test_a_row_read_bare_that_looks_like_no_hole_is_in_play_and_its_holes_unread():
    p, n, code_bare, keys = _board()
    likeness = np.full(n, 0.9)
    likeness[2 * p.holes : 3 * p.holes] = RECESS_DOUBT - 0.1  # row 3: fabric over pegs, read bare
    shapes = _Shapes(likeness)
    got = bare_rows(p, code_bare, keys, key_unmarked=keys, shapes=shapes, frame=np.zeros((4, 4, 3), np.uint8), loc=object(), centres_mm=np.zeros((n, 2)))
    assert np.flatnonzero(got.unlike).tolist() == list(range(2 * p.holes, 3 * p.holes))
    in_play = ~got.not_in_play[:n].reshape(p.rows, p.holes).all(axis=1)
    assert in_play.tolist() == [True] * 3 + [False] * 9  # row 3 is in play now; row 4 is the first bare row
    assert not got.unplayed[: 4 * p.holes].any() and got.unplayed[4 * p.holes : n].all()
    # The frame's bare holes are asked again without row 3's.
    assert len(shapes.asked) == 2 and not shapes.asked[1][: 3 * p.holes].any()
    assert got.likeness is not None


def test_holes_that_look_like_holes_or_a_frame_that_says_nothing_change_nothing():
    p, n, code_bare, keys = _board()
    for likeness in (np.full(n, RECESS_LIKENESS), None):
        got = bare_rows(p, code_bare, keys, key_unmarked=keys, shapes=_Shapes(likeness), frame=np.zeros((4, 4, 3), np.uint8), loc=object(), centres_mm=np.zeros((n, 2)))
        assert not got.unlike.any()
        assert (~got.not_in_play[:n].reshape(p.rows, p.holes).all(axis=1)).tolist() == [True] * 2 + [False] * 10
    got = bare_rows(p, code_bare, keys, key_unmarked=keys, shapes=_Shapes(np.zeros(n)), frame=None, loc=None, centres_mm=np.zeros((n, 2)))
    assert not got.unlike.any() and got.likeness is None


def test_on_a_fit_in_doubt_the_likeness_is_given_and_nothing_doubted():
    p, n, code_bare, keys = _board()
    likeness = np.full(n, 0.9)
    likeness[2 * p.holes : 3 * p.holes] = RECESS_DOUBT - 0.1
    got = bare_rows(p, code_bare, keys, key_unmarked=keys, shapes=_Shapes(likeness), frame=np.zeros((4, 4, 3), np.uint8), loc=object(), centres_mm=np.zeros((n, 2)), doubt=False)
    assert not got.unlike.any() and got.likeness is not None
    assert (~got.not_in_play[:n].reshape(p.rows, p.holes).all(axis=1)).tolist() == [True] * 2 + [False] * 10


def test_a_grey_sleeve_over_rows_of_pegs_does_not_start_the_rows_no_game_has_reached(pbr_case, no_hole_misread):
    """Issue 14's seed 8, table 500, case 150: a grey sleeve held over rows 1-8, its fabric over
    rows 3 and 5-7 read as sixteen surely bare holes, and from row 3 on every row was taken as
    not in play (sixteen holes and three key counts read wrong). The fabric looks like no hole."""
    truth, reading = pbr_case(8, 500, "case-150")
    assert reading.trust == "full"
    no_hole_misread(truth, reading)
    for t, r in zip(truth.rows, reading.rows, strict=True):
        if r.keys.status in (ROW_OK, ROW_EMPTY):
            assert (r.keys.black, r.keys.white) == (t.keys.black, t.keys.white), f"row {t.row}: {r.keys}"
    assert not any(h.colour == EMPTY for k in (3, 5, 6, 7) for h in reading.row(k).holes)


def test_a_hole_read_surely_bare_in_a_row_in_play_is_asked_for_a_hole_s_shape(invicta_table, invicta_cal):
    """Row 3 being placed: three pegs and a bare hole, read surely bare. Unlike the frame's bare
    holes (fabric over a peg would be), it reads unknown with nothing ruled out; alike, bare."""
    from dataclasses import replace

    from pegwatch.simulation.render import Conditions, random_contents, render
    from pegwatch.vision.reader import BoardReader
    from pegwatch.vision.reading import UNKNOWN

    p = invicta_table.profile
    contents = random_contents(p, np.random.default_rng(8), rows_played=3, shield_open=True, last_row_marked=True)
    placing = (*contents.guesses[2][:3], EMPTY)
    contents = replace(contents, guesses=(*contents.guesses[:2], placing, *contents.guesses[3:]), keys=(*contents.keys[:2], None, *contents.keys[3:]))
    image = render(p, contents, Conditions.easy().with_(peg_set=invicta_table.peg_set), seed=8).image
    hole = 2 * p.holes + 3

    def read(alike: bool):
        reader = BoardReader(p, invicta_cal)
        measured = reader._shapes.against

        def likeness(*args, **kwargs):
            out = measured(*args, **kwargs)
            if out is not None and not alike:
                out[hole] = RECESS_DOUBT - 0.1
            return out

        reader._shapes.against = likeness
        return reader.read(image, at_ns=1).row(3).holes[3]

    assert read(alike=True).colour == EMPTY and read(alike=True).is_certain
    doubted = read(alike=False)
    assert doubted.colour == UNKNOWN and doubted.possible is None


def _tail(p, first_bare_row, **broken):
    """Per guess hole nearest bare from ``first_bare_row`` on, all showing as holes, every key hole
    nearest bare; ``broken``: ``key_row``/``shallow_row`` (1-based) with one key hole nearest a peg,
    or one code hole showing no hole's step."""
    n = p.rows * p.holes
    nearest = np.arange(n) >= (first_bare_row - 1) * p.holes
    recess = np.ones(n, dtype=bool)
    keys = np.ones(p.rows * p.key_holes, dtype=bool)
    if "key_row" in broken:
        keys[(broken["key_row"] - 1) * p.key_holes] = False
    if "shallow_row" in broken:
        recess[(broken["shallow_row"] - 1) * p.holes + 1] = False
    return nearest, keys, recess


def _rows(p, mask):
    return [r + 1 for r in range(p.rows) if mask[r * p.holes : (r + 1) * p.holes].all()]


def test_the_board_s_last_rows_nearest_bare_hold_no_peg_after_the_first_of_them():
    p = load_profile("invicta-12x4")
    nearest, keys, recess = _tail(p, 6)
    after, lead = bare_tail(p, nearest, keys, recess)
    assert _rows(p, after) == list(range(7, 13)) and _rows(p, lead) == [6]  # row 6 may be four black pegs
    nearest, keys, recess = _tail(p, 6, key_row=9)
    assert _rows(p, bare_tail(p, nearest, keys, recess)[0]) == [11, 12]  # a key peg in row 9 ends the run at row 10
    nearest, keys, recess = _tail(p, 6, shallow_row=11)
    assert [_rows(p, m) for m in bare_tail(p, nearest, keys, recess)] == [[], []]  # row 12 alone says nothing
    nearest, keys, recess = _tail(p, 13)
    assert not any(m.any() for m in bare_tail(p, nearest, keys, recess))


def test_holes_nearest_bare_on_the_board_s_last_rows_read_bare_unless_they_look_like_no_hole():
    p, n, _, keys = _board()
    nearest, _, recess = _tail(p, 6)
    none_sure = np.zeros(n, dtype=bool)
    frame, where = np.zeros((4, 4, 3), np.uint8), np.zeros((n, 2))

    def rows_read_bare(likeness, *, doubt=True):
        got = bare_rows(p, none_sure, keys, key_unmarked=keys, shapes=_Shapes(likeness), frame=frame, loc=object(), centres_mm=where,
                        nearest_bare=nearest, recess=recess, doubt=doubt)
        return got, _rows(p, got.tail)

    like_holes = np.full(n, RECESS_LIKENESS + 0.1)
    got, rows = rows_read_bare(like_holes)
    assert rows == list(range(6, 13))  # row 6's holes look like the frame's bare holes: it is bare too
    assert (~got.not_in_play[:n].reshape(p.rows, p.holes).all(axis=1)).tolist() == [True] * 5 + [False] * 7
    black_pegs = like_holes.copy()
    black_pegs[5 * p.holes + 2] = RECESS_LIKENESS - 0.1  # one of row 6's holes looks like a black peg
    got, rows = rows_read_bare(black_pegs)
    assert rows == list(range(7, 13)) and not got.unlike.any()
    assert (~got.not_in_play[:n].reshape(p.rows, p.holes).all(axis=1)).tolist() == [True] * 6 + [False] * 6
    assert rows_read_bare(like_holes, doubt=False)[1] == list(range(7, 13))  # a fit in doubt asks no shape
    fabric = like_holes.copy()
    fabric[7 * p.holes] = RECESS_DOUBT - 0.1  # row 8: fabric, not a hole
    got, rows = rows_read_bare(fabric)
    assert rows == [6, 7, 9, 10, 11, 12] and got.unlike[7 * p.holes]  # row 8 is in play again
    without = bare_rows(p, none_sure, keys, key_unmarked=keys, shapes=_Shapes(None), frame=None, loc=None, centres_mm=where)
    assert not without.tail.any() and not without.not_in_play.any()


def test_a_blurred_small_board_s_bare_rows_are_read_bare(pbr_case, no_hole_misread):
    """Issue 14's seed 8, table 501, case 49: blurred, 2.2 px/mm, a game of five rows. Rows 6-12's
    bare holes lay nearest bare at a posterior of 0.88-0.99 and all 28 read unknown; with no bare
    hole to judge the frame's dark pegs by, row 5's black peg read unknown too."""
    truth, reading = pbr_case(8, 501, "case-49")
    assert reading.trust == "full"
    no_hole_misread(truth, reading)
    assert all(h.colour == EMPTY for k in range(6, 13) for h in reading.row(k).holes)
    assert reading.row(5).status == ROW_OK and reading.row(5).holes[3].colour == "black"
    for k in range(6, 13):
        keys = reading.row(k).keys
        assert keys.status == ROW_EMPTY and (keys.black, keys.white) == (0, 0), f"row {k}: {keys}"


def test_a_row_after_the_first_bare_one_holds_no_marks_where_its_key_holes_lie_nearest_bare(invicta_table, invicta_cal):
    p, model = invicta_table.profile, invicta_cal.key_model
    best = np.array([model.names.index(EMPTY)] * 4)
    d2 = model.distances2(model.means[best]) + 30.0  # a warm lamp: nearest bare, short of a sure reading
    unsure, conf, clear = np.zeros(4, dtype=bool), np.full(4, 0.9), np.zeros(4, dtype=bool)
    assert not count_keys(p, model, best, unsure, conf, clear, d2, in_play=False).is_certain
    keys = count_keys(p, model, best, unsure, conf, clear, d2, in_play=False, unplayed=True)
    assert keys.status == ROW_EMPTY and (keys.black, keys.white, keys.empty) == (0, 0, 4)
    # A key peg read there, or a cover over a hole, leaves the row as read.
    peg = best.copy()
    peg[2] = model.names.index(p.right_colour_key)
    assert not count_keys(p, model, peg, unsure, conf, clear, d2, in_play=False, unplayed=True).is_certain
    covered = clear.copy()
    covered[0] = True
    assert count_keys(p, model, best, unsure, conf, covered, d2, in_play=False, unplayed=True).status == ROW_OCCLUDED
