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
    closed shield) is never judged: the row waits for the arbiter.
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

Mis-marks are flagged only from certain readings: exactly when the secret
was seen under the shield at the start, and otherwise only as "no code fits
the marks" (never naming a guilty row) until the secret is read at the end,
when every row is judged again.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from pegwatch.rules.clock import Clock, ClockView, PressOutcome
from pegwatch.rules.codes import Code, Feedback
from pegwatch.rules.errors import BadInput
from pegwatch.rules.judge import GameVerdict, MatchVerdict, is_incomplete, judge_game, judge_match
from pegwatch.rules.legality import IllegalGuessError, check_guess, colours_in
from pegwatch.rules.record import GameRecord, MatchRecord, Role, Row
from pegwatch.rules.variants import Variant, get_variant

__all__ = [
    "ROLES",
    "ClockFactory",
    "FlowError",
    "FlowRow",
    "GameState",
    "IllegalMove",
    "MatchFlow",
    "Outcome",
    "Phase",
    "ReadRequest",
    "ReplayMismatch",
    "RowState",
    "preset_clock_factory",
    "replay_events",
]

logger = logging.getLogger(__name__)

ROLES = ("codemaker", "codebreaker")
"""Clock players: 0 is the codemaker, 1 the codebreaker, in every game."""

OK = "ok"
"""The reading status that may be judged."""

#: How close together both player buttons count as pressed "together" (ns).
BOTH_PLAYERS_WINDOW_NS = 500_000_000


class FlowError(BadInput):
    """An event the flow cannot take (malformed payload, unknown kind)."""


class ReplayMismatch(BadInput):
    """Replaying a journal did not reach the verdicts it recorded."""


class Phase(Enum):
    """Where the current game is."""

    SETUP = "setup"
    """The codemaker sets the code; their press starts the codebreaker's clock."""
    GUESS = "guess"
    """The codebreaker's time: placing the next guess."""
    MARKS = "marks"
    """The codemaker's time: marking the guess just confirmed."""
    REVEAL = "reveal"
    """The game is over on the board; the secret is read with the shield open."""
    GAME_OVER = "game_over"
    """The game is judged; the next codemaker's press starts the next game."""
    MATCH_OVER = "match_over"
    """Both games are judged."""


class RowState(Enum):
    """How sure the table is of one half of a row (the guess or the marks)."""

    PENDING = "pending"
    """Confirmed by a press; the camera's reading has not come yet."""
    CHECK = "check"
    """The camera could not decide: the arbiter must confirm the row."""
    READ = "read"
    """Read with confidence, or confirmed by the arbiter."""


ClockFactory = Callable[[], Clock]
"""Makes a fresh clock for one game: player 0 codemaker, 1 codebreaker."""


def preset_clock_factory(preset: str = "mso-mastermind") -> ClockFactory:
    """A factory of clocks from the named preset, with the MSO roles."""
    # Fail now, on a bad name, rather than at the first game.
    Clock.from_preset(preset, roles=ROLES)
    return functools.partial(Clock.from_preset, preset, roles=ROLES)


@dataclass(frozen=True)
class ReadRequest:
    """A reading the flow waits for: the vision worker answers it with the
    first accepted reading of a frame taken at or after ``not_before_ns``."""

    game: int
    row: int
    phase: str
    not_before_ns: int


@dataclass(frozen=True)
class FlowRow:
    """One row of the current game as the table knows it."""

    number: int
    guess_ns: int
    guess: Code | None = None
    guess_state: RowState = RowState.PENDING
    marks_ns: int | None = None
    marks: Feedback | None = None
    marks_state: RowState | None = None
    guess_reading: Mapping[str, Any] | None = None
    marks_reading: Mapping[str, Any] | None = None
    confirmed_by: str | None = None

    @property
    def needs_check(self) -> bool:
        """True while the arbiter must confirm this row."""
        return RowState.CHECK in (self.guess_state, self.marks_state)

    @property
    def is_judgeable(self) -> bool:
        """Both halves are known for certain."""
        return self.guess_state is RowState.READ and self.marks_state is RowState.READ


