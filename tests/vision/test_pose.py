"""The camera pose over the board (vision/pose.py) and the lens it uses (vision/lens.py)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import cv2
import numpy as np
import pytest

from pegwatch.vision.calibration import CalibrationError
from pegwatch.vision.lens import Lens, LensError, lens_from_dict
from pegwatch.vision.localise import Localisation
from pegwatch.vision.pose import (
    PoseError,
    estimate_lens,
    fit_pose,
    focal_from_homography,
    pose_from_homography,
)
from pegwatch.vision.profile import load_profile

PHOTOS = Path(os.environ.get("PEGWATCH_PHOTOS", str(Path(__file__).resolve().parents[3] / "shared" / "photos")))


def _camera(tilt_deg: float, focal: float = 1000.0, size=(1280, 720), k1: float = 0.0):
    """A camera 450 mm above the board's centre, turned ``tilt_deg`` about the board's x axis."""
    lens = Lens(
        np.array([[focal, 0, size[0] / 2], [0, focal, size[1] / 2], [0, 0, 1.0]]),
        np.array([k1, 0.0, 0.0, 0.0, 0.0]),
        size,
        rms_px=0.2 if k1 else None,
    )
    a = math.radians(tilt_deg)
    r = np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])
    centre = np.array([130.0, 42.5, 0.0])
    t = np.array([0.0, 0.0, 450.0]) - r @ centre
    rvec, _ = cv2.Rodrigues(r)
    return lens, rvec.reshape(3), t


def _project(lens, rvec, tvec, xyz):
    out, _ = cv2.projectPoints(np.asarray(xyz, dtype=np.float64), rvec, tvec, lens.camera_matrix, lens.distortion)
    return out.reshape(-1, 2)


def test_fit_pose_places_peg_heads_where_the_camera_sees_them():
    p = load_profile("invicta-12x4")
    lens, rvec, tvec = _camera(25.0, k1=-0.08)
    corners = np.array([c for m in p.markers for c in m.corners_mm()])
    seen = _project(lens, rvec, tvec, np.column_stack([corners, np.zeros(len(corners))]))
    pose = fit_pose(corners, seen, lens)
    assert pose.rms_px < 1e-3
    assert pose.tilt_deg == pytest.approx(25.0, abs=0.01)
    holes = np.array(p.all_hole_centres_mm())
    h = p.code_head_centre_height_mm
    # Heights are up, towards the camera: the board frame's z points into the table.
    truth = _project(lens, rvec, tvec, np.column_stack([holes, np.full(len(holes), -h)]))
    got = pose.project(np.column_stack([holes, np.full(len(holes), h)]))
    assert float(np.max(np.linalg.norm(got - truth, axis=1))) < 0.01
    flat = pose.project(np.column_stack([holes, np.zeros(len(holes))]))
    # A head 3.75 mm up is displaced visibly from its hole on a tilted view.
    assert float(np.min(np.linalg.norm(got - flat, axis=1))) > 2.0


def test_localisation_places_heights_through_the_pose_and_the_board_through_a_measured_lens():
    p = load_profile("invicta-12x4")
    lens, rvec, tvec = _camera(20.0, k1=-0.1)
    corners = np.array(p.corners_mm())
    seen = _project(lens, rvec, tvec, np.column_stack([corners, np.zeros(4)]))
    pose = fit_pose(corners, seen, lens)
    h_img_to_board = cv2.getPerspectiveTransform(seen.astype(np.float32), corners.astype(np.float32)).astype(np.float64)
    loc = Localisation(True, "corners", h_img_to_board, pose=pose)
    holes = np.array(p.all_hole_centres_mm())
    truth0 = _project(lens, rvec, tvec, np.column_stack([holes, np.zeros(len(holes))]))
    # With a calibrated lens an empty hole is placed with its distortion; the homography cannot.
    assert np.max(np.linalg.norm(loc.to_image_at_height(holes, 0.0) - truth0, axis=1)) < 0.01
    assert np.max(np.linalg.norm(loc.to_image(holes) - truth0, axis=1)) > 1.0
    # Without one (an assumed pinhole), the board plane stays the homography's.
    guessed = fit_pose(corners, seen, Lens.pinhole(lens.image_size))
    plain = Localisation(True, "corners", h_img_to_board, pose=guessed)
    assert np.allclose(plain.to_image_at_height(holes, 0.0), plain.to_image(holes))


def test_focal_is_read_from_an_oblique_board_and_guessed_for_a_flat_one():
    p = load_profile("invicta-12x4")
    corners = np.array([c for m in p.markers for c in m.corners_mm()])
    for tilt, expect in ((30.0, 1234.0), (3.0, Lens.pinhole((1280, 720)).focal_px)):
        lens, rvec, tvec = _camera(tilt, focal=1234.0)
        seen = _project(lens, rvec, tvec, np.column_stack([corners, np.zeros(len(corners))]))
        hm, _ = cv2.findHomography(corners, seen, 0)
        assert estimate_lens(hm, (1280, 720)).focal_px == pytest.approx(expect, rel=0.01)
    lens, rvec, tvec = _camera(30.0, focal=1234.0)
    seen = _project(lens, rvec, tvec, np.column_stack([corners, np.zeros(len(corners))]))
    hm, _ = cv2.findHomography(corners, seen, 0)
    assert focal_from_homography(hm, (1280, 720)) == pytest.approx(1234.0, rel=1e-3)
    pose = pose_from_homography(np.linalg.inv(hm), (1280, 720), p.size_mm)
    assert pose.tilt_deg == pytest.approx(30.0, abs=0.2)


def test_fit_pose_refuses_too_few_or_collinear_points():
    lens = Lens.pinhole((640, 480))
    with pytest.raises(PoseError, match="at least 4"):
        fit_pose(np.zeros((3, 2)), np.zeros((3, 2)), lens)
    line = np.column_stack([np.arange(5.0), np.arange(5.0)])
    with pytest.raises(PoseError, match="one line"):
        fit_pose(line, line * 10, lens)


# --- the lens ----------------------------------------------------------------


def test_lens_round_trips_and_scales():
    lens = Lens(np.array([[900.0, 0, 641.5], [0, 905.0, 359.0], [0, 0, 1]]), np.array([-0.1, 0.02, 0.001, 0.0, 0.0]), (1280, 720), 0.31, 24)
    assert Lens.from_dict(json.loads(json.dumps(lens.to_dict()))) == lens
    assert lens_from_dict(None) is None and lens.measured and not Lens.pinhole((1280, 720)).measured
    half = lens.for_size((640, 360))
    assert half.camera_matrix[0, 0] == pytest.approx(450.0) and half.camera_matrix[1, 2] == pytest.approx(179.25)
    with pytest.raises(LensError, match="aspect ratio"):
        lens.for_size((640, 480))
    pts = np.array([[5.0, 7.0], [640.0, 360.0], [1270.0, 700.0]])
    assert np.allclose(lens.distort_points(lens.undistort_points(pts)), pts, atol=1e-3)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"image_size": [0, 720]}, "image_size"),
        ({"camera_matrix": [[1, 0], [0, 1]]}, "camera_matrix"),
        ({"camera_matrix": [[-5.0, 0, 1], [0, 5.0, 1], [0, 0, 1]]}, "fx, fy > 0"),
        ({"distortion": [0.1, 0.2]}, "distortion"),
        ({"distortion": [0.1, "x", 0, 0, 0]}, r"distortion\[1\]"),
        ({"rms_px": -1}, "rms_px"),
    ],
)
def test_bad_lens_is_one_line_naming_the_key(change, message):
    data = {**Lens.pinhole((1280, 720)).to_dict(), **change}
    with pytest.raises(LensError, match=message) as err:
        Lens.from_dict(data, where="cal.json: lens")
    assert str(err.value).startswith("cal.json: lens") and "\n" not in str(err.value)


def test_calibration_files_carry_the_lens_and_old_ones_load_without(tmp_path):
    from pegwatch.simulation.hardset import make_table
    from pegwatch.vision.calibrate import calibrate
    from pegwatch.vision.calibration import Calibration

    table = make_table("invicta-12x4", peg_set=5, images=2)
    cal = calibrate([r.image for r in table.calibration], table.calibration_truths(), table.profile)
    assert cal.lens is None and "lens" not in cal.to_dict()
    lens = Lens.pinhole((1280, 720)).for_size((1280, 720))
    measured = Lens(lens.camera_matrix, np.array([-0.05, 0.0, 0.0, 0.0, 0.0]), (1280, 720), 0.4, 12)
    from dataclasses import replace

    path = tmp_path / "cal.json"
    replace(cal, lens=measured).save(path)
    back = Calibration.load(path)
    assert back.lens == measured
    assert back.localiser(table.profile).lens == measured  # type: ignore[attr-defined]
    data = json.loads(path.read_text())
    data["lens"]["distortion"] = [1, 2]
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match="lens: distortion"):
        Calibration.load(path)


# --- a real photo ---------------------------------------------------------------


def _wilort():
    index = PHOTOS / "index.json"
    if not index.is_file():
        pytest.skip(f"the development photos are not here ({PHOTOS})")
    data = json.loads(index.read_text())
    entries = data if isinstance(data, list) else data.get("photos", [])
    for e in entries:
        if "hole_points_mm_to_px" in e:
            return e
    pytest.skip("no photo with measured hole points in the index")


def test_the_wilort_photo_fits_a_pose_and_its_peg_heads_stand_a_third_of_a_pitch_up():
    e = _wilort()
    pts = np.array(e["hole_points_mm_to_px"]["points"], dtype=np.float64)
    size = (int(e["size"][0]), int(e["size"][1]))
    obj, img = pts[:, :2], pts[:, 2:]
    hm, _ = cv2.findHomography(obj, img, 0)
    lens = estimate_lens(hm, size)
    pose = fit_pose(obj, img, lens)
    # Holes measured by eye: a pose fits them to a few pixels (a hole is ~45 px wide).
    assert pose.rms_px < 4.0
    assert pose.tilt_deg > 30.0  # the photo is oblique
    # An Invicta peg (the board is one) stands with its head's centre this high.
    h = load_profile("invicta-12x4").code_head_centre_height_mm
    hole = np.array([[96.0, 32.0, 0.0], [96.0, 32.0, h], [96.0, 42.0, 0.0]])
    flat, head, next_hole = pose.project(hole)
    pitch_px = float(np.linalg.norm(next_hole - flat))
    lift = head - flat
    assert 0.2 < float(np.linalg.norm(lift)) / pitch_px < 0.5  # "about a third of a pitch"
    assert lift[1] < 0  # up in the image, away from the camera
