"""The hub's page and API through Starlette's TestClient: login, CSRF, commands, shapes, no secret."""

from __future__ import annotations

import asyncio
import json
import re
import warnings

import pytest

from pegwatch.hub import wire
from pegwatch.hub.config import Account, parse_hall
from pegwatch.hub.service import Hall
from pegwatch.hub.store import SqliteHallStore
from pegwatch.hub.web import create_app
from pegwatch.hub.web.auth import hash_password, verify_password
from pegwatch.hub.web.stream import Broadcaster
from pegwatch.hub.web.throttle import LOCK_S, MAX_FAILURES, WINDOW_S, LoginThrottle

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from test_store import state, top, tournament

PASSWORD = "correct horse"
HASH = hash_password(PASSWORD)
SECRET = ("orange", "orange", "purple", "purple")


@pytest.fixture
def hall(tmp_path):
    store = SqliteHallStore(tmp_path / "hall.sqlite")
    h = Hall(store, tournament(), tournament_id="mso")
    h.sent = []
    h.attach(lambda topic, payload: h.sent.append((topic, payload)))
    yield h
    store.close()


@pytest.fixture
def client(hall):
    with TestClient(create_app(hall, [Account("arb", HASH)])) as c:
        yield c


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def log_in(client) -> str:
    token = csrf_of(client.get("/login").text)
    r = client.post("/login", data={"csrf": token, "login": "arb", "password": PASSWORD, "next": "/"},
                    follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"
    return csrf_of(client.get("/").text)


def online(hall, table="1", **kw):
    hall.handle(top(table, "status"), wire.format_status(wire.Status(table, True, "m1")))
    hall.handle(top(table, "state"), wire.format_state(state(table=table, **kw)))


# -- passwords and accounts ----------------------------------------------------------


def test_a_password_hash_checks_the_password_and_hub_toml_takes_it():
    assert verify_password(PASSWORD, HASH)
    assert not verify_password("wrong", HASH)
    assert not verify_password(PASSWORD, "scrypt$1$2$3$junk")
    assert not verify_password(PASSWORD, "")
    assert hash_password(PASSWORD) != HASH  # a fresh salt each time
    settings = parse_hall(f'[hall]\ntournament = "mso"\n[[accounts]]\nlogin = "arb"\npassword_hash = "{HASH}"\n')
    assert settings.accounts == (Account("arb", HASH),)


# -- login -------------------------------------------------------------------------------


def test_the_arbiter_pages_need_a_login_and_a_wrong_password_is_refused(client):
    r = client.get("/", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"].startswith("/login")
    token = csrf_of(client.get("/login").text)
    r = client.post("/login", data={"csrf": token, "login": "arb", "password": "nope"})
    assert r.status_code == 401 and 'id="login-error"' in r.text
    r = client.post("/login", data={"csrf": "forged", "login": "arb", "password": PASSWORD})
    assert r.status_code == 403
    r = client.post("/login", data={"csrf": token, "login": "nobody", "password": PASSWORD})
    assert r.status_code == 401
    assert client.get("/", follow_redirects=False).status_code == 303
    log_in(client)
    r = client.get("/")
    assert r.status_code == 200 and 'id="logged-in" data-login="arb"' in r.text


def test_wrong_passwords_from_one_device_lock_it_out_for_a_while_never_the_arbiter(hall):
    """Five wrong passwords from one address within 5 minutes: it waits 30 s (Retry-After), even with
    the right password, whose check is not even made; a sixth wrong try after that waits 60 s. A
    right password clears the address. Another device, the arbiter's, logs in meanwhile."""
    now = [1000.0]
    throttle = LoginThrottle(clock=lambda: now[0])
    app = create_app(hall, [Account("arb", HASH)], login_throttle=throttle)
    with TestClient(app, client=("10.0.0.66", 5000)) as player, TestClient(app, client=("10.0.0.2", 5000)) as arbiter:
        token = csrf_of(player.get("/login").text)

        def attempt(password):
            return player.post("/login", data={"csrf": token, "login": "arb", "password": password},
                               follow_redirects=False)

        for _ in range(MAX_FAILURES):
            assert attempt("guess").status_code == 401
        locked = attempt(PASSWORD)
        assert locked.status_code == 429 and locked.headers["retry-after"] == str(int(LOCK_S))
        assert 'id="login-locked"' in locked.text and "try again in 30 s" in locked.text
        assert player.get("/", follow_redirects=False).status_code == 303  # still not logged in
        log_in(arbiter)  # the arbiter's own device is not locked out
        now[0] += LOCK_S + 1
        assert attempt("guess again").status_code == 401
        assert attempt(PASSWORD).headers["retry-after"] == str(int(2 * LOCK_S))  # the lock doubled
        now[0] += 2 * LOCK_S + 1
        assert attempt(PASSWORD).status_code == 303  # in, and the address starts afresh
        assert throttle.wait_s(["ip:10.0.0.66"]) == 0.0


def test_the_login_brake_forgets_old_tries_and_bounds_its_memory():
    now = [0.0]
    throttle = LoginThrottle(clock=lambda: now[0], max_keys=3)
    for _ in range(MAX_FAILURES - 1):
        throttle.failed(["ip:a"])
    now[0] += WINDOW_S  # the four wrong tries are out of the window: a fifth locks nothing
    throttle.failed(["ip:a"])
    assert throttle.wait_s(["ip:a"]) == 0.0
    for name in "bcde":
        throttle.failed([f"ip:{name}"])
    assert len(throttle._records) == 3 and "ip:a" not in throttle._records  # the oldest forgotten first


def test_a_login_never_sends_the_arbiter_elsewhere(client):
    token = csrf_of(client.get("/login").text)
    r = client.post("/login", data={"csrf": token, "login": "arb", "password": PASSWORD,
                                    "next": "//evil.example/"}, follow_redirects=False)
    assert r.headers["location"] == "/"


# -- commands ------------------------------------------------------------------------------


def test_a_command_without_a_valid_session_or_csrf_token_is_refused(client, hall):
    online(hall)
    form = {"kind": "adjust_clock", "player": "white", "delta_s": "30"}
    r = client.post("/tables/1/commands", data={**form, "csrf": "x"}, follow_redirects=False)
    assert r.status_code == 403
    token = log_in(client)
    r = client.post("/tables/1/commands", data=form, follow_redirects=False)
    assert r.status_code == 403
    r = client.post("/tables/1/commands", data={**form, "csrf": token + "x"}, follow_redirects=False)
    assert r.status_code == 403
    # A session cookie of another key is no session.
    other = TestClient(create_app(hall, [Account("arb", HASH)]))
    other.cookies.set("pegwatch_hub", "eyJsb2dpbiI6ICJhcmIifQ==.forged.sig")
    assert other.post("/tables/1/commands", data={**form, "csrf": token}).status_code == 403
    assert hall.store.commands() == [] and hall.sent == []


def test_a_command_shows_sent_then_applied_only_after_the_ack(client, hall):
    online(hall)
    token = log_in(client)
    r = client.post("/tables/1/commands", data={"csrf": token, "kind": "adjust_clock", "player": "black",
                                                "delta_s": "-15"}, follow_redirects=False)
    assert r.status_code == 303
    [command] = hall.store.commands("1")
    [(topic, payload)] = hall.sent
    sent = wire.parse_command(payload)
    assert topic == "pegwatch/mso/tables/1/commands"
    assert (sent.kind, dict(sent.args), sent.by) == (wire.CommandKind.ADJUST_CLOCK,
                                                     {"player": "black", "delta_ms": -15000}, "arb")
    page = client.get("/tables/1").text
    assert f'id="command-{command.id}"' in page and 'data-status="sent"' in page
    assert client.get("/api/tables/1").json()["pending_commands"] == 1
    hall.handle(top("1", "acks"), wire.format_ack(wire.Ack(command.id, "1", wire.AckStatus.APPLIED, None, 12)))
    page = client.get("/tables/1").text
    assert 'data-status="applied"' in page and 'data-status="sent"' not in page
    assert client.get("/api/tables/1").json()["commands"][0]["status"] == "applied"


def test_a_wrong_command_form_is_one_line_and_nothing_is_sent(client, hall):
    online(hall)
    token = log_in(client)
    r = client.post("/tables/1/commands", data={"csrf": token, "kind": "adjust_clock", "player": "green",
                                                "delta_s": "5"}, headers={"accept": "application/json"})
    assert r.status_code == 400 and "player" in r.json()["error"] and "\n" not in r.json()["error"]
    r = client.post("/tables/1/commands", data={"csrf": token, "kind": "launch", "delta_s": "5"})
    assert r.status_code == 400
    r = client.post("/tables/9/commands", data={"csrf": token, "kind": "confirm_row", "game": "1", "row": "1"})
    assert r.status_code == 400 and "not in hub.toml" in r.text
    r = client.post("/tables/1/commands", content=b'{"kind": "x"}', headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert hall.sent == []


# -- the tournament's actions ------------------------------------------------------------


def test_the_arbiter_enters_a_result_and_pairs_the_next_round(client, hall):
    token = log_in(client)
    r = client.post("/actions/result", data={"csrf": token, "round": "1", "table": "1",
                                              "attempts_0": "4", "attempts_1": "6"}, follow_redirects=False)
    assert r.status_code == 303
    r = client.post("/actions/result", data={"csrf": token, "round": "1", "table": "2",
                                              "attempts_0": "5", "attempts_1": "5"})
    standings = client.get("/api/standings").json()
    assert [(row["player"], row["score"]) for row in standings["rows"]][:1] == [("ada", 1.0)]
    # The page writes a figure as its script does when the standings refresh live: 1, not 1.0.
    ada = re.search(r'<tr data-player="ada"[^>]*>(.*?)</tr>', client.get("/standings").text).group(1)
    assert re.findall(r"<td>([^<]*)</td>", ada)[2] == "1"
    # Four players play all-play-all: no late entry once the draw is made (the core's own line).
    r = client.post("/actions/entry", data={"csrf": token, "player": "eve", "name": "Eve"})
    assert r.status_code == 400 and "no late entry" in r.text
    r = client.post("/actions/withdraw", data={"csrf": token, "player": "dee", "from_round": "2"})
    assert r.status_code == 200
    r = client.post("/actions/next-round", data={"csrf": token})
    assert r.status_code == 200
    pairings = client.get("/api/pairings").json()
    # Berger round 2 of four is 4-3 and 1-2 (ada 1, bob 2, cy 3, dee 4); dee withdrew, so cy has a bye.
    assert pairings["round"] == 2
    assert [t["players"] for t in pairings["tables"]] == [["ada", "bob"]]
    assert [b["player"] for b in pairings["byes"]] == ["cy"]
    r = client.post("/actions/result", data={"csrf": token, "round": "7", "table": "1"})
    assert r.status_code == 400
    assert client.post("/actions/next-round", data={"csrf": "no"}).status_code == 403


# -- the API -----------------------------------------------------------------------------


def test_the_api_shapes(client, hall):
    online(hall, mismarks=(1,), flags=("white",), uncertain_rows=(1,))
    hall.handle(top("1", "events"), wire.format_event(wire.Event("1", "m1", 4, "press", 900, {"seat": 0})))
    tables = client.get("/api/tables").json()
    assert tables["tournament"] == "mso"
    one, two = tables["tables"]
    assert set(one) >= {"table", "status", "offline", "players", "turn", "clocks", "age_ms", "row", "flags",
                        "mismarks", "uncertain_rows", "alarms", "needs", "pending_commands", "match", "game"}
    assert (one["status"], one["flags"], one["mismarks"], one["clocks"]["white"]["remaining_ms"]) == (
        "online", ["white"], [1], 60_000)
    assert (two["table"], two["status"], two["offline"]) == ("2", "unknown", True)
    assert one["needs"] == 4 + 3 + 2
    by_needs = client.get("/api/tables?sort=needs").json()["tables"]
    assert [t["table"] for t in by_needs] == ["1", "2"]
    detail = client.get("/api/tables/1").json()
    assert detail["rows"][0] == {"row": 1, "guess": ["red", "blue", None, "green"],
                                 "marks": {"black": 1, "white": 2}, "verdict": "ok", "uncertain": False}
    assert [e["id"] for e in detail["events"]] == ["m1:4"] and "commands" not in detail
    assert client.get("/api/tables/zz").status_code == 404
    assert client.get("/api/pairings?round=1").json()["tables"][0] == {
        "table": "1", "players": ["ada", "bob"], "names": ["Ada", "Bob"], "result": False}
    assert client.get("/api/pairings?round=5").status_code == 404
    assert client.get("/api/pairings?round=x").status_code == 400
    assert client.get("/api/results").json() == {"results": [], "received": []}
    assert set(client.get("/api/standings").json()) >= {"rows", "tiebreaks", "perfect", "extra_round"}


def test_the_grid_has_the_addresses_the_browser_tests_use(client, hall):
    online(hall, mismarks=(2,), flags=("black",))
    log_in(client)
    page = client.get("/").text
    for needle in ('id="grid"', 'id="sort-needs"', 'id="table-1"', 'data-table="1"', 'data-status="online"',
                   'id="clock-1-white"', 'data-remaining-ms="60000"', 'data-running="true"', 'id="flags-1"',
                   'data-flag="black"', 'id="mismarks-1" data-rows="2"', 'id="offline-2"', 'data-status="unknown"'):
        assert needle in page, needle
    assert client.get("/static/hall.js").status_code == 200
    assert "print" in client.get("/static/hall.css").text
    headers = client.get("/").headers
    assert headers["x-frame-options"] == "DENY" and "script-src 'self'" in headers["content-security-policy"]


# -- the spectators ---------------------------------------------------------------------


def test_the_spectators_page_has_no_actions_no_evidence_and_no_login(client, hall):
    online(hall)
    hall.handle(top("1", "evidence"), wire.format_evidence(
        wire.Evidence("c" * 32, "1", 1, 2, b"\xff\xd8jpeg", ((1.0, 2.0),), True)))
    r = client.get("/hall")
    assert r.status_code == 200 and 'id="grid"' in r.text and 'id="standings"' in r.text
    assert "<form" not in r.text.replace('id="logout-form"', "") and "/tables/" not in r.text
    assert "/evidence/" not in r.text
    assert client.get(f"/tables/1/evidence/{'c' * 32}").status_code == 403
    log_in(client)
    image = client.get(f"/tables/1/evidence/{'c' * 32}")
    assert image.status_code == 200 and image.content == b"\xff\xd8jpeg"


# -- the secret -------------------------------------------------------------------------


def test_no_page_or_api_shows_the_secret_while_the_game_runs(client, hall):
    online(hall)
    hall.handle(top("1", "events"), wire.format_event(
        wire.Event("1", "m1", 2, "reading", 500, {"row": 0, "secret": list(SECRET), "code": {"secret": SECRET[0]}})))
    hall.handle(top("1", "state"), wire.format_state(state(seq=6)))
    token = log_in(client)
    client.post("/tables/1/commands", data={"csrf": token, "kind": "send_evidence", "game": "1", "row": "1"})
    pages = ["/", "/hall", "/tables/1", "/results", "/standings", "/pairings", "/api/tables", "/api/tables/1",
             "/api/results", "/api/standings", "/api/pairings"]
    for path in pages:
        text = client.get(path).text
        assert "purple" not in text and "orange" not in text, path
    # After the game, its result carries the secret.
    hall.handle(top("1", "results"), wire.format_result(
        wire.Result("1", "m1", 30, 1, {"white": "ada", "black": "bob"}, {"attempts": 5}, SECRET)))
    assert client.get("/api/results").json()["received"][0]["secret"] == list(SECRET)


# -- the live stream ----------------------------------------------------------------------


def test_the_stream_sends_a_changed_table_and_the_public_one_no_commands(hall):
    broadcaster = Broadcaster(hall)

    async def first_events(public: bool, action) -> list[tuple[str, dict]]:
        stream = broadcaster.events(public=public)
        assert (await anext(stream)).startswith("retry:")
        waiting = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0)  # the stream is now waiting for news
        await asyncio.get_running_loop().run_in_executor(None, action)
        out = []
        text = await waiting
        while True:  # one chunk holds every event of one wake, each ending in a blank line
            for block in filter(None, text.split("\n\n")):
                kind = re.match(r"event: (\w+)", block).group(1)
                out.append((kind, json.loads(block.split("data: ", 1)[1])))
            try:
                text = await asyncio.wait_for(anext(stream), 0.5)
            except TimeoutError:
                break
        await stream.aclose()
        return out

    events = asyncio.run(first_events(True, lambda: online(hall, flags=("white",))))
    [(_, table)] = [e for e in events if e[0] == "table"][-1:]
    assert table["table"] == "1" and table["flags"] == ["white"]
    send = lambda: hall.send_command("1", wire.CommandKind.CONFIRM_ROW, {"game": 1, "row": 1}, "arb")  # noqa: E731
    public = asyncio.run(first_events(True, send))
    assert {k for k, _ in public} == {"table"}  # its pending count, not the command
    arbiter = asyncio.run(first_events(False, send))
    assert "command" in {k for k, _ in arbiter}
    broadcaster.close()
    assert broadcaster.subscribers == 0



# -- pegwatch hub ----------------------------------------------------------------------


@pytest.mark.parametrize("argv, says", [
    (["hub"], "--broker"),
    (["hub", "--broker", "http://x", "--db", "{db}"], "scheme must be mqtt or mqtts"),
    (["hub", "--broker", "mqtt://127.0.0.1:1883"], "--db"),
    (["hub", "--broker", "mqtt://127.0.0.1:1883", "--db", "{db}", "--http", "nowhere"], "--http"),
    (["hub", "--broker", "mqtt://127.0.0.1:1883", "--db", "{db}", "--ca-file", "ca.pem"], "mqtts"),
    (["hub", "--broker", "mqtt://127.0.0.1:1883", "--db", "{db}", "--password-file", "{missing}"], "--password-file"),
    (["hub", "--broker", "mqtt://127.0.0.1:1883", "--db", "{db}", "--config", "{bad_toml}"], "hall.tournament"),
    (["hub", "--broker", "mqtt://127.0.0.1:1883", "--db", "{db}", "--tournament", "a/b"], "--tournament"),
])
def test_pegwatch_hub_says_a_wrong_flag_in_one_line(argv, says, tmp_path, capsys):
    from pegwatch.device.cli import main

    bad = tmp_path / "hub.toml"
    bad.write_text('[tournament]\nname = "x"\ngame = "mastermind"\n[hall]\ntournament = "no spaces"\n')
    paths = {"db": str(tmp_path / "hall.sqlite"), "missing": str(tmp_path / "none"), "bad_toml": str(bad)}
    assert main([a.format(**paths) for a in argv]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1 and err.startswith("pegwatch hub: ")


def test_pegwatch_hub_hash_password_prints_an_account_hub_toml_takes(monkeypatch, capsys):
    import io

    from pegwatch.device.cli import main

    monkeypatch.setattr("sys.stdin", io.StringIO("s3cret\n"))
    assert main(["hub", "--hash-password"]) == 0
    entry = capsys.readouterr().out.replace("CHANGE-ME", "arb")
    [account] = parse_hall(entry).accounts
    assert verify_password("s3cret", account.password_hash)


def test_the_arbiter_sets_a_tournament_up_on_the_page(tmp_path):
    from pegwatch.hub.model import Game, GameKind, Tournament

    with SqliteHallStore(tmp_path / "hall.sqlite") as store:
        hall = Hall(store, Tournament("new", Game(GameKind.MASTERMIND, "mso")), tournament_id="mso")
        with TestClient(create_app(hall, [Account("arb", HASH)])) as client:
            token = log_in(client)
            assert 'id="form-setup"' in client.get("/pairings").text
            r = client.post("/actions/setup", data={"csrf": token, "name": "Club night", "game": "mastermind",
                                                    "format": "swiss", "rounds": "5", "tables": "A B C",
                                                    "seats": "2", "bye_score": "1"})
            assert r.status_code == 200
            for pid in ("p1", "p2", "p3"):
                assert client.post("/actions/entry", data={"csrf": token, "player": pid}).status_code == 200
            bad = client.post("/actions/setup", data={"csrf": token, "game": "connection", "seats": "3"})
            assert bad.status_code == 400 and "seats" in bad.text
            assert client.post("/actions/next-round", data={"csrf": token}).status_code == 200
            t = hall.tournament
            assert (t.name, t.format.value, t.rounds, t.tables) == ("Club night", "swiss", 5, ("A", "B", "C"))
            assert [p.table for p in t.played[0].pairings] == ["A"] and len(t.played[0].byes) == 1
            r = client.post("/actions/setup", data={"csrf": token, "rounds": "9"})
            assert r.status_code == 400 and "fixed" in r.text
            assert 'id="form-setup"' not in client.get("/pairings").text


def test_a_finished_games_code_shows_on_its_detail_once_its_result_has_come(client, hall):
    online(hall)
    hall.handle(top("1", "events"), wire.format_event(
        wire.Event("1", "m1", 1, "match", 100, {"players": ["ada", "bob"], "rules": "mso"})))
    hall.handle(top("1", "events"), wire.format_event(
        wire.Event("1", "m1", 2, "verdict", 200, {"kind": "start", "game": 1, "codemaker": 0})))
    log_in(client)
    assert "purple" not in client.get("/tables/1").text
    # The game ends (the table's verdict, with no code: events never carry it), then its result comes.
    hall.handle(top("1", "events"), wire.format_event(
        wire.Event("1", "m1", 3, "verdict", 300, {"what": "game", "game": 1, "verdict": {"attempts": 5, "solved": True}})))
    assert "purple" not in client.get("/tables/1").text
    hall.handle(top("1", "results"), wire.format_result(
        wire.Result("1", "m1", 30, 1, {"white": "ada", "black": "bob"}, {"attempts": 5}, SECRET)))
    assert "purple" in client.get("/tables/1").text
