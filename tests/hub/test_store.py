"""The hub's store (SQLite) and the hall fed message by message, without a broker."""

from __future__ import annotations

import json
import sqlite3

import pytest

from pegwatch.hub import wire
from pegwatch.hub.model import Game, GameKind, Pairing, Player, Round, Tournament
from pegwatch.hub.service import Hall
from pegwatch.hub.store import HallStoreError, SqliteHallStore, StoredCommand

T = "mso"


@pytest.fixture
def store(tmp_path):
    s = SqliteHallStore(tmp_path / "hall.sqlite")
    yield s
    s.close()


def tournament(tables=("1", "2")) -> Tournament:
    t = Tournament("test", Game(GameKind.MASTERMIND, "mso"), tables=tables,
                   players=(Player("ada", "Ada"), Player("bob", "Bob"), Player("cy", "Cy"), Player("dee", "Dee")))
    return t.add_round(Round(1, (Pairing("1", ("ada", "bob")), Pairing("2", ("cy", "dee")))))


def state(table="1", seq=5, **kw) -> wire.State:
    base = dict(table=table, match="m1", seq=seq, game=1, players=("ada", "bob"), turn="white",
                clocks=(wire.ClockReading(60_000, True), wire.ClockReading(50_000, False)),
                rows=(wire.Row(1, ("red", "blue", None, "green"), 1, 2, "ok"),), mismarks=(), flags=())
    base.update(kw)
    return wire.State(**base)


def top(table: str, channel: str) -> str:
    return wire.topic(T, table, channel)


# -- the store -------------------------------------------------------------------


def test_a_message_is_stored_once_by_id_and_the_duplicate_counted(store):
    payload = {"id": "m1:1", "kind": "press"}
    assert store.add_message("event", "m1:1", "1", payload, 10) is True
    assert store.add_message("event", "m1:1", "1", {"id": "m1:1", "kind": "changed"}, 11) is False
    assert store.add_message("result", "m1:1", "1", payload, 12) is True  # another kind, another id space
    events = store.messages("event")
    assert [(m.id, m.payload["kind"], m.rx_ns) for m in events] == [("m1:1", "press", 10)]
    assert store.counters() == {"duplicate_events": 1}


def test_states_keep_the_latest_with_the_receive_time(store):
    for i in range(50):
        store.put_state("1", {"seq": i}, 1000 + i)
    store.put_status("1", {"status": "online"}, 7)
    store.put_state("2", {"seq": 1}, 3)
    latest = {t.table: t for t in store.latest()}
    assert latest["1"].state == {"seq": 49} and latest["1"].state_rx_ns == 1049
    assert latest["1"].status == {"status": "online"} and latest["1"].status_rx_ns == 7
    assert latest["2"].status is None


def test_commands_wait_for_their_ack_and_a_stray_ack_is_counted(store):
    c = StoredCommand("c1", "1", "adjust_clock", {"id": "c1"}, "arb", "pending", 0, None, None, 5)
    store.add_command(c)
    store.mark_sent("c1")
    store.mark_sent("c1")
    [sent] = store.commands("1", unacked_only=True)
    assert (sent.status, sent.sends) == ("sent", 2)
    assert store.ack_command("c1", "applied", None, 41) is True
    assert store.ack_command("c1", "applied", None, 41) is False  # a replayed ack changes nothing
    assert store.ack_command("nope", "applied", None, None) is False
    assert store.commands("1", unacked_only=True) == []
    [done] = store.commands()
    assert (done.status, done.seq) == ("applied", 41)
    assert store.counters()["stray_acks"] == 2


def test_the_store_survives_a_reopen_and_refuses_a_foreign_file(tmp_path):
    path = tmp_path / "hall.sqlite"
    with SqliteHallStore(path) as s:
        s.add_message("event", "m:1", "1", {"a": 1}, 1)
        s.set_meta("k", "v")
        s.count("bad_message", 3)
    with SqliteHallStore(path) as s:
        assert [m.id for m in s.messages("event", "1")] == ["m:1"]
        assert s.get_meta("k") == "v" and s.counters() == {"bad_message": 3}
        assert s._reader().execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    other = tmp_path / "other.sqlite"
    sqlite3.connect(other).execute("CREATE TABLE x (y)").connection.commit()
    with pytest.raises(HallStoreError, match="not a hub store"):
        SqliteHallStore(other)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is no database at all" * 100)
    with pytest.raises(HallStoreError, match=r"junk\.sqlite"):
        SqliteHallStore(junk)


