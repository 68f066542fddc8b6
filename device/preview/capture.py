"""The preview's camera: a thread of its own keeps the latest annotated frame.

:class:`PreviewCamera` reads the source as fast as it gives frames (or at
``fps``), looks at each (:func:`~pegwatch.device.preview.look.look_at`),
draws the grid and encodes a JPEG. Whoever shows it (the page, the JPEG
file) only takes the latest :class:`Snapshot`: a slow or dead camera never
blocks a request, it only leaves the snapshot older (the page says how old).
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.device.lifetime import Closeable
from pegwatch.device.preview.look import Look, PreviewLocaliser, draw_look, look_at
from pegwatch.vision.localise import Localiser
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.sources import FrameSource

logger = logging.getLogger(__name__)

__all__ = ["FrameTap", "PreviewCamera", "Snapshot", "annotate", "write_jpeg_atomic"]


@dataclass(frozen=True)
class Snapshot:
    """The latest annotated frame: its JPEG, what it says, and when it was taken."""

    jpeg: bytes
    look: Look
    at_ns: int
    index: int


def annotate(
    frame: NDArray[np.uint8], profile: BoardProfile, localiser: Localiser, *, quality: int = 80, at_ns: int = 0,
    index: int = 0,
) -> Snapshot:
    """Look at one frame and draw on it: the whole of one preview step."""
    look, loc = look_at(frame, profile, localiser)
    drawn = draw_look(frame, profile, loc, look)
    ok, buf = cv2.imencode(".jpg", drawn, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:  # pragma: no cover - OpenCV encodes any 8-bit BGR image
        raise RuntimeError("the preview frame could not be encoded as JPEG")
    return Snapshot(bytes(buf.tobytes()), look, at_ns, index)


def write_jpeg_atomic(path: str | Path, jpeg: bytes) -> None:
    """Write ``jpeg`` to ``path`` through a temporary file in the same folder
    and a rename, so a viewer reloading it never sees half a picture."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(jpeg)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class PreviewCamera(Closeable):
    """Frames from ``source``, annotated, the latest one kept (see the module doc).

    ``on_snapshot`` is called from the capture thread with each new
    snapshot (``pegwatch preview --jpeg`` writes the file there).
    """

    def __init__(
        self,
        source: FrameSource | None,
        profile: BoardProfile,
        *,
        localiser: Localiser | None = None,
        fps: float = 4.0,
        quality: int = 80,
        retry_s: float = 1.0,
        on_snapshot: Callable[[Snapshot], None] | None = None,
    ) -> None:
        self.source = source
        self.profile = profile
        self.localiser: Localiser = localiser if localiser is not None else PreviewLocaliser(profile)
        self.period_s = 1.0 / max(0.1, fps)
        self.quality = quality
        self.retry_s = retry_s
        self.on_snapshot = on_snapshot
        #: Why the last read failed (the camera gone), or None.
        self.problem: str | None = None
        self._latest: Snapshot | None = None
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._count = 0
        self._offered: tuple[NDArray[np.uint8], int] | None = None
        self._fresh = threading.Event()

    @property
    def latest(self) -> Snapshot | None:
        """The newest snapshot, or None before the first frame (never waits)."""
        return self._latest

    def wait_for_snapshot(self, after: int = 0, timeout: float = 10.0) -> Snapshot | None:
        """The first snapshot numbered above ``after``, waiting up to ``timeout`` seconds."""
        with self._changed:
            self._changed.wait_for(lambda: self._latest is not None and self._latest.index > after, timeout)
            return self._latest if self._latest is not None and self._latest.index > after else None

    def offer(self, frame: NDArray[np.uint8], at_ns: int) -> None:
        """A frame someone else read (the table's camera, through a :class:`FrameTap`):
        kept, not copied or drawn here, so the reader that offers it never waits."""
        self._offered = (frame, at_ns)
        self._fresh.set()

    def step(self) -> Snapshot:
        """Read (or take the offered frame) and annotate it: what the thread does;
        ``--once`` calls it directly."""
        if self.source is None:
            offered = self._offered
            if offered is None:
                raise LookupError("no frame offered yet")
            self._fresh.clear()
            frame, at_ns = offered
        else:
            got: Any = self.source.read()
            frame, at_ns = got if isinstance(got, tuple) else (got.image, got.at_ns)
        snap = annotate(frame, self.profile, self.localiser, quality=self.quality, at_ns=at_ns,
                        index=self._count + 1)
        self._count += 1
        with self._changed:
            self._latest = snap
            self.problem = None
            self._changed.notify_all()
        if self.on_snapshot is not None:
            self.on_snapshot(snap)
        return snap

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            if self.source is None and not self._fresh.wait(self.retry_s):
                continue  # nothing new offered: the last snapshot stands
            try:
                self.step()
            except Exception as exc:  # a camera that fails is retried, the page goes on
                if self.problem is None:
                    logger.error("preview camera: %s", exc)
                self.problem = str(exc) or type(exc).__name__
                self._stop.wait(self.retry_s)
                continue
            self._stop.wait(max(0.0, self.period_s - (time.monotonic() - started)))

    def start(self) -> PreviewCamera:
        """Capture in a daemon thread until :meth:`close`."""
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="pegwatch-preview", daemon=True)
            self._thread.start()
        return self

    def close(self) -> None:
        """Stop the thread and close the source (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
            self._thread = None
        close = getattr(self.source, "close", None)
        if callable(close):
            close()


class FrameTap:
    """``source``, with every frame it gives also offered to ``preview``: the
    table's camera shown on the preview page without a second reader."""

    def __init__(self, source: FrameSource, preview: PreviewCamera) -> None:
        self.source = source
        self.preview = preview

    def read(self) -> Any:
        got: Any = self.source.read()
        frame, at_ns = got if isinstance(got, tuple) else (got.image, got.at_ns)
        self.preview.offer(frame, at_ns)
        return got

    def close(self) -> None:
        close = getattr(self.source, "close", None)
        if callable(close):
            close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.source, name)
