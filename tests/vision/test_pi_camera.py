"""The Pi camera through a picamera2 test double (picamera2 cannot be imported here).

The double records what picamera2 is asked (configurations, controls,
autofocus cycles) and answers with the sensor modes and controls real
modules report, so the tests check the requests the camera would get:
the full-view sensor mode, FrameDurationLimits from ``fps``, the lens set
for the mount (never continuous autofocus) and the exposure lock.
"""

from __future__ import annotations

import sys
import time
import types
from typing import Any, ClassVar

import numpy as np
import pytest

from pegwatch.vision.sources import (
    CameraUnavailableError,
    PacedSource,
    Picamera2Source,
    ReopeningSource,
    SourceError,
    open_source,
)
from pegwatch.vision.sources.pi_camera import (
    AF_MODE_MANUAL,
    frame_duration_us,
    full_view_mode,
    lens_position,
)

# What picamera2's sensor_modes lists on real modules (size, crop_limits, bit depth).
IMX708 = [  # Camera Module 3: 4608 x 2592 pixel array
    {"size": (1536, 864), "crop_limits": (768, 432, 3072, 1728), "bit_depth": 10, "unpacked": "SRGGB10"},
    {"size": (2304, 1296), "crop_limits": (0, 0, 4608, 2592), "bit_depth": 10, "unpacked": "SRGGB10"},
    {"size": (4608, 2592), "crop_limits": (0, 0, 4608, 2592), "bit_depth": 10, "unpacked": "SRGGB10"},
]
IMX477 = [  # HQ camera: 4056 x 3040
    {"size": (1332, 990), "crop_limits": (696, 528, 2664, 1980), "bit_depth": 10, "unpacked": "SRGGB10"},
    {"size": (2028, 1080), "crop_limits": (0, 440, 4056, 2160), "bit_depth": 12, "unpacked": "SRGGB12"},
    {"size": (2028, 1520), "crop_limits": (0, 0, 4056, 3040), "bit_depth": 12, "unpacked": "SRGGB12"},
    {"size": (4056, 3040), "crop_limits": (0, 0, 4056, 3040), "bit_depth": 12, "unpacked": "SRGGB12"},
]
IMX219 = [  # Camera Module 2: 3280 x 2464
    {"size": (640, 480), "crop_limits": (1000, 752, 1280, 960), "bit_depth": 10, "unpacked": "SRGGB10"},
    {"size": (1640, 1232), "crop_limits": (0, 0, 3280, 2464), "bit_depth": 10, "unpacked": "SRGGB10"},
    {"size": (1920, 1080), "crop_limits": (680, 692, 1920, 1080), "bit_depth": 10, "unpacked": "SRGGB10"},
    {"size": (3280, 2464), "crop_limits": (0, 0, 3280, 2464), "bit_depth": 10, "unpacked": "SRGGB10"},
]


@pytest.mark.parametrize(
    ("modes", "asked", "chosen"),
    [
        (IMX708, (1640, 1232), (2304, 1296)),
        (IMX708, (1280, 720), (2304, 1296)),  # not the faster, cropped 1536x864
        (IMX708, (4000, 2000), (4608, 2592)),
        (IMX708, (9000, 9000), (4608, 2592)),  # nothing big enough: the largest full view
        (IMX477, (1640, 1232), (2028, 1520)),  # not the cropped 2028x1080
        (IMX477, (2028, 1080), (2028, 1520)),
        (IMX219, (1640, 1232), (1640, 1232)),
        (IMX219, (1920, 1080), (3280, 2464)),  # not the cropped 1920x1080
    ],
)
def test_full_view_mode_never_crops(modes, asked, chosen):
    mode = full_view_mode(modes, asked)
    assert mode is not None and tuple(mode["size"]) == chosen
    assert mode["crop_limits"][:2] == (0, 0)


def test_full_view_mode_without_modes():
    assert full_view_mode([], (640, 480)) is None


def test_focus_and_frame_rate_arithmetic():
    assert lens_position(50) == 2.0  # 50 cm is 2 dioptres
    assert lens_position(36) == pytest.approx(2.778, abs=1e-3)
    assert frame_duration_us(10) == 100_000 and frame_duration_us(30) == 33_333
    for bad in (0, -5):
        with pytest.raises(SourceError):
            lens_position(bad)
        with pytest.raises(SourceError):
            frame_duration_us(bad)


class FakeRequest:
    def __init__(self, cam: FakePicamera2, stamp: int) -> None:
        self.cam = cam
        self.stamp = stamp

    def get_metadata(self) -> dict[str, Any]:
        return {"SensorTimestamp": self.stamp}

    def make_array(self, name: str) -> np.ndarray:
        assert name == "main"
        width, height = self.cam.main_size
        return np.full((height, width, 3), self.cam.frames % 256, np.uint8)

    def release(self) -> None:
        self.cam.calls.append("release")


