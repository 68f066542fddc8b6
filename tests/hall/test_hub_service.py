"""The hub against a real Mosquitto with the hall's ACL: bad input counted, duplicates stored once,
commands kept for a table that is away, a hub that was away gets what it missed."""

from __future__ import annotations

import itertools
import json

import pytest
from hall_kit import TOURNAMENT, Listener, wait_until

from pegwatch.hub import wire
from pegwatch.hub.broker import HUB_USER, table_user
from pegwatch.hub.model import Game, GameKind, Pairing, Player, Round, Tournament
from pegwatch.hub.service import Hall, HallLink
from pegwatch.hub.store import SqliteHallStore

_ids = itertools.count(1)
#: Generous: these wait for messages on a machine that may be busy with other tests, never time them.
LONG = 60.0


def tournament() -> Tournament:
    t = Tournament("test", Game(GameKind.MASTERMIND, "mso"), tables=("1", "2", "3"),
                   players=tuple(Player(p, p.title()) for p in ("ann", "bob", "cy", "dee")))
    return t.add_round(Round(1, (Pairing("1", ("ann", "bob")), Pairing("2", ("cy", "dee")))))


@pytest.fixture
def store(tmp_path):
    s = SqliteHallStore(tmp_path / "hall.sqlite")
    yield s
    s.close()


def hub_link(broker, hall: Hall, client_id: str) -> HallLink:
    link = HallLink(hall, broker.host, broker.port, username=HUB_USER, password=broker.password(HUB_USER),
                    client_id=client_id).start()
    assert link.wait_for_connection(LONG), "the hub did not subscribe"
    return link


def state(table: str, seq: int) -> bytes:
    return wire.format_state(wire.State(
        table=table, match="m1", seq=seq, game=1, players=("Ann", "Bob"), turn="black",
        clocks=(wire.ClockReading(300_000, False), wire.ClockReading(290_000, True)), flags=("white",)))


def event(table: str, seq: int, **data) -> bytes:
    return wire.format_event(wire.Event(table, "m1", seq, "press", seq * 100, data or {"seat": 1}))


def test_bad_payloads_are_counted_duplicates_stored_once_and_the_hub_goes_on(broker, store):
    hall = Hall(store, tournament(), tournament_id=TOURNAMENT)
    link = hub_link(broker, hall, f"hub-test-{next(_ids)}")
    table1 = Listener(broker, table_user("1"))
    table4 = Listener(broker, table_user("4"))  # a table of the broker that hub.toml does not name
    try:
        assert table1.wait_connected() == 0 and table4.wait_connected() == 0
        mine = lambda channel: wire.topic(TOURNAMENT, "1", channel)  # noqa: E731
        assert table1.publish(mine("state"), b"{not json") == 0
        assert table1.publish(mine("events"), b"[" * 70_000) == 0  # over the 64 KiB a message may be
        assert table1.publish(mine("events"), event("2", 1)) == 0  # names another table than its topic
        assert table1.publish(mine("events"), event("1", 1)) == 0
        assert table1.publish(mine("events"), event("1", 1)) == 0  # the outbox sent it again
        assert table1.publish(mine("state"), state("1", 1)) == 0
        assert table4.publish(wire.topic(TOURNAMENT, "4", "state"), state("4", 1)) == 0
        assert table1.publish(mine("events"), event("1", 2)) == 0
        # One publisher's messages arrive in order: once event 2 is in, everything before it is.
        wait_until(lambda: len(store.messages("event")) == 2, timeout=LONG, what="table 1's events in the store")
        wait_until(lambda: store.counters().get("unknown_table") == 1, timeout=LONG, what="table 4 counted")
        assert [m.id for m in store.messages("event")] == ["m1:1", "m1:2"]
        assert store.counters() == {"bad_message": 3, "duplicate_events": 1, "unknown_table": 1}
        live = hall.table("1")
        assert live.state is not None and live.state.flags == ("white",)
        assert hall.table("4") is None
    finally:
        table1.close()
        table4.close()
        link.close()


