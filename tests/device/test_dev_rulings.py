"""The clock an arbiter expects (issue 15 §5), through the real table program on
mock pins: undo of a mis-press, the DGT's pause mode (times, move counts,
period), penalties, a preset chosen at the table, count-up; every one
journaled as a ``ruling`` with who and why, and rebuilt the same from the
journal after a crash (what :meth:`TableProgram.open` does on restart)."""

from __future__ import annotations

from table_on_pins import TableOnPins

from pegwatch.device.table.arbiter_menu import MenuItem
from pegwatch.device.table.journal import Journal
from pegwatch.device.table.program import TableProgram, replay_journal
from pegwatch.device.table.replay import log_from_journal
from pegwatch.rules.clock import Clock, TimeControl
from pegwatch.rules.flow import Phase
from pegwatch.rules.penalties import Penalty, PenaltyKind

S = 1_000_000_000
MIN = 60 * S
MAKER, BREAKER, ARB = 17, 27, 22  # Alice (seat 0, codemaker of game 1), Bob (seat 1), arbiter


def arbiter(t, drive, fake_time, *steps):
    """The arbiter's button: each step "short" (100 ms) or "long" (1.6 s)."""
    for step in steps:
        fake_time.advance_ms(300)
        drive.press(ARB)
        fake_time.advance_ms(1600 if step == "long" else 100)
        t.step()
        drive.release(ARB)
        t.step()


def choose(t, drive, fake_time, item):
    """From the open menu's items, step to *item* and choose it."""
    menu = t.program.menu
    assert item in menu.offered(), menu.offered()
    while menu.item is not item:
        arbiter(t, drive, fake_time, "short")
    arbiter(t, drive, fake_time, "long")


def close_menu(t, drive, fake_time):
    while t.program.menu.item is not MenuItem.BACK:
        arbiter(t, drive, fake_time, "short")
    arbiter(t, drive, fake_time, "long")
    assert not t.program.menu.is_open


def tap(t, drive, fake_time, gpio):
    fake_time.advance_ms(300)
    drive.tap(gpio)
    t.step()


def rulings(t):
    return [e.payload for e in t.events("ruling")]


def reopened(t):
    """The flow and log as a restart rebuilds them from the journal."""
    with Journal(t.path, create=False) as journal:
        log, _, _, _ = log_from_journal(journal)
    return log


def start_and_guess(t, drive, fake_time):
    tap(t, drive, fake_time, MAKER)  # Alice starts Bob's clock
    fake_time.advance_s(20)
    tap(t, drive, fake_time, BREAKER)  # Bob: row 1 guessed, Alice's clock runs


def test_undo_of_a_mis_press_from_the_menu(table, drive, fake_time):
    t = table
    start_and_guess(t, drive, fake_time)
    cont_start = t.flow.game.started_ns
    fake_time.advance_s(5)
    tap(t, drive, fake_time, MAKER)  # Alice presses by mistake (no marks placed)
    assert t.flow.phase is Phase.GUESS and t.running_seat() == 1
    fake_time.advance_s(3)
    arbiter(t, drive, fake_time, "long")  # pause, then the menu
    assert t.flow.paused
    choose(t, drive, fake_time, MenuItem.UNDO)
    [ruling] = rulings(t)
    assert ruling["action"] == "undo" and ruling["by"] == "arbiter"
    assert ruling["why"] == "mis-press, undone from the arbiter menu"
    # As if Alice never pressed: her clock ran all along, up to the pause.
    assert t.flow.phase is Phase.MARKS and len(t.flow.game.rows) == 1
    paused_at = max(e.at_ns for e in t.events("arbiter") if e.payload["action"] == "pause")
    paused_cont = t.cont(paused_at)
    bob_press = t.flow.game.rows[0].guess_ns
    assert t.remaining() == (4 * MIN - (paused_cont - bob_press), 8 * MIN - (bob_press - cont_start))
    assert "Alice's press undone by the arbiter" in " ".join(t.program.transcript)
    # The menu closed (one undo per visit); still paused: a short press resumes.
    assert not t.program.menu.is_open and t.flow.paused
    arbiter(t, drive, fake_time, "short")
    assert t.running_seat() == 0
    # A second undo takes back Bob's press; a third, Alice's start.
    t.program.ruling("undo", why="test: back to the start")
    t.step()
    assert t.flow.phase is Phase.GUESS and t.flow.game.rows == []
    t.program.ruling("undo", why="test: before the start")
    t.step()
    assert t.flow.phase is Phase.SETUP
    t.program.ruling("undo", why="nothing left")
    t.step()
    assert t.program.transcript[-1] == "ruling refused: undo: no press to undo"
    # The journal gives the same state back after a crash.
    log = reopened(t)
    assert log.flow.phase is Phase.SETUP and log.flow.game.rows == []
    assert replay_journal(t.path).mismatches == ()


