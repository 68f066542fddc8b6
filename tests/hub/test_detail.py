"""A table's detail (hub/detail.py) from worked journals: the real demo's, and small matches
played on a real TableProgram. Every figure is checked by hand in the comments."""

from __future__ import annotations

import pytest
from report_kit import SECRET, Table, demo_journal

from pegwatch.device.table.journal import Journal
from pegwatch.device.table.report import journal_events
from pegwatch.hub.detail import Clocks, DetailError, Ruled, Verdict, detail_from_events


@pytest.fixture(scope="module")
def demo():
    path = demo_journal()
    events = list(journal_events(path).events)
    with Journal(path, create=False) as j:
        evidence = {(e.event_seq, e.game, e.row) for e in j.all_evidence()}
    return events, evidence


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path / "j.sqlite")
    yield t
    t.close()


def start(t: Table, *, seen: bool = True) -> None:
    t.press(0, after=10)  # Ann sets the code: Bob's 8 minutes start
    if seen:
        t.secret("closed")


def test_the_demo_match_row_by_row(demo):
    events, evidence = demo
    d = detail_from_events(events)
    assert d.players == ("Alice", "Bob") and d.rules == "mso" and d.clock == "mso-mastermind"
    g1, g2 = d.games
    # Game 1 (the transcript of pegwatch demo): Alice sets red green blue yellow, Bob breaks.
    assert (g1.codemaker, g1.codebreaker, g1.over) == ("Alice", "Bob", True)
    assert g1.secret == SECRET and g1.secret_source == "camera"
    assert [tuple(h.colour for h in r.guess) for r in g1.rows] == [
        ("red", "red", "white", "white"), ("green", "red", "orange", "orange"), ("red", "blue", "green", "purple")]
    assert [r.marks for r in g1.rows] == ["1B0W", "0B2W", "1B1W"]
    assert [r.verdict for r in g1.rows] == [Verdict.OK, Verdict.OK, Verdict.MISMARK]
    # Row 3: red blue green purple against red green blue yellow is 1 black (red) and
    # 2 white (blue, green): marked 1B1W, the mis-mark the demo catches.
    assert g1.rows[2].expected == (1, 2) and "the code gives 1B2W" in g1.rows[2].why
    # Row 2: a hand over the marks, CHECK ROW 2, the arbiter confirmed it.
    assert g1.rows[1].ruled is not None and g1.rows[1].ruled.by == "arbiter"
    assert g1.rows[1].ruled.how == "confirmed" and g1.rows[0].ruled is None
    assert g1.outcome is not None and (g1.outcome.attempts, g1.outcome.reason) == (4, "mis-mark")
    assert g1.outcome.mismarked_row == 3
    # Clocks (seat 0 Alice, seat 1 Bob), from the transcript: Alice's press at 0:20.0 starts
    # Bob's 8:00; Bob confirms row 1's guess at 1:05.0 (45 s used: 7:15.0) with Alice's 4:00
    # untouched; Alice confirms the marks at 1:21.0 (16 s used: 3:44.0).
    assert g1.rows[0].guess_clocks == Clocks((240_000, 435_000))
    assert g1.rows[0].clocks == Clocks((224_000, 435_000))
    # Game 2: roles reversed; Alice, the codebreaker, flags.
    assert (g2.codemaker, g2.codebreaker, g2.flag) == ("Bob", "Alice", "Alice")
    assert g2.secret == ("orange", "purple", "purple", "white")
    assert [r.verdict for r in g2.rows] == [Verdict.OK, Verdict.OK]
    assert g2.outcome is not None and (g2.outcome.attempts, g2.outcome.reason) == (13, "time out")
    assert g2.final_clocks is not None and g2.final_clocks.remaining_ms[0] == 0
    assert d.match is not None and dict(d.match.vp) == {"Alice": 0.0, "Bob": 1.0}
    assert dict(d.match.attempts) == {"Alice": 13, "Bob": 4}
    # Every frame the detail names is a frame the journal kept, of that game and row.
    named = d.evidence
    assert len(named) == len(evidence) == 14
    assert {(e.seq, e.game, e.row) for e in named} == evidence
    for g in d.games:
        for r in g.rows:
            assert r.guess_evidence is not None and r.guess_evidence.phase == "guess"
            assert r.evidence is not None and r.evidence.phase == "marks" and r.evidence.row == r.row


