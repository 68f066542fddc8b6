"""The flow's state and its views: whose clock runs, what waits for the camera or the arbiter.

:class:`FlowCore` holds what :class:`~pegwatch.rules.flow.machine.MatchFlow`
changes, and answers the table's questions about it without changing it.
"""

from __future__ import annotations

from typing import Any

from pegwatch.rules.clock import Clock, ClockView
from pegwatch.rules.codes import UNKNOWN
from pegwatch.rules.flow.clock_wiring import ClockFactory, GameClock, preset_clock_factory
from pegwatch.rules.flow.state import (
    FlowError,
    GameState,
    Phase,
    ReadPhase,
    ReadRequest,
    RowState,
)
from pegwatch.rules.judge import MatchVerdict
from pegwatch.rules.record import GameRecord, MatchRecord, Row
from pegwatch.rules.variants import Variant, get_variant

__all__ = ["FlowCore"]


class FlowCore:
    """The match's state and what can be read off it; the events come in :class:`MatchFlow`.

    ``clock_factory`` makes one clock per game (player 0 codemaker, 1
    codebreaker). The flow is deterministic: the same events in the same
    order give the same state and verdicts.
    """

    def __init__(
        self,
        players: tuple[str, str],
        *,
        rules: str = "mso",
        clock_factory: ClockFactory | None = None,
        variant: Variant | None = None,
    ) -> None:
        if len(players) != 2 or players[0] == players[1]:
            raise FlowError(f"players: expected two different names, got {players!r}")
        self.players = players
        self.rules = rules
        self.variant = variant if variant is not None else get_variant(rules)
        if clock_factory is None:
            preset = self.variant.clock_preset or "mso-mastermind"
            clock_factory = preset_clock_factory(preset)
        self.games: list[GameState] = [GameState(number=1, codemaker=0)]
        self.phase = Phase.SETUP
        self.paused = False
        self.awaiting_resume = False
        self.last_ns = 0
        self.match_verdict: MatchVerdict | None = None
        self.game_clock = GameClock(clock_factory)
        self._last_both: dict[int, int] = {}

    @property
    def game(self) -> GameState:
        """The current game."""
        return self.games[-1]

    @property
    def clock(self) -> Clock:
        """The clock of the current game (player 0 codemaker, 1 codebreaker)."""
        return self.game_clock.clock

    def seat_of_role(self, role: int) -> int:
        """The seat playing clock player ``role`` in the current game."""
        return self.game.codemaker if role == 0 else self.game.codebreaker

    def clock_view(self, at_ns: int) -> ClockView:
        """The current game's clock at ``at_ns`` (frozen once the game ended)."""
        g = self.game
        if g.ended_ns is not None:
            at_ns = g.ended_ns
        return self.clock.view(at_ns)

    def remaining_ns(self, at_ns: int) -> dict[int, int]:
        """Time left per seat in the current game at ``at_ns``."""
        view = self.clock_view(at_ns)
        g = self.game
        return {g.codemaker: view.remaining_ns[0], g.codebreaker: view.remaining_ns[1]}

    def on_move(self, at_ns: int, *, view: ClockView | None = None) -> int | None:
        """The seat whose clock runs, or None (``view``: the clock's view at ``at_ns``, when
        the caller has it already)."""
        if self.phase not in (Phase.GUESS, Phase.MARKS) or self.paused:
            return None
        if view is None or view.at_ns != at_ns:
            view = self.clock.view(at_ns)
        if not view.running or view.on_move is None:
            return None
        return self.seat_of_role(view.on_move)

    def flag_due(self, at_ns: int) -> tuple[int, int] | None:
        """``(seat, flag_ns)`` when a running clock's time ran out by ``at_ns``."""
        if self.phase not in (Phase.GUESS, Phase.MARKS) or self.paused or self.game.ended_ns is not None:
            return None
        view = self.clock.view(at_ns)
        if not view.flags:
            return None
        return self.seat_of_role(view.flags[0]), view.flag_times_ns[0]

    def next_change_ns(self, at_ns: int, *, resolution_ns: int = 100_000_000) -> int | None:
        """When the shown time or a flag next changes (None: nothing runs)."""
        if self.phase not in (Phase.GUESS, Phase.MARKS) or self.game.ended_ns is not None:
            return None
        return self.clock.next_change_ns(at_ns, resolution_ns=resolution_ns)

    def read_requests(self) -> tuple[ReadRequest, ...]:
        """The readings the flow waits for, oldest first."""
        out: list[ReadRequest] = []
        g = self.game
        if self.phase in (Phase.GUESS, Phase.MARKS, Phase.REVEAL) or (
            self.phase is Phase.GAME_OVER and not g.final
        ):
            for r in g.rows:
                if r.guess_state is RowState.PENDING:
                    out.append(ReadRequest(g.number, r.number, ReadPhase.GUESS, r.guess_ns))
                if r.marks_state is RowState.PENDING and r.marks_ns is not None:
                    out.append(ReadRequest(g.number, r.number, ReadPhase.MARKS, r.marks_ns))
        if (
            self.phase in (Phase.GUESS, Phase.MARKS)
            and g.started_ns is not None
            and not g.secret_probed
            and g.ended_ns is None
        ):
            # Can the camera see the code under the shield? Stored, never shown.
            out.insert(0, ReadRequest(g.number, 0, ReadPhase.SECRET_HIDDEN, g.started_ns))
        if (
            self.phase in (Phase.GUESS, Phase.MARKS)
            and g.started_ns is not None
            and g.secret_hidden is not None
            and not g.secret_changed
            and g.ended_ns is None
        ):
            # The accepted code is watched: a different reading is an alarm.
            out.insert(0, ReadRequest(g.number, 0, ReadPhase.SECRET_WATCH, g.started_ns,
                                      expect=g.secret_hidden))
        if self.phase is Phase.REVEAL and g.secret_state in (None, RowState.PENDING):
            out.append(ReadRequest(g.number, 0, ReadPhase.SECRET, g.ended_ns or self.last_ns))
        return tuple(out)

    def illegal_counts(self) -> dict[str, int]:
        """Illegal moves reported at the table per player in this match (seed
        004 §3.4), the undone and corrected ones included."""
        counts = dict.fromkeys(self.players, 0)
        for g in self.games:
            for move in g.illegal_moves:
                counts[self.players[move.player]] += 1
        return counts

    def checks(self) -> tuple[int, ...]:
        """Rows of the current game waiting for the arbiter (0: the secret)."""
        rows = tuple(r.number for r in self.game.rows if r.needs_check)
        if self.game.secret_state is RowState.CHECK:
            rows = (0, *rows)
        return rows

    def game_record(self, game: GameState | None = None, *, reveal: bool = True) -> GameRecord:
        """The game in the ``judge`` record format (rows with unknown halves are
        left out from the first such row on). ``reveal=False`` leaves out a
        secret only seen under the shield."""
        g = game if game is not None else self.game
        rows: list[Row] = []
        for r in g.rows:
            if r.guess is None or r.guess_state not in (RowState.READ, RowState.BOUNDED):
                break
            marks = r.marks if r.marks_state is RowState.READ else None
            extra: dict[str, Any] = {"guess_ns": r.guess_ns}
            if r.marks_ns is not None:
                extra["marks_ns"] = r.marks_ns
            if r.confirmed_by is not None:
                extra["confirmed_by"] = r.confirmed_by
            if r.low_trust:
                extra["low_trust"] = True
            bounded = r.bounded
            if bounded is None:
                rows.append(Row(r.guess, marks, extra))
                if marks is None:
                    break
                continue
            ranged = r.marks_state is RowState.BOUNDED
            rows.append(Row(bounded.guess, None if ranged else marks, extra,
                            marks_unread=UNKNOWN if ranged else None, bounds=bounded))
            if not bounded.is_marked:
                break
        secret = g.secret
        source = g.secret_source if secret is not None else None
        if secret is None and reveal and not g.secret_changed:
            # After the alarm the code seen under the shield is not used.
            secret = g.secret_hidden
            source = "camera" if secret is not None else None
        extra_g: dict[str, Any] = {
            "codemaker": self.players[g.codemaker],
            "codebreaker": self.players[g.codebreaker],
        }
        if source is not None:
            extra_g["secret_source"] = source
            if source == "camera" and g.secret_frame_ns is not None:
                extra_g["secret_frame_ns"] = g.secret_frame_ns
        if g.end_reason is not None:
            extra_g["end"] = g.end_reason
        if g.illegal_moves:
            extra_g["illegal_moves"] = [m.to_json(self.players) for m in g.illegal_moves]
        return GameRecord(self.rules, secret, tuple(rows), g.timeout, extra_g)

    def match_record(self) -> MatchRecord:
        """Every finished game as a match record."""
        games = tuple(self.game_record(g) for g in self.games if g.final)
        # The table's count: the judge's own ``illegal_moves`` counts only the
        # rows still illegal in the record, not those undone or corrected.
        return MatchRecord(self.rules, self.players, games, {"illegal_moves": self.illegal_counts()})
