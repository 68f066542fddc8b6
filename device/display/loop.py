"""The display loop: draw when the picture changes, sleep until it will.

:class:`DisplayLoop` runs on its own thread. Each pass it asks for the
model at *now*, compares it (with times floored to their faces) with what
is on the glass, and sends a frame only if they differ, at most *fps*
times a second. Then it sleeps until the next visible change (the running
time's next face, from *next_change_at*, e.g. the clock's
``next_change_ns``) or until :meth:`DisplayLoop.wake` (a press, a message).
An idle table costs one wake-up a second at most.

It only ever *reads* the clock (``Clock.view`` is pure), so a slow or
broken display never delays a press. A device error (unplugged, I2C
error) is logged once, and the frame is retried after *retry_s* seconds,
then twice as long each time up to *max_retry_s*, until the device answers
again; with *reopen* each retry opens the device afresh, so a display that
was missing when the table started (:class:`~pegwatch.device.display.devices.AbsentDisplay`)
is picked up when it is plugged in. *on_state* hears ``(False, problem)``
when the device fails and ``(True, "")`` when it is back.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from types import TracebackType

from pegwatch.device.display.devices import Display
from pegwatch.device.display.model import DisplayModel
from pegwatch.rules.errors import BadInput

logger = logging.getLogger(__name__)

#: Longest sleep, as a safety net against a missed wake-up.
MAX_SLEEP_S = 1.0


def _release(display: Display) -> None:
    # A display being replaced may hold the bus or a file: let go of it.
    try:
        display.close()
    except Exception as exc:
        logger.debug("closing the failed display: %s", exc)


class DisplayLoop:
    """Keeps a :class:`~pegwatch.device.display.devices.Display` showing the current model."""

    def __init__(
        self,
        display: Display,
        model_at: Callable[[int], DisplayModel],
        *,
        next_change_at: Callable[[int], int | None] | None = None,
        fps: float = 10.0,
        retry_s: float = 5.0,
        now_ns: Callable[[], int] = time.monotonic_ns,
        reopen: Callable[[], Display] | None = None,
        max_retry_s: float | None = None,
        on_state: Callable[[bool, str], None] | None = None,
    ) -> None:
        if fps <= 0:
            raise BadInput("fps must be > 0")
        self.display = display
        self._model_at = model_at
        # A replugged OLED needs its init sequence again: with *reopen* the
        # retry opens a fresh device instead of writing to the old one.
        self._reopen = reopen
        self._next_change_at = next_change_at
        self.min_interval_ns = round(1e9 / fps)
        self.retry_ns = round(retry_s * 1e9)
        self.max_retry_ns = round(max(retry_s, 30.0 if max_retry_s is None else max_retry_s) * 1e9)
        self._retry_wait_ns = self.retry_ns
        self._on_state = on_state
        self._now_ns = now_ns
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._shown: DisplayModel | None = None
        self._last_frame_ns: int | None = None
        self._failed_at: int | None = None
        self.frames = 0
        """Frames sent to the device."""
        self.passes = 0
        """Times the loop woke and looked (frames + skipped)."""
        self.errors = 0

    @property
    def is_failing(self) -> bool:
        """True while the device is failing and frames are being retried."""
        return self._failed_at is not None

    def wake(self) -> None:
        """Look again now (something other than time changed)."""
        self._wake.set()

    def step(self, now_ns: int | None = None) -> int | None:
        """One pass: draw if needed. Returns the stamp to look again at (or ``None``)."""
        now = self._now_ns() if now_ns is None else now_ns
        self.passes += 1
        raw = self._model_at(now)
        model = raw.quantized()
        due: list[int] = []
        if model != self._shown:
            ready = self._last_frame_ns is None or now - self._last_frame_ns >= self.min_interval_ns
            retry_ok = self._failed_at is None or now - self._failed_at >= self._retry_wait_ns
            if ready and retry_ok:
                self._draw(model, now)
            elif not ready:
                assert self._last_frame_ns is not None
                due.append(self._last_frame_ns + self.min_interval_ns)
            if self._failed_at is not None:
                due.append(self._failed_at + self._retry_wait_ns)
        if self._next_change_at is not None:
            nxt = self._next_change_at(now)
        else:
            until = raw.until_change_ns()  # not the quantized one: it sits on the edge
            nxt = None if until is None else now + until
        if nxt is not None:
            due.append(nxt)
        return min(due) if due else None

    def _draw(self, model: DisplayModel, now: int) -> None:
        try:
            if self._failed_at is not None and self._reopen is not None:
                old, self.display = self.display, self._reopen()
                _release(old)
            self.display.show(model)
        except Exception as exc:
            self.errors += 1
            if self._failed_at is None:
                logger.error(
                    "display %s failed: %s; the clock goes on, retrying from every %.1f s",
                    self.display.kind, exc, self.retry_ns / 1e9,
                )
                self._retry_wait_ns = self.retry_ns
                self._state(False, str(exc) or type(exc).__name__)
            else:
                self._retry_wait_ns = min(self._retry_wait_ns * 2, self.max_retry_ns)
            self._failed_at = now
            return
        if self._failed_at is not None:
            logger.warning("display %s is back", self.display.kind)
            self._failed_at = None
            self._retry_wait_ns = self.retry_ns
            self._state(True, "")
        self._shown = model
        self._last_frame_ns = now
        self.frames += 1

    def _state(self, ok: bool, problem: str) -> None:
        if self._on_state is not None:
            try:
                self._on_state(ok, problem)
            except Exception:
                logger.exception("display state handler failed")

    def show_last(self, model: DisplayModel) -> bool:
        """Draw ``model`` once more, after :meth:`stop` (the table's last picture,
        e.g. ``STOPPED``); False if the device would not take it."""
        try:
            self.display.show(model)
        except Exception as exc:
            logger.error("display %s: last picture not shown: %s", self.display.kind, exc)
            return False
        self._shown = model.quantized()
        self.frames += 1
        return True

    def run(self) -> None:
        """Loop until :meth:`stop` (what the thread runs)."""
        while not self._stop.is_set():
            try:
                due = self.step()
            except Exception:
                logger.exception("display loop pass failed")
                due = None
            now = self._now_ns()
            timeout = MAX_SLEEP_S if due is None else min(MAX_SLEEP_S, max(0.0, (due - now) / 1e9))
            self._wake.wait(timeout)
            self._wake.clear()

    def start(self) -> DisplayLoop:
        """Run on a daemon thread; returns self."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.run, name="pegwatch-display", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread (the display itself stays open)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> DisplayLoop:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
