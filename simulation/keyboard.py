"""The keyboard as the table's buttons, on gpiozero mock pins.

Off the Pi, ``pegwatch run`` builds the real :class:`pegwatch.device.hardware.gpio.TableHardware`
on a ``MockFactory`` and this module drives its pins from the keyboard:
``a`` and ``l`` are the two players' buttons, space is the arbiter's
(a short press), ``m`` holds the arbiter's button down for a long press
(the arbiter menu; in it, ``a`` changes the field shown and ``l`` moves
to the next), ``c`` confirms a row waiting for a check, ``q`` quits.
A key press drives the pin low and, a moment later, high again, so the
presses go through the same stamping, debouncing and long-press timing
as on the Pi.
"""

from __future__ import annotations

import logging
import os
import select
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

logger = logging.getLogger(__name__)

__all__ = ["KEYS", "KeyboardPins"]

#: Key -> what it does.
KEYS = {"a": "player 0", "l": "player 1", " ": "arbiter", "m": "arbiter held",
        "c": "confirm", "q": "quit"}

#: How long a key "holds" the button down (longer than the debounce lockout).
PRESS_S = 0.08
#: How much longer than the long-press time ``m`` holds the arbiter's button.
HOLD_MARGIN_S = 0.15


class KeyboardPins:
    """Reads single keys from a terminal and drives the mock pins of ``hardware``."""

    def __init__(
        self,
        hardware: Any,
        *,
        on_quit: Callable[[], None],
        on_confirm: Callable[[], None] | None = None,
        extra: dict[str, Callable[[], None]] | None = None,
        fd: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.hardware = hardware
        #: How a held key lets time pass (a test hands in its fake clock's).
        self.sleep = sleep
        self.on_quit = on_quit
        self.on_confirm = on_confirm
        #: More keys (e.g. the simulated board's: place a guess, the marks).
        self.extra = dict(extra or {})
        self.fd = sys.stdin.fileno() if fd is None else fd
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._saved: Any = None

    def handle(self, key: str) -> None:
        """Act on one key."""
        key = key.lower()
        if key == "q":
            self.on_quit()
        elif key == "a":
            self._tap(self.hardware.player_buttons[0])
        elif key == "l":
            self._tap(self.hardware.player_buttons[1])
        elif key == " ":
            self._tap(self.hardware.arbiter_button)
        elif key == "m":
            # Held past the long-press time: the hardware's own timer fires it.
            long_ns = getattr(self.hardware, "long_press_ns", 1_500_000_000)
            self._tap(self.hardware.arbiter_button, hold_s=long_ns / 1e9 + HOLD_MARGIN_S)
        elif key == "c" and self.on_confirm is not None:
            self.on_confirm()
        elif key in self.extra:
            self.extra[key]()

    def _tap(self, device: Any, *, hold_s: float = PRESS_S) -> None:
        pin = device.pin
        pin.drive_low()
        self.sleep(hold_s)
        if hasattr(self.hardware, "poll"):
            # What is due by now (a long press) fires before the release,
            # whichever clock the time passed on.
            self.hardware.poll()
        pin.drive_high()

    def _run(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if not ready:
                continue
            data = os.read(self.fd, 1)
            if not data:
                self.on_quit()
                return
            self.handle(data.decode(errors="ignore"))

    def start(self) -> None:
        """Put the terminal in cbreak mode (if it is one) and read keys in a thread."""
        if os.isatty(self.fd):
            import termios
            import tty

            self._saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)
        self._thread = threading.Thread(target=self._run, name="pegwatch-keys", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop reading and restore the terminal."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1.0)
        if self._saved is not None:
            import termios

            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
            self._saved = None
