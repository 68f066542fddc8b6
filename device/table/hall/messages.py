"""Journal events to hall messages: what the table publishes for each, with the secret taken out.

Every journal event becomes one ``events`` message (id ``<match>:<seq>``)
except the clock's heartbeat ``tick`` (the ``state`` carries the time) and
the table's own ``hall_ack`` (an ``acks`` message instead). A game judged
for good (a ``verdict`` ``game``) and the match's result (``verdict``
``match``) also give a ``results`` message: the only one that carries a
secret, written after its game is over.

Events never carry the secret, during the game or after: every key named
``code`` or ``secret`` (the camera's reading of the secret row, the
arbiter's entry of it, a hall command's result entry) and the ``expected``
marks of a row judged against a secret still hidden are removed. The
secret reaches the hall only in the game's result.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final, Protocol

from pegwatch.hub.wire import (
    Ack,
    AckStatus,
    BadMessage,
    Channel,
    Event,
    Result,
    format_ack,
    format_event,
    format_result,
)

__all__ = [
    "HALL_ACK",
    "HALL_COMMAND",
    "SKIPPED_KINDS",
    "MatchView",
    "messages_for",
    "redact",
]

logger = logging.getLogger(__name__)

#: The journal kind of a command from the hub, journaled before it is applied.
HALL_COMMAND: Final = "hall_command"
#: The journal kind of what the table did with it (published as the ``acks`` message).
HALL_ACK: Final = "hall_ack"
#: Kinds not published as events: the clock's heartbeat (the state has the time).
SKIPPED_KINDS: Final = frozenset({"tick"})
_SECRET_KEYS: Final = frozenset({"code", "secret", "expected"})


class MatchView(Protocol):
    """What a result needs beyond its journal event: the players and the game's secret."""

    def players(self) -> tuple[str, str]: ...

    def roles(self, game: int) -> tuple[str, str] | None:
        """The codemaker's and the codebreaker's names in ``game``."""

    def secret(self, game: int) -> tuple[str, ...] | None:
        """The secret ``game`` was judged by (asked only once it is over)."""


def redact(value: Any) -> Any:
    """A plain copy of a payload with every secret-bearing key removed, at any depth."""
    if isinstance(value, Mapping):
        return {str(k): redact(v) for k, v in value.items() if k not in _SECRET_KEYS}
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


def _event(table: str, match: str, seq: int, kind: str, at_ns: int, payload: Mapping[str, Any],
           clock_ms: list[int] | None) -> bytes:
    data = redact(payload)
    if clock_ms is not None:  # each seat's time left just after the event: the hub's rows show them
        data["clock_ms"] = clock_ms
    event = Event(table, match, seq, kind, at_ns // 1_000_000, data)
    try:
        return format_event(event)
    except BadMessage as exc:
        # An event too large for the wire still leaves its place in the log.
        logger.warning("event %d (%s) published without its data: %s", seq, kind, exc)
        return format_event(Event(table, match, seq, kind, event.t_ms, {"omitted": str(exc)[:200]}))


def _result(table: str, match: str, seq: int, payload: Mapping[str, Any], view: MatchView) -> bytes | None:
    what = payload.get("what")
    white, black = view.players()
    if what == "game":
        game = payload.get("game")
        if not isinstance(game, int) or game < 1:
            return None
        players: dict[str, Any] = {"white": white, "black": black}
        roles = view.roles(game)
        if roles is not None:
            players.update(codemaker=roles[0], codebreaker=roles[1])
        verdict = payload.get("verdict")
        return format_result(Result(table, match, seq, game, players,
                                    dict(verdict) if isinstance(verdict, Mapping) else {},
                                    view.secret(game)))
    if what == "match":
        result = {k: v for k, v in payload.items() if k != "what"}
        return format_result(Result(table, match, seq, 0, {"white": white, "black": black}, result))
    return None


def messages_for(
    seq: int, kind: str, at_ns: int, payload: Mapping[str, Any], *, table: str, match: str, view: MatchView,
    clock_ms: list[int] | None = None,
) -> list[tuple[Channel, bytes]]:
    """The messages one journal event gives, in the order they are published (``clock_ms``: each
    seat's time left just after it, when known)."""
    if kind in SKIPPED_KINDS:
        return []
    if kind == HALL_ACK:
        reason = payload.get("reason")
        command_seq = payload.get("seq")
        return [(Channel.ACKS, format_ack(Ack(
            str(payload.get("command")), table, AckStatus(str(payload.get("status"))),
            None if reason is None else str(reason)[:1000],
            command_seq if isinstance(command_seq, int) and command_seq > 0 else None,
        )))]
    out = [(Channel.EVENTS, _event(table, match, seq, kind, at_ns, payload, clock_ms))]
    if kind == "verdict":
        result = _result(table, match, seq, payload, view)
        if result is not None:
            out.append((Channel.RESULTS, result))
    return out
