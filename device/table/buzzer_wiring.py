"""The buzzer at the table: low-time warnings, the flag, alerts, and MUTE.

The buzzer (a :class:`~pegwatch.device.hardware.buzzer.Sounder`) is an
output, never an event: the low-time warnings
(:class:`~pegwatch.device.hardware.buzzer.LowTimeWarnings`, each threshold
once per player per game, crossed between two instants of the flow's
clock: before every event at its stamp and at every step), the flag, and
an alert for whatever needs a person (a mis-mark, marks no code fits, a
row or the secret to check, an illegal guess, the camera gone, the
journal's alarm). Sounding only queues the pattern for the buzzer's own
thread. MUTE (:meth:`BuzzerWiring.set_muted`) is journaled as ``menu
{action: "mute"|"unmute"}`` before it takes effect, so a restart comes
back as muted as it was.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pegwatch.device.hardware.buzzer import Alert, LowTimeWarnings, Sounder
from pegwatch.device.table.arbiter_menu import ArbiterMenu
from pegwatch.rules.flow import MatchFlow

__all__ = ["BuzzerWiring"]


class BuzzerWiring:
    """The buzzer's part of :class:`~pegwatch.device.table.program.TableProgram`."""

    if TYPE_CHECKING:
        flow: MatchFlow
        menu: ArbiterMenu
        sounder: Sounder | None
        offset_ns: int
        _lock: threading.RLock
        _last_raw: int
        _muted: bool
        _mute_asked: bool
        _muted_by_journal: bool
        _low_time: LowTimeWarnings
        _low_time_game: int
        _remaining_seen: tuple[int, int]

        def submit(self, kind: str, payload: Mapping[str, Any], at_ns: int | None = None,
                   jpeg: bytes | None = None) -> None: ...

    def attach_sounder(self, sounder: Sounder) -> None:
        """Sound this table's warnings, flags and alerts on *sounder*.

        Its settings give the low-time thresholds. Its mute state (``[buzzer]
        muted``) holds unless the journal says otherwise: a match restarted
        after the arbiter muted or unmuted it comes back as it was.
        """
        with self._lock:
            self.sounder = sounder
            self._low_time = LowTimeWarnings.start(
                sounder.settings.low_time_warnings_ns, players=2
            )
            self._remaining_seen = self._remaining(self._last_raw + self.offset_ns)
            self._set_muted(self._muted if self._muted_by_journal else sounder.is_muted)
            self._mute_asked = self._muted

    @property
    def is_muted(self) -> bool:
        """Whether the buzzer is muted now."""
        return self._muted

    def set_muted(self, muted: bool, at_ns: int | None = None) -> None:
        """Mute or unmute the buzzer (any thread): queued as a ``menu`` event,
        in force once it is journaled."""
        with self._lock:
            self._mute_asked = muted
            self.submit("menu", {"action": "mute" if muted else "unmute"}, at_ns)

    def _set_muted(self, muted: bool) -> None:
        self._muted = muted
        self.menu.muted = muted
        if self.sounder is not None:
            if muted:
                self.sounder.mute()
            else:
                self.sounder.unmute()

    def _sound(self, alert: Alert) -> None:
        # Queues the pattern for the buzzer's thread: never waits here.
        if self.sounder is not None and not self._muted:
            self.sounder.sound(alert)

    def _remaining(self, cont: int) -> tuple[int, int]:
        left = self.flow.remaining_ns(cont)
        return left[0], left[1]

    def _follow_low_time(self, cont: int) -> None:
        """Sound the low-time warnings crossed since the last look, at ``cont``."""
        remaining = self._remaining(cont)
        if self.flow.game.number != self._low_time_game:
            # A new game, a new clock: every threshold may sound once again.
            self._low_time_game = self.flow.game.number
            self._low_time = LowTimeWarnings.start(self._low_time.thresholds_ns, players=2)
        else:
            self._low_time, due = self._low_time.advance(self._remaining_seen, remaining)
            if due:
                self._sound(Alert.LOW_TIME)
        self._remaining_seen = remaining

    def running_seat(self, raw_ns: int) -> int | None:
        """The seat whose clock runs at ``raw_ns`` (any thread)."""
        with self._lock:
            return self.flow.on_move(raw_ns + self.offset_ns)
