"""A fixed camera's unchanged board keeps its reading (vision.still_board).

Most frames of a game show what the last frame showed. The reader compares
the samples it gathers with those of the last frame read in full, and gives
that reading again when no group of them changed beyond the sensor's noise,
once several frames read in full agreed on it; a peg placed, an unreadable
frame, another fit or a second of frame time makes it read in full.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from pegwatch.rules.errors import BadInput
from pegwatch.simulation.pbr.conditions import PbrConditions
from pegwatch.simulation.pbr.sensor import decode_jpeg, recapture
from pegwatch.simulation.render import Conditions, random_contents, render
from pegwatch.vision.localise.still import MIN_CHANGE_LEVELS
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import BoardReading, unreadable_row
from pegwatch.vision.still_board import AGREE_READS, CHANGED_SHARE, RECHECK_S, StillBoard, changed

FRAME_NS = 33_333_333


def _samples(seed: int, groups: int = 12, per_group: int = 40) -> np.ndarray:
    return np.random.default_rng(seed).integers(40, 200, (groups, per_group, 3), dtype=np.uint8)


def _reading(at_ns: int = 0) -> BoardReading:
    return BoardReading("invicta-12x4", tuple(unreadable_row(r, 4, 4) for r in range(1, 13)), None, None, at_ns)


def test_noise_within_the_sensors_bound_changes_nothing():
    then = _samples(1)
    noise = np.random.default_rng(2).integers(-MIN_CHANGE_LEVELS, MIN_CHANGE_LEVELS + 1, then.shape)
    now = np.clip(then.astype(int) + noise, 0, 255).astype(np.uint8)
    assert not changed(now, then)
    assert not changed(then[:0], then[:0])


@pytest.mark.parametrize("channel", [0, 1, 2])
def test_a_group_changes_when_more_than_its_share_of_samples_moved(channel):
    then = _samples(3)
    k = then.shape[1]
    share = int(CHANGED_SHARE * k)
    now = then.copy()
    now[5, :share, channel] = then[5, :share, channel] + MIN_CHANGE_LEVELS + 1  # values <= 200: no wrap
    assert not changed(now, then), "a quarter of a hole's samples is noise's most"
    now[5, share, channel] = then[5, share, channel] + MIN_CHANGE_LEVELS + 1
    assert changed(now, then)
    assert changed(then, now), "darker or brighter alike"


def _agreed(board: StillBoard, samples: list[np.ndarray], reading: BoardReading | None = None) -> None:
    """Full reads of the unchanged board, a frame apart, as many as it wants, all saying the same."""
    for i in range(board.agree):
        board.keep(b"fit", i * FRAME_NS, samples, reading or _reading(i * FRAME_NS))


def test_the_kept_reading_is_stamped_anew_and_given_up_on_anything_new():
    then = _samples(4)
    cells = _samples(5, groups=30, per_group=9)
    board = StillBoard()
    _agreed(board, [then, cells])
    last = (AGREE_READS - 1) * FRAME_NS
    got = board.reading(b"fit", last + FRAME_NS, [then.copy(), cells.copy()])
    assert got == _reading(last + FRAME_NS)
    assert board.reading(b"another fit", last + FRAME_NS, [then, cells]) is None
    assert board.reading(b"fit", last + int(RECHECK_S * 1e9), [then, cells]) is None, "a second of frame time: read in full"
    assert board.reading(b"fit", last - 1, [then, cells]) is None, "an earlier stamp: frames read again"
    assert board.reading(b"fit", last + FRAME_NS, [then]) is None
    assert board.reading(b"fit", last + FRAME_NS, [then, cells[:-1]]) is None
    moved = cells.copy()
    moved[7] = 255 - moved[7]
    assert board.reading(b"fit", last + FRAME_NS, [then, moved]) is None
    board.forget()
    assert board.reading(b"fit", last + FRAME_NS, [then, cells]) is None


def test_a_reading_is_kept_only_once_full_reads_in_a_row_said_the_same():
    then = _samples(7)
    board = StillBoard()
    for i in range(AGREE_READS - 1):
        board.keep(b"fit", i * FRAME_NS, [then], _reading())
        assert board.reading(b"fit", (i + 1) * FRAME_NS, [then]) is None, "one frame's misread is never kept"
    # A full read that says something else of the unchanged board starts the count again.
    other = replace(_reading(), shield="open")
    board.keep(b"fit", AGREE_READS * FRAME_NS, [then], other)
    assert board.reading(b"fit", (AGREE_READS + 1) * FRAME_NS, [then]) is None
    _agreed(board, [then])
    assert board.reading(b"fit", (AGREE_READS + 1) * FRAME_NS, [then]) is not None
    # So does a board that changed between full reads, whatever they say.
    board.keep(b"fit", (AGREE_READS + 2) * FRAME_NS, [255 - then], _reading())
    assert board.reading(b"fit", (AGREE_READS + 3) * FRAME_NS, [255 - then]) is None


def test_a_still_board_kept_at_once_on_request_and_never_with_no_read():
    then = _samples(8)
    once = StillBoard(agree=1)
    once.keep(b"fit", 0, [then], _reading())
    assert once.reading(b"fit", FRAME_NS, [then]) is not None
    with pytest.raises(BadInput):
        StillBoard(agree=0)


def test_the_samples_kept_are_a_copy():
    then = _samples(6)
    board = StillBoard(agree=1)
    board.keep(b"fit", 0, [then], _reading())
    then[:] = 0  # the gather's buffer, reused
    assert board.reading(b"fit", FRAME_NS, [_samples(6)]) is not None


def test_a_recaptured_frame_differs_by_the_sensors_noise_alone():
    c = PbrConditions()
    drawn = np.full((120, 160, 3), 128, dtype=np.uint8)
    drawn[40:80, 60:100] = (30, 160, 220)
    frame = decode_jpeg(cv2.imencode(".jpg", drawn, [cv2.IMWRITE_JPEG_QUALITY, c.jpeg_quality])[1].tobytes())  # a camera's frame
    a = recapture(frame, c, np.random.default_rng(1))
    assert a.shape == frame.shape and a.dtype == np.uint8
    diff = np.abs(a.astype(int) - frame.astype(int))
    assert 0.2 < diff.mean() < 6.0
    assert np.count_nonzero(diff.max(axis=2) > MIN_CHANGE_LEVELS) < 0.001 * diff[..., 0].size
    assert np.array_equal(a, recapture(frame, c, np.random.default_rng(1)))
    darker = recapture(frame, replace(c, photons=c.photons / 16), np.random.default_rng(1))
    assert np.abs(darker.astype(int) - frame.astype(int)).mean() > diff.mean(), "fewer photons, more noise"


@pytest.fixture(scope="module")
def game(invicta_table):
    """A game's frame, the next frame of the same still board, and one with a black key peg added."""
    p = invicta_table.profile
    contents = random_contents(p, np.random.default_rng(11), rows_played=6, shield_open=False, last_row_marked=True)
    row = next(i for i, k in enumerate(contents.keys) if k is not None and sum(k) < p.key_holes)
    keys = list(contents.keys)
    keys[row] = (keys[row][0] + 1, keys[row][1])
    cond = Conditions.easy().with_(peg_set=invicta_table.peg_set)
    frame = render(p, contents, cond, seed=5).image
    placed = render(p, replace(contents, keys=tuple(keys)), cond, seed=5).image
    again = [recapture(frame, PbrConditions(), np.random.default_rng(k)) for k in range(AGREE_READS)]
    return frame, again, placed, row + 1, keys[row]


