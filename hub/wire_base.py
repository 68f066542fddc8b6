"""The wire's ground: topics, ids, size limits and the checked JSON reader and writer.

:mod:`pegwatch.hub.wire` builds its messages on these; import them from there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, TypeVar

from pegwatch.rules.errors import BadInput
from pegwatch.rules.textfile import parse_json

WIRE_VERSION: Final = 1
TOPIC_ROOT: Final = "pegwatch"
#: Every message but an evidence frame.
MAX_MESSAGE_BYTES: Final = 64 * 1024
#: An evidence frame: a JPEG in base64.
MAX_EVIDENCE_BYTES: Final = 512 * 1024
#: The seats as the wire names them: seat 0 is "white", seat 1 "black".
PLAYERS: Final = ("white", "black")

ID_RE: Final = re.compile(r"[A-Za-z0-9_-]{1,32}")
MATCH_RE: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
COMMAND_ID_RE: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_TEXT: Final = 200
MAX_ROWS: Final = 64
MAX_HOLES: Final = 16


class BadMessage(BadInput):
    """A topic or payload the hall cannot take; the message names the topic and the field."""


class Channel(StrEnum):
    """The last level of a table's topic."""

    STATUS = "status"
    STATE = "state"
    EVENTS = "events"
    RESULTS = "results"
    EVIDENCE = "evidence"
    COMMANDS = "commands"
    ACKS = "acks"


class CommandKind(StrEnum):
    """What the hub asks a table to do (args: :func:`check_command_args`)."""

    CONFIRM_ROW = "confirm_row"
    CORRECT_ROW = "correct_row"
    ADJUST_CLOCK = "adjust_clock"
    ADD_PENALTY = "add_penalty"
    ENTER_RESULT = "enter_result"
    SEND_EVIDENCE = "send_evidence"


class AckStatus(StrEnum):
    APPLIED = "applied"
    REFUSED = "refused"
    DUPLICATE = "duplicate"


# -- topics ----------------------------------------------------------------------


def check_id(value: object, where: str) -> str:
    """A tournament or table id: ``[A-Za-z0-9_-]{1,32}`` (safe in a topic and a URL)."""
    if not isinstance(value, str) or not ID_RE.fullmatch(value):
        raise BadMessage(f"{where}: expected 1-32 of A-Z a-z 0-9 _ -, got {str(value)[:40]!r}")
    return value


@dataclass(frozen=True)
class Topic:
    tournament: str
    table: str
    channel: Channel

    def __post_init__(self) -> None:
        check_id(self.tournament, "topic tournament")
        check_id(self.table, "topic table")


def topic(tournament: str, table: str, channel: Channel | str) -> str:
    """``pegwatch/<tournament>/tables/<table>/<channel>``."""
    return format_topic(Topic(tournament, table, Channel(channel)))


def format_topic(t: Topic) -> str:
    return f"{TOPIC_ROOT}/{t.tournament}/tables/{t.table}/{t.channel.value}"


def parse_topic(text: str) -> Topic:
    parts = text.split("/")
    if len(parts) != 5 or parts[0] != TOPIC_ROOT or parts[2] != "tables":
        raise BadMessage(f"{text[:120]}: not a pegwatch/<tournament>/tables/<table>/<channel> topic")
    try:
        channel = Channel(parts[4])
    except ValueError:
        raise BadMessage(f"{text[:120]}: unknown channel {parts[4][:40]!r}") from None
    return Topic(check_id(parts[1], f"{text[:120]}: tournament"), check_id(parts[3], f"{text[:120]}: table"), channel)


def table_filter(tournament: str, table: str) -> str:
    """Every topic of one table: ``pegwatch/<t>/tables/<table>/#``."""
    return f"{TOPIC_ROOT}/{check_id(tournament, 'tournament')}/tables/{check_id(table, 'table')}/#"


def hall_filter(tournament: str = "+", channel: Channel | str = "+") -> str:
    """Every table's ``channel`` (all channels by default) of a tournament (all by default)."""
    if tournament != "+":
        check_id(tournament, "tournament")
    level = channel if channel == "+" else Channel(channel).value
    return f"{TOPIC_ROOT}/{tournament}/tables/+/{level}"


def event_id(match: str, seq: int) -> str:
    """The id of a table's event or result: ``<match>:<seq>`` (unique: the journal's seq)."""
    return f"{match}:{seq}"


# -- field readers ------------------------------------------------------------------

T = TypeVar("T")