def test_writes_from_many_threads_all_land(store):
    import threading

    def write(k):
        for i in range(50):
            store.add_message("event", f"m{k}:{i}", "1", {}, i)

    threads = [threading.Thread(target=write, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.message_count("event") == 200


# -- the hall, message by message -----------------------------------------------


def test_bad_input_is_counted_never_raised_and_nothing_is_stored(store):
    hall = Hall(store, tournament(), tournament_id=T)
    assert not hall.handle(top("1", "state"), b"{not json")
    assert not hall.handle(top("1", "state"), b"x" * (wire.MAX_MESSAGE_BYTES + 1))
    assert not hall.handle("pegwatch/mso/tables/1/nonsense", b"{}")
    assert not hall.handle("elsewhere/x", b"{}")
    assert not hall.handle(top("1", "state"), wire.format_state(state(table="2")))  # a table posing as another
    assert not hall.handle(wire.topic("other", "1", "state"), wire.format_state(state()))
    assert not hall.handle(top("9", "state"), wire.format_state(state(table="9")))  # not in hub.toml
    counters = store.counters()
    assert counters == {"bad_message": 6, "unknown_table": 1}
    assert store.latest() == [] and hall.table("1").state is None


def test_a_replayed_event_is_stored_once_and_a_secret_never_reaches_the_store(store):
    hall = Hall(store, tournament(), tournament_id=T)
    event = wire.Event("1", "m1", 3, "reading", 1200, {"row": 2, "secret": ["red"], "x": {"secret": 1}})
    assert hall.handle(top("1", "events"), wire.format_event(event))
    assert not hall.handle(top("1", "events"), wire.format_event(event))
    [stored] = store.messages("event", "1")
    assert stored.id == "m1:3" and stored.payload["data"] == {"row": 2, "x": {}}
    # Two secrets in each of the two deliveries.
    assert store.counters() == {"duplicate_events": 1, "secret_stripped": 4}
    hall.handle(top("1", "state"), wire.format_state(state()))
    raw = json.dumps([m.payload for m in store.messages("event")] + [t.state for t in store.latest()])
    assert "secret" not in raw


def test_a_match_result_lands_in_the_tournament_once(store):
    hall = Hall(store, tournament(), tournament_id=T)
    seen = []
    hall.listen(lambda what, detail: seen.append((what, dict(detail))))
    result = wire.Result("1", "m1", 40, 0, {"white": "ada", "black": "Bob"},
                         {"attempts": {"white": [4], "black": [6]}}, ("red", "red", "blue", "green"))
    assert hall.handle(top("1", "results"), wire.format_result(result))
    assert not hall.handle(top("1", "results"), wire.format_result(result))
    [r] = hall.tournament.results
    assert (r.round, r.table, r.players, r.attempts) == (1, "1", ("ada", "bob"), ((4,), (6,)))
    assert ("result", {"table": "1", "id": "m1:40", "recorded": True}) in seen
    # The tournament is kept in the store: a hub started again has it.
    assert Hall(store, tournament(), tournament_id=T).tournament.results == (r,)


def test_a_match_as_the_table_judges_it_lands_with_each_game_s_attempts(store):
    """The table's own shapes: a result per game (codebreaker's attempts) and the match's totals by name."""
    hall = Hall(store, tournament(), tournament_id=T)
    names = {"white": "Ada", "black": "Bob"}
    game1 = wire.Result("1", "m7", 20, 1, {**names, "codemaker": "Ada", "codebreaker": "Bob"},
                        {"attempts": 6, "solved": True}, SECRET_1)
    game2 = wire.Result("1", "m7", 41, 2, {**names, "codemaker": "Bob", "codebreaker": "Ada"},
                        {"attempts": 4, "solved": True}, SECRET_2)
    match = wire.Result("1", "m7", 42, 0, names, {"vp": {"Ada": 1.0, "Bob": 0.0}, "attempts": {"Ada": 4, "Bob": 6},
                                                  "penalties_vp": {"Ada": 0.0, "Bob": 0.5}})
    for r in (game1, game2):
        assert hall.handle(top("1", "results"), wire.format_result(r))
    assert hall.tournament.results == ()  # a game is not a match
    assert hall.handle(top("1", "results"), wire.format_result(match))
    [r] = hall.tournament.results
    # Ada is first-named in the pairing: her attempts (game 2) come first, Bob's ½ VP docked second.
    assert (r.players, r.attempts, r.penalties) == (("ada", "bob"), ((4,), (6,)), (0.0, 0.5))


SECRET_1 = ("red", "red", "blue", "green")
SECRET_2 = ("white", "black", "blue", "green")


def test_a_result_of_players_not_paired_there_is_kept_but_not_recorded(store):
    hall = Hall(store, tournament(), tournament_id=T)
    result = wire.Result("2", "m9", 4, 0, {"white": "ada", "black": "bob"}, {"attempts": {"white": [4], "black": [6]}})
    assert hall.handle(top("2", "results"), wire.format_result(result))
    assert hall.tournament.results == ()
    assert store.counters() == {"result_not_recorded": 1}
    assert [m.id for m in store.messages("result")] == ["m9:4"]


def test_a_command_waits_for_an_offline_table_and_goes_when_it_is_back(store):
    hall = Hall(store, tournament(), tournament_id=T)
    sent: list[tuple[str, bytes]] = []
    hall.attach(lambda topic, payload: sent.append((topic, payload)))
    hall.handle(top("1", "status"), wire.format_status(wire.Status("1", False)))
    cmd = hall.send_command("1", wire.CommandKind.ADJUST_CLOCK, {"player": "white", "delta_ms": 5000}, "arb")
    assert sent == [] and store.commands("1")[0].status == "pending"
    hall.handle(top("1", "status"), wire.format_status(wire.Status("1", True, "m1")))
    [(topic, payload)] = sent
    assert topic == "pegwatch/mso/tables/1/commands"
    back = wire.parse_command(payload)
    assert (back.id, back.kind, back.args["delta_ms"], back.by) == (cmd.id, wire.CommandKind.ADJUST_CLOCK, 5000, "arb")
    hall.handle(top("1", "status"), wire.format_status(wire.Status("1", True, "m1")))
    assert len(sent) == 2  # not acknowledged yet: sent again
    ack = wire.Ack(cmd.id, "1", wire.AckStatus.APPLIED, None, 77)
    assert hall.handle(top("1", "acks"), wire.format_ack(ack))
    assert not hall.handle(top("1", "acks"), wire.format_ack(ack))  # replayed
    hall.handle(top("1", "status"), wire.format_status(wire.Status("1", True, "m1")))
    assert len(sent) == 2
    assert store.commands("1")[0].status == "applied"


def test_the_live_view_comes_back_from_the_store(store):
    hall = Hall(store, tournament(), tournament_id=T)
    hall.handle(top("2", "status"), wire.format_status(wire.Status("2", True, "m1")))
    hall.handle(top("2", "state"), wire.format_state(state(table="2", seq=9)))
    again = Hall(store, tournament(), tournament_id=T)
    live = again.table("2")
    assert live.online is True and live.state == state(table="2", seq=9)
    assert [t.table for t in again.tables()] == ["1", "2"]
    assert again.table("1").state is None


def test_hub_toml_is_read_again_until_the_arbiter_acts_then_the_store_keeps_the_actions(store):
    first = tournament()
    Hall(store, first, tournament_id=T)
    edited = Tournament(first.name, first.game, tables=("1", "2", "3"), players=first.players).add_round(
        first.played[0])
    assert Hall(store, edited, tournament_id=T).tournament.tables == ("1", "2", "3")  # nothing done yet: the file
    hall = Hall(store, edited, tournament_id=T)
    hall.apply(lambda t: t.withdraw("dee", 2))
    again = Hall(store, first, tournament_id=T)  # the file changed again, after an action
    assert again.tournament.tables == ("1", "2", "3") and again.tournament.player("dee").withdrawn == 2
