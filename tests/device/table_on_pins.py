"""The real match table on mock pins, shared by the device tests (and the
``table`` fixture of this folder's conftest)."""

from __future__ import annotations

from pegwatch.device.hardware.buzzer import BuzzerSettings
from pegwatch.device.hardware.gpio import TableHardware
from pegwatch.device.hardware.pins import PinMap
from pegwatch.device.table.journal import Journal
from pegwatch.device.table.program import TableProgram
from pegwatch.device.table.run import ArbiterButton, TableLoop
from pegwatch.rules.flow import MatchFlow

#: Beeps of a millisecond or two: the patterns play quickly in tests.
QUICK = BuzzerSettings(short_beep_ms=1, long_beep_ms=2, low_time_warnings_s=(30.0, 10.0))
#: The code Alice sets in game 1.
SECRET = ("red", "green", "blue", "yellow")


class TableOnPins:
    """The real match table on mock pins: a :class:`TableProgram` on a journal,
    :class:`TableHardware` on the factory's pins, the buttons wired through
    :class:`ArbiterButton`, as ``pegwatch run`` builds them.

    The test moves the time source and calls :meth:`step`, which does what
    one pass of ``pegwatch run``'s main loop does: the hardware's due
    deadlines (a long press), the program's queued events (journaled, then
    applied), a flag or a low-time warning now due, and the LEDs following
    the seat whose clock runs. ``clock_factory`` gives a table a clock no
    preset names (no ``match`` event is journaled then).
    """

    def __init__(self, path, factory, now_ns, *, players=("Alice", "Bob"), buzzer=QUICK,
                 clock_factory=None, watch=False, pins=None):
        self.path = path
        self.factory = factory
        self.now_ns = now_ns
        self.pins = pins or PinMap()
        self.hardware = TableHardware(self.pins, pin_factory=factory, buzzer=buzzer,
                                      now_ns=now_ns, watch=watch)
        try:
            if clock_factory is None:
                self.program = TableProgram.open(path, players=players, now_ns=now_ns,
                                                 sounder=self.hardware.sounder)
            else:
                flow = MatchFlow(players, clock_factory=clock_factory)
                self.program = TableProgram(flow, Journal(path), now_ns=now_ns,
                                            sounder=self.hardware.sounder)
        except Exception:
            self.hardware.close()
            raise
        self.buttons = ArbiterButton(self.program)
        self.buttons.attach(self.hardware)
        self.loop = TableLoop(self.program, self.hardware)

    # -- the main loop -------------------------------------------------------------

    def step(self) -> int:
        """One pass of the table's loop at the time source's now."""
        self.hardware.poll()
        done, _ = self.loop.step()
        return done

    # -- what the table knows --------------------------------------------------------

    @property
    def flow(self):
        return self.program.flow

    def cont(self, raw=None) -> int:
        """The flow's continuous time at ``raw`` (default: now)."""
        return (self.now_ns() if raw is None else raw) + self.program.offset_ns

    def remaining(self, raw=None) -> tuple[int, int]:
        """Each seat's time left at ``raw`` (default: now)."""
        left = self.flow.remaining_ns(self.cont(raw))
        return left[0], left[1]

    def running_seat(self, raw=None):
        return self.program.running_seat(self.now_ns() if raw is None else raw)

    def events(self, kind):
        return [e for e in self.program.journal.events() if e.kind == kind]

    def verdicts(self, what):
        return [v for v in self.program.verdicts if v.what == what]

    def played(self):
        assert self.hardware.sounder.wait_until_quiet(5)
        return list(self.hardware.sounder.played)

    def beeps(self) -> int:
        """How many times the buzzer pin went on (its state history)."""
        assert self.hardware.sounder.wait_until_quiet(5)
        pin = self.factory.pin(self.pins.buzzer)
        return sum(1 for s in pin.states[1:] if s.state)

    # -- what the camera would say ------------------------------------------------------

    def reading(self, row, phase, guess=SECRET, black=0, white=0, status="ok"):
        """The vision worker's accepted reading of a row half."""
        self.program.submit("reading", {
            "game": self.flow.game.number, "row": row, "phase": phase,
            "guess": list(guess), "black": black, "white": white, "status": status,
            "confidence": 0.9, "frame_ns": self.now_ns(),
        })
        self.step()

    def secret(self, shield, code=SECRET):
        """The vision worker's reading of the code (``shield`` closed or open)."""
        self.program.submit("reading", {
            "game": self.flow.game.number, "row": 0, "phase": "secret", "code": list(code),
            "shield": shield, "status": "ok", "confidence": 0.9, "frame_ns": self.now_ns(),
        })
        self.step()

    def close(self) -> None:
        self.hardware.close()
        self.program.close()
