"""Sources that behave on a table: read at most ``fps`` times a second, and
opened again, with backoff, when the camera is missing or fails.

:class:`PacedSource` is what makes ``[camera] fps`` hold for the reader: the
vision worker asks for frames as fast as it can, and on a Pi 4 or a Zero 2 W
that would be a core kept busy beside the clock's thread.
:class:`ReopeningSource` lets a table start with its camera unplugged and
pick it up when it is plugged in, without a restart.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.sources.base import CameraUnavailableError, Frame, FrameSource, SourceError

logger = logging.getLogger(__name__)

__all__ = ["PacedSource", "ReopeningSource"]


def _close(source: object) -> None:
    close = getattr(source, "close", None)
    if callable(close):
        close()


class PacedSource:
    """``source`` read at most ``fps`` times a second: :meth:`read` waits out
    the rest of the frame interval before it reads.

    The wait is on an event, so :meth:`close` cuts it short.
    """

    def __init__(
        self,
        source: FrameSource,
        *,
        fps: float,
        now_ns: Callable[[], int] = time.monotonic_ns,
        wait: Callable[[float], object] | None = None,
    ) -> None:
        if not fps > 0:
            raise SourceError(f"frame rate {fps!r} must be above 0")
        self.source = source
        self.fps = fps
        self.interval_ns = round(1e9 / fps)
        self._now_ns = now_ns
        self._last_ns: int | None = None
        self._closed = threading.Event()
        self._wait = wait if wait is not None else self._closed.wait
        self.waited_ns = 0
        """Time spent waiting in :meth:`read` (what the pacing saved)."""

    def read(self) -> Frame | tuple[NDArray[np.uint8], int]:
        if self._last_ns is not None:
            wait = self._last_ns + self.interval_ns - self._now_ns()
            if wait > 0:
                self.waited_ns += wait
                self._wait(wait / 1e9)
        if self._closed.is_set():
            raise SourceError("the paced source is closed")
        self._last_ns = self._now_ns()
        return self.source.read()

    def close(self) -> None:
        self._closed.set()
        _close(self.source)

    def __getattr__(self, name: str) -> Any:
        # Everything else (locked_controls, sensor_mode, ...) is the source's.
        return getattr(self.source, name)


class ReopeningSource:
    """A source opened by ``opener`` on the first read, and again after it
    could not be opened, waiting ``first_s``, then twice as long each time up
    to ``max_s`` between attempts.

    While it waits, :meth:`read` raises :class:`CameraUnavailableError` at
    once (the vision worker counts that as "camera lost" and the clock never
    notices). A source that was opened and then fails in ``read`` is kept:
    sources reopen their device themselves (the Pi camera keeps its locked
    exposure that way); only its next read is put off by the same backoff.
    """

    def __init__(
        self,
        opener: Callable[[], FrameSource],
        *,
        first_s: float = 0.5,
        max_s: float = 30.0,
        now_ns: Callable[[], int] = time.monotonic_ns,
        name: str = "camera",
    ) -> None:
        self._opener = opener
        self.first_ns = round(first_s * 1e9)
        self.max_ns = round(max(max_s, first_s) * 1e9)
        self._now_ns = now_ns
        self.name = name
        self.source: FrameSource | None = None
        self.problem = ""
        self.attempts = 0
        """Times the source was opened, or a read tried after a failure."""
        self._delay_ns = self.first_ns
        self._next_ns: int | None = None
        self._closed = False
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        return self.source is not None

    def _refuse_if_waiting(self, now: int) -> None:
        if self._next_ns is not None and now < self._next_ns:
            raise CameraUnavailableError(
                f"{self.name}: {self.problem}; next try in {(self._next_ns - now) / 1e9:.1f} s"
            )

    def _failed(self, now: int, exc: BaseException) -> CameraUnavailableError:
        self.problem = str(exc) or type(exc).__name__
        self._next_ns = now + self._delay_ns
        self._delay_ns = min(self._delay_ns * 2, self.max_ns)
        return CameraUnavailableError(f"{self.name}: {self.problem}")

    def read(self) -> Frame | tuple[NDArray[np.uint8], int]:
        with self._lock:
            if self._closed:
                raise SourceError(f"{self.name} is closed")
            now = self._now_ns()
            self._refuse_if_waiting(now)
            if self.source is None:
                self.attempts += 1
                try:
                    self.source = self._opener()
                except Exception as exc:  # missing, unplugged, busy: all "try again later"
                    raise self._failed(now, exc) from None
                logger.warning("%s opened", self.name)
            elif self._next_ns is not None:
                self.attempts += 1
            source = self.source
        try:
            got = source.read()
        except Exception as exc:
            with self._lock:
                raise self._failed(self._now_ns(), exc) from None
        with self._lock:
            self._next_ns = None
            self._delay_ns = self.first_ns
            self.problem = ""
        return got

    def close(self) -> None:
        with self._lock:
            self._closed = True
            source, self.source = self.source, None
        if source is not None:
            _close(source)
