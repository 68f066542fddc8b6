"""The match table sounds its buzzer: low time, the flag, alerts; mute.

Every table here runs on gpiozero mock pins through the real
``TableHardware`` and ``ArbiterButton``, with a virtual time source shared
by the pins and the program. What the buzzer did is read twice: from
``Sounder.played`` and from the mock buzzer pin's state history.
"""

from __future__ import annotations

import itertools
import threading

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin
from hypothesis import given, settings
from hypothesis import strategies as st
from table_hands import TableOnMockPins

from pegwatch.device.hardware.buzzer import Alert, BuzzerSettings, LowTimeWarnings, Sounder
from pegwatch.device.hardware.gpio import TableHardware
from pegwatch.device.hardware.pins import PinMap
from pegwatch.device.table.arbiter_menu import MenuItem
from pegwatch.device.table.journal import Journal
from pegwatch.device.table.program import TableProgram, replay_journal
from pegwatch.device.table.run import ArbiterButton
from pegwatch.rules.clock.controls import TimeControl
from pegwatch.rules.clock.engine import Clock
from pegwatch.rules.flow import MatchFlow, Phase
from pegwatch.simulation.demo import VirtualClock

S = 1_000_000_000
MS = 1_000_000
SECRET = ("red", "green", "blue", "yellow")
PINS = PinMap()
# Beeps of a millisecond or two: the patterns play quickly in tests.
QUICK = BuzzerSettings(short_beep_ms=1, long_beep_ms=2, low_time_warnings_s=(30.0, 10.0))


class Table(TableOnMockPins):
    """A table program on mock pins, its buzzer attached, one virtual clock."""

    def __init__(self, tmp_path, *, buzzer=QUICK, clock=None, clock_factory=None):
        self.path = tmp_path / "j.sqlite"
        self.clock = clock or VirtualClock()
        self.factory = MockFactory(pin_class=MockPWMPin)
        self.hardware = TableHardware(PINS, pin_factory=self.factory, buzzer=buzzer,
                                      now_ns=self.clock, watch=False)
        if clock_factory is None:
            self.program = TableProgram.open(self.path, players=("Ann", "Bob"), now_ns=self.clock,
                                             sounder=self.hardware.sounder)
        else:  # a clock no preset names: a table of its own, no match event
            flow = MatchFlow(("Ann", "Bob"), clock_factory=clock_factory)
            self.program = TableProgram(flow, Journal(self.path), now_ns=self.clock,
                                        sounder=self.hardware.sounder)
        ArbiterButton(self.program).attach(self.hardware)

    def choose(self, item):
        """Open the menu if need be, step to *item* with short presses, hold."""
        menu = self.program.menu
        if not menu.is_open:
            self.arbiter_hold()
        for _ in range(len(menu.offered())):
            if menu.item is item:
                break
            self.arbiter_short()
        assert menu.item is item, f"{item} not offered: {menu.offered()}"
        self.arbiter_hold()

    # -- the rest of the table -------------------------------------------------

    def wait(self, ns):
        self.clock.advance(ns)
        self.program.step()

    def reading(self, row, phase, guess=SECRET, black=0, white=0, status="ok"):
        self.clock.advance(200 * MS)
        self.program.submit("reading", {
            "game": self.program.flow.game.number, "row": row, "phase": phase,
            "guess": list(guess), "black": black, "white": white, "status": status,
            "confidence": 0.9, "frame_ns": self.clock(),
        })
        self.program.step()

    def secret(self, shield, code=SECRET, status="ok"):
        self.clock.advance(200 * MS)
        self.program.submit("reading", {
            "game": self.program.flow.game.number, "row": 0, "phase": "secret",
            "code": list(code), "shield": shield, "status": status, "confidence": 0.9,
            "frame_ns": self.clock(),
        })
        self.program.step()

    def left(self, seat):
        return self.program.flow.remaining_ns(self.clock() + self.program.offset_ns)[seat]

    # -- what the buzzer did ----------------------------------------------------

    def played(self):
        assert self.hardware.sounder.wait_until_quiet(5)
        return list(self.hardware.sounder.played)

    def beeps(self):
        """How many times the buzzer pin went on (its state history)."""
        assert self.hardware.sounder.wait_until_quiet(5)
        pin = self.factory.pin(PINS.buzzer)
        return sum(1 for s in pin.states[1:] if s.state)


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path)
    yield t
    t.close()


