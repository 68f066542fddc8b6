"""The table's buzzer: low-time warnings, the flag and alerts, with mute.

Patterns play on a worker thread of their own (:class:`Sounder`), so that
sounding the flag never delays the clock: :meth:`Sounder.sound` only
queues. :class:`BuzzerSettings` is the parsed ``[buzzer]`` section of the
table configuration.

The patterns (beep lengths from ``short_beep_ms`` and ``long_beep_ms``):

* **low time** -- one short beep when a player's time drops to a
  ``low_time_warnings_s`` threshold;
* **alert** -- two short beeps when something needs a person: a mis-mark
  verdict, marks no code fits, a row or the secret to check (CHECK ROW), an
  illegal guess, the camera gone, the journal's alarm (disk full);
* **flag** -- three long beeps when a player's time runs out.

Which low-time warnings are due is decided by :class:`LowTimeWarnings`,
used by the match table (:class:`pegwatch.device.table.program.TableProgram`):
a pure function of two readings of the clock, so it does not matter how
often they are taken.
"""

from __future__ import annotations

import enum
import logging
import queue
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pegwatch.device.errors import ConfigError

logger = logging.getLogger(__name__)


class Alert(enum.Enum):
    """What the buzzer can announce; each has its own pattern."""

    LOW_TIME = "low-time"
    """A player's time fell below a warning threshold: one short beep."""
    FLAG = "flag"
    """A player's time ran out: three long beeps."""
    ALERT = "alert"
    """Something needs the arbiter (mis-mark, row to check, camera, disk): two short beeps."""


@dataclass(frozen=True)
class LowTimeWarnings:
    """Which low-time warnings each player has had: pure and immutable.

    A threshold is *crossed* when a player's remaining time goes from above
    it to at or below it between two readings of the clock (by running, or
    by an arbiter taking time away). Each threshold sounds once per player
    per game: a crossed threshold is remembered, and time coming back above
    it (a Fischer increment) does not re-arm it; only an arbiter
    adjustment does (:meth:`rearm`). A crossing that ends at zero is the
    flag's business, not a warning. Start afresh (:meth:`start`) for each
    game.

    >>> w = LowTimeWarnings.start([30 * 10**9, 10 * 10**9], players=2)
    >>> w, due = w.advance((240 * 10**9, 31 * 10**9), (240 * 10**9, 29 * 10**9))
    >>> due
    (1,)
    >>> w.advance((240 * 10**9, 29 * 10**9), (240 * 10**9, 28 * 10**9))[1]
    ()
    """

    #: The thresholds in nanoseconds, largest first.
    thresholds_ns: tuple[int, ...]
    #: Per player, the thresholds already crossed in this game.
    warned: tuple[frozenset[int], ...]

    @classmethod
    def start(cls, thresholds_ns: Sequence[int], *, players: int) -> LowTimeWarnings:
        """No warning given yet to any of *players*."""
        thresholds = tuple(sorted({int(t) for t in thresholds_ns if t > 0}, reverse=True))
        return cls(thresholds, (frozenset(),) * players)

    def advance(
        self, before_ns: Sequence[int], after_ns: Sequence[int]
    ) -> tuple[LowTimeWarnings, tuple[int, ...]]:
        """From the remaining times at one reading to those at the next.

        Returns the new state and the players who get a warning now, in
        order: one beep each however many thresholds they crossed at once.
        """
        warned = list(self.warned)
        due: list[int] = []
        for player, (before, after) in enumerate(zip(before_ns, after_ns, strict=True)):
            crossed = {
                t for t in self.thresholds_ns
                if after <= t < before and t not in warned[player]
            }
            if not crossed:
                continue
            warned[player] = warned[player] | crossed
            if after > 0:
                due.append(player)
        if not due and warned == list(self.warned):
            return self, ()
        return replace(self, warned=tuple(warned)), tuple(due)

    def rearm(self, player: int, remaining_ns: int) -> LowTimeWarnings:
        """The arbiter gave *player* time back: thresholds now below their
        *remaining_ns* may sound again."""
        kept = frozenset(t for t in self.warned[player] if t >= remaining_ns)
        if kept == self.warned[player]:
            return self
        warned = list(self.warned)
        warned[player] = kept
        return replace(self, warned=tuple(warned))

    def next_due_in_ns(self, player: int, remaining_ns: int) -> int | None:
        """How much longer *player*'s time runs until their next warning
        (``None``: no threshold left below *remaining_ns*)."""
        below = [t for t in self.thresholds_ns if 0 < t < remaining_ns and t not in self.warned[player]]
        return remaining_ns - max(below) if below else None


