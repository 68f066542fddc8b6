"""A table program on mock pins, shared by the table tests that press its buttons.

A mixin for a test harness that has ``factory`` (gpiozero MockFactory),
``clock`` (pegwatch.simulation.demo.VirtualClock), ``hardware`` (TableHardware with
``watch=False``) and ``program`` (TableProgram): each tap goes through the
real debounce and long-press timing, then lets the program take the event.
``events(kind)`` reads the journal back; ``close()`` releases it all.
"""

from __future__ import annotations

from pegwatch.device.hardware.pins import PinMap

MS = 1_000_000
PINS = PinMap()


class TableOnMockPins:
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

    def events(self, kind):
        return [e for e in self.program.journal.events() if e.kind == kind]

    def close(self):
        self.hardware.close()
        self.program.close()
        self.factory.close()
