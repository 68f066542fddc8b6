"""The table's clock hardware through gpiozero: buttons, LEDs and buzzer.

:class:`TableHardware` builds every gpiozero device from a
:class:`~pegwatch.device.hardware.pins.PinMap` with an injected pin factory (the tests use
``gpiozero.pins.mock.MockFactory``); nothing is built at import time.

Each button edge is stamped with the kernel's time of the edge where the
pin factory passes it on (lgpio: :func:`edge_stamps_from_kernel`), else
with the injected time source as the very first thing in its callback (on
mock pins that callback runs synchronously inside ``drive_low()``); both
are ``CLOCK_MONOTONIC`` nanoseconds (docs/clock.md). Then it is debounced in software
(:mod:`pegwatch.device.hardware.debounce`). Accepted events go to the ``when_*`` callbacks:

* ``when_player_pressed(player, at_ns)`` -- a player's button went down;
* ``when_arbiter_pressed(at_ns)`` -- the arbiter button went down;
* ``when_arbiter_short(at_ns)`` -- it came up before *long_press_ns*;
* ``when_arbiter_held(at_ns)`` -- it has been down for *long_press_ns*.

A small watcher thread wakes only when a deadline is due (a long press, a
debounce repair); with a fake time source call :meth:`TableHardware.poll`
instead (``watch=False``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from pegwatch.device.errors import ConfigError
from pegwatch.device.hardware.buzzer import Alert, BuzzerSettings, Sounder
from pegwatch.device.hardware.debounce import DEFAULT_LOCKOUT_NS, Change, Debouncer
from pegwatch.device.hardware.pins import PinMap
from pegwatch.device.lifetime import Closeable

logger = logging.getLogger(__name__)

#: How long the arbiter holds the button to open the menu.
DEFAULT_LONG_PRESS_NS = 1_500_000_000

PlayerCallback = Callable[[int, int], None]
StampCallback = Callable[[int], None]

PIN_FACTORIES = ("mock", "default")

#: Pin factories whose edge callbacks carry the kernel's edge time. lgpio's
#: callback gets the GPIO v2 line event's ``timestamp_ns`` (CLOCK_MONOTONIC,
#: the kernel's default for line events) and gpiozero's LGPIOFactory passes
#: it on as seconds, which gpiozero keeps as the device's ``_last_changed``
#: before it calls ``when_activated``.
KERNEL_STAMPED_FACTORIES = frozenset({"LGPIOFactory"})
#: A kernel stamp older than this (or in the future) is not trusted: the line
#: may be set to another clock (GPIO_V2_LINE_FLAG_EVENT_CLOCK_REALTIME/HTE).
MAX_EDGE_AGE_NS = 2_000_000_000


def edge_stamps_from_kernel(factory: Any) -> bool:
    """Whether ``factory``'s button callbacks carry the kernel's edge time."""
    return type(factory).__name__ in KERNEL_STAMPED_FACTORIES


def edge_time_ns(device: Any, now_ns: int) -> int | None:
    """The kernel's time of ``device``'s last edge, in ``time.monotonic_ns()``
    nanoseconds, or None when it is missing or not plausible at ``now_ns``."""
    ticks = getattr(device, "_last_changed", None)
    if not isinstance(ticks, int | float) or isinstance(ticks, bool):
        return None
    at_ns = round(ticks * 1e9)
    return at_ns if 0 <= now_ns - at_ns <= MAX_EDGE_AGE_NS else None


def make_pin_factory(kind: str = "mock") -> Any:
    """A gpiozero pin factory by name.

    "mock" gives a ``MockFactory`` whose pins can all do PWM (for a tonal
    buzzer); "default" returns ``None``, letting gpiozero choose (lgpio on
    a Pi).
    """
    if kind == "default":
        return None
    if kind == "mock":
        from gpiozero.pins.mock import MockFactory, MockPWMPin

        return MockFactory(pin_class=MockPWMPin)
    raise ConfigError(f"pin factory {kind!r} is not known; use one of {', '.join(PIN_FACTORIES)}")


class TableHardware(Closeable):
    """The buttons, LEDs and buzzer of one table (see the module docstring)."""

    def __init__(
        self,
        pins: PinMap,
        *,
        pin_factory: Any = None,
        buzzer: BuzzerSettings | None = None,
        lockout_ns: int = DEFAULT_LOCKOUT_NS,
        long_press_ns: int = DEFAULT_LONG_PRESS_NS,
        now_ns: Callable[[], int] = time.monotonic_ns,
        watch: bool = True,
        blink_s: float = 0.5,
        kernel_stamps: bool | None = None,
    ) -> None:
        # DigitalInputDevice rather than Button: Button's hold thread polls
        # ten times a second per button (idle CPU on a Pi Zero, and 0.1 s to
        # close); long presses are timed here instead.
        from gpiozero import LED, DigitalInputDevice

        self.pins = pins
        self.long_press_ns = long_press_ns
        # None: whatever the pin factory offers (kernel stamps with lgpio).
        self._kernel_stamps = kernel_stamps
        self.kernel_stamped_edges = 0
        """Edges stamped with the kernel's time rather than in Python."""
        self._now_ns = now_ns
        self._blink_s = blink_s
        self._lock = threading.Lock()
        self._closed = False
        self.when_player_pressed: PlayerCallback | None = None
        self.when_arbiter_pressed: StampCallback | None = None
        self.when_arbiter_short: StampCallback | None = None
        self.when_arbiter_held: StampCallback | None = None
        #: ``when_fault(problem)``: an output (an LED) failed; the chip may be gone.
        self.when_fault: Callable[[str], None] | None = None

        self._devices: list[Any] = []
        try:
            self._player_debounce = [Debouncer(lockout_ns=lockout_ns) for _ in pins.player_buttons]
            self._arbiter_debounce = Debouncer(lockout_ns=lockout_ns)
            self.player_buttons: tuple[Any, ...] = tuple(
                self._button(DigitalInputDevice, gpio, pin_factory, index)
                for index, gpio in enumerate(pins.player_buttons)
            )
            self.arbiter_button: Any = self._button(DigitalInputDevice, pins.arbiter_button, pin_factory, None)
            self.leds: tuple[Any, ...] = tuple(
                self._own(LED(gpio, active_high=pins.leds_active_high, pin_factory=pin_factory))
                for gpio in pins.player_leds
            )
            self.buzzer_device: Any = self._make_buzzer(pin_factory, buzzer or BuzzerSettings())
        except Exception:
            self._close_devices()
            raise
        self.buzzer_settings = buzzer or BuzzerSettings()
        self.sounder = Sounder(self.buzzer_device, self.buzzer_settings)
        self._led_states: list[str] = ["off"] * len(self.leds)
        self._led_lock = threading.Lock()
        self._arbiter_down_ns: int | None = None
        self._arbiter_held_fired = False

        self._pressed = threading.Condition()
        self._last_press: tuple[int | None, int] | None = None
        self._wake = threading.Event()
        self._watcher: threading.Thread | None = None
        if watch:
            self._watcher = threading.Thread(
                target=self._watch, name="pegwatch-buttons", daemon=True
            )
            self._watcher.start()

    # -- construction -------------------------------------------------------

    def _own(self, device: Any) -> Any:
        self._devices.append(device)
        return device

    def _button(self, button_class: Any, gpio: int, factory: Any, player: int | None) -> Any:
        # bounce_time=None: debouncing is ours (MockFactory ignores it, and
        # the kernel's filter would delay the first edge).
        button = self._own(
            button_class(gpio, pull_up=self.pins.buttons_pull_up, bounce_time=None,
                         pin_factory=factory)
        )

        kernel = self._kernel_stamps
        if kernel is None:
            kernel = edge_stamps_from_kernel(button.pin_factory)

        def stamp() -> int:
            at_ns = self._now_ns()  # first: this is when the player pressed, or later
            if kernel:
                edge = edge_time_ns(button, at_ns)
                if edge is not None:
                    self.kernel_stamped_edges += 1
                    return edge
            return at_ns

        def pressed() -> None:
            self._edge(player, True, stamp())

        def released() -> None:
            self._edge(player, False, stamp())

        button.when_activated = pressed
        button.when_deactivated = released
        return button

    def _make_buzzer(self, factory: Any, settings: BuzzerSettings) -> Any:
        if self.pins.buzzer is None:
            return None
        if settings.kind == "tonal":
            from gpiozero import TonalBuzzer
            from gpiozero.tones import Tone

            return self._own(
                TonalBuzzer(
                    self.pins.buzzer,
                    mid_tone=Tone.from_frequency(settings.tone_hz),
                    pin_factory=factory,
                )
            )
        from gpiozero import Buzzer

        return self._own(
            Buzzer(self.pins.buzzer, active_high=self.pins.buzzer_active_high, pin_factory=factory)
        )

    # -- state --------------------------------------------------------------

    @property
    def players(self) -> int:
        return len(self.player_buttons)

    def is_player_pressed(self, player: int) -> bool:
        """The debounced state of *player*'s button."""
        return self._player_debounce[player].is_pressed

    @property
    def is_arbiter_pressed(self) -> bool:
        return self._arbiter_debounce.is_pressed

    @property
    def led_states(self) -> tuple[str, ...]:
        """Each player's LED: "on", "off" or "blink"."""
        return tuple(self._led_states)

    @property
    def is_closed(self) -> bool:
        return self._closed

    # -- outputs ------------------------------------------------------------

    def show_turn(self, on_move: int | None, *, paused: bool = False) -> None:
        """Light the LED of the player on move (blinking while paused).

        Cheap when nothing changes, so it may be called on every event.
        """
        with self._led_lock:
            self._show_turn(on_move, paused)

    def _show_turn(self, on_move: int | None, paused: bool) -> None:
        for index, led in enumerate(self.leds):
            want = "off"
            if index == on_move:
                want = "blink" if paused else "on"
            if want == self._led_states[index]:
                continue
            self._led_states[index] = want
            try:
                if want == "on":
                    led.on()
                elif want == "off":
                    led.off()
                else:
                    led.blink(on_time=self._blink_s, off_time=self._blink_s, background=True)
            except Exception as exc:  # a dead LED must not stop the clock
                logger.error("LED %d: %s", index, exc)
                if self.when_fault is not None:
                    # The GPIO chip may be gone: the owner opens it again, off this thread.
                    self._call_fault(f"LED {index}: {exc}")

    def sound(self, alert: Alert) -> None:
        """Sound *alert* on the buzzer (unless muted); returns at once."""
        self.sounder.sound(alert)

    # -- events -------------------------------------------------------------

    def _debouncer(self, player: int | None) -> Debouncer:
        return self._arbiter_debounce if player is None else self._player_debounce[player]

    def _edge(self, player: int | None, pressed: bool, at_ns: int) -> None:
        debouncer = self._debouncer(player)
        change = debouncer.edge(pressed, at_ns)
        if change is None:
            if debouncer.settle_due_ns() is not None:
                self._wake.set()
            return
        self._dispatch(player, change)

    def wait_for_press(self, timeout: float | None = None) -> tuple[int | None, int] | None:
        """Wait for the next accepted press of any button.

        Returns ``(player, at_ns)`` (``player`` is ``None`` for the arbiter)
        or ``None`` on timeout. For wiring checks; play uses ``when_*``.
        """
        with self._pressed:
            before = self._last_press
            self._pressed.wait_for(lambda: self._last_press is not before, timeout)
            return None if self._last_press is before else self._last_press

    def _dispatch(self, player: int | None, change: Change) -> None:
        if change.pressed:
            with self._pressed:
                self._last_press = (player, change.at_ns)
                self._pressed.notify_all()
        if player is not None:
            if change.pressed and self.when_player_pressed is not None:
                self._call(self.when_player_pressed, player, change.at_ns)
            return
        with self._lock:
            if change.pressed:
                self._arbiter_down_ns = change.at_ns
                self._arbiter_held_fired = False
                short = held = None
            else:
                down = self._arbiter_down_ns
                self._arbiter_down_ns = None
                short = held = None
                if down is not None and not self._arbiter_held_fired:
                    if change.at_ns - down < self.long_press_ns:
                        short = change.at_ns
                    else:  # the watcher was late; the hold still counts
                        held = down + self.long_press_ns
        if change.pressed:
            self._wake.set()
            if self.when_arbiter_pressed is not None:
                self._call(self.when_arbiter_pressed, change.at_ns)
        if short is not None and self.when_arbiter_short is not None:
            self._call(self.when_arbiter_short, short)
        if held is not None and self.when_arbiter_held is not None:
            self._call(self.when_arbiter_held, held)

    def _call_fault(self, problem: str) -> None:
        try:
            if self.when_fault is not None:
                self.when_fault(problem)
        except Exception:
            logger.exception("fault handler failed")

    def _call(self, callback: Callable[..., None], *args: int) -> None:
        try:
            callback(*args)
        except Exception:
            # Whatever the handler did wrong, the buttons keep working.
            logger.exception("button handler failed")

    def poll(self, now_ns: int | None = None) -> None:
        """Run what is due at *now_ns* (default: now): long press, debounce repair."""
        now = self._now_ns() if now_ns is None else now_ns
        for player, debouncer in [(None, self._arbiter_debounce), *enumerate(self._player_debounce)]:
            change = debouncer.settle(now)
            if change is not None:
                self._dispatch(player, change)
        held = None
        with self._lock:
            down = self._arbiter_down_ns
            if down is not None and not self._arbiter_held_fired and now - down >= self.long_press_ns:
                self._arbiter_held_fired = True
                held = down + self.long_press_ns
        if held is not None and self.when_arbiter_held is not None:
            self._call(self.when_arbiter_held, held)

    def _next_due_ns(self) -> int | None:
        due = [d.settle_due_ns() for d in (self._arbiter_debounce, *self._player_debounce)]
        with self._lock:
            if self._arbiter_down_ns is not None and not self._arbiter_held_fired:
                due.append(self._arbiter_down_ns + self.long_press_ns)
        pending = [d for d in due if d is not None]
        return min(pending) if pending else None

    def _watch(self) -> None:
        while not self._closed:
            due = self._next_due_ns()
            timeout = None if due is None else max(0.0, (due - self._now_ns()) / 1e9)
            self._wake.wait(timeout)
            self._wake.clear()
            if self._closed:
                return
            try:
                self.poll()
            except Exception:
                logger.exception("button watcher failed")

    # -- lifetime -----------------------------------------------------------

    def _close_devices(self) -> None:
        for device in reversed(self._devices):
            try:
                device.close()
            except Exception as exc:
                logger.warning("closing %r: %s", device, exc)
        self._devices.clear()

    def close(self) -> None:
        """Release every pin; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._wake.set()
        if self._watcher is not None:
            self._watcher.join(timeout=2)
        self.sounder.close()
        self._close_devices()

