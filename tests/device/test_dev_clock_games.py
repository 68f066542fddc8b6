"""Whole games through the GPIO layer on mock pins: MSO Mastermind and
4-player Mensa Connection. Buttons are driven on the mock pins, with
bounce, and time is a fake monotonic clock."""

from __future__ import annotations

import pytest

from pegwatch.device.display.model import Role, Severity
from pegwatch.device.hardware.buzzer import Alert, BuzzerSettings
from pegwatch.device.hardware.gpio import TableHardware
from pegwatch.device.hardware.pins import PinMap
from pegwatch.rules.clock.controls import TimeControl
from pegwatch.rules.clock.engine import Clock, ClockEvent, PressOutcome
from pegwatch.simulation.clock_device import ControlEvent, TableClockDevice

S = 1_000_000_000
MIN = 60 * S
MAKER, BREAKER, ARB = 17, 27, 22
QUICK = BuzzerSettings(short_beep_ms=1, long_beep_ms=2, low_time_warnings_s=(30.0, 10.0))


def mso_clock():
    # Seat 0 is the codemaker (4 minutes), seat 1 the codebreaker (8 minutes).
    return Clock((TimeControl.sudden_death(4 * MIN), TimeControl.sudden_death(8 * MIN)))


def mso_clock_reversed():
    # Game 2: roles reversed, seat 0 breaks (8 minutes), seat 1 makes (4).
    return Clock((TimeControl.sudden_death(8 * MIN), TimeControl.sudden_death(4 * MIN)))


@pytest.fixture
def mso(mock_factory, fake_time):
    hardware = TableHardware(PinMap(), pin_factory=mock_factory, buzzer=QUICK,
                             now_ns=fake_time, watch=False)
    journal = []

    def sink(event):
        journal.append(event)  # "written" before it acts
        device.apply(event)

    device = TableClockDevice(
        hardware, mso_clock(), on_event=sink, names=("Alice", "Bob"),
        roles=(Role.CODEMAKER, Role.CODEBREAKER), now_ns=fake_time, watch=False,
        presets={"MSO game 1": mso_clock, "MSO game 2": mso_clock_reversed},
    )
    device.journal = journal
    yield device
    device.close()


def remaining(device, fake_time):
    return device.view(fake_time.now).remaining_ns


def played(device):
    assert device.hardware.sounder.wait_until_quiet(5)
    return device.hardware.sounder.played


def test_mso_game_through_gpio(mso, drive, fake_time):
    hw = mso.hardware
    assert hw.led_states == ("off", "off")
    # The codebreaker is ready: the codemaker starts the opponent's clock.
    t_start = fake_time.now
    drive.tap(MAKER, bounces=3)
    assert mso.view().on_move == 1
    assert hw.led_states == ("off", "on")
    fake_time.advance_s(30)
    t_press = fake_time.now
    drive.tap(BREAKER, bounces=4)  # row 1 guessed; a bouncy button
    view = mso.view(t_press)
    assert view.on_move == 0
    # Charged from the first edge of one press to the first edge of the next.
    assert view.remaining_ns == (4 * MIN, 8 * MIN - (t_press - t_start))
    assert [led.is_lit for led in hw.leds] == [True, False]
    # The codebreaker presses again while the codemaker marks: ignored.
    fake_time.advance_s(2)
    drive.tap(BREAKER)
    assert mso.clock.ignored_presses == (0, 1)
    assert mso.view().on_move == 0
    fake_time.advance_s(8)
    t_marked = fake_time.now
    drive.tap(MAKER)
    assert mso.view(t_marked).remaining_ns == (
        4 * MIN - (t_marked - t_press),
        8 * MIN - (t_press - t_start),
    )
    assert mso.view().on_move == 1
    # Exactly the presses made: start, press, (ignored) press, press.
    kinds = [(e.kind, e.player) for e in mso.journal]
    assert kinds == [("start", 1), ("press", 1), ("press", 1), ("press", 0)]
    # The journal replays to the same clock.
    replayed = Clock.replay(mso.clock.controls, mso.journal)
    assert replayed.view(fake_time.now) == mso.view(fake_time.now)


