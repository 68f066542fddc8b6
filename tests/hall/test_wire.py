"""The hall's wire: topics and messages read back as written; every bad one is one BadMessage line."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pegwatch.hub import wire
from pegwatch.hub.wire import (
    Ack,
    AckStatus,
    BadMessage,
    Channel,
    ClockReading,
    Command,
    CommandKind,
    Event,
    Evidence,
    Result,
    Row,
    State,
    Status,
    Topic,
)
from pegwatch.rules.errors import BadInput

ids = st.from_regex(r"[A-Za-z0-9_-]{1,32}", fullmatch=True)
texts = st.text(max_size=40)
small = st.integers(min_value=0, max_value=10**9)
colour = st.sampled_from(["red", "green", "blue", "yellow", "white", "black"])

rows = st.builds(
    Row,
    row=st.integers(1, 12),
    guess=st.lists(st.none() | colour, min_size=4, max_size=5).map(tuple),
    black=st.none() | st.integers(0, 5),
    white=st.none() | st.integers(0, 5),
    verdict=st.sampled_from(wire.VERDICTS),
    uncertain=st.booleans(),
)
clocks = st.builds(ClockReading, remaining_ms=st.integers(-10**6, 10**9), running=st.booleans())
states = st.builds(
    State,
    table=ids, match=ids, seq=small, game=st.integers(0, 9),
    players=st.tuples(texts, texts), turn=st.sampled_from([None, "white", "black"]),
    clocks=st.tuples(clocks, clocks), rows=st.lists(rows, max_size=12).map(tuple),
    flags=st.lists(texts, max_size=3).map(tuple), mismarks=st.lists(st.integers(1, 12), max_size=3).map(tuple),
    uncertain_rows=st.lists(st.integers(1, 12), max_size=3).map(tuple),
    alarms=st.lists(texts, max_size=3).map(tuple), phase=texts, paused=st.booleans(),
)
json_leaf = st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.text(max_size=20)
json_values = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=3), max_leaves=12)
payloads = st.dictionaries(st.text(max_size=10), json_values, max_size=5)
events = st.builds(Event, table=ids, match=ids, seq=st.integers(1, 10**9), kind=st.from_regex(r"[a-z_]{1,20}", fullmatch=True),
                   t_ms=small, data=payloads)
results = st.builds(Result, table=ids, match=ids, seq=st.integers(1, 10**9), game=st.integers(0, 9),
                    players=payloads, result=payloads,
                    secret=st.none() | st.lists(colour, min_size=4, max_size=4).map(tuple))
evidences = st.builds(Evidence, id=ids, table=ids, game=st.integers(1, 9), row=st.integers(0, 12),
                      jpeg=st.binary(max_size=300),
                      grid=st.lists(st.tuples(st.floats(0, 4000), st.floats(0, 4000)), max_size=8).map(tuple),
                      masked_secret=st.booleans())
acks = st.builds(Ack, command=ids, table=ids, status=st.sampled_from(AckStatus),
                 reason=st.none() | texts, seq=st.none() | st.integers(1, 10**9))
commands = st.one_of(
    st.builds(Command, id=ids, table=ids, kind=st.just(CommandKind.CONFIRM_ROW),
              args=st.fixed_dictionaries({"game": st.integers(1, 9), "row": st.integers(1, 12)}), by=ids),
    st.builds(Command, id=ids, table=ids, kind=st.just(CommandKind.ADJUST_CLOCK),
              args=st.fixed_dictionaries({"player": st.sampled_from(["white", "black"]),
                                          "delta_ms": st.integers(-10**7, 10**7)}), by=ids),
    st.builds(Command, id=ids, table=ids, kind=st.just(CommandKind.ENTER_RESULT),
              args=st.fixed_dictionaries({"game": st.integers(1, 9),
                                          "secret": st.lists(colour, min_size=4, max_size=4)}), by=ids),
)
statuses = st.builds(Status, table=ids, online=st.booleans(), match=st.none() | ids)

PAIRS = [
    (states, wire.format_state, wire.parse_state),
    (events, wire.format_event, wire.parse_event),
    (results, wire.format_result, wire.parse_result),
    (evidences, wire.format_evidence, wire.parse_evidence),
    (acks, wire.format_ack, wire.parse_ack),
    (commands, wire.format_command, wire.parse_command),
    (statuses, wire.format_status, wire.parse_status),
]


@pytest.mark.parametrize(("strategy", "fmt", "parse"), PAIRS, ids=lambda x: getattr(x, "__name__", ""))
def test_every_message_reads_back_as_written(strategy, fmt, parse) -> None:
    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(strategy)
    def round_trip(message) -> None:
        data = fmt(message)
        assert isinstance(data, bytes)
        assert parse(data) == message
        assert json.loads(data)["v"] == 1

    round_trip()


@settings(deadline=None)
@given(st.sampled_from(Channel), ids, ids)
def test_topics_read_back(channel, tournament, table) -> None:
    text = wire.topic(tournament, table, channel)
    assert text == f"pegwatch/{tournament}/tables/{table}/{channel.value}"
    assert wire.parse_topic(text) == Topic(tournament, table, channel)


def test_the_contract_payloads_parse() -> None:
    state = wire.parse_state(json.dumps({
        "v": 1, "table": "12", "match": "m1", "seq": 7, "game": 1,
        "players": {"white": "Ada", "black": "Bob"}, "turn": "black",
        "clocks": {"white": {"remaining_ms": 1000, "running": False},
                   "black": {"remaining_ms": 2000, "running": True}},
        "rows": [{"row": 1, "guess": ["red", None, "blue", "blue"], "marks": {"black": 1, "white": None},
                  "verdict": "unsure", "uncertain": True}],
        "flags": ["Bob flagged"], "mismarks": [], "uncertain_rows": [1], "alarms": [], "phase": "guess",
        "from_a_newer_table": "ignored",
    }))
    assert state.clocks[1] == ClockReading(2000, True)
    assert state.rows[0].guess == ("red", None, "blue", "blue")
    event = wire.parse_event(b'{"v":1,"id":"m1:3","table":"12","match":"m1","seq":3,"kind":"press","t_ms":5,"data":{"player":0}}')
    assert event.id == "m1:3" and event.data == {"player": 0}
    assert wire.parse_ack(b'{"v":1,"command":"abc","table":"12","status":"duplicate","reason":null,"seq":null}').status is AckStatus.DUPLICATE


@pytest.mark.parametrize(("payload", "words"), [
    (b"not json", "malformed JSON"),
    (b"[1]", "expected a JSON object"),
    (b'{"v":2,"table":"1","status":"online"}', "v: expected version 1"),
    (b'{"v":1,"table":"../x","status":"online"}', "table: expected 1-32"),
    (b'{"v":1,"table":"1","status":"asleep"}', "status: expected online or offline"),
    (b"\xff\xfe", "not UTF-8"),
    (b'{"v":1,"table":"1","status":"online","match":' + b"[" * 600 + b"]" * 600 + b"}", "nested"),
])
def test_a_bad_status_is_one_line_naming_the_topic(payload, words) -> None:
    with pytest.raises(BadMessage) as info:
        wire.parse_status(payload, where="pegwatch/t/tables/1/status")
    message = str(info.value)
    assert "\n" not in message and message.startswith("pegwatch/t/tables/1/status") and words in message
    assert isinstance(info.value, BadInput)


def test_oversized_messages_are_refused_both_ways() -> None:
    big = {"v": 1, "id": "m:1", "table": "1", "match": "m", "seq": 1, "kind": "x", "t_ms": 0,
           "data": {"blob": "x" * wire.MAX_MESSAGE_BYTES}}
    with pytest.raises(BadMessage, match="more than the 65536"):
        wire.parse_event(json.dumps(big))
    with pytest.raises(BadMessage, match="more than the 65536"):
        wire.format_event(Event("1", "m", 1, "x", 0, {"blob": "x" * wire.MAX_MESSAGE_BYTES}))
    # An evidence frame may be larger, up to its own limit.
    frame = Evidence("c1", "1", 1, 2, b"\xff" * 100_000)
    assert wire.parse_evidence(wire.format_evidence(frame)) == frame


def test_an_event_id_must_be_its_match_and_seq() -> None:
    with pytest.raises(BadMessage, match="id: expected 'm1:3'"):
        wire.parse_event(b'{"v":1,"id":"m1:4","table":"12","match":"m1","seq":3,"kind":"press","t_ms":5,"data":{}}')


@pytest.mark.parametrize(("kind", "args", "words"), [
    ("confirm_row", {"game": 1}, "row: expected an integer"),
    ("correct_row", {"game": 1, "row": 2}, "needs a guess or black and white"),
    ("correct_row", {"game": 1, "row": 2, "black": 1}, "white: expected an integer"),
    ("adjust_clock", {"player": "red", "delta_ms": 1}, "player: expected white or black"),
    ("adjust_clock", {"player": "white", "delta_ms": True}, "delta_ms: expected an integer"),
    ("add_penalty", {"player": "white", "penalty": "time"}, "time_ms: expected an integer"),
    ("add_penalty", {"player": "white", "penalty": "jail"}, "penalty: expected one of"),
    ("enter_result", {"game": 1, "secret": "red"}, "secret: expected a list"),
    ("launch_missiles", {}, "kind: expected one of confirm_row"),
])
def test_a_bad_command_names_its_field(kind, args, words) -> None:
    payload = json.dumps({"v": 1, "id": "c1", "table": "3", "kind": kind, "args": args, "by": "arb"})
    with pytest.raises(BadMessage) as info:
        wire.parse_command(payload, where="pegwatch/t/tables/3/commands")
    assert words in str(info.value) and str(info.value).startswith("pegwatch/t/tables/3/commands")


def test_a_message_under_another_tables_topic_is_refused() -> None:
    data = wire.format_status(Status("4", True, "m"))
    with pytest.raises(BadMessage, match="published under table '3'"):
        wire.parse_message("pegwatch/t/tables/3/status", data)
    topic, message = wire.parse_message("pegwatch/t/tables/4/status", data)
    assert topic.channel is Channel.STATUS and message == Status("4", True, "m")


@pytest.mark.parametrize("text", ["pegwatch/t/tables/3", "other/t/tables/3/state", "pegwatch/t/tables/3/nope",
                                  "pegwatch/t/tables/+/state", "pegwatch/t/x/3/state", "pegwatch//tables/3/state"])
def test_bad_topics(text) -> None:
    with pytest.raises(BadMessage):
        wire.parse_topic(text)


def test_filters() -> None:
    assert wire.table_filter("mso", "12") == "pegwatch/mso/tables/12/#"
    assert wire.hall_filter() == "pegwatch/+/tables/+/+"
    assert wire.hall_filter("mso", Channel.ACKS) == "pegwatch/mso/tables/+/acks"