def test_the_demo_log_is_the_journal_in_words_without_ticks(demo):
    events, _ = demo
    d = detail_from_events(events)
    seqs = [line.seq for line in d.log]
    assert seqs == sorted(seqs) and len(seqs) == len({e["seq"] for e in events if e["kind"] != "tick"})
    texts = [line.text for line in d.log]
    assert any("MIS-MARK" in t for t in texts) and any("FLAG, Alice" in t for t in texts)
    assert any("CHECK ROW 2" in t for t in texts)
    assert d.log[0].t_ms == 0 and d.log[1].t_ms == 20_000  # Alice's press, 0:20.0 into the match


def test_events_as_the_hub_stores_them_give_the_same_rows_without_clocks(demo):
    """The hub's events carry t_ms and data, no derived clocks: the same rows and verdicts."""
    events, _ = demo
    wire = [{"seq": e["seq"], "kind": e["kind"], "t_ms": e["t_ms"], "data": e["data"]} for e in events]
    a, b = detail_from_events(events), detail_from_events(wire)
    for ga, gb in zip(a.games, b.games, strict=True):
        assert [(r.row, r.guess, r.marks, r.verdict, r.why, r.ruled) for r in ga.rows] == \
               [(r.row, r.guess, r.marks, r.verdict, r.why, r.ruled) for r in gb.rows]
        assert all(r.clocks is None and r.guess_clocks is None for r in gb.rows)
    assert a.log == b.log
    # A publisher may carry the derived clocks inside the data: read the same.
    inside = [{**w, "data": {**w["data"], "clock_ms": e["clock_ms"]}} for w, e in zip(wire, events, strict=True)]
    assert detail_from_events(inside).games == a.games


def test_a_mis_mark_hides_what_the_code_gives_until_the_game_is_over(table):
    start(table)
    table.press(1, after=30)
    table.guess(1, ["red", "red", "blue", "blue"])
    table.press(0, after=10)
    # red red blue blue against red green blue yellow: 2 black (red, blue), no white: 2B0W.
    table.marks(1, ["red", "red", "blue", "blue"], 1, 1)
    masked = detail_from_events(table.events(), mask_secret=True)
    row = masked.games[0].rows[0]
    assert row.verdict is Verdict.MISMARK and row.expected is None and "2B0W" not in row.why
    assert masked.games[0].secret is None and not masked.games[0].over
    assert not any("red green blue yellow" in line.text or "2B0W" in line.text for line in masked.log)
    plain = detail_from_events(table.events())
    assert plain.games[0].rows[0].expected == (2, 0) and "the code gives 2B0W" in plain.games[0].rows[0].why
    # Clocks at the row: Bob pressed 30.2 s after his clock started (8:00 - 30.2 = 7:29.8);
    # Ann's marks press came 10.2 s after his: 4:00 - 10.2 = 3:49.8.
    assert row.guess_clocks == Clocks((240_000, 449_800)) and row.clocks == Clocks((229_800, 449_800))
    table.secret("open")  # the game is over: the code may be shown
    over = detail_from_events(table.events(), mask_secret=True)
    g = over.games[0]
    assert g.over and g.secret == SECRET and g.rows[0].expected == (2, 0)
    assert g.outcome is not None and (g.outcome.attempts, g.outcome.reason) == (2, "mis-mark")


def test_an_uncertain_row_is_unsure_until_the_arbiter_rules(table):
    start(table)
    table.press(1, after=20)
    table.guess(1, ["red", "green", "yellow", "blue"])
    table.press(0, after=5)
    table.marks(1, ["red", "green", "yellow", "blue"], 0, 0, status="occluded")
    row = detail_from_events(table.events()).games[0].rows[0]
    assert row.verdict is Verdict.UNSURE and row.ruled is None
    assert row.why == "the camera could not read the marks (occluded): the arbiter looks"
    # red green yellow blue against red green blue yellow: 2 black, 2 white.
    table.arbiter("confirm_row", game=1, row=1, guess=["red", "green", "yellow", "blue"],
                  black=2, white=2, by="arbiter")
    d = detail_from_events(table.events())
    row = d.games[0].rows[0]
    assert row.verdict is Verdict.OK and row.marks == "2B2W" and row.expected == (2, 2)
    assert row.ruled is not None and (row.ruled.by, row.ruled.how) == ("arbiter", "confirmed")
    assert [r.action for r in d.games[0].rulings] == ["confirm_row"]
    assert row.evidence is not None and row.evidence.phase == "marks"