def test_arbiter_pause_resume_and_no_time_runs_while_paused(mso, drive, fake_time):
    t_start = fake_time.now
    drive.tap(MAKER)
    fake_time.advance_s(10)
    t_down = fake_time.now
    drive.press(ARB, bounces=2)  # pauses on the way down
    fake_time.advance_ms(150)
    drive.release(ARB, bounces=2)
    mso.hardware.poll()
    view = mso.view()
    assert view.paused and not view.running
    assert mso.hardware.led_states == ("off", "blink")
    before = view.remaining_ns
    fake_time.advance_s(60)
    assert mso.view().remaining_ns == before
    assert before[1] == 8 * MIN - (t_down - t_start)  # charged up to the press-down
    # Players cannot press while paused.
    drive.tap(BREAKER)
    assert mso.view().on_move == 1
    fake_time.advance_s(1)
    drive.tap(ARB)  # short press on a paused clock: resume
    assert mso.view().running
    assert mso.hardware.led_states == ("off", "on")
    assert [e.kind for e in mso.journal] == ["start", "pause", "press", "resume"]


def test_arbiter_menu_adjust_undo_mute(mso, drive, fake_time):
    drive.tap(MAKER)
    fake_time.advance_s(20)
    drive.tap(BREAKER)  # a mis-press, say
    fake_time.advance_s(1)
    drive.press(ARB)  # long press: pause, then the menu
    fake_time.advance_ms(1600)
    mso.hardware.poll()
    drive.release(ARB)
    assert mso.menu.is_open
    assert mso.display_model().banner == "MENU: BACK"
    fake_time.advance_ms(300)
    drive.tap(ARB)  # -> ADJUST
    fake_time.advance_ms(300)
    drive.press(ARB)
    fake_time.advance_ms(1600)
    mso.hardware.poll()
    drive.release(ARB)
    assert mso.display_model().banner == "ADJUST +10s"
    before = mso.view().remaining_ns[0]
    fake_time.advance_ms(300)
    drive.tap(MAKER)  # +10 s to the codemaker
    assert mso.view().remaining_ns[0] == before + 10 * S
    assert mso.view().paused
    # Long press back to the items, short to UNDO, long to undo.
    for step in ("long", "short", "long"):
        fake_time.advance_ms(300)
        drive.press(ARB)
        fake_time.advance_ms(1600 if step == "long" else 100)
        mso.hardware.poll()
        drive.release(ARB)
    assert mso.journal[-1] == ClockEvent("undo", mso.journal[-1].at_ns)
    assert mso.view().on_move == 1  # the mis-press is undone
    # Short twice to MUTE, long to toggle it.
    for step in ("short", "short", "long"):
        fake_time.advance_ms(300)
        drive.press(ARB)
        fake_time.advance_ms(1600 if step == "long" else 100)
        mso.hardware.poll()
        drive.release(ARB)
    assert mso.hardware.sounder.is_muted
    assert isinstance(mso.journal[-1], ControlEvent) and mso.journal[-1].kind == "mute"
    assert mso.display_model().banner == "MENU: UNMUTE"


def test_low_time_warning_then_flag(mso, drive, fake_time):
    drive.tap(MAKER)
    fake_time.advance_s(8 * 60 - 31)
    mso.tick()
    assert played(mso) == []
    fake_time.advance_s(2)  # 29 s left
    mso.tick()
    mso.tick()
    assert played(mso) == [Alert.LOW_TIME]
    fake_time.advance_s(20)  # 9 s left
    mso.tick()
    assert played(mso) == [Alert.LOW_TIME, Alert.LOW_TIME]
    flags = []
    mso.when_flag = lambda player, at: flags.append((player, at))
    fake_time.advance_s(10)
    mso.tick()
    view = mso.view()
    assert view.flags == (1,)
    assert flags == [(1, view.flag_times_ns[0])]
    assert played(mso)[-1] is Alert.FLAG
    assert mso.message is not None and mso.message.text == "TIMEOUT Bob"
    assert mso.message.severity is Severity.ALARM
    assert mso.hardware.led_states == ("off", "off")
    model = mso.display_model()
    assert model.players[1].flagged and model.players[1].remaining_ns == 0
    # The clock is frozen at the flag (MSO): presses change nothing.
    drive.tap(MAKER)
    assert mso.view().remaining_ns == view.remaining_ns