def start_game(t):
    t.player(0)  # Ann, the codemaker, starts Bob's 8 minutes
    t.secret("closed")  # the camera saw the code under the shield
    assert t.program.flow.phase is Phase.GUESS


def test_low_time_warns_once_per_threshold_then_the_flag(table):
    t = table
    start_game(t)
    t.wait(t.left(1) - 31 * S)
    assert t.played() == [] and t.beeps() == 0
    t.wait(2 * S)  # 29 s left: the 30 s warning
    for _ in range(3):
        t.wait(S)
    assert t.played() == [Alert.LOW_TIME]
    assert t.beeps() == 1
    t.wait(t.left(1) - 9 * S)  # the 10 s warning
    t.wait(S)
    assert t.played() == [Alert.LOW_TIME, Alert.LOW_TIME]
    assert t.beeps() == 2
    t.wait(10 * S)  # the flag: three long beeps
    assert [v.what for v in t.program.verdicts].count("flag") == 1
    assert t.played() == [Alert.LOW_TIME, Alert.LOW_TIME, Alert.FLAG]
    assert t.beeps() == 2 + 3
    for _ in range(3):
        t.wait(S)
    assert t.played()[-1] is Alert.FLAG and len(t.played()) == 3
    assert not t.factory.pin(PINS.buzzer).state  # silent afterwards
    # Sounds are outputs, never events: the replay reaches the same verdicts.
    t.program.close()
    assert replay_journal(t.path).mismatches == ()


def test_a_crossing_between_steps_is_found_from_the_stamps(table):
    t = table
    start_game(t)
    # Bob's time passes 30 s and he presses before the loop steps again:
    # the warning was due at a computable instant, so it still sounds.
    t.clock.advance(t.left(1) - 28 * S)
    t.player(1)
    assert t.program.flow.phase is Phase.MARKS
    assert t.played() == [Alert.LOW_TIME]
    # Ann's time is her own: her thresholds sound once for her too.
    t.wait(t.left(0) - 29 * S)
    assert t.played() == [Alert.LOW_TIME, Alert.LOW_TIME]
    t.wait(S)
    assert t.played() == [Alert.LOW_TIME, Alert.LOW_TIME]


def test_a_warning_due_before_an_increment_still_sounds(tmp_path):
    fischer = TimeControl.fischer(3 * 60 * S, 2 * S)
    t = Table(tmp_path, clock_factory=lambda: Clock((fischer, fischer)))
    try:
        start_game(t)
        t.wait(t.left(1) - 31 * S)
        assert t.played() == []
        # 29 s left when Bob presses; his 2 s increment takes him back over
        # 30 s before the loop looks again. The warning was due before the
        # press, at a computable instant: it sounds.
        t.clock.advance(2 * S - 210 * MS)
        t.player(1)
        assert t.left(1) > 30 * S
        assert t.played() == [Alert.LOW_TIME]
        # Back under 30 s on his next move: once per threshold per game.
        t.player(0)
        t.wait(t.left(1) - 25 * S)
        assert t.played() == [Alert.LOW_TIME]
    finally:
        t.close()


def test_both_thresholds_at_once_are_one_beep_and_a_flag_is_not_a_warning(table):
    t = table
    start_game(t)
    t.wait(t.left(1) - 5 * S)  # a long stall of the loop: 30 s and 10 s at once
    assert t.played() == [Alert.LOW_TIME]
    t.wait(10 * S)
    assert t.played() == [Alert.LOW_TIME, Alert.FLAG]