def test_a_row_entered_by_hand_says_so(table):
    start(table)
    table.press(1, after=20)
    table.guess(1, ["red", "red", "red", "red"])
    table.press(0, after=5)
    table.marks(1, ["red"] * 4, 0, 0, status="unknown")
    table.arbiter("confirm_row", game=1, row=1, guess=["red"] * 4, black=1, white=0, by="arbiter", hand=True)
    row = detail_from_events(table.events()).games[0].rows[0]
    assert row.ruled == Ruled("arbiter", "entered by hand", row.ruled.seq if row.ruled else 0)
    assert row.verdict is Verdict.OK and row.marks == "1B0W"  # one red in the code: 1B0W


def test_a_timeout_flags_the_codebreaker_and_freezes_the_clocks(table):
    start(table)
    table.press(1, after=60)                       # Bob: 1:00.2 used
    table.guess(1, ["red", "red", "blue", "blue"])
    table.press(0, after=20)                       # Ann: 20.2 s used
    table.marks(1, ["red", "red", "blue", "blue"], 2, 0)
    table.wait(7 * 60)                             # Bob's 6:59.4 left run out
    table.secret("open")
    g = detail_from_events(table.events()).games[0]
    assert g.flag == "Bob" and g.over
    assert g.outcome is not None and (g.outcome.attempts, g.outcome.reason) == (13, "time out")
    # Frozen at the flag: Bob 0, Ann 4:00 - 20.2 s - the 0.2 s reading after Bob's press... only her
    # own turn counts: 3:39.8.
    assert g.final_clocks == Clocks((219_800, 0))
    assert g.rows[0].verdict is Verdict.OK


def test_penalties_and_rulings_are_listed_with_who_and_why(table):
    start(table)
    table.ruling("penalty", player=1, penalty="time", time_ns=60 * 1_000_000_000, why="talking")
    table.arbiter("adjust", player=0, delta_ns=-5_000_000_000, by="arbiter")
    d = detail_from_events(table.events())
    (p,) = d.games[0].penalties
    assert (p.player, p.kind, p.time_ms, p.why, p.by) == ("Bob", "time", 60_000, "talking", "arbiter")
    actions = [(r.action, r.text) for r in d.games[0].rulings]
    assert actions == [("penalty", "arbiter: penalty against Bob: time, 1:00.0 to the opponent (talking)"),
                       ("adjust", "arbiter: adjusted Ann's clock by -0:05.0")]


def test_a_hidden_code_leaves_rows_pending_until_it_is_shown(table):
    start(table, seen=False)
    table.press(1, after=20)
    table.guess(1, ["red", "red", "blue", "blue"])
    table.press(0, after=5)
    table.marks(1, ["red", "red", "blue", "blue"], 2, 0)
    row = detail_from_events(table.events()).games[0].rows[0]
    assert row.verdict is Verdict.PENDING and "the code is hidden" in row.why
    table.press(1, after=20)
    table.guess(2, SECRET)
    table.press(0, after=5)
    table.marks(2, SECRET, 4, 0)
    table.secret("open")
    g = detail_from_events(table.events()).games[0]
    assert g.over and g.outcome is not None and g.outcome.solved and g.outcome.attempts == 2
    assert [r.verdict for r in g.rows] == [Verdict.OK, Verdict.OK]
    assert g.rows[0].expected == (2, 0)


def test_games_can_be_chosen(demo):
    events, _ = demo
    d = detail_from_events(events, games=[2])
    assert [g.number for g in d.games] == [2]
    assert all(line.game in (None, 2) for line in d.log)
    # The press that started game 2 is game 2's: Bob, its codemaker, set the code.
    first = next(line for line in d.log if line.game == 2)
    assert first.kind == "press" and first.text == "Bob pressed the clock"
    with pytest.raises(DetailError, match="no game 1"):
        d.game(1)


@pytest.mark.parametrize("events, words", [
    ([3], "event 1: expected a mapping"),
    ([{"seq": "1", "kind": "press", "data": {}}], "event 1: seq must be an int"),
    ([{"seq": 1, "kind": "", "data": {}}], "event 1: kind must be a non-empty string"),
    ([{"seq": 1, "kind": "press", "data": [1]}], r"event 1 \(press\): data must be a mapping"),
])
def test_a_malformed_event_is_one_line(events, words):
    with pytest.raises(DetailError, match=words) as caught:
        detail_from_events(events)
    assert "\n" not in str(caught.value)


