"""Fixtures for the device tests: mock pins, a controllable time source, and
the real table program on those pins."""

from __future__ import annotations

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin
from table_on_pins import TableOnPins

from pegwatch.device.hardware.pins import PinMap
from pegwatch.simulation.demo import VirtualClock


class FakeTime(VirtualClock):
    """The simulation's virtual monotonic clock, with a settable ``now`` and
    millisecond and second steps for the tests that move it by hand."""

    def __init__(self, start_ns: int = 1_000_000_000_000) -> None:
        super().__init__(start_ns)

    @property
    def now(self) -> int:
        return self.t

    @now.setter
    def now(self, value: int) -> None:
        self.t = value

    def advance_ms(self, ms: float) -> int:
        return self.advance(round(ms * 1_000_000))

    def advance_s(self, s: float) -> int:
        return self.advance(round(s * 1_000_000_000))


@pytest.fixture
def mock_factory():
    """A fresh MockFactory whose pins can all do PWM; closed after the test."""
    factory = MockFactory(pin_class=MockPWMPin)
    # Nothing in pegwatch may rely on the global default; make that loud.
    saved = Device.pin_factory
    Device.pin_factory = None
    yield factory
    factory.reset()
    factory.close()
    Device.pin_factory = saved


@pytest.fixture
def fake_time():
    return FakeTime()


@pytest.fixture
def pin_map():
    return PinMap()


class Driver:
    """Drives the mock button pins as a hand would, with the fake time."""

    def __init__(self, factory, clock: FakeTime) -> None:
        self.factory = factory
        self.clock = clock

    def pin(self, gpio: int):
        return self.factory.pin(gpio)

    def press(self, gpio: int, *, bounces: int = 0, gap_ms: float = 0.5) -> None:
        """Press an active-low button; *bounces* extra open/close pairs follow."""
        pin = self.factory.pin(gpio)
        pin.drive_low()
        for _ in range(bounces):
            self.clock.advance_ms(gap_ms)
            pin.drive_high()
            self.clock.advance_ms(gap_ms)
            pin.drive_low()

    def release(self, gpio: int, *, bounces: int = 0, gap_ms: float = 0.5) -> None:
        pin = self.factory.pin(gpio)
        pin.drive_high()
        for _ in range(bounces):
            self.clock.advance_ms(gap_ms)
            pin.drive_low()
            self.clock.advance_ms(gap_ms)
            pin.drive_high()

    def tap(self, gpio: int, *, hold_ms: float = 80, bounces: int = 0) -> None:
        """Press, hold *hold_ms*, release: one deliberate press."""
        self.press(gpio, bounces=bounces)
        self.clock.advance_ms(hold_ms)
        self.release(gpio, bounces=bounces)


@pytest.fixture
def drive(mock_factory, fake_time):
    return Driver(mock_factory, fake_time)


@pytest.fixture
def table(tmp_path, mock_factory, fake_time):
    """The real table for Alice (codemaker of game 1, seat 0) and Bob (seat 1),
    MSO rules and clock, on mock pins and the fake time."""
    t = TableOnPins(tmp_path / "table.sqlite", mock_factory, fake_time)
    yield t
    t.close()