def test_the_arbiter_giving_time_back_re_arms_the_warning(table):
    t = table
    start_game(t)
    t.wait(t.left(1) - 29 * S)
    assert t.played() == [Alert.LOW_TIME]
    t.choose(MenuItem.ADJUST)  # the clock pauses on the way down
    t.arbiter_short()  # +1 s
    t.arbiter_short()  # -1 s
    t.arbiter_short()  # -10 s
    t.arbiter_short()  # +1 min
    t.player(1)  # Bob gets a minute back: 89 s
    assert t.left(1) > 80 * S
    t.arbiter_hold()  # back to the items
    t.choose(MenuItem.BACK)
    t.arbiter_short()  # resume
    t.wait(t.left(1) - 29 * S)
    assert t.played() == [Alert.LOW_TIME, Alert.LOW_TIME]


def test_each_game_warns_afresh(table):
    t = table
    start_game(t)
    t.wait(t.left(1) - 29 * S)
    t.wait(30 * S)  # Bob's flag ends game 1
    t.secret("open")  # the shield opens: game 1 is judged
    assert t.program.flow.game.final
    assert t.played() == [Alert.LOW_TIME, Alert.FLAG]
    t.player(1)  # Bob, codemaker of game 2, starts Ann's clock
    assert t.program.flow.game.number == 2
    t.wait(t.left(0) - 29 * S)
    assert t.played() == [Alert.LOW_TIME, Alert.FLAG, Alert.LOW_TIME]


def test_a_mis_mark_verdict_sounds_an_alert(table):
    t = table
    start_game(t)
    t.player(1)
    guess = ("red", "red", "green", "green")
    t.reading(1, "guess", guess)
    t.player(0)
    assert t.played() == []  # a confirmed, legal guess is nothing to sound
    t.reading(1, "marks", guess, 2, 0)  # truly 1B 1W
    assert [v.what for v in t.program.verdicts].count("mismark") == 1
    assert t.played() == [Alert.ALERT]
    assert t.beeps() == 2


def test_correct_marks_are_silent(table):
    t = table
    start_game(t)
    t.player(1)
    guess = ("red", "red", "green", "green")
    t.reading(1, "guess", guess)
    t.player(0)
    t.reading(1, "marks", guess, 1, 1)
    assert [v.what for v in t.program.verdicts].count("row") == 1
    assert t.played() == [] and t.beeps() == 0


def test_check_row_illegal_guess_camera_and_disk_full_each_call_a_person(table):
    t = table
    start_game(t)
    t.player(1)
    t.reading(1, "guess", ("red", "unknown", "green", "green"), status="unknown")
    assert t.program.display_model().message.text == "CHECK ROW 1"
    assert t.played() == [Alert.ALERT]
    t.choose(MenuItem.ENTER_ROW)  # the arbiter enters it; then Bob goes on
    t.arbiter_short()
    t.arbiter_short()  # resume
    t.player(0)
    t.reading(1, "marks", t.program.flow.game.rows[0].guess, 0, 0, status="occluded")
    assert t.played() == [Alert.ALERT, Alert.ALERT]
    before = len(t.played())
    t.program._camera_changed(False, "camera unplugged")  # as the vision thread says it
    t.program.step()
    assert t.program.display_model().message.text == "CAMERA LOST"
    assert len(t.played()) == before + 1
    t.program._camera_changed(True, "")  # back: nothing to sound
    t.program.step()
    assert len(t.played()) == before + 1
    # A full disk: the journal's alarm.
    journal = t.program.journal
    journal.set_max_bytes(journal.path.stat().st_size)
    n = 0
    while t.program.writer.alarm is None and n < 10_000:
        t.program.submit("note", {"pad": "z" * 500, "n": n})
        t.program.step()
        n += 1
    assert "DISK FULL" in t.program.writer.alarm
    assert len(t.played()) == before + 2
    journal.set_max_bytes(None)
    t.program.step()
    assert t.program.writer.alarm is None


def test_an_illegal_guess_sounds_an_alert(table):
    t = table
    start_game(t)
    t.player(1)
    t.reading(1, "guess", ("red", "empty", "green", "green"))  # MSO allows no blanks
    assert any(v.what == "illegal" for v in t.program.verdicts)
    assert t.played() == [Alert.ALERT]


