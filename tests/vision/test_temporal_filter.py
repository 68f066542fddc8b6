"""The temporal filter: acceptance after N stable frames, no flicker, occlusion, motion."""

from __future__ import annotations

import pytest

from pegwatch.vision.reading import (
    BoardReading,
    HoleReading,
    KeyReading,
    RowReading,
    empty_row,
)
from pegwatch.vision.temporal import StableBoard

ROWS = 3


def _row(n, colours, black=0, white=0, status="ok"):
    holes = tuple(HoleReading(c, 0.99) for c in colours)
    k = KeyReading(black, white, 4 - black - white, 0.99, "ok" if black + white else "empty")
    return RowReading(n, holes, k, status)


def _board(t, rows, sigs=None, problem=None):
    full = list(rows) + [empty_row(i, 4, 4) for i in range(len(rows) + 1, ROWS + 1)]
    return BoardReading("test", tuple(full), None, problem, t, row_signatures=sigs)


G1 = ("red", "green", "blue", "white")
G2 = ("red", "green", "blue", "black")


def test_accepts_after_three_identical_frames():
    sb = StableBoard()
    out = [sb.update(_board(i, [_row(1, G1, 1, 2)])) for i in range(3)]
    assert out[0].row(1).status == "unknown"
    assert out[1].row(1).status == "unknown"
    assert out[2].row(1).guess == G1
    assert out[2].row(1).keys.black == 1
    assert 1 in out[2].changed_rows
    assert 1 not in sb.update(_board(4, [_row(1, G1, 1, 2)])).changed_rows


def test_no_flicker_on_a_single_odd_frame():
    sb = StableBoard()
    for i in range(3):
        sb.update(_board(i, [_row(1, G1)]))
    seq = [G1, G2, G1, G2, G2, G1]
    for i, g in enumerate(seq, start=10):
        out = sb.update(_board(i, [_row(1, g)]))
        assert out.row(1).guess == G1
        assert not out.changed_rows


def test_new_value_replaces_after_it_is_stable():
    sb = StableBoard(frames_to_accept=2)
    for i in range(2):
        sb.update(_board(i, [_row(1, G1)]))
    out = sb.update(_board(5, [_row(1, G2)]))
    assert out.row(1).guess == G1
    out = sb.update(_board(6, [_row(1, G2)]))
    assert out.row(1).guess == G2
    assert out.changed_rows == frozenset({1})


def test_occluded_row_keeps_value_and_is_marked():
    sb = StableBoard()
    for i in range(3):
        sb.update(_board(i, [_row(1, G1)]))
    occ = RowReading(1, tuple(HoleReading("occluded", 0.0) for _ in range(4)), KeyReading(0, 0, 0, 0.0, "occluded"), "occluded")
    out = sb.update(_board(10, [occ]))
    assert out.row(1).status == "occluded"
    assert out.row(1).guess == G1
    assert sb.occluded_rows == frozenset({1})
    # once uncovered, the old value is shown again without a change
    out = sb.update(_board(11, [_row(1, G1)]))
    assert out.row(1).status == "ok" and not out.changed_rows


def test_occlusion_interrupts_the_count():
    sb = StableBoard()
    occ = RowReading(1, tuple(HoleReading("occluded", 0.0) for _ in range(4)), KeyReading(0, 0, 0, 0.0, "occluded"), "occluded")
    seq = [_row(1, G1), _row(1, G1), occ, _row(1, G1)]
    outs = [sb.update(_board(i, [r])) for i, r in enumerate(seq)]
    assert all(o.row(1).status != "ok" for o in outs)
    assert sb.update(_board(9, [_row(1, G1)])).row(1).status == "unknown"
    assert sb.update(_board(10, [_row(1, G1)])).row(1).status == "ok"


def test_motion_blocks_acceptance_and_marks_occluded():
    sb = StableBoard()
    still = ((10.0, 10.0),) * ROWS
    moved = ((10.0, 60.0),) + ((10.0, 10.0),) * (ROWS - 1)
    seq = [still, still, moved, still, still]
    outs = [sb.update(_board(i, [_row(1, G1)], sigs=s)) for i, s in enumerate(seq)]
    assert outs[2].row(1).status == "occluded"  # the frame where it moved
    assert outs[3].row(1).status == "occluded"  # moved back: still a change
    assert outs[4].row(1).status == "unknown"  # only one still frame so far
    assert sb.update(_board(6, [_row(1, G1)], sigs=still)).row(1).status == "unknown"
    assert sb.update(_board(7, [_row(1, G1)], sigs=still)).row(1).guess == G1


def test_problem_keeps_accepted_and_marks_unknown():
    sb = StableBoard(frames_to_accept=1)
    sb.update(_board(0, [_row(1, G1)]))
    out = sb.update(_board(1, [_row(1, G2)], problem="board moved, recalibrate"))
    assert out.problem == "board moved, recalibrate"
    assert out.row(1).guess == G1 and out.row(1).status == "unknown"


def test_stale_frame_is_ignored():
    sb = StableBoard(frames_to_accept=1)
    sb.update(_board(100, [_row(1, G1)]))
    out = sb.update(_board(50, [_row(1, G2)]))
    assert out.row(1).guess == G1


def test_bad_parameter():
    with pytest.raises(ValueError):
        StableBoard(frames_to_accept=0)


def test_real_frames_hand_comes_and_goes(invicta_table, invicta_cal):
    import numpy as np

    from pegwatch.simulation.render import random_conditions, random_contents, render
    from pegwatch.vision.reader import BoardReader

    p = invicta_table.profile
    reader = BoardReader(p, invicta_cal)
    contents = random_contents(p, np.random.default_rng(4), rows_played=8, last_row_marked=True)
    base = invicta_table.calibration[0].conditions
    hand = random_conditions(np.random.default_rng(12), difficulty="easy", profile=p, hand_probability=1.0).hand
    still = render(p, contents, base, seed=1).image
    covered_render = render(p, contents, base.with_(hand=hand), seed=2)
    sb = StableBoard()
    frames = [still, still, still, covered_render.image, still, still, still]
    outs = [sb.update(reader.read(f, at_ns=i)) for i, f in enumerate(frames)]
    assert outs[2].changed_rows  # accepted after three still frames
    accepted = [r.guess for r in outs[2].rows]
    under = covered_render.occluded_rows
    assert under
    for row in under:
        assert outs[3].row(row).status == "occluded"
        assert outs[3].row(row).guess == accepted[row - 1]  # keeps its value
    # The hand leaves: the change back is motion too, then the rows settle
    # on their old values without ever flickering.
    assert all(o.row(r).guess == accepted[r - 1] for o in outs[3:] for r in range(1, p.rows + 1))
    assert outs[-1].row(min(under)).status in ("ok", "empty")
    assert not outs[-1].changed_rows
