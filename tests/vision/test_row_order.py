"""Rows are played in order: bare rows before a played one are under a cover, not empty."""

from __future__ import annotations

import numpy as np
import pytest

from pegwatch.vision.reading import (
    EMPTY,
    OCCLUDED,
    ROW_EMPTY,
    ROW_OCCLUDED,
    ROW_UNKNOWN,
    UNKNOWN,
    HoleReading,
    KeyReading,
    RowReading,
    empty_row,
    unreadable_row,
)
from pegwatch.vision.row_order import (
    MIN_HOLE_STEP,
    bare_beside_cover,
    bare_between_covers,
    covered_before_played,
    covered_flat,
    least_hole_step,
    unplayed_bare,
    unplayed_read_bare,
)

DARK = {"black", EMPTY}


def _row(n: int, colours: tuple[str, ...], black: int = 0, white: int = 1) -> RowReading:
    holes = tuple(HoleReading(c, 0.99) for c in colours)
    keys = KeyReading(black, white, 4 - black - white, 0.99, "ok")
    return RowReading(n, holes, keys, "ok")


def test_bare_rows_before_a_played_row_are_covered_and_the_cover_s_edge_is_doubted():
    rows = [
        empty_row(1, 4, 4),
        empty_row(2, 4, 4),
        _row(3, ("red", "blue", "green", "yellow")),
        _row(4, ("black", "blue", "white", "red")),
        _row(5, ("orange", "orange", "white", "red")),
        empty_row(6, 4, 4),
    ]
    out = covered_before_played(rows, key_holes=4, dark=DARK)
    # The sleeve over rows 1-2 may reach row 3: all three occluded.
    assert [r.status for r in out[:3]] == [ROW_OCCLUDED] * 3
    assert all(h.colour == OCCLUDED for r in out[:3] for h in r.holes)
    # Row 4 lies beside it: its black peg is what a dark sleeve looks like.
    assert out[3].status == ROW_UNKNOWN
    assert [h.colour for h in out[3].holes] == [UNKNOWN, "blue", "white", "red"]
    assert out[3].keys.black_bounds is not None  # its bare key holes are no evidence either
    # Further rows, and the unplayed row after the game, are as read.
    assert out[4] == rows[4] and out[5] == rows[5]


def test_an_incomplete_row_is_left_for_the_table_to_call_illegal():
    rows = [_row(1, ("red", EMPTY, "green", "yellow")), _row(2, ("blue", "blue", "white", "red")), empty_row(3, 4, 4)]
    assert covered_before_played(rows, key_holes=4, dark=DARK) == rows


def test_an_empty_board_and_a_game_in_order_are_left_alone():
    empty = [empty_row(i, 4, 4) for i in range(1, 5)]
    assert covered_before_played(empty, key_holes=4, dark=DARK) == empty
    game = [_row(1, ("red", "blue", "green", "yellow")), _row(2, ("black", "black", "white", "red")), *empty[2:]]
    assert covered_before_played(game, key_holes=4, dark=DARK) == game


def test_bare_rows_whose_holes_show_no_recess_are_under_something_flat():
    rows = [_row(1, ("red", "blue", "red", "green")), empty_row(2, 4, 4), empty_row(3, 4, 4), empty_row(4, 4, 4)]
    steps = np.array([0.5] * 4 + [0.8, 1.1, 0.3, 0.9] + [5.0, 6.5, 4.2, 7.0] + [1.0, 9.0, 8.0, 1.5])
    out = covered_flat(rows, steps, key_holes=4)
    assert out[0] == rows[0]  # a row of pegs has no recess to show
    assert out[1].status == ROW_OCCLUDED and all(h.colour == OCCLUDED for h in out[1].holes)
    assert out[2] == rows[2]  # holes darker than their rings: seen bare
    assert out[3] == rows[3]  # the median decides: two holes in view are enough
    assert float(np.median(steps[4:8])) < MIN_HOLE_STEP <= float(np.median(steps[12:16]))


