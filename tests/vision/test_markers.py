"""ArUco helpers and the printable marker sheet."""

from __future__ import annotations

import re

import cv2
import numpy as np
import pytest
from PIL import Image

from pegwatch.device.cli import main
from pegwatch.vision.markers import (
    MM_PER_INCH,
    MarkerError,
    detect_markers,
    dictionary_info,
    marker_image,
    profile_marker_points,
    render_sheet,
)
from pegwatch.vision.profile import load_profile


def test_marker_images_round_trip_through_the_detector():
    canvas = np.full((300, 500), 255, np.uint8)
    for i, mid in enumerate((0, 7, 42)):
        img = marker_image("DICT_4X4_50", mid, 96, quiet_zone=True)
        canvas[50 : 50 + img.shape[0], 20 + 160 * i : 20 + 160 * i + img.shape[1]] = img
    found = detect_markers(canvas, "DICT_4X4_50")
    assert sorted(f.id for f in found) == [0, 7, 42]
    m0 = next(f for f in found if f.id == 0)
    # First corner is the marker's top-left, as the profile's corners_mm() assume.
    assert np.allclose(m0.corners[0], (20 + 16 - 0.5, 50 + 16 - 0.5), atol=1.5)


def test_dictionary_errors():
    assert dictionary_info("DICT_4X4_50") == (4, 50)
    with pytest.raises(MarkerError, match="unknown ArUco dictionary"):
        marker_image("DICT_NOPE", 0, 40)
    with pytest.raises(MarkerError, match="marker id 50"):
        marker_image("DICT_4X4_50", 50, 40)


def test_each_marker_s_corners_go_with_its_own_id_in_whatever_order_they_were_found():
    from pegwatch.vision.markers import DetectedMarker

    p = load_profile("invicta-12x4")
    by_id = {m.id: m for m in p.markers}
    found = [
        DetectedMarker(3, np.full((4, 2), 300.0, dtype=np.float32)),
        DetectedMarker(0, np.full((4, 2), 0.0, dtype=np.float32)),
        DetectedMarker(2, np.full((4, 2), 200.0, dtype=np.float32)),
    ]
    img, board, used = profile_marker_points(p, found)
    assert used == (0, 2, 3)
    for k, mid in enumerate(used):
        assert np.all(img[4 * k : 4 * k + 4] == 100.0 * mid)  # its own corners ...
        assert np.allclose(board[4 * k : 4 * k + 4], by_id[mid].corners_mm())  # ... and its own place


def test_a_marker_too_soft_for_the_detector_is_read_again_module_by_module():
    sharp = np.full((240, 240), 255, np.uint8)
    m = marker_image("DICT_4X4_50", 0, 80, quiet_zone=True)
    sharp[40 : 40 + m.shape[0], 50 : 50 + m.shape[1]] = m
    for turn in range(4):
        image = np.ascontiguousarray(np.rot90(sharp, turn))
        truth = detect_markers(image, "DICT_4X4_50", kind="retry")
        blurred = cv2.GaussianBlur(image, (0, 0), 5.0)
        assert detect_markers(blurred, "DICT_4X4_50", kind="retry") == []  # too soft for OpenCV's decoding
        (soft,) = detect_markers(blurred, "DICT_4X4_50", kind="soft")
        assert soft.id == 0 and np.abs(soft.corners - truth[0].corners).max() < 4  # corners in the marker's order
    # A grey square of the right size is no marker: nothing inside it is exact.
    plain = np.full((240, 240), 255, np.uint8)
    plain[60:140, 70:150] = 30
    plain[80:120, 90:130] = 200
    assert detect_markers(cv2.GaussianBlur(plain, (0, 0), 5.0), "DICT_4X4_50", kind="soft") == []


def test_duplicate_ids_are_dropped():
    p = load_profile("invicta-12x4")
    canvas = np.full((240, 400), 255, np.uint8)
    img = marker_image("DICT_4X4_50", 1, 80, quiet_zone=True)
    canvas[40 : 40 + img.shape[0], 20 : 20 + img.shape[1]] = img
    canvas[40 : 40 + img.shape[0], 220 : 220 + img.shape[1]] = img
    found = detect_markers(canvas, "DICT_4X4_50")
    assert len(found) == 2
    _img, _board, used = profile_marker_points(p, found)
    assert used == ()


@pytest.mark.parametrize("dpi", [150, 300])
def test_sheet_is_true_size(dpi):
    p = load_profile("invicta-12x4")
    page = render_sheet(p, dpi=dpi)
    px_per_mm = dpi / MM_PER_INCH
    assert page.size == (round(210 * px_per_mm), round(297 * px_per_mm))
    arr = np.array(page)
    found = detect_markers(arr, p.aruco_dictionary)
    assert sorted(f.id for f in found) == sorted(m.id for m in p.markers)
    for f in found:
        side = np.linalg.norm(f.corners[1] - f.corners[0])
        assert side == pytest.approx(20.0 * px_per_mm, rel=0.02)
    # The 50 mm ruler: a long thin black bar near the bottom.
    bottom = arr[int(arr.shape[0] * 0.85) :, :]
    rows = np.where((bottom < 80).sum(axis=1) > 40 * px_per_mm)[0]
    assert len(rows) > 0
    bar = (bottom[rows[0]] < 80).nonzero()[0]
    assert (bar.max() - bar.min()) / px_per_mm == pytest.approx(50.0, abs=0.6)