def test_a_command_waits_for_a_table_that_is_away_and_reaches_it_when_it_is_back(broker, store):
    hall = Hall(store, tournament(), tournament_id=TOURNAMENT)
    link = hub_link(broker, hall, f"hub-test-{next(_ids)}")
    status = wire.topic(TOURNAMENT, "2", "status")
    table2 = Listener(broker, table_user("2"), subscribe=(wire.topic(TOURNAMENT, "2", "commands"),))
    try:
        assert table2.wait_connected() == 0
        table2.client.publish(status, wire.format_status(wire.Status("2", False)), qos=1, retain=True)
        wait_until(lambda: hall.table("2") is not None and hall.table("2").online is False, timeout=LONG, what="table 2 offline")
        command = hall.send_command("2", wire.CommandKind.ADJUST_CLOCK, {"player": "white", "delta_ms": 10_000}, "arb")
        assert store.commands("2")[0].status == "pending"
        # The table is back: its retained status says so, and the hub sends what it kept.
        table2.client.publish(status, wire.format_status(wire.Status("2", True, "m1")), qos=1, retain=True)
        wait_until(lambda: table2.received("/commands"), timeout=LONG, what="the command at table 2")
        sent = wire.parse_command(table2.received("/commands")[0].payload)
        assert (sent.id, dict(sent.args)) == (command.id, {"player": "white", "delta_ms": 10_000})
        assert store.commands("2")[0].status == "sent"
        ack = wire.format_ack(wire.Ack(command.id, "2", wire.AckStatus.APPLIED, None, 42))
        assert table2.publish(wire.topic(TOURNAMENT, "2", "acks"), ack) == 0
        assert table2.publish(wire.topic(TOURNAMENT, "2", "acks"), ack) == 0  # replayed
        wait_until(lambda: store.counters().get("stray_acks") == 1, timeout=LONG, what="the replayed ack counted")
        [done] = store.commands("2")
        assert (done.status, done.seq) == ("applied", 42)
        assert hall.pending("2") == 0
    finally:
        table2.close()
        link.close()


def test_a_hub_that_was_away_gets_what_the_tables_sent_meanwhile(broker, store):
    hall = Hall(store, tournament(), tournament_id=TOURNAMENT)
    client_id = f"hub-test-{next(_ids)}"
    link = hub_link(broker, hall, client_id)
    table3 = Listener(broker, table_user("3"))
    try:
        assert table3.wait_connected() == 0
        assert table3.publish(wire.topic(TOURNAMENT, "3", "events"), event("3", 1)) == 0
        wait_until(lambda: store.messages("event", "3"), timeout=LONG, what="the first event")
        link.close()  # the broker keeps the hub's session and queues for it
        for seq in (2, 3, 4):
            assert table3.publish(wire.topic(TOURNAMENT, "3", "events"), event("3", seq)) == 0
        assert table3.publish(wire.topic(TOURNAMENT, "3", "events"), event("3", 1)) == 0  # sent again
        # A new hub process: a new Hall over the same store, the same client id.
        again = Hall(store, tournament(), tournament_id=TOURNAMENT)
        link = hub_link(broker, again, client_id)
        wait_until(lambda: len(store.messages("event", "3")) == 4, timeout=LONG, what="the queued events")
        # At least the copy the table sent again; a message in flight when the hub left comes again too.
        wait_until(lambda: store.counters().get("duplicate_events", 0) >= 1, timeout=LONG, what="the duplicate counted")
        assert [m.id for m in store.messages("event", "3")] == ["m1:1", "m1:2", "m1:3", "m1:4"]
    finally:
        table3.close()
        link.close()


