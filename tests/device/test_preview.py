"""``pegwatch preview``: the camera's view with the board's grid, as a JPEG and as a page.

The camera is the renderer (a board with its four markers, as a mounted
camera sees it); a blank frame stands for a camera pointed at nothing.
"""

from __future__ import annotations

import threading
from pathlib import Path

import cv2
import numpy as np
import pytest

from pegwatch.device.cli import main
from pegwatch.device.errors import ConfigError
from pegwatch.device.preview import PreviewSettings, parse_listen
from pegwatch.device.preview.capture import PreviewCamera, annotate, write_jpeg_atomic
from pegwatch.device.preview.look import PreviewLocaliser, look_at
from pegwatch.device.preview.page import preview_app
from pegwatch.simulation.camera import open_source
from pegwatch.simulation.render import Conditions, random_contents, render
from pegwatch.vision.profile import load_profile
from pegwatch.vision.sources import Frame

PROFILE = load_profile("invicta-12x4")


def client_for(app):
    import warnings

    with warnings.catch_warnings():
        # Starlette's TestClient still runs on httpx here; its notice about httpx2 is not ours.
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient as Client
    return Client(app)


def _board(blur: float = 0.0, size=(1640, 1232)) -> np.ndarray:
    contents = random_contents(PROFILE, np.random.default_rng(3), rows_played=5)
    cond = Conditions.easy().with_(width=size[0], height=size[1], blur_sigma=blur)
    return render(PROFILE, contents, cond, seed=4).image


class Still:
    """A camera that always shows the same picture."""

    def __init__(self, image: np.ndarray) -> None:
        self.image = image
        self.reads = 0
        self.closed = False

    def read(self) -> Frame:
        self.reads += 1
        return Frame(self.image.copy(), 1_000 + self.reads, self.reads)

    def close(self) -> None:
        self.closed = True


