"""The board found again by the calibration's picture of it (vision.localise.appearance).

A table without markers knows its board from its calibration photo alone.
When the camera has moved, turned round or come nearer, and the board's
outline is partly out of the frame, the board's own features still place it;
a frame of another board, of no board, or of the board in a mirror, does not.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from pegwatch.simulation.render import Conditions, random_contents, render
from pegwatch.vision.calibration import Calibration, CalibrationError
from pegwatch.vision.localise import BestEffortLocaliser, BoardLook, find_by_look
from pegwatch.vision.profile import load_profile


@pytest.fixture(scope="module")
def invicta():
    return load_profile("invicta-12x4")


@pytest.fixture(scope="module")
def contents(invicta):
    return random_contents(invicta, np.random.default_rng(7), rows_played=6)


@pytest.fixture(scope="module")
def look(invicta, contents):
    """The picture a calibration photo without markers gives (its board placed as the corners would)."""
    shot = render(invicta, contents, Conditions.easy().with_(markers=False), seed=7)
    return BoardLook.of(shot.image, np.linalg.inv(shot.board_to_image), invicta.size_mm)


def _hole_error_mm(invicta, shot, image_to_board) -> float:
    """The worst distance (mm) between the board's holes and where the fit puts them, over holes in the frame."""
    holes = np.array(invicta.all_hole_centres_mm(), dtype=np.float64)
    px = shot.project(holes)
    h, w = shot.image.shape[:2]
    seen = (px[:, 0] >= 0) & (px[:, 0] < w) & (px[:, 1] >= 0) & (px[:, 1] < h)
    got = cv2.perspectiveTransform(px[seen].reshape(-1, 1, 2), image_to_board).reshape(-1, 2)
    return float(np.max(np.linalg.norm(got - holes[seen], axis=1)))


@pytest.mark.parametrize(
    "moved",
    [
        {"yaw_deg": -20.0, "offset_px": (420.0, 0.0)},  # one end out of the frame
        {"yaw_deg": 170.0, "offset_px": (0.0, 260.0), "distance_mm": 380.0},  # turned round, further, cut off below
    ],
)
def test_a_moved_camera_finds_the_board_by_its_look_where_its_outline_cannot(invicta, contents, look, moved):
    shot = render(invicta, contents, Conditions.easy().with_(markers=False, **moved), seed=8)
    loc = BestEffortLocaliser(invicta, look=look).locate(shot.image)
    assert loc.ok, loc.problem
    assert loc.method == "best-effort" and 0 < loc.quality < 1
    assert _hole_error_mm(invicta, shot, loc.image_to_board) < 1.0
    assert not BestEffortLocaliser(invicta).locate(shot.image).ok  # the outline alone cannot place it


def test_a_look_finds_the_board_only_where_it_is(invicta, contents, look):
    shot = render(invicta, contents, Conditions.easy().with_(markers=False, yaw_deg=-20.0, offset_px=(420.0, 0.0)), seed=8)
    assert find_by_look(shot.image, look, invicta.size_mm) is not None
    assert find_by_look(cv2.flip(shot.image, 1), look, invicta.size_mm) is None  # no board is seen in a mirror
    table = np.clip(np.random.default_rng(1).normal(120, 30, shot.image.shape), 0, 255).astype(np.uint8)
    assert find_by_look(table, look, invicta.size_mm) is None
    lego = load_profile("lego-10x4")
    other = render(lego, random_contents(lego, np.random.default_rng(3), rows_played=6), Conditions.easy(), seed=3)
    assert find_by_look(other.image, look, invicta.size_mm) is None


def test_the_look_is_kept_in_the_calibration_file(invicta, invicta_cal, tmp_path):
    assert invicta_cal.look is not None  # every calibration keeps one
    path = tmp_path / "table.json"
    invicta_cal.save(path)
    again = Calibration.load(path)
    assert again.look is not None and again.look.px_per_mm == invicta_cal.look.px_per_mm
    assert again.look.image.shape == invicta_cal.look.image.shape
    assert float(np.mean(cv2.absdiff(again.look.image, invicta_cal.look.image))) < 2.0  # a JPEG of it
    best = replace(again, method="best-effort").localiser(invicta)
    assert isinstance(best, BestEffortLocaliser) and best.look is again.look
    record = invicta_cal.to_dict()
    del record["localisation"]["look"]
    assert Calibration.from_dict(record).look is None  # files from before the picture load as before


@pytest.mark.parametrize(
    ("look", "says"),
    [
        ({"px_per_mm": 4.0}, "not an object"),
        ({"px_per_mm": "four", "jpeg_base64": ""}, "px_per_mm is not a number"),
        ({"px_per_mm": 4.0, "jpeg_base64": "aGVsbG8="}, "not a JPEG picture"),
    ],
)
def test_a_broken_look_is_one_clear_line_naming_it(invicta_cal, look, says):
    record = invicta_cal.to_dict()
    record["localisation"]["look"] = look
    with pytest.raises(CalibrationError, match=rf"table\.json: localisation\.look: .*{says}"):
        Calibration.from_dict(record, where="table.json")


def test_a_fixed_camera_keeps_the_board_found_while_its_corners_look_as_they_did(invicta, contents, look, monkeypatch):
    shot = render(invicta, contents, Conditions.easy().with_(markers=False, yaw_deg=-20.0, offset_px=(420.0, 0.0)), seed=8)
    localiser = BestEffortLocaliser(invicta, look=look)
    searches = []
    search = localiser._search
    monkeypatch.setattr(localiser, "_search", lambda frame: searches.append(1) or search(frame))
    first = localiser.locate(shot.image, at_ns=0)
    assert first.ok and len(searches) == 1
    # The next frame, and one with a hand over the middle of the board: the board has not moved.
    assert localiser.locate(shot.image.copy(), at_ns=33_000_000) is first
    hand = shot.image.copy()
    c = shot.project(np.array([[invicta.size_mm[0] / 2, invicta.size_mm[1] / 2]]))[0].astype(int)
    cv2.circle(hand, (int(c[0]), int(c[1])), 60, (90, 120, 170), -1)
    assert localiser.locate(hand, at_ns=66_000_000) is first and len(searches) == 1
    # Looked for again: a second of frame time on, a stamp before the fit's, and a board moved.
    assert localiser.locate(shot.image, at_ns=1_100_000_000).ok and len(searches) == 2
    assert localiser.locate(shot.image, at_ns=500_000_000).ok and len(searches) == 3
    moved = render(invicta, contents, Conditions.easy().with_(markers=False, yaw_deg=-20.0, offset_px=(400.0, 30.0)), seed=8)
    again = localiser.locate(moved.image, at_ns=533_000_000)
    assert len(searches) == 4 and again.ok and again is not first
    assert _hole_error_mm(invicta, moved, again.image_to_board) < 1.0
