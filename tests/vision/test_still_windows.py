"""A fixed camera's marker windows that look as they did need no reading (vision.localise.still).

Reading the markers again in their windows was the largest part of a
steady read. Windows whose pixels are those of the frame the markers were
last read in, within the sensor's noise, hold the markers where they were.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

import pegwatch.vision.localise.marker_localiser as marker_localiser
from pegwatch.simulation.render import Conditions, random_contents, render
from pegwatch.vision.localise import MarkerLocaliser
from pegwatch.vision.localise.still import StillWindows
from pegwatch.vision.profile import load_profile
from pegwatch.vision.reader import BoardReader

FRAME_NS = 33_333_333


@pytest.fixture(scope="module")
def invicta():
    return load_profile("invicta-12x4")


@pytest.fixture(scope="module")
def frame(invicta):
    c = random_contents(invicta, np.random.default_rng(5))
    return render(invicta, c, Conditions.easy().with_(tilt_x_deg=6.0), seed=5).image


def _noisy(image, sigma, seed=0):
    noise = np.random.default_rng(seed).normal(0.0, sigma, image.shape)
    return np.clip(image + noise, 0, 255).astype(np.uint8)


def _shifted(image, dx):
    m = np.float32([[1, 0, dx], [0, 1, 0]])
    return cv2.warpAffine(image, m, (image.shape[1], image.shape[0]), borderMode=cv2.BORDER_REPLICATE)


def _count_detections(monkeypatch) -> list[int]:
    """One entry per marker detection run from now on."""
    calls: list[int] = []
    real = marker_localiser.detect_markers

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(marker_localiser, "detect_markers", counted)
    return calls


def test_windows_are_still_under_noise_and_not_when_moved_or_covered(invicta, frame):
    loc = MarkerLocaliser(invicta)
    assert loc.locate(frame).ok
    still = StillWindows()
    still.take(frame, loc._rois)
    assert still.ids == (0, 1, 2, 3)
    assert still.unchanged(frame) and still.unchanged(_noisy(frame, 3.0))
    _ok, jpeg = cv2.imencode(".jpg", _noisy(frame, 3.0), [cv2.IMWRITE_JPEG_QUALITY, 80])
    assert still.unchanged(cv2.imdecode(jpeg, cv2.IMREAD_COLOR))
    assert not still.unchanged(_shifted(frame, 2.0))
    x0, y0, x1, y1 = loc._rois[1]
    hand = frame.copy()
    cv2.circle(hand, ((x0 + x1) // 2, (y0 + y1) // 2), (x1 - x0) // 4, (90, 120, 190), -1)
    assert not still.unchanged(hand)
    assert not still.unchanged(cv2.resize(frame, None, fx=0.5, fy=0.5))  # another camera mode
    one = StillWindows()
    one.take(frame, {1: loc._rois[1]})
    assert not one.unchanged(frame)  # one window says too little
    still.forget()
    assert not still.unchanged(frame)


def test_a_steady_frame_reads_no_marker_and_keeps_the_fit(invicta, frame, monkeypatch):
    loc = MarkerLocaliser(invicta)
    first = loc.locate(frame, at_ns=0)
    calls = _count_detections(monkeypatch)
    again = loc.locate(_noisy(frame, 3.0, seed=1), at_ns=FRAME_NS)
    assert not calls
    assert again.image_to_board is first.image_to_board and again.markers_seen == first.markers_seen
    # Moved by three pixels: the windows are read, the markers found where they now are.
    moved = loc.locate(_shifted(frame, 3.0), at_ns=2 * FRAME_NS)
    assert calls and moved.ok
    assert moved.image_to_board is not first.image_to_board
    # A re-fit falls due ``recheck_s`` of frame time after the fit, whatever the windows look like.
    calls.clear()
    loc.locate(_shifted(frame, 3.0), at_ns=3 * FRAME_NS)
    assert not calls
    loc.locate(_shifted(frame, 3.0), at_ns=2 * FRAME_NS + int(loc.recheck_s * 1e9))
    assert calls


def test_the_kept_fit_is_timed_by_the_frames_stamps_not_by_the_reading(invicta, frame, monkeypatch):
    # Stored frames read again, in a moment, with their stamps: the fit is
    # kept or checked again as it was when they were taken, a second apart.
    loc = MarkerLocaliser(invicta)
    assert loc.locate(frame, at_ns=0).ok
    calls = _count_detections(monkeypatch)
    second = int(loc.recheck_s * 1e9)
    for at_ns, checked in ((second // 2, False), (second + 1, True), (second + 2, False), (0, True)):
        calls.clear()
        got = loc.locate(_noisy(frame, 3.0, seed=at_ns % 7), at_ns=at_ns)
        assert got.ok
        assert bool(calls) is checked, at_ns  # a stamp before the fit's: another run of frames


def test_the_reader_keeps_its_fit_by_the_stamps_it_is_given(invicta_table, invicta_cal, monkeypatch):
    reader = BoardReader(invicta_table.profile, invicta_cal)
    image = invicta_table.calibration[0].image
    assert reader.read(image, at_ns=0).problem is None
    calls = _count_detections(monkeypatch)
    reader.read(_noisy(image, 3.0), at_ns=FRAME_NS)
    assert not calls
    reader.read(_noisy(image, 3.0, seed=2), at_ns=int(reader.localiser.recheck_s * 1e9) + FRAME_NS)  # type: ignore[attr-defined]
    assert calls
