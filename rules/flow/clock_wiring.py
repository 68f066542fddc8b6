"""The current game's clock, wired to the flow through the clock's own events.

The flow never calls the clock's methods one by one: it hands it
:class:`~pegwatch.rules.clock.ClockEvent` values through
:meth:`Clock.apply <pegwatch.rules.clock.Clock.apply>`, and keeps the ones
that took effect. When a game's end is taken back, or a press raced the
reading that ended the game, the clock is rebuilt by applying those events
again to a fresh clock: the same path as the clock's own replay.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from pegwatch.rules.clock import Clock, ClockEvent, PressOutcome, get_preset
from pegwatch.rules.flow.state import ROLES

__all__ = ["ClockFactory", "GameClock", "preset_clock_factory"]

ClockFactory = Callable[[], Clock]
"""Makes a fresh clock for one game: player 0 codemaker, 1 codebreaker."""


def preset_clock_factory(preset: str = "mso-mastermind") -> ClockFactory:
    """A factory of clocks from the named preset, with the MSO roles (a preset
    with one role, such as ``blitz-3+2`` or ``count-up``, gives it to both)."""
    roles = None if len(get_preset(preset).roles) == 1 else ROLES
    # Fail now, on a bad name, rather than at the first game.
    Clock.from_preset(preset, roles=roles)
    return functools.partial(Clock.from_preset, preset, roles=roles)


class GameClock:
    """One game's clock and the events that made it what it is."""

    def __init__(self, factory: ClockFactory) -> None:
        self._factory = factory
        self.clock = factory()
        self.events: list[ClockEvent] = []

    @property
    def factory(self) -> ClockFactory:
        """What makes each game's clock (a table rebuilding its flow uses it again)."""
        return self._factory

    def new_game(self) -> None:
        """A fresh clock for the next game."""
        self.clock = self._factory()
        self.events = []

    def apply(self, event: ClockEvent) -> PressOutcome | None:
        """Apply ``event`` and keep it; an event the clock refuses (a
        :class:`~pegwatch.rules.clock.ClockError`) is not kept."""
        outcome = self.clock.apply(event)
        self.events.append(event)
        return outcome

    def press(self, player: int, at_ns: int) -> PressOutcome | None:
        """A press; kept only when the clock took it (a refused press changes nothing)."""
        event = ClockEvent("press", at_ns, player=player)
        outcome = self.clock.apply(event)
        if outcome is PressOutcome.ACCEPTED:
            self.events.append(event)
        return outcome

    def stop(self, at_ns: int) -> None:
        """Stop at ``at_ns``, forgetting events after it (a press that raced
        the reading which ended the game)."""
        if any(e.at_ns > at_ns for e in self.events):
            self._rebuild([e for e in self.events if e.at_ns <= at_ns])
        if self.clock.started:
            self.apply(ClockEvent("stop", at_ns))

    def take_back_stop(self) -> None:
        """Undo :meth:`stop`: the game goes on from where its clock stood."""
        events = list(self.events)
        if events and events[-1].kind == "stop":
            events.pop()
        self._rebuild(events)

    def _rebuild(self, events: list[ClockEvent]) -> None:
        self.clock = self._factory()
        self.events = []
        for event in events:
            self.apply(event)
