"""The hall's wire format: MQTT topics and the JSON messages on them, symmetric.

Every table publishes under ``pegwatch/<tournament>/tables/<table>/<channel>``
(:class:`Channel`); the hub writes commands to one table's ``commands`` and
reads everything else. Each message is one frozen dataclass with a
``format_*`` that gives the UTF-8 JSON bytes and a ``parse_*`` that takes
them back: ``parse_state(format_state(s)) == s``. A message that is not
JSON, not an object, of another version, above its size limit, or with a
field of the wrong type raises :class:`BadMessage` (a
:class:`~pegwatch.rules.errors.BadInput`) with one line naming the topic and
the field. Fields this version does not know are ignored, so a newer table
can talk to an older hub.

The table's and the hub's clocks never meet: a ``state`` carries each
clock's remaining time as the table read it, and the page runs it from the
moment the hub received the message. No wall clock crosses the wire.
The secret travels only in a ``results`` message, after its game is over.
docs/hall.md ("Tables publish") shows every payload.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pegwatch.hub.wire_base import (
    COMMAND_ID_RE,
    MATCH_RE,
    MAX_EVIDENCE_BYTES,
    MAX_HOLES,
    MAX_MESSAGE_BYTES,
    MAX_ROWS,
    PLAYERS,
    TOPIC_ROOT,
    WIRE_VERSION,
    AckStatus,
    BadMessage,
    Channel,
    CommandKind,
    Fields,
    Topic,
    check_id,
    decode,
    encode,
    event_id,
    format_topic,
    hall_filter,
    json_value,
    parse_topic,
    table_filter,
    topic,
)

__all__ = [
    "MAX_EVIDENCE_BYTES",
    "MAX_MESSAGE_BYTES",
    "PLAYERS",
    "TOPIC_ROOT",
    "WIRE_VERSION",
    "Ack",
    "AckStatus",
    "BadMessage",
    "Channel",
    "ClockReading",
    "Command",
    "CommandKind",
    "Event",
    "Evidence",
    "Result",
    "Row",
    "State",
    "Status",
    "Topic",
    "check_command_args",
    "check_id",
    "event_id",
    "format_ack",
    "format_command",
    "format_event",
    "format_evidence",
    "format_result",
    "format_state",
    "format_status",
    "format_topic",
    "hall_filter",
    "parse_ack",
    "parse_command",
    "parse_event",
    "parse_evidence",
    "parse_message",
    "parse_result",
    "parse_state",
    "parse_status",
    "parse_topic",
    "table_filter",
    "topic",
]

# -- status ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Status:
    """``status``: retained; the table's last will is the offline one."""

    table: str
    online: bool
    match: str | None = None


def format_status(s: Status) -> bytes:
    return encode({"table": s.table, "status": "online" if s.online else "offline", "match": s.match}, "status")


def parse_status(payload: bytes | str, *, where: str = "status") -> Status:
    f = decode(payload, where)
    status = f.data.get("status")
    if status not in ("online", "offline"):
        raise f.fail("status", "online or offline", status)
    return Status(check_id(f.data.get("table"), f"{where}.table"), status == "online",
                  f.text("match", optional=True, pattern=MATCH_RE))


# -- state -------------------------------------------------------------------------------

VERDICTS: Final = ("ok", "mismark", "unsure", "pending")


@dataclass(frozen=True)
class ClockReading:
    remaining_ms: int
    running: bool


@dataclass(frozen=True)
class Row:
    """One row as read: a colour name (or None, unread) per hole, the marks, the verdict."""

    row: int
    guess: tuple[str | None, ...]
    black: int | None
    white: int | None
    verdict: str = "pending"
    uncertain: bool = False


@dataclass(frozen=True)
class State:
    """``state``: retained, at 2 Hz and on change; never the secret while the game runs."""

    table: str
    match: str
    seq: int
    game: int
    players: tuple[str, str]
    turn: str | None
    clocks: tuple[ClockReading, ClockReading]
    rows: tuple[Row, ...] = ()
    flags: tuple[str, ...] = ()
    mismarks: tuple[int, ...] = ()
    uncertain_rows: tuple[int, ...] = ()
    alarms: tuple[str, ...] = ()
    phase: str = ""
    #: The arbiter paused the clocks (neither runs).
    paused: bool = False
    #: The journal's seq of the table's last event other than the clocks' heartbeat
    #: (a table that does not say it: ``seq``, every change counts as an event).
    event_seq: int = 0