def test_beside_a_cover_a_bare_row_must_step_down_as_the_frame_s_bare_rows_do():
    # A light grey sleeve over rows 2-4: rows 3-4 are flat, row 2 (its edge)
    # shows the fabric's faint step, over the board's least; rows 5-8 are
    # bare plastic (seed 2, table 502, case 126's steps).
    rows = [_row(1, ("red", "blue", "red", "green"))] + [empty_row(i, 4, 4) for i in range(2, 9)]
    faint = [1.2, 3.6, 1.9, 2.4]
    bare = [5.8, 3.1, 6.7, 8.1, 5.6, 3.1, 3.7, 5.6, 7.2, 6.9, 6.6, 5.9, 5.6, 3.1, 3.7, 5.6]
    steps = np.array([0.5] * 4 + faint + [1.8, -0.7, 1.7, 1.1] + [0.4, 0.9, 0.2, 1.0] + bare)
    out = covered_flat(rows, steps, key_holes=4)
    assert [r.status for r in out] == [rows[0].status] + [ROW_OCCLUDED] * 3 + [ROW_EMPTY] * 4
    assert float(np.median(faint)) >= MIN_HOLE_STEP  # the board's least alone left row 2 bare
    # A bare row beside the cover that steps down as the others do is seen bare.
    deep = np.concatenate([steps[:4], [5.0, 4.0, 6.0, 5.5], steps[8:]])
    assert [r.status for r in covered_flat(rows, deep, key_holes=4)][1:5] == [ROW_EMPTY] + [ROW_OCCLUDED] * 2 + [ROW_EMPTY]
    # With no bare row away from a cover to say how deep a hole looks, only the least stands.
    assert [r.status for r in covered_flat(rows[:5], steps[:20], key_holes=4)][1:] == [ROW_EMPTY] + [ROW_OCCLUDED] * 2 + [ROW_EMPTY]


def test_a_board_whose_bare_holes_look_shallow_asks_less_of_them():
    assert least_hole_step(None) == MIN_HOLE_STEP
    assert least_hole_step([40.0, 0.0, 0.0, 61.0, 0.0, 0.0]) == MIN_HOLE_STEP  # a deep hole: 21 L*
    assert least_hole_step([50.0, 0.0, 0.0, 52.4, 0.0, 0.0]) == pytest.approx(1.2)
    rows = [empty_row(1, 4, 4)]
    steps = np.array([1.5, 1.6, 1.4, 1.5])
    assert covered_flat(rows, steps, key_holes=4)[0].status == ROW_OCCLUDED
    assert covered_flat(rows, steps, key_holes=4, least=1.2)[0] == rows[0]


def test_a_hole_read_bare_beside_a_cover_in_a_row_in_play_is_unknown():
    """A cover over part of a row (here a hole) may lie over a peg whose hole looks bare next to it."""
    part = RowReading(
        3, (HoleReading("red", 0.99), HoleReading(OCCLUDED, 0.0), HoleReading(EMPTY, 0.99), HoleReading("blue", 0.99)),
        KeyReading(1, 0, 3, 0.99, "ok"), ROW_OCCLUDED,
    )
    later = RowReading(9, tuple(HoleReading(c, 0.99) for c in (EMPTY, OCCLUDED, EMPTY, EMPTY)), empty_row(9, 4, 4).keys, ROW_OCCLUDED)
    clear = _row(2, (EMPTY, "red", "red", "red"))
    unplayed = empty_row(4, 4, 4)
    out = bare_beside_cover([clear, part, unplayed, later], np.array([True, True, False, False]))
    assert [h.colour for h in out[1].holes] == ["red", OCCLUDED, UNKNOWN, "blue"]
    assert out[1].holes[2].possible is None or out[1].holes[2].possible == ()  # anything may be under there
    assert out[1].keys == part.keys and out[1].status == ROW_OCCLUDED
    assert out[0] == clear  # not covered: an incomplete row is the table's to call
    assert out[2] == unplayed
    assert out[3] == later  # after a row seen bare: not in play yet, it holds no peg


