"""Settling the game: legality of a guess, the judgement of the rows, the end and the result.

Every verdict the table journals is made here (or, for presses and flags,
in :mod:`pegwatch.rules.flow.machine`) by :func:`pegwatch.rules.judge.judge_game`
on the record of the rows read so far.
"""

from __future__ import annotations

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
)
from pegwatch.rules.flow.verdicts import (
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
        """Judge the rows read so far; end the game on the board when it is over."""
        record = self.game_record(g)
        verdict = judge_game(record, self.variant, extra_colours="unjudged")
        g.verdict = verdict
        verdicts: list[Verdict] = []
        lines: list[str] = []
        # Report each row once, in order, as soon as it is fully read.
        for number, row in enumerate(record.rows, start=1):
            if row.marks is None or number in g.reported:
                continue
            g.reported.add(number)
            expected: Feedback | None = None
            incomplete = is_incomplete(row.guess, self.variant)
            if verdict.expected_marks is not None and not incomplete:
                expected = verdict.expected_marks[number - 1]
            verdicts.append(RowJudged(
                g.number, number, row.guess, row.marks.black, row.marks.white,
                exact=record.secret is not None, expected=expected,
            ))
            lines.append(
                f"game {g.number} row {number}: {' '.join(row.guess)} -> {row.marks}"
                + (" (incomplete row: marks not judged)" if incomplete else "")
                + ("" if expected is None else (
                    " (correct)" if row.marks == expected
                    else f" (should be {expected.black}B{expected.white}W)"))
            )
        if record.secret is not None and verdict.mismarked_row is not None and not verdict.mismark_by_timeout:
            k = verdict.mismarked_row
            if g.announced_mismark != k:
                g.announced_mismark = k
                verdicts.append(Mismark(g.number, k, verdict.attempts, verdict.codemaker_penalty_vp))
                lines.append(f"game {g.number}: MIS-MARK on row {k}: "
                             f"{self.players[g.codebreaker]} is credited with {verdict.attempts} attempts")
                if g.ended_ns is None:
                    marked = g.rows[k - 1]
                    lines.extend(self._end_game(g, marked.marks_ns or self.last_ns, EndReason.MISMARK))
        elif record.secret is None and verdict.consistent == 0 and not g.announced_inconsistent:
            g.announced_inconsistent = True
            verdicts.append(Inconsistent(g.number, tuple(verdict.suspect_rows or ())))
            lines.append(f"game {g.number}: no code fits the marks: some row is mis-marked; "
                         "call the arbiter (judged when the secret is revealed)")
        if g.ended_ns is None and verdict.solved_row is not None:
            solved = g.rows[verdict.solved_row - 1]
            if solved.marks_state is RowState.READ:
                lines.extend(self._end_game(g, solved.marks_ns or self.last_ns, EndReason.SOLVED))
        return Outcome(verdicts=tuple(verdicts), lines=tuple(lines))

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
