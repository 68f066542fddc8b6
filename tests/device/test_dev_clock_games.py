"""Whole MSO games at the real match table, through the GPIO layer on mock pins.

The table is the one ``pegwatch run`` builds: :class:`TableProgram` on a
journal, :class:`TableHardware` on gpiozero's MockFactory pins, the buttons
wired through :class:`ArbiterButton` (``TableOnPins`` in this folder's
conftest). Buttons are driven on the mock pins, with bounce; time is a
virtual monotonic clock, except in the real-time test. The clock of
several players (Mensa Connection) has no table program: its clock is
tested in ``tests/rules/test_clock_mensa.py``.
"""

from __future__ import annotations

import threading
import time

from table_on_pins import SECRET, TableOnPins

from pegwatch.device.display.model import Severity, format_time
from pegwatch.device.hardware.buzzer import Alert, BuzzerSettings
from pegwatch.device.table.arbiter_menu import MenuItem
from pegwatch.device.table.program import replay_journal
from pegwatch.rules.clock.controls import TimeControl
from pegwatch.rules.clock.engine import Clock
from pegwatch.rules.codes import score
from pegwatch.rules.flow import Phase
from pegwatch.rules.record import Role

S = 1_000_000_000
MS = 1_000_000
MIN = 60 * S
MAKER, BREAKER, ARB = 17, 27, 22  # Alice (seat 0, codemaker of game 1), Bob (seat 1), arbiter


def arbiter(t, drive, fake_time, *steps):
    """The arbiter's button: each step "short" (100 ms) or "long" (1.6 s)."""
    for step in steps:
        fake_time.advance_ms(300)
        drive.press(ARB)
        fake_time.advance_ms(1600 if step == "long" else 100)
        t.step()  # a long press is found by the hardware's deadline
        drive.release(ARB)
        t.step()


def test_mso_game_through_gpio(table, drive, fake_time):
    t, hw = table, table.hardware
    t.step()
    assert hw.led_states == ("off", "off")
    # The codebreaker is ready: the codemaker starts the opponent's clock.
    t_start = fake_time.now
    drive.tap(MAKER, bounces=3)
    t.step()
    assert t.running_seat() == 1
    assert hw.led_states == ("off", "on")
    fake_time.advance_s(30)
    t_press = fake_time.now
    drive.tap(BREAKER, bounces=4)  # row 1 guessed; a bouncy button
    t.step()
    assert t.running_seat() == 0 and t.flow.phase is Phase.MARKS
    # Charged from the first edge of one press to the first edge of the next.
    assert t.remaining(t_press) == (4 * MIN, 8 * MIN - (t_press - t_start))
    assert [led.is_lit for led in hw.leds] == [True, False]
    # The codebreaker presses again while the codemaker marks: journaled, ignored.
    fake_time.advance_s(2)
    t_again = fake_time.now
    drive.tap(BREAKER)
    t.step()
    assert t.running_seat() == 0 and len(t.flow.game.rows) == 1
    assert t.remaining()[1] == 8 * MIN - (t_press - t_start)
    fake_time.advance_s(8)
    t_marked = fake_time.now
    drive.tap(MAKER)
    t.step()
    assert t.remaining(t_marked) == (
        4 * MIN - (t_marked - t_press),
        8 * MIN - (t_press - t_start),
    )
    assert t.running_seat() == 1
    # Exactly the presses made, each stamped with its first edge.
    presses = [(e.payload["player"], e.at_ns) for e in t.events("press")]
    assert presses == [(0, t_start), (1, t_press), (1, t_again), (0, t_marked)]
    # The journal replays to the same clock and the same verdicts.
    replay = replay_journal(t.path)
    assert replay.mismatches == ()
    assert replay.flow.remaining_ns(t.cont()) == t.flow.remaining_ns(t.cont())