def test_a_covered_row_read_bare_right_after_play_is_unknown():
    """A grey sleeve over the last rows played reads as bare plastic, its rows as unplayed; only a row
    seen bare before them (the game fills rows in order) says they are."""
    played = _row(3, ("red", "red", "blue", "blue"))
    under = RowReading(4, tuple(HoleReading(EMPTY, 0.99) for _ in range(4)), KeyReading(0, 0, 0, 0.0, ROW_OCCLUDED), ROW_OCCLUDED)
    out = bare_beside_cover([played, under], np.array([True, False]))
    assert [h.colour for h in out[1].holes] == [UNKNOWN] * 4
    assert out[1].status == ROW_OCCLUDED and out[0] == played


def _covered(n: int) -> RowReading:
    return RowReading(n, tuple(HoleReading(OCCLUDED, 0.0) for _ in range(4)), KeyReading(0, 0, 0, 0.0, ROW_OCCLUDED), ROW_OCCLUDED)


def test_a_short_run_of_bare_rows_between_covered_ones_is_under_the_same_sleeve():
    """A grey sleeve over pegs reads as bare plastic in its middle; the rows found covered on both sides give it away."""
    rows = [_row(1, ("red", "red", "blue", "blue")), _covered(2), empty_row(3, 4, 4), empty_row(4, 4, 4), _covered(5), empty_row(6, 4, 4)]
    out = bare_between_covers(rows, key_holes=4, max_run=2)
    assert [r.status for r in out] == [rows[0].status, ROW_OCCLUDED, ROW_OCCLUDED, ROW_OCCLUDED, ROW_OCCLUDED, ROW_EMPTY]
    assert all(h.colour == OCCLUDED for r in out[2:4] for h in r.holes)
    assert out[5] == rows[5]  # bare after the cover, with nothing beyond: left as read
    # A wider gap is more likely two things: left as read.
    assert bare_between_covers(rows, key_holes=4, max_run=1) == rows
    # A row that shows a peg breaks the run.
    mixed = [_covered(1), empty_row(2, 4, 4), _row(3, ("red", "red", "blue", "blue")), _covered(4)]
    assert bare_between_covers(mixed, key_holes=4, max_run=2) == mixed


def _doubtful(n: int, holes: tuple[HoleReading, ...], keys: KeyReading | None = None) -> RowReading:
    keys = keys or KeyReading(0, 0, 4, 0.5, ROW_UNKNOWN, black_bounds=(0, 1), white_bounds=(0, 1))
    return RowReading(n, holes, keys, ROW_UNKNOWN)


def test_a_row_read_bare_with_its_keys_in_doubt_between_covers_is_covered_too():
    # A light grey sleeve over played rows reads as bare holes; its key holes may read doubtful
    # rather than bare (seed 4, table 500, case 15: four pegs read bare between two covered rows).
    bare_holes = tuple(HoleReading(EMPTY, 0.99) for _ in range(4))
    rows = [_covered(1), _doubtful(2, bare_holes), _covered(3)]
    out = bare_between_covers(rows, key_holes=4, max_run=2)
    assert out[1].status == ROW_OCCLUDED and all(h.colour == OCCLUDED for h in out[1].holes)
    # A key peg seen surely is a peg shown: the row is played and breaks the run.
    marked = KeyReading(0, 1, 3, 0.5, ROW_UNKNOWN, black_bounds=(0, 1), white_bounds=(1, 2))
    shown = [_covered(1), _doubtful(2, bare_holes, marked), _covered(3)]
    assert bare_between_covers(shown, key_holes=4, max_run=2) == shown