class Fields:
    """A decoded object's fields, each read with its type checked and its place named."""

    def __init__(self, data: object, where: str) -> None:
        if not isinstance(data, dict):
            raise BadMessage(f"{where}: expected a JSON object, got {type(data).__name__}")
        self.data: dict[str, Any] = data
        self.where = where

    def fail(self, key: str, want: str, value: object) -> BadMessage:
        return BadMessage(f"{self.where}.{key}: expected {want}, got {repr(value)[:60]}")

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def integer(self, key: str, *, low: int | None = None, optional: bool = False) -> Any:
        value = self.data.get(key)
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or (low is not None and value < low):
            raise self.fail(key, "an integer" + ("" if low is None else f" >= {low}"), value)
        return value

    def flag(self, key: str) -> bool:
        value = self.data.get(key)
        if not isinstance(value, bool):
            raise self.fail(key, "true or false", value)
        return value

    def text(self, key: str, *, optional: bool = False, limit: int = MAX_TEXT,
            pattern: re.Pattern[str] | None = None) -> Any:
        value = self.data.get(key)
        if value is None and optional:
            return None
        if not isinstance(value, str) or len(value) > limit or (pattern is not None and not pattern.fullmatch(value)):
            raise self.fail(key, f"a string of at most {limit} characters" + (" (an id)" if pattern else ""), value)
        return value

    def choice(self, key: str, kind: Callable[[Any], T], *, optional: bool = False) -> T | None:
        value = self.data.get(key)
        if value is None and optional:
            return None
        try:
            return kind(value)
        except (ValueError, TypeError):
            raise self.fail(key, f"one of {', '.join(m.value for m in kind)}", value) from None  # type: ignore[attr-defined]

    def obj(self, key: str) -> Fields:
        return Fields(self.data.get(key), f"{self.where}.{key}")

    def mapping(self, key: str) -> Mapping[str, Any]:
        value = self.data.get(key)
        if not isinstance(value, dict):
            raise self.fail(key, "a JSON object", value)
        return value

    def array(self, key: str, *, limit: int, optional: bool = False) -> Any:
        value = self.data.get(key)
        if value is None and optional:
            return None
        if not isinstance(value, list) or len(value) > limit:
            raise self.fail(key, f"a list of at most {limit} items", value)
        return value

    def strs(self, key: str, *, limit: int = MAX_ROWS, nullable: bool = False) -> tuple[Any, ...]:
        out = []
        for i, item in enumerate(self.array(key, limit=limit)):
            if (item is None and nullable) or (isinstance(item, str) and len(item) <= MAX_TEXT):
                out.append(item)
            else:
                raise BadMessage(f"{self.where}.{key}[{i}]: expected a string, got {repr(item)[:60]}")
        return tuple(out)

    def ints(self, key: str) -> tuple[int, ...]:
        out = []
        for i, item in enumerate(self.array(key, limit=MAX_ROWS)):
            if isinstance(item, bool) or not isinstance(item, int):
                raise BadMessage(f"{self.where}.{key}[{i}]: expected an integer, got {repr(item)[:60]}")
            out.append(item)
        return tuple(out)


def decode(payload: bytes | str, where: str, limit: int = MAX_MESSAGE_BYTES) -> Fields:
    data = payload.encode("utf-8", "surrogatepass") if isinstance(payload, str) else bytes(payload)
    if len(data) > limit:
        raise BadMessage(f"{where}: {len(data)} bytes, more than the {limit} a message may have")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadMessage(f"{where}: not UTF-8") from None
    fields = Fields(parse_json(text, source=where, error=BadMessage), where)
    version = fields.data.get("v")
    if version != WIRE_VERSION or isinstance(version, bool):
        raise fields.fail("v", f"version {WIRE_VERSION}", version)
    return fields


def encode(body: dict[str, Any], where: str, limit: int = MAX_MESSAGE_BYTES) -> bytes:
    try:
        data = json.dumps({"v": WIRE_VERSION, **body}, separators=(",", ":"), allow_nan=False,
                          ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise BadMessage(f"{where}: cannot be written as JSON: {exc}") from None
    if len(data) > limit:
        raise BadMessage(f"{where}: {len(data)} bytes, more than the {limit} a message may have")
    return data


def json_value(value: Any, where: str) -> Any:
    """A JSON-able copy (frozen journal payloads included), so a message can be compared."""
    if isinstance(value, Mapping):
        return {str(k): json_value(v, where) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v, where) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise BadMessage(f"{where}: {type(value).__name__} is not JSON")