class FakePicamera2:
    """A test double of picamera2.Picamera2: records calls; no camera exists here.

    ``modes`` and ``lens`` say which module it is (a Camera Module 3 by
    default; ``lens = None`` for a fixed-focus one). AE/AWB metadata wander
    for a few frames, then settle. Class attributes set the next instance's
    behaviour.
    """

    instances: ClassVar[list[FakePicamera2]] = []
    modes: ClassVar[list[dict[str, Any]]] = IMX708
    lens: ClassVar[tuple[float, float, float] | None] = (0.0, 15.0, 1.0)
    fail_open = False
    has_flush = True
    has_sensor_config = True
    af_position = 3.1

    def __init__(self, camera_num: int = 0) -> None:
        if FakePicamera2.fail_open:
            raise RuntimeError("Camera __init__ sequence did not complete.")
        self.calls: list[Any] = [("init", camera_num)]
        self.frames = 0
        self.main_size = (0, 0)
        self.broken = False
        self.lens_position = None if self.lens is None else self.lens[2]
        FakePicamera2.instances.append(self)

    @property
    def sensor_modes(self) -> list[dict[str, Any]]:
        return list(self.modes)

    @property
    def camera_controls(self) -> dict[str, tuple[Any, Any, Any]]:
        controls: dict[str, tuple[Any, Any, Any]] = {
            "ExposureTime": (26, 220_000_000, 20_000),
            "FrameDurationLimits": (8_333, 220_000_000, 33_333),
        }
        if self.lens is not None:
            controls["LensPosition"] = self.lens
            controls["AfMode"] = (0, 2, 0)
        return controls

    def create_video_configuration(self, **kwargs: Any) -> dict[str, Any]:
        if "sensor" in kwargs and not FakePicamera2.has_sensor_config:
            raise TypeError("create_video_configuration() got an unexpected keyword argument 'sensor'")
        self.calls.append(("create_video_configuration", kwargs))
        self.main_size = kwargs["main"]["size"]
        return dict(kwargs)

    def configure(self, config: dict[str, Any]) -> None:
        self.calls.append(("configure", config))
        self._apply(config.get("controls", {}))

    def start(self) -> None:
        self.calls.append("start")

    def _apply(self, controls: dict[str, Any]) -> None:
        if "LensPosition" in controls:
            self.lens_position = controls["LensPosition"]

    def set_controls(self, controls: dict[str, Any]) -> None:
        self.calls.append(("set_controls", dict(controls)))
        self._apply(controls)

    def autofocus_cycle(self) -> bool:
        self.calls.append("autofocus_cycle")
        self.lens_position = FakePicamera2.af_position
        return True

    def capture_metadata(self) -> dict[str, Any]:
        self.frames += 1
        settle = min(self.frames, 6)
        metadata = {
            "ExposureTime": 10000 + 3000 * (6 - settle),
            "AnalogueGain": 2.0 + 0.5 * (6 - settle),
            "ColourGains": (1.8 + 0.1 * (6 - settle), 1.5),
        }
        if self.lens_position is not None:
            metadata["LensPosition"] = self.lens_position
        return metadata

    def capture_request(self, **kwargs: Any) -> FakeRequest:
        if self.broken:
            raise RuntimeError("camera gone")
        if "flush" in kwargs and not FakePicamera2.has_flush:
            raise TypeError("unexpected keyword argument 'flush'")
        self.frames += 1
        self.calls.append(("capture_request", kwargs))
        # Without flush the first request is one queued before the call.
        stale = not kwargs.get("flush") and self.calls.count(("capture_request", kwargs)) == 1
        return FakeRequest(self, time.monotonic_ns() - (50_000_000 if stale else -1_000))

    def stop(self) -> None:
        self.calls.append("stop")

    def close(self) -> None:
        self.calls.append("close")

    # -- what the tests read ---------------------------------------------------

    def named(self, name: str) -> list[Any]:
        return [c[1] for c in self.calls if isinstance(c, tuple) and c[0] == name]

    def every_control(self) -> list[dict[str, Any]]:
        """Every control set: at configure time and later."""
        return [c.get("controls", {}) for c in self.named("configure")] + self.named("set_controls")


@pytest.fixture
def fake_picamera2(monkeypatch):
    """The double, also as the ``picamera2`` module (for the lazy import)."""
    module = types.ModuleType("picamera2")
    module.Picamera2 = FakePicamera2  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "picamera2", module)
    monkeypatch.setattr(FakePicamera2, "instances", [])
    monkeypatch.setattr(FakePicamera2, "modes", IMX708)
    monkeypatch.setattr(FakePicamera2, "lens", (0.0, 15.0, 1.0))
    monkeypatch.setattr(FakePicamera2, "fail_open", False)
    monkeypatch.setattr(FakePicamera2, "has_flush", True)
    monkeypatch.setattr(FakePicamera2, "has_sensor_config", True)
    return FakePicamera2


