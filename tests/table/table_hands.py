"""Hands on a table's mock buttons, shared by the table tests that press them.

A mixin for a test harness that has ``factory`` (gpiozero MockFactory),
``clock`` (device.demo.VirtualClock), ``hardware`` (TableHardware with
``watch=False``) and ``program`` (TableProgram): each tap goes through the
real debounce and long-press timing, then lets the program take the event.
"""

from __future__ import annotations

from device.pins import PinMap

MS = 1_000_000
PINS = PinMap()


class ButtonHands:
    def _tap(self, gpio, hold_ns=80 * MS):
        pin = self.factory.pin(gpio)
        self.clock.advance(100 * MS)  # well past the debounce lock-out
        pin.drive_low()
        self.clock.advance(hold_ns)
        self.hardware.poll()
        pin.drive_high()
        self.clock.advance(30 * MS)
        self.program.step()

    def player(self, seat):
        self._tap(PINS.player_buttons[seat])

    def arbiter_short(self):
        self._tap(PINS.arbiter_button)

    def arbiter_hold(self):
        self._tap(PINS.arbiter_button, hold_ns=self.hardware.long_press_ns + 100 * MS)
