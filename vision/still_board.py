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
twice, ``docs/vision.md``). A frame is read in full all the same once
:data:`RECHECK_S` of frame time has passed since the last full read, as the
markers' fit is checked again: whatever changed too little to show here is
read within a second.

A reading is kept only once several frames of the unchanged board, each
read in full, said the same of it (``agree``: as many as the temporal
filter wants before it accepts a row, :mod:`~pegwatch.vision.temporal`).
The filter's agreement over frames is what stops a misread of one frame:
a reading kept at once would repeat one frame's misread for a second and
have it accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import BadInput
from pegwatch.vision.localise.still import MIN_CHANGE_LEVELS, within
from pegwatch.vision.pixel_stats import channel_max
from pegwatch.vision.reading import BoardReading
from pegwatch.vision.temporal import row_identity

#: A group of samples (one hole's disc, one cell, one tray patch) has
#: changed when more than this share of its samples has.
CHANGED_SHARE = 0.25
#: Seconds of frame time after which a frame is read in full again.
RECHECK_S = 1.0
#: Full reads in a row that must say the same of the unchanged board before
#: its reading is kept: the temporal filter's frames to accept a row.
AGREE_READS = 3

#: The samples of one frame: per group kind, an array (groups, samples, channels).
Samples = Sequence[NDArray[np.uint8]]


class StillBoard:
    """The last reading made in full, the samples it was made from, their frame's stamp, and how
    many full reads in a row said the same of the unchanged board."""

    def __init__(self, *, agree: int = AGREE_READS) -> None:
        if agree < 1:
            raise BadInput("a still board's reading needs at least 1 full read to be kept")
        self.agree = agree
        self._kept: tuple[bytes, int, tuple[NDArray[np.uint8], ...], BoardReading] | None = None
        self._agreed = 0

    def keep(self, key: bytes, at_ns: int, samples: Samples, reading: BoardReading) -> None:
        """Remember ``reading``, made in full at ``at_ns`` from ``samples`` under the fit ``key``
        (the frame's size and the camera's fit of the board: anything else is another picture).
        It agrees with the last when the board is the one it was (the fit, the samples) and it
        says the same of it."""
        kept = self._kept
        same = (
            kept is not None and kept[0] == key and at_ns >= kept[1]
            and _unchanged(samples, kept[2]) and says(reading) == says(kept[3])
        )
        self._agreed = self._agreed + 1 if same else 1
        self._kept = (key, at_ns, tuple(np.array(s, dtype=np.uint8, copy=True) for s in samples), reading)

    def forget(self) -> None:
        self._kept = None
        self._agreed = 0

    def reading(self, key: bytes, at_ns: int, samples: Samples) -> BoardReading | None:
        """The kept reading, stamped ``at_ns``, when these ``samples`` show what it was read from
        and enough full reads agreed on it; None when anything changed, the fit is another, or a
        second of frame time has passed."""
        kept = self._kept
        if kept is None or self._agreed < self.agree or kept[0] != key or not within(kept[1], at_ns, RECHECK_S):
            return None
        return replace(kept[3], at_ns=at_ns) if _unchanged(samples, kept[2]) else None


def says(reading: BoardReading) -> tuple[object, ...]:
    """What a reading says of the board (as the temporal filter compares rows): each row's
    colours, key counts and status, the secret's colours, the shield, the trust."""
    rows = tuple(row_identity(r) for r in reading.rows)
    secret = None if reading.secret is None else tuple(h.colour for h in reading.secret)
    return rows, secret, reading.shield, reading.trust, reading.problem


def _unchanged(now: Samples, then: Sequence[NDArray[np.uint8]]) -> bool:
    if len(now) != len(then):
        return False
    return all(a.shape == b.shape and not changed(a, b) for a, b in zip(now, then, strict=True))


def changed(now: NDArray[np.uint8], then: NDArray[np.uint8]) -> bool:
    """Has any group of ``now`` (groups, samples, channels) changed from ``then`` (see the module)?"""
    if now.size == 0:
        return False
    diff = np.asarray(cv2.absdiff(now.reshape(-1, now.shape[-1]), then.reshape(-1, then.shape[-1])), dtype=np.uint8)
    over = channel_max(diff) > MIN_CHANGE_LEVELS
    share = np.count_nonzero(over.reshape(now.shape[0], -1), axis=1)
    return bool(np.any(share > CHANGED_SHARE * now.shape[1]))