_KINDS = ("active", "tonal")
_KEYS = ("kind", "muted", "low_time_warnings_s", "short_beep_ms", "long_beep_ms", "tone_hz")


@dataclass(frozen=True)
class BuzzerSettings:
    """The ``[buzzer]`` section: what kind of buzzer, when and how it sounds."""

    #: "active" (has its own oscillator, driven on/off) or "tonal" (a
    #: passive piezo driven by PWM at *tone_hz*).
    kind: str = "active"
    #: Start muted; the arbiter menu toggles it at the table.
    muted: bool = False
    #: Remaining times (seconds) at which the player on move hears one
    #: warning beep, once per threshold per game. Empty: no warnings.
    low_time_warnings_s: tuple[float, ...] = (30.0, 10.0)
    short_beep_ms: int = 100
    long_beep_ms: int = 400
    tone_hz: float = 2000.0

    @property
    def low_time_warnings_ns(self) -> tuple[int, ...]:
        """The warning thresholds in nanoseconds, largest first."""
        return tuple(sorted((round(s * 1e9) for s in self.low_time_warnings_s), reverse=True))

    def pattern(self, alert: Alert) -> tuple[tuple[float, float], ...]:
        """The (on, off) durations in seconds that announce *alert*."""
        short = self.short_beep_ms / 1000
        long_ = self.long_beep_ms / 1000
        if alert is Alert.LOW_TIME:
            return ((short, 0.0),)
        if alert is Alert.FLAG:
            return ((long_, short),) * 3
        return ((short, short),) * 2

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], *, source: str) -> BuzzerSettings:
        """Parse the ``[buzzer]`` table; raise :class:`ConfigError` naming the key."""
        unknown = sorted(set(data) - set(_KEYS))
        if unknown:
            raise ConfigError(
                f"{source}: buzzer.{unknown[0]}: unknown key; allowed keys are {', '.join(_KEYS)}"
            )
        values: dict[str, Any] = {}
        if "kind" in data:
            if data["kind"] not in _KINDS:
                raise ConfigError(
                    f"{source}: buzzer.kind: {data['kind']!r} is not allowed; "
                    f"use one of {', '.join(_KINDS)}"
                )
            values["kind"] = data["kind"]
        if "muted" in data:
            if not isinstance(data["muted"], bool):
                raise ConfigError(f"{source}: buzzer.muted: {data['muted']!r} is not true or false")
            values["muted"] = data["muted"]
        if "low_time_warnings_s" in data:
            raw = data["low_time_warnings_s"]
            if not isinstance(raw, list | tuple):
                raise ConfigError(
                    f"{source}: buzzer.low_time_warnings_s: {raw!r} is not a list; "
                    "give seconds, e.g. [30, 10], or [] for none"
                )
            values["low_time_warnings_s"] = tuple(
                _number(item, source, f"low_time_warnings_s[{i}]", low=0.1, high=3600)
                for i, item in enumerate(raw)
            )
        for key, low, high in (("short_beep_ms", 1, 2000), ("long_beep_ms", 1, 5000)):
            if key in data:
                value = _number(data[key], source, key, low=low, high=high)
                if value != int(value):
                    raise ConfigError(f"{source}: buzzer.{key}: {value!r} is not a whole number")
                values[key] = int(value)
        if "tone_hz" in data:
            values["tone_hz"] = _number(data["tone_hz"], source, "tone_hz", low=100, high=8000)
        return cls(**values)