@dataclass
class IllegalMove:
    """An illegal guess reported at the table (seed 004 §3.4).

    ``number`` is the player's count of illegal moves in this game, this one
    included (from the second on, the arbiter is called). ``settled`` is
    None while the row's illegal state stands, then ``"accepted"`` (the
    codemaker pressed for marks after it was reported: "as soon as the
    opponent makes a move of their own this is considered an acceptance")
    or ``"corrected"`` (the arbiter entered the row again, legal now). An
    undone or corrected move still counts: seed 004 counts the moves made.
    """

    row: int
    player: int
    reason: str
    number: int
    settled: str | None = None

    def to_json(self, players: tuple[str, str]) -> dict[str, Any]:
        """Plain data, the player by name (an extra key of the exported game)."""
        return {"row": self.row, "player": players[self.player], "reason": self.reason,
                "number": self.number, "settled": self.settled}


@dataclass
class GameState:
    """One game in progress or finished."""

    number: int
    codemaker: int
    started_ns: int | None = None
    rows: list[FlowRow] = field(default_factory=list)
    secret_hidden: Code | None = None
    secret: Code | None = None
    secret_state: RowState | None = None
    timeout: Role | None = None
    ended_ns: int | None = None
    end_reason: str | None = None
    verdict: GameVerdict | None = None
    final: bool = False
    clock_ops: list[tuple[str, tuple[int, ...]]] = field(default_factory=list)
    announced_mismark: int | None = None
    announced_inconsistent: bool = False
    reported: set[int] = field(default_factory=set)
    secret_probed: bool = False
    illegal_moves: list[IllegalMove] = field(default_factory=list)

    @property
    def standing_illegal(self) -> tuple[IllegalMove, ...]:
        """Illegal guesses neither accepted nor corrected yet, oldest first."""
        return tuple(m for m in self.illegal_moves if m.settled is None)

    @property
    def codebreaker(self) -> int:
        """The codebreaker's seat."""
        return 1 - self.codemaker

    def role_of(self, seat: int) -> Role:
        """The role of ``seat`` in this game."""
        return Role.CODEMAKER if seat == self.codemaker else Role.CODEBREAKER


@dataclass(frozen=True)
class Outcome:
    """What one event changed: verdict payloads for the journal and lines
    for the transcript and the display."""

    verdicts: tuple[dict[str, Any], ...] = ()
    lines: tuple[str, ...] = ()
    ignored: str | None = None


def _seat(payload: Mapping[str, Any], key: str = "player") -> int:
    value = payload.get(key)
    if isinstance(value, bool) or value not in (0, 1):
        raise FlowError(f"{key}: expected seat 0 or 1, got {value!r}")
    return int(value)


def _int(payload: Mapping[str, Any], key: str) -> int:
    value = payload.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise FlowError(f"{key}: expected an integer, got {value!r}")
    return value


def _code(value: object, holes: int, where: str) -> Code:
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != holes:
        raise FlowError(f"{where}: expected {holes} colour names, got {value!r}")
    return tuple(str(c).strip().lower() for c in value)


