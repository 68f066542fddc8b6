"""Re-running a journal: the flow rebuilt from its events, and its verdicts checked.

:func:`flow_from_journal` is how the table comes back after a restart;
:func:`replay_journal` is ``pegwatch replay``: it re-runs every event and
compares the verdicts it reaches with those journaled (a verdict agrees
when every key the journal has agrees, so journals of earlier versions
replay; see :func:`pegwatch.rules.flow.verdict_agrees`). Both go through
:class:`~pegwatch.device.table.rulings.FlowLog`, as the live table does, so
the arbiter's rulings (an undo, a time set in pause mode, a penalty) come
back as they were; :func:`log_from_journal` gives that log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pegwatch.device.table.journal import Journal, JournalEvent, Timeline, thaw
from pegwatch.device.table.rulings import FLOW_KINDS, RULING, FlowLog
from pegwatch.rules.errors import BadInput
from pegwatch.rules.flow import (
    FlowError,
    MatchFlow,
    Outcome,
    Verdict,
    preset_clock_factory,
    verdict_agrees,
)
from pegwatch.rules.flow.clock_wiring import ClockFactory
from pegwatch.rules.penalties import Penalty

__all__ = [
    "FLOW_KINDS",
    "ReplayResult",
    "flow_from_journal",
    "log_from_journal",
    "muted_in",
    "new_log",
    "replay_journal",
]


def _match_header(
    events: Sequence[JournalEvent],
    *,
    players: tuple[str, str] | None = None,
    rules: str = "mso",
    clock: str = "mso-mastermind",
) -> tuple[tuple[str, str] | None, str, str]:
    """Players and presets from the journal's first ``match`` event, else the defaults given."""
    for event in events:
        if event.kind == "match":
            raw = event.payload.get("players")
            if isinstance(raw, tuple | list) and len(raw) == 2:
                players = (str(raw[0]), str(raw[1]))
            return players, str(event.payload.get("rules", rules)), str(event.payload.get("clock", clock))
    return players, rules, clock


def new_log(players: tuple[str, str], rules: str, clock: str) -> FlowLog:
    """An empty :class:`FlowLog` for a match of *players* under these presets."""

    def make(factory: ClockFactory) -> MatchFlow:
        return MatchFlow(players, rules=rules, clock_factory=factory)

    return FlowLog(make(preset_clock_factory(clock)), make)


def _apply(log: FlowLog, kind: str, payload: dict[str, Any], cont: int) -> Outcome:
    """One journaled event again; a ruling the table refused is refused again and skipped."""
    if kind != RULING:
        return log.apply(kind, payload, cont)
    try:
        return log.apply(kind, payload, cont)
    except (FlowError, BadInput):
        return Outcome()


def log_from_journal(
    journal: Journal,
    *,
    players: tuple[str, str] | None = None,
    rules: str = "mso",
    clock: str = "mso-mastermind",
) -> tuple[FlowLog, Timeline, list[JournalEvent], list[Verdict]]:
    """Rebuild the flow, with its rulings, from a journal: its ``match`` event
    (if any) names the players and presets; every flow event and ruling is
    applied at its continuous time.

    Also returns the verdicts the flow reaches beyond those journaled (the
    tail a crash cut off)."""
    events = list(journal.events())
    players, rules, clock = _match_header(events, players=players, rules=rules, clock=clock)
    if players is None:
        raise FlowError(f"{journal.path}: no match event names the players")
    log = new_log(players, rules, clock)
    line = Timeline()
    produced: list[Verdict] = []
    recorded = 0
    for event in events:
        cont = line.add(event)
        if event.kind in (*FLOW_KINDS, RULING):
            produced.extend(_apply(log, event.kind, thaw(event.payload), cont).verdicts)
        elif event.kind == "verdict":
            recorded += 1
    return log, line, events, produced[recorded:]


def flow_from_journal(
    journal: Journal,
    *,
    players: tuple[str, str] | None = None,
    rules: str = "mso",
    clock: str = "mso-mastermind",
) -> tuple[MatchFlow, Timeline, list[JournalEvent], list[Verdict]]:
    """:func:`log_from_journal`'s flow (without the log)."""
    log, line, events, missing = log_from_journal(journal, players=players, rules=rules, clock=clock)
    return log.flow, line, events, missing


@dataclass(frozen=True)
class ReplayResult:
    """What re-running a journal gave: the flow, its verdicts, and mismatches."""

    flow: MatchFlow
    verdicts: tuple[Verdict, ...]
    mismatches: tuple[str, ...]
    events: int
    #: The buzzer's mute state at the end (None: never changed at the table).
    muted: bool | None = None
    #: The penalties the arbiter gave, in order (the undone ones left out).
    penalties: tuple[Penalty, ...] = ()


def replay_journal(path: str | Path) -> ReplayResult:
    """Re-run a journal and compare the verdicts it reaches with those journaled."""
    p = Path(path)
    if not p.is_file():
        raise FlowError(f"{p}: no such journal")
    with Journal(p, create=False) as journal:
        events = list(journal.events())
    players, rules, clock = _match_header(events)
    if players is None:
        raise FlowError(f"{p}: no match event names the players; not a table journal")
    log = new_log(players, rules, clock)
    line = Timeline()
    produced: list[Verdict] = []
    journaled: list[dict[str, Any]] = []
    for event in events:
        cont = line.add(event)
        if event.kind == "verdict":
            journaled.append(thaw(event.payload))
        elif event.kind in (*FLOW_KINDS, RULING):
            try:
                produced.extend(_apply(log, event.kind, thaw(event.payload), cont).verdicts)
            except FlowError as exc:
                # A damaged event: one line that names the journal, not only the field.
                raise FlowError(f"{p}: replaying its events: {exc}") from None
    flow = log.flow
    pairs: list[tuple[Verdict, Mapping[str, Any] | None]] = [
        (v, journaled[i] if i < len(journaled) else None) for i, v in enumerate(produced)
    ]
    mismatches: list[str] = []
    recorded = len(journaled)
    for i, (got, had) in enumerate(pairs, start=1):
        if had is None:
            mismatches.append(f"verdict {i}: replay gives {got.to_json()}, the journal has none")
        elif not verdict_agrees(got, had):
            mismatches.append(f"verdict {i}: replay gives {got.to_json()}, the journal has {had}")
    if recorded > len(pairs):
        mismatches.append(f"the journal has {recorded} verdicts, the replay reaches {len(pairs)}")
    return ReplayResult(
        flow, tuple(v for v, _ in pairs), tuple(mismatches), len(events), muted_in(events),
        tuple(log.penalties),
    )


def muted_in(events: Sequence[JournalEvent]) -> bool | None:
    """The mute state the journal's last ``menu`` mute/unmute left (None: none)."""
    muted: bool | None = None
    for event in events:
        if event.kind == "menu" and event.payload.get("action") in ("mute", "unmute"):
            muted = event.payload.get("action") == "mute"
    return muted
