"""A key hole read bare is bare when its block shows no key peg, by the frame's own bare key holes.

On the physically based set, rows truly left unmarked stayed uncertain
(their holes lie inside some key peg's class under another light), and a
row in doubt for a code hole took its bare key holes for room for pegs,
while the key pegs that were missed (heads standing off their holes, a fit
a few millimetres off) read just as bare. The block around each key hole
tells them apart: a key peg lights part of it wherever it stands.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
from vision_kit import mask

import pegwatch.vision.reader as reader_module
from pegwatch.vision.calibrate import truth_from_record
from pegwatch.vision.key_blocks import (
    BARE_MARGIN,
    BLOCK_MARGIN_MM,
    MIN_PLASTIC_BLOCKS,
    WITNESS_MARGIN,
    block_scores,
    judge_blocks,
    key_contrast,
    key_holes_seen,
    plastic_blocks_mm,
)
from pegwatch.vision.profile import load_profile, profile_names
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import ROW_UNKNOWN, TRUST_FULL


def bare_blocks(scores, references, witnesses, contrast=None):
    """Which blocks are bare (the first of :func:`judge_blocks`'s answers)."""
    return judge_blocks(scores, references, witnesses, contrast)[0]


def test_a_block_is_bare_when_it_scores_as_the_frames_bare_ones_and_the_frame_shows_its_pegs():
    n = 10
    scores = np.zeros(n)
    scores[[6, 7, 8, 9]] = [0.2, 0.3, 0.25, 0.9]  # hole 9: something over it the cover test missed
    bound = 0.3 + BARE_MARGIN  # the second highest reference's, not the outlier's
    scores[[0, 1, 2]] = [bound - 0.01, bound + 0.01, 0.85]
    scores[[4, 5]] = [bound + WITNESS_MARGIN + 0.5, bound + WITNESS_MARGIN + 0.1]
    refs = mask(n, 6, 7, 8, 9)
    witnesses = [mask(n, 4), mask(n, 5)]
    assert np.flatnonzero(bare_blocks(scores, refs, witnesses)).tolist() == [0, 3]
    # One reference says nothing of the frame's bare look.
    assert not bare_blocks(scores, mask(n, 6), witnesses).any()
    # No hole shows a white key peg yet: a white one might not stand out here.
    assert not bare_blocks(scores, refs, [mask(n, 4), mask(n)]).any()
    # A key peg read surely that scores like a bare hole: pegs do not stand out here.
    low = scores.copy()
    low[5] = bound + WITNESS_MARGIN - 0.05
    assert not bare_blocks(low, refs, witnesses).any()


def test_a_block_stands_when_it_scores_as_high_above_the_bare_ones_as_every_key_peg_read_surely():
    n = 10
    scores = np.zeros(n)
    scores[[6, 7, 8, 9]] = [0.2, 0.3, 0.25, 0.9]
    bound = 0.3 + BARE_MARGIN
    tall = bound + WITNESS_MARGIN
    scores[[0, 1, 2, 3]] = [tall + 0.01, tall - 0.01, bound, 2.5]
    scores[[4, 5]] = [tall + 0.5, tall + 0.1]
    refs = mask(n, 6, 7, 8, 9)
    _bare, standing = judge_blocks(scores, refs, [mask(n, 4), mask(n, 5)])
    assert np.flatnonzero(standing).tolist() == [0, 3, 4, 5]  # never a reference, even the outlier
    # A colour the frame lacks stops nothing from standing: a block's score is not its colour.
    bare, standing = judge_blocks(scores, refs, [mask(n, 4), mask(n)])
    assert not bare.any() and np.flatnonzero(standing).tolist() == [0, 3, 4, 5]
    # With no key peg read surely at all, or one that scores like a bare hole, blocks still stand by the bare ones.
    assert np.flatnonzero(judge_blocks(scores, refs, [mask(n), mask(n)])[1]).tolist() == [0, 3, 4, 5]
    low = scores.copy()
    low[5] = tall - 0.05
    bare, standing = judge_blocks(low, refs, [mask(n, 4), mask(n, 5)])
    assert not bare.any() and np.flatnonzero(standing).tolist() == [0, 3, 4]
    # Without the frame's bare look, nothing stands.
    assert not judge_blocks(scores, mask(n, 6), [mask(n, 4), mask(n, 5)])[1].any()


def test_a_key_colour_the_frame_lacks_is_vouched_for_by_its_calibrated_contrast():
    """Scores are log ratios to the plastic: a colour the calibration found 0.5 less
    contrasty than a witnessed one stands about 0.5 lower, whatever the light."""
    n = 10
    scores = np.full(n, 2.0)  # holes 1-3, 5: key pegs the colour model did not read surely
    scores[[6, 7, 8, 9]] = [0.2, 0.3, 0.3, 0.1]
    bound = 0.3 + BARE_MARGIN
    scores[[0, 4]] = [bound - 0.01, bound + WITNESS_MARGIN + 0.6]  # 4: the frame's one white key peg
    refs = mask(n, 6, 7, 8, 9)
    only_white = [mask(n), mask(n, 4)]  # (red, white): no red key peg in the frame
    assert not bare_blocks(scores, refs, only_white).any()  # nothing vouches without the calibration
    assert np.flatnonzero(bare_blocks(scores, refs, only_white, (0.5, 1.0))).tolist() == [0]  # red: 0.5 less
    assert not bare_blocks(scores, refs, only_white, (0.3, 1.0)).any()  # red 0.7 less: might not stand out
    assert np.flatnonzero(bare_blocks(scores, refs, only_white, (1.4, 1.0))).tolist() == [0]  # red the stronger


def test_the_calibrated_key_contrast_puts_white_above_red_above_the_plastic(pbr):
    _table, cal, _cases = pbr
    red, white = key_contrast(cal.key_model, cal.plastic_linear, ("red", "white"))
    assert 0.0 < red < white


def _spy(monkeypatch):
    called: list[np.ndarray] = []
    real = reader_module.key_holes_seen

    def spy(*a, **k):
        bare, standing = real(*a, **k)
        called.append(bare)
        return bare, standing

    monkeypatch.setattr(reader_module, "key_holes_seen", spy)
    return called


def test_no_key_peg_is_proved_away_on_the_physically_based_boards(pbr, monkeypatch):
    table, cal, cases = pbr
    p = table.profile
    called = _spy(monkeypatch)
    proved = in_doubt = 0
    for i, board in enumerate(cases):
        called.clear()
        reader = BoardReader(p, cal)
        reading = reader.read(board.image, at_ns=i)
        truth = truth_from_record(board.truth, p, where="truth")
        loose = reader.last_localisation is not None and reader.last_localisation.bend_from_edges
        if not called:
            assert reading.trust != TRUST_FULL  # nothing is proved on a fit not trusted to accuse from
            continue
        per_row = called[-1].reshape(p.rows, p.key_holes).sum(axis=1)
        for t, got, n in zip(truth.rows, reading.rows, per_row, strict=True):
            # Never more holes proved bare than the row truly leaves bare: the
            # key counts' bounds always hold the truth.
            assert n <= p.key_holes - t.keys.black - t.keys.white, f"case {board.meta['index']} row {t.row}"
            proved += int(n)
            k = got.keys
            if got.status == ROW_UNKNOWN and 0 < n == k.empty and k.black + k.white + k.empty == p.key_holes and not loose:
                # Every key hole read, every bare one proved: the counts stay
                # certain in a row in doubt for a code hole (not on a fit
                # bent from the board's edges: see tests/vision/test_warp.py).
                assert k.is_certain
                in_doubt += 1
    assert proved >= 20 and in_doubt >= 1


def _board_nine(pbr, monkeypatch):
    table, cal, cases = pbr
    p = table.profile
    called = _spy(monkeypatch)
    board = next(b for b in cases if b.meta["index"] == 9)
    reader = BoardReader(p, cal)
    reader.read(board.image, at_ns=1)
    loc = reader.last_localisation
    assert loc is not None
    hole = int(np.flatnonzero(called[-1])[0])
    return p, cal, board, loc, hole, called


def test_a_key_peg_off_its_hole_lights_its_block(pbr, monkeypatch):
    p, cal, board, loc, hole, called = _board_nine(pbr, monkeypatch)
    # A white key peg's head (3.6 mm) standing 3 mm off the hole.
    keys = np.concatenate([p.key_centres_mm(r) for r in range(1, p.rows + 1)])
    x, y = keys[hole]
    (cx, cy), (ex, _ey) = loc.to_image(np.array([[x + 3.0, y], [x + 4.8, y]]))
    frame = board.image.copy()
    cv2.circle(frame, (round(cx), round(cy)), max(2, round(ex - cx)), (235, 235, 235), -1)
    before, after = block_scores(board.image, loc, keys)[hole], block_scores(frame, loc, keys)[hole]
    assert after > before + 0.5
    called.clear()
    BoardReader(p, cal).read(frame, at_ns=2)
    assert not called[-1][hole]


def test_a_hole_that_does_not_show_proves_nothing(pbr, monkeypatch):
    p, cal, board, loc, hole, called = _board_nine(pbr, monkeypatch)
    # Something flat and dark, the plastic's colour, over the hole: it does not show.
    x, y = np.concatenate([p.key_centres_mm(r) for r in range(1, p.rows + 1)])[hole]
    corners = loc.to_image(np.array([[x - 3, y - 3], [x + 3, y - 3], [x + 3, y + 3], [x - 3, y + 3]]))
    frame = board.image.copy()
    (ax, ay), (bx, by) = corners.min(axis=0).astype(int), corners.max(axis=0).astype(int)
    plastic = np.median(frame[ay - 6 : by + 6, ax - 6 : bx + 6].reshape(-1, 3), axis=0)
    cv2.fillConvexPoly(frame, np.round(corners).astype(np.int32), [int(v) for v in plastic])
    called.clear()
    BoardReader(p, cal).read(frame, at_ns=2)
    assert not called[-1][hole]


def test_a_bare_hole_that_does_not_show_leaves_its_row_s_block_unproved(pbr, monkeypatch):
    """Seed 8, table 501, case 51: a sleeve's edge over half a row's key
    block; the hole under it read bare and flat, its neighbour under the
    fabric too, but stepping as deep as a hole in the fabric's grain, and
    proved bare: a correct row accused of one white peg too few."""
    p, cal, board, loc, hole, called = _board_nine(pbr, monkeypatch)
    keys = np.concatenate([p.key_centres_mm(r) for r in range(1, p.rows + 1)])
    row = hole // p.key_holes
    frame = board.image.copy()
    for other in range(row * p.key_holes, (row + 1) * p.key_holes):
        if other == hole:
            continue
        x, y = keys[other]  # each other key hole of the row under a flat patch of the plastic's colour, 3 mm round
        corners = loc.to_image(np.array([[x - 1.5, y - 1.5], [x + 1.5, y - 1.5], [x + 1.5, y + 1.5], [x - 1.5, y + 1.5]]))
        (ax, ay), (bx, by) = corners.min(axis=0).astype(int), corners.max(axis=0).astype(int)
        plastic = np.median(board.image[ay - 6 : by + 6, ax - 6 : bx + 6].reshape(-1, 3), axis=0)
        cv2.fillConvexPoly(frame, np.round(corners).astype(np.int32), [int(v) for v in plastic])
    shows: list[np.ndarray] = []
    real = reader_module.key_holes_seen

    def spy(*a, **k):
        shows.append(np.asarray(k["shows"], dtype=bool))
        return real(*a, **k)

    monkeypatch.setattr(reader_module, "key_holes_seen", spy)
    called.clear()
    BoardReader(p, cal).read(frame, at_ns=2)
    assert shows[-1][hole]  # the hole itself still shows as one ...
    assert not shows[-1][row * p.key_holes : (row + 1) * p.key_holes].all()  # ... a neighbour does not
    assert not called[-1][hole]


def test_plastic_blocks_lie_wholly_on_the_profile_s_plastic():
    for name in profile_names():
        p = load_profile(name)
        blocks = plastic_blocks_mm(p)
        for cx, cy in blocks:
            assert any(
                x <= cx - BLOCK_MARGIN_MM and cx + BLOCK_MARGIN_MM <= x + w and y <= cy - BLOCK_MARGIN_MM and cy + BLOCK_MARGIN_MM <= y + h
                for x, y, w, h in p.plastic_regions_mm
            ), (name, cx, cy)
    assert len(plastic_blocks_mm(load_profile("invicta-12x4"))) >= MIN_PLASTIC_BLOCKS


def test_a_frame_with_every_row_in_play_judges_by_the_plastic_beside_the_key_holes(pbr, monkeypatch):
    """A game gone to its last rows leaves no bare key hole to judge by: blocks of the bare plastic
    stand in for them. Every case read again as if every row were in play: holes are proved bare,
    never more in a row than it truly leaves bare; without the plastic blocks, none is."""
    table, cal, cases = pbr
    p = table.profile
    asked: list[tuple] = []
    real = reader_module.key_holes_seen

    def spy(*a, **k):
        asked.append((a, k))
        return real(*a, **k)

    monkeypatch.setattr(reader_module, "key_holes_seen", spy)
    proved = 0
    for i, board in enumerate(cases):
        asked.clear()
        BoardReader(p, cal).read(board.image, at_ns=i)
        if not asked:
            continue
        (profile, frame, loc, centres, names, sure, _in_play), k = asked[-1]
        every = np.ones(p.rows, dtype=bool)
        bare, _standing = key_holes_seen(profile, frame, loc, centres, names, sure, every, **k)
        truth = truth_from_record(board.truth, p, where="truth")
        for t, n in zip(truth.rows, bare.reshape(p.rows, p.key_holes).sum(axis=1), strict=True):
            assert n <= p.key_holes - t.keys.black - t.keys.white, f"case {board.meta['index']} row {t.row}"
            proved += int(n)
        no_plastic = replace(profile, plastic_regions_mm=())
        assert not key_holes_seen(no_plastic, frame, loc, centres, names, sure, every, **k)[0].any()
    assert proved >= 20
