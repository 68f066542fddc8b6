"""A fixed camera's marker windows: where each marker is looked for, and how they looked when last read.

On a fixed camera each marker is looked for in a window round where it
was last read (:func:`marker_windows`). And on a fixed camera the markers sit where they sat, frame after frame, and
reading them again in their windows was most of a steady read's time
(about 1.6 ms a window). A window whose pixels are those of the frame in
which its marker was last read, within the sensor's noise, holds the
marker where it was: nothing needs reading. Anything that moves a marker
by a fraction of a pixel changes its edges by a good part of its contrast
(black on white), far beyond the noise; a hand, a shadow or a knock
changes much more. Such a window, or a frame of another size, is read as
before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.markers import STEADY_THRESHOLD_WINDOW_PX, DetectedMarker

Window = tuple[int, int, int, int]

#: A pixel has changed when it differs by more than this fraction of its
#: window's contrast (5th to 95th percentile) ...
CHANGE_OF_CONTRAST = 0.25
#: ... and by more than this many levels of 255 (the sensor's noise and
#: JPEG's, on a dull marker).
MIN_CHANGE_LEVELS = 24
#: A window is unchanged while no more than this fraction of its pixels has.
MAX_CHANGED_FRACTION = 0.002


def within(then_ns: int, now_ns: int, seconds: float) -> bool:
    """Is frame time ``now_ns`` within ``seconds`` after ``then_ns``? A stamp before ``then_ns``
    starts another run of frames (a recording read again): not within."""
    return 0 <= now_ns - then_ns < seconds * 1e9


def marker_windows(found: Sequence[DetectedMarker], shape: tuple[int, int], detect_scale: float) -> dict[int, Window]:
    """Per marker of ``found``, the window (x0, y0, x1, y1) of a frame of ``shape`` to look for it in next."""
    hgt, wid = shape
    out: dict[int, Window] = {}
    for f in found:
        (ax, ay), (bx, by) = f.corners.min(axis=0), f.corners.max(axis=0)
        # Room for the quiet zone (a module, a sixth of the side) and a
        # smear, and for the detector's threshold window; not for
        # motion: markers that moved mean a re-fit anyway.
        m = max(0.2 * max(bx - ax, by - ay) + 8, STEADY_THRESHOLD_WINDOW_PX / detect_scale)
        out[f.id] = (max(0, int(ax - m)), max(0, int(ay - m)), min(wid, int(bx + m) + 1), min(hgt, int(by + m) + 1))
    return out


class StillWindows:
    """The grey pixels of each marker window when its marker was last read."""

    def __init__(self) -> None:
        self._shape: tuple[int, ...] | None = None
        self._windows: dict[int, tuple[Window, NDArray[np.uint8], int]] = {}

    @property
    def ids(self) -> tuple[int, ...]:
        """The markers whose windows are remembered."""
        return tuple(sorted(self._windows))

    def take(self, frame: NDArray[np.uint8], rois: Mapping[int, Window]) -> None:
        """Remember ``rois`` (marker id -> x0, y0, x1, y1) as ``frame`` shows them."""
        self._shape = frame.shape
        self._windows = {}
        for mid, roi in rois.items():
            grey = _grey(frame, roi)
            if grey.size == 0:
                continue
            flat = grey.ravel()
            lo, hi = np.partition(flat, (flat.size // 20, flat.size * 19 // 20))[[flat.size // 20, flat.size * 19 // 20]]
            self._windows[mid] = (roi, grey, max(MIN_CHANGE_LEVELS, int(CHANGE_OF_CONTRAST * (int(hi) - int(lo)))))

    def forget(self) -> None:
        self._windows = {}

    def unchanged(self, frame: NDArray[np.uint8]) -> bool:
        """Does every remembered window (two at least) look as it did?"""
        if len(self._windows) < 2 or frame.shape != self._shape:
            return False
        for roi, then, limit in self._windows.values():
            now = _grey(frame, roi)
            changed = np.count_nonzero(cv2.absdiff(now, then) > limit)
            if changed > MAX_CHANGED_FRACTION * then.size:
                return False
        return True


def _grey(frame: NDArray[np.uint8], roi: Window) -> NDArray[np.uint8]:
    x0, y0, x1, y1 = roi
    crop = frame[y0:y1, x0:x1]
    out = crop if crop.ndim == 2 else cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    return np.asarray(out, dtype=np.uint8)