def format_state(s: State) -> bytes:
    return encode({
        "table": s.table, "match": s.match, "seq": s.seq, "game": s.game,
        "players": dict(zip(PLAYERS, s.players, strict=True)),
        "turn": s.turn,
        "clocks": {p: {"remaining_ms": c.remaining_ms, "running": c.running}
                   for p, c in zip(PLAYERS, s.clocks, strict=True)},
        "rows": [{"row": r.row, "guess": list(r.guess), "marks": {"black": r.black, "white": r.white},
                  "verdict": r.verdict, "uncertain": r.uncertain} for r in s.rows],
        "flags": list(s.flags), "mismarks": list(s.mismarks), "uncertain_rows": list(s.uncertain_rows),
        "alarms": list(s.alarms), "phase": s.phase, "paused": s.paused, "event_seq": s.event_seq,
    }, "state")


def _row(data: object, where: str) -> Row:
    f = Fields(data, where)
    marks = f.obj("marks")
    verdict = f.data.get("verdict")
    if verdict not in VERDICTS:
        raise f.fail("verdict", f"one of {', '.join(VERDICTS)}", verdict)
    return Row(f.integer("row", low=1), f.strs("guess", limit=MAX_HOLES, nullable=True),
               marks.integer("black", low=0, optional=True), marks.integer("white", low=0, optional=True),
               verdict, f.flag("uncertain"))


def parse_state(payload: bytes | str, *, where: str = "state") -> State:
    f = decode(payload, where)
    players = f.obj("players")
    clocks = f.obj("clocks")
    turn = f.data.get("turn")
    if turn is not None and turn not in PLAYERS:
        raise f.fail("turn", "white, black or null", turn)

    def clock(p: str) -> ClockReading:
        c = clocks.obj(p)
        return ClockReading(c.integer("remaining_ms"), c.flag("running"))

    seq = f.integer("seq", low=0)
    event_seq = f.integer("event_seq", low=0, optional=True)
    return State(
        table=check_id(f.data.get("table"), f"{where}.table"),
        match=f.text("match", pattern=MATCH_RE), seq=seq, game=f.integer("game", low=0),
        players=(players.text("white"), players.text("black")), turn=turn,
        clocks=(clock("white"), clock("black")),
        rows=tuple(_row(r, f"{where}.rows[{i}]") for i, r in enumerate(f.array("rows", limit=MAX_ROWS))),
        flags=f.strs("flags"), mismarks=f.ints("mismarks"), uncertain_rows=f.ints("uncertain_rows"),
        alarms=f.strs("alarms"), phase=f.text("phase"), paused=f.data.get("paused") is True,
        event_seq=seq if event_seq is None else event_seq,
    )


# -- events and results --------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """``events``: one journal event, its secret removed while the game runs. Id: ``<match>:<seq>``."""

    table: str
    match: str
    seq: int
    kind: str
    t_ms: int
    data: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def id(self) -> str:
        return event_id(self.match, self.seq)


def format_event(e: Event) -> bytes:
    return encode({"id": e.id, "table": e.table, "match": e.match, "seq": e.seq, "kind": e.kind,
                    "t_ms": e.t_ms, "data": json_value(e.data, "events.data")}, "events")


def _check_event_id(f: Fields, match: str, seq: int) -> None:
    if f.data.get("id") != event_id(match, seq):
        raise f.fail("id", f"{event_id(match, seq)!r} (<match>:<seq>)", f.data.get("id"))


def parse_event(payload: bytes | str, *, where: str = "events") -> Event:
    f = decode(payload, where)
    e = Event(check_id(f.data.get("table"), f"{where}.table"), f.text("match", pattern=MATCH_RE),
              f.integer("seq", low=1), f.text("kind", limit=64), f.integer("t_ms"), f.mapping("data"))
    _check_event_id(f, e.match, e.seq)
    return e


