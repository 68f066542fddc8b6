"""Buttons, LEDs and buzzer through gpiozero on mock pins."""

from __future__ import annotations

import threading
import time

import pytest

from pegwatch.device.errors import ConfigError
from pegwatch.device.hardware.buzzer import Alert, BuzzerSettings
from pegwatch.device.hardware.gpio import TableHardware, make_pin_factory
from pegwatch.device.hardware.pins import PinMap

P0, P1, ARB = 17, 27, 22
QUICK = BuzzerSettings(short_beep_ms=2, long_beep_ms=4)


@pytest.fixture
def hw(mock_factory, fake_time, pin_map):
    hardware = TableHardware(
        pin_map, pin_factory=mock_factory, buzzer=QUICK, now_ns=fake_time, watch=False
    )
    events = []
    hardware.when_player_pressed = lambda player, at: events.append(("player", player, at))
    hardware.when_arbiter_pressed = lambda at: events.append(("arbiter-down", at))
    hardware.when_arbiter_short = lambda at: events.append(("arbiter-short", at))
    hardware.when_arbiter_held = lambda at: events.append(("arbiter-held", at))
    hardware.events = events
    yield hardware
    hardware.close()


def test_no_driver_imported_at_import_time():
    """Importing the device layer touches no hardware library (or hardware)."""
    import subprocess
    import sys

    code = (
        "import sys, pegwatch.device.table.run, pegwatch.device.table.program, pegwatch.device.hardware.gpio, pegwatch.device.hardware.pins, pegwatch.device.hardware.buzzer, "
        "pegwatch.device.display.loop, pegwatch.device.display.devices, pegwatch.device.display.charlcd; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('gpiozero', 'luma', 'RPLCD', 'pygame', 'lgpio')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_clean_press_is_one_event_stamped_now(hw, drive, fake_time):
    t0 = fake_time.now
    drive.tap(P0)
    assert hw.events == [("player", 0, t0)]


def test_bouncing_press_and_release_give_exactly_one_press(hw, drive, fake_time):
    t0 = fake_time.now
    drive.press(P1, bounces=5, gap_ms=0.4)  # 11 edges within 4 ms
    fake_time.advance_ms(120)
    drive.release(P1, bounces=5, gap_ms=0.4)
    fake_time.advance_ms(100)
    hw.poll()
    assert hw.events == [("player", 1, t0)]
    assert not hw.is_player_pressed(1)


def test_bounces_in_real_time_give_one_press(mock_factory, pin_map):
    """The same with the real clock: edges microseconds apart."""
    with TableHardware(pin_map, pin_factory=mock_factory, buzzer=QUICK) as hardware:
        seen = []
        hardware.when_player_pressed = lambda player, at: seen.append((player, at))
        pin = mock_factory.pin(P0)
        before = time.monotonic_ns()
        for _ in range(6):
            pin.drive_low()
            pin.drive_high()
        pin.drive_low()
        assert len(seen) == 1
        assert seen[0][0] == 0 and seen[0][1] >= before


def test_two_real_presses_after_lockout_are_two_events(hw, drive, fake_time):
    drive.tap(P0, bounces=2)
    fake_time.advance_ms(300)
    drive.tap(P0, bounces=2)
    assert [e[:2] for e in hw.events] == [("player", 0), ("player", 0)]


def test_arbiter_short_press(hw, drive, fake_time):
    t0 = fake_time.now
    drive.press(ARB, bounces=3)
    fake_time.advance_ms(200)
    hw.poll()
    t1 = fake_time.now
    drive.release(ARB, bounces=3)
    assert hw.events == [("arbiter-down", t0), ("arbiter-short", t1)]


def test_arbiter_long_press_fires_while_held_and_release_is_silent(hw, drive, fake_time):
    t0 = fake_time.now
    drive.press(ARB)
    fake_time.advance_ms(1499)
    hw.poll()
    assert hw.events == [("arbiter-down", t0)]
    fake_time.advance_ms(2)
    hw.poll()
    assert hw.events[-1] == ("arbiter-held", t0 + hw.long_press_ns)
    fake_time.advance_s(1)
    drive.release(ARB)
    hw.poll()
    assert [e[0] for e in hw.events] == ["arbiter-down", "arbiter-held"]


def test_long_press_counts_even_if_the_watcher_was_late(hw, drive, fake_time):
    t0 = fake_time.now
    drive.press(ARB)
    fake_time.advance_s(2)
    drive.release(ARB)  # no poll() in between
    assert hw.events == [("arbiter-down", t0), ("arbiter-held", t0 + hw.long_press_ns)]


def test_watcher_thread_detects_long_press_in_real_time(mock_factory, pin_map):
    with TableHardware(pin_map, pin_factory=mock_factory, buzzer=QUICK,
                       long_press_ns=50_000_000) as hardware:
        held = []
        fired = threading.Event()

        def on_held(at_ns):
            held.append(at_ns)
            fired.set()

        hardware.when_arbiter_held = on_held
        mock_factory.pin(ARB).drive_low()
        assert fired.wait(5), "the watcher thread never noticed the long press"
        assert len(held) == 1


def test_leds_follow_the_turn(hw, mock_factory):
    hw.show_turn(0)
    assert [led.is_lit for led in hw.leds] == [True, False]
    assert mock_factory.pin(5).state and not mock_factory.pin(6).state
    hw.show_turn(1)
    assert [led.is_lit for led in hw.leds] == [False, True]
    hw.show_turn(None)
    assert [led.is_lit for led in hw.leds] == [False, False]
    hw.show_turn(1, paused=True)
    assert hw.led_states == ("off", "blink")


def test_active_low_leds(mock_factory, fake_time):
    pins = PinMap(leds_active_high=False)
    with TableHardware(pins, pin_factory=mock_factory, now_ns=fake_time, watch=False) as hw:
        hw.show_turn(0)
        assert mock_factory.pin(5).state == 0  # lit = pulled low
        assert mock_factory.pin(6).state == 1


def _buzzer_on_count(pin):
    return sum(1 for s in pin.states[1:] if s.state)


def test_buzzer_sounds_patterns(hw, mock_factory):
    hw.sound(Alert.FLAG)
    assert hw.sounder.wait_until_quiet(2)
    assert _buzzer_on_count(mock_factory.pin(18)) == 3
    hw.sound(Alert.LOW_TIME)
    assert hw.sounder.wait_until_quiet(2)
    assert _buzzer_on_count(mock_factory.pin(18)) == 4
    assert hw.sounder.played == [Alert.FLAG, Alert.LOW_TIME]
    assert not mock_factory.pin(18).state


def test_mute_silences_the_buzzer(hw, mock_factory):
    hw.sounder.mute()
    hw.sound(Alert.FLAG)
    assert hw.sounder.wait_until_quiet(2)
    assert _buzzer_on_count(mock_factory.pin(18)) == 0
    assert hw.sounder.played == []
    assert hw.sounder.toggle_mute() is False
    hw.sound(Alert.ALERT)
    assert hw.sounder.wait_until_quiet(2)
    assert _buzzer_on_count(mock_factory.pin(18)) == 2


def test_tonal_buzzer_on_pwm_pin(mock_factory, fake_time, pin_map):
    settings = BuzzerSettings(kind="tonal", short_beep_ms=2, tone_hz=2000)
    with TableHardware(pin_map, pin_factory=mock_factory, buzzer=settings,
                       now_ns=fake_time, watch=False) as hw:
        hw.sound(Alert.LOW_TIME)
        assert hw.sounder.wait_until_quiet(2)
        pin = mock_factory.pin(18)
        assert any(s.state for s in pin.states[1:])  # it was driven
        assert hw.buzzer_device.is_active is False


def test_close_releases_pins_for_reuse(mock_factory, fake_time, pin_map):
    hw = TableHardware(pin_map, pin_factory=mock_factory, now_ns=fake_time, watch=False)
    hw.close()
    hw.close()
    TableHardware(pin_map, pin_factory=mock_factory, now_ns=fake_time, watch=False).close()


def test_failing_handler_does_not_break_buttons(hw, drive, fake_time):
    def boom(player, at):
        raise RuntimeError("handler bug")

    hw.when_player_pressed = boom
    drive.tap(P0)
    fake_time.advance_ms(100)
    seen = []
    hw.when_player_pressed = lambda p, at: seen.append(p)
    drive.tap(P1)
    assert seen == [1]


def test_unknown_pin_factory():
    with pytest.raises(ConfigError, match="pin factory 'x' is not known"):
        make_pin_factory("x")


def test_buzzer_settings_parse():
    s = BuzzerSettings.from_mapping(
        {"kind": "tonal", "muted": True, "low_time_warnings_s": [10, 60]}, source="t.toml"
    )
    assert s.low_time_warnings_ns == (60_000_000_000, 10_000_000_000)
    assert s.muted
    with pytest.raises(ConfigError, match=r"^t.toml: buzzer.kind: 'loud' is not allowed; use one of active, tonal$"):
        BuzzerSettings.from_mapping({"kind": "loud"}, source="t.toml")
    with pytest.raises(ConfigError, match=r"buzzer.short_beep_ms: 0 is out of range"):
        BuzzerSettings.from_mapping({"short_beep_ms": 0}, source="t.toml")
    with pytest.raises(ConfigError, match=r"buzzer.volume: unknown key"):
        BuzzerSettings.from_mapping({"volume": 3}, source="t.toml")


def test_wait_for_press(mock_factory, pin_map):
    import threading

    with TableHardware(pin_map, pin_factory=mock_factory, buzzer=QUICK) as hardware:
        assert hardware.wait_for_press(0.01) is None
        timer = threading.Timer(0.05, mock_factory.pin(P1).drive_low)
        timer.start()
        got = hardware.wait_for_press(2)
        timer.join()
        assert got is not None and got[0] == 1


# --- the kernel's edge time ---------------------------------------------------------


class KernelStampedPin:
    """Mixed into a mock pin: the edge callback carries ``kernel_tick`` (seconds
    of CLOCK_MONOTONIC), as gpiozero's LGPIOFactory passes lgpio's tick."""

    kernel_tick: float | None = None

    def _call_when_changed(self):
        from gpiozero.pins.pi import PiPin

        tick = self.kernel_tick if self.kernel_tick is not None else self._last_change
        PiPin._call_when_changed(self, tick, self._state)


def _kernel_factory():
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    pin_class = type("KernelPin", (KernelStampedPin, MockPWMPin), {})
    return MockFactory(pin_class=pin_class)


def test_a_press_carries_the_kernels_edge_time(fake_time, pin_map):
    factory = _kernel_factory()
    hardware = TableHardware(pin_map, pin_factory=factory, now_ns=fake_time, watch=False,
                             kernel_stamps=True)
    events = []
    hardware.when_player_pressed = lambda player, at: events.append((player, at))
    try:
        pin = factory.pin(P0)
        # The edge happened 3.5 ms before Python got to run the callback.
        edge_ns = fake_time.now - 3_500_000
        pin.kernel_tick = edge_ns / 1e9
        pin.drive_low()
        assert events == [(0, edge_ns)]
        assert hardware.kernel_stamped_edges == 1
        fake_time.advance_ms(150)
        pin.kernel_tick = (fake_time.now - 1_000_000) / 1e9
        pin.drive_high()
        fake_time.advance_s(1)
        hardware.poll()
        # A stamp on another clock (or stale) is not trusted: Python's time is used.
        pin.kernel_tick = 12.0
        pin.drive_low()
        assert events[-1] == (0, fake_time.now)
        assert hardware.kernel_stamped_edges == 2  # only the release before it was kernel-stamped
    finally:
        hardware.close()
        factory.close()


def test_mock_pins_are_stamped_in_python_and_lgpio_by_the_kernel(mock_factory, fake_time, pin_map, drive):
    from pegwatch.device.hardware.gpio import edge_stamps_from_kernel

    assert not edge_stamps_from_kernel(mock_factory)
    assert edge_stamps_from_kernel(type("LGPIOFactory", (), {})())
    hardware = TableHardware(pin_map, pin_factory=mock_factory, now_ns=fake_time, watch=False)
    events = []
    hardware.when_player_pressed = lambda player, at: events.append((player, at))
    try:
        t0 = fake_time.now
        drive.tap(P1)
        assert events == [(1, t0)] and hardware.kernel_stamped_edges == 0
    finally:
        hardware.close()
