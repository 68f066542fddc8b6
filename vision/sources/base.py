"""The shared vocabulary of the frame sources: :class:`Frame`, the
:class:`FrameSource` protocol, :class:`SourceBase` and the errors."""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import TracebackType
from typing import Protocol, Self

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import BadInput, DeviceFault, PegwatchError


class SourceError(BadInput):
    """A frame source was asked for with a bad spec, path or option."""


class CameraUnavailableError(DeviceFault):
    """The camera cannot be opened or has gone away; ``read()`` again to retry (it reopens)."""


class EndOfFrames(PegwatchError):
    """A video file, image list or folder has no more frames."""


@dataclass(frozen=True)
class Frame:
    """One picture: ``image`` is H×W×3 uint8 BGR, ``at_ns`` its ``time.monotonic_ns()`` stamp."""

    image: NDArray[np.uint8]
    at_ns: int
    index: int


class FrameSource(Protocol):
    """What every source offers, and all the table's vision worker asks of one.

    ``read()`` returns the freshest frame: a :class:`Frame`, as every source
    here does, or an ``(image, monotonic_ns)`` pair, as the simulation's
    scene source does. It raises (:class:`CameraUnavailableError`,
    :class:`OSError`, ...) when the camera is gone. The sources here also
    close and are context managers (:class:`SourceBase`); a consumer that
    closes a source it was only given as a :class:`FrameSource` checks for
    ``close`` first.
    """

    def read(self) -> Frame | tuple[NDArray[np.uint8], int]:
        """The freshest frame (never a stale queued one)."""
        ...


class SourceBase:
    """Frame numbering, closing and the context manager, shared by all sources."""

    def __init__(self) -> None:
        self._index = 0
        self.closed = False

    def _frame(self, image: NDArray[np.uint8], at_ns: int | None = None) -> Frame:
        if image.ndim == 2:
            image = np.asarray(cv2.cvtColor(image, cv2.COLOR_GRAY2BGR), dtype=np.uint8)
        elif image.shape[2] == 4:
            image = np.asarray(cv2.cvtColor(image, cv2.COLOR_BGRA2BGR), dtype=np.uint8)
        f = Frame(image, time.monotonic_ns() if at_ns is None else at_ns, self._index)
        self._index += 1
        return f

    def _check_open(self) -> None:
        if self.closed:
            raise SourceError(f"{type(self).__name__} is closed")

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