@dataclass(frozen=True)
class Result:
    """``results``: a finished game (``game`` >= 1) or the match (``game`` 0), with its secret."""

    table: str
    match: str
    seq: int
    game: int
    players: Mapping[str, Any] = field(default_factory=dict, hash=False)
    result: Mapping[str, Any] = field(default_factory=dict, hash=False)
    secret: tuple[str, ...] | None = None

    @property
    def id(self) -> str:
        return event_id(self.match, self.seq)


def format_result(r: Result) -> bytes:
    return encode({"id": r.id, "table": r.table, "match": r.match, "seq": r.seq, "game": r.game,
                    "players": json_value(r.players, "results.players"),
                    "result": json_value(r.result, "results.result"),
                    "secret": None if r.secret is None else list(r.secret)}, "results")


def parse_result(payload: bytes | str, *, where: str = "results") -> Result:
    f = decode(payload, where)
    r = Result(check_id(f.data.get("table"), f"{where}.table"), f.text("match", pattern=MATCH_RE),
               f.integer("seq", low=1), f.integer("game", low=0), f.mapping("players"), f.mapping("result"),
               f.strs("secret", limit=MAX_HOLES) if f.has("secret") else None)
    _check_event_id(f, r.match, r.seq)
    return r


# -- evidence ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Evidence:
    """``evidence``: a row's frame, asked for by the command ``id``; the secret masked while it runs."""

    id: str
    table: str
    game: int
    row: int
    jpeg: bytes
    grid: tuple[tuple[float, float], ...] = ()
    masked_secret: bool = True


def format_evidence(e: Evidence) -> bytes:
    return encode({"id": e.id, "table": e.table, "row": e.row, "game": e.game,
                    "jpeg_b64": base64.b64encode(e.jpeg).decode("ascii"),
                    "grid": [[x, y] for x, y in e.grid], "masked_secret": e.masked_secret},
                   "evidence", MAX_EVIDENCE_BYTES)


def parse_evidence(payload: bytes | str, *, where: str = "evidence") -> Evidence:
    f = decode(payload, where, MAX_EVIDENCE_BYTES)
    try:
        jpeg = base64.b64decode(f.text("jpeg_b64", limit=MAX_EVIDENCE_BYTES), validate=True)
    except binascii.Error:
        raise f.fail("jpeg_b64", "base64", "...") from None
    grid = []
    for i, point in enumerate(f.array("grid", limit=4096)):
        if (not isinstance(point, list) or len(point) != 2
                or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in point)):
            raise BadMessage(f"{where}.grid[{i}]: expected [x, y], got {repr(point)[:60]}")
        grid.append((float(point[0]), float(point[1])))
    return Evidence(f.text("id", pattern=COMMAND_ID_RE), check_id(f.data.get("table"), f"{where}.table"),
                    f.integer("game", low=1), f.integer("row", low=0), jpeg, tuple(grid), f.flag("masked_secret"))


# -- commands and acks ---------------------------------------------------------------------------


def _seat(f: Fields, key: str = "player") -> None:
    if f.data.get(key) not in PLAYERS:
        raise f.fail(key, "white or black", f.data.get(key))


def _marks(f: Fields) -> None:
    if f.has("black") or f.has("white"):
        f.integer("black", low=0)
        f.integer("white", low=0)