def test_mute_through_the_menu_silences_everything_and_unmute_restores(table):
    t = table
    start_game(t)
    t.arbiter_hold()
    while t.program.menu.item is not MenuItem.MUTE:
        t.arbiter_short()
    assert t.program.display_model().banner == "MENU: MUTE"
    assert not t.program.is_muted
    t.arbiter_hold()  # choose it
    assert t.program.is_muted and t.hardware.sounder.is_muted
    assert t.program.display_model().banner == "MENU: UNMUTE"  # the item says what it does
    assert [e.payload["action"] for e in t.events("menu")] == ["open", "mute"]
    t.choose(MenuItem.BACK)
    t.arbiter_short()  # resume
    t.wait(t.left(1) - 29 * S)  # a warning, muted
    t.player(1)
    t.reading(1, "guess", ("red", "unknown", "green", "green"), status="unknown")  # an alert, muted
    assert t.program.flow.checks() == (1,)
    assert t.played() == [] and t.beeps() == 0
    t.choose(MenuItem.MUTE)  # unmute
    assert not t.program.is_muted and not t.hardware.sounder.is_muted
    assert t.program.display_model().banner == "MENU: MUTE"
    assert [e.payload["action"] for e in t.events("menu")] == [
        "open", "mute", "close", "open", "unmute"]
    t.choose(MenuItem.BACK)
    t.program.submit("camera", {"state": "lost", "problem": "unplugged"})
    t.program.step()
    assert t.played() == [Alert.ALERT] and t.beeps() == 2
    t.program.close()
    replay = replay_journal(t.path)
    assert replay.mismatches == () and replay.muted is False


def test_muting_stops_a_pattern_that_is_playing(tmp_path):
    slow = BuzzerSettings(short_beep_ms=2000, long_beep_ms=5000)
    t = Table(tmp_path, buzzer=slow)
    try:
        t.hardware.sounder.sound(Alert.FLAG)  # fifteen seconds of beeps and gaps
        pin = t.factory.pin(PINS.buzzer)
        assert t.hardware.sounder.wait_for_beep(5)
        assert pin.state  # the first long beep is on
        t.program.set_muted(True)
        t.program.step()  # journaled, then in force
        assert t.hardware.sounder.wait_until_quiet(3)
        assert not pin.state
        assert t.beeps() == 1
    finally:
        t.close()


def test_buzzer_muted_in_the_configuration_starts_muted_and_the_journal_wins(tmp_path):
    clock = VirtualClock()
    muted = BuzzerSettings(short_beep_ms=1, long_beep_ms=2, muted=True)
    t = Table(tmp_path, buzzer=muted, clock=clock)
    assert t.program.is_muted and t.hardware.sounder.is_muted
    start_game(t)
    t.wait(t.left(1) + S)  # the flag, muted
    assert t.program.flow.game.timeout is not None
    assert t.played() == []
    t.program.set_muted(False)  # the arbiter wants to hear it
    t.program.step()
    t.close()
    # The table restarts with the same configuration: the journal says unmuted.
    again = Table(tmp_path, buzzer=muted, clock=clock)
    try:
        assert not again.program.is_muted and not again.hardware.sounder.is_muted
        again.program.submit("camera", {"state": "lost", "problem": "unplugged"})
        again.program.step()
        assert again.played() == [Alert.ALERT]
    finally:
        again.close()


def test_the_buzzer_is_driven_on_its_own_thread_never_the_callers():
    class Recorder:
        def __init__(self):
            self.threads = set()
            self.on_count = 0

        def on(self):
            self.threads.add(threading.current_thread().name)
            self.on_count += 1

        def off(self):
            self.threads.add(threading.current_thread().name)

    device = Recorder()
    sounder = Sounder(device, QUICK)
    try:
        for alert in (Alert.LOW_TIME, Alert.ALERT, Alert.FLAG):
            sounder.sound(alert)
        assert sounder.wait_until_quiet(5)
        assert device.threads == {"pegwatch-buzzer"}
        assert device.on_count == 1 + 2 + 3
    finally:
        sounder.close()


