"""Frame sources: image folders, video files, the renderer (the Pi camera: test_pi_camera.py)."""

from __future__ import annotations

import itertools
import sys

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


# --- the Pi camera: tests/vision/test_pi_camera.py -----------------------------------


def test_importing_sources_does_not_import_picamera2():
    import subprocess

    code = "import sys, pegwatch.vision.sources; print('picamera2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
