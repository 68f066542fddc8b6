"""Frame sources: image folders, video files, the renderer, the Pi camera (through a test double)."""

from __future__ import annotations

import itertools
import sys
import time
import types
from typing import ClassVar

import cv2
import numpy as np
import pytest

from pegwatch.simulation.camera import RenderedSource, open_source
from pegwatch.simulation.render import BoardContents, Conditions, random_contents
from pegwatch.vision.profile import load_profile
from pegwatch.vision.sources import (
    CameraUnavailableError,
    EndOfFrames,
    Frame,
    ImageFolderSource,
    Picamera2Source,
    SourceError,
    VideoCaptureSource,
)


def _write_images(folder, n):
    folder.mkdir()
    for i in range(n):
        img = np.full((40, 60, 3), 20 * i, np.uint8)
        cv2.imwrite(str(folder / f"img{i:02d}.png"), img)
    return folder


def test_image_folder_in_order_with_repeat(tmp_path):
    folder = _write_images(tmp_path / "shots", 3)
    (folder / "notes.txt").write_text("not an image")
    with ImageFolderSource(folder, repeat=2) as src:
        frames = [src.read() for _ in range(6)]
        with pytest.raises(EndOfFrames):
            src.read()
    assert [int(f.image[0, 0, 0]) for f in frames] == [0, 0, 20, 20, 40, 40]
    assert [f.index for f in frames] == list(range(6))
    assert all(a.at_ns <= b.at_ns for a, b in itertools.pairwise(frames))
    assert frames[0].image.shape == (40, 60, 3) and frames[0].image.dtype == np.uint8


def test_image_files_loop_and_errors(tmp_path):
    folder = _write_images(tmp_path / "shots", 2)
    src = ImageFolderSource([folder / "img01.png", folder / "img00.png"], loop=True)
    assert [int(src.read().image[0, 0, 0]) for _ in range(3)] == [20, 0, 20]
    src.close()
    with pytest.raises(SourceError, match="closed"):
        src.read()
    with pytest.raises(SourceError, match="no such image"):
        ImageFolderSource(tmp_path / "missing.png")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError, match="holds no images"):
        ImageFolderSource(tmp_path / "empty")
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not a png")
    with pytest.raises(SourceError, match="not a readable image"):
        ImageFolderSource(bad).read()


def _write_video(path, n=5, size=(64, 48)):
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, size)
    assert writer.isOpened()
    for i in range(n):
        writer.write(np.full((size[1], size[0], 3), 40 * i, np.uint8))
    writer.release()
    return path


def test_video_file_frames_in_order(tmp_path):
    path = _write_video(tmp_path / "game.avi")
    with VideoCaptureSource(str(path)) as src:
        assert not src.live
        levels = [int(src.read().image.mean()) for _ in range(5)]
        with pytest.raises(EndOfFrames):
            src.read()
    assert levels == sorted(levels) and levels[-1] - levels[0] > 100
    with VideoCaptureSource(str(path), loop=True) as src:
        first = [int(src.read().image.mean()) for _ in range(7)]
    assert abs(first[5] - first[0]) < 5


def test_video_errors(tmp_path):
    with pytest.raises(SourceError, match="not found"):
        VideoCaptureSource(str(tmp_path / "nope.mp4"))
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"\x00" * 100)
    with pytest.raises((CameraUnavailableError, EndOfFrames)):
        VideoCaptureSource(str(junk)).read()
    with pytest.raises(CameraUnavailableError, match="cannot open"):
        VideoCaptureSource("/dev/video-none-here", live=True)


def test_rendered_source_caches_until_contents_change():
    p = load_profile("invicta-12x4")
    state = {"contents": BoardContents.empty(p)}
    src = RenderedSource(p, lambda: state["contents"], Conditions.easy(), seed=3)
    a, b = src.read(), src.read()
    assert src.renders == 1
    assert not np.array_equal(a.image, b.image)  # fresh sensor noise per frame
    assert np.abs(a.image.astype(int) - b.image.astype(int)).mean() < 3
    state["contents"] = random_contents(p, np.random.default_rng(1), rows_played=3)
    c = src.read()
    assert src.renders == 2 and src.last.contents == state["contents"]
    assert np.abs(c.image.astype(int) - b.image.astype(int)).mean() > 0.5
    assert c.index == 2


def test_open_source_specs(tmp_path):
    folder = _write_images(tmp_path / "shots", 1)
    with open_source(f"images:{folder}") as src:
        assert isinstance(src, ImageFolderSource)
    video = _write_video(tmp_path / "v.avi")
    with open_source(f"video:{video}") as src:
        assert isinstance(src, VideoCaptureSource)
    with open_source("render", profile=load_profile("lego-10x4"), size=(640, 360)) as src:
        f = src.read()
        assert isinstance(f, Frame) and f.image.shape == (360, 640, 3)
    for bad in ("webcam", "video:", "images:", "picamera2:x"):
        with pytest.raises(SourceError):
            open_source(bad)


# --- the Pi camera, through a test double --------------------------------------------


class FakeRequest:
    def __init__(self, cam, stamp):
        self.cam = cam
        self.stamp = stamp
        self.released = False

    def get_metadata(self):
        return {"SensorTimestamp": self.stamp}

    def make_array(self, name):
        assert name == "main"
        h, w = self.cam.size[1], self.cam.size[0]
        return np.full((h, w, 3), self.cam.frames % 256, np.uint8)

    def release(self):
        self.released = True
        self.cam.calls.append("release")