def _settled(reader: BoardReader, frame: np.ndarray, again: list[np.ndarray]) -> int:
    """The board read in full, a frame apart, until the reader keeps its reading; the last stamp."""
    reader.read(frame, at_ns=0)
    for i, f in enumerate(again[:-1], start=1):
        reader.read(f, at_ns=i * FRAME_NS)
        assert not reader.last_read_kept
    return (len(again) - 1) * FRAME_NS


def _same_but_stamp(a: BoardReading, b: BoardReading) -> bool:
    return replace(a, at_ns=0) == replace(b, at_ns=0)


def _what(r: BoardReading) -> list[object]:
    """What a reading says of the board: each row's colours, keys and status, and the secret."""
    rows: list[object] = [(x.status, x.guess, x.keys.black, x.keys.white, x.keys.status) for x in r.rows]
    return [*rows, None if r.secret is None else tuple(h.colour for h in r.secret)]


def test_a_still_board_keeps_its_reading_once_full_reads_agreed(invicta_table, invicta_cal, game):
    frame, again, _, _, _ = game
    reader = BoardReader(invicta_table.profile, invicta_cal)
    first = reader.read(frame, at_ns=0)
    assert first.problem is None and not reader.last_read_kept
    second = reader.read(again[0], at_ns=FRAME_NS)
    assert not reader.last_read_kept, "one full read is not enough"
    last = _settled(reader, frame, again)
    kept = reader.read(again[-1], at_ns=last + FRAME_NS)
    assert reader.last_read_kept
    assert kept.at_ns == last + FRAME_NS and _what(kept) == _what(first) == _what(second)
    assert reader.last_localisation is not None and reader.last_localisation.ok