def test_muted_table_is_silent_at_the_flag(mso, drive, fake_time):
    mso.hardware.sounder.mute()
    drive.tap(MAKER)
    fake_time.advance_s(9 * 60)
    mso.tick()
    assert mso.view().flags == (1,)
    assert played(mso) == []


def test_player_count_must_match_wiring(mock_factory, fake_time):
    hardware = TableHardware(PinMap(), pin_factory=mock_factory, now_ns=fake_time, watch=False)
    clock = Clock((TimeControl.sudden_death(MIN),) * 3)
    with pytest.raises(ValueError, match="wired for 2"):
        TableClockDevice(hardware, clock, now_ns=fake_time, watch=False)
    hardware.close()


MENSA_PINS = PinMap(player_buttons=(17, 27, 23, 24), arbiter_button=22,
                    player_leds=(5, 6, 13, 19), buzzer=18)


def test_mensa_connection_four_players_skip_the_flagged(mock_factory, fake_time, drive):
    hardware = TableHardware(MENSA_PINS, pin_factory=mock_factory, buzzer=QUICK,
                             now_ns=fake_time, watch=False)
    clock = Clock((TimeControl.sudden_death(20 * MIN),) * 4, freeze_at_flag=False,
                  skip_flagged=True)
    with TableClockDevice(hardware, clock, names=("Ann", "Ben", "Cy", "Dee"),
                          now_ns=fake_time, watch=False) as device:
        t = fake_time.now
        drive.tap(22)  # the arbiter starts the first-named player (on release)
        t += 80_000_000
        assert device.view().on_move == 0
        assert hardware.led_states == ("on", "off", "off", "off")
        buttons = MENSA_PINS.player_buttons
        # A round: everyone plays once, 1 minute each, Cy thinks for 15.
        for player, think in ((0, 60), (1, 60), (2, 15 * 60), (3, 60)):
            t += think * S
            fake_time.now = t  # press-downs exactly *think* apart
            drive.tap(buttons[player], bounces=2)
        assert device.view(t).remaining_ns == (19 * MIN, 19 * MIN, 5 * MIN, 19 * MIN)
        assert device.view().on_move == 0
        for player in (0, 1):
            t += 60 * S
            fake_time.now = t
            drive.tap(buttons[player])
        assert hardware.led_states == ("off", "off", "on", "off")
        # Cy runs out of time; Dee's clock starts at that exact instant.
        fake_time.now = t + 5 * MIN + 3 * S
        device.tick()
        view = device.view()
        assert view.flags == (2,)
        assert view.on_move == 3
        assert view.remaining_ns[3] == 19 * MIN - 3 * S
        assert hardware.led_states == ("off", "off", "off", "on")
        assert device.message.text == "TIMEOUT Cy"
        # Cy's button no longer counts; the others play on, skipping Cy.
        fake_time.advance_s(1)
        drive.tap(buttons[2])
        assert device.view().on_move == 3
        for player in (3, 0, 1):
            fake_time.advance_s(30)
            drive.tap(buttons[player])
        assert device.view().on_move == 3
        assert hardware.led_states == ("off", "off", "off", "on")
        assert device.clock.apply(ClockEvent("press", fake_time.now, 2)) is PressOutcome.FLAGGED
        assert played(device)[-1] is Alert.FLAG


def test_next_change_follows_the_faces(mso, drive, fake_time):
    from pegwatch.device.display.model import format_time

    assert mso.next_change_ns(fake_time.now) is None  # not started
    t_start = fake_time.now
    drive.tap(MAKER)
    now = fake_time.now
    due = mso.next_change_ns(now)
    face = format_time(mso.view(now).remaining_ns[1])
    assert format_time(mso.view(due).remaining_ns[1]) != face
    assert format_time(mso.view(due - 1).remaining_ns[1]) == face
    # Just above 20 s the next change is the switch to tenths.
    at = t_start + 8 * MIN - 20 * S - 500_000_000
    due = mso.next_change_ns(at)
    assert due == t_start + 8 * MIN - 20 * S + 1
    assert format_time(mso.view(due).remaining_ns[1]) == "19.9"