def test_undo_replays_to_the_same_clock_after_a_crash(table, drive, fake_time):
    t = table
    start_and_guess(t, drive, fake_time)
    fake_time.advance_s(7)
    tap(t, drive, fake_time, MAKER)  # a mis-press
    fake_time.advance_s(2)
    t.program.ruling("undo", why="Alice knocked the clock")
    t.step()
    fake_time.advance_s(11)
    t.step()
    live = t.remaining()
    log = reopened(t)
    assert log.flow.remaining_ns(t.cont()) == {0: live[0], 1: live[1]}
    assert log.flow.on_move(t.cont()) == 0


def test_pause_mode_sets_times_moves_and_period_from_the_menu(table, drive, fake_time):
    t = table
    start_and_guess(t, drive, fake_time)
    arbiter(t, drive, fake_time, "long")
    choose(t, drive, fake_time, MenuItem.SET)
    assert t.program.display_model().banner == "SET TIME +1min"
    before = t.remaining()
    tap(t, drive, fake_time, MAKER)  # Alice +1 min
    assert t.remaining() == (before[0] + MIN, before[1])
    for _ in range(6):
        arbiter(t, drive, fake_time, "short")
    assert t.program.display_model().banner == "SET MOVES +1"
    tap(t, drive, fake_time, BREAKER)  # Bob's move counter 1 -> 2
    arbiter(t, drive, fake_time, "short", "short")
    assert t.program.display_model().banner == "SET PERIOD +1"
    tap(t, drive, fake_time, BREAKER)  # MSO has one period: stays 1
    view = t.flow.clock_view(t.cont())
    assert view.moves == (0, 2) and view.stage == (0, 0)
    sets = rulings(t)
    assert [sorted(k for k in r if k not in ("action", "by", "why")) for r in sets] == [
        ["player", "time_ns"], ["moves", "player"], ["period", "player"],
    ]
    assert all(r["by"] == "arbiter" and r["why"] == "set in pause mode from the arbiter menu" for r in sets)
    assert sets[0]["time_ns"] == before[0] + MIN  # absolute: replay needs nothing else
    log = reopened(t)
    assert log.flow.clock_view(t.cont()).moves == (0, 2)
    assert log.flow.remaining_ns(t.cont()) == {0: before[0] + MIN, 1: before[1]}


def test_times_wait_for_pause_mode_but_the_move_counter_is_corrected_any_time(table, drive, fake_time):
    t = table
    start_and_guess(t, drive, fake_time)
    t.program.ruling("set", player=0, time_ns=MIN, why="test")
    t.step()
    assert t.program.transcript[-1] == (
        "ruling refused: set: times and the period are set in pause mode; pause the clock first"
    )
    t.program.ruling("set", player=1, moves=7, by="chief arbiter", why="counted on the scoresheet")
    t.step()
    assert t.flow.clock_view(t.cont()).moves == (0, 7)
    assert t.running_seat() == 0
    assert t.program.transcript[-1] == (
        "arbiter: Bob's moves 7 set by the chief arbiter (counted on the scoresheet)"
    )
    t.program.ruling("set", player=1, period=2, why="no such period")
    t.program.arbiter("pause")
    t.program.ruling("set", player=1, period=2, why="no such period")
    t.step()
    assert "stage for player 1 must be 0..0" in t.program.transcript[-1]


