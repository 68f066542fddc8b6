"""One continuous timeline over the stamps of every boot and session.

See ``docs/journal.md``, "The timeline across restarts".
"""

from __future__ import annotations

from collections.abc import Iterable

from pegwatch.device.table.journal.records import JournalEvent


class Timeline:
    """Maps monotonic stamps of several boots and sessions onto one continuous time.

    Within a *segment* (consecutive events of one boot and one session, with
    stamps that do not go back) continuous time advances exactly as the
    stamps do. At the start of a new segment (a restart of the program or of
    the Pi) the outage is removed: the first event of the segment gets the
    continuous time of the last event before it. The table program treats
    that instant as "the clock comes back paused at the last journaled
    instant".

    Feed events in ``seq`` order with :meth:`add`; :meth:`at` maps a live
    stamp of the current segment (for example "now") without journaling it.
    """

    def __init__(self) -> None:
        self._key: tuple[str, int] | None = None
        self._last_at_ns = 0
        self._offset = 0
        self._last_continuous = 0
        self._segments = 0

    def _starts_segment(self, event: JournalEvent) -> bool:
        return (
            self._key != (event.boot_id, event.session)
            # Defensive: a stamp that goes back cannot be of the same clock.
            or event.at_ns < self._last_at_ns
        )

    def add(self, event: JournalEvent) -> int:
        """The continuous time of ``event``, in ns; events must come in order."""
        if self._key is None:
            # The first segment keeps its own stamps: continuous == at_ns.
            self._offset = 0
            self._segments = 1
        elif self._starts_segment(event):
            self._offset = self._last_continuous - event.at_ns
            self._segments += 1
        self._key = (event.boot_id, event.session)
        self._last_at_ns = event.at_ns
        self._last_continuous = event.at_ns + self._offset
        return self._last_continuous

    def at(self, at_ns: int) -> int:
        """The continuous time of a stamp of the current segment (never before the last event)."""
        if self._key is None:
            return at_ns
        return max(self._last_continuous, at_ns + self._offset)

    def starts_segment(self, event: JournalEvent) -> bool:
        """Whether ``event`` (not yet added) would begin a new segment after a restart."""
        return self._key is not None and self._starts_segment(event)

    @property
    def last_ns(self) -> int:
        """The continuous time of the last event added (0 before any)."""
        return self._last_continuous

    @property
    def segments(self) -> int:
        """How many segments (runs between restarts) have been seen."""
        return self._segments


def timeline(events: Iterable[JournalEvent]) -> list[tuple[JournalEvent, int]]:
    """Pair each event with its continuous time in ns (see :class:`Timeline`)."""
    line = Timeline()
    return [(event, line.add(event)) for event in events]


def segment_starts(events: Iterable[JournalEvent]) -> list[int]:
    """The ``seq`` of each event that begins a new segment after a restart (not the first)."""
    line = Timeline()
    starts = []
    for event in events:
        if line.starts_segment(event):
            starts.append(event.seq)
        line.add(event)
    return starts