def test_a_key_peg_placed_is_read_at_the_next_frame(invicta_table, invicta_cal, game):
    frame, again, placed, row, (black, white) = game
    reader = BoardReader(invicta_table.profile, invicta_cal)
    last = _settled(reader, frame, again)
    before = reader.read(again[-1], at_ns=last + FRAME_NS)
    assert reader.last_read_kept
    after = reader.read(placed, at_ns=last + 2 * FRAME_NS)
    assert not reader.last_read_kept
    assert (after.row(row).keys.black, after.row(row).keys.white) == (black, white)
    assert (before.row(row).keys.black, before.row(row).keys.white) == (black - 1, white)
    fresh = BoardReader(invicta_table.profile, invicta_cal).read(placed, at_ns=0)
    assert _what(after) == _what(fresh), "what a reader that never saw the board before reads"
    reader.read(placed, at_ns=last + 3 * FRAME_NS)
    assert not reader.last_read_kept, "the new board is read in full until full reads agree on it"


def test_a_second_of_frame_time_reads_the_board_in_full_again(invicta_table, invicta_cal, game):
    frame, again, _, _, _ = game
    reader = BoardReader(invicta_table.profile, invicta_cal)
    last = _settled(reader, frame, again)
    reader.read(again[-1], at_ns=last + 500_000_000)
    assert reader.last_read_kept
    reader.read(again[-1], at_ns=last + 1_000_000_000)
    assert not reader.last_read_kept
    # The markers' fit fell due too: on the new fit, kept again once full reads agree.
    kept = []
    for i in range(1, AGREE_READS + 1):
        reader.read(again[i % len(again)], at_ns=last + 1_000_000_000 + i * FRAME_NS)
        kept.append(reader.last_read_kept)
    assert kept[-1] and not kept[0]


def test_an_unreadable_frame_and_keep_still_off_read_in_full(invicta_table, invicta_cal, game):
    frame, again, _, _, _ = game
    reader = BoardReader(invicta_table.profile, invicta_cal)
    last = _settled(reader, frame, again)
    assert reader.read(np.zeros((10, 10), dtype=np.uint8), at_ns=last + FRAME_NS).problem is not None
    reader.read(again[-1], at_ns=last + 2 * FRAME_NS)
    assert not reader.last_read_kept, "nothing is kept across a frame that was not read"
    off = BoardReader(invicta_table.profile, invicta_cal, keep_still=False)
    for i in range(AGREE_READS + 2):
        off.read(frame, at_ns=i * FRAME_NS)
        assert not off.last_read_kept
    once = BoardReader(invicta_table.profile, invicta_cal, keep_after=1)
    once.read(frame, at_ns=0)
    once.read(again[0], at_ns=FRAME_NS)
    assert once.last_read_kept
