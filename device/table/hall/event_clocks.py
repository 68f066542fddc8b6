"""The clocks at each event the hall is told of: ``clock_ms``, as ``pegwatch report`` shows them.

The outbox reads the journal's events in seq order, maybe long after they
happened (a broker away for an hour), so the clocks are not read off the
running table: :class:`EventClocks` replays the journal through
:class:`~pegwatch.device.table.clock_replay.ClockReplay`, the report's own
replay, one event at a time as the outbox reads them. After a restart, or
when the outbox reads again from an earlier seq, it first replays the
journal up to there. An event the replay cannot take (or a journal it
cannot read) leaves the clocks unknown from then on, with one warning line;
the events themselves still go out.
"""

from __future__ import annotations

import logging

from pegwatch.device.table.clock_replay import ClockReplay
from pegwatch.device.table.journal import Journal, JournalEvent

__all__ = ["EventClocks"]

logger = logging.getLogger(__name__)


class EventClocks:
    """``[seat 0, seat 1]`` ms just after each event of ``journal``, asked in seq order."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self._replay = ClockReplay()
        self._seen = 0  # the last seq replayed
        self._failed = False

    def at(self, event: JournalEvent) -> list[int] | None:
        """The clocks just after ``event`` (None: not known)."""
        if self._failed:
            return None
        try:
            if event.seq <= self._seen:  # read again (a full outbox keeps its cursor): from the start
                self._replay, self._seen = ClockReplay(), 0
            if event.seq > self._seen + 1:
                for earlier in self.journal.events(since=self._seen):
                    if earlier.seq >= event.seq:
                        break
                    self._replay.add(earlier)
                    self._seen = earlier.seq
            clock_ms = self._replay.add(event)[1]
        except Exception as exc:  # never an event lost for its clocks: it goes out without them
            logger.warning("journal event %d: the clocks at it are not known (%s); the hall's events go "
                           "out without them", event.seq, exc)
            self._failed = True
            return None
        self._seen = event.seq
        return clock_ms
