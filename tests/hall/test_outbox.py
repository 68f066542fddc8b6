"""The outbox against a real Mosquitto: journaled first, sent in journal order, nothing lost."""

from __future__ import annotations

from hall_kit import GAME_1, HallTable, Listener, play_game_1, wait_until

from pegwatch.device.table.hall.outbox import Outbox
from pegwatch.hub import wire
from pegwatch.hub.broker import HUB_USER


def hub_listener(broker, *, persistent: bool = False) -> Listener:
    hub = Listener(broker, HUB_USER, subscribe=("pegwatch/#",), client_id="test-hub" if persistent else None,
                   persistent=persistent)
    assert hub.wait_connected() == 0
    return hub


def test_every_event_reaches_the_hub_in_journal_order_with_its_id(broker, tmp_path) -> None:
    hub = hub_listener(broker)
    t = HallTable(broker, tmp_path / "j.sqlite")
    try:
        play_game_1(t, upto=2)
        assert t.link.drain(20)
        expected = t.expected_ids()
        wait_until(lambda: len(hub.ids()) >= len(expected), what="every event at the hub")
        assert hub.ids() == expected
        first = wire.parse_event(hub.unique("/events")[0])
        assert first.kind == "match" and first.table == "1" and first.data["players"] == ["Ann", "Bob"]
        assert t.link.outbox.counts()[1] == 0
    finally:
        t.close()
        hub.close()


def test_a_broker_outage_loses_nothing_and_the_backlog_drains_in_order(broker, tmp_path) -> None:
    hub = hub_listener(broker, persistent=True)
    t = HallTable(broker, tmp_path / "j.sqlite")
    try:
        t.press(0)
        assert t.link.drain(20)
        broker.stop()
        wait_until(lambda: not t.link.publisher.connected.is_set(), what="the table to see the outage")
        t.secret("closed")
        for i, (guess, black, white) in enumerate(GAME_1[:2], start=1):
            t.row(i, guess, black, white)
        # Journaled and queued while the broker is away; nothing marked sent.
        wait_until(lambda: t.link.outbox.cursor == t.program.journal.last_seq, what="the outbox to catch up")
        waiting = t.link.outbox.counts()[1]
        assert waiting >= 8
        broker.start()
        assert t.link.drain(30), f"{t.link.outbox.counts()[1]} of {waiting} still unsent"
        expected = t.expected_ids()
        wait_until(lambda: len(hub.ids()) >= len(expected), what="the backlog at the hub")
        assert hub.ids() == expected  # each once (duplicates dropped by id), in journal order
    finally:
        t.close()
        hub.close()


def test_a_restart_of_the_table_sends_what_was_never_acknowledged(broker, tmp_path) -> None:
    path = tmp_path / "j.sqlite"
    broker.stop()
    t = HallTable(broker, path)
    play_game_1(t, upto=1)
    wait_until(lambda: t.link.outbox.cursor == t.program.journal.last_seq, what="the outbox to catch up")
    unsent_before = t.link.outbox.counts()[1]
    first_session = t.expected_ids()
    t.close()  # the table program stops with its messages unsent
    with Outbox(path) as outbox:
        assert outbox.counts()[1] == unsent_before > 0
    broker.start()
    hub = hub_listener(broker)
    t = HallTable(broker, path)
    try:
        assert t.link.drain(30)
        expected = t.expected_ids()
        assert expected[: len(first_session)] == first_session
        wait_until(lambda: len(hub.ids()) >= len(expected), what="both sessions' events at the hub")
        assert hub.ids() == expected
        kinds = [wire.parse_event(p).kind for p in hub.unique("/events")]
        assert "boot" in kinds  # the second session's restart event follows the first session's
    finally:
        t.close()
        hub.close()


def test_the_outbox_lives_in_the_journal_file_and_leaves_it_readable(broker, tmp_path) -> None:
    from pegwatch.device.table.program import replay_journal

    path = tmp_path / "j.sqlite"
    t = HallTable(broker, path)
    play_game_1(t)
    t.secret("open")
    assert t.link.drain(20)
    t.close()
    import sqlite3

    with sqlite3.connect(path) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"events", "hall_outbox", "hall_cursor"} <= tables
    assert replay_journal(path).mismatches == ()


def test_under_a_journal_size_cap_a_waiting_hall_never_fills_the_tables_journal(broker, tmp_path) -> None:
    broker.stop()
    hub = None
    t = HallTable(broker, tmp_path / "j.sqlite", max_bytes=1024 * 1024)  # [journal] max_mb = 1
    program = t.program
    try:
        blob = "x" * 3000
        n = 0
        while not t.link.outbox.full:  # the broker is away: the outbox grows to its share
            program.submit("camera", {"state": "back", "problem": blob, "n": n})
            n += 1
            t.step(0.01)
            wait_until(lambda: t.link.outbox.full or t.link.outbox.cursor == program.journal.last_seq,
                       what="the outbox to follow")
            assert n < 1000
        for i in range(20):  # the table goes on journaling past the outbox's share
            program.submit("camera", {"state": "back", "problem": blob, "n": n + i})
            t.step(0.01)
        assert program.alarm is None and program.writer.pending == 0
        broker.start()
        hub = Listener(broker, HUB_USER, subscribe=("pegwatch/#",))
        assert hub.wait_connected() == 0
        assert t.link.drain(60), f"{t.link.outbox.counts()} left"
        expected = t.expected_ids()
        assert len(expected) > n
        wait_until(lambda: len(hub.ids()) >= len(expected), what="every event after the cap")
        assert hub.ids() == expected
    finally:
        t.close()
        if hub is not None:
            hub.close()