def test_display_loop_follows_the_device(mso, drive, fake_time):
    from pegwatch.device.display.devices import open_display
    from pegwatch.device.display.loop import DisplayLoop

    display = open_display("dummy")
    loop = DisplayLoop(display, mso.display_model, next_change_at=mso.next_change_ns,
                       now_ns=fake_time)
    loop.step()
    drive.tap(MAKER)
    fake_time.advance_s(1)
    loop.step()
    assert loop.frames == 2
    from pegwatch.device.display.render import render

    assert display.device.image.tobytes() == render(mso.display_model().quantized()).tobytes()


def test_flag_found_by_the_watcher_in_real_time(mock_factory):
    hardware = TableHardware(PinMap(), pin_factory=mock_factory, buzzer=QUICK)
    clock = Clock((TimeControl.sudden_death(200_000_000),) * 2)
    import threading

    fell = threading.Event()
    with TableClockDevice(hardware, clock) as device:
        device.when_flag = lambda player, at: fell.set()
        mock_factory.pin(MAKER).drive_low()  # starts the other player's 0.2 s
        assert fell.wait(3), "the watcher did not notice the flag"
        assert device.view().flags == (1,)
        assert hardware.sounder.wait_until_quiet(3)
        assert Alert.FLAG in hardware.sounder.played


def test_full_mso_match_two_games_roles_reversed(mso, drive, fake_time):
    """Game 1: Bob breaks Alice's code on row 6. Game 2 (roles reversed, a
    fresh clock loaded from the arbiter menu's preset): Alice is flagged."""
    hw = mso.hardware
    t = fake_time.now
    drive.tap(MAKER)  # Alice (codemaker) starts Bob's clock
    start = t
    breaker_used = maker_used = 0
    for row in range(1, 7):
        mso.row = row
        t += 40 * S  # Bob places row `row`
        fake_time.now = t
        breaker_used += 40 * S
        assert hw.led_states == ("off", "on")
        drive.tap(BREAKER, bounces=3)
        assert mso.view(t).on_move == 0
        if row == 6:
            break  # Bob's row 6 is the code: four black keys
        t += 15 * S  # Alice marks it
        fake_time.now = t
        maker_used += 15 * S
        assert hw.led_states == ("on", "off")
        drive.tap(MAKER, bounces=3)
    # Solved: the table program stops the clock when the row is confirmed.
    mso.stop(t + 2 * S)
    view = mso.view()
    assert view.finished and view.on_move is None and view.flags == ()
    assert view.remaining_ns == (4 * MIN - maker_used - 2 * S, 8 * MIN - breaker_used)
    assert hw.led_states == ("off", "off")
    assert t - start == breaker_used + maker_used
    drive.tap(BREAKER)
    assert mso.view().remaining_ns == view.remaining_ns  # nothing runs after the end

    # Game 2: the arbiter loads the preset: open, to PRESET, enter it,
    # step to game 2, load it.
    mso.roles = (Role.CODEBREAKER, Role.CODEMAKER)
    for step in ("long", "short", "short", "short", "long", "short", "long"):
        fake_time.advance_s(1)
        drive.press(ARB)
        fake_time.advance_ms(1600 if step == "long" else 100)
        hw.poll()
        drive.release(ARB)
    assert mso.journal[-1] == ControlEvent("preset", mso.journal[-1].at_ns, "MSO game 2")
    for step in ("short", "short", "long"):  # PRESET -> MUTE -> BACK, close
        fake_time.advance_s(1)
        drive.press(ARB)
        fake_time.advance_ms(1600 if step == "long" else 100)
        hw.poll()
        drive.release(ARB)
    assert not mso.menu.is_open
    assert mso.view().remaining_ns == (8 * MIN, 4 * MIN) and not mso.view().started
    assert mso.message is None
    # Bob, now codemaker, starts Alice's 8 minutes; she runs out of time.
    fake_time.advance_s(1)
    drive.tap(BREAKER)
    assert mso.view().on_move == 0
    assert hw.led_states == ("on", "off")
    fake_time.advance_s(8 * 60 + 1)
    mso.tick()
    assert mso.view().flags == (0,)
    assert mso.message.text == "TIMEOUT Alice"
    assert played(mso)[-1] is Alert.FLAG