BARE_OR_BLACK = HoleReading(UNKNOWN, 0.9, ((EMPTY, 0.9), ("black", 0.1)))
ANYTHING = HoleReading(UNKNOWN, 0.5)
DEEP = np.full(5 * 4, 8.0)  # every hole's disc 8 L* below its ring


def test_past_the_game_a_hole_that_may_be_bare_is_bare():
    rows = [
        _row(1, ("red", "blue", "green", "yellow")),
        empty_row(2, 4, 4),
        _doubtful(3, (BARE_OR_BLACK, HoleReading(EMPTY, 0.99), HoleReading(EMPTY, 0.99), BARE_OR_BLACK)),
        _doubtful(4, (BARE_OR_BLACK, ANYTHING, HoleReading(EMPTY, 0.99), HoleReading(EMPTY, 0.99))),
        RowReading(5, (BARE_OR_BLACK,) * 4, KeyReading(0, 0, 0, 0.0, ROW_OCCLUDED), ROW_OCCLUDED),
    ]
    out = unplayed_read_bare(rows, DEEP, key_holes=4)
    assert out[:2] == rows[:2]
    # Row 3: bare throughout, so no key peg either: an empty row, never judged.
    assert out[2].status == ROW_EMPTY and out[2].keys.status == ROW_EMPTY
    assert [h.colour for h in out[2].holes] == [EMPTY] * 4 and out[2].holes[0].confidence == 0.9
    # Row 4: a hole that may hold anything stays unknown, and so does the row.
    assert [h.colour for h in out[3].holes] == [EMPTY, UNKNOWN, EMPTY, EMPTY] and out[3].status == ROW_UNKNOWN
    assert out[3].keys == rows[3].keys
    # Something lies over row 5: past the game, it hides no peg there.
    assert out[4] == empty_row(5, 4, 4)  # as sure as row 2, seen bare


def test_a_covered_row_past_the_game_reads_empty_one_before_the_last_peg_does_not():
    """A hand reaching over rows the game has not reached hides no peg. A cover before a row of pegs
    seen after a bare one may (the bare row may be a sleeve's), and a bare row beside a cover may be
    the cover's own edge: the game is known to stop only at a bare row with no cover beside it."""
    covered = [unreadable_row(n, 4, 4, ROW_OCCLUDED) for n in range(1, 9)]
    rows = [
        _row(1, ("red", "blue", "green", "yellow")),
        empty_row(2, 4, 4),
        covered[2],
        _row(4, ("black", "blue", "white", "red")),
        empty_row(5, 4, 4, 0.95),
        empty_row(6, 4, 4),
        covered[6],
        covered[7],
    ]
    out = unplayed_read_bare(rows, np.full(8 * 4, 8.0), key_holes=4)
    assert out[:6] == rows[:6]
    assert out[6:] == [empty_row(7, 4, 4, 0.95), empty_row(8, 4, 4, 0.95)]
    # The only bare row lies beside the cover: nothing past it is inferred.
    beside = [rows[0], empty_row(2, 4, 4), covered[2], covered[3]]
    assert unplayed_read_bare(beside, np.full(4 * 4, 8.0), key_holes=4) == beside
    # With no row seen bare, nothing past the pegs is inferred.
    no_bare = [rows[0], covered[1], covered[2]]
    assert unplayed_read_bare(no_bare, np.full(3 * 4, 8.0), key_holes=4) == no_bare


