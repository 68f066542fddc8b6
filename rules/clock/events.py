"""The clock's events: what is journalled and replayed."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ClockEvent:
    """One call made on a :class:`~pegwatch.rules.clock.engine.Clock`, as journalled and replayed.

    ``kind`` is one of ``start``, ``press``, ``pause``, ``resume``,
    ``adjust``, ``undo``, ``stop``.
    """

    kind: str
    at_ns: int
    player: int | None = None
    remaining_ns: int | None = None
    moves: int | None = None


__all__ = ["ClockEvent"]
