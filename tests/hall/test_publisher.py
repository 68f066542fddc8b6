"""What a table publishes, against a real Mosquitto: its status, its live state, and never the secret while a game runs."""

from __future__ import annotations

import json

from hall_kit import GAME_1, SECRET, TOURNAMENT, HallTable, Listener, play_game_1, wait_until

from pegwatch.hub import wire
from pegwatch.hub.broker import HUB_USER

SECRET_TEXTS = (json.dumps(list(SECRET)), json.dumps(list(SECRET), separators=(",", ":")))


def everything(broker) -> Listener:
    listener = Listener(broker, HUB_USER, subscribe=("#",))
    assert listener.wait_connected() == 0
    return listener


def secret_values(value) -> list:
    """Every value under a key named code or secret, at any depth."""
    found = []
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ("code", "secret") and v is not None:
                found.append(v)
            found.extend(secret_values(v))
    elif isinstance(value, list):
        for v in value:
            found.extend(secret_values(v))
    return found


def state_at(listener: Listener, seq: int) -> wire.State:
    def latest():
        states = [wire.parse_state(m.payload) for m in listener.received("/state")]
        return [s for s in states if s.seq >= seq]

    wait_until(latest, what=f"a state at seq {seq}")
    return latest()[-1]


def test_no_secret_leaves_the_table_while_its_game_runs(broker, tmp_path) -> None:
    hub = everything(broker)
    t = HallTable(broker, tmp_path / "j.sqlite")
    try:
        play_game_1(t, upto=2)  # the camera saw the secret under the shield at the start
        assert any(list(e.payload.get("code") or ()) == list(SECRET) for e in t.events("reading"))  # journaled...
        assert t.link.drain(20)
        state_at(hub, t.program.journal.last_seq)
        during = list(hub.received())
        assert len(during) > 10
        for m in during:  # ... and in no message: events, state, status
            text = m.payload.decode()
            assert not any(s in text for s in SECRET_TEXTS), (m.topic, text)
            assert secret_values(json.loads(text)) == [], (m.topic, text)
        # The game ends: the result carries the secret, and only the result.
        guess, black, white = GAME_1[2]
        t.row(3, guess, black, white)
        t.secret("open")
        assert t.program.flow.game.final
        assert t.link.drain(20)
        wait_until(lambda: hub.received("/results"), what="the game's result")
        result = wire.parse_result(hub.received("/results")[0].payload)
        assert result.game == 1 and result.secret == SECRET
        assert result.players == {"white": "Ann", "black": "Bob", "codemaker": "Ann", "codebreaker": "Bob"}
        assert result.result["attempts"] == 3 and result.id.endswith(f":{result.seq}")
        for m in hub.received():
            if not m.topic.endswith("/results"):
                assert secret_values(json.loads(m.payload)) == [], m.topic
    finally:
        t.close()
        hub.close()


def test_the_state_shows_players_clocks_rows_and_whose_turn(broker, tmp_path) -> None:
    hub = everything(broker)
    t = HallTable(broker, tmp_path / "j.sqlite")
    try:
        play_game_1(t, upto=1)
        t.press(1)  # Bob confirms row 2: Ann's clock runs (marks)
        state = state_at(hub, t.program.journal.last_seq)
        assert state.players == ("Ann", "Bob") and state.game == 1 and state.table == "1"
        assert state.turn == "white" and state.clocks[0].running and not state.clocks[1].running
        left = t.program.flow.remaining_ns(t.clock() + t.program.offset_ns)
        assert state.clocks[1].remaining_ms == left[1] // 1_000_000
        assert state.rows[0] == wire.Row(1, GAME_1[0][0], 0, 2, "ok", False)
        assert state.rows[1].verdict == "pending" and state.phase == "marks" and not state.paused
        assert state.match == t.program.journal.match_id
        # A retained state: a page that opens later sees it at once.
        late = everything(broker)
        wait_until(lambda: late.received("/state"), what="the retained state")
        assert late.received("/state")[0].retain
        late.close()
    finally:
        t.close()
        hub.close()


def test_status_is_online_retained_offline_on_close_and_the_will_when_the_line_dies(broker, tmp_path) -> None:
    hub = everything(broker)
    status_topic = wire.topic(TOURNAMENT, "1", "status")

    def statuses():
        return [wire.parse_status(m.payload).online for m in hub.received("/status")]

    t = HallTable(broker, tmp_path / "j.sqlite")
    try:
        wait_until(lambda: statuses() == [True], what="online")
        # The connection dies without a goodbye: the broker says the last will.
        sock = t.link.publisher.client.socket()
        sock.shutdown(2)
        wait_until(lambda: statuses()[:2] == [True, False], what="the last will")
        wait_until(lambda: statuses()[-1] is True and len(statuses()) >= 3, what="online again")
    finally:
        t.close()
    wait_until(lambda: statuses()[-1] is False, what="offline on close")
    hub.close()
    late = everything(broker)
    wait_until(lambda: late.received("/status"), what="the retained status")
    [m] = late.received("/status")
    assert m.topic == status_topic and m.retain and not wire.parse_status(m.payload).online
    late.close()


def test_a_broker_out_of_reach_is_one_warning_line_and_the_table_plays_on(broker, tmp_path, caplog) -> None:
    import logging
    import time

    broker.stop()
    caplog.set_level(logging.WARNING, logger="pegwatch.device.table.hall")
    t = HallTable(broker, tmp_path / "j.sqlite")  # retries every second (reconnect_s=(1, 1))
    try:
        wait_until(lambda: "cannot reach the hall broker" in caplog.text, what="the warning")
        t.press(0)
        time.sleep(2.5)  # more tries, each refused alike
        lines = [r.getMessage() for r in caplog.records if "cannot reach" in r.getMessage()]
        assert len(lines) == 1 and lines[0].startswith(f"cannot reach the hall broker {broker.url} (")
        assert "\n" not in lines[0]
        assert [e.kind for e in t.events("press")] == ["press"]  # the table went on without the hall
        broker.start()
        wait_until(t.link.publisher.subscribed.is_set, what="the table back in the hall")
        assert t.link.drain(30)
    finally:
        t.close()