class Stuck:
    """A camera whose read never returns until released: the page must not wait for it."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def read(self) -> Frame:
        self.release.wait(30)
        raise OSError("camera unplugged")


def test_a_rendered_board_is_found_by_its_markers_measured_and_sharp():
    look, _ = look_at(_board(), PROFILE, PreviewLocaliser(PROFILE))
    assert look.found and look.markers_found and look.method == "markers"
    assert look.markers_seen == (0, 1, 2, 3) and look.markers_total == 4
    # The renderer's camera: focal 1000 px at the easy distance; hardware.md's arithmetic gives ~3 px/mm.
    assert 2.5 < look.px_per_mm < 3.6
    assert look.big_enough and look.sharp and look.good
    assert look.lines()[0] == "markers found: 4 of 4 (ids 0, 1, 2, 3)"


def test_a_blurred_board_is_found_but_called_soft():
    sharp, _ = look_at(_board(), PROFILE, PreviewLocaliser(PROFILE))
    soft, _ = look_at(_board(blur=3.0), PROFILE, PreviewLocaliser(PROFILE))
    assert soft.found and soft.sharp is False and not soft.good
    assert soft.sharpness < sharp.sharpness and soft.min_sharpness == sharp.min_sharpness
    assert "SOFT" in soft.lines()[2]


def test_the_preview_s_own_sharpness_falls_with_blur_at_any_distance():
    """The measure used when the vision package gives none: the Laplacian's
    variance on the board warped to 2 px/mm, so a blur of the same size in
    millimetres scores alike from near and far."""
    from pegwatch.device.preview.look import MIN_SHARPNESS, board_sharpness

    def measure(blur_mm: float, size, focal: float) -> float:
        contents = random_contents(PROFILE, np.random.default_rng(3), rows_played=5)
        cond = Conditions.easy().with_(width=size[0], height=size[1], focal_px=focal)
        px = focal / cond.distance_mm
        image = render(PROFILE, contents, cond.with_(blur_sigma=blur_mm * px), seed=4).image
        loc = PreviewLocaliser(PROFILE).locate(image)
        return board_sharpness(image, loc.image_to_board, PROFILE.size_mm)

    for size, focal in (((1640, 1232), 1000.0), ((2304, 1296), 1400.0)):
        assert measure(0.0, size, focal) > 2 * MIN_SHARPNESS
        assert measure(1.0, size, focal) < MIN_SHARPNESS


def test_a_small_picture_has_too_few_pixels_per_mm():
    small = cv2.resize(_board(), (820, 616), interpolation=cv2.INTER_AREA)
    look, _ = look_at(small, PROFILE, PreviewLocaliser(PROFILE))
    assert look.px_per_mm is not None and look.px_per_mm < look.min_px_per_mm
    assert look.big_enough is False and "TOO FEW" in look.lines()[1]


def test_a_blank_frame_says_the_board_is_not_found():
    look, _ = look_at(np.full((720, 960, 3), 128, np.uint8), PROFILE, PreviewLocaliser(PROFILE))
    assert not look.found and not look.markers_found and look.method == "none"
    assert look.px_per_mm is None and look.sharpness is None and not look.good
    assert look.lines()[0].startswith("board not found: ")
    assert look.lines()[1].startswith("pixels per mm: not measured")


def test_the_jpeg_is_written_atomically_decodes_and_has_the_grid_drawn(tmp_path):
    image = _board()
    out = tmp_path / "view.jpg"
    snap = annotate(image, PROFILE, PreviewLocaliser(PROFILE))
    write_jpeg_atomic(out, snap.jpeg)
    assert [p.name for p in tmp_path.iterdir()] == ["view.jpg"]  # no temporary file left
    drawn = cv2.imread(str(out))
    assert drawn is not None and drawn.shape == image.shape
    # The grid: each code hole of row 1 gets a cyan circle around it.
    loc = PreviewLocaliser(PROFILE).locate(image)
    centre = loc.to_image([PROFILE.hole_centre_mm(1, 1)])[0]
    r = PROFILE.code_hole_diameter_mm / 2 * snap.look.px_per_mm
    ring = [(round(centre[0] + r * np.cos(t)), round(centre[1] + r * np.sin(t)))
            for t in np.linspace(0, 2 * np.pi, 16, endpoint=False)]
    cyan = [drawn[y, x] for x, y in ring]
    assert sum(1 for b, g, rr in cyan if b > 180 and g > 180 and rr < 110) >= 10
    plain = [image[y, x] for x, y in ring]
    assert sum(1 for b, g, rr in plain if b > 180 and g > 180 and rr < 110) == 0


def test_the_page_and_the_frame_from_a_rendered_camera():
    camera = PreviewCamera(open_source("render", profile=PROFILE), PROFILE, fps=20)
    with camera:
        client = client_for(preview_app(camera))
        assert client.get("/frame.jpg").status_code == 503  # nothing taken yet
        camera.start()
        assert camera.wait_for_snapshot(0, timeout=60) is not None
        page = client.get("/")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        text = page.text
        assert '<img id="frame" src="frame.jpg"' in text and "viewport" in text
        assert "markers found: 4 of 4" in text and "pixels per mm:" in text and "sharpness:" in text
        assert "http://" not in text and "https://" not in text  # nothing fetched from elsewhere
        frame = client.get("/frame.jpg")
        assert frame.status_code == 200 and frame.headers["content-type"] == "image/jpeg"
        decoded = cv2.imdecode(np.frombuffer(frame.content, np.uint8), cv2.IMREAD_COLOR)
        assert decoded is not None and decoded.shape[2] == 3
        status = client.get("/status.json").json()
        assert status["look"]["markers_found"] is True and status["look"]["found"] is True
        assert status["look"]["min_px_per_mm"] > 0 and status["ok"] == [True, True, True]


def test_the_page_says_when_the_markers_are_not_found():
    camera = PreviewCamera(Still(np.zeros((480, 640, 3), np.uint8)), PROFILE)
    with camera:
        camera.step()
        client = client_for(preview_app(camera))
        text = client.get("/").text
        assert "board not found" in text and 'class="bad"' in text
        status = client.get("/status.json").json()
        assert status["look"]["markers_found"] is False and status["look"]["px_per_mm"] is None
        assert status["ok"] == [False, False, False]
        assert client.get("/frame.jpg").status_code == 200  # the picture is still shown


def test_a_stuck_camera_never_blocks_the_page():
    source = Stuck()
    camera = PreviewCamera(source, PROFILE, retry_s=0.01).start()
    try:
        client = client_for(preview_app(camera))
        # The capture thread is inside read(); every route answers at once.
        assert client.get("/").status_code == 200
        assert client.get("/frame.jpg").status_code == 503
        assert client.get("/status.json").json()["lines"] == ["no picture yet: waiting for the first frame"]
    finally:
        source.release.set()
        camera.close()


def test_the_cli_writes_one_jpeg_and_exits_1_for_a_blank_view(tmp_path, capsys):
    blank = tmp_path / "blank"
    blank.mkdir()
    cv2.imwrite(str(blank / "a.png"), np.full((480, 640, 3), 90, np.uint8))
    out = tmp_path / "view.jpg"
    rc = main(["preview", "--source", f"images:{blank}", "--once", "--jpeg", str(out)])
    assert rc == 1
    printed = capsys.readouterr().out
    assert "board not found" in printed and f"wrote {out}" in printed
    assert cv2.imread(str(out)) is not None


def test_the_cli_refreshes_the_jpeg_from_the_rendered_camera(tmp_path, capsys):
    out = tmp_path / "view.jpg"
    rc = main(["preview", "--source", "render", "--jpeg", str(out), "--seconds", "3"])
    assert rc == 0 and cv2.imread(str(out)) is not None
    assert "markers found: 4 of 4" in capsys.readouterr().out


def test_the_cli_asks_where_to_show_it(capsys):
    assert main(["preview", "--source", "render"]) == 2
    assert "--jpeg PATH, --http HOST:PORT" in capsys.readouterr().err
    assert main(["preview", "--source", "render", "--http", "nowhere"]) == 2
    assert "--http: 'nowhere' is not HOST:PORT" in capsys.readouterr().err


@pytest.mark.parametrize("value, expected", [
    ("0.0.0.0:8000", ("0.0.0.0", 8000)), ("127.0.0.1:1", ("127.0.0.1", 1)),
    ("[::]:8080", ("::", 8080)), ("table-7.local:80", ("table-7.local", 80)),
])
def test_listen_addresses(value, expected):
    assert parse_listen(value) == expected


@pytest.mark.parametrize("value", ["8000", ":8000", "host:0", "host:70000", "a b:80", "host:x"])
def test_bad_listen_addresses(value):
    with pytest.raises(ValueError):
        parse_listen(value)


def test_the_preview_setting_is_off_by_default_and_checked():
    assert PreviewSettings().enabled is False
    assert PreviewSettings.from_mapping({"enabled": True, "listen": "127.0.0.1:9000"}, source="t.toml").address \
        == ("127.0.0.1", 9000)
    with pytest.raises(ConfigError, match=r"^t.toml: preview.enabled: 'yes' is not allowed"):
        PreviewSettings.from_mapping({"enabled": "yes"}, source="t.toml")
    with pytest.raises(ConfigError, match=r"^t.toml: preview.listen: "):
        PreviewSettings.from_mapping({"listen": "8000"}, source="t.toml")
    with pytest.raises(ConfigError, match=r"^t.toml: preview.port: unknown key"):
        PreviewSettings.from_mapping({"port": 8000}, source="t.toml")


def test_the_page_is_served_by_uvicorn_on_a_real_socket(tmp_path):
    import socket
    import urllib.request

    from pegwatch.device.preview.page import serve

    camera = PreviewCamera(Still(_board(size=(960, 720))), PROFILE)
    with camera:
        camera.step()
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = serve(preview_app(camera), "127.0.0.1", port)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        try:
            for _ in range(500):
                if server.started:
                    break
                threading.Event().wait(0.01)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/frame.jpg", timeout=10) as reply:
                body = reply.read()
            assert body[:2] == b"\xff\xd8"  # a JPEG
        finally:
            server.should_exit = True
            thread.join(10)
    assert Path(tmp_path).is_dir()


PHOTOS = Path(__file__).resolve().parents[3] / "shared" / "photos"


@pytest.mark.skipif(not (PHOTOS / "index.json").is_file(), reason="the real photos (../shared/photos) are not here")
def test_a_real_studio_photo_is_measured_sharp_and_a_blurred_copy_soft():
    """The wilort photo (a real board, real lens, no markers), placed by the
    hole centres measured by eye: its resolution is what those points say, the
    photo is sharp, and a blur of 1.6 mm is called soft, by whichever measure
    is in use (and by the preview's own one at 0.8 mm)."""
    import ast
    import json

    from pegwatch.device.preview.look import MIN_SHARPNESS, board_sharpness
    from pegwatch.vision.localise import Localisation

    entry = json.loads((PHOTOS / "index.json").read_text())[0]
    assert entry["file"] == "wilort__mastermind-solver/mastermind.jpg"
    raw = entry["hole_points_mm_to_px"]
    points = np.array((ast.literal_eval(raw) if isinstance(raw, str) else raw)["points"], dtype=np.float64)
    profile = load_profile(str(PHOTOS / "profiles" / "wilort-10x4.toml"))
    h, _ = cv2.findHomography(points[:, 2:], points[:, :2])

    class ByEye:
        method = "corners"

        def locate(self, frame, *, at_ns=None):
            return Localisation(ok=True, method="corners", image_to_board=h, size_mm=profile.size_mm)

    photo = cv2.imread(str(PHOTOS / entry["file"]))
    look, _ = look_at(photo, profile, ByEye())
    # Two holes 30 mm apart in row 1 are 192 px apart on the photo: about 6 px/mm there, less at the centre.
    assert 4.0 < look.px_per_mm < 6.5 and look.big_enough
    assert look.found and look.sharp and look.method == "corners" and not look.markers_found
    ppm = look.px_per_mm
    soft, _ = look_at(cv2.GaussianBlur(photo, (0, 0), 1.6 * ppm), profile, ByEye())
    assert soft.sharp is False
    assert board_sharpness(photo, h, profile.size_mm) > MIN_SHARPNESS
    assert board_sharpness(cv2.GaussianBlur(photo, (0, 0), 0.8 * ppm), h, profile.size_mm) < MIN_SHARPNESS


def test_a_table_set_up_with_fixed_corners_is_previewed_with_them(tmp_path):
    """No markers on the tray: the corners the set-up kept (beside the journal) place the board."""
    from types import SimpleNamespace

    from pegwatch.device.cli.preview_cmd import _localiser
    from pegwatch.simulation.render import BoardContents
    from pegwatch.vision.calibrate import calibrate

    empty = BoardContents(guesses=(None,) * PROFILE.rows, keys=(None,) * PROFILE.rows, secret=None,
                          shield_open=False)
    shot = render(PROFILE, empty, Conditions.easy().with_(width=1280, height=960, markers=False), seed=4)
    corners = [tuple(map(float, xy)) for xy in shot.corners_px]
    cal = calibrate([shot.image], [{"rules": "mso", "secret": None, "rows": []}], PROFILE, corners=corners)
    cal.save(tmp_path / "calibration.json")
    cfg = SimpleNamespace(calibration=None, journal=tmp_path / "journal.sqlite")
    localiser = _localiser(cfg, PROFILE)
    assert localiser is not None and localiser.method == "corners"
    look, _ = look_at(shot.image, PROFILE, localiser)
    assert look.found and look.method == "corners" and not look.markers_found
    assert look.lines()[0] == "markers not found; the board was located by corners"
    assert _localiser(SimpleNamespace(calibration=None, journal=tmp_path / "elsewhere" / "j.sqlite"), PROFILE) is None


def test_the_cli_serves_the_page_until_its_seconds_are_up(capsys):
    import json
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result: dict[str, int] = {}
    thread = threading.Thread(target=lambda: result.setdefault("rc", main(
        ["preview", "--source", "render", "--http", f"127.0.0.1:{port}", "--seconds", "20"])), daemon=True)
    thread.start()
    status = None
    for _ in range(2000):  # polls until the page answers with a picture's verdicts
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/status.json", timeout=5) as reply:
                status = json.loads(reply.read())
            if status["look"] is not None:
                break
        except OSError:
            pass
        threading.Event().wait(0.05)
    assert status is not None and status["look"]["markers_found"] is True
    thread.join(60)
    assert not thread.is_alive() and result["rc"] == 0
    assert f"the camera page: http://127.0.0.1:{port}/" in capsys.readouterr().err