def test_arbiter_pause_resume_and_no_time_runs_while_paused(table, drive, fake_time):
    t = table
    t_start = fake_time.now
    drive.tap(MAKER)
    t.step()
    fake_time.advance_s(10)
    t_down = fake_time.now
    drive.press(ARB, bounces=2)  # pauses on the way down
    fake_time.advance_ms(150)
    drive.release(ARB, bounces=2)
    t.step()
    assert t.flow.paused and t.running_seat() is None
    assert t.hardware.led_states == ("off", "off")  # no LED while paused
    before = t.remaining()
    fake_time.advance_s(60)
    t.step()
    assert t.remaining() == before
    assert before[1] == 8 * MIN - (t_down - t_start)  # charged up to the press-down
    # Players cannot press while paused.
    drive.tap(BREAKER)
    t.step()
    assert t.flow.paused and t.flow.game.rows == []
    fake_time.advance_s(1)
    drive.tap(ARB)  # short press on a paused clock: resume
    t.step()
    assert t.running_seat() == 1
    assert t.hardware.led_states == ("off", "on")
    journaled = [(e.kind, e.payload.get("player", e.payload.get("action")))
                 for e in t.program.journal.events() if e.kind in ("press", "arbiter")]
    assert journaled == [("press", 0), ("arbiter", "pause"), ("press", 1), ("arbiter", "resume")]
    assert t.events("arbiter")[0].at_ns == t_down


def test_arbiter_menu_adjust_and_mute(table, drive, fake_time):
    t = table
    menu = t.program.menu
    drive.tap(MAKER)
    t.step()
    fake_time.advance_s(20)
    drive.tap(BREAKER)  # row 1 guessed: Alice's clock runs
    t.step()
    fake_time.advance_s(1)
    arbiter(t, drive, fake_time, "long")  # pause, then the menu
    assert menu.is_open and t.flow.paused
    assert t.program.display_model().banner == "MENU: BACK"
    # The table's menu in a game: the rulings after MUTE; no PRESET once a game started.
    assert menu.offered() == (
        MenuItem.BACK, MenuItem.ENTER_ROW, MenuItem.ADJUST, MenuItem.MUTE,
        MenuItem.UNDO, MenuItem.SET, MenuItem.PENALTY,
    )
    arbiter(t, drive, fake_time, "short", "short")  # -> ENTER ROW -> ADJUST
    assert t.program.display_model().banner == "MENU: ADJUST"
    arbiter(t, drive, fake_time, "long")
    assert t.program.display_model().banner == "ADJUST +10s"
    before = t.remaining()[0]
    fake_time.advance_ms(300)
    drive.tap(MAKER)  # +10 s to the codemaker; not a clock press
    t.step()
    assert t.remaining()[0] == before + 10 * S
    assert t.flow.paused and t.flow.phase is Phase.MARKS
    [adjust] = [e for e in t.events("arbiter") if e.payload["action"] == "adjust"]
    assert adjust.payload["player"] == 0 and adjust.payload["delta_ns"] == 10 * S
    # Long press back to the items, short to MUTE, long to toggle it.
    arbiter(t, drive, fake_time, "long", "short", "long")
    assert t.program.is_muted and t.hardware.sounder.is_muted
    assert t.events("menu")[-1].payload["action"] == "mute"
    assert t.program.display_model().banner == "MENU: UNMUTE"
    # BACK (past UNDO, SET and PENALTY) closes the menu; the clock stays paused until a short press.
    arbiter(t, drive, fake_time, "short", "short", "short", "short", "long")
    assert not menu.is_open and t.flow.paused
    arbiter(t, drive, fake_time, "short")
    assert t.running_seat() == 0
    assert replay_journal(t.path).muted is True


