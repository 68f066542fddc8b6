"""The clock on the table: hardware events in, a :class:`pegwatch.rules.clock.Clock` judged.

:class:`TableClockDevice` owns a :class:`~pegwatch.device.hardware.gpio.TableHardware` and
a clock. Every debounced press becomes an event stamped with the press's
first edge, handed to the *on_event* sink. The default sink applies it at
once; the table program plugs its journal in instead, writing each event
and then calling :meth:`TableClockDevice.apply` (nothing is lost: an event
is on disk before it acts). Clock events are ``pegwatch.rules.clock`` ``ClockEvent``
values, so a journal replays them exactly with ``Clock.replay``; table
controls (mute, presets, the arbiter menu) are :class:`ControlEvent`.

Buttons, as the players and the arbiter use them:

* before the start, a player's press starts the *next* player's time (the
  MSO codemaker starts the codebreaker's clock); a short arbiter press
  starts the first player's;
* a player's press ends their turn (the clock ignores presses by anyone
  not on move, and counts them);
* the arbiter button pauses a running clock the instant it goes down; a
  short press on a paused clock resumes it; a long press opens the arbiter
  menu (:mod:`pegwatch.device.table.arbiter_menu`).

The outputs follow every change: the LED of the player on move (blinking
while paused), the buzzer at each low-time threshold (decided by
:class:`pegwatch.device.hardware.buzzer.LowTimeWarnings`, as at the match table) and at a
flag. Flags fall lazily in the clock; a watcher thread wakes at the exact
instant the next flag or warning is due (or call
:meth:`TableClockDevice.tick`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from pegwatch.device.display.model import (
    DisplayModel,
    Message,
    PlayerFace,
    Role,
    Severity,
    next_visible_change_ns,
)
from pegwatch.device.hardware.buzzer import Alert, LowTimeWarnings
from pegwatch.device.hardware.gpio import TableHardware
from pegwatch.device.lifetime import Closeable
from pegwatch.device.table.arbiter_menu import ArbiterMenu, MenuAction
from pegwatch.rules.clock.engine import Clock, ClockEvent, ClockView, PressOutcome
from pegwatch.rules.errors import BadInput, PegwatchError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ControlEvent:
    """A table control that is not a clock event, journalled all the same.

    ``kind`` is "mute", "unmute", "preset" (``detail`` names it),
    "menu-open" or "menu-close".
    """

    kind: str
    at_ns: int
    detail: str = ""


DeviceEvent = ClockEvent | ControlEvent
EventSink = Callable[[DeviceEvent], object]


class TableClockDevice(Closeable):
    """Connects the table's buttons, LEDs and buzzer to a clock."""

    def __init__(
        self,
        hardware: TableHardware,
        clock: Clock,
        *,
        on_event: EventSink | None = None,
        names: Sequence[str] | None = None,
        roles: Sequence[Role | None] | None = None,
        presets: Mapping[str, Callable[[], Clock]] | None = None,
        first_player: int = 0,
        low_time_warnings_ns: Sequence[int] | None = None,
        now_ns: Callable[[], int] = time.monotonic_ns,
        watch: bool = True,
    ) -> None:
        if clock.players != hardware.players:
            raise BadInput(
                f"the clock has {clock.players} players but the table is wired for "
                f"{hardware.players} (pins.player_buttons)"
            )
        self.hardware = hardware
        self._clock = clock
        self._sink: EventSink = on_event if on_event is not None else self.apply
        self._now_ns = now_ns
        self._lock = threading.RLock()
        self.names = tuple(names) if names else tuple(f"P{i + 1}" for i in range(clock.players))
        self.roles: tuple[Role | None, ...] = (
            tuple(roles) if roles else (None,) * clock.players
        )
        self.presets = dict(presets or {})
        self.first_player = first_player
        self.menu = ArbiterMenu(players=clock.players, presets=tuple(self.presets))
        self.menu.muted = hardware.sounder.is_muted
        self.row: int | None = None
        self.message: Message | None = None
        self.banner: str | None = None
        self.when_changed: list[Callable[[], None]] = []
        """Called (no arguments) after every applied event: wake a display."""
        self.when_flag: Callable[[int, int], None] | None = None
        """Called as ``when_flag(player, flag_at_ns)`` once per fallen flag."""
        thresholds = (
            hardware.buzzer_settings.low_time_warnings_ns
            if low_time_warnings_ns is None
            else tuple(sorted(low_time_warnings_ns, reverse=True))
        )
        self.low_time_warnings_ns = tuple(thresholds)
        self._low_time = LowTimeWarnings.start(self.low_time_warnings_ns, players=clock.players)
        self._remaining_seen = clock.view(now_ns()).remaining_ns
        self._flags_seen: tuple[int, ...] = ()
        self._paused_by_press = False
        self._closed = False

        hardware.when_player_pressed = self._player_pressed
        hardware.when_arbiter_pressed = self._arbiter_down
        hardware.when_arbiter_short = self._arbiter_short
        hardware.when_arbiter_held = self._arbiter_held

        self._wake = threading.Event()
        self._watcher: threading.Thread | None = None
        self._refresh(self._now_ns())
        if watch:
            self._watcher = threading.Thread(target=self._watch, name="pegwatch-clock", daemon=True)
            self._watcher.start()

    # -- reading ------------------------------------------------------------

    @property
    def clock(self) -> Clock:
        """The clock being driven (replaced when the arbiter loads a preset)."""
        return self._clock

    def view(self, now_ns: int | None = None) -> ClockView:
        """The clock at *now_ns* (default: now). Pure: never blocks on events."""
        return self._clock.view(self._now_ns() if now_ns is None else now_ns)

    def display_model(self, now_ns: int | None = None) -> DisplayModel:
        """What the display should show at *now_ns*."""
        view = self.view(now_ns)
        faces = tuple(
            PlayerFace(
                name=self.names[i],
                remaining_ns=view.remaining_ns[i],
                role=self.roles[i],
                flagged=view.is_flagged(i),
            )
            for i in range(view.players)
        )
        return DisplayModel(
            players=faces,
            on_move=view.on_move,
            row=self.row,
            paused=view.paused,
            message=self.message,
            banner=self.menu.caption() or self.banner,
        )

    def next_change_ns(self, now_ns: int) -> int | None:
        """When the display next changes if nothing else happens (for the display loop)."""
        return next_visible_change_ns(
            self._clock.view(now_ns),
            now_ns,
            lambda at, unit: self._clock.next_change_ns(at, resolution_ns=unit),
        )

    # -- events in ------------------------------------------------------------

    def emit(self, event: DeviceEvent) -> None:
        """Hand *event* to the sink (journal, then :meth:`apply`).

        Events are handed over one at a time, in order, under this
        device's lock; so a sink must not wait for a lock that is held
        elsewhere while that holder calls into this device. An exception
        from the sink reaches the caller (on gpiozero's thread it is
        logged): the sink decides what a failed journal write means.
        """
        with self._lock:
            if self._closed:
                return
            self._sink(event)

    def apply(self, event: DeviceEvent) -> PressOutcome | None:
        """Act on one event: the clock, the menu state, then LEDs and buzzer.

        A clock that refuses the event (say, resume when not paused) is
        reported as one logged line and a message; the table keeps running.
        """
        with self._lock:
            outcome: PressOutcome | None = None
            try:
                if isinstance(event, ClockEvent):
                    outcome = self._clock.apply(event)
                    if event.kind == "adjust" and event.player is not None:
                        # Time given back by the arbiter re-arms its warnings.
                        remaining = self._clock.view(event.at_ns).remaining_ns[event.player]
                        self._low_time = self._low_time.rearm(event.player, remaining)
                else:
                    self._apply_control(event)
            except PegwatchError as exc:
                logger.warning("%s at %d refused: %s", event.kind, event.at_ns, exc)
                self.message = Message(str(exc)[:40], Severity.WARNING)
            self._refresh(event.at_ns)
        self._wake.set()  # the watcher's next deadline may have moved
        self._changed()
        return outcome

    def start(self, player: int, at_ns: int | None = None) -> None:
        """Start *player*'s time (what the first press does)."""
        self.emit(ClockEvent("start", self._at(at_ns), player))

    def stop(self, at_ns: int | None = None) -> None:
        """End the game on the clock (e.g. the code was solved)."""
        self.emit(ClockEvent("stop", self._at(at_ns)))

    def set_message(self, message: Message | None) -> None:
        """Show *message* in the bottom bar (``None`` clears it)."""
        self.message = message
        if message is not None and message.severity is Severity.ALARM:
            self.hardware.sound(Alert.ALERT)
        self._changed()

    def _at(self, at_ns: int | None) -> int:
        return self._now_ns() if at_ns is None else at_ns

    def _player_pressed(self, player: int, at_ns: int) -> None:
        with self._lock:
            if self.menu.is_open:
                for action in self.menu.player(player):
                    self._menu_action(action, at_ns)
                self._changed()
                return
            if not self._clock.started:
                # As on a chess clock: pressing your side starts the next player.
                self.emit(ClockEvent("start", at_ns, (player + 1) % self._clock.players))
                return
            self.emit(ClockEvent("press", at_ns, player))

    def _arbiter_down(self, at_ns: int) -> None:
        with self._lock:
            self._paused_by_press = False
            if not self.menu.is_open and self._clock.view(at_ns).running:
                # Stop the time the instant the arbiter intervenes.
                self._paused_by_press = True
                self.emit(ClockEvent("pause", at_ns))

    def _arbiter_short(self, at_ns: int) -> None:
        with self._lock:
            if self.menu.is_open:
                self.menu.short()
            elif not self._clock.started:
                self.emit(ClockEvent("start", at_ns, self.first_player))
            elif not self._paused_by_press and self._clock.view(at_ns).paused:
                self.emit(ClockEvent("resume", at_ns))
            self._paused_by_press = False
        self._changed()

    def _arbiter_held(self, at_ns: int) -> None:
        with self._lock:
            self._paused_by_press = False
            if not self.menu.is_open:
                self.emit(ControlEvent("menu-open", at_ns))
            else:
                for action in self.menu.long():
                    self._menu_action(action, at_ns)
        self._changed()

    def _menu_action(self, action: MenuAction, at_ns: int) -> None:
        if action.kind == "close":
            self.emit(ControlEvent("menu-close", at_ns))
        elif action.kind == "undo":
            self.emit(ClockEvent("undo", at_ns))
        elif action.kind == "mute":
            kind = "unmute" if self.hardware.sounder.is_muted else "mute"
            self.emit(ControlEvent(kind, at_ns))
        elif action.kind == "preset" and action.preset is not None:
            self.emit(ControlEvent("preset", at_ns, list(self.presets)[action.preset]))
        elif action.kind == "adjust" and action.player is not None:
            now = self._clock.view(at_ns).remaining_ns[action.player]
            # Journalled as the absolute time, so a replay needs no arithmetic.
            remaining = max(0, now + action.delta_ns)
            self.emit(ClockEvent("adjust", at_ns, action.player, remaining_ns=remaining))

    def _apply_control(self, event: ControlEvent) -> None:
        if event.kind == "mute":
            self.hardware.sounder.mute()
            self.menu.muted = True
        elif event.kind == "unmute":
            self.hardware.sounder.unmute()
            self.menu.muted = False
        elif event.kind == "menu-open":
            self.menu.open()
        elif event.kind == "menu-close":
            self.menu.close()
        elif event.kind == "preset":
            factory = self.presets.get(event.detail)
            if factory is None:
                raise BadInput(f"preset {event.detail!r} is not offered at this table")
            clock = factory()
            if clock.players != self.hardware.players:
                raise BadInput(
                    f"preset {event.detail!r} is for {clock.players} players, "
                    f"the table has {self.hardware.players}"
                )
            self._clock = clock
            self._low_time = LowTimeWarnings.start(self.low_time_warnings_ns, players=clock.players)
            self._remaining_seen = clock.view(event.at_ns).remaining_ns
            self._flags_seen = ()
            self.message = None
        else:
            raise BadInput(f"unknown table event {event.kind!r}")

    # -- outputs --------------------------------------------------------------

    def tick(self, now_ns: int | None = None) -> None:
        """Bring LEDs and buzzer up to *now_ns*: fallen flags, low-time warnings."""
        with self._lock:
            changed = self._refresh(self._at(now_ns))
        if changed:
            self._changed()

    def _refresh(self, at_ns: int) -> bool:
        """Follow the clock at *at_ns*; True if something visible changed."""
        view = self._clock.view(at_ns)
        changed = False
        self.hardware.show_turn(view.on_move, paused=view.paused)
        new_flags = [p for p in view.flags if p not in self._flags_seen]
        if new_flags:
            changed = True
            self._flags_seen = view.flags
            for player, flag_at in zip(view.flags, view.flag_times_ns, strict=False):
                if player in new_flags:
                    self.hardware.sound(Alert.FLAG)
                    self.message = Message(f"TIMEOUT {self.names[player]}", Severity.ALARM)
                    if self.when_flag is not None:
                        try:
                            self.when_flag(player, flag_at)
                        except Exception:
                            logger.exception("flag handler failed")
        elif not view.flags and self._flags_seen:
            self._flags_seen = ()  # an arbiter adjustment lifted the flag
        self._low_time, warn = self._low_time.advance(self._remaining_seen, view.remaining_ns)
        self._remaining_seen = view.remaining_ns
        if warn:
            # One beep however many thresholds were crossed at once.
            self.hardware.sound(Alert.LOW_TIME)
            changed = True
        return changed

    def _changed(self) -> None:
        for callback in list(self.when_changed):
            try:
                callback()
            except Exception:
                logger.exception("change handler failed")

    def _next_due_ns(self, now_ns: int) -> int | None:
        view = self._clock.view(now_ns)
        if not view.running or view.on_move is None:
            return None
        remaining = view.remaining_ns[view.on_move]
        warning = self._low_time.next_due_in_ns(view.on_move, remaining)
        return now_ns + (remaining if warning is None else min(remaining, warning))

    def _watch(self) -> None:
        while not self._closed:
            now = self._now_ns()
            due = self._next_due_ns(now)
            timeout = None if due is None else max(0.0, (due - now) / 1e9) + 0.0005
            self._wake.wait(timeout)
            self._wake.clear()
            if self._closed:
                return
            try:
                self.tick()
            except Exception:
                logger.exception("clock watcher failed")

    # -- lifetime -------------------------------------------------------------

    def close(self) -> None:
        """Stop the watcher and release the hardware."""
        if self._closed:
            return
        self._closed = True
        self._wake.set()
        if self._watcher is not None:
            self._watcher.join(timeout=2)
        self.hardware.close()

