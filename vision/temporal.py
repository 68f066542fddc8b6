"""Reading over time: accept a row only when it is stable and still.

The reader answers for one frame; hands come and go and pegs are pushed in
one by one, so the table program never judges a single frame. A
:class:`StableBoard` accepts a row's value only after ``frames_to_accept``
consecutive readings with the same value and no motion over that row.
Once accepted, a row keeps its value until a *different* value has itself
been stable for as many frames: accepted rows do not flicker.

Motion comes from the per-row appearance signatures the reader attaches to
each reading (``BoardReading.row_signatures``): a row whose signature moved
by more than ``motion_threshold`` since the previous frame is in motion,
and a moving or occluded row keeps its accepted value but is shown
``"occluded"`` in the current view.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from pegwatch.rules.errors import BadInput
from pegwatch.vision.reading import (
    OCCLUDED,
    ROW_EMPTY,
    ROW_OCCLUDED,
    ROW_OK,
    ROW_UNKNOWN,
    BoardReading,
    HoleReading,
    KeyReading,
    RowReading,
)

logger = logging.getLogger(__name__)

#: Mean absolute change (sRGB levels, per cell and channel) that counts as motion.
DEFAULT_MOTION_THRESHOLD = 10.0

_SECRET = 0  # slot number of the secret row


@dataclass
class _Slot:
    accepted: RowReading | None = None
    candidate: tuple[object, ...] | None = None
    candidate_reading: RowReading | None = None
    count: int = 0
    signature: tuple[float, ...] | None = None


def row_identity(row: RowReading) -> tuple[object, ...]:
    """What must be equal for two readings of a row to be "the same"."""
    return (row.guess, row.keys.black, row.keys.white, row.keys.status, row.status)


class StableBoard:
    """The temporal filter: feed it every reading, use what it returns.

    ``update(reading)`` returns the accepted board: each row is its last
    accepted value (status "unknown" with zero confidence while nothing has
    been accepted yet), shown "occluded" while something covers or moves
    over it. ``changed_rows`` of the returned reading lists the rows whose
    accepted value changed with this update.
    """

    def __init__(
        self,
        *,
        frames_to_accept: int = 3,
        motion_threshold: float = DEFAULT_MOTION_THRESHOLD,
    ) -> None:
        if frames_to_accept < 1:
            raise BadInput("frames_to_accept must be at least 1")
        self.frames_to_accept = frames_to_accept
        self.motion_threshold = motion_threshold
        self._slots: dict[int, _Slot] = {}
        self._last_at_ns: int | None = None
        self._occluded: frozenset[int] = frozenset()
        self._moving: frozenset[int] = frozenset()

    @property
    def occluded_rows(self) -> frozenset[int]:
        """Rows covered or moving in the latest update."""
        return self._occluded

    @property
    def moving_rows(self) -> frozenset[int]:
        """Rows whose appearance changed since the previous frame."""
        return self._moving

    def accepted_row(self, row: int) -> RowReading | None:
        """The accepted value of ``row`` (None while nothing is accepted)."""
        slot = self._slots.get(row)
        return None if slot is None else slot.accepted

    def reset(self) -> None:
        """Forget everything (a new game, or a recalibration)."""
        self._slots.clear()
        self._last_at_ns = None
        self._occluded = frozenset()
        self._moving = frozenset()

    def update(self, reading: BoardReading) -> BoardReading:
        """Take one frame's reading; return the accepted board."""
        if self._last_at_ns is not None and reading.at_ns < self._last_at_ns:
            # Monotonic stamps only go forward; an older frame is stale.
            logger.warning("ignoring a reading stamped before the previous one")
            return self._view(reading, frozenset(), frozenset())
        self._last_at_ns = reading.at_ns
        sigs = reading.row_signatures
        moving: set[int] = set()
        changed: set[int] = set()
        occluded: set[int] = set()
        for row in reading.rows:
            sig = sigs[row.row - 1] if sigs is not None and len(sigs) >= row.row else None
            slot = self._slots.setdefault(row.row, _Slot())
            if self._moved(slot.signature, sig):
                moving.add(row.row)
            slot.signature = sig
            if reading.problem is not None:
                # The board cannot be read (e.g. it moved): nothing new is
                # accepted and nothing already accepted is dropped.
                slot.candidate, slot.count = None, 0
                continue
            if row.row in moving or row.status == ROW_OCCLUDED:
                occluded.add(row.row)
                slot.candidate, slot.count = None, 0
                continue
            if self._feed(slot, row):
                changed.add(row.row)
        if reading.secret is not None and reading.problem is None:
            slot = self._slots.setdefault(_SECRET, _Slot())
            secret_row = RowReading(
                _SECRET, reading.secret, KeyReading(0, 0, 0, 1.0, ROW_EMPTY), _secret_status(reading.secret)
            )
            if secret_row.status == ROW_OCCLUDED:
                slot.candidate, slot.count = None, 0
            elif self._feed(slot, secret_row):
                changed.add(_SECRET)
        self._moving = frozenset(moving)
        self._occluded = frozenset(occluded)
        return self._view(reading, frozenset(changed), self._occluded)

    def _moved(self, old: tuple[float, ...] | None, new: tuple[float, ...] | None) -> bool:
        if old is None or new is None or len(old) != len(new) or not new:
            return False
        diff = max(abs(a - b) for a, b in zip(old, new, strict=True))
        return diff > self.motion_threshold

    def _feed(self, slot: _Slot, row: RowReading) -> bool:
        """Count ``row`` towards acceptance; True when the accepted value changed."""
        ident = row_identity(row)
        if ident == slot.candidate:
            slot.count += 1
        else:
            slot.candidate, slot.count = ident, 1
        slot.candidate_reading = row
        if slot.count < self.frames_to_accept:
            return False
        if slot.accepted is not None and row_identity(slot.accepted) == ident:
            return False
        slot.accepted = row
        return True

    def _view(
        self, reading: BoardReading, changed: frozenset[int], occluded: frozenset[int]
    ) -> BoardReading:
        rows: list[RowReading] = []
        for row in reading.rows:
            slot = self._slots.get(row.row)
            acc = None if slot is None else slot.accepted
            if acc is None:
                acc = RowReading(
                    row.row,
                    tuple(HoleReading(ROW_UNKNOWN, 0.0) for _ in row.holes),
                    KeyReading(0, 0, row.keys.black + row.keys.white + row.keys.empty, 0.0, ROW_UNKNOWN),
                    ROW_UNKNOWN,
                )
            if row.row in occluded:
                acc = replace(acc, status=ROW_OCCLUDED)
            elif reading.problem is not None:
                acc = replace(acc, status=ROW_UNKNOWN)
            rows.append(acc)
        secret_slot = self._slots.get(_SECRET)
        secret = None
        if reading.secret is not None:
            if secret_slot is not None and secret_slot.accepted is not None:
                secret = secret_slot.accepted.holes
            else:
                secret = tuple(HoleReading(ROW_UNKNOWN, 0.0) for _ in reading.secret)
        # How the board was found, its trust and what the picture is worth
        # are this frame's: an accepted row read in a better frame does not
        # make this one any better.
        return replace(
            reading,
            rows=tuple(rows),
            secret=secret,
            changed_rows=changed,
        )


def _secret_status(holes: tuple[HoleReading, ...]) -> str:
    if any(h.colour == OCCLUDED for h in holes):
        return ROW_OCCLUDED
    if any(not h.is_certain for h in holes):
        return ROW_UNKNOWN
    return ROW_OK