class MatchFlow:
    """The MSO match state machine (see the module docstring for the events).

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
        self._clock_factory = clock_factory
        self.games: list[GameState] = [GameState(number=1, codemaker=0)]
        self.phase = Phase.SETUP
        self.paused = False
        self.awaiting_resume = False
        self.last_ns = 0
        self.match_verdict: MatchVerdict | None = None
        self._clock: Clock = clock_factory()
        self._last_both: dict[int, int] = {}

    # ------------------------------------------------------------------ views

    @property
    def game(self) -> GameState:
        """The current game."""
        return self.games[-1]

    @property
    def clock(self) -> Clock:
        """The clock of the current game (player 0 codemaker, 1 codebreaker)."""
        return self._clock

    def seat_of_role(self, role: int) -> int:
        """The seat playing clock player ``role`` in the current game."""
        return self.game.codemaker if role == 0 else self.game.codebreaker

    def clock_view(self, at_ns: int) -> ClockView:
        """The current game's clock at ``at_ns`` (frozen once the game ended)."""
        g = self.game
        if g.ended_ns is not None:
            at_ns = g.ended_ns
        return self._clock.view(at_ns)

    def remaining_ns(self, at_ns: int) -> dict[int, int]:
        """Time left per seat in the current game at ``at_ns``."""
        view = self.clock_view(at_ns)
        g = self.game
        return {g.codemaker: view.remaining_ns[0], g.codebreaker: view.remaining_ns[1]}

    def on_move(self, at_ns: int) -> int | None:
        """The seat whose clock runs, or None."""
        if self.phase not in (Phase.GUESS, Phase.MARKS) or self.paused:
            return None
        view = self._clock.view(at_ns)
        if not view.running or view.on_move is None:
            return None
        return self.seat_of_role(view.on_move)

    def flag_due(self, at_ns: int) -> tuple[int, int] | None:
        """``(seat, flag_ns)`` when a running clock's time ran out by ``at_ns``."""
        if self.phase not in (Phase.GUESS, Phase.MARKS) or self.paused or self.game.ended_ns is not None:
            return None
        view = self._clock.view(at_ns)
        if not view.flags:
            return None
        return self.seat_of_role(view.flags[0]), view.flag_times_ns[0]

    def next_change_ns(self, at_ns: int, *, resolution_ns: int = 100_000_000) -> int | None:
        """When the shown time or a flag next changes (None: nothing runs)."""
        if self.phase not in (Phase.GUESS, Phase.MARKS) or self.game.ended_ns is not None:
            return None
        return self._clock.next_change_ns(at_ns, resolution_ns=resolution_ns)

    def read_requests(self) -> tuple[ReadRequest, ...]:
        """The readings the flow waits for, oldest first."""
        out: list[ReadRequest] = []
        g = self.game
        if self.phase in (Phase.GUESS, Phase.MARKS, Phase.REVEAL) or (
            self.phase is Phase.GAME_OVER and not g.final
        ):
            for r in g.rows:
                if r.guess_state is RowState.PENDING:
                    out.append(ReadRequest(g.number, r.number, "guess", r.guess_ns))
                if r.marks_state is RowState.PENDING and r.marks_ns is not None:
                    out.append(ReadRequest(g.number, r.number, "marks", r.marks_ns))
        if (
            self.phase in (Phase.GUESS, Phase.MARKS)
            and g.started_ns is not None
            and not g.secret_probed
            and g.ended_ns is None
        ):
            # Can the camera see the code under the shield? Stored, never shown.
            out.insert(0, ReadRequest(g.number, 0, "secret_hidden", g.started_ns))
        if self.phase is Phase.REVEAL and g.secret_state in (None, RowState.PENDING):
            out.append(ReadRequest(g.number, 0, "secret", g.ended_ns or self.last_ns))
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
            if r.guess is None or r.guess_state is not RowState.READ:
                break
            marks = r.marks if r.marks_state is RowState.READ else None
            extra: dict[str, Any] = {"guess_ns": r.guess_ns}
            if r.marks_ns is not None:
                extra["marks_ns"] = r.marks_ns
            if r.confirmed_by is not None:
                extra["confirmed_by"] = r.confirmed_by
            rows.append(Row(r.guess, marks, extra))
            if marks is None:
                break
        secret = g.secret
        if secret is None and reveal:
            secret = g.secret_hidden
        extra_g: dict[str, Any] = {
            "codemaker": self.players[g.codemaker],
            "codebreaker": self.players[g.codebreaker],
        }
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

    # ----------------------------------------------------------------- events

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

    # press ------------------------------------------------------------------

    def _on_press(self, payload: Mapping[str, Any], at_ns: int) -> Outcome:
        seat = _seat(payload)
        name = self.players[seat]
        if self.paused:
            return Outcome(ignored=f"{name} pressed while the clock is paused")
        if self.phase is Phase.MATCH_OVER:
            return Outcome(ignored=f"{name} pressed after the match ended")
        if self.phase is Phase.GAME_OVER and self.game.final:
            if seat != 1 - self.game.codemaker:
                return Outcome(ignored=f"{name} pressed; the next codemaker starts game {self.game.number + 1}")
            self.games.append(GameState(number=self.game.number + 1, codemaker=seat))
            self._clock = self._clock_factory()
            self.phase = Phase.SETUP
        g = self.game
        if self.phase is Phase.SETUP:
            if seat != g.codemaker:
                return Outcome(ignored=f"{name} pressed; the codemaker starts the codebreaker's clock")
            g.started_ns = at_ns
            self._clock_op(g, "start", 1, at_ns)
            self.phase = Phase.GUESS
            return Outcome(
                verdicts=(self._verdict("start", g, codemaker=self.players[g.codemaker],
                                        codebreaker=self.players[g.codebreaker]),),
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
            outcome = self._clock_op(g, "press", 1, at_ns)
            if outcome is not PressOutcome.ACCEPTED:
                g.clock_ops.pop()
                return Outcome(ignored=f"{name}'s press not taken by the clock ({outcome})")
            g.rows.append(FlowRow(number=number, guess_ns=at_ns))
            self.phase = Phase.MARKS
            return Outcome(lines=(f"game {g.number} row {number}: {name} confirmed a guess",))
        # MARKS
        if seat != g.codemaker:
            return Outcome(ignored=f"{name} pressed while {self.players[g.codemaker]}'s clock runs")
        row = g.rows[-1]
        outcome = self._clock_op(g, "press", 0, at_ns)
        if outcome is not PressOutcome.ACCEPTED:
            g.clock_ops.pop()
            return Outcome(ignored=f"{name}'s press not taken by the clock ({outcome})")
        g.rows[-1] = replace(row, marks_ns=at_ns, marks_state=RowState.PENDING)
        self.phase = Phase.GUESS
        lines = [f"game {g.number} row {row.number}: {name} confirmed the marks"]
        for move in g.standing_illegal:
            # Seed 004 §3.4: "As soon as the opponent makes a move of their
            # own this is considered an acceptance of the previous move."
            move.settled = "accepted"
            lines.append(f"game {g.number} row {move.row}: {name} played on: the illegal guess "
                         "is accepted")
        if row.number >= self.variant.rows:
            # The last row is marked: the game is over whatever the marks say.
            lines.extend(self._end_game(g, at_ns, "last row"))
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
            verdicts=(self._verdict("joint_confirm", g, row=rows[0]),),
            lines=(f"game {g.number} row {rows[0]}: both players confirm the row",),
        )

    # flag -------------------------------------------------------------------

    def _on_flag(self, payload: Mapping[str, Any], at_ns: int) -> Outcome:
        seat = _seat(payload)
        g = self.game
        if self.phase not in (Phase.GUESS, Phase.MARKS) or g.ended_ns is not None:
            return Outcome(ignored=f"flag of {self.players[seat]} after the game ended")
        role = g.role_of(seat)
        g.timeout = role
        lines = [f"game {g.number}: FLAG, {self.players[seat]} ({role.value}) ran out of time"]
        verdicts = [self._verdict("flag", g, player=self.players[seat], role=role.value)]
        lines.extend(self._end_game(g, at_ns, "flag"))
        return Outcome(verdicts=tuple(verdicts), lines=tuple(lines))

    # readings ---------------------------------------------------------------

    def _on_reading(self, payload: Mapping[str, Any], at_ns: int) -> Outcome:
        game = _int(payload, "game")
        phase = payload.get("phase")
        g = self.games[game - 1] if 1 <= game <= len(self.games) else None
        if g is None:
            return Outcome(ignored=f"reading for game {game}, which has not started")
        if phase == "secret":
            return self._on_secret_reading(g, payload)
        row_no = _int(payload, "row")
        if not 1 <= row_no <= len(g.rows):
            return Outcome(ignored=f"reading of row {row_no}, which is not confirmed")
        status = str(payload.get("status", ""))
        row = g.rows[row_no - 1]
        reading = dict(payload)
        if phase == "guess":
            if row.guess_state is not RowState.PENDING:
                return Outcome(ignored=f"second guess reading of row {row_no}")
            if status != OK:
                g.rows[row_no - 1] = replace(row, guess_state=RowState.CHECK, guess_reading=reading)
                return Outcome(
                    verdicts=(self._verdict("check", g, row=row_no, half="guess", status=status),),
                    lines=(f"game {g.number} row {row_no}: guess reading {status}: CHECK ROW {row_no}",),
                )
            guess = _code(payload.get("guess"), self.variant.holes, "reading.guess")
            g.rows[row_no - 1] = replace(row, guess=guess, guess_state=RowState.READ, guess_reading=reading)
            out = self._after_guess(g, row_no)
            return self._judge_after(g, row_no, out)
        if phase == "marks":
            if row.marks_state is not RowState.PENDING:
                return Outcome(ignored=f"second marks reading of row {row_no}")
            if status != OK:
                g.rows[row_no - 1] = replace(row, marks_state=RowState.CHECK, marks_reading=reading)
                return Outcome(
                    verdicts=(self._verdict("check", g, row=row_no, half="marks", status=status),),
                    lines=(f"game {g.number} row {row_no}: marks reading {status}: CHECK ROW {row_no}",),
                )
            marks = Feedback(_int(payload, "black"), _int(payload, "white"))
            g.rows[row_no - 1] = replace(row, marks=marks, marks_state=RowState.READ, marks_reading=reading)
            return self._judge_after(g, row_no, Outcome())
        raise FlowError(f"reading.phase: expected guess, marks or secret, got {phase!r}")

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
                if known.settled == "corrected":
                    known.settled = None  # illegal again; an accepted move stays accepted
            line = f"game {g.number} row {row_no}: ILLEGAL GUESS: {exc}"
            if known.number >= 2:
                # Seed 004 §3.4: "If the player commits a second illegal move
                # the arbiter should be called".
                line += f" ({name}'s illegal move {known.number} this game: call the arbiter)"
            return Outcome(
                verdicts=(self._verdict("illegal", g, row=row_no, reason=str(exc), player=name,
                                        count=known.number),),
                lines=(line,),
            )
        if known is not None and known.settled is None:
            known.settled = "corrected"
            return Outcome(lines=(f"game {g.number} row {row_no}: the guess is legal now",))
        return Outcome()

    def _on_secret_reading(self, g: GameState, payload: Mapping[str, Any]) -> Outcome:
        status = str(payload.get("status", ""))
        shield = payload.get("shield", "closed")
        if shield == "closed":
            g.secret_probed = True
            if g.secret_hidden is not None or status != OK:
                return Outcome()
            g.secret_hidden = _code(payload.get("code"), self.variant.holes, "reading.code")
            # Rows already read are judged exactly from now on; the code
            # itself is never shown.
            lines: list[str] = [f"game {g.number}: the camera saw the code as it was set "
                                "(kept, never shown): marks are checked exactly"]
            verdicts: list[dict[str, Any]] = [self._verdict("secret_seen", g)]
            out = self._judge(g)
            return Outcome(verdicts=(*verdicts, *out.verdicts), lines=(*lines, *out.lines))
        if g.secret_state is RowState.READ:
            return Outcome(ignored="second reading of the revealed secret")
        if status != OK:
            g.secret_state = RowState.CHECK
            return Outcome(
                verdicts=(self._verdict("check", g, row=0, half="secret", status=status),),
                lines=(f"game {g.number}: secret reading {status}: CHECK THE SECRET",),
            )
        return self._reveal(g, _code(payload.get("code"), self.variant.holes, "reading.code"), "camera")

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

    # arbiter ----------------------------------------------------------------

    def _on_arbiter(self, payload: Mapping[str, Any], at_ns: int) -> Outcome:
        action = payload.get("action")
        g = self.game
        if action == "pause":
            if self.paused:
                return Outcome(ignored="pause: already paused")
            self.paused = True
            if self.phase in (Phase.GUESS, Phase.MARKS) and g.ended_ns is None:
                self._clock_op(g, "pause", at_ns)
            return Outcome(lines=("arbiter: clock paused",))
        if action == "resume":
            if not self.paused:
                return Outcome(ignored="resume: not paused")
            self.paused = False
            self.awaiting_resume = False
            if self.phase in (Phase.GUESS, Phase.MARKS) and g.ended_ns is None:
                self._clock_op(g, "resume", at_ns)
            return Outcome(lines=("arbiter: clock resumed",))
        if action == "adjust":
            seat = _seat(payload)
            delta = _int(payload, "delta_ns")
            if g.started_ns is None or g.ended_ns is not None:
                return Outcome(ignored="adjust: no clock running")
            role = 0 if seat == g.codemaker else 1
            left = self._clock.view(at_ns).remaining_ns[role]
            self._clock_op(g, "adjust", role, max(0, left + delta), at_ns)
            return Outcome(lines=(f"arbiter: {self.players[seat]}'s time {delta / 1e9:+.1f} s",))
        if action == "confirm_row":
            return self._confirm_row(payload)
        if action == "confirm_secret":
            game = _int(payload, "game")
            if game != g.number or g.ended_ns is None:
                return Outcome(ignored=f"confirm_secret: game {game} is not waiting for its secret")
            if g.secret_state is RowState.READ:
                return Outcome(ignored="confirm_secret: the secret is already read")
            code = _code(payload.get("code"), self.variant.holes, "arbiter.code")
            return self._reveal(g, code, str(payload.get("by", "arbiter")))
        raise FlowError(f"arbiter.action: {action!r} is not one of pause, resume, adjust, confirm_row, confirm_secret")

    def _confirm_row(self, payload: Mapping[str, Any]) -> Outcome:
        game = _int(payload, "game")
        row_no = _int(payload, "row")
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
            guess = _code(payload.get("guess"), self.variant.holes, "arbiter.guess")
            guess_state = RowState.READ
        marks = row.marks
        marks_state = row.marks_state
        if row.marks_state is RowState.CHECK:
            marks = Feedback(_int(payload, "black"), _int(payload, "white"))
            marks_state = RowState.READ
        g.rows[row_no - 1] = replace(
            row, guess=guess, guess_state=guess_state, marks=marks, marks_state=marks_state,
            confirmed_by=by,
        )
        head = f"game {g.number} row {row_no}: confirmed by the {by}"
        out = Outcome(lines=(head,))
        if row.guess_state is RowState.CHECK:
            legal = self._after_guess(g, row_no)
            out = Outcome(verdicts=legal.verdicts, lines=(head, *legal.lines))
        return self._judge_after(g, row_no, out)

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
            guess = _code(payload.get("guess"), self.variant.holes, "arbiter.guess")
            guess_state = RowState.READ
        marks, marks_state = row.marks, row.marks_state
        if "black" in payload or "white" in payload:
            if row.marks_state is None:
                return Outcome(ignored=f"confirm_row: row {row_no} has no marks yet (the codemaker has not pressed)")
            marks = Feedback(_int(payload, "black"), _int(payload, "white"))
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
            confirmed_by=by,
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
        verdicts: list[dict[str, Any]] = [self._verdict(
            "entered", g, row=row_no, by=by,
            guess=list(guess) if guess is not None else None,
            black=None if marks is None else marks.black,
            white=None if marks is None else marks.white,
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
            or g.end_reason not in ("mis-mark", "solved")
            or g.secret_state is RowState.READ
            or row.marks_ns is None
            or g.ended_ns != row.marks_ns
        ):
            return []
        verdict = judge_game(self.game_record(g), self.variant)
        if (g.end_reason == "mis-mark" and verdict.mismarked_row == row_no
                and not verdict.mismark_by_timeout) or (
                g.end_reason == "solved" and verdict.solved_row == row_no):
            return []  # the corrected row still ends the game
        ended = g.ended_ns
        if g.clock_ops and g.clock_ops[-1][0] == "stop":
            g.clock_ops.pop()
        self._clock = self._clock_factory()
        for op, args in g.clock_ops:
            _run_clock_op(self._clock, op, args)
        g.ended_ns = None
        g.end_reason = None
        g.secret_state = None  # a secret reading that waited for a check is moot now
        self.phase = Phase.GUESS
        if self._clock.started and self._clock.view(ended).running:
            self._clock_op(g, "pause", ended)
        self.paused = True
        return [f"game {g.number}: row {row_no} corrected: the game goes on, "
                "paused; the arbiter resumes the clock"]

    def _on_boot(self, payload: Mapping[str, Any], at_ns: int) -> Outcome:
        # After a restart the match waits, paused, for the arbiter (issue 5 §2).
        g = self.game
        was_paused = self.paused
        self.paused = True
        self.awaiting_resume = True
        if not was_paused and self.phase in (Phase.GUESS, Phase.MARKS) and g.ended_ns is None:
            self._clock_op(g, "pause", at_ns)
        return Outcome(lines=("table restarted: the clock is paused; the arbiter resumes it",))

    # judging ----------------------------------------------------------------

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
        verdict = judge_game(record, self.variant)
        g.verdict = verdict
        verdicts: list[dict[str, Any]] = []
        lines: list[str] = []
        # Report each row once, in order, as soon as it is fully read.
        for number, row in enumerate(record.rows, start=1):
            if row.marks is None or number in g.reported:
                continue
            g.reported.add(number)
            expected = None
            incomplete = is_incomplete(row.guess, self.variant)
            if verdict.expected_marks is not None and not incomplete:
                exp = verdict.expected_marks[number - 1]
                expected = {"black": exp.black, "white": exp.white}
            verdicts.append(self._verdict(
                "row", g, row=number, guess=list(row.guess),
                black=row.marks.black, white=row.marks.white,
                exact=record.secret is not None, expected=expected,
            ))
            lines.append(
                f"game {g.number} row {number}: {' '.join(row.guess)} -> {row.marks}"
                + (" (incomplete row: marks not judged)" if incomplete else "")
                + ("" if expected is None else (
                    " (correct)" if row.marks == Feedback(expected["black"], expected["white"])
                    else f" (should be {expected['black']}B{expected['white']}W)"))
            )
        if record.secret is not None and verdict.mismarked_row is not None and not verdict.mismark_by_timeout:
            k = verdict.mismarked_row
            if g.announced_mismark != k:
                g.announced_mismark = k
                verdicts.append(self._verdict("mismark", g, row=k, attempts=verdict.attempts,
                                              penalty_vp=verdict.codemaker_penalty_vp))
                lines.append(f"game {g.number}: MIS-MARK on row {k}: "
                             f"{self.players[g.codebreaker]} is credited with {verdict.attempts} attempts")
                if g.ended_ns is None:
                    marked = g.rows[k - 1]
                    lines.extend(self._end_game(g, marked.marks_ns or self.last_ns, "mis-mark"))
        elif record.secret is None and verdict.consistent == 0 and not g.announced_inconsistent:
            g.announced_inconsistent = True
            verdicts.append(self._verdict("inconsistent", g, suspects=list(verdict.suspect_rows or ())))
            lines.append(f"game {g.number}: no code fits the marks: some row is mis-marked; "
                         "call the arbiter (judged when the secret is revealed)")
        if g.ended_ns is None and verdict.solved_row is not None:
            solved = g.rows[verdict.solved_row - 1]
            if solved.marks_state is RowState.READ:
                lines.extend(self._end_game(g, solved.marks_ns or self.last_ns, "solved"))
        return Outcome(verdicts=tuple(verdicts), lines=tuple(lines))

    def _end_game(self, g: GameState, at_ns: int, reason: str) -> list[str]:
        if g.ended_ns is not None:
            return []
        g.ended_ns = at_ns
        g.end_reason = reason
        self._stop_clock(g, at_ns)
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
        verdict = judge_game(record, self.variant)
        g.verdict = verdict
        self.phase = Phase.GAME_OVER
        maker, breaker = self.players[g.codemaker], self.players[g.codebreaker]
        lines = [f"game {g.number}: {breaker} is credited with {verdict.attempts} attempts"
                 + (f"; {maker} loses {verdict.codemaker_penalty_vp} VP" if verdict.codemaker_penalty_vp else "")]
        verdicts = [self._verdict("game", g, verdict=verdict.to_json())]
        if len([x for x in self.games if x.final]) >= self.variant.games_per_match:
            mv = judge_match(self.match_record(), self.variant)
            self.match_verdict = mv
            self.phase = Phase.MATCH_OVER
            match: dict[str, Any] = {"what": "match", "vp": mv.vp, "attempts": mv.attempts,
                                     "penalties_vp": mv.penalties_vp}
            illegal = self.illegal_counts()
            if any(illegal.values()):
                # Only when there were any, so that journals written before
                # the count existed still replay to the same verdicts.
                match["illegal_moves"] = illegal
            verdicts.append(match)
            vp = ", ".join(f"{p} {mv.vp[p]:g} VP ({mv.attempts[p]} attempts)" for p in self.players)
            if any(illegal.values()):
                vp += "; illegal moves: " + ", ".join(f"{p} {illegal[p]}" for p in self.players)
            lines.append(f"match over: {vp}")
        return Outcome(verdicts=tuple(verdicts), lines=tuple(lines))

    # clock ------------------------------------------------------------------

    def _clock_op(self, g: GameState, op: str, *args: int) -> PressOutcome | None:
        g.clock_ops.append((op, args))
        return _run_clock_op(self._clock, op, args)

    def _stop_clock(self, g: GameState, at_ns: int) -> None:
        """Stop the game's clock at ``at_ns``, forgetting operations after it
        (a press that raced the reading which ended the game)."""
        if any(args[-1] > at_ns for _, args in g.clock_ops):
            g.clock_ops = [(op, args) for op, args in g.clock_ops if args[-1] <= at_ns]
            self._clock = self._clock_factory()
            for op, args in g.clock_ops:
                _run_clock_op(self._clock, op, args)
        if self._clock.started:
            g.clock_ops.append(("stop", (at_ns,)))
            _run_clock_op(self._clock, "stop", (at_ns,))

    def _verdict(self, what: str, g: GameState, **fields: Any) -> dict[str, Any]:
        return {"what": what, "game": g.number, **fields}


def _run_clock_op(clock: Clock, op: str, args: tuple[int, ...]) -> PressOutcome | None:
    if op == "start":
        clock.start(args[0], args[1])
    elif op == "press":
        return clock.press(args[0], args[1])
    elif op == "pause":
        clock.pause(args[0])
    elif op == "resume":
        clock.resume(args[0])
    elif op == "adjust":
        clock.adjust(args[0], remaining_ns=args[1], at_ns=args[2])
    elif op == "stop":
        clock.stop(args[0])
    else:  # pragma: no cover - the flow writes only the ops above
        raise FlowError(f"unknown clock operation {op!r}")
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
) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Feed ``events`` (kind, payload, at_ns) to ``flow`` and pair each verdict
    it produces with the verdict journaled for it (None when missing).

    The journaled verdicts must come in the same order as the flow produces
    them; any pair that differs is a mismatch for the caller to report.
    """
    produced: list[dict[str, Any]] = []
    recorded: list[dict[str, Any]] = []
    for kind, payload, at_ns in events:
        if kind == "verdict":
            recorded.append(dict(payload))
            continue
        produced.extend(flow.apply(kind, payload, at_ns).verdicts)
    pairs: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    for i, v in enumerate(produced):
        pairs.append((v, recorded[i] if i < len(recorded) else None))
    return pairs