def _number(value: object, source: str, key: str, *, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{source}: buzzer.{key}: {value!r} is not a number")
    if not low <= value <= high:
        raise ConfigError(f"{source}: buzzer.{key}: {value} is out of range; allowed {low}..{high}")
    return float(value)


class Sounder:
    """Plays alert patterns on a gpiozero buzzer from a worker thread.

    *device* is a ``gpiozero.Buzzer`` (``on``/``off``) or a
    ``gpiozero.TonalBuzzer`` (``play``/``stop``), or ``None`` when no buzzer
    is fitted (alerts are then only recorded in :attr:`played`).
    :meth:`sound` returns at once, whatever thread calls it: patterns queue
    up and play one after another on the worker, which alone waits between
    beeps. An alert already waiting to play is not queued twice (a camera
    that comes and goes must not leave a minute of beeps behind). Muting
    silences a pattern that is playing at once, not at its next beep.
    """

    def __init__(self, device: Any, settings: BuzzerSettings) -> None:
        self._device = device
        self._settings = settings
        self._muted = settings.muted
        self._queue: queue.Queue[Alert | None] = queue.Queue()
        self._stop = threading.Event()
        # Set by mute() and close(): cuts short the wait inside a beep.
        self._interrupt = threading.Event()
        self._idle = threading.Event()
        self._idle.set()
        self._beeping = threading.Event()
        self._lock = threading.Lock()
        self._pending = 0
        self._waiting: set[Alert] = set()
        self.played: list[Alert] = []
        """Every alert actually sounded (not muted), in order."""
        self._thread = threading.Thread(target=self._run, name="pegwatch-buzzer", daemon=True)
        self._thread.start()

    @property
    def settings(self) -> BuzzerSettings:
        """The ``[buzzer]`` settings: patterns and low-time thresholds."""
        return self._settings

    @property
    def is_muted(self) -> bool:
        return self._muted

    @property
    def is_sounding(self) -> bool:
        """True while a pattern is playing or waiting to play."""
        return not self._idle.is_set()

    def mute(self) -> None:
        """Silence the buzzer, including a pattern that is playing."""
        self._muted = True
        self._interrupt.set()

    def unmute(self) -> None:
        self._muted = False

    def toggle_mute(self) -> bool:
        """Flip mute; return the new :attr:`is_muted`."""
        if self._muted:
            self.unmute()
        else:
            self.mute()
        return self._muted

    def sound(self, alert: Alert) -> None:
        """Queue *alert*; ignored while muted. Never blocks."""
        if self._muted or self._stop.is_set():
            return
        with self._lock:
            if alert in self._waiting:
                return
            self._waiting.add(alert)
            self._pending += 1
            self._idle.clear()
        self._queue.put(alert)

    def wait_until_quiet(self, timeout: float | None = None) -> bool:
        """Wait until every queued pattern has played; False on timeout."""
        return self._idle.wait(timeout)

    def wait_for_beep(self, timeout: float | None = None) -> bool:
        """Wait until the buzzer is on (a beep sounds); False on timeout."""
        return self._beeping.wait(timeout)

    def close(self) -> None:
        """Stop the worker and silence the buzzer."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._interrupt.set()
        self._queue.put(None)
        self._thread.join(timeout=2)
        self._off()

    def _run(self) -> None:
        while True:
            alert = self._queue.get()
            if alert is None:
                return
            with self._lock:
                self._waiting.discard(alert)
            self._interrupt.clear()
            try:
                if not self._muted and not self._stop.is_set():
                    self.played.append(alert)
                    self._play(self._settings.pattern(alert))
            except Exception:
                # A buzzer fault must not take the table down; say it once.
                logger.exception("buzzer failed while sounding %s", alert.value)
            finally:
                with self._lock:
                    self._pending -= 1
                    if self._pending == 0:
                        self._idle.set()

    def _play(self, pattern: tuple[tuple[float, float], ...]) -> None:
        for on_s, off_s in pattern:
            if self._muted or self._stop.is_set():
                break
            self._on()
            self._interrupt.wait(on_s)
            self._off()
            if off_s and not (self._muted or self._stop.is_set()):
                self._interrupt.wait(off_s)

    def _on(self) -> None:
        if self._device is not None:
            if hasattr(self._device, "play"):
                from gpiozero.tones import Tone

                self._device.play(Tone.from_frequency(self._settings.tone_hz))
            else:
                self._device.on()
        # After the pin is on, so that a waiter sees the beep it waited for.
        self._beeping.set()

    def _off(self) -> None:
        self._beeping.clear()
        if self._device is None:
            return
        if hasattr(self._device, "stop"):
            self._device.stop()
        else:
            self._device.off()
