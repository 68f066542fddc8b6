"""A fixed camera's board that has not changed: the last reading stands.

Most frames of a game show what the frame before showed: a player thinks
for minutes between moves. The reader gathers the same samples of a fixed
camera's frame at every read: each hole's disc and ring, the plastic cells
between the holes, the key windows, the places where peg heads stand, and
the tray's patches beside the board. When no group of them (one hole's
disc, one cell, one patch) has changed since the frame last read in full,
nothing a reading rests on has changed, and that reading stands for this
frame too.

A sample has changed when a channel moved by more than the sensor's noise
and JPEG's (:data:`~pegwatch.vision.localise.still.MIN_CHANGE_LEVELS`, the
markers' still windows' bound); a group has changed when more than
:data:`CHANGED_SHARE` of its samples did. A peg placed, taken or moved
changes most of its hole's samples (a black key peg added to a black board:
half to all of them), a hand or a sleeve more; noise and JPEG push a few
past the bound (at most a sixth of a group in the noisiest frames rendered
twice, ``docs/testbed.md``). A frame is read in full all the same once
:data:`RECHECK_S` of frame time has passed since the last full read, as the
markers' fit is checked again: whatever changed too little to show here is
read within a second, long before a row is accepted (several stable frames,
:mod:`~pegwatch.vision.temporal`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.localise.still import MIN_CHANGE_LEVELS, within
from pegwatch.vision.reading import BoardReading

#: A group of samples (one hole's disc, one cell, one tray patch) has
#: changed when more than this share of its samples has.
CHANGED_SHARE = 0.25
#: Seconds of frame time after which a frame is read in full again.
RECHECK_S = 1.0

#: The samples of one frame: per group kind, an array (groups, samples, channels).
Samples = Sequence[NDArray[np.uint8]]


class StillBoard:
    """The last reading made in full, the samples it was made from, and their frame's stamp."""

    def __init__(self) -> None:
        self._kept: tuple[bytes, int, tuple[NDArray[np.uint8], ...], BoardReading] | None = None

    def keep(self, key: bytes, at_ns: int, samples: Samples, reading: BoardReading) -> None:
        """Remember ``reading``, made in full at ``at_ns`` from ``samples`` under the fit ``key``
        (the frame's size and the camera's fit of the board: anything else is another picture)."""
        self._kept = (key, at_ns, tuple(np.array(s, dtype=np.uint8, copy=True) for s in samples), reading)

    def forget(self) -> None:
        self._kept = None

    def reading(self, key: bytes, at_ns: int, samples: Samples) -> BoardReading | None:
        """The kept reading, stamped ``at_ns``, when these ``samples`` show what it was read from;
        None when anything changed, the fit is another, or a second of frame time has passed."""
        kept = self._kept
        if kept is None or kept[0] != key or not within(kept[1], at_ns, RECHECK_S) or len(samples) != len(kept[2]):
            return None
        for now, then in zip(samples, kept[2], strict=True):
            if now.shape != then.shape or changed(now, then):
                return None
        return replace(kept[3], at_ns=at_ns)


def changed(now: NDArray[np.uint8], then: NDArray[np.uint8]) -> bool:
    """Has any group of ``now`` (groups, samples, channels) changed from ``then`` (see the module)?"""
    if now.size == 0:
        return False
    diff = np.asarray(cv2.absdiff(now.reshape(-1, now.shape[-1]), then.reshape(-1, then.shape[-1])), dtype=np.uint8)
    # Channel by channel: a reduction over an axis of three is several times slower.
    most = diff[:, 0]
    for c in range(1, diff.shape[1]):
        most = np.maximum(most, diff[:, c])
    over = most > MIN_CHANGE_LEVELS
    share = np.count_nonzero(over.reshape(now.shape[0], -1), axis=1)
    return bool(np.any(share > CHANGED_SHARE * now.shape[1]))
