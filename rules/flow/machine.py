"""The MSO match at the table, as a pure state machine fed with journaled events.

A match is two games with the roles reversed (seed 000): ``players[0]`` is
the codemaker of game 1. :class:`MatchFlow` takes the table's events in
journal order (:meth:`MatchFlow.apply`) and keeps everything the table needs:
the phase, whose clock runs, the confirmed rows with the readings attached,
the rows waiting for the arbiter, and the verdicts of :mod:`pegwatch.rules.judge`.
It never reads a clock, a camera or a disk: every instant comes in the
events, so replaying the same events gives the same state and the same
verdicts (:func:`replay_events`).

Events (``kind`` and payload keys; every event also has its ``at_ns``):

``press {player}``
    A clock button, ``player`` the seat (0 = first-named player). In
    ``setup`` the codemaker's press starts the codebreaker's clock; the
    codebreaker's press confirms a guess; the codemaker's press confirms
    the marks (seed 000, seed 004 §3.5). Presses that mean nothing now
    (the player not on move, a paused clock) are ignored.
``flag {player}``
    The player's time ran out at ``at_ns``. The flow also finds a flag
    itself when a press comes after the flag instant.
``reading {game, row, phase, guess, black, white, status, confidence, frame_ns}``
    The accepted reading the camera had for the row after the press
    (``phase`` ``guess`` or ``marks``), or the secret row (``phase``
    ``secret``, with ``code`` and ``shield``: ``"closed"`` at the start,
    ``"open"`` at the end). A ``status`` other than ``"ok"`` (``unknown``,
    ``occluded``, or ``hidden`` for a code the camera could not see under a
    closed shield) is never judged as read: the row waits for the arbiter,
    unless the reading says what it knows: ``candidates`` (per hole the
    colours it may hold, null for anything) and, for marks, the counts
    (``keys_status`` ok) or ``black_bounds``/``white_bounds``. Then the row
    is *bounded* and judged over every completion
    (:mod:`pegwatch.rules.bounded`): a proved mis-mark is flagged, a row
    every completion agrees with is cleared, an unsure one that can change
    the result goes to the arbiter naming its deciding holes. A guess read
    ``ok`` may name ``candidates`` too, where a peg was read confidently but
    not surely: it is bounded the same way. ``trust``
    ``"low"`` (a board read without what a verdict needs) is shown, never
    accused from. A closed-shield code is accepted once (``trust`` full);
    one that later reads differently raises ``secret_changed`` and is not
    used; so does an open-shield code that differs from it.
``arbiter {action, ...}``
    ``pause``, ``resume``, ``adjust {player, delta_ns}``, ``confirm_row
    {game, row, guess, black, white, by}`` (the arbiter, or both players
    pressing together, confirm an uncertain row), ``confirm_secret {game,
    code}``. ``confirm_row`` with ``hand: true`` is a row the arbiter
    entered by hand: it also fills halves the camera never answered and
    corrects halves it read (a dispute), in any row of a game not yet
    judged; it is judged like any confirmed row.
``boot {after_seq}``
    The table program started again on this journal (after event
    ``after_seq``, the last one of the previous run): the clock comes back
    paused at that instant and waits for the arbiter's ``resume``.
``verdict``
    Derived: the table journals what :meth:`MatchFlow.apply` returns, for
    the record; the flow ignores it, and replay compares it.

Illegal guesses (seed 004 §3.4: an incomplete row, a repeated colour where
none is allowed, more colours than the variant has) are reported as an
``illegal`` verdict with the codebreaker's count in the game
(:class:`IllegalMove`); the row's illegal state stands until the arbiter
enters the row again, legal, or the codemaker presses for marks (the
opponent's move accepts it). :meth:`MatchFlow.illegal_counts` counts them
per player over the match. An incomplete row's marks are never judged
(:func:`pegwatch.rules.judge.is_incomplete`).

Mis-marks are flagged only when proved: exactly when the secret was seen
under the shield at the start (for a bounded row, when every completion
disagrees), and otherwise only as "no code fits the marks" (never naming a
guilty row) until the secret is read at the end, when every row is judged
again. A mis-mark that rests on the camera's secret says so
(``secret_source``, and the frame's stamp, whose JPEG the journal keeps).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from pegwatch.rules.bounded import BoundedRow
from pegwatch.rules.clock import ClockEvent, PressOutcome
from pegwatch.rules.codes import Code, Feedback
from pegwatch.rules.flow.arbitration import Arbitration
from pegwatch.rules.flow.state import (
    OK,
    TRUST_FULL,
    EndReason,
    FlowError,
    FlowRow,
    GameState,
    Phase,
    RowState,
    Settled,
    code_of,
    count_ranges,
    holes_of,
    int_of,
    seat_of,
    show_holes,
)
from pegwatch.rules.flow.verdicts import (
    VERDICT_TYPES,
    Check,
    Flag,
    JointConfirm,
    Outcome,
    SecretChanged,
    SecretSeen,
    Start,
    Verdict,
)

__all__ = ["BOTH_PLAYERS_WINDOW_NS", "MatchFlow", "replay_events", "verdict_agrees"]

logger = logging.getLogger(__name__)

#: How close together both player buttons count as pressed "together" (ns).
BOTH_PLAYERS_WINDOW_NS = 500_000_000


class MatchFlow(Arbitration):
    """The MSO match state machine (see the module docstring for the events).

    ``clock_factory`` makes one clock per game (player 0 codemaker, 1
    codebreaker). The flow is deterministic: the same events in the same
    order give the same state and verdicts. The state and its views are in
    :class:`~pegwatch.rules.flow.core.FlowCore`, judging in
    :class:`~pegwatch.rules.flow.settlement.Settlement`, the arbiter's
    actions in :class:`~pegwatch.rules.flow.arbitration.Arbitration`.
    """

    def apply(self, kind: str, payload: Mapping[str, Any], at_ns: int) -> Outcome:
        """Take one journaled event; return the verdicts and lines it produced."""
        if kind == "verdict":
            return Outcome()
        handler = _HANDLERS.get(kind)
        if handler is None:
            # Informational events (camera lost, alarms) do not change the match.
            return Outcome()
        at_ns = max(at_ns, self.last_ns)
        out = handler(self, payload, at_ns)
        self.last_ns = max(self.last_ns, at_ns)
        return out

    def _on_press(self, payload: Mapping[str, Any], at_ns: int) -> Outcome:
        seat = seat_of(payload)
        name = self.players[seat]
        if self.paused:
            return Outcome(ignored=f"{name} pressed while the clock is paused")
        if self.phase is Phase.MATCH_OVER:
            return Outcome(ignored=f"{name} pressed after the match ended")
        if self.phase is Phase.GAME_OVER and self.game.final:
            if seat != 1 - self.game.codemaker:
                return Outcome(ignored=f"{name} pressed; the next codemaker starts game {self.game.number + 1}")
            self.games.append(GameState(number=self.game.number + 1, codemaker=seat))
            self.game_clock.new_game()
            self.phase = Phase.SETUP
        g = self.game
        if self.phase is Phase.SETUP:
            if seat != g.codemaker:
                return Outcome(ignored=f"{name} pressed; the codemaker starts the codebreaker's clock")
            g.started_ns = at_ns
            self.game_clock.apply(ClockEvent("start", at_ns, player=1))
            self.phase = Phase.GUESS
            return Outcome(
                verdicts=(Start(g.number, self.players[g.codemaker], self.players[g.codebreaker]),),
                lines=(f"game {g.number}: {self.players[g.codemaker]} set the code and started "
                       f"{self.players[g.codebreaker]}'s clock",),
            )
        if self.phase in (Phase.REVEAL, Phase.GAME_OVER):
            return Outcome(ignored=f"{name} pressed after game {g.number} ended")
        flagged = self.flag_due(at_ns)
        if flagged is not None:
            # The press came after the flag fell: the flag is what happened.
            return self._on_flag({"player": flagged[0]}, flagged[1])
        joint = self._joint_confirm(seat, at_ns)
        if joint is not None:
            return joint
        if self.phase is Phase.GUESS:
            if seat != g.codebreaker:
                return Outcome(ignored=f"{name} pressed while {self.players[g.codebreaker]}'s clock runs")
            number = len(g.rows) + 1
            outcome = self.game_clock.press(1, at_ns)
            if outcome is not PressOutcome.ACCEPTED:
                return Outcome(ignored=f"{name}'s press not taken by the clock ({outcome})")
            g.rows.append(FlowRow(number=number, guess_ns=at_ns))
            self.phase = Phase.MARKS
            return Outcome(lines=(f"game {g.number} row {number}: {name} confirmed a guess",))
        # MARKS
        if seat != g.codemaker:
            return Outcome(ignored=f"{name} pressed while {self.players[g.codemaker]}'s clock runs")
        row = g.rows[-1]
        outcome = self.game_clock.press(0, at_ns)
        if outcome is not PressOutcome.ACCEPTED:
            return Outcome(ignored=f"{name}'s press not taken by the clock ({outcome})")
        g.rows[-1] = replace(row, marks_ns=at_ns, marks_state=RowState.PENDING)
        self.phase = Phase.GUESS
        lines = [f"game {g.number} row {row.number}: {name} confirmed the marks"]
        for move in g.standing_illegal:
            # Seed 004 §3.4: "As soon as the opponent makes a move of their
            # own this is considered an acceptance of the previous move."
            move.settled = Settled.ACCEPTED
            lines.append(f"game {g.number} row {move.row}: {name} played on: the illegal guess "
                         "is accepted")
        if row.number >= self.variant.rows:
            # The last row is marked: the game is over whatever the marks say.
            lines.extend(self._end_game(g, at_ns, EndReason.LAST_ROW))
        return Outcome(lines=tuple(lines))

    def _joint_confirm(self, seat: int, at_ns: int) -> Outcome | None:
        """Both players confirm a row waiting for a check by pressing together.

        The player not on move presses first (the clock ignores that press)
        and the player on move within :data:`BOTH_PLAYERS_WINDOW_NS`: that
        second press is the agreement, not a clock press, so nobody's turn
        ends by it. The table then confirms the row with what the camera
        reads (an ``arbiter confirm_row`` event ``by: players``)."""
        rows = [r for r in self.checks() if r > 0]
        if not rows:
            self._last_both.clear()
            return None
        g = self.game
        on_move = g.codebreaker if self.phase is Phase.GUESS else g.codemaker
        if seat != on_move:
            self._last_both[seat] = at_ns
            return Outcome(ignored=f"{self.players[seat]} pressed (a joint check needs both players)")
        other = self._last_both.pop(1 - seat, None)
        if other is None or at_ns - other > BOTH_PLAYERS_WINDOW_NS:
            return None
        return Outcome(
            verdicts=(JointConfirm(g.number, rows[0]),),
            lines=(f"game {g.number} row {rows[0]}: both players confirm the row",),
        )

    def _on_flag(self, payload: Mapping[str, Any], at_ns: int) -> Outcome:
        seat = seat_of(payload)
        g = self.game
        if self.phase not in (Phase.GUESS, Phase.MARKS) or g.ended_ns is not None:
            return Outcome(ignored=f"flag of {self.players[seat]} after the game ended")
        role = g.role_of(seat)
        g.timeout = role
        lines = [f"game {g.number}: FLAG, {self.players[seat]} ({role.value}) ran out of time"]
        verdicts: list[Verdict] = [Flag(g.number, self.players[seat], role.value)]
        lines.extend(self._end_game(g, at_ns, EndReason.FLAG))
        return Outcome(verdicts=tuple(verdicts), lines=tuple(lines))

    def _on_reading(self, payload: Mapping[str, Any], at_ns: int) -> Outcome:
        game = int_of(payload, "game")
        phase = payload.get("phase")
        g = self.games[game - 1] if 1 <= game <= len(self.games) else None
        if g is None:
            return Outcome(ignored=f"reading for game {game}, which has not started")
        if phase == "secret":
            return self._on_secret_reading(g, payload)
        row_no = int_of(payload, "row")
        if not 1 <= row_no <= len(g.rows):
            return Outcome(ignored=f"reading of row {row_no}, which is not confirmed")
        status = str(payload.get("status", ""))
        row = g.rows[row_no - 1]
        # A low-trust board is shown, never accused from (see Settlement._judge).
        low = row.low_trust or payload.get("trust", TRUST_FULL) != TRUST_FULL
        holes = self.variant.holes
        if phase == "guess":
            if row.guess_state is not RowState.PENDING:
                return Outcome(ignored=f"second guess reading of row {row_no}")
            bounds = holes_of(payload, holes) if status != OK or "candidates" in payload else None
            if status == OK and bounds is not None and not BoundedRow(bounds).uncertain_holes:
                bounds = None  # every peg read surely: the guess as read
            if status != OK and bounds is None:
                g.rows[row_no - 1] = replace(row, guess_state=RowState.CHECK,
                                             seen_guess=_seen(payload.get("guess")))
                return Outcome(
                    verdicts=(Check(g.number, row_no, "guess", status),),
                    lines=(f"game {g.number} row {row_no}: guess reading {status}: CHECK ROW {row_no}",),
                )
            if bounds is not None:
                guess = BoundedRow(bounds).guess
                g.rows[row_no - 1] = replace(row, guess=guess, guess_state=RowState.BOUNDED,
                                             guess_bounds=bounds, seen_guess=guess, low_trust=low)
                line = (f"game {g.number} row {row_no}: guess read within bounds: "
                        f"{show_holes(bounds)}")
                return self._judge_after(g, row_no, Outcome(lines=(line,)))
            guess = code_of(payload.get("guess"), holes, "reading.guess")
            g.rows[row_no - 1] = replace(row, guess=guess, guess_state=RowState.READ, seen_guess=guess,
                                         low_trust=low)
            out = self._after_guess(g, row_no)
            return self._judge_after(g, row_no, out)
        if phase == "marks":
            if row.marks_state is not RowState.PENDING:
                return Outcome(ignored=f"second marks reading of row {row_no}")
            ranges = None
            if status != OK and "candidates" in payload:
                # A reading that says what it knows: the key counts, exact
                # or within bounds (the holes' doubt was the guess's).
                ranges = count_ranges(payload, holes)
            if status != OK and ranges is None:
                g.rows[row_no - 1] = replace(row, marks_state=RowState.CHECK)
                return Outcome(
                    verdicts=(Check(g.number, row_no, "marks", status),),
                    lines=(f"game {g.number} row {row_no}: marks reading {status}: CHECK ROW {row_no}",),
                )
            if ranges is not None and not (ranges[0].is_exact and ranges[1].is_exact):
                g.rows[row_no - 1] = replace(row, marks_state=RowState.BOUNDED, marks_bounds=ranges,
                                             low_trust=low)
                line = (f"game {g.number} row {row_no}: marks read within bounds: "
                        f"{ranges[0]} black {ranges[1]} white")
                return self._judge_after(g, row_no, Outcome(lines=(line,)))
            if ranges is not None:
                marks = Feedback(ranges[0].lo, ranges[1].lo)
            else:
                marks = Feedback(int_of(payload, "black"), int_of(payload, "white"))
            g.rows[row_no - 1] = replace(row, marks=marks, marks_state=RowState.READ, low_trust=low)
            return self._judge_after(g, row_no, Outcome())
        raise FlowError(f"reading.phase: expected guess, marks or secret, got {phase!r}")

    def _on_secret_reading(self, g: GameState, payload: Mapping[str, Any]) -> Outcome:
        status = str(payload.get("status", ""))
        shield = payload.get("shield", "closed")
        # Only a confident reading of a board the camera trusts is a secret.
        if status == OK and payload.get("trust", TRUST_FULL) != TRUST_FULL:
            status = "low trust"
        frame = payload.get("frame_ns")
        frame_ns = frame if isinstance(frame, int) and not isinstance(frame, bool) else None
        if shield == "closed":
            g.secret_probed = True
            if status != OK:
                return Outcome()
            code = code_of(payload.get("code"), self.variant.holes, "reading.code")
            if g.secret_hidden is not None:
                if code == g.secret_hidden or g.secret_changed:
                    return Outcome()
                # Never replaced: the first accepted code stays, and no mark
                # is judged by the camera's code any more.
                g.secret_changed = True
                return Outcome(
                    verdicts=(SecretChanged(g.number, "hidden"),),
                    lines=(f"game {g.number}: SECRET CHANGED: the code under the shield reads "
                           "differently from the one accepted; the first is kept, marks are no "
                           "longer checked by it; the arbiter checks the code",),
                )
            g.secret_hidden = code
            g.secret_frame_ns = frame_ns
            # Rows already read are judged exactly from now on; the code
            # itself is never shown.
            lines: list[str] = [f"game {g.number}: the camera saw the code as it was set "
                                "(kept, never shown): marks are checked exactly"]
            verdicts: list[Verdict] = [SecretSeen(g.number)]
            out = self._judge(g)
            return Outcome(verdicts=(*verdicts, *out.verdicts), lines=(*lines, *out.lines))
        if g.secret_state is RowState.READ:
            return Outcome(ignored="second reading of the revealed secret")
        if status != OK:
            g.secret_state = RowState.CHECK
            return Outcome(
                verdicts=(Check(g.number, 0, "secret", status),),
                lines=(f"game {g.number}: secret reading {status}: CHECK THE SECRET",),
            )
        code = code_of(payload.get("code"), self.variant.holes, "reading.code")
        if g.secret_changed or (g.secret_hidden is not None and code != g.secret_hidden):
            if g.secret_state is RowState.CHECK:
                return Outcome(ignored="the secret waits for the arbiter")
            first = not g.secret_changed
            g.secret_changed = True
            g.secret_state = RowState.CHECK
            verdicts = [Check(g.number, 0, "secret", "changed")]
            if first:
                verdicts.insert(0, SecretChanged(g.number, "reveal"))
            return Outcome(
                verdicts=tuple(verdicts),
                lines=(f"game {g.number}: SECRET CHANGED: the code shown differs from the one seen "
                       "when it was set; the arbiter confirms the code (CHECK THE SECRET)",),
            )
        g.secret_frame_ns = frame_ns
        return self._reveal(g, code, "camera")

    def _on_boot(self, payload: Mapping[str, Any], at_ns: int) -> Outcome:
        # After a restart the match waits, paused, for the arbiter (issue 5 §2).
        g = self.game
        was_paused = self.paused
        self.paused = True
        self.awaiting_resume = True
        if not was_paused and self.phase in (Phase.GUESS, Phase.MARKS) and g.ended_ns is None:
            self.game_clock.apply(ClockEvent("pause", at_ns))
        return Outcome(lines=("table restarted: the clock is paused; the arbiter resumes it",))


def _seen(raw: object) -> Code | None:
    """The colours an unsure reading gives for a guess, if it gives a list."""
    if isinstance(raw, Sequence) and not isinstance(raw, str):
        return tuple(str(c) for c in raw)
    return None


_HANDLERS = {
    "press": MatchFlow._on_press,
    "flag": MatchFlow._on_flag,
    "reading": MatchFlow._on_reading,
    "arbiter": MatchFlow._on_arbiter,
    "boot": MatchFlow._on_boot,
}




def replay_events(
    flow: MatchFlow, events: Iterable[tuple[str, Mapping[str, Any], int]]
) -> list[tuple[Verdict, dict[str, Any] | None]]:
    """Feed ``events`` (kind, payload, at_ns) to ``flow`` and pair each verdict
    it produces with the verdict journaled for it (None when missing).

    The journaled verdicts must come in the same order as the flow produces
    them; any pair that differs is a mismatch for the caller to report.
    """
    produced: list[Verdict] = []
    recorded: list[dict[str, Any]] = []
    for kind, payload, at_ns in events:
        if kind == "verdict":
            recorded.append(dict(payload))
            continue
        produced.extend(flow.apply(kind, payload, at_ns).verdicts)
    pairs: list[tuple[Verdict, dict[str, Any] | None]] = []
    for i, v in enumerate(produced):
        pairs.append((v, recorded[i] if i < len(recorded) else None))
    return pairs


def verdict_agrees(produced: object, journaled: object) -> bool:
    """Does a verdict the flow produces now agree with one a journal holds?

    Every key the journal has must be there with the same value (nested
    objects alike); keys the journal lacks are ignored, because verdicts
    gain keys over versions (the records are a contract that grows by
    additions), and a journal an arbiter kept must still replay.
    """
    if isinstance(produced, VERDICT_TYPES):
        produced = produced.to_json()
    if isinstance(produced, Mapping) and isinstance(journaled, Mapping):
        return all(k in produced and verdict_agrees(produced[k], v) for k, v in journaled.items())
    if isinstance(produced, list | tuple) and isinstance(journaled, list | tuple):
        return len(produced) == len(journaled) and all(
            verdict_agrees(a, b) for a, b in zip(produced, journaled, strict=True))
    return produced == journaled
