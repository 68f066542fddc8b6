"""The Raspberry Pi camera through picamera2: the whole field of view, a fixed
frame rate, the lens set for the mount, exposure and white balance locked.

picamera2 is imported when a source is opened, never at import time: it
exists only on a Pi (python3-picamera2 from apt). The class can be injected
(``picamera2_class``), which is how the tests drive a recording double.

Each choice rests on a document (docs/hardware.md cites them):

* the sensor mode is chosen from ``Picamera2.sensor_modes`` by its
  ``crop_limits``: the smallest mode that reads the whole pixel array and is
  at least the requested size (picamera2 manual, "Sensor modes" and "Sensor
  configuration"), so libcamera never picks a cropped, faster mode;
* ``FrameDurationLimits`` (microseconds, min = max) fixes the frame rate
  (libcamera control reference; picamera2 manual, appendix "Camera
  controls");
* focus: ``AfMode`` Manual with ``LensPosition`` in dioptres (1 / metres) for
  the mount's distance, or one ``autofocus_cycle()`` at set-up and the lens
  locked where it stopped (picamera2 manual, "Autofocus"). Never continuous
  autofocus: hands over the board would make it hunt. A module whose
  ``camera_controls`` has no ``LensPosition`` has a fixed-focus lens and is
  left alone.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np

from pegwatch.vision.sources.base import CameraUnavailableError, Frame, SourceBase, SourceError

logger = logging.getLogger(__name__)

__all__ = [
    "AF_MODE_AUTO",
    "AF_MODE_MANUAL",
    "FOCUS_MODES",
    "Picamera2Source",
    "frame_duration_us",
    "full_view_mode",
    "lens_position",
]

#: libcamera's ``controls::AfModeEnum`` values (AfModeManual, AfModeAuto);
#: ints so that neither libcamera nor picamera2 is needed to name them.
AF_MODE_MANUAL: Final = 0
AF_MODE_AUTO: Final = 1
#: ``distance``: the lens at ``focus_cm``; ``once``: one autofocus cycle, then locked.
FOCUS_MODES: Final = ("distance", "once")


def lens_position(focus_cm: float) -> float:
    """The ``LensPosition`` for a subject ``focus_cm`` away: dioptres, 100 / cm."""
    if not focus_cm > 0:
        raise SourceError(f"focus distance {focus_cm!r} cm must be above 0")
    return 100.0 / focus_cm


def frame_duration_us(fps: float) -> int:
    """The frame duration, in microseconds, that runs the sensor at ``fps``."""
    if not fps > 0:
        raise SourceError(f"frame rate {fps!r} must be above 0")
    return round(1_000_000 / fps)


def full_view_mode(modes: Sequence[Mapping[str, Any]], size: tuple[int, int]) -> Mapping[str, Any] | None:
    """The sensor mode that keeps the whole field of view at ``size`` or more.

    Full-view modes are those whose ``crop_limits`` (x, y, width, height) are
    as wide and as tall as any mode's: they read the whole pixel array,
    binned or not. Of those, the smallest that is at least ``size`` in both
    directions (cheapest to read and scale down), else the largest. ``None``
    when picamera2 lists no modes.
    """
    usable = [m for m in modes if len(m.get("crop_limits", ())) == 4 and len(m.get("size", ())) == 2]
    if not usable:
        return None
    widest = max(m["crop_limits"][2] for m in usable)
    tallest = max(m["crop_limits"][3] for m in usable)
    full = [m for m in usable if m["crop_limits"][2] >= widest and m["crop_limits"][3] >= tallest]
    if not full:  # no single mode is both widest and tallest: take the largest area
        full = [max(usable, key=lambda m: m["crop_limits"][2] * m["crop_limits"][3])]

    def area(m: Mapping[str, Any]) -> int:
        return int(m["size"][0]) * int(m["size"][1])

    big_enough = [m for m in full if m["size"][0] >= size[0] and m["size"][1] >= size[1]]
    return min(big_enough, key=area) if big_enough else max(full, key=area)


class Picamera2Source(SourceBase):
    """The Pi camera (Camera Module 3, HQ camera) through picamera2 (see the module doc).

    On opening: the full-view sensor mode, ``fps`` frames a second, the
    focus (``focus`` = ``"distance"`` at ``focus_cm``, or ``"once"``), then
    auto exposure and auto white balance run until their metadata settles
    (or ``settle_timeout_s`` passes) and are switched off, the settled
    ExposureTime, AnalogueGain and ColourGains fixed, so that the colour
    model calibrated for the table stays valid. The main stream is RGB888,
    which is BGR in memory, as OpenCV wants. ``read`` asks for a request
    that started after the call (``flush``) so a frame queued earlier is
    never returned.
    """

    def __init__(
        self,
        *,
        size: tuple[int, int] = (1280, 720),
        camera_num: int = 0,
        fps: float = 10.0,
        focus: str = "distance",
        focus_cm: float = 36.0,
        settle_frames: int = 8,
        settle_timeout_s: float = 4.0,
        settle_tolerance: float = 0.03,
        exposure_scale: float = 1.0,
        picamera2_class: Any = None,
    ) -> None:
        super().__init__()
        if focus not in FOCUS_MODES:
            raise SourceError(f"focus {focus!r} is not one of {', '.join(FOCUS_MODES)}")
        self.size = size
        self.camera_num = camera_num
        self.fps = fps
        self.focus = focus
        self.focus_cm = focus_cm
        self.frame_duration_us = frame_duration_us(fps)
        self.settle_frames = settle_frames
        self.settle_timeout_s = settle_timeout_s
        self.settle_tolerance = settle_tolerance
        self.exposure_scale = exposure_scale
        self.locked_controls: dict[str, Any] | None = None
        self.sensor_mode: Mapping[str, Any] | None = None
        self._picamera2_class = picamera2_class
        self._cam: Any = None
        self._flush_supported = True
        self._open()

    def _camera_class(self) -> Any:
        if self._picamera2_class is not None:
            return self._picamera2_class
        try:
            from picamera2 import Picamera2
        except ImportError:
            raise CameraUnavailableError(
                "picamera2 is not installed (on Raspberry Pi OS: sudo apt install python3-picamera2)"
            ) from None
        return Picamera2

    def _open(self) -> None:
        camera_class = self._camera_class()
        try:
            cam = camera_class(self.camera_num)
        except (RuntimeError, OSError, IndexError) as exc:
            raise CameraUnavailableError(f"Pi camera {self.camera_num} cannot be opened: {exc}") from None
        try:
            cam.configure(self._configuration(cam))
            cam.start()
        except (RuntimeError, OSError, IndexError) as exc:
            with contextlib.suppress(Exception):
                cam.close()
            raise CameraUnavailableError(f"Pi camera {self.camera_num} cannot be started: {exc}") from None
        self._cam = cam
        try:
            if self.locked_controls is None:
                locked = self._settle()
                locked.update(self._focus_lock(cam))
                locked["FrameDurationLimits"] = (self.frame_duration_us, self.frame_duration_us)
                self.locked_controls = locked
            # Reopening after a failure keeps the first lock: the table's
            # calibration was made with it.
            cam.set_controls(self.locked_controls)
        except Exception as exc:
            # Let go of the camera, or the next attempt finds it busy.
            self._drop()
            if isinstance(exc, CameraUnavailableError):
                raise
            raise CameraUnavailableError(f"Pi camera {self.camera_num} failed while settling: {exc}") from None
        logger.info("Pi camera locked: %s", self.locked_controls)

    def _configuration(self, cam: Any) -> Any:
        """A video configuration: main at ``size``, the full-view sensor mode, fixed fps, focus."""
        controls: dict[str, Any] = {
            "FrameDurationLimits": (self.frame_duration_us, self.frame_duration_us),
        }
        controls.update(self._focus_controls(cam))
        main = {"size": tuple(self.size), "format": "RGB888"}
        try:
            # picamera2 probes each mode (it configures the camera once per mode): before start.
            modes = list(getattr(cam, "sensor_modes", None) or ())
        except Exception as exc:
            logger.warning("Pi camera sensor modes not listed: %s", exc)
            modes = []
        mode = full_view_mode(modes, self.size)
        self.sensor_mode = mode
        if mode is None:
            logger.warning("Pi camera lists no sensor modes; libcamera picks one (it may crop)")
            return cam.create_video_configuration(main=main, buffer_count=2, controls=controls)
        size = (int(mode["size"][0]), int(mode["size"][1]))
        if abs(size[0] * self.size[1] / (size[1] * self.size[0]) - 1.0) > 0.02:
            logger.warning(
                "camera resolution %dx%d is not the sensor's shape %dx%d: the sides are cut off "
                "(docs/hardware.md, the camera's field of view)", *self.size, *size,
            )
        try:
            return cam.create_video_configuration(
                main=main, buffer_count=2, controls=controls,
                sensor={"output_size": size, "bit_depth": int(mode.get("bit_depth", 10))},
            )
        except TypeError:  # picamera2 before the sensor= configuration: ask through the raw stream
            return cam.create_video_configuration(
                main=main, buffer_count=2, controls=controls,
                raw={"size": size, "format": str(mode.get("unpacked", mode.get("format", "")))},
            )

    def _has_focus(self, cam: Any) -> bool:
        return "LensPosition" in (getattr(cam, "camera_controls", None) or {})

    def _focus_controls(self, cam: Any) -> dict[str, Any]:
        """The lens at the mount's distance from the first frame (``distance``)."""
        if not self._has_focus(cam):
            return {}
        if self.locked_controls is not None and "LensPosition" in self.locked_controls:
            return {"AfMode": AF_MODE_MANUAL, "LensPosition": self.locked_controls["LensPosition"]}
        if self.focus != "distance":
            return {}
        return {"AfMode": AF_MODE_MANUAL, "LensPosition": self._clamped(cam, lens_position(self.focus_cm))}

    def _clamped(self, cam: Any, dioptres: float) -> float:
        limits = cam.camera_controls["LensPosition"]
        low, high = float(limits[0]), float(limits[1])
        if not low <= dioptres <= high:
            logger.warning("lens position %.2f dioptres is beyond the lens (%.2f..%.2f); using the nearest",
                           dioptres, low, high)
        return min(max(dioptres, low), high)

    def _focus_lock(self, cam: Any) -> dict[str, Any]:
        """The focus to keep for good: the lens where it was set, or where one AF cycle left it."""
        if not self._has_focus(cam):
            logger.info("Pi camera has a fixed-focus lens: focus left alone")
            return {}
        if self.focus == "distance":
            return {"AfMode": AF_MODE_MANUAL, "LensPosition": self._clamped(cam, lens_position(self.focus_cm))}
        focused = bool(cam.autofocus_cycle())
        position = cam.capture_metadata().get("LensPosition")
        if position is None:
            position = lens_position(self.focus_cm)
            logger.warning("autofocus left no LensPosition; the lens is set for %.0f cm", self.focus_cm)
        elif not focused:
            logger.warning("autofocus did not report focus; the lens is locked at %.2f dioptres", position)
        return {"AfMode": AF_MODE_MANUAL, "LensPosition": self._clamped(cam, float(position))}

    def _settle(self) -> dict[str, Any]:
        """Let AE/AWB converge, then return the controls that fix what they chose."""
        deadline = time.monotonic() + self.settle_timeout_s
        prev: tuple[float, float, float, float] | None = None
        stable = 0
        md: dict[str, Any] = {}
        seen = 0
        while time.monotonic() < deadline:
            md = dict(self._cam.capture_metadata())
            seen += 1
            gains = md.get("ColourGains") or (1.0, 1.0)
            cur = (float(md.get("ExposureTime", 0)), float(md.get("AnalogueGain", 1.0)), float(gains[0]), float(gains[1]))
            if prev is not None and all(
                abs(a - b) <= self.settle_tolerance * max(abs(b), 1e-6) for a, b in zip(cur, prev, strict=True)
            ):
                stable += 1
            else:
                stable = 0
            prev = cur
            if seen >= self.settle_frames and stable >= 3:
                break
        else:
            logger.warning("Pi camera exposure did not settle in %.1f s; locking what it has", self.settle_timeout_s)
        if prev is None:
            raise CameraUnavailableError("Pi camera gave no metadata while settling")
        exposure, gain, red, blue = prev
        return {
            "AeEnable": False,
            "AwbEnable": False,
            "ExposureTime": max(1, round(exposure * self.exposure_scale)),
            "AnalogueGain": gain,
            "ColourGains": (red, blue),
        }

    def read(self) -> Frame:
        """The next frame started after this call; reopens the camera if it had failed."""
        self._check_open()
        if self._cam is None:
            self._open()
        asked = time.monotonic_ns()
        try:
            for _attempt in range(4):
                if self._flush_supported:
                    try:
                        request = self._cam.capture_request(flush=True)
                    except TypeError:  # picamera2 before flush= was added
                        self._flush_supported = False
                        request = self._cam.capture_request()
                else:
                    request = self._cam.capture_request()
                try:
                    md = request.get_metadata()
                    stamp = md.get("SensorTimestamp")
                    # Without flush=, drop frames exposed before we asked.
                    # (SensorTimestamp is on the monotonic clock; a stamp far
                    # off means another clock, which cannot be compared.)
                    if (
                        not self._flush_supported
                        and stamp is not None
                        and abs(int(stamp) - asked) < 10_000_000_000
                        and int(stamp) < asked
                    ):
                        continue
                    image = np.asarray(request.make_array("main"), dtype=np.uint8)
                finally:
                    request.release()
                return self._frame(np.ascontiguousarray(image[:, :, :3]))
            raise CameraUnavailableError("Pi camera keeps returning stale frames")
        except (RuntimeError, OSError) as exc:
            self._drop()
            raise CameraUnavailableError(f"Pi camera failed: {exc}") from None

    def _drop(self) -> None:
        cam, self._cam = self._cam, None
        if cam is not None:
            with contextlib.suppress(Exception):
                cam.stop()
            with contextlib.suppress(Exception):
                cam.close()

    def close(self) -> None:
        """Stop and release the camera."""
        self._drop()
        super().close()
