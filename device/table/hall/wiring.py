"""One call links a table program to the hall: :func:`start_hall` (``pegwatch run`` makes it when ``[hall]`` is set).

:class:`TableLink` puts the parts together: the outbox in the program's
journal file, the publisher and its paho client, the command desk, and the
state offered to the publisher (read under the program's lock, as the
display's model is): at once when the program says it changed (its
``when_changed``), at most ten times a second, and twice a second when
nothing changes, for the clocks. The publisher sleeps between those: a
hall of hundreds of tables costs its Pis, and a benchmark's one machine,
no polling. Without ``[hall]`` nothing of this exists and the table works
alone.
"""

from __future__ import annotations

import logging
import time
from functools import partial
from typing import TYPE_CHECKING, Any

from pegwatch.device.lifetime import Closeable
from pegwatch.device.table.hall.commands import CommandDesk
from pegwatch.device.table.hall.event_clocks import EventClocks
from pegwatch.device.table.hall.messages import messages_for
from pegwatch.device.table.hall.outbox import Outbox
from pegwatch.device.table.hall.publisher import Publisher
from pegwatch.device.table.hall.settings import HallSettings
from pegwatch.device.table.hall.state import build_state, match_id
from pegwatch.hub.wire import Channel

if TYPE_CHECKING:
    from pegwatch.device.table.journal import JournalEvent
    from pegwatch.device.table.program import TableProgram

__all__ = ["TableLink", "start_hall"]

logger = logging.getLogger(__name__)

#: The least time between two states offered (a burst of changes is one state), and the
#: state offered when nothing changed (the clocks run).
LOOK_EVERY_S = 0.1
STATE_EVERY_S = 0.5
#: The publisher's round when nothing wakes it: the table's changes, the broker's acks and
#: a new connection all do, so this only bounds what a missed wake could cost.
IDLE_ROUND_S = 1.0


class _ProgramView:
    """The players, roles and secrets a result needs, read from the program's flow."""

    def __init__(self, program: TableProgram) -> None:
        self.program = program

    def players(self) -> tuple[str, str]:
        return self.program.flow.players

    def roles(self, game: int) -> tuple[str, str] | None:
        with self.program._lock:
            flow = self.program.flow
            if not 1 <= game <= len(flow.games):
                return None
            g = flow.games[game - 1]
            return flow.players[g.codemaker], flow.players[g.codebreaker]

    def secret(self, game: int) -> tuple[str, ...] | None:
        with self.program._lock:
            games = self.program.flow.games
            if not 1 <= game <= len(games) or not games[game - 1].final:
                return None  # never before the game is judged for good
            secret = games[game - 1].secret
            return None if secret is None else tuple(secret)


class TableLink(Closeable):
    """A table program published to the hall (see the module doc); :meth:`close` when done."""

    def __init__(self, program: TableProgram, settings: HallSettings, **publisher: Any) -> None:
        self.program = program
        self.settings = settings
        journal = program.journal
        self.outbox = Outbox(journal.path, max_bytes=journal.max_bytes, journal_seq=lambda: journal.last_seq)
        self.match = match = match_id(program)
        build = partial(_build, table=settings.table, match=match, view=_ProgramView(program),
                        clocks=EventClocks(journal))
        publisher.setdefault("poll_s", IDLE_ROUND_S)
        self.publisher = Publisher(settings, self.outbox, build, match=match,
                                   on_command=self._command, tick=self._tick, **publisher)
        self.commands = CommandDesk(program, settings.table, self.publisher.publish_now,
                                    on_ack=self.publisher.wake)
        self._state_at = 0.0
        self._changed = True

    def start(self) -> TableLink:
        self.program.when_changed = self._program_changed
        self.publisher.start()
        logger.info("table %s publishes to %s (tournament %s)", self.settings.table,
                    self.settings.broker, self.settings.tournament)
        return self

    def _command(self, topic: str, payload: bytes) -> None:
        self.commands.handle(topic, payload)

    def _program_changed(self) -> None:
        # On the stepping thread: a flag and a wake, nothing that could wait.
        self._changed = True
        self.publisher.wake()

    def _tick(self) -> float:
        """Offer the state if it is due; return the seconds until it next is."""
        now = time.monotonic()
        due = self._state_at + (LOOK_EVERY_S if self._changed else STATE_EVERY_S)
        if now < due:
            return due - now
        self._changed = False  # before the read: a change during it asks for another
        self._state_at = now
        self.publisher.offer_state(build_state(self.program, self.settings.table, match=self.match))
        return STATE_EVERY_S

    def drain(self, timeout: float = 10.0) -> bool:
        """Wait until every journaled event is published and acknowledged (True) or ``timeout``."""
        return self.publisher.drain(timeout)

    def close(self, *, drain_s: float = 2.0) -> None:
        """Stop; what the broker can take in ``drain_s`` goes first, the rest waits in the outbox."""
        if self.program.when_changed == self._program_changed:
            self.program.when_changed = None
        try:
            if drain_s > 0:  # a connection still being made has that long too
                self.publisher.drain(drain_s)
            self.publisher.close()
        finally:
            self.outbox.close()


def _build(event: JournalEvent, *, table: str, match: str, view: _ProgramView,
           clocks: EventClocks) -> list[tuple[Channel, bytes]]:
    clock_ms = clocks.at(event)  # every event, the heartbeat too: the replay goes in seq order
    return messages_for(event.seq, event.kind, event.at_ns, event.payload, table=table, match=match, view=view,
                        clock_ms=clock_ms)


def start_hall(cfg: Any, program: TableProgram) -> TableLink | None:
    """The program linked to the hall when the configuration has ``[hall]``; else None."""
    settings: HallSettings | None = getattr(cfg, "hall", None)
    if settings is None:
        return None
    return TableLink(program, settings).start()
