"""A row read wholly bare is bare when its whole key block shows no key peg, by the frame's own bare blocks.

On the physically based set, rows truly left unmarked stayed uncertain
(their holes lie inside some key peg's class under another light), while
the rows whose key pegs were missed (heads standing off their holes, a fit
a few millimetres off) read just as bare. The block around the key holes
tells them apart: a key peg lights part of it wherever it stands.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

import pegwatch.vision.reader as reader_module
from pegwatch.simulation.pbr.testbed import load_cached, make_table
from pegwatch.vision.calibrate import calibrate, truth_from_record
from pegwatch.vision.key_blocks import BARE_MARGIN, WITNESS_MARGIN, bare_blocks, block_scores
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import ROW_OK, ROW_UNKNOWN

DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "pbr"
TABLE = DATA / "invicta-12x4-s0-p500"


def test_a_block_is_bare_when_it_scores_as_the_frames_bare_ones_and_the_frame_shows_its_pegs():
    refs = {8: 0.2, 9: 0.3, 10: 0.25, 11: 0.9}  # row 11: something over it the cover test missed
    bound = 0.3 + BARE_MARGIN  # the second highest reference's, not the outlier's
    scores = {**refs, 2: bound - 0.01, 3: bound + 0.01, 5: bound + WITNESS_MARGIN + 0.5, 6: bound + WITNESS_MARGIN + 0.1}
    witnesses = {"red": [5], "white": [6]}
    assert bare_blocks(scores, list(refs), witnesses) == {2}
    # Too few bare references: the frame's bare look is not known.
    assert bare_blocks(scores, [8, 9], witnesses) == set()
    assert bare_blocks({**scores, 4: 0.85}, list(refs), witnesses) == {2}
    # No row shows a white key peg yet: a white one might not stand out here.
    assert bare_blocks(scores, list(refs), {"red": [5], "white": []}) == set()
    # A row with key pegs read surely that scores like a bare one: pegs do not stand out here.
    low = {**scores, 6: bound + WITNESS_MARGIN - 0.05}
    assert bare_blocks(low, list(refs), witnesses) == set()


@pytest.fixture(scope="module")
def table_and_cal():
    table = make_table("invicta-12x4", peg_set=500, seed=0, cache=DATA)
    p = table.profile
    truths = [truth_from_record(b.truth, p, where="calibration truth") for b in table.calibration]
    return table, calibrate([b.image for b in table.calibration], truths, p)


def _cases():
    for js in sorted(TABLE.glob("case-*.json"), key=lambda q: int(q.stem.split("-")[1])):
        board = load_cached(TABLE, js.stem, json.loads(js.read_text())["pbr"]["seed"])
        assert board is not None
        yield board


def _spy(monkeypatch):
    called: list[set[int]] = []
    real = reader_module.bare_key_rows

    def spy(*a, **k):
        out = real(*a, **k)
        called.append(out)
        return out

    monkeypatch.setattr(reader_module, "bare_key_rows", spy)
    return called


def test_every_block_called_bare_on_the_physically_based_boards_is_bare(table_and_cal, monkeypatch):
    table, cal = table_and_cal
    p = table.profile
    called = _spy(monkeypatch)
    bare = in_doubt = 0
    for i, board in enumerate(_cases()):
        called.clear()
        reading = BoardReader(p, cal).read(board.image, at_ns=i)
        truth = truth_from_record(board.truth, p, where="truth")
        for row in set().union(*called):
            t = truth.row(row)
            assert (t.keys.black, t.keys.white) == (0, 0), f"case {board.meta['index']} row {row} has key pegs"
            got = reading.row(row)
            # Proved bare, the keys stay so in a row with a doubtful code hole too.
            if got.status in (ROW_OK, ROW_UNKNOWN):
                assert got.keys.is_certain and (got.keys.black, got.keys.white) == (0, 0)
            bare += 1
            in_doubt += got.status == ROW_UNKNOWN
    assert bare >= 3 and in_doubt >= 1


def test_a_key_peg_off_its_hole_lights_its_block(table_and_cal, monkeypatch):
    table, cal = table_and_cal
    p = table.profile
    called = _spy(monkeypatch)
    board = next(b for b in _cases() if b.meta["index"] == 9)
    reader = BoardReader(p, cal)
    reader.read(board.image, at_ns=1)
    row = min(called[-1])
    loc = reader.last_localisation
    assert loc is not None
    # A white key peg's head (3.6 mm) standing 3 mm off the row's first key hole.
    x, y = p.key_centres_mm(row)[0]
    (cx, cy), (ex, _ey) = loc.to_image(np.array([[x + 3.0, y], [x + 4.8, y]]))
    frame = board.image.copy()
    cv2.circle(frame, (round(cx), round(cy)), max(2, round(ex - cx)), (235, 235, 235), -1)
    before, after = block_scores(p, board.image, loc, [row])[0], block_scores(p, frame, loc, [row])[0]
    assert after > before + 0.5
    called.clear()
    BoardReader(p, cal).read(frame, at_ns=2)
    assert row not in called[-1]


def test_a_block_whose_holes_do_not_show_proves_nothing(table_and_cal, monkeypatch):
    table, cal = table_and_cal
    p = table.profile
    called = _spy(monkeypatch)
    board = next(b for b in _cases() if b.meta["index"] == 9)
    reader = BoardReader(p, cal)
    reader.read(board.image, at_ns=1)
    row = min(called[-1])
    loc = reader.last_localisation
    assert loc is not None
    # Something flat and dark, the plastic's colour, over the row's key block: no hole shows.
    keys = np.asarray(p.key_centres_mm(row))
    (x0, y0), (x1, y1) = keys.min(axis=0) - 3.0, keys.max(axis=0) + 3.0
    corners = loc.to_image(np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]))
    frame = board.image.copy()
    (ax, ay), (bx, by) = corners.min(axis=0).astype(int), corners.max(axis=0).astype(int)
    plastic = np.median(frame[ay:by, ax:bx].reshape(-1, 3), axis=0)
    cv2.fillConvexPoly(frame, np.round(corners).astype(np.int32), [int(v) for v in plastic])
    called.clear()
    BoardReader(p, cal).read(frame, at_ns=2)
    assert row not in set().union(*called)
