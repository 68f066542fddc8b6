"""``pegwatch run`` as a service that behaves: it stops cleanly on a signal,
and parts that are missing are tried again without stopping the clock.

* :class:`StopSignals` turns SIGTERM (``systemctl stop``, a shutdown) and
  SIGINT (Ctrl-C) into a stop request the main loop sees on its next pass,
  so the ``finally`` of the table runs: STOPPING=1, the journal closed, the
  display showing ``STOPPED`` with the last times (:func:`stopped_model`),
  the LEDs, the buzzer and the camera released, exit status 0.
* :class:`Parts` knows which parts are missing (the display, the camera,
  the buttons' GPIO chip, the camera's calibration), puts the most urgent on
  the display's message line and in ``systemctl status``.
* :class:`Backoff` and :class:`RetryThread` try a missing part again, off
  the clock's path, waiting longer each time.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable
from dataclasses import replace
from types import FrameType, TracebackType
from typing import Any

from pegwatch.device.display.model import DisplayModel, Message, Severity

logger = logging.getLogger(__name__)

__all__ = [
    "PART_MESSAGES", "Backoff", "HardwareSlot", "PartKeeper", "Parts", "RetryThread", "StopSignals",
    "stopped_model",
]

#: What the display says for each missing part, most urgent first.
PART_MESSAGES: dict[str, tuple[str, Severity]] = {
    "buttons": ("NO BUTTONS", Severity.ALARM),
    "camera": ("NO CAMERA", Severity.ALARM),
    "calibration": ("SET-UP: NO CAMERA CAL", Severity.WARNING),
}


def stopped_model(model: DisplayModel) -> DisplayModel:
    """The last picture of a stopped table: its times, nobody on move, ``STOPPED``."""
    return replace(model, on_move=None, paused=False, entry=None, banner="STOPPED")


class Backoff:
    """Delays that double from ``first_s`` up to ``max_s``; :meth:`reset` starts over."""

    def __init__(self, first_s: float = 0.5, max_s: float = 30.0) -> None:
        self.first_s = first_s
        self.max_s = max(max_s, first_s)
        self._next = first_s

    def next(self) -> float:
        delay = self._next
        self._next = min(self._next * 2, self.max_s)
        return delay

    def reset(self) -> None:
        self._next = self.first_s


class Parts:
    """Which parts of the table are missing, and what to show for them.

    :meth:`missing` and :meth:`back` may be called from any thread; ``on_change``
    (e.g. waking the display loop, or setting the systemd status) is called
    after each change.
    """

    def __init__(self, on_change: Callable[[Parts], None] | None = None) -> None:
        self._lock = threading.Lock()
        self._missing: dict[str, str] = {}
        self.on_change = on_change

    def missing(self, part: str, problem: str) -> None:
        with self._lock:
            if self._missing.get(part) == problem:
                return
            first = part not in self._missing
            self._missing[part] = problem
        if first:
            logger.error("%s missing: %s; the clock goes on", part, problem)
        self._changed()

    def back(self, part: str) -> None:
        with self._lock:
            if self._missing.pop(part, None) is None:
                return
        logger.warning("%s back", part)
        self._changed()

    def _changed(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change(self)
            except Exception:  # a status line must never take the table down
                logger.exception("part change handler failed")

    @property
    def names(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(self._missing)

    def status(self) -> str:
        """One line for ``systemctl status``: ``table running`` or what is missing."""
        with self._lock:
            missing = dict(self._missing)
        if not missing:
            return "table running"
        return "table running; missing: " + "; ".join(f"{k} ({v})" for k, v in missing.items())

    def message(self) -> Message | None:
        """The message for the most urgent missing part the display can show."""
        with self._lock:
            missing = set(self._missing)
        for part, (text, severity) in PART_MESSAGES.items():
            if part in missing:
                return Message(text, severity)
        return None

    def overlay(self, model: DisplayModel) -> DisplayModel:
        """``model`` with the missing part on its message line, unless an alarm is there."""
        message = self.message()
        if message is None:
            return model
        current = model.message
        if current is not None and (current.severity is Severity.ALARM or message.severity is not Severity.ALARM):
            return model
        return replace(model, message=message)


class RetryThread:
    """Calls ``attempt()`` in a daemon thread until it returns True, waiting
    ``backoff`` between failures (an exception counts as a failure and is
    passed to ``on_failure``). :meth:`stop` ends it early."""

    def __init__(
        self,
        attempt: Callable[[], bool],
        *,
        backoff: Backoff,
        name: str,
        on_failure: Callable[[BaseException | None], None] | None = None,
    ) -> None:
        self._attempt = attempt
        self._backoff = backoff
        self._on_failure = on_failure
        self._stop = threading.Event()
        self.tries = 0
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> RetryThread:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            self.tries += 1
            error: BaseException | None = None
            try:
                if self._attempt():
                    return
            except Exception as exc:
                error = exc
            if self._on_failure is not None:
                self._on_failure(error)
            self._stop.wait(self._backoff.next())

    @property
    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)


class StopSignals:
    """``with StopSignals(event):`` SIGTERM and SIGINT set ``event`` instead of
    killing the process; the previous handlers come back on exit.

    Only the main thread may install signal handlers; elsewhere (a table run
    from a test's thread) this does nothing.
    """

    SIGNALS = (signal.SIGTERM, signal.SIGINT)

    def __init__(self, stop: threading.Event) -> None:
        self.stop = stop
        self.received: int | None = None
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.received = signum
        self.stop.set()

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for sig, handler in self._previous.items():
            # None: a handler set outside Python, which cannot be put back; the default then.
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        self._previous.clear()
        if self.received is not None:
            logger.warning("stopped by %s", signal.Signals(self.received).name)


class HardwareSlot:
    """The table's buttons, LEDs and buzzer (a ``TableHardware``), or none yet.

    The main loop shows the turn here whether or not the GPIO chip has been
    reached; the turn is remembered and shown when the hardware comes
    (:meth:`connect`, from the retry thread).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.hardware: Any = None
        self._turn: tuple[int | None, bool] = (None, False)
        self._closed = False

    def show_turn(self, on_move: int | None, *, paused: bool = False) -> None:
        with self._lock:
            self._turn = (on_move, paused)
            hardware = self.hardware
        if hardware is not None:
            hardware.show_turn(on_move, paused=paused)

    def detach(self) -> Any:
        """Stop using the hardware (lost); returns it, still open, for the caller to close."""
        with self._lock:
            hardware, self.hardware = self.hardware, None
        return hardware

    def connect(self, hardware: Any) -> bool:
        """Use ``hardware`` from now on; False (and it is closed) if the slot was closed."""
        with self._lock:
            if self._closed:
                closed = True
            else:
                closed = False
                self.hardware = hardware
                turn = self._turn
        if closed:
            hardware.close()
            return False
        hardware.show_turn(turn[0], paused=turn[1])
        return True

    def close(self) -> None:
        """Release the LEDs, the buzzer and the buttons (safe to call twice)."""
        with self._lock:
            self._closed = True
            hardware, self.hardware = self.hardware, None
        if hardware is not None:
            hardware.close()


class PartKeeper:
    """Keeps one part (the buttons' GPIO chip) connected.

    :meth:`start` opens it at once or, failing that, in a :class:`RetryThread`
    with ``backoff``. :meth:`lost` (the part reported a fault) marks it
    missing and opens it again the same way: the old device is detached
    (``detach()``) and closed in that thread, never on the caller's, which is
    the clock's main loop. ``open_`` returns the device; ``attach(device)``
    puts it to use and returns False if it came too late (the table stopping).
    """

    def __init__(
        self,
        part: str,
        open_: Callable[[], Any],
        *,
        attach: Callable[[Any], bool],
        detach: Callable[[], Any],
        parts: Parts,
        backoff: Backoff,
    ) -> None:
        self.part = part
        self._open = open_
        self._attach = attach
        self._detach = detach
        self._parts = parts
        self._backoff = backoff
        self._lock = threading.Lock()
        self._retry: RetryThread | None = None
        self._stopped = False
        self.losses = 0

    def _attempt(self) -> bool:
        if self._stopped:
            return True
        device = self._open()
        if self._attach(device):
            self._parts.back(self.part)
            self._backoff.reset()
        return True

    def _failed(self, exc: BaseException | None) -> None:
        if exc is not None:
            self._parts.missing(self.part, str(exc) or type(exc).__name__)

    def _start_retry(self, *, close_old: bool) -> None:
        def attempt() -> bool:
            old = self._detach() if close_old else None
            if old is not None:
                try:
                    old.close()
                except Exception as exc:
                    logger.warning("closing the lost %s: %s", self.part, exc)
            return self._attempt()

        # Only the first attempt closes the old device: later ones find none.
        self._retry = RetryThread(attempt, backoff=self._backoff, name=f"pegwatch-{self.part}-retry",
                                  on_failure=self._failed).start()

    def start(self) -> PartKeeper:
        try:
            self._attempt()
        except Exception as exc:  # missing or busy: the clock goes on, and it is tried again
            self._failed(exc)
            with self._lock:
                self._start_retry(close_old=False)
        return self

    def lost(self, problem: str) -> None:
        """The part failed while in use: drop it and open it again, off this thread."""
        with self._lock:
            if self._stopped or (self._retry is not None and self._retry.is_alive):
                return
            self.losses += 1
            self._parts.missing(self.part, problem)
            self._start_retry(close_old=True)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            retry = self._retry
        if retry is not None:
            retry.stop()