def check_command_args(kind: CommandKind, args: Mapping[str, Any], where: str = "commands.args") -> None:
    """Refuse args that do not fit ``kind`` (:class:`BadMessage`); what each kind takes:

    * ``confirm_row`` ``{game, row}`` and, for what the camera could not read,
      ``guess`` (colour names) and/or ``black`` + ``white``;
    * ``correct_row`` ``{game, row}`` with ``guess`` and/or ``black`` + ``white``: replaces the row;
    * ``adjust_clock`` ``{player: "white"|"black", delta_ms}`` (added; negative takes time);
    * ``add_penalty`` ``{player, penalty: warning|time|points|loss, time_ms?, points?, why?}``;
    * ``enter_result`` ``{game, secret}``: the secret entered by hand, which ends the game's judgement;
    * ``send_evidence`` ``{game, row}`` (row 0: the secret row).
    """
    f = Fields(dict(args), where)
    if kind in (CommandKind.CONFIRM_ROW, CommandKind.CORRECT_ROW, CommandKind.SEND_EVIDENCE):
        f.integer("game", low=1)
        f.integer("row", low=0 if kind is CommandKind.SEND_EVIDENCE else 1)
    if kind in (CommandKind.CONFIRM_ROW, CommandKind.CORRECT_ROW):
        if f.has("guess"):
            f.strs("guess", limit=MAX_HOLES)
        _marks(f)
        if kind is CommandKind.CORRECT_ROW and not (f.has("guess") or f.has("black")):
            raise BadMessage(f"{where}: correct_row needs a guess or black and white")
    elif kind is CommandKind.ADJUST_CLOCK:
        _seat(f)
        f.integer("delta_ms")
    elif kind is CommandKind.ADD_PENALTY:
        _seat(f)
        if f.data.get("penalty") not in ("warning", "time", "points", "loss"):
            raise f.fail("penalty", "one of warning, time, points, loss", f.data.get("penalty"))
        f.integer("time_ms", low=0, optional=f.data.get("penalty") != "time")
        f.integer("points", low=0, optional=True)
        f.text("why", optional=True)
    elif kind is CommandKind.ENTER_RESULT:
        f.integer("game", low=1)
        f.strs("secret", limit=MAX_HOLES)


@dataclass(frozen=True)
class Command:
    """``commands``: an arbiter's action for one table; ``id`` a fresh ``uuid4().hex``."""

    id: str
    table: str
    kind: CommandKind
    args: Mapping[str, Any] = field(default_factory=dict, hash=False)
    by: str = "arbiter"

    def __post_init__(self) -> None:
        check_command_args(self.kind, self.args)


def format_command(c: Command) -> bytes:
    return encode({"id": c.id, "table": c.table, "kind": c.kind.value,
                    "args": json_value(c.args, "commands.args"), "by": c.by}, "commands")


def parse_command(payload: bytes | str, *, where: str = "commands") -> Command:
    f = decode(payload, where)
    kind = f.choice("kind", CommandKind)
    assert kind is not None
    args = f.mapping("args")
    check_command_args(kind, args, f"{where}.args")
    return Command(f.text("id", pattern=COMMAND_ID_RE), check_id(f.data.get("table"), f"{where}.table"),
                   kind, args, f.text("by", limit=64))


@dataclass(frozen=True)
class Ack:
    """``acks``: what the table did with a command; ``seq`` is the journal event that holds it."""

    command: str
    table: str
    status: AckStatus
    reason: str | None = None
    seq: int | None = None


def format_ack(a: Ack) -> bytes:
    return encode({"command": a.command, "table": a.table, "status": a.status.value,
                    "reason": a.reason, "seq": a.seq}, "acks")


def parse_ack(payload: bytes | str, *, where: str = "acks") -> Ack:
    f = decode(payload, where)
    status = f.choice("status", AckStatus)
    assert status is not None
    return Ack(f.text("command", pattern=COMMAND_ID_RE), check_id(f.data.get("table"), f"{where}.table"),
               status, f.text("reason", optional=True, limit=1000), f.integer("seq", low=1, optional=True))


# -- any message ---------------------------------------------------------------------------------

Message = Status | State | Event | Result | Evidence | Command | Ack

_PARSERS: Final[dict[Channel, Callable[..., Message]]] = {
    Channel.STATUS: parse_status, Channel.STATE: parse_state, Channel.EVENTS: parse_event,
    Channel.RESULTS: parse_result, Channel.EVIDENCE: parse_evidence, Channel.COMMANDS: parse_command,
    Channel.ACKS: parse_ack,
}


def parse_message(topic_text: str, payload: bytes | str) -> tuple[Topic, Message]:
    """The topic and its message; a message naming another table than its topic is refused."""
    t = parse_topic(topic_text)
    message = _PARSERS[t.channel](payload, where=topic_text[:120])
    table = message.table
    if table != t.table:
        raise BadMessage(f"{topic_text[:120]}.table: {table!r} published under table {t.table!r}")
    return t, message