def test_an_alert_waiting_to_play_is_not_queued_twice():
    gate = threading.Event()

    class Stuck:
        def __init__(self):
            self.on_count = 0

        def on(self):
            self.on_count += 1
            gate.wait(5)  # the first beep holds the worker

        def off(self):
            pass

    device = Stuck()
    sounder = Sounder(device, QUICK)
    try:
        sounder.sound(Alert.LOW_TIME)  # playing
        for _ in range(5):
            sounder.sound(Alert.ALERT)  # one of these waits; the rest are the same
        gate.set()
        assert sounder.wait_until_quiet(5)
        assert sounder.played == [Alert.LOW_TIME, Alert.ALERT]
        assert device.on_count == 1 + 2
    finally:
        sounder.close()


# -- the shared rule: which warnings are due --------------------------------------


def test_low_time_warnings_cross_from_above_to_at_or_below():
    w = LowTimeWarnings.start([10 * S, 30 * S], players=2)
    assert w.thresholds_ns == (30 * S, 10 * S)
    w, due = w.advance((40 * S, 100 * S), (30 * S + 1, 100 * S))
    assert due == ()
    w, due = w.advance((30 * S + 1, 100 * S), (30 * S, 100 * S))  # exactly at it
    assert due == (0,) and w.warned[0] == {30 * S}
    w, due = w.advance((30 * S, 100 * S), (5 * S, 9 * S))  # both players at once
    assert due == (0, 1) and w.warned == ({30 * S, 10 * S}, {30 * S, 10 * S})


def test_low_time_warnings_a_fischer_increment_does_not_re_arm_an_adjustment_does():
    w = LowTimeWarnings.start([30 * S], players=1)
    w, due = w.advance((31 * S,), (29 * S,))
    assert due == (0,)
    w, due = w.advance((29 * S,), (35 * S,))  # +6 s increment
    w, due = w.advance((35 * S,), (29 * S,))
    assert due == ()
    w = w.rearm(0, 35 * S)  # the arbiter gave time back
    w, due = w.advance((35 * S,), (29 * S,))
    assert due == (0,)


def test_low_time_warnings_none_at_the_flag_and_none_when_starting_low():
    w = LowTimeWarnings.start([30 * S, 10 * S], players=1)
    w, due = w.advance((31 * S,), (0,))
    assert due == () and w.warned[0] == {30 * S, 10 * S}
    w = LowTimeWarnings.start([30 * S], players=1)
    assert w.advance((20 * S,), (15 * S,))[1] == ()


def test_low_time_warnings_next_due():
    w = LowTimeWarnings.start([30 * S, 10 * S], players=1)
    assert w.next_due_in_ns(0, 45 * S) == 15 * S
    w, _ = w.advance((45 * S,), (29 * S,))
    assert w.next_due_in_ns(0, 29 * S) == 19 * S
    w, _ = w.advance((29 * S,), (9 * S,))
    assert w.next_due_in_ns(0, 9 * S) is None


@settings(max_examples=60, deadline=None)
@given(
    start=st.integers(min_value=61, max_value=600),
    cuts=st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=30),
    end=st.integers(min_value=1, max_value=60),
)
def test_low_time_warnings_do_not_depend_on_how_often_the_clock_is_read(start, cuts, end):
    """However a falling time is sampled, each threshold it passes is warned
    once, and there are as many beeps as samples that passed one."""
    thresholds = (50 * S, 30 * S, 10 * S)
    first, last = start * S, end * S
    samples = sorted({first - c * (first - last) // 10**6 for c in cuts} | {first, last},
                     reverse=True)
    w = LowTimeWarnings.start(thresholds, players=1)
    beeps = 0
    for before, after in itertools.pairwise(samples):
        w, due = w.advance((before,), (after,))
        beeps += len(due)
    crossed = {t for t in thresholds if t >= last}
    assert w.warned[0] == crossed
    expected = sum(1 for b, a in itertools.pairwise(samples)
                   if any(a <= t < b for t in thresholds))
    assert beeps == expected
