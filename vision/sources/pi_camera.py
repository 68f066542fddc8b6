"""The Raspberry Pi camera through picamera2, with exposure locked.

picamera2 is imported when a source is opened, never at import time: it
exists only on a Pi (python3-picamera2 from apt).
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any

import numpy as np

from pegwatch.vision.sources.base import CameraUnavailableError, Frame, SourceBase

logger = logging.getLogger(__name__)


class Picamera2Source(SourceBase):
    """The Pi camera (Camera Module 3, HQ camera) through picamera2, with exposure locked.

    On opening, auto exposure and auto white balance run until their
    metadata settles (or ``settle_timeout_s`` passes), then both are switched
    off and the settled ExposureTime, AnalogueGain and ColourGains are fixed,
    so that the colour model calibrated for the table stays valid. The main
    stream is RGB888, which is BGR in memory, as OpenCV wants. ``read``
    asks for a request that started after the call (``flush``) so a frame
    queued earlier is never returned.

    picamera2 comes from apt on Raspberry Pi OS (python3-picamera2).
    """

    def __init__(
        self,
        *,
        size: tuple[int, int] = (1280, 720),
        camera_num: int = 0,
        settle_frames: int = 8,
        settle_timeout_s: float = 4.0,
        settle_tolerance: float = 0.03,
        exposure_scale: float = 1.0,
    ) -> None:
        super().__init__()
        self.size = size
        self.camera_num = camera_num
        self.settle_frames = settle_frames
        self.settle_timeout_s = settle_timeout_s
        self.settle_tolerance = settle_tolerance
        self.exposure_scale = exposure_scale
        self.locked_controls: dict[str, Any] | None = None
        self._cam: Any = None
        self._flush_supported = True
        self._open()

    def _open(self) -> None:
        try:
            from picamera2 import Picamera2
        except ImportError:
            raise CameraUnavailableError(
                "picamera2 is not installed (on Raspberry Pi OS: sudo apt install python3-picamera2)"
            ) from None
        try:
            cam = Picamera2(self.camera_num)
            config = cam.create_video_configuration(
                main={"size": tuple(self.size), "format": "RGB888"}, buffer_count=2
            )
            cam.configure(config)
            cam.start()
        except (RuntimeError, OSError, IndexError) as exc:
            raise CameraUnavailableError(f"Pi camera {self.camera_num} cannot be opened: {exc}") from None
        self._cam = cam
        if self.locked_controls is None:
            self.locked_controls = self._settle()
        # Reopening after a failure keeps the first lock: the table's
        # calibration was made with it.
        cam.set_controls(self.locked_controls)
        logger.info("Pi camera exposure locked: %s", self.locked_controls)

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
