"""Settling the game: legality of a guess, the judgement of the rows, the end and the result.

Every verdict the table journals is made here (or, for presses and flags,
in :mod:`pegwatch.rules.flow.machine`) by :func:`pegwatch.rules.judge.judge_game`
on the record of the rows read so far.
"""

from __future__ import annotations

from dataclasses import replace

from pegwatch.rules.bounded import BoundedRow, Judgement, RowJudgement
from pegwatch.rules.bounded_consistency import Consistency
from pegwatch.rules.clock import ClockEvent
from pegwatch.rules.codes import Code, Feedback
from pegwatch.rules.flow.core import FlowCore
from pegwatch.rules.flow.state import (
    EndReason,
    GameState,
    IllegalMove,
    Phase,
    RowState,
    Settled,
    show_holes,
)
from pegwatch.rules.flow.verdicts import (
    BoundedJudged,
    Check,
    GameResult,
    Illegal,
    Inconsistent,
    MatchResult,
    Mismark,
    Outcome,
    RowJudged,
    Verdict,
)
from pegwatch.rules.judge import is_incomplete, judge_game, judge_match
from pegwatch.rules.legality import IllegalGuessError, check_guess, colours_in

__all__ = ["Settlement"]


class Settlement(FlowCore):
    """Judging and ending games, on top of the flow's state."""

    def _after_guess(self, g: GameState, row_no: int) -> Outcome:
        """Check the guess of ``row_no`` (just read, confirmed or entered).

        An illegal guess is reported (an ``illegal`` verdict) and counted
        against the codebreaker once per row: a row entered again by the
        arbiter that is still illegal is reported again with the same count,
        and one that is legal now settles the row's illegal state."""
        row = g.rows[row_no - 1]
        assert row.guess is not None
        seen: set[str] = set()
        for earlier in g.rows[: row_no - 1]:
            if earlier.guess is not None:
                seen |= colours_in([earlier.guess])
        known = next((m for m in g.illegal_moves if m.row == row_no), None)
        try:
            check_guess(row.guess, self.variant, colours_seen=seen, what=f"row {row_no}")
        except IllegalGuessError as exc:
            if row.low_trust:
                # Never reported from a board read with low trust: the arbiter looks.
                g.rows[row_no - 1] = replace(row, guess_state=RowState.CHECK)
                return Outcome(
                    verdicts=(Check(g.number, row_no, "guess", "low trust"),),
                    lines=(f"game {g.number} row {row_no}: the guess looks illegal ({exc}), but the "
                           f"board was read with low trust: nothing is reported; CHECK ROW {row_no}",),
                )
            seat = g.codebreaker
            name = self.players[seat]
            if known is None:
                number = 1 + sum(1 for m in g.illegal_moves if m.player == seat)
                known = IllegalMove(row_no, seat, str(exc), number)
                g.illegal_moves.append(known)
            else:
                known.reason = str(exc)
                if known.settled is Settled.CORRECTED:
                    known.settled = None  # illegal again; an accepted move stays accepted
            line = f"game {g.number} row {row_no}: ILLEGAL GUESS: {exc}"
            if known.number >= 2:
                # Seed 004 §3.4: "If the player commits a second illegal move
                # the arbiter should be called".
                line += f" ({name}'s illegal move {known.number} this game: call the arbiter)"
            return Outcome(
                verdicts=(Illegal(g.number, row_no, str(exc), name, known.number),),
                lines=(line,),
            )
        if known is not None and known.settled is None:
            known.settled = Settled.CORRECTED
            return Outcome(lines=(f"game {g.number} row {row_no}: the guess is legal now",))
        return Outcome()

    def _reveal(self, g: GameState, code: Code, by: str) -> Outcome:
        g.secret = code
        g.secret_state = RowState.READ
        g.secret_source = by
        lines = [f"game {g.number}: secret {' '.join(code)} ({by})"]
        if g.secret_hidden is not None and g.secret_hidden != code:
            lines.append(f"game {g.number}: NOTE the code changed under the shield "
                         f"(seen {' '.join(g.secret_hidden)} at the start)")
        out = self._judge(g)
        lines.extend(out.lines)
        verdicts = list(out.verdicts)
        if self.phase is Phase.REVEAL and g.ended_ns is not None:
            fin = self._finish_game(g)
            lines.extend(fin.lines)
            verdicts.extend(fin.verdicts)
        return Outcome(verdicts=tuple(verdicts), lines=tuple(lines))

    def _reopen(self, g: GameState, row_no: int) -> list[str]:
        """Take back the end of a game that a corrected row had ended.

        Only an end decided by this row's reading (mis-mark, solved) is taken
        back, only when the corrected row no longer ends the game, and only
        while the secret is still under the shield. The clock
        comes back paused at the instant the game ended: the time since is
        charged to nobody, and the arbiter resumes it.
        """
        row = g.rows[row_no - 1]
        if (
            g.ended_ns is None
            or g.end_reason not in ("mis-mark", EndReason.SOLVED)
            or g.secret_state is RowState.READ
            or row.marks_ns is None
            or g.ended_ns != row.marks_ns
        ):
            return []
        verdict = judge_game(self.game_record(g), self.variant, extra_colours="unjudged")
        if (g.end_reason is EndReason.MISMARK and verdict.mismarked_row == row_no
                and not verdict.mismark_by_timeout) or (
                g.end_reason is EndReason.SOLVED and verdict.solved_row == row_no):
            return []  # the corrected row still ends the game
        ended = g.ended_ns
        self.game_clock.take_back_stop()
        g.ended_ns = None
        g.end_reason = None
        g.secret_state = None  # a secret reading that waited for a check is moot now
        self.phase = Phase.GUESS
        if self.clock.started and self.clock.view(ended).running:
            self.game_clock.apply(ClockEvent("pause", ended))
        self.paused = True
        return [f"game {g.number}: row {row_no} corrected: the game goes on, "
                "paused; the arbiter resumes the clock"]

    def _judge_after(self, g: GameState, row_no: int, before: Outcome) -> Outcome:
        out = self._judge(g)
        return Outcome(
            verdicts=(*before.verdicts, *out.verdicts),
            lines=(*before.lines, *out.lines),
            ignored=before.ignored,
        )

    def _judge(self, g: GameState) -> Outcome:
        """Judge the rows read so far; end the game on the board when it is over.

        Rows read within bounds are judged once the secret is known: cleared,
        proved mis-marked, or unsure (a check for the arbiter naming the
        holes that decide, when the row can change the result). Nothing is
        ever accused from a low-trust reading: the row goes to the arbiter."""
        record = self.game_record(g)
        verdict = judge_game(record, self.variant, extra_colours="unjudged")
        g.verdict = verdict
        verdicts: list[Verdict] = []
        lines: list[str] = []
        exact = record.secret is not None
        source = record.extra.get("secret_source")
        within = {b.row: b.judgement for b in verdict.bounded_rows}
        # Report each row once, in order, as soon as it is fully read.
        for number, row in enumerate(record.rows, start=1):
            if number in g.reported:
                continue
            bounded = g.rows[number - 1].bounded
            if bounded is not None:
                if exact and bounded.is_marked:
                    g.reported.add(number)
                    out = self._report_bounded(g, number, bounded, within.get(number),
                                               number in verdict.unsure_rows, source)
                    verdicts.extend(out.verdicts)
                    lines.extend(out.lines)
                continue
            if row.marks is None:
                continue
            g.reported.add(number)
            expected: Feedback | None = None
            incomplete = is_incomplete(row.guess, self.variant)
            if verdict.expected_marks is not None and not incomplete:
                expected = verdict.expected_marks[number - 1]
            verdicts.append(RowJudged(
                g.number, number, row.guess, row.marks.black, row.marks.white,
                exact=exact, expected=expected,
            ))
            lines.append(
                f"game {g.number} row {number}: {' '.join(row.guess)} -> {row.marks}"
                + (" (incomplete row: marks not judged)" if incomplete else "")
                + ("" if expected is None else (
                    " (correct)" if row.marks == expected
                    else f" (should be {expected.black}B{expected.white}W)"))
            )
        k = verdict.mismarked_row
        if exact and k is not None and not verdict.mismark_by_timeout and g.announced_mismark != k:
            if any(j <= k for j in verdict.unsure_rows):
                pass  # an earlier doubtful row may be the first wrong one: the arbiter first
            elif g.rows[k - 1].low_trust:
                out = self._low_trust_check(g, k)
                verdicts.extend(out.verdicts)
                lines.extend(out.lines)
            else:
                g.announced_mismark = k
                frame = record.extra.get("secret_frame_ns") if source == "camera" else None
                verdicts.append(Mismark(g.number, k, verdict.attempts, verdict.codemaker_penalty_vp,
                                        secret_source=source, secret_frame_ns=frame))
                lines.append(f"game {g.number}: MIS-MARK on row {k}: "
                             f"{self.players[g.codebreaker]} is credited with {verdict.attempts} attempts"
                             + (" (the secret as the camera read it)" if source == "camera" else ""))
                if g.ended_ns is None:
                    marked = g.rows[k - 1]
                    lines.extend(self._end_game(g, marked.marks_ns or self.last_ns, EndReason.MISMARK))
        elif not exact and verdict.consistent == 0 and not g.announced_inconsistent:
            if any(r.extra.get("low_trust") for r in record.rows):
                if not g.low_trust_noted:
                    g.low_trust_noted = True
                    lines.append(f"game {g.number}: no code fits the marks as read, but some rows "
                                 "were read with low trust: nothing is flagged; check the rows")
            else:
                g.announced_inconsistent = True
                verdicts.append(Inconsistent(g.number, tuple(verdict.suspect_rows or ())))
                lines.append(f"game {g.number}: no code fits the marks: some row is mis-marked; "
                             "call the arbiter (judged when the secret is revealed)")
        if not exact and verdict.consistency is Consistency.UNSURE:
            note = "; ".join(
                f"row {d.row} " + ", ".join([f"hole {h}" for h in d.holes] + [f"the {k} count" for k in d.keys])
                for d in verdict.consistency_deciding) or "the doubtful pegs"
            if note != g.consistency_note:
                g.consistency_note = note
                lines.append(f"game {g.number}: whether any code fits the marks depends on {note}: "
                             "nothing is flagged")
        if g.ended_ns is None and verdict.solved_row is not None:
            solved = g.rows[verdict.solved_row - 1]
            if solved.marks_state is RowState.READ:
                lines.extend(self._end_game(g, solved.marks_ns or self.last_ns, EndReason.SOLVED))
        return Outcome(verdicts=tuple(verdicts), lines=tuple(lines))

    def _report_bounded(self, g: GameState, number: int, bounded: BoundedRow,
                        judgement: RowJudgement | None, matters: bool, source: object) -> Outcome:
        """The verdict on a row read within bounds, and a check when it is
        unsure (or may be the code) and can change the result."""
        if judgement is None:
            return Outcome()  # after the code, or incomplete whatever it holds: not judged
        assert bounded.black is not None and bounded.white is not None
        holes, keys = judgement.deciding_holes, judgement.deciding_keys
        verdicts: list[Verdict] = [BoundedJudged(
            g.number, number, tuple(bounded.hole_json()), bounded.black.to_json(),
            bounded.white.to_json(), judgement.verdict.value, holes, keys,
            source if isinstance(source, str) else None)]
        what = {Judgement.CORRECT: "every reading agrees with the marks",
                Judgement.MISMARK: "every reading is mis-marked",
                Judgement.UNSURE: "unsure"}[judgement.verdict]
        lines = [f"game {g.number} row {number}: {show_holes(bounded.holes)} -> "
                 f"{bounded.black}B{bounded.white}W within bounds: {what}"]
        if matters:
            flow_row = g.rows[number - 1]
            half = "guess" if holes or not keys else "marks"
            if judgement.may_be_code and not holes:
                holes = tuple(i + 1 for i in bounded.uncertain_holes)
            # Only the halves that decide are open for the arbiter's check.
            check_guess = flow_row.guess_state is RowState.BOUNDED and (bool(holes) or not keys)
            check_marks = flow_row.marks_state is RowState.BOUNDED and (bool(keys) or not check_guess)
            g.rows[number - 1] = replace(
                flow_row,
                guess_state=RowState.CHECK if check_guess else flow_row.guess_state,
                marks_state=RowState.CHECK if check_marks else flow_row.marks_state,
            )
            verdicts.append(Check(g.number, number, half, "unsure", holes, keys))
            named = [f"hole {h}" for h in holes] + [f"the {k} count" for k in keys]
            lines.append(f"game {g.number} row {number}: CHECK ROW {number}: "
                         + (", ".join(named) or "its doubtful pegs") + " decide"
                         + ("s" if len(named) == 1 else "")
                         + (" (it may be the code)" if judgement.may_be_code else ""))
        return Outcome(verdicts=tuple(verdicts), lines=tuple(lines))

    def _low_trust_check(self, g: GameState, number: int) -> Outcome:
        """A verdict that would rest on a low-trust reading goes to the arbiter."""
        row = g.rows[number - 1]
        if row.needs_check:
            return Outcome()
        g.rows[number - 1] = replace(row, marks_state=RowState.CHECK)
        return Outcome(
            verdicts=(Check(g.number, number, "marks", "low trust"),),
            lines=(f"game {g.number} row {number}: the marks look wrong, but the board was read "
                   f"with low trust: nothing is flagged; CHECK ROW {number}",),
        )

    def _end_game(self, g: GameState, at_ns: int, reason: EndReason) -> list[str]:
        if g.ended_ns is not None:
            return []
        g.ended_ns = at_ns
        g.end_reason = reason
        self.game_clock.stop(at_ns)
        # Rows confirmed after the game ended (a press racing the reading)
        # do not count.
        g.rows = [r for r in g.rows if r.guess_ns <= at_ns or r.number == 1]
        g.illegal_moves = [m for m in g.illegal_moves if m.row <= len(g.rows)]
        if self.phase is not Phase.GAME_OVER:
            self.phase = Phase.REVEAL
        lines = [f"game {g.number}: over ({reason}); open the shield"]
        if g.secret_state is RowState.READ:
            lines.extend(self._finish_game(g).lines)
        return lines

    def _finish_game(self, g: GameState) -> Outcome:
        if g.final:
            return Outcome()
        pending = [r.number for r in g.rows if r.needs_check or RowState.PENDING in (r.guess_state, r.marks_state)]
        if pending:
            return Outcome(lines=(f"game {g.number}: waiting for row {pending[0]} before the result",))
        g.final = True
        record = self.game_record(g)
        verdict = judge_game(record, self.variant, extra_colours="unjudged")
        g.verdict = verdict
        self.phase = Phase.GAME_OVER
        maker, breaker = self.players[g.codemaker], self.players[g.codebreaker]
        lines = [f"game {g.number}: {breaker} is credited with {verdict.attempts} attempts"
                 + (f"; {maker} loses {verdict.codemaker_penalty_vp} VP" if verdict.codemaker_penalty_vp else "")]
        verdicts: list[Verdict] = [GameResult(g.number, verdict)]
        if len([x for x in self.games if x.final]) >= self.variant.games_per_match:
            mv = judge_match(self.match_record(), self.variant, extra_colours="unjudged")
            self.match_verdict = mv
            self.phase = Phase.MATCH_OVER
            illegal = self.illegal_counts()
            # The illegal moves only when there were any, so that journals
            # written before the count existed still replay to the same verdicts.
            verdicts.append(MatchResult(mv.vp, mv.attempts, mv.penalties_vp,
                                        illegal if any(illegal.values()) else None))
            vp = ", ".join(f"{p} {mv.vp[p]:g} VP ({mv.attempts[p]} attempts)" for p in self.players)
            if any(illegal.values()):
                vp += "; illegal moves: " + ", ".join(f"{p} {illegal[p]}" for p in self.players)
            lines.append(f"match over: {vp}")
        return Outcome(verdicts=tuple(verdicts), lines=tuple(lines))
