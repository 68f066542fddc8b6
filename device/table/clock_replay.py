"""Each seat's remaining time just after each journal event, replayed from the journal.

The journal keeps the presses, not the time left. :class:`ClockReplay`
replays its flow events and rulings through the table's own flow and clock
(as ``pegwatch replay`` does), at their continuous times (outages removed),
so the report (``pegwatch report``) and the hall's event messages can both
say what each clock showed when a row was confirmed.
"""

from __future__ import annotations

from collections.abc import Mapping

from pegwatch.device.table.journal import JournalEvent, Timeline, thaw
from pegwatch.device.table.replay import new_log
from pegwatch.device.table.rulings import FLOW_KINDS, RULING, FlowLog
from pegwatch.rules.errors import BadInput
from pegwatch.rules.flow import FlowError

__all__ = ["ClockReplay", "match_players"]


def match_players(payload: Mapping[str, object]) -> tuple[str, str] | None:
    raw = payload.get("players")
    if isinstance(raw, tuple | list) and len(raw) == 2:
        return str(raw[0]), str(raw[1])
    return None


class ClockReplay:
    """Each seat's remaining time just after each journal event, from the table's own clock.

    The journal keeps the presses, not the time left: its flow events and
    rulings are replayed through the table's flow and clock (``FlowLog``, as
    ``pegwatch replay`` does) at their continuous times. Feed every event in
    seq order to :meth:`add`; it gives the event's continuous time in ms and
    ``[seat 0, seat 1]`` in ms (``None`` before the ``match`` event names the
    players). The hall's publisher can attach the same ``clock_ms`` to the
    events it sends, so that the hub's page shows the clocks at each row too.
    """

    def __init__(self) -> None:
        self._log: FlowLog | None = None
        self._line = Timeline()

    def add(self, event: JournalEvent) -> tuple[int, list[int] | None]:
        """``(t_ms, clock_ms)`` for ``event``; FlowError for a flow event the flow cannot take."""
        cont = self._line.add(event)
        if self._log is None and event.kind == "match":
            players = match_players(event.payload)
            if players is not None:
                self._log = new_log(players, str(event.payload.get("rules", "mso")),
                                    str(event.payload.get("clock", "mso-mastermind")))
        if self._log is None:
            return cont // 1_000_000, None
        if event.kind in (*FLOW_KINDS, RULING):
            try:
                self._log.apply(event.kind, thaw(event.payload), cont)
            except (FlowError, BadInput):
                # A ruling the table refused is refused again (as on replay); a damaged event is not.
                if event.kind != RULING:
                    raise
        left = self._log.flow.remaining_ns(cont)
        return cont // 1_000_000, [left.get(0, 0) // 1_000_000, left.get(1, 0) // 1_000_000]