def test_the_camera_is_configured_for_the_whole_view_at_the_frame_rate(fake_picamera2):
    with Picamera2Source(size=(1640, 1232), fps=10, focus_cm=40, settle_frames=4,
                         picamera2_class=fake_picamera2) as src:
        cam = fake_picamera2.instances[0]
        names = [c if isinstance(c, str) else c[0] for c in cam.calls]
        assert names[:4] == ["init", "create_video_configuration", "configure", "start"]
        config = cam.named("configure")[0]
        assert config["main"] == {"size": (1640, 1232), "format": "RGB888"}
        # The binned full-view mode, not the cropped fast one libcamera might pick.
        assert config["sensor"] == {"output_size": (2304, 1296), "bit_depth": 10}
        assert config["controls"]["FrameDurationLimits"] == (100_000, 100_000)
        # The lens at 40 cm from the very first frame, in manual mode.
        assert config["controls"]["AfMode"] == AF_MODE_MANUAL
        assert config["controls"]["LensPosition"] == pytest.approx(2.5)
        locks = cam.named("set_controls")
        assert locks == [{
            "AeEnable": False, "AwbEnable": False, "ExposureTime": 10000, "AnalogueGain": 2.0,
            "ColourGains": (1.8, 1.5), "AfMode": AF_MODE_MANUAL, "LensPosition": pytest.approx(2.5),
            "FrameDurationLimits": (100_000, 100_000),
        }]
        assert cam.frames >= 6 + 3  # locked only after the metadata stopped moving
        assert "autofocus_cycle" not in cam.calls
        assert src.sensor_mode is not None and src.sensor_mode["size"] == (2304, 1296)
        frame = src.read()
        assert frame.image.shape == (1232, 1640, 3) and frame.image.dtype == np.uint8
        assert ("capture_request", {"flush": True}) in cam.calls
    assert cam.calls[-2:] == ["stop", "close"]
    # Never continuous autofocus: hands over the board would make it hunt.
    assert all(c.get("AfMode", AF_MODE_MANUAL) == AF_MODE_MANUAL for c in cam.every_control())


def test_focus_once_runs_one_autofocus_cycle_then_locks_the_lens(fake_picamera2):
    fake_picamera2.af_position = 2.9
    src = Picamera2Source(size=(640, 480), focus="once", picamera2_class=fake_picamera2)
    cam = fake_picamera2.instances[0]
    assert cam.calls.count("autofocus_cycle") == 1
    assert "LensPosition" not in cam.named("configure")[0]["controls"]  # autofocus decides
    lock = cam.named("set_controls")[-1]
    assert lock["AfMode"] == AF_MODE_MANUAL and lock["LensPosition"] == 2.9
    # A camera replugged comes back at the locked lens position, with no new cycle.
    cam.broken = True
    with pytest.raises(CameraUnavailableError, match="camera gone"):
        src.read()
    src.read()
    again = fake_picamera2.instances[1]
    assert "autofocus_cycle" not in again.calls
    assert again.named("configure")[0]["controls"]["LensPosition"] == 2.9
    assert again.named("set_controls") == cam.named("set_controls")
    src.close()
    for c in cam.every_control() + again.every_control():
        assert c.get("AfMode", AF_MODE_MANUAL) == AF_MODE_MANUAL


@pytest.mark.parametrize("focus", ["distance", "once"])
def test_a_fixed_focus_module_is_left_alone(fake_picamera2, focus):
    fake_picamera2.lens = None  # the HQ camera: no LensPosition control
    fake_picamera2.modes = IMX477
    with Picamera2Source(size=(1640, 1232), focus=focus, picamera2_class=fake_picamera2):
        cam = fake_picamera2.instances[0]
        assert "autofocus_cycle" not in cam.calls
        for controls in cam.every_control():
            assert "AfMode" not in controls and "LensPosition" not in controls
        assert cam.named("configure")[0]["sensor"]["output_size"] == (2028, 1520)


def test_a_focus_beyond_the_lens_is_clamped(fake_picamera2):
    with Picamera2Source(size=(640, 480), focus_cm=5, picamera2_class=fake_picamera2):
        cam = fake_picamera2.instances[0]
        assert cam.named("set_controls")[-1]["LensPosition"] == 15.0  # 20 dioptres asked


def test_older_picamera2_gets_the_mode_through_the_raw_stream(fake_picamera2):
    fake_picamera2.has_sensor_config = False
    with Picamera2Source(size=(1640, 1232), picamera2_class=fake_picamera2):
        config = fake_picamera2.instances[0].named("configure")[0]
        assert "sensor" not in config
        assert config["raw"] == {"size": (2304, 1296), "format": "SRGGB10"}


