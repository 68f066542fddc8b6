"""One call links a table program to the hall: :func:`start_hall` (``pegwatch run`` makes it when ``[hall]`` is set).

:class:`TableLink` puts the parts together: the outbox in the program's
journal file, the publisher and its paho client, the command desk, and the
state offered to the publisher at most ten times a second (read under the
program's lock, as the display's model is). Without ``[hall]`` nothing of
this exists and the table works alone.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from pegwatch.device.lifetime import Closeable
from pegwatch.device.table.hall.commands import CommandDesk
from pegwatch.device.table.hall.messages import messages_for
from pegwatch.device.table.hall.outbox import Outbox
from pegwatch.device.table.hall.publisher import Publisher
from pegwatch.device.table.hall.settings import HallSettings
from pegwatch.device.table.hall.state import build_state, match_id
from pegwatch.hub.wire import Channel

if TYPE_CHECKING:
    from pegwatch.device.table.program import TableProgram

__all__ = ["TableLink", "start_hall"]

logger = logging.getLogger(__name__)

#: How often the table is looked at for a change, and the state offered when none.
LOOK_EVERY_S = 0.1
STATE_EVERY_S = 0.5


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
        self.outbox = Outbox(program.journal.path, max_bytes=program.journal.max_bytes)
        self.match = match = match_id(program)
        build = partial(_build, table=settings.table, match=match, view=_ProgramView(program))
        self.publisher = Publisher(settings, self.outbox, build, match=match,
                                   on_command=self._command, tick=self._tick, **publisher)
        self.commands = CommandDesk(program, settings.table, self.publisher.publish_now,
                                    on_ack=self.publisher.wake)
        self._state_at = 0.0
        self._looked_at = 0.0
        self._key: tuple[object, ...] | None = None

    def start(self) -> TableLink:
        self.publisher.start()
        logger.info("table %s publishes to %s (tournament %s)", self.settings.table,
                    self.settings.broker, self.settings.tournament)
        return self

    def _command(self, topic: str, payload: bytes) -> None:
        self.commands.handle(topic, payload)

    def _tick(self) -> None:
        """Offer the state when the table changed (looked at ten times a second), else twice a second."""
        now = time.monotonic()
        if now - self._looked_at < LOOK_EVERY_S:
            return
        self._looked_at = now
        program = self.program
        with program._lock:
            key = (len(program.transcript), program.flow.last_ns, program.flow.paused, id(program.flow),
                   program.alarm, program.camera_message, len(program.verdicts))
        if key == self._key and now - self._state_at < STATE_EVERY_S:
            return
        self._key, self._state_at = key, now
        self.publisher.offer_state(build_state(program, self.settings.table, match=self.match))

    def drain(self, timeout: float = 10.0) -> bool:
        """Wait until every journaled event is published and acknowledged (True) or ``timeout``."""
        return self.publisher.drain(timeout)

    def close(self, *, drain_s: float = 2.0) -> None:
        """Stop; what the broker can take in ``drain_s`` goes first, the rest waits in the outbox."""
        try:
            if drain_s > 0 and self.publisher.connected.is_set():
                self.publisher.drain(drain_s)
            self.publisher.close()
        finally:
            self.outbox.close()


def _build(seq: int, kind: str, at_ns: int, payload: Mapping[str, Any], *, table: str, match: str,
           view: _ProgramView) -> list[tuple[Channel, bytes]]:
    return messages_for(seq, kind, at_ns, payload, table=table, match=match, view=view)


def start_hall(cfg: Any, program: TableProgram) -> TableLink | None:
    """The program linked to the hall when the configuration has ``[hall]``; else None."""
    settings: HallSettings | None = getattr(cfg, "hall", None)
    if settings is None:
        return None
    return TableLink(program, settings).start()