def test_rows_before_the_last_peg_seen_are_left_as_read():
    """A sleeve over played rows can make them read bare: a peg seen after them says the game went on."""
    rows = [
        _row(1, ("red", "blue", "green", "yellow")),
        empty_row(2, 4, 4),
        _doubtful(3, (BARE_OR_BLACK,) * 4),
        _row(4, ("black", "blue", "white", "red")),
        _doubtful(5, (BARE_OR_BLACK,) * 4),
    ]
    out = unplayed_read_bare(rows, DEEP, key_holes=4)
    assert out[:4] == rows[:4]
    assert out[4].status == ROW_EMPTY
    # A key count that must hold a peg marks the row as played, too.
    marked = _doubtful(4, (BARE_OR_BLACK,) * 4, KeyReading(0, 0, 4, 0.5, ROW_UNKNOWN, black_bounds=(1, 2), white_bounds=(0, 1)))
    assert unplayed_read_bare([*rows[:3], marked], DEEP, key_holes=4)[3] == marked


def test_without_a_row_seen_bare_nothing_is_inferred():
    rows = [_row(1, ("red", "blue", "green", "yellow")), _doubtful(2, (BARE_OR_BLACK,) * 4), _doubtful(3, (BARE_OR_BLACK,) * 4)]
    assert unplayed_read_bare(rows, DEEP, key_holes=4) == rows


def test_a_hole_that_shows_no_recess_is_not_read_bare_past_the_game():
    """Something flat lies over it (a sleeve past the game): the order of play says no peg, not that it is seen."""
    rows = [_row(1, ("red", "blue", "green", "yellow")), empty_row(2, 4, 4), _doubtful(3, (BARE_OR_BLACK,) * 4)]
    steps = np.full(3 * 4, 8.0)
    steps[8:10] = 0.5
    out = unplayed_read_bare(rows, steps, key_holes=4)
    assert [h.colour for h in out[2].holes] == [UNKNOWN, UNKNOWN, EMPTY, EMPTY] and out[2].status == ROW_UNKNOWN


def test_the_first_unplayed_row_is_found_by_key_holes_nearest_bare_though_not_surely():
    from pegwatch.vision.profile import load_profile

    p = load_profile("invicta-12x4")
    played = 5
    code_empty = np.zeros(p.rows * p.holes, dtype=bool)
    code_empty[played * p.holes :] = True  # rows 6-12 read surely bare
    key_best_bare = np.zeros(p.rows * p.key_holes, dtype=bool)
    key_best_bare[played * p.key_holes :] = True
    key_sure = key_best_bare.copy()
    key_sure[played * p.key_holes :: 3] = False  # under a warm lamp some bare key holes are near white, not surely bare
    secret = p.rows * p.holes + p.holes
    _, strict = unplayed_bare(p, code_empty, key_sure)
    assert not strict.any()  # with every row holding an unsure key hole, no row is bare
    after, from_first = unplayed_bare(p, code_empty, key_sure, key_unmarked=key_best_bare)
    assert from_first[played * p.holes : p.rows * p.holes].all() and not from_first[: played * p.holes].any()
    assert after[(played + 1) * p.holes : p.rows * p.holes].all() and not after[: (played + 1) * p.holes].any()
    # The masks still hold only the key holes read surely bare.
    assert np.array_equal(from_first[secret:], key_sure)
    # A key peg nearest in a row whose code holes read bare shows the row is played (its pegs misread).
    marked = key_best_bare.copy()
    marked[played * p.key_holes] = False
    _, first = unplayed_bare(p, code_empty, key_sure & marked, key_unmarked=marked)
    assert not first[: (played + 1) * p.holes].any() and first[(played + 1) * p.holes : p.rows * p.holes].all()


def test_no_row_read_empty_on_the_physically_based_boards_holds_a_peg_not_even_under_a_hand(pbr_reads):
    """The order of play reads the rows a hand reaches over past the game as empty: every row read
    empty on the cached boards truly is, and some of them lie under a hand."""
    under_hand = 0
    for board, reading, truth in pbr_reads():
        for got, t in zip(reading.rows, truth.rows, strict=True):
            if got.status != ROW_EMPTY:
                continue
            assert all(h.colour == EMPTY for h in t.holes), f"case {board.meta['index']} row {t.row}"
            under_hand += t.row in board.meta["covered_rows"]
    assert under_hand >= 2