def test_open_source_passes_the_camera_settings_through_the_lazy_import(fake_picamera2):
    src = open_source("picamera2:1", size=(1640, 1232), fps=5, focus="distance", focus_cm=50)
    cam = fake_picamera2.instances[0]
    assert cam.calls[0] == ("init", 1)
    controls = cam.named("configure")[0]["controls"]
    assert controls["FrameDurationLimits"] == (200_000, 200_000)
    assert controls["LensPosition"] == 2.0
    src.close()
    with pytest.raises(SourceError, match="focus 'always'"):
        Picamera2Source(focus="always", picamera2_class=fake_picamera2)


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
    assert first.named("set_controls") == second.named("set_controls")
    src.close()


def test_a_camera_that_fails_while_settling_is_let_go(fake_picamera2, monkeypatch):
    def no_focus(self):
        self.calls.append("autofocus_cycle")
        raise RuntimeError("autofocus cycle did not complete")

    monkeypatch.setattr(fake_picamera2, "autofocus_cycle", no_focus)
    with pytest.raises(CameraUnavailableError, match="failed while settling: autofocus"):
        Picamera2Source(size=(32, 24), focus="once", picamera2_class=fake_picamera2)
    cam = fake_picamera2.instances[0]
    assert cam.calls[-2:] == ["stop", "close"]  # released: the next attempt will not find it busy


def test_picamera2_missing_or_unopenable(monkeypatch, fake_picamera2):
    fake_picamera2.fail_open = True
    with pytest.raises(CameraUnavailableError, match="cannot be opened"):
        Picamera2Source()
    monkeypatch.setitem(sys.modules, "picamera2", None)
    with pytest.raises(CameraUnavailableError, match="apt install python3-picamera2"):
        Picamera2Source()


# --- pacing and reopening ---------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000_000_000

    def __call__(self) -> int:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += round(seconds * 1e9)


class CountingSource:
    """Frames on demand; ``failures`` reads raise first; records when it was read."""

    def __init__(self, clock: FakeClock, failures: int = 0) -> None:
        self.clock = clock
        self.failures = failures
        self.reads: list[int] = []
        self.closed = False

    def read(self) -> tuple[np.ndarray, int]:
        self.reads.append(self.clock.now)
        if self.failures:
            self.failures -= 1
            raise OSError("unplugged")
        return np.zeros((4, 4, 3), np.uint8), self.clock.now

    def close(self) -> None:
        self.closed = True


def test_the_reader_runs_at_most_fps_times_a_second():
    clock = FakeClock()
    inner = CountingSource(clock)
    paced = PacedSource(inner, fps=4, now_ns=clock, wait=clock.sleep)
    for _ in range(6):
        paced.read()
        clock.now += 50_000_000  # the reader takes 50 ms per frame
    gaps = [b - a for a, b in zip(inner.reads, inner.reads[1:], strict=False)]
    assert gaps == [250_000_000] * 5
    # A slow reader is not slowed down further.
    clock.now += 400_000_000
    before = paced.waited_ns
    paced.read()
    assert paced.waited_ns == before
    paced.close()
    assert inner.closed
    with pytest.raises(SourceError):
        paced.read()


def test_a_camera_missing_at_start_is_opened_later_with_backoff():
    clock = FakeClock()
    opened: list[int] = []
    source = CountingSource(clock)

    def opener() -> CountingSource:
        opened.append(clock.now)
        if len(opened) < 3:
            raise CameraUnavailableError("no camera on CAM0")
        return source

    camera = ReopeningSource(opener, first_s=0.5, max_s=4, now_ns=clock)
    with pytest.raises(CameraUnavailableError, match="no camera on CAM0"):
        camera.read()
    # Asked again at once: no attempt, just the answer.
    with pytest.raises(CameraUnavailableError, match=r"next try in 0\.5 s"):
        camera.read()
    assert len(opened) == 1
    clock.sleep(0.5)
    with pytest.raises(CameraUnavailableError):
        camera.read()
    clock.sleep(0.5)
    with pytest.raises(CameraUnavailableError, match=r"next try in 0\.5 s"):
        camera.read()  # the wait doubled to 1 s
    clock.sleep(0.5)
    frame, _ = camera.read()
    assert frame.shape == (4, 4, 3) and camera.is_open
    assert [t - opened[0] for t in opened] == [0, 500_000_000, 1_500_000_000]

    # Lost later: the source is kept (it reopens its device), its reads put off.
    source.failures = 1
    with pytest.raises(CameraUnavailableError, match="unplugged"):
        camera.read()
    with pytest.raises(CameraUnavailableError, match="next try"):
        camera.read()
    clock.sleep(0.5)
    camera.read()
    assert len(opened) == 3
    camera.close()
    assert source.closed