def test_penalties_from_the_menu_are_journaled_and_replayed(table, drive, fake_time):
    t = table
    start_and_guess(t, drive, fake_time)
    arbiter(t, drive, fake_time, "long")
    choose(t, drive, fake_time, MenuItem.PENALTY)
    assert t.program.display_model().banner == "PENALTY: WARNING"
    tap(t, drive, fake_time, BREAKER)  # a warning for Bob; back to the items
    choose(t, drive, fake_time, MenuItem.PENALTY)
    arbiter(t, drive, fake_time, "short")
    assert t.program.display_model().banner == "PENALTY: +2min OPP"
    before = t.remaining()
    tap(t, drive, fake_time, BREAKER)  # Bob penalised: Alice gets 2 min
    assert t.remaining() == (before[0] + 2 * MIN, before[1])
    choose(t, drive, fake_time, MenuItem.PENALTY)
    arbiter(t, drive, fake_time, "short", "short")
    assert t.program.display_model().banner == "PENALTY: -10 VP"
    tap(t, drive, fake_time, MAKER)
    kinds = [(p.kind, p.player) for p in t.program.log.penalties]
    assert kinds == [(PenaltyKind.WARNING, "Bob"), (PenaltyKind.TIME, "Bob"), (PenaltyKind.POINTS, "Alice")]
    assert all(p.by == "arbiter" and p.why == "penalty from the arbiter menu" and p.game == 1
               for p in t.program.log.penalties)
    assert any(line.startswith("PENALTY game 1: Alice: 10 VP docked") for line in t.program.transcript)
    # Loss of the game through the API, with the clock running: it is paused.
    close_menu(t, drive, fake_time)
    arbiter(t, drive, fake_time, "short")  # resume
    assert t.running_seat() == 0
    t.program.ruling("penalty", player=1, penalty="loss", why="electronic device")
    t.step()
    assert t.flow.paused and t.running_seat() is None
    replay = replay_journal(t.path)
    assert replay.mismatches == ()
    assert replay.penalties == tuple(t.program.log.penalties)
    assert replay.penalties[-1] == Penalty(
        PenaltyKind.LOSS, "Bob", game=1, by="arbiter", why="electronic device",
        at_ns=replay.penalties[-1].at_ns,
    )
    log = reopened(t)
    assert log.penalties == t.program.log.penalties
    assert log.flow.remaining_ns(t.cont()) == t.flow.remaining_ns(t.cont())


def test_a_bad_penalty_is_one_line_and_the_table_runs_on(table, drive, fake_time):
    t = table
    start_and_guess(t, drive, fake_time)
    t.program.ruling("penalty", player=1, penalty="points", points=-3, why="test")
    t.program.ruling("penalty", player=1, penalty="exile", why="test")
    t.step()
    assert t.program.transcript[-2] == (
        "ruling refused: penalty: penalty points: a points penalty needs points > 0, got -3"
    )
    assert t.program.transcript[-1].startswith("ruling refused: penalty: kind: 'exile' is not one of")
    assert t.running_seat() == 0 and t.program.log.penalties == []


def test_a_preset_chosen_at_the_table_before_the_first_game(table, drive, fake_time):
    t = table
    arbiter(t, drive, fake_time, "long")
    choose(t, drive, fake_time, MenuItem.PRESET)
    while t.program.display_model().banner != "PRESET: count-up":
        arbiter(t, drive, fake_time, "short")
    arbiter(t, drive, fake_time, "long")  # loads it
    [ruling] = rulings(t)
    assert ruling == {"action": "preset", "name": "count-up", "by": "arbiter",
                      "why": "preset chosen from the arbiter menu"}
    close_menu(t, drive, fake_time)
    # A count-up game: each display counts the time used; no flag, no warning.
    tap(t, drive, fake_time, MAKER)
    fake_time.advance_s(3 * 60 * 60)
    t.step()
    assert t.flow.clock.view(t.cont()).count_up == (True, True)
    assert t.remaining()[1] >= 3 * 60 * 60 * S
    assert t.running_seat() == 1 and t.verdicts("flag") == []
    assert t.played() == []
    # Once the game has started, PRESET is not offered and a ruling is refused.
    t.program.ruling("preset", name="blitz-3+2", why="too late")
    t.step()
    assert t.program.transcript[-1] == (
        "ruling refused: preset: the clock preset is chosen before the first game starts"
    )
    log = reopened(t)
    assert log.flow.clock.view(t.cont()).count_up == (True, True)


def test_hourglass_at_the_table(tmp_path, mock_factory, fake_time, drive):
    factory = lambda: Clock([TimeControl.hourglass(MIN)] * 2)  # noqa: E731
    t = TableOnPins(tmp_path / "h.sqlite", mock_factory, fake_time, clock_factory=factory)
    try:
        tap(t, drive, fake_time, MAKER)  # Alice starts Bob's (the codebreaker's) clock
        fake_time.advance_s(10)
        tap(t, drive, fake_time, BREAKER)
        alice, bob = t.remaining()
        assert bob < MIN - 10 * S and alice == 2 * MIN - bob
        # The undo works on a table built around its flow, from the first event on.
        t.program.ruling("undo", why="test")
        t.step()
        assert t.flow.phase is Phase.GUESS
        assert isinstance(t.program, TableProgram)
    finally:
        t.close()


