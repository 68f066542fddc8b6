"""The arbiter's actions: pause, resume, adjust, and rows or secrets confirmed or entered by hand."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from pegwatch.rules.clock import ClockEvent
from pegwatch.rules.codes import Feedback
from pegwatch.rules.flow.settlement import Settlement
from pegwatch.rules.flow.state import (
    FlowError,
    GameState,
    Phase,
    RowState,
    code_of,
    int_of,
    seat_of,
)
from pegwatch.rules.flow.verdicts import Entered, Outcome, Verdict

__all__ = ["Arbitration"]


class Arbitration(Settlement):
    """``arbiter`` events (see :mod:`pegwatch.rules.flow.machine`)."""

    def _on_arbiter(self, payload: Mapping[str, Any], at_ns: int) -> Outcome:
        action = payload.get("action")
        g = self.game
        if action == "pause":
            if self.paused:
                return Outcome(ignored="pause: already paused")
            self.paused = True
            if self.phase in (Phase.GUESS, Phase.MARKS) and g.ended_ns is None:
                self.game_clock.apply(ClockEvent("pause", at_ns))
            return Outcome(lines=("arbiter: clock paused",))
        if action == "resume":
            if not self.paused:
                return Outcome(ignored="resume: not paused")
            self.paused = False
            self.awaiting_resume = False
            if self.phase in (Phase.GUESS, Phase.MARKS) and g.ended_ns is None:
                self.game_clock.apply(ClockEvent("resume", at_ns))
            return Outcome(lines=("arbiter: clock resumed",))
        if action == "adjust":
            seat = seat_of(payload)
            delta = int_of(payload, "delta_ns")
            if g.started_ns is None or g.ended_ns is not None:
                return Outcome(ignored="adjust: no clock running")
            role = 0 if seat == g.codemaker else 1
            left = self.clock.view(at_ns).remaining_ns[role]
            self.game_clock.apply(ClockEvent("adjust", at_ns, player=role, remaining_ns=max(0, left + delta)))
            return Outcome(lines=(f"arbiter: {self.players[seat]}'s time {delta / 1e9:+.1f} s",))
        if action == "confirm_row":
            return self._confirm_row(payload)
        if action == "confirm_secret":
            game = int_of(payload, "game")
            if game != g.number or g.ended_ns is None:
                return Outcome(ignored=f"confirm_secret: game {game} is not waiting for its secret")
            if g.secret_state is RowState.READ:
                return Outcome(ignored="confirm_secret: the secret is already read")
            code = code_of(payload.get("code"), self.variant.holes, "arbiter.code")
            return self._reveal(g, code, str(payload.get("by", "arbiter")))
        raise FlowError(f"arbiter.action: {action!r} is not one of pause, resume, adjust, confirm_row, confirm_secret")

    def _confirm_row(self, payload: Mapping[str, Any]) -> Outcome:
        game = int_of(payload, "game")
        row_no = int_of(payload, "row")
        if not 1 <= game <= len(self.games):
            return Outcome(ignored=f"confirm_row: no game {game}")
        g = self.games[game - 1]
        if not 1 <= row_no <= len(g.rows):
            return Outcome(ignored=f"confirm_row: no row {row_no} in game {game}")
        row = g.rows[row_no - 1]
        if payload.get("hand") is True:
            return self._enter_row(g, row_no, payload)
        if not row.needs_check:
            return Outcome(ignored=f"confirm_row: row {row_no} is not waiting for a check")
        by = str(payload.get("by", "arbiter"))
        guess = row.guess
        guess_state = row.guess_state
        if row.guess_state is RowState.CHECK:
            guess = code_of(payload.get("guess"), self.variant.holes, "arbiter.guess")
            guess_state = RowState.READ
        marks = row.marks
        marks_state = row.marks_state
        if row.marks_state is RowState.CHECK:
            marks = Feedback(int_of(payload, "black"), int_of(payload, "white"))
            marks_state = RowState.READ
        g.rows[row_no - 1] = replace(
            row, guess=guess, guess_state=guess_state, marks=marks, marks_state=marks_state,
            confirmed_by=by, low_trust=False,
        )
        if row.guess_bounds is not None or row.marks_bounds is not None:
            g.reported.discard(row_no)  # judged again, exactly now
        head = f"game {g.number} row {row_no}: confirmed by the {by}"
        out = Outcome(lines=(head,))
        if row.guess_state is RowState.CHECK:
            legal = self._after_guess(g, row_no)
            out = Outcome(verdicts=legal.verdicts, lines=(head, *legal.lines))
        out = self._judge_after(g, row_no, out)
        if g.ended_ns is not None and g.secret_state is RowState.READ:
            # The result waited for this row (a check found at the reveal).
            fin = self._finish_game(g)
            out = Outcome(verdicts=(*out.verdicts, *fin.verdicts), lines=(*out.lines, *fin.lines))
        return out

    def _enter_row(self, g: GameState, row_no: int, payload: Mapping[str, Any]) -> Outcome:
        """A row entered by hand (``hand: true``): it replaces what the table had.

        The arbiter enters a row the camera cannot read (waiting for a check,
        or never answered: a broken camera), or corrects a row it read wrongly
        (a dispute, seed 004 §4). The guess is taken when ``guess`` is given,
        the marks when ``black`` and ``white`` are (and the codemaker has
        pressed for them). The row is then judged like any confirmed row;
        a game that ended on this row's reading (mis-mark, solved) and no
        longer does is reopened, paused at the instant it ended.
        """
        row = g.rows[row_no - 1]
        if g.final:
            return Outcome(ignored=f"confirm_row: game {g.number} is judged; correct the record instead")
        by = str(payload.get("by", "arbiter"))
        guess, guess_state = row.guess, row.guess_state
        if "guess" in payload:
            guess = code_of(payload.get("guess"), self.variant.holes, "arbiter.guess")
            guess_state = RowState.READ
        marks, marks_state = row.marks, row.marks_state
        if "black" in payload or "white" in payload:
            if row.marks_state is None:
                return Outcome(ignored=f"confirm_row: row {row_no} has no marks yet (the codemaker has not pressed)")
            marks = Feedback(int_of(payload, "black"), int_of(payload, "white"))
            if min(marks) < 0 or sum(marks) > self.variant.holes:
                raise FlowError(f"arbiter.black/white: {marks} does not fit {self.variant.holes} holes")
            marks_state = RowState.READ
        if "guess" not in payload and marks_state is row.marks_state and marks == row.marks:
            return Outcome(ignored=f"confirm_row: row {row_no} already reads so (nothing new entered)")
        if (row.guess_state, row.marks_state) == (guess_state, marks_state) == (
            RowState.READ, RowState.READ
        ) and (row.guess, row.marks) == (guess, marks):
            return Outcome(ignored=f"confirm_row: row {row_no} already reads so")
        changed_guess = guess != row.guess or row.guess_state is not RowState.READ
        g.rows[row_no - 1] = replace(
            row, guess=guess, guess_state=guess_state, marks=marks, marks_state=marks_state,
            confirmed_by=by, low_trust=False,
        )
        # A fresh judgement of this row: report it again, and let a
        # mis-mark or an inconsistency be announced anew if it remains.
        g.reported.discard(row_no)
        if g.announced_mismark is not None and g.announced_mismark >= row_no:
            g.announced_mismark = None
        g.announced_inconsistent = False
        lines = [f"game {g.number} row {row_no}: entered by the {by}: "
                 f"{' '.join(guess) if guess is not None else '?'}"
                 + (f" -> {marks}" if marks is not None else "")]
        lines.extend(self._reopen(g, row_no))
        verdicts: list[Verdict] = [Entered(
            g.number, row_no, by, guess,
            None if marks is None else marks.black,
            None if marks is None else marks.white,
        )]
        if changed_guess and guess is not None:
            legal = self._after_guess(g, row_no)
            verdicts.extend(legal.verdicts)
            lines.extend(legal.lines)
        out = self._judge(g)
        verdicts.extend(out.verdicts)
        lines.extend(out.lines)
        if g.ended_ns is not None and g.secret_state is RowState.READ:
            fin = self._finish_game(g)
            verdicts.extend(fin.verdicts)
            lines.extend(fin.lines)
        return Outcome(verdicts=tuple(verdicts), lines=tuple(lines))
