"""The arbiter's rulings at the table: clock corrections and penalties, each
journaled with who gave it and why.

A ruling is a journal event of kind ``ruling`` (:data:`RULING`) whose
payload has ``action``, ``by`` (who: ``"arbiter"`` from the table's menu)
and ``why``:

``undo``
    The last press the flow took is undone (a mis-press), DGT style: the
    flow is rebuilt from its events without that press, so the player who
    pressed by mistake was on move all along and is charged the time since;
    the readings the press asked for no longer apply. Repeated undos go
    back press by press.
``set {player, time_ns?, moves?, period?}``
    The DGT 3000's pause mode: a seat's time and period (counted from 1, as
    the DGT shows it) are set while the clock is paused; the move counter
    is corrected at any time. Values are absolute, so replay needs nothing
    but the event.
``penalty {player, penalty, time_ns?, points?}``
    :class:`~pegwatch.rules.penalties.Penalty` against the seat ``player``:
    ``warning``; ``time`` (``time_ns`` added to the opponent's clock);
    ``points`` (``points`` VP docked, applied by ``pegwatch judge``);
    ``loss`` (the game is lost; a running clock is paused for the arbiter).
``preset {name}``
    Another clock preset, before the first game starts.

:class:`FlowLog` holds the flow and the events it took; the table program,
its restart (:func:`pegwatch.device.table.replay.log_from_journal`) and
``pegwatch replay`` all go through :meth:`FlowLog.apply`, so a ruling
replays to the same state after a crash.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from pegwatch.rules.clock import ClockError, ClockEvent
from pegwatch.rules.errors import BadInput
from pegwatch.rules.flow import FlowError, MatchFlow, Outcome, preset_clock_factory
from pegwatch.rules.flow.clock_wiring import ClockFactory
from pegwatch.rules.flow.state import int_of, seat_of
from pegwatch.rules.flow.verdicts import Flag
from pegwatch.rules.penalties import Penalty, PenaltyKind

__all__ = ["FLOW_KINDS", "RULING", "RULING_ACTIONS", "FlowLog"]

logger = logging.getLogger(__name__)

#: Kinds of events the table journals and the flow reads.
FLOW_KINDS = ("press", "flag", "reading", "arbiter", "boot")
#: The journal kind of an arbiter's ruling.
RULING = "ruling"
RULING_ACTIONS = ("undo", "set", "penalty", "preset")


class _Entry(NamedTuple):
    # A tuple, not a frozen dataclass: one is made for every event, on the press path.
    kind: str
    payload: Mapping[str, Any]
    at_ns: int
    #: A press the flow's clock took: what an undo takes back.
    press_taken: bool = False
    #: The flow ignored it (a press by the player not on move, ...): a rebuild
    #: leaves it out rather than judge it again (after an undo it could count).
    ignored: bool = False


class FlowLog:
    """A :class:`MatchFlow`, the events it took and the penalties given.

    ``make_flow(factory)`` builds an empty flow with a clock factory; an
    undo or a new preset rebuilds the flow with it from :attr:`entries`.
    ``complete`` is false for a log wrapped around a flow that had taken
    events before (an undo is then refused, never guessed).
    """

    def __init__(
        self,
        flow: MatchFlow,
        make_flow: Callable[[ClockFactory], MatchFlow],
        *,
        complete: bool = True,
    ) -> None:
        self.flow = flow
        self.make_flow = make_flow
        self.complete = complete
        self.entries: list[_Entry] = []
        self.penalties: list[Penalty] = []

    @classmethod
    def around(cls, flow: MatchFlow) -> FlowLog:
        """A log for *flow*: complete only if the flow has taken no event yet."""
        players, rules, variant = flow.players, flow.rules, flow.variant

        def make(factory: ClockFactory) -> MatchFlow:
            return MatchFlow(players, rules=rules, clock_factory=factory, variant=variant)

        fresh = flow.last_ns == 0 and flow.game.started_ns is None and not flow.paused
        return cls(flow, make, complete=fresh)

    # -- events --------------------------------------------------------------------

    def apply(self, kind: str, payload: Mapping[str, Any], at_ns: int) -> Outcome:
        """Apply one journaled event (a flow event or a ruling); FlowError if refused."""
        if kind == RULING:
            return self._ruling(payload, at_ns)
        clock = self.flow.game_clock
        mark = (id(clock.clock), len(clock.events))
        out = self.flow.apply(kind, payload, at_ns)
        if kind in FLOW_KINDS:
            taken = (
                kind == "press"
                and out.ignored is None
                and (id(clock.clock), len(clock.events)) != mark
                and not any(isinstance(v, Flag) for v in out.verdicts)
            )
            self.entries.append(_Entry(kind, payload, at_ns, taken, out.ignored is not None))
        return out

    def _ruling(self, payload: Mapping[str, Any], at_ns: int) -> Outcome:
        action = payload.get("action")
        by = str(payload.get("by", "arbiter"))
        why = str(payload.get("why", ""))
        reason = " ".join(why.split())  # one line, whatever was typed
        said = f"by the {by}" + (f" ({reason})" if reason else "")
        if action == "undo":
            return self._undo(said)
        at_ns = max(at_ns, self.flow.last_ns)
        if action == "set":
            out = self._set(payload, at_ns, said)
        elif action == "penalty":
            out = self._penalty(payload, at_ns, by, why, said)
        elif action == "preset":
            out = self._preset(payload, said)
        else:
            raise FlowError(f"ruling.action: {action!r} is not one of {', '.join(RULING_ACTIONS)}")
        self.entries.append(_Entry(RULING, dict(payload), at_ns))
        self.flow.last_ns = max(self.flow.last_ns, at_ns)
        return out

    def _undo(self, said: str) -> Outcome:
        if not self.complete:
            raise FlowError("undo: this table's flow came without its history; nothing is undone")
        index = next((i for i in range(len(self.entries) - 1, -1, -1) if self.entries[i].press_taken), None)
        if index is None:
            raise FlowError("undo: no press to undo")
        undone = self.entries[index]
        self._rebuild(self.flow.game_clock.factory, [*self.entries[:index], *self.entries[index + 1 :]])
        seat = undone.payload.get("player")
        name = self.flow.players[seat] if isinstance(seat, int) and 0 <= seat < 2 else "?"
        return Outcome(lines=(f"arbiter: {name}'s press undone {said}",))

    def _rebuild(self, factory: ClockFactory, entries: list[_Entry]) -> None:
        """The flow again from *entries*: those the flow took, each applied as it was
        (one refused now is dropped); those it ignored are not judged again."""
        log = FlowLog(self.make_flow(factory), self.make_flow)
        for entry in entries:
            if entry.ignored:
                continue
            try:
                log.apply(entry.kind, entry.payload, entry.at_ns)
            except (FlowError, BadInput) as exc:
                logger.info("rebuilding the flow: %s at %d no longer applies: %s", entry.kind, entry.at_ns, exc)
        self.flow, self.entries, self.penalties = log.flow, log.entries, log.penalties

    def _running_game(self, what: str) -> int:
        g = self.flow.game
        if g.started_ns is None or g.ended_ns is not None:
            raise FlowError(f"{what}: no game clock running")
        return g.codemaker

    def _set(self, payload: Mapping[str, Any], at_ns: int, said: str) -> Outcome:
        flow = self.flow
        seat = seat_of(payload)
        codemaker = self._running_game("set")
        keys = [k for k in ("time_ns", "moves", "period") if k in payload]
        if not keys:
            raise FlowError("set: give time_ns, moves or period")
        if ("time_ns" in payload or "period" in payload) and not flow.paused:
            raise FlowError("set: times and the period are set in pause mode; pause the clock first")
        time_ns = int_of(payload, "time_ns") if "time_ns" in payload else None
        moves = int_of(payload, "moves") if "moves" in payload else None
        period = int_of(payload, "period") if "period" in payload else None
        role = 0 if seat == codemaker else 1
        try:
            flow.game_clock.apply(ClockEvent(
                "adjust", at_ns, player=role, remaining_ns=time_ns, moves=moves,
                stage=None if period is None else period - 1,
            ))
        except ClockError as exc:
            raise FlowError(f"set: {exc}") from None
        parts = []
        if time_ns is not None:
            parts.append(f"time {time_ns / 1e9:.1f} s")
        if moves is not None:
            parts.append(f"moves {moves}")
        if period is not None:
            parts.append(f"period {period}")
        return Outcome(lines=(f"arbiter: {flow.players[seat]}'s {', '.join(parts)} set {said}",))

    def _penalty(self, payload: Mapping[str, Any], at_ns: int, by: str, why: str, said: str) -> Outcome:
        flow = self.flow
        seat = seat_of(payload)
        raw = payload.get("penalty")
        try:
            penalty = Penalty(
                raw,  # type: ignore[arg-type]  # checked by Penalty
                flow.players[seat], game=flow.game.number, by=by, why=why,
                time_ns=payload.get("time_ns"), points=payload.get("points"), at_ns=at_ns,
            )
        except BadInput as exc:
            raise FlowError(f"penalty: {exc}") from None
        lines = [f"PENALTY {penalty.text}"]
        if penalty.kind is PenaltyKind.TIME:
            codemaker = self._running_game("penalty time")
            opponent = 1 - seat
            role = 0 if opponent == codemaker else 1
            left = flow.clock.view(at_ns).remaining_ns[role]
            assert penalty.time_ns is not None
            flow.game_clock.apply(ClockEvent("adjust", at_ns, player=role, remaining_ns=left + penalty.time_ns))
            lines.append(f"arbiter: {flow.players[opponent]}'s time +{penalty.time_ns / 1e9:g} s")
        elif penalty.kind is PenaltyKind.LOSS and flow.on_move(at_ns) is not None:
            # The game is decided by the ruling: the clock waits for the arbiter.
            lines.extend(flow.apply("arbiter", {"action": "pause"}, at_ns).lines)
        self.penalties.append(penalty)
        return Outcome(lines=tuple(lines))

    def _preset(self, payload: Mapping[str, Any], said: str) -> Outcome:
        flow = self.flow
        if len(flow.games) > 1 or flow.game.started_ns is not None:
            raise FlowError("preset: the clock preset is chosen before the first game starts")
        name = str(payload.get("name", ""))
        try:
            factory = preset_clock_factory(name)
        except BadInput as exc:
            raise FlowError(f"preset: {exc}") from None
        self._rebuild(factory, list(self.entries))
        return Outcome(lines=(f"arbiter: clock preset {name} {said}",))