def test_low_time_warning_then_flag(table, drive, fake_time):
    t = table
    t_start = fake_time.now
    drive.tap(MAKER)
    t.step()
    fake_time.advance_s(8 * 60 - 31)
    t.step()
    assert t.played() == []
    fake_time.advance_s(2)  # 29 s left
    t.step()
    t.step()
    assert t.played() == [Alert.LOW_TIME]
    fake_time.advance_s(20)  # 9 s left
    t.step()
    assert t.played() == [Alert.LOW_TIME, Alert.LOW_TIME]
    fake_time.advance_s(10)
    t.step()
    [flag] = t.events("flag")
    assert flag.payload["player"] == 1 and flag.payload["flag_ns"] == t_start + 8 * MIN
    assert [v.player for v in t.verdicts("flag")] == ["Bob"]
    assert t.played() == [Alert.LOW_TIME, Alert.LOW_TIME, Alert.FLAG]
    assert t.beeps() == 2 + 3
    model = t.program.display_model()
    assert model.message is not None and model.message.text == "FLAG Bob"
    assert model.message.severity is Severity.ALARM
    assert t.hardware.led_states == ("off", "off")
    assert model.players[1].flagged and model.players[1].remaining_ns == 0
    # The clock is frozen at the flag (MSO): presses change nothing.
    left = t.remaining()
    drive.tap(MAKER)
    fake_time.advance_s(5)
    t.step()
    assert t.remaining() == left and t.flow.phase is Phase.REVEAL


def test_muted_table_is_silent_at_the_flag(tmp_path, mock_factory, fake_time, drive):
    muted = BuzzerSettings(short_beep_ms=1, long_beep_ms=2, low_time_warnings_s=(30.0, 10.0),
                           muted=True)
    t = TableOnPins(tmp_path / "muted.sqlite", mock_factory, fake_time, buzzer=muted)
    try:
        assert t.program.is_muted
        drive.tap(MAKER)
        t.step()
        for _ in range(9):
            fake_time.advance_s(60)
            t.step()
        assert len(t.verdicts("flag")) == 1 and t.flow.game.timeout is not None
        assert t.played() == [] and t.beeps() == 0
    finally:
        t.close()


def test_next_change_follows_the_faces(table, drive, fake_time):
    t = table
    program = t.program
    assert program.next_display_change_ns(fake_time.now) is None  # not started
    t_start = fake_time.now
    drive.tap(MAKER)
    t.step()
    now = fake_time.now
    due = program.next_display_change_ns(now)
    face = format_time(t.remaining(now)[1])
    assert format_time(t.remaining(due)[1]) != face
    assert format_time(t.remaining(due - 1)[1]) == face
    assert format_time(program.display_model(due).players[1].remaining_ns) != face
    # Just above 20 s the next change is the switch to tenths.
    at = t_start + 8 * MIN - 20 * S - 500 * MS
    due = program.next_display_change_ns(at)
    assert due == t_start + 8 * MIN - 20 * S + 1
    assert format_time(t.remaining(due)[1]) == "19.9"


def test_display_loop_follows_the_table(table, drive, fake_time):
    from pegwatch.device.display.devices import open_display
    from pegwatch.device.display.loop import DisplayLoop
    from pegwatch.device.display.render import render

    t = table
    display = open_display("dummy")
    loop = DisplayLoop(display, t.program.display_model,
                       next_change_at=t.program.next_display_change_ns, now_ns=fake_time)
    loop.step()
    drive.tap(MAKER)
    t.step()
    fake_time.advance_s(1)
    loop.step()
    assert loop.frames == 2
    model = t.program.display_model()
    assert model.on_move == 1 and model.row == 1
    assert display.device.image.tobytes() == render(model.quantized()).tobytes()


def test_flag_found_by_the_main_loop_in_real_time(tmp_path, mock_factory):
    short = TimeControl.sudden_death(200 * MS)
    t = TableOnPins(tmp_path / "rt.sqlite", mock_factory, time.monotonic_ns,
                    clock_factory=lambda: Clock((short, short)), watch=True)
    stop = threading.Event()
    loop = threading.Thread(target=t.program.run, args=(stop,), daemon=True)
    loop.start()
    try:
        mock_factory.pin(MAKER).drive_low()  # Alice starts Bob's 0.2 s
        deadline = time.monotonic() + 3
        while not t.verdicts("flag") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert t.verdicts("flag"), "the table's loop did not notice the flag"
        [flag] = t.events("flag")
        [press] = t.events("press")
        assert flag.payload["player"] == 1
        assert flag.payload["flag_ns"] == press.at_ns + 200 * MS  # from the stamps
        assert t.hardware.sounder.wait_until_quiet(3)
        assert Alert.FLAG in t.hardware.sounder.played
    finally:
        stop.set()
        loop.join(timeout=3)
        t.close()


