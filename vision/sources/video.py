"""A USB webcam or a video file, through OpenCV's VideoCapture."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from pegwatch.vision.sources.base import (
    CameraUnavailableError,
    EndOfFrames,
    Frame,
    SourceBase,
    SourceError,
)


class VideoCaptureSource(SourceBase):
    """A USB webcam (``/dev/video0`` or an index) or a video file, through OpenCV.

    Webcams get a one-frame buffer and are drained before each read so the
    frame is fresh; files are read in order (``loop`` to start again at the
    end, else :class:`EndOfFrames`). A webcam that fails is released and
    reopened on the next ``read``.
    """

    def __init__(
        self,
        device: str | int,
        *,
        size: tuple[int, int] | None = None,
        live: bool | None = None,
        loop: bool = False,
        drain_max: int = 4,
    ) -> None:
        super().__init__()
        self.device: str | int = device
        if isinstance(device, str) and device.isdigit():
            self.device = int(device)
        self.live = (isinstance(self.device, int) or str(self.device).startswith("/dev/")) if live is None else live
        if not self.live and not Path(str(self.device)).is_file():
            raise SourceError(f"{device}: video file not found")
        self.size = size
        self.loop = loop
        self.drain_max = drain_max
        self._cap: Any = None
        self._open()

    def _open(self) -> None:
        cap = cv2.VideoCapture(self.device)
        if not cap.isOpened():
            cap.release()
            raise CameraUnavailableError(f"{self.device}: cannot open video source")
        if self.live:
            cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)
            if self.size is not None:
                cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
                cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
        self._cap = cap

    def read(self) -> Frame:
        """The freshest frame (webcam) or the next one (file)."""
        self._check_open()
        if self._cap is None:
            self._open()
        cap = self._cap
        if self.live:
            # Drain: a grab that returns at once came from the queue, not the sensor.
            ok = cap.grab()
            for _ in range(self.drain_max):
                if not ok:
                    break
                t = time.monotonic()
                ok = cap.grab()
                if time.monotonic() - t > 0.004:
                    break
            got, image = cap.retrieve() if ok else (False, None)
            if not got or image is None:
                self._release()
                raise CameraUnavailableError(f"{self.device}: camera stopped delivering frames")
            return self._frame(np.asarray(image, dtype=np.uint8))
        got, image = cap.read()
        if not got or image is None:
            if not self.loop:
                raise EndOfFrames(f"{self.device}: end of video after {self._index} frames")
            cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
            got, image = cap.read()
            if not got or image is None:
                raise EndOfFrames(f"{self.device}: video has no readable frames")
        return self._frame(np.asarray(image, dtype=np.uint8))

    def _release(self) -> None:
        cap, self._cap = self._cap, None
        if cap is not None:
            cap.release()

    def close(self) -> None:
        """Release the device or file."""
        self._release()
        super().close()