def test_a_match_result_from_a_table_lands_in_the_standings_once(broker, store):
    hall = Hall(store, tournament(), tournament_id=TOURNAMENT)
    link = hub_link(broker, hall, f"hub-test-{next(_ids)}")
    table1 = Listener(broker, table_user("1"))
    try:
        assert table1.wait_connected() == 0
        result = wire.format_result(wire.Result("1", "m1", 90, 0, {"white": "Ann", "black": "bob"},
                                                {"attempts": {"white": [3], "black": [7]}}))
        for _ in range(2):
            assert table1.publish(wire.topic(TOURNAMENT, "1", "results"), result) == 0
        wait_until(lambda: store.counters().get("duplicate_results") == 1, timeout=LONG, what="the second copy counted")
        [r] = hall.tournament.results
        assert (r.table, r.players, r.attempts) == ("1", ("ann", "bob"), ((3,), (7,)))
    finally:
        table1.close()
        link.close()


def test_a_real_table_s_game_on_the_hub_s_pages_shows_no_secret_until_it_is_over(broker, store, tmp_path):
    """The table program publishes through its own link; the hub stores it and serves the detail
    (the shared table-detail template) with the arbiter's forms; no page, API answer or stored
    message holds the secret while game 1 runs, and its result brings it once it is over."""
    import re
    import warnings

    from hall_kit import GAME_1, SECRET, HallTable, play_game_1

    from pegwatch.hub.config import Account
    from pegwatch.hub.web import create_app
    from pegwatch.hub.web.auth import hash_password

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    hall = Hall(store, tournament(), tournament_id=TOURNAMENT)
    link = hub_link(broker, hall, f"hub-test-{next(_ids)}")
    table = HallTable(broker, tmp_path / "table1.sqlite", "1")
    secret = re.compile(r"\W+".join(SECRET))
    pages = ["/", "/hall", "/tables/1", "/results", "/standings", "/api/tables", "/api/tables/1", "/api/results"]
    try:
        play_game_1(table, upto=2)
        expected = table.expected_ids()
        wait_until(lambda: {m.id for m in store.messages("event", "1", limit=10_000)} >= set(expected),
                   timeout=LONG, what="every event of the table at the hub")
        wait_until(lambda: hall.table("1").state is not None and len(hall.table("1").state.rows) == 2,
                   timeout=LONG, what="the table's state with its two rows")
        stored = json.dumps([m.payload for m in store.messages("event", limit=10_000)])
        assert not secret.search(stored) and '"secret":' not in stored and '"code":' not in stored
        with TestClient(create_app(hall, [Account("arb", hash_password("pw"))])) as client:
            token = re.search(r'name="csrf" value="([^"]+)"', client.get("/login").text).group(1)
            client.post("/login", data={"csrf": token, "login": "arb", "password": "pw"})
            for path in pages:
                text = client.get(path).text
                assert not secret.search(text), path
            detail = client.get("/tables/1").text
            assert 'id="table-detail"' in detail and 'data-kind="adjust_clock"' in detail
            assert 'data-masked="yes"' in detail and "data-secret" not in detail
            # Each row's clocks reach the hub with its events: the same as the table's own report.
            from pegwatch.device.table.report import report_html
            marks = re.compile(r'class="clocks-at-marks">[^<]*<span class="clock" (data-clock-0="\d+" data-clock-1="\d+")')
            assert len(marks.findall(detail)) == 2
            assert marks.findall(detail) == marks.findall(report_html(table.path, mask_secret=True))
            # Bob solves it on row 3 and the shield opens: the game's result, and only it, carries the secret.
            table.row(3, *GAME_1[2])
            table.secret("open")
            wait_until(lambda: any(m.payload.get("secret") for m in store.messages("result", "1")),
                       timeout=LONG, what="game 1's result")
            assert secret.search(json.dumps(client.get("/api/results").json()["received"]))
    finally:
        table.close()
        link.close()