def test_full_mso_match_two_games_roles_reversed(table, drive, fake_time):
    """Game 1: Bob breaks Alice's code on row 6. Game 2 (roles reversed, a
    fresh clock, started by Bob's press): Alice is flagged."""
    t, hw = table, table.hardware
    program = t.program
    now = fake_time.now
    drive.tap(MAKER)  # Alice (codemaker) starts Bob's clock
    t.step()
    start = now
    t.secret("closed")  # the camera saw the code under the shield: rows judged exactly
    guesses = [("red", "red", "green", "green"), ("blue", "blue", "yellow", "yellow"),
               ("red", "blue", "white", "black"), ("green", "red", "yellow", "blue"),
               ("red", "green", "yellow", "blue"), SECRET]
    breaker_used = maker_used = 0
    for row, guess in enumerate(guesses, start=1):
        now += 40 * S  # Bob places row `row`
        fake_time.now = now
        breaker_used += 40 * S
        assert hw.led_states == ("off", "on")
        assert program.display_model().row == row
        drive.tap(BREAKER, bounces=3)
        t.step()
        assert t.running_seat(now) == 0
        t.reading(row, "guess", guess)
        now += 15 * S  # Alice marks it
        fake_time.now = now
        maker_used += 15 * S
        assert hw.led_states == ("on", "off")
        drive.tap(MAKER, bounces=3)
        t.step()
        marks = score(SECRET, guess)
        t.reading(row, "marks", guess, marks.black, marks.white)
    # Solved: the game ended, its clock stopped, at the marks press of row 6.
    assert t.flow.phase is Phase.REVEAL and t.running_seat() is None
    assert program.display_model().banner == "OPEN THE SHIELD"
    assert t.remaining() == (4 * MIN - maker_used, 8 * MIN - breaker_used)
    assert hw.led_states == ("off", "off")
    assert now - start == breaker_used + maker_used
    left = t.remaining()
    fake_time.advance_s(5)
    drive.tap(BREAKER)
    t.step()
    assert t.remaining() == left  # nothing runs after the end
    t.secret("open")  # the shield opens: game 1 is judged
    assert t.flow.game.final and t.flow.game.verdict.attempts == 6
    assert program.display_model().banner == "G1: 6 ATTEMPTS"

    # Game 2: roles reversed. Only the new codemaker (Bob) starts it.
    fake_time.advance_s(30)
    drive.tap(MAKER)
    t.step()
    assert t.flow.game.number == 1
    fake_time.advance_s(1)
    t_game2 = fake_time.now
    drive.tap(BREAKER)  # Bob starts Alice's 8 minutes
    t.step()
    assert t.flow.game.number == 2 and t.running_seat() == 0
    assert hw.led_states == ("on", "off")
    model = program.display_model(t_game2)
    assert [p.role for p in model.players] == [Role.CODEBREAKER, Role.CODEMAKER]
    assert [p.remaining_ns for p in model.players] == [8 * MIN, 4 * MIN]  # a fresh clock
    fake_time.advance_s(8 * 60 + 1)
    t.step()
    assert [v.player for v in t.verdicts("flag")] == ["Alice"]
    assert program.display_model().message.text == "FLAG Alice"
    assert t.played()[-1] is Alert.FLAG
    t.secret("open", ("orange", "white", "white", "black"))
    assert t.flow.phase is Phase.MATCH_OVER
    assert program.display_model().banner == "Alice 0 Bob 1 VP"
    assert replay_journal(t.path).mismatches == ()

