"""The hub's commands at a table, against a real Mosquitto: journaled first, applied once, acknowledged."""

from __future__ import annotations

import json
import uuid

from hall_kit import TOURNAMENT, HallTable, Listener, play_game_1, wait_until

from pegwatch.device.table.hall.messages import HALL_ACK, HALL_COMMAND
from pegwatch.device.table.program import replay_journal
from pegwatch.hub import wire
from pegwatch.hub.broker import HUB_USER
from pegwatch.hub.wire import AckStatus, Command, CommandKind

COMMANDS = wire.topic(TOURNAMENT, "1", "commands")


def hub(broker) -> Listener:
    listener = Listener(broker, HUB_USER, subscribe=(wire.hall_filter(TOURNAMENT, "acks"),))
    assert listener.wait_connected() == 0
    return listener


def send(listener: Listener, kind: CommandKind, args, *, cid: str | None = None) -> str:
    cid = cid or uuid.uuid4().hex
    assert listener.publish(COMMANDS, wire.format_command(Command(cid, "1", kind, args, by="arbiter-eve"))) == 0
    return cid


def ack_of(listener: Listener, cid: str, status: AckStatus | None = None) -> wire.Ack:
    def found():
        acks = [wire.parse_ack(m.payload) for m in listener.received("/acks")]
        return [a for a in acks if a.command == cid and (status is None or a.status is status)]

    wait_until(found, what=f"the ack of {cid}")
    return found()[0]


def test_a_clock_adjustment_is_journaled_then_applied_then_acknowledged(broker, tmp_path) -> None:
    h = hub(broker)
    t = HallTable(broker, tmp_path / "j.sqlite")
    try:
        play_game_1(t, upto=1)
        t.press(1)  # Bob's clock runs
        before = t.program.flow.remaining_ns(t.clock() + t.program.offset_ns)[1]
        cid = send(h, CommandKind.ADJUST_CLOCK, {"player": "black", "delta_ms": 30_000})
        ack = ack_of(h, cid)
        assert ack.status is AckStatus.APPLIED and ack.reason is None
        after = t.program.flow.remaining_ns(t.clock() + t.program.offset_ns)[1]
        assert after - before == 30_000 * 1_000_000
        # The journal: the command first, then the arbiter's event it became, then the answer.
        kinds = [(e.seq, e.kind, e.payload) for e in t.events()]
        [(cmd_seq, _, cmd)] = [k for k in kinds if k[1] == HALL_COMMAND]
        [(applied_seq, _, applied)] = [k for k in kinds if k[2].get("hall_command") == cid]
        [(ack_seq, _, answer)] = [k for k in kinds if k[1] == HALL_ACK]
        assert cmd_seq < applied_seq < ack_seq
        assert cmd["id"] == cid and cmd["by"] == "arbiter-eve" and cmd["kind"] == "adjust_clock"
        assert applied["action"] == "adjust" and applied["player"] == 1 and applied["delta_ns"] == 30 * 10**9
        assert answer["status"] == "applied" and ack.seq == cmd_seq
    finally:
        t.close()
        h.close()


def test_a_replayed_command_id_is_acknowledged_duplicate_and_applied_once(broker, tmp_path) -> None:
    h = hub(broker)
    t = HallTable(broker, tmp_path / "j.sqlite")
    try:
        play_game_1(t, upto=1)
        t.press(1)
        cid = send(h, CommandKind.ADJUST_CLOCK, {"player": "black", "delta_ms": 10_000})
        first = ack_of(h, cid, AckStatus.APPLIED)
        send(h, CommandKind.ADJUST_CLOCK, {"player": "black", "delta_ms": 10_000}, cid=cid)
        again = ack_of(h, cid, AckStatus.DUPLICATE)
        assert again.seq == first.seq
        assert len([e for e in t.events("arbiter") if e.payload.get("hall_command") == cid]) == 1
        assert len(t.events(HALL_COMMAND)) == 1
    finally:
        t.close()
    # After a restart the table still knows it.
    t = HallTable(broker, tmp_path / "j.sqlite")
    try:
        send(h, CommandKind.ADJUST_CLOCK, {"player": "black", "delta_ms": 10_000}, cid=cid)
        wait_until(lambda: len([m for m in h.received("/acks") if wire.parse_ack(m.payload).status
                                is AckStatus.DUPLICATE]) == 2, what="the second duplicate ack")
        assert len([e for e in t.events("arbiter") if e.payload.get("hall_command") == cid]) == 1
    finally:
        t.close()
        h.close()


