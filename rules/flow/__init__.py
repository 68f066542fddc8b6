"""The match at the table as a pure state machine fed with journaled events.

* :mod:`~pegwatch.rules.flow.machine`: :class:`MatchFlow`, the events it
  takes (press, flag, reading, arbiter, boot) and :func:`replay_events`;
* :mod:`~pegwatch.rules.flow.core`: the flow's state and its views;
* :mod:`~pegwatch.rules.flow.settlement`: legality, judgement, the end of a game;
* :mod:`~pegwatch.rules.flow.arbitration`: the arbiter's actions;
* :mod:`~pegwatch.rules.flow.clock_wiring`: the game's clock, driven by clock events;
* :mod:`~pegwatch.rules.flow.state`: the data (phases, rows, games, outcomes).
"""

from pegwatch.rules.flow.clock_wiring import ClockFactory, GameClock, preset_clock_factory
from pegwatch.rules.flow.machine import (
    BOTH_PLAYERS_WINDOW_NS,
    MatchFlow,
    replay_events,
    verdict_agrees,
)
from pegwatch.rules.flow.state import (
    OK,
    ROLES,
    EndReason,
    FlowError,
    FlowRow,
    GameState,
    IllegalMove,
    Phase,
    ReadPhase,
    ReadRequest,
    ReplayMismatch,
    RowState,
    Settled,
)
from pegwatch.rules.flow.verdicts import Outcome, Verdict, verdict_from_json

__all__ = [
    "BOTH_PLAYERS_WINDOW_NS",
    "OK",
    "ROLES",
    "ClockFactory",
    "EndReason",
    "FlowError",
    "FlowRow",
    "GameClock",
    "GameState",
    "IllegalMove",
    "MatchFlow",
    "Outcome",
    "Phase",
    "ReadPhase",
    "ReadRequest",
    "ReplayMismatch",
    "RowState",
    "Settled",
    "Verdict",
    "preset_clock_factory",
    "replay_events",
    "verdict_agrees",
    "verdict_from_json",
]