def test_cli_writes_png_with_dpi_and_pdf(tmp_path, capsys):
    png = tmp_path / "sheet.png"
    assert main(["markers", "--profile", "super-12x5", "-o", str(png), "--dpi", "200"]) == 0
    assert "8, 9, 10, 11" in capsys.readouterr().out
    with Image.open(png) as im:
        assert im.info["dpi"] == pytest.approx((200, 200), abs=0.01)
        assert im.size == (round(210 / 25.4 * 200), round(297 / 25.4 * 200))
        arr = np.array(im.convert("L"))
    assert sorted(f.id for f in detect_markers(arr, "DICT_4X4_50")) == [8, 9, 10, 11]
    pdf = tmp_path / "sheet.pdf"
    assert main(["markers", "-o", str(pdf)]) == 0
    head = pdf.read_bytes()[:5]
    assert head == b"%PDF-"
    # A4 at 72 points per inch.
    assert re.search(rb"/MediaBox \[ ?0 0 595\.\d* 841\.\d*", pdf.read_bytes())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["markers", "-o", "x.jpg"], "must be a .png or .pdf"),
        (["markers", "--profile", "nope", "-o", "x.png"], "board profile 'nope' not found"),
        (["markers", "-o", "x.png", "--dpi", "5"], "--dpi 5 is not in 72..1200"),
    ],
)
def test_cli_errors_are_one_line(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_unwritable_path(tmp_path, capsys):
    assert main(["markers", "-o", str(tmp_path / "no" / "such" / "dir.png")]) == 2
    assert "pegwatch markers:" in capsys.readouterr().err


def test_detection_on_a_rendered_photo_at_half_size():
    from pegwatch.simulation.render import BoardContents, Conditions, render

    p = load_profile("lego-10x4")
    out = render(p, BoardContents.empty(p), Conditions.easy(), seed=0)
    gray = cv2.cvtColor(out.image, cv2.COLOR_BGR2GRAY)
    small = cv2.resize(gray, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    assert sorted(f.id for f in detect_markers(small, p.aruco_dictionary)) == [4, 5, 6, 7]


def test_the_old_functional_aruco_api_of_opencv_4_6_works(monkeypatch):
    """Raspberry Pi OS Bookworm ships OpenCV 4.6: no ArucoDetector, no generateImageMarker.

    The old functions are emulated here with the new ones, so that the
    feature-detecting branches run.
    """
    import types

    from pegwatch.vision import markers

    real = cv2.aruco
    old = types.SimpleNamespace(
        DICT_4X4_50=real.DICT_4X4_50,
        CORNER_REFINE_SUBPIX=real.CORNER_REFINE_SUBPIX,
        Dictionary_get=real.getPredefinedDictionary,
        DetectorParameters_create=real.DetectorParameters,
        drawMarker=real.generateImageMarker,
        detectMarkers=lambda gray, d, parameters: real.ArucoDetector(d, parameters).detectMarkers(gray),
    )
    for cached in (markers.get_dictionary, markers._marker_bits, markers._detector):
        cached.cache_clear()
    monkeypatch.setattr(cv2, "aruco", old)
    try:
        canvas = np.full((200, 200), 255, np.uint8)
        img = marker_image("DICT_4X4_50", 5, 96, quiet_zone=True)
        canvas[40 : 40 + img.shape[0], 40 : 40 + img.shape[1]] = img
        assert [f.id for f in detect_markers(canvas, "DICT_4X4_50")] == [5]
    finally:
        monkeypatch.undo()
        for cached in (markers.get_dictionary, markers._marker_bits, markers._detector):
            cached.cache_clear()


def test_the_retry_detector_and_equalisation():
    import cv2
    import numpy as np

    from pegwatch.vision.markers import MarkerError, detect_markers, equalise, marker_image

    # A marker in deep shade on a grey card: little contrast left.
    img = np.full((240, 240), 120, np.uint8)
    m = marker_image("DICT_4X4_50", 7, 80, quiet_zone=True)
    img[60 : 60 + m.shape[0], 60 : 60 + m.shape[1]] = m
    dim = (img.astype(np.float32) * 0.08 + 20).astype(np.uint8)
    eq = equalise(dim)
    box = (slice(60, 60 + m.shape[0]), slice(60, 60 + m.shape[1]))
    assert float(np.ptp(eq[box])) > float(np.ptp(dim[box]))  # black and white further apart
    assert [f.id for f in detect_markers(eq, "DICT_4X4_50", kind="retry")] == [7]
    assert [f.id for f in detect_markers(cv2.cvtColor(img, cv2.COLOR_GRAY2BGR), "DICT_4X4_50", kind="retry")] == [7]
    with pytest.raises(MarkerError, match="detector kind"):
        detect_markers(img, "DICT_4X4_50", kind="fast")


def test_sharpening_brings_back_markers_a_defocus_blurred():
    import cv2
    import numpy as np

    from pegwatch.vision.markers import detect_markers, get_dictionary, sharpen

    d = get_dictionary("DICT_4X4_50")
    sheet = np.full((300, 400), 200, np.uint8)
    for i, (x, y) in enumerate(((40, 40), (300, 40), (40, 200), (300, 200))):
        sheet[y : y + 44, x : x + 44] = cv2.aruco.generateImageMarker(d, i, 44)
    noise = np.random.default_rng(0).normal(0, 3, sheet.shape)
    blurred = np.clip(cv2.GaussianBlur(sheet, (0, 0), 3.0).astype(np.float64) + noise, 0, 255).astype(np.uint8)
    plain = {m.id for m in detect_markers(blurred, "DICT_4X4_50", kind="retry")}
    sharp = {m.id for m in detect_markers(sharpen(blurred), "DICT_4X4_50", kind="retry")}
    assert len(plain) < 4 and sharp == {0, 1, 2, 3}