def test_pegwatch_hub_serves_the_hall_live_and_stops_on_ctrl_c(broker, tmp_path):
    """The command as an arbiter runs it: the page's API answers, a table's state reaches the
    live stream, and Ctrl-C stops it with the stream still open."""
    import os
    import signal
    import subprocess
    import sys

    import httpx

    from pegwatch.hub.broker import free_port
    from pegwatch.hub.web.auth import hash_password

    config = tmp_path / "hub.toml"
    config.write_text(
        '[tournament]\nname = "Test open"\ngame = "mastermind"\ntables = ["1", "2", "3"]\n'
        '[[players]]\nid = "ann"\n[[players]]\nid = "bob"\n'
        f'[hall]\ntournament = "{TOURNAMENT}"\n'
        f'[[accounts]]\nlogin = "arb"\npassword_hash = "{hash_password("pw")}"\n', encoding="utf-8")
    port = free_port()
    cmd = [sys.executable, "-c", "import sys; from pegwatch.device.cli import main; sys.exit(main())", "hub",
           "--broker", broker.url, "--db", str(tmp_path / "hall.sqlite"), "--http", f"127.0.0.1:{port}",
           "--config", str(config), "--password-file", str(broker.password_file(HUB_USER))]
    hub = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "PYTHONUNBUFFERED": "1"})
    base = f"http://127.0.0.1:{port}"
    table1 = Listener(broker, table_user("1"))
    try:
        def answers() -> bool:
            try:
                return httpx.get(f"{base}/api/tables", timeout=2).status_code == 200
            except httpx.TransportError:
                assert hub.poll() is None, hub.communicate()[1]
                return False

        wait_until(answers, timeout=2 * LONG, what="pegwatch hub's page")
        assert [t["table"] for t in httpx.get(f"{base}/api/tables").json()["tables"]] == ["1", "2", "3"]
        assert table1.wait_connected() == 0
        with httpx.stream("GET", f"{base}/api/stream", timeout=30) as stream:
            lines = stream.iter_lines()
            assert next(lines).startswith("retry:")
            # The hub may not have subscribed yet: the retained state reaches it when it does.
            table1.client.publish(wire.topic(TOURNAMENT, "1", "state"), state("1", 3), qos=1, retain=True)
            event = next(line for line in lines if line.startswith("data:"))
            assert json.loads(event[5:])["table"] == "1"
            hub.send_signal(signal.SIGINT)
            assert hub.wait(timeout=30) == 0
        out, err = hub.communicate()
        assert f"page http://127.0.0.1:{port}/" in out and "Traceback" not in err
    finally:
        table1.close()
        if hub.poll() is None:
            hub.kill()
            hub.wait()


def test_an_event_is_acknowledged_to_the_broker_only_once_it_is_on_disk(tmp_path):
    """handle(done=...) does not wait for an event's commit, and calls done only after it."""
    import threading
    from concurrent.futures import Future

    gate = threading.Event()

    class HeldStore(SqliteHallStore):
        def add_message_later(self, *args):  # the commit's outcome is let out only at the gate
            real = super().add_message_later(*args)
            out: Future[bool] = Future()
            threading.Thread(target=lambda: (gate.wait(), out.set_result(real.result())), daemon=True).start()
            return out

    store = HeldStore(tmp_path / "hall.sqlite")
    try:
        hall = Hall(store, tournament(), tournament_id=TOURNAMENT)
        heard = []
        hall.listen(lambda what, detail: heard.append((what, detail.get("id"))))
        topic = wire.topic(TOURNAMENT, "1", "events")
        acked = threading.Event()
        assert hall.handle(topic, event("1", 7), done=acked.set) is True  # handed over, not waited for
        assert not acked.is_set() and ("event", "m1:7") not in heard
        gate.set()
        assert acked.wait(LONG)
        wait_until(lambda: ("event", "m1:7") in heard, what="the event told after its commit")
        again = threading.Event()
        hall.handle(topic, event("1", 7), done=again.set)  # the broker sent it twice: kept once
        assert again.wait(LONG)
        assert store.message_count("event") == 1 and store.counters().get("duplicate_events") == 1
        assert heard.count(("event", "m1:7")) == 1
        bad = threading.Event()
        assert hall.handle(topic, b"{not json", done=bad.set) is False and bad.is_set()  # acked: never again
    finally:
        store.close()