def test_odd_payload_fields_are_read_as_absent():
    events = [
        {"seq": 1, "kind": "match", "t_ms": 0, "data": {"players": "Ann", "rules": 3}},
        {"seq": 2, "kind": "verdict", "t_ms": 5, "data": {"what": "start", "game": 1, "codemaker": 7}},
        {"seq": 3, "kind": "reading", "t_ms": 9, "data": {"game": 1, "row": 1, "phase": "guess",
                                                          "guess": [1, None, "red"], "confidence": "x"}},
        {"seq": 4, "kind": "verdict", "t_ms": 9, "data": {"what": "row", "game": 1, "row": 1,
                                                          "black": "2", "expected": [1]}},
        {"seq": 5, "kind": "ruling", "t_ms": 9, "data": {"action": "penalty", "player": 9, "points": True}},
        {"seq": 6, "kind": "something_new", "t_ms": 10, "data": {}},
    ]
    d = detail_from_events(events)
    (row,) = d.games[0].rows
    assert [h.colour for h in row.guess] == [None, None, "red"] and row.black is None
    assert row.verdict is Verdict.PENDING
    assert d.penalties[0].player == "seat 9" and d.penalties[0].points is None
    assert d.log[-1].text == "something_new"


def test_a_code_known_from_the_results_fills_a_finished_game_only(demo):
    """The hub's events carry no code while the game runs; the results topic gives it after."""
    events, _ = demo
    stripped = []
    for e in events:
        data = dict(e["data"])
        data.pop("code", None)
        stripped.append({**e, "data": data})
    cut = next(i for i, e in enumerate(stripped) if e["data"].get("what") == "game")
    codes = {1: list(SECRET), 2: ["orange", "purple", "purple", "white"]}
    over = detail_from_events(stripped, mask_secret=True, secrets=codes)
    assert over.games[0].secret == SECRET and over.games[1].secret == ("orange", "purple", "purple", "white")
    assert detail_from_events(stripped, mask_secret=True).games[0].secret is None  # no code in the events
    running = detail_from_events(stripped[:cut], mask_secret=True, secrets=codes)
    assert running.games[0].secret is None and not running.games[0].over


def test_a_restart_keeps_one_timeline_and_the_clocks(tmp_path):
    t = Table(tmp_path / "j.sqlite")
    start(t)
    t.press(1, after=30)
    t.guess(1, ["red", "red", "blue", "blue"])
    t.close()
    # The table comes back (a power cut): a new session whose monotonic stamps start lower.
    again = Table(tmp_path / "j.sqlite", start_ns=5 * 1_000_000_000)
    again.arbiter("resume")
    again.press(0, after=10)
    again.marks(1, ["red", "red", "blue", "blue"], 2, 0)
    d = detail_from_events(again.events())
    again.close()
    times = [line.t_ms for line in d.log]
    assert times == sorted(times)
    assert any(line.text.startswith("the table restarted") for line in d.log)
    row = d.games[0].rows[0]
    # Bob's 30.2 s before the cut are kept (7:29.8). Ann's clock ran 0.2 s before the cut
    # (Bob's press to the last journaled event, the guess's reading); the outage is charged
    # to nobody; the clock comes back paused and runs again from the resume, 10 s before her
    # press: 4:00 - 0.2 - 10.0 = 3:49.8.
    assert row.guess_clocks is not None and row.guess_clocks.remaining_ms[1] == 449_800
    assert row.clocks == Clocks((229_800, 449_800))
    assert row.verdict is Verdict.OK


def test_events_newest_first_or_twice_give_the_same_detail(demo):
    events, _ = demo
    assert detail_from_events(list(reversed(events)) + events[:50]) == detail_from_events(events)


def _redact(value):
    """What the hall's events carry: no key named code, secret or expected, at any depth."""
    if isinstance(value, dict):
        return {k: _redact(v) for k, v in value.items() if k not in ("code", "secret", "expected")}
    if isinstance(value, list):
        return [_redact(v) for v in value]
    return value


