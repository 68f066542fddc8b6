"""Riding out a full disk: :class:`JournalWriter` holds events in memory, in order.

The table program appends through a writer, never to the :class:`Journal`
directly: a storage failure holds the event (:class:`PendingEvent`) and
raises the alarm instead of stopping the clock, and a write that would pass
the size cap first evicts the evidence images of finished games.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Final, TypeVar

from pegwatch.device.table.journal.records import (
    JournalError,
    JournalEvent,
    JournalFullError,
    JournalStorageError,
    _check_kind,
    _check_stamp,
    _encode,
    freeze,
)
from pegwatch.device.table.journal.store import Journal

# The journal's one logger, whichever of its modules speaks (as before the split).
logger = logging.getLogger("pegwatch.device.table.journal")


@dataclass(frozen=True)
class PendingEvent:
    """An event held in memory because the journal could not take it yet."""

    token: int
    kind: str
    at_ns: int
    payload: Mapping[str, object]


@dataclass
class _HeldEvent:
    pending: PendingEvent


@dataclass
class _HeldEvidence:
    target: JournalEvent | PendingEvent
    game: int
    row: int
    image: bytes
    reading: Mapping[str, object]


_T = TypeVar("_T")

#: Room kept free under a size cap for the events that follow a write.
CAP_HEADROOM_BYTES: Final = 64 * 1024


def _cause(alarm: str) -> str:
    return alarm.split(":", 1)[0]


class JournalWriter:
    """Appends to a :class:`Journal`, holding events in memory while the disk is full.

    :meth:`append` never raises for a storage failure: the event is kept in
    order (:attr:`pending` counts them), :attr:`alarm` says what is wrong in
    one line, and every later call (or :meth:`flush`) tries again, oldest
    first. Bad input (kind, stamp, payload) still raises
    :class:`JournalError` at once. Evidence images held in memory are capped
    at ``max_held_image_bytes`` (the oldest are dropped beyond it, counted in
    :attr:`dropped_evidence`); events are never dropped.

    ``when_alarm`` is called when the alarm is raised or its cause changes
    (with the text) and when it clears (with ``None``); :attr:`alarm` always
    has the current count.

    Under a size cap (``Journal(max_bytes=...)``, ``[journal] max_mb``) a
    write that would pass it first evicts the oldest evidence images of the
    games ``prunable()`` names (the finished ones; see
    :meth:`Journal.prune_evidence`); only when nothing is left to evict does
    the cap raise the disk-full alarm. :attr:`fill` is the part of the cap
    that pruning cannot free, and :attr:`warning` a display line from
    ``warn_fraction`` of it on.
    """

    def __init__(
        self,
        journal: Journal,
        *,
        max_held_image_bytes: int = 32 * 1024 * 1024,
        when_alarm: Callable[[str | None], None] | None = None,
        prunable: Callable[[], Iterable[int]] | None = None,
        warn_fraction: float = 0.8,
    ) -> None:
        self.journal = journal
        self.when_alarm = when_alarm
        self.prunable = prunable
        self.warn_fraction = warn_fraction
        self._fill: float | None = None
        self._max_held_image_bytes = max_held_image_bytes
        self._held: deque[_HeldEvent | _HeldEvidence] = deque()
        self._seq_of: dict[int, int] = {}  # pending token -> seq once written
        self._tokens = 0
        self._error: JournalError | None = None
        self._alarm: str | None = None
        self._lock = threading.RLock()
        self.dropped_evidence = 0
        #: Image bytes this writer evicted to stay under the size cap.
        self.pruned_bytes = 0
        self.refresh_fill()

    @property
    def pending(self) -> int:
        """How many events are held in memory, not yet journaled."""
        with self._lock:
            return sum(isinstance(item, _HeldEvent) for item in self._held)

    @property
    def alarm(self) -> str | None:
        """One line for the display while anything is held, else ``None``."""
        return self._alarm

    @property
    def short_alarm(self) -> str | None:
        """The alarm in at most 21 characters, for one line of a 128-pixel display."""
        if self._alarm is None:
            return None
        what = "DISK FULL" if self._alarm.startswith("DISK FULL") else "JOURNAL ERR"
        return f"{what} {self.pending} held"[:21]

    def _update_alarm(self) -> None:
        alarm = None
        if self._held and self._error is not None:
            held = self.pending
            what = "DISK FULL" if isinstance(self._error, JournalFullError) else "JOURNAL FAILING"
            alarm = f"{what}: {held} event{'s' if held != 1 else ''} held in memory ({self._error})"
        if alarm == self._alarm:
            return
        before, self._alarm = self._alarm, alarm
        # Raising, clearing and a change of cause are news (logged, and
        # passed to when_alarm); the held count going up is detail.
        if alarm is None:
            logger.warning("journal: held events written, alarm cleared")
        elif before is None or _cause(before) != _cause(alarm):
            logger.error("journal: %s", alarm)
        else:
            logger.debug("journal: %s", alarm)
            return
        if self.when_alarm is not None:
            self.when_alarm(alarm)

    def append(
        self, kind: str, payload: Mapping[str, object], *, at_ns: int
    ) -> JournalEvent | PendingEvent:
        """Journal the event, or hold it if the journal cannot take it now."""
        _check_kind(kind)
        _check_stamp(at_ns)
        # Validate the payload now: a bad payload must fail loudly, not sit in the backlog.
        frozen: Mapping[str, object] = freeze(  # type: ignore[assignment]
            json.loads(_encode(f"{kind} event payload", payload))
        )
        with self._lock:
            if self.flush():
                try:
                    return self._write(
                        lambda: self.journal.append(kind, payload, at_ns=at_ns), 0, at_ns
                    )
                except JournalStorageError as exc:
                    self._error = exc
            self._tokens += 1
            pending = PendingEvent(token=self._tokens, kind=kind, at_ns=at_ns, payload=frozen)
            self._held.append(_HeldEvent(pending))
            self._update_alarm()
            return pending

    def store_evidence(
        self,
        event: JournalEvent | PendingEvent,
        *,
        game: int,
        row: int,
        image: bytes,
        reading: Mapping[str, object],
    ) -> bool:
        """Store evidence for ``event`` now, or hold it; ``True`` when written."""
        with self._lock:
            if isinstance(event, JournalEvent) and self.flush():
                try:
                    self._write(
                        lambda: self.journal.store_evidence(
                            event_seq=event.seq, game=game, row=row, image=image, reading=reading
                        ),
                        len(image),
                        event.at_ns,
                    )
                    return True
                except JournalStorageError as exc:
                    self._error = exc
            self._held.append(_HeldEvidence(event, game, row, bytes(image), reading))
            self._cap_images()
            self._update_alarm()
            return False

    def _cap_images(self) -> None:
        held = [item for item in self._held if isinstance(item, _HeldEvidence)]
        total = sum(len(item.image) for item in held)
        for item in held:
            if total <= self._max_held_image_bytes:
                break
            self._held.remove(item)
            total -= len(item.image)
            self.dropped_evidence += 1
            logger.error("journal: dropped held evidence for game %d row %d", item.game, item.row)

    def flush(self) -> bool:
        """Write what is held, oldest first; ``True`` when nothing is left held."""
        with self._lock:
            while self._held:
                item = self._held[0]
                try:
                    if isinstance(item, _HeldEvent):
                        p = item.pending
                        event = self._write(
                            partial(self.journal.append, p.kind, p.payload, at_ns=p.at_ns),
                            0,
                            p.at_ns,
                        )
                        self._seq_of[p.token] = event.seq
                    else:
                        held = item
                        target = held.target
                        seq = (
                            target.seq
                            if isinstance(target, JournalEvent)
                            else self._seq_of[target.token]
                        )
                        self._write(
                            partial(
                                self.journal.store_evidence,
                                event_seq=seq,
                                game=held.game,
                                row=held.row,
                                image=held.image,
                                reading=held.reading,
                            ),
                            len(held.image),
                            target.at_ns,
                        )
                except JournalStorageError as exc:
                    self._error = exc
                    self._update_alarm()
                    return False
                self._held.popleft()
            self._error = None
            self._update_alarm()
            return True

    # -- the size cap -----------------------------------------------------------------

    def _write(self, write: Callable[[], _T], size: int, at_ns: int) -> _T:
        """One write under the cap: make room first if it would pass it, and
        once more if SQLite still finds the cap full."""
        cap = self.journal.max_bytes
        if cap is not None:
            over = self.journal.used_bytes + size + CAP_HEADROOM_BYTES - cap
            if over > 0:
                self._make_room(over, at_ns)
        try:
            result = write()
        except JournalFullError:
            if cap is None or not self._make_room(size + CAP_HEADROOM_BYTES, at_ns):
                raise
            result = write()
        if cap is not None:
            self.refresh_fill()
        return result

    def _make_room(self, need: int, at_ns: int) -> bool:
        games = list(self.prunable()) if self.prunable is not None else []
        if not games:
            return False
        try:
            freed = self.journal.prune_evidence(need, games=games, at_ns=at_ns)
        except JournalStorageError as exc:
            logger.error("journal: could not prune evidence: %s", exc)
            return False
        self.pruned_bytes += freed
        return freed > 0

    def refresh_fill(self) -> float | None:
        """Measure :attr:`fill` again (after every write under a cap; cheap)."""
        with self._lock:
            cap = self.journal.max_bytes
            if cap is None or self.journal.closed:
                self._fill = None
                return None
            used = self.journal.used_bytes
            if used >= self.warn_fraction * cap and self.prunable is not None:
                # What pruning could still free does not count against the cap.
                used -= self.journal.prunable_bytes(self.prunable())
            self._fill = max(0.0, used / cap)
            return self._fill

    @property
    def fill(self) -> float | None:
        """The part of the cap in use that pruning cannot free (``None``: no cap)."""
        return self._fill

    @property
    def warning(self) -> str | None:
        """``JOURNAL 85% FULL`` from ``warn_fraction`` of the cap on, else ``None``."""
        fill = self._fill
        if fill is None or fill < self.warn_fraction:
            return None
        return f"JOURNAL {min(99, int(fill * 100))}% FULL"

    def written_seq(self, event: JournalEvent | PendingEvent) -> int | None:
        """The ``seq`` an event got once journaled (``None`` while it is held)."""
        if isinstance(event, JournalEvent):
            return event.seq
        with self._lock:
            return self._seq_of.get(event.token)
