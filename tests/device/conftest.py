"""Fixtures for the device tests: mock pins and a controllable time source."""

from __future__ import annotations

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

from pegwatch.device.hardware.pins import PinMap


class FakeTime:
    """A monotonic nanosecond clock the test moves by hand."""

    def __init__(self, start_ns: int = 1_000_000_000_000) -> None:
        self.now = start_ns

    def __call__(self) -> int:
        return self.now

    def advance_ms(self, ms: float) -> int:
        self.now += round(ms * 1_000_000)
        return self.now

    def advance_s(self, s: float) -> int:
        self.now += round(s * 1_000_000_000)
        return self.now


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