def test_the_halls_events_without_the_secret_give_the_tables_verdicts(demo):
    """The hub's events: t_ms, the data with every secret-bearing key taken out, no clocks.
    Rows the table judged are ok until it announces a mis-mark; the game's verdict settles
    the marks each row should have had once it is over."""
    events, _ = demo
    hall = [{"seq": e["seq"], "kind": e["kind"], "t_ms": e["t_ms"], "data": _redact(e["data"])}
            for e in events if e["kind"] != "tick"]
    cut = next(i for i, e in enumerate(hall) if e["data"].get("what") == "game")
    running = detail_from_events(hall[:cut], mask_secret=True).games[0]
    assert [r.verdict for r in running.rows] == [Verdict.OK, Verdict.OK, Verdict.MISMARK]
    assert all(r.expected is None for r in running.rows) and running.secret is None
    assert running.rows[0].why == "marked 1B0W; judged against the code at the table, no mis-mark"
    done = detail_from_events(hall, mask_secret=True)
    assert [r.expected for r in done.games[0].rows] == [(1, 0), (0, 2), (1, 2)]
    assert [r.verdict for r in done.games[0].rows] == [Verdict.OK, Verdict.OK, Verdict.MISMARK]
    assert [line.seq for line in done.log] == [line.seq for line in detail_from_events(events).log]
    assert not any(" ".join(SECRET) in line.text for line in done.log)


def test_stamps_of_a_new_boot_keep_the_log_on_one_timeline():
    events = [
        {"seq": 1, "kind": "match", "t_ms": 1_000_000, "data": {"players": ["Ann", "Bob"]}},
        {"seq": 2, "kind": "press", "t_ms": 1_010_000, "data": {"player": 0}},
        {"seq": 3, "kind": "boot", "t_ms": 7_000, "data": {"after_seq": 2}},   # after a power cut
        {"seq": 4, "kind": "arbiter", "t_ms": 9_000, "data": {"action": "resume"}},
        {"seq": 5, "kind": "press", "t_ms": 12_500, "data": {"player": 1}},
    ]
    # The boot lands on the last instant before the cut (10 s in); then time runs as stamped.
    assert [line.t_ms for line in detail_from_events(events).log] == [0, 10_000, 10_000, 12_000, 15_500]


def test_a_row_within_bounds_names_what_decides_it():
    events = [
        {"seq": 1, "kind": "reading", "t_ms": 5, "data": {
            "game": 1, "row": 2, "phase": "marks", "status": "unknown", "guess": ["unknown", "red"],
            "candidates": [["red", "blue"], None], "black_bounds": [0, 2], "white_bounds": [1, 2]}},
        {"seq": 2, "kind": "verdict", "t_ms": 6, "data": {
            "what": "bounded_row", "game": 1, "row": 2, "guess": [["red", "blue"], "red"], "black": [0, 2],
            "white": [1, 2], "verdict": "unsure", "deciding_holes": [1], "deciding_keys": ["black"]}},
        {"seq": 3, "kind": "verdict", "t_ms": 6, "data": {
            "what": "check", "game": 1, "row": 0, "half": "secret", "status": "unknown"}},
    ]
    g = detail_from_events(events).games[0]
    (row,) = g.rows
    assert row.verdict is Verdict.UNSURE and [h.label for h in row.guess] == ["red or blue", "red"]
    assert (row.black_bounds, row.white_bounds) == ((0, 2), (1, 2))
    assert row.why == "read within bounds (0-2B1-2W); hole 1 and the black count decide the verdict: the arbiter looks"
    assert g.alarms == ("the camera could not read the code (unknown): the arbiter checks it",)


def test_a_guess_read_with_a_peg_not_quite_sure_says_so_in_the_log():
    events = [
        {"seq": 1, "kind": "reading", "t_ms": 5, "data": {
            "game": 1, "row": 1, "phase": "guess", "status": "ok", "guess": ["red", "yellow", "green", "green"],
            "candidates": [["red"], ["yellow", "orange"], ["green"], ["green"]]}},
        {"seq": 2, "kind": "reading", "t_ms": 6, "data": {
            "game": 1, "row": 2, "phase": "guess", "status": "ok", "guess": ["red", "red", "green", "green"]}},
    ]
    events.append({"seq": 3, "kind": "verdict", "t_ms": 7, "data": {
        "what": "bounded_row", "game": 1, "row": 1, "guess": ["red", ["yellow", "orange"], "green", "green"],
        "black": 1, "white": 1, "verdict": "unsure", "deciding_holes": [2], "deciding_keys": []}})
    detail = detail_from_events(events)
    log = [line.text for line in detail.log]
    assert any("read the guess red yellow green green (hole 2 may also be orange: judged within bounds)" in t for t in log)
    assert any(t.endswith("read the guess red red green green") for t in log)
    row = detail.games[0].rows[0]
    assert [h.label for h in row.guess] == ["red", "yellow or orange", "green", "green"]
    assert row.why == "read within bounds (1B1W); hole 2 decides the verdict: the arbiter looks"
