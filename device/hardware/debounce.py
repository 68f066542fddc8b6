"""Software debounce for the clock's buttons.

Arcade buttons bounce for a few milliseconds on press and release, and
gpiozero's MockFactory ignores ``bounce_time`` entirely, so the device layer
debounces in software (as well as any hardware filtering).

The rule is a **lock-out**: the first edge that changes the button's state
is accepted at once, stamped with its own time (that is when the player
pressed), and every edge in the next *lockout_ns* is ignored as bounce.
Accepting the first edge keeps the press-to-clock latency near zero, which
a "stable for N ms" rule cannot do.

A real change that happens inside the lock-out (a press shorter than the
lock-out) would leave the accepted state behind the pin; :meth:`settle`
repairs that once the pin has been stable for the lock-out, stamping the
repaired change with the first edge that led to it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from pegwatch.rules.errors import BadInput

#: Default lock-out: longer than arcade microswitch bounce (typically
#: under 5 ms), far shorter than any two deliberate presses.
DEFAULT_LOCKOUT_NS = 20_000_000


@dataclass(frozen=True)
class Change:
    """An accepted change of a button: pressed or released, and when."""

    pressed: bool
    at_ns: int


class Debouncer:
    """Turns raw edges of one button into accepted presses and releases.

    Thread-safe: edges arrive on gpiozero's event thread, :meth:`settle`
    on the hardware watcher thread.
    """

    def __init__(self, *, lockout_ns: int = DEFAULT_LOCKOUT_NS, pressed: bool = False) -> None:
        if lockout_ns < 0:
            raise BadInput("lockout_ns must be >= 0")
        self.lockout_ns = lockout_ns
        self._lock = threading.Lock()
        self._pressed = pressed
        self._raw = pressed
        self._accepted_ns: int | None = None
        # First raw edge, after the last accepted one, that left the pin
        # different from the accepted state; None while they agree.
        self._diverged_ns: int | None = None
        self._last_raw_ns: int | None = None

    @property
    def is_pressed(self) -> bool:
        """The accepted (debounced) state."""
        return self._pressed

    def edge(self, pressed: bool, at_ns: int) -> Change | None:
        """Feed one raw edge (*pressed* is the pin's new state).

        Returns the accepted :class:`Change`, or ``None`` for bounce.
        """
        with self._lock:
            self._raw = pressed
            self._last_raw_ns = at_ns
            if pressed == self._pressed:
                self._diverged_ns = None
                return None
            locked = (
                self._accepted_ns is not None and at_ns - self._accepted_ns < self.lockout_ns
            )
            if locked:
                if self._diverged_ns is None:
                    self._diverged_ns = at_ns
                return None
            return self._accept(pressed, at_ns)

    def settle(self, now_ns: int) -> Change | None:
        """Accept a change the lock-out swallowed, once the pin is stable.

        Returns the repaired :class:`Change` or ``None`` if nothing is due.
        """
        with self._lock:
            if self._diverged_ns is None or self._last_raw_ns is None:
                return None
            if now_ns - self._last_raw_ns < self.lockout_ns:
                return None
            return self._accept(self._raw, self._diverged_ns)

    def settle_due_ns(self) -> int | None:
        """When :meth:`settle` may next have work, or ``None``."""
        with self._lock:
            if self._diverged_ns is None or self._last_raw_ns is None:
                return None
            return self._last_raw_ns + self.lockout_ns

    def _accept(self, pressed: bool, at_ns: int) -> Change:
        self._pressed = pressed
        self._accepted_ns = at_ns
        self._diverged_ns = None
        return Change(pressed, at_ns)