def test_a_state_that_only_says_the_clocks_ran_on_is_told_at_most_every_five_seconds(store):
    """Pages run the clocks themselves: the hub keeps such a state but tells its listeners of it
    only every 5 s; any other change, a clock's start or stop, or an adjustment, at once."""
    now = [10**12]
    hall = Hall(store, tournament(), tournament_id=TOURNAMENT, clock=lambda: now[0])
    told = []
    hall.listen(lambda what, detail: told.append(what) if what == "table" else None)
    topic = wire.topic(TOURNAMENT, "1", "state")

    def send(seq, white_ms, black_ms, *, after_ms, running=True, flags=("white",), event_seq=1):
        now[0] += after_ms * 1_000_000
        hall.handle(topic, wire.format_state(wire.State(
            table="1", match="m1", seq=seq, game=1, players=("Ann", "Bob"), turn="black",
            clocks=(wire.ClockReading(white_ms, False), wire.ClockReading(black_ms, running)), flags=flags,
            event_seq=event_seq)))
        return len(told)

    assert send(1, 300_000, 290_000, after_ms=0) == 1  # the first
    assert send(2, 300_000, 289_500, after_ms=500) == 1  # Bob's clock ran on (a heartbeat's seq)
    assert hall.table("1").state.seq == 2  # kept all the same
    assert send(3, 300_000, 289_000, after_ms=500) == 1
    assert send(4, 300_000, 259_000, after_ms=500) == 2  # 30 s off where it ran to: an adjustment
    assert send(5, 300_000, 258_500, after_ms=500, running=False) == 3  # stopped
    assert send(6, 300_000, 258_500, after_ms=500, running=False, flags=("white", "black")) == 4  # a flag
    for seq in range(7, 16):  # a stopped clock that stays: quiet until five seconds passed
        assert send(seq, 300_000, 258_500, after_ms=500, running=False, flags=("white", "black")) == 4
    assert send(16, 300_000, 258_500, after_ms=500, running=False, flags=("white", "black")) == 5
    # An event that shows nothing on the grid (the secret read under a closed shield) moves the
    # table's event_seq: told at once, so a page that waits for that seq is not kept 5 s.
    assert send(17, 300_000, 258_500, after_ms=500, running=False, flags=("white", "black"), event_seq=17) == 6


def test_a_table_s_state_says_its_last_event_beside_its_last_heartbeat(tmp_path):
    """``event_seq`` moves with every journaled event but the clocks' heartbeat; a state from a
    table that does not say it counts every seq as an event's."""
    from pegwatch.device.table.hall.state import build_state
    from pegwatch.device.table.program import TableProgram

    now = [10**12]
    program = TableProgram.open(tmp_path / "j.sqlite", players=("Ann", "Bob"), now_ns=lambda: now[0])
    try:
        program.press(0)  # Ann makes the code: Bob's clock runs
        program.step()
        pressed = build_state(program, "1")
        assert pressed.event_seq == pressed.seq
        now[0] += 1_500_000_000
        program.step()  # a heartbeat only
        ticked = build_state(program, "1")
        assert ticked.seq > pressed.seq and ticked.event_seq == pressed.event_seq
        program.submit("reading", {"game": 1, "row": 0, "phase": "secret", "shield": "closed", "status": "ok",
                                   "confidence": 0.9, "code": ["red", "green", "blue", "yellow"]})
        program.step()
        secret = build_state(program, "1")
        assert secret.event_seq == secret.seq > ticked.seq
        assert "red" not in wire.format_state(secret).decode()
        assert wire.parse_state(wire.format_state(secret)) == secret
    finally:
        program.close()
    legacy = json.loads(wire.format_state(secret))
    del legacy["event_seq"]
    assert wire.parse_state(json.dumps(legacy)).event_seq == secret.seq