def test_a_malformed_command_is_logged_counted_and_never_stops_the_table(broker, tmp_path, caplog) -> None:
    h = hub(broker)
    t = HallTable(broker, tmp_path / "j.sqlite")
    try:
        play_game_1(t, upto=1)
        bad = [b"not json", b"{}", json.dumps({"v": 1, "id": "x1", "table": "1", "kind": "format_disk",
                                                 "args": {}, "by": "eve"}).encode(), b"[" * 5000,
               json.dumps({"v": 1, "id": "x2", "table": "1", "kind": "adjust_clock",
                           "args": {"player": "white"}, "by": "eve"}).encode()]
        for payload in bad:
            assert h.publish(COMMANDS, payload) == 0
        refused = ack_of(h, "x2", AckStatus.REFUSED)
        assert "delta_ms" in refused.reason
        assert ack_of(h, "x1").status is AckStatus.REFUSED
        wait_until(lambda: t.link.commands.bad == len(bad), what="every bad command counted")
        assert "bad hall command" in caplog.text
        # Nothing of them was journaled, and the table takes the next good one.
        assert t.events(HALL_COMMAND) == []
        t.press(1)
        cid = send(h, CommandKind.ADJUST_CLOCK, {"player": "white", "delta_ms": -1000})
        assert ack_of(h, cid).status is AckStatus.APPLIED
    finally:
        t.close()
        h.close()


def test_a_command_the_flow_cannot_take_is_refused_with_the_reason(broker, tmp_path) -> None:
    h = hub(broker)
    t = HallTable(broker, tmp_path / "j.sqlite")
    try:
        play_game_1(t, upto=1)
        cid = send(h, CommandKind.CONFIRM_ROW, {"game": 1, "row": 1})
        ack = ack_of(h, cid)
        assert ack.status is AckStatus.REFUSED and "not waiting for a check" in ack.reason
        cid = send(h, CommandKind.SEND_EVIDENCE, {"game": 1, "row": 1})
        assert ack_of(h, cid).status is AckStatus.REFUSED  # no camera, no frame kept
        # Refused or not, each is journaled with its answer.
        assert len(t.events(HALL_COMMAND)) == len(t.events(HALL_ACK)) == 2
    finally:
        t.close()
        h.close()


def test_a_row_correction_and_a_penalty_go_through_the_arbiters_paths(broker, tmp_path) -> None:
    h = hub(broker)
    t = HallTable(broker, tmp_path / "j.sqlite")
    try:
        play_game_1(t, upto=2)
        cid = send(h, CommandKind.CORRECT_ROW, {"game": 1, "row": 2, "black": 1, "white": 2})
        assert ack_of(h, cid).status is AckStatus.APPLIED
        row = t.program.flow.game.rows[1]
        assert (row.marks.black, row.marks.white, row.confirmed_by) == (1, 2, "arbiter-eve")
        cid = send(h, CommandKind.ADD_PENALTY, {"player": "white", "penalty": "warning", "why": "talking"})
        assert ack_of(h, cid).status is AckStatus.APPLIED
        [ruling] = [e.payload for e in t.events("ruling")]
        assert ruling["penalty"] == "warning" and ruling["by"] == "arbiter-eve" and ruling["player"] == 0
    finally:
        t.close()
        h.close()
    # The hall's commands replay like the arbiter's own actions.
    assert replay_journal(tmp_path / "j.sqlite").mismatches == ()


def test_a_command_sent_while_the_table_is_away_is_applied_when_it_is_back(broker, tmp_path) -> None:
    h = hub(broker)
    path = tmp_path / "j.sqlite"
    t = HallTable(broker, path)
    play_game_1(t, upto=1)
    t.press(1)
    wait_until(lambda: t.link.publisher.connected.is_set(), what="the first connection")
    t.link.drain(20)
    t.close()
    try:
        cid = send(h, CommandKind.ADJUST_CLOCK, {"player": "black", "delta_ms": 5000})
        t = HallTable(broker, path)  # back, paused by its restart: an adjustment still applies
        assert ack_of(h, cid).status is AckStatus.APPLIED
        assert [e.payload["delta_ns"] for e in t.events("arbiter") if e.payload.get("hall_command") == cid] == [
            5 * 10**9]
    finally:
        t.close()
        h.close()
