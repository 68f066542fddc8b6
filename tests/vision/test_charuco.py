"""Lens calibration with a ChArUco board (vision/charuco.py, ``pegwatch calibrate-lens``)."""

from __future__ import annotations

import json
import math

import cv2
import numpy as np
import pytest

from pegwatch.vision.charuco import (
    CharucoSpec,
    calibrate_lens,
    render_charuco_sheet,
    write_charuco_sheet,
)
from pegwatch.vision.lens import Lens, LensError

SIZE = (640, 480)
TRUE = Lens(np.array([[560.0, 0, 322.0], [0, 560.0, 236.0], [0, 0, 1]]), np.array([-0.18, 0.06, 0.0, 0.0, 0.0]), SIZE, 0.0, 1)
SPEC = CharucoSpec()


def _view(rx: float, ry: float, dist_mm: float, shift=(0.0, 0.0)) -> np.ndarray:
    """A photo of the printed board through :data:`TRUE`, turned by rx, ry degrees."""
    ppmm = 4.0
    sx, sy = SPEC.squares
    w, h = sx * SPEC.square_mm, sy * SPEC.square_mm
    margin = 10.0
    tex = np.full((round((h + 2 * margin) * ppmm), round((w + 2 * margin) * ppmm)), 255, np.uint8)
    board = cv2.aruco.CharucoBoard(SPEC.squares, SPEC.square_mm, SPEC.marker_mm, cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_5X5_100))
    img = board.generateImage((round(w * ppmm), round(h * ppmm)), marginSize=0, borderBits=1)
    o = round(margin * ppmm)
    tex[o : o + img.shape[0], o : o + img.shape[1]] = img
    r, _ = cv2.Rodrigues(np.array([math.radians(rx), math.radians(ry), 0.0]))
    t = np.array([shift[0], shift[1], dist_mm]) - r @ np.array([w / 2, h / 2, 0.0])
    hm = TRUE.camera_matrix @ np.column_stack([r[:, 0], r[:, 1], t])  # board mm -> ideal px
    xs, ys = np.meshgrid(np.arange(SIZE[0], dtype=np.float64), np.arange(SIZE[1], dtype=np.float64))
    ideal = TRUE.undistort_points(np.column_stack([xs.ravel(), ys.ravel()]))
    q = np.column_stack([ideal, np.ones(len(ideal))]) @ np.linalg.inv(hm).T
    bx, by = q[:, 0] / q[:, 2], q[:, 1] / q[:, 2]
    mx = ((bx + margin) * ppmm - 0.5).reshape(SIZE[1], SIZE[0]).astype(np.float32)
    my = ((by + margin) * ppmm - 0.5).reshape(SIZE[1], SIZE[0]).astype(np.float32)
    out = cv2.remap(tex, mx, my, cv2.INTER_AREA, borderMode=cv2.BORDER_CONSTANT, borderValue=180)
    return np.asarray(cv2.cvtColor(out, cv2.COLOR_GRAY2BGR), dtype=np.uint8)


@pytest.fixture(scope="module")
def views() -> list[np.ndarray]:
    # Turned every way, and moved into each corner of the frame, as a person would.
    poses = [
        (0, 0, 330, (0, 0)), (20, 0, 340, (0, 0)), (-20, 5, 340, (0, 0)), (0, 22, 330, (0, 0)),
        (10, -15, 380, (-95, -65)), (-10, 15, 380, (95, -65)), (15, 10, 380, (95, 65)), (-15, -10, 380, (-95, 65)),
        (25, -10, 420, (0, 0)),
    ]
    return [_view(rx, ry, d, shift) for rx, ry, d, shift in poses]


def test_a_known_lens_is_recovered(views):
    lens = calibrate_lens(views)
    assert lens.measured and lens.views >= 7 and lens.rms_px is not None and lens.rms_px < 0.5
    assert lens.camera_matrix[0, 0] == pytest.approx(560.0, rel=0.02)
    assert lens.camera_matrix[1, 1] == pytest.approx(560.0, rel=0.02)
    assert lens.camera_matrix[0, 2] == pytest.approx(322.0, abs=6.0)
    # What matters: points land where the true lens puts them (k1 and k2 trade
    # off against each other over the views' field, so neither is checked alone).
    assert lens.distortion[0] < -0.1
    grid = np.array([[x, y] for x in range(60, 600, 60) for y in range(60, 440, 60)], dtype=np.float64)
    err = np.linalg.norm(lens.undistort_points(grid) - TRUE.undistort_points(grid), axis=1)
    assert float(err.max()) < 2.0


def test_too_few_views_are_refused_in_one_line(views):
    blank = np.full((480, 640, 3), 200, np.uint8)
    with pytest.raises(LensError, match=r"only 2 of 4 views show the ChArUco board") as err:
        calibrate_lens([views[0], blank, views[1], blank])
    assert "\n" not in str(err.value)
    with pytest.raises(LensError, match="one camera mode"):
        calibrate_lens([views[0], np.zeros((100, 100, 3), np.uint8)])


def test_the_charuco_sheet_is_true_size(tmp_path):
    page = render_charuco_sheet(SPEC, dpi=150)
    assert page.size == (round(297 / 25.4 * 150), round(210 / 25.4 * 150))
    out = write_charuco_sheet(tmp_path / "board.png", SPEC, dpi=150)
    assert out.is_file()
    with pytest.raises(LensError, match="does not fit"):
        render_charuco_sheet(CharucoSpec((12, 9), 30.0, 22.0))
    with pytest.raises(LensError, match="COLUMNSxROWS"):
        CharucoSpec.parse("7by5", 30, 22, "DICT_5X5_100")


def test_cli_calibrate_lens_writes_the_lens_into_a_calibration(views, tmp_path, capsys):
    from dataclasses import replace

    from pegwatch.device.cli import main
    from pegwatch.simulation.hardset import make_table
    from pegwatch.vision.calibrate import calibrate
    from pegwatch.vision.calibration import Calibration

    folder = tmp_path / "views"
    folder.mkdir()
    for i, v in enumerate(views):
        cv2.imwrite(str(folder / f"v{i}.png"), v)
    table = make_table("invicta-12x4", peg_set=6, images=1)
    cal = calibrate([r.image for r in table.calibration], table.calibration_truths(), table.profile)
    cal_path = tmp_path / "table.json"
    replace(cal, image_size=SIZE).save(cal_path)
    assert main(["calibrate-lens", str(folder), "--calibration", str(cal_path), "-o", str(tmp_path / "lens.json")]) == 0
    said = capsys.readouterr().out
    assert "RMS reprojection error" in said
    back = Calibration.load(cal_path)
    assert back.lens is not None and back.lens.camera_matrix[0, 0] == pytest.approx(560.0, rel=0.02)
    data = json.loads((tmp_path / "lens.json").read_text())
    assert data["format"] == "pegwatch-lens" and Lens.from_dict(data["lens"]) == back.lens
    # Too few views: one line, status 2.
    few = tmp_path / "few"
    few.mkdir()
    cv2.imwrite(str(few / "a.png"), views[0])
    assert main(["calibrate-lens", str(few)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "at least 5" in err[0]


def test_cli_markers_prints_the_charuco_board(tmp_path, capsys):
    from pegwatch.device.cli import main

    assert main(["markers", "--charuco", str(tmp_path / "charuco.pdf")]) == 0
    assert (tmp_path / "charuco.pdf").stat().st_size > 1000
    assert "ChArUco" in capsys.readouterr().out