class FakePicamera2:
    """A test double of the picamera2 API: records calls, no camera exists here.

    AE/AWB metadata wander for a few frames, then settle.
    """

    instances: ClassVar[list[FakePicamera2]] = []
    fail_open = False
    has_flush = True

    def __init__(self, camera_num=0):
        if FakePicamera2.fail_open:
            raise RuntimeError("Camera __init__ sequence did not complete.")
        self.calls = [("init", camera_num)]
        self.frames = 0
        self.size = None
        self.broken = False
        FakePicamera2.instances.append(self)

    def create_video_configuration(self, main, buffer_count):
        self.calls.append(("create_video_configuration", main, buffer_count))
        self.size = main["size"]
        return {"main": main, "buffer_count": buffer_count}

    def configure(self, config):
        self.calls.append(("configure", config))

    def start(self):
        self.calls.append("start")

    def capture_metadata(self):
        self.frames += 1
        settle = min(self.frames, 6)
        return {
            "ExposureTime": 10000 + 3000 * (6 - settle),
            "AnalogueGain": 2.0 + 0.5 * (6 - settle),
            "ColourGains": (1.8 + 0.1 * (6 - settle), 1.5),
        }

    def set_controls(self, controls):
        self.calls.append(("set_controls", dict(controls)))

    def capture_request(self, **kwargs):
        if self.broken:
            raise RuntimeError("camera gone")
        if "flush" in kwargs and not FakePicamera2.has_flush:
            raise TypeError("unexpected keyword argument 'flush'")
        self.frames += 1
        self.calls.append(("capture_request", kwargs))
        # Without flush the first request is one queued before the call.
        stale = not kwargs.get("flush") and self.calls.count(("capture_request", kwargs)) == 1
        stamp = time.monotonic_ns() - (50_000_000 if stale else -1_000)
        return FakeRequest(self, stamp)

    def stop(self):
        self.calls.append("stop")

    def close(self):
        self.calls.append("close")


@pytest.fixture
def fake_picamera2(monkeypatch):
    module = types.ModuleType("picamera2")
    module.Picamera2 = FakePicamera2
    monkeypatch.setitem(sys.modules, "picamera2", module)
    FakePicamera2.instances = []
    FakePicamera2.fail_open = False
    FakePicamera2.has_flush = True
    return FakePicamera2


def test_picamera2_locks_exposure_after_it_settles(fake_picamera2):
    with Picamera2Source(size=(320, 240), settle_frames=4) as src:
        cam = fake_picamera2.instances[0]
        names = [c if isinstance(c, str) else c[0] for c in cam.calls]
        assert names[:4] == ["init", "create_video_configuration", "configure", "start"]
        assert cam.calls[1][1] == {"size": (320, 240), "format": "RGB888"} and cam.calls[1][2] == 2
        locks = [c[1] for c in cam.calls if c[0] == "set_controls"]
        assert locks == [
            {
                "AeEnable": False,
                "AwbEnable": False,
                "ExposureTime": 10000,
                "AnalogueGain": 2.0,
                "ColourGains": (1.8, 1.5),
            }
        ]
        # Locked only after the metadata stopped moving.
        assert cam.frames >= 6 + 3
        frame = src.read()
        assert frame.image.shape == (240, 320, 3) and frame.image.dtype == np.uint8
        assert ("capture_request", {"flush": True}) in cam.calls
        assert cam.calls[-1] == "release"
    assert cam.calls[-2:] == ["stop", "close"]


def test_picamera2_without_flush_drops_stale_frames(fake_picamera2):
    fake_picamera2.has_flush = False
    src = Picamera2Source(size=(32, 24))
    cam = fake_picamera2.instances[0]
    src.read()
    reqs = [c for c in cam.calls if isinstance(c, tuple) and c[0] == "capture_request" and not c[1]]
    assert len(reqs) == 2  # the stale queued frame was released and skipped
    src.close()


def test_picamera2_reopens_after_failure_with_the_same_lock(fake_picamera2):
    src = Picamera2Source(size=(32, 24))
    first = fake_picamera2.instances[0]
    first.broken = True
    with pytest.raises(CameraUnavailableError, match="camera gone"):
        src.read()
    assert "close" in first.calls
    frame = src.read()  # the caller retries: a fresh camera, same exposure lock
    second = fake_picamera2.instances[1]
    assert frame.image.shape == (24, 32, 3)
    lock1 = [c[1] for c in first.calls if c[0] == "set_controls"]
    lock2 = [c[1] for c in second.calls if c[0] == "set_controls"]
    assert lock1 == lock2
    src.close()


def test_picamera2_missing_or_unopenable(monkeypatch, fake_picamera2):
    fake_picamera2.fail_open = True
    with pytest.raises(CameraUnavailableError, match="cannot be opened"):
        Picamera2Source()
    monkeypatch.setitem(sys.modules, "picamera2", None)
    with pytest.raises(CameraUnavailableError, match="apt install python3-picamera2"):
        Picamera2Source()


def test_importing_sources_does_not_import_picamera2():
    import subprocess

    code = "import sys, pegwatch.vision.sources; print('picamera2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