def play_game(t, drive, fake_time, maker_pin, breaker_pin, secret, guesses):
    """One game at the table: the codemaker starts, each guess and its marks read."""
    from pegwatch.rules.codes import score

    tap(t, drive, fake_time, maker_pin)
    for row, guess in enumerate(guesses, start=1):
        fake_time.advance_s(5)
        tap(t, drive, fake_time, breaker_pin)
        t.reading(row, "guess", guess)
        fake_time.advance_s(3)
        tap(t, drive, fake_time, maker_pin)
        fb = score(tuple(guess), tuple(secret))
        t.reading(row, "marks", guess, fb.black, fb.white)
    t.secret("open", secret)
    assert t.flow.game.final


def test_penalties_reach_the_exported_records_and_the_judge(table, drive, fake_time, tmp_path, capsys):
    import json

    from pegwatch.device.cli import main
    from pegwatch.device.table.export import export_records

    t = table
    secret1 = ("red", "green", "blue", "yellow")
    secret2 = ("blue", "red", "green", "white")
    tap(t, drive, fake_time, MAKER)
    t.program.ruling("penalty", player=1, penalty="points", points=10, why="disturbing the opponent")
    t.step()
    # Game 1 from its start: undo the start press, then play it out.
    t.program.ruling("undo", why="restart the game for the record")
    t.step()
    play_game(t, drive, fake_time, MAKER, BREAKER, secret1, [("red", "red", "blue", "blue"), secret1])
    play_game(t, drive, fake_time, BREAKER, MAKER, secret2,
              [("red", "red", "red", "red"), ("blue", "blue", "green", "green"), secret2])
    assert t.flow.match_verdict is not None
    written = export_records(t.path, tmp_path / "out")
    match = json.loads((tmp_path / "out" / "match.json").read_text())
    game1 = json.loads((tmp_path / "out" / "game1.json").read_text())
    assert [p["kind"] for p in match["penalties"]] == ["points"]
    assert game1["penalties"][0]["why"] == "disturbing the opponent"
    assert "penalties" not in json.loads((tmp_path / "out" / "game2.json").read_text())
    assert main(["judge", str(tmp_path / "out" / "match.json"), "--json"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    # Bob broke game 1 in 2 and Ann game 2 in 3: Bob's 1 VP, less the 10 docked.
    assert verdict["vp"] == {"Alice": 0.0, "Bob": -9.0}
    assert verdict["docked_vp"] == {"Alice": 0.0, "Bob": 10.0}
    assert len(written) == 3


def test_undo_after_a_restart_keeps_the_restart_pause(tmp_path, mock_factory, fake_time, drive):
    path = tmp_path / "r.sqlite"
    t = TableOnPins(path, mock_factory, fake_time)
    try:
        start_and_guess(t, drive, fake_time)
        fake_time.advance_s(4)
        tap(t, drive, fake_time, MAKER)  # a mis-press, then the power goes
    finally:
        t.close()
    fake_time.advance_s(30)
    t = TableOnPins(path, mock_factory, fake_time)
    try:
        assert t.flow.paused and t.flow.phase is Phase.GUESS
        t.program.ruling("undo", why="mis-press before the power cut")
        t.step()
        # The press is undone; the restart's pause stands: nothing runs.
        assert t.flow.phase is Phase.MARKS and t.flow.paused
        assert t.running_seat() is None
        left = t.remaining()
        fake_time.advance_s(10)
        t.step()
        assert t.remaining() == left
        assert reopened(t).flow.remaining_ns(t.cont()) == {0: left[0], 1: left[1]}
    finally:
        t.close()


def test_an_ignored_press_after_the_mis_press_stays_ignored(table, drive, fake_time):
    t = table
    start_and_guess(t, drive, fake_time)
    fake_time.advance_s(2)
    tap(t, drive, fake_time, MAKER)  # the mis-press: Bob's clock runs
    fake_time.advance_s(2)
    tap(t, drive, fake_time, MAKER)  # Alice again: ignored, Bob is on move
    t.program.ruling("undo", why="mis-press")
    t.step()
    # Undone: Alice is on move; her second press is not judged again.
    assert t.flow.phase is Phase.MARKS and t.running_seat() == 0
    assert reopened(t).flow.phase is Phase.MARKS
