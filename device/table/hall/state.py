"""The table's live ``state`` message, read from the table program as its display reads it.

:func:`build_state` takes the program's lock for the moment it reads (as
the display loop's model does), from the publisher's thread: the clock
thread is never made to wait for the network. The state holds the players,
both clocks as read now (the page runs them from the moment the hub
received the message), the current game's rows as read with their
verdicts, flags, mis-marks, rows waiting for the arbiter and alarms. It
never holds the secret: not the code under the shield, not the one shown
at the end (the game's result carries that).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pegwatch.device.table.hall.messages import SKIPPED_KINDS
from pegwatch.hub.wire import PLAYERS, ClockReading, Row, State
from pegwatch.rules.flow.state import FlowRow, GameState, Phase, RowState
from pegwatch.rules.flow.verdicts import BoundedJudged, Mismark

if TYPE_CHECKING:
    from pegwatch.device.table.program import TableProgram

__all__ = ["build_state", "match_id"]

_UNREAD = frozenset({"unknown", "occluded"})


def match_id(program: TableProgram) -> str:
    """The journal's random match id (the ``match`` of every message)."""
    return program.journal.match_id or "unknown"


def _row(row: FlowRow, mismarked: set[int], bounded: dict[int, str]) -> Row:
    guess = row.guess if row.guess is not None else row.seen_guess
    holes = tuple(None if peg in _UNREAD else peg for peg in (guess or ()))
    marks_read = row.marks is not None and row.marks_state is RowState.READ
    if row.number in mismarked or bounded.get(row.number) == "mismark":
        verdict = "mismark"
    elif row.needs_check or bounded.get(row.number) == "unsure" or (
        RowState.BOUNDED in (row.guess_state, row.marks_state) and row.number not in bounded
    ):
        verdict = "unsure"
    elif row.guess_state is RowState.PENDING or row.marks_state in (None, RowState.PENDING):
        verdict = "pending"
    else:
        verdict = "ok"
    return Row(
        row=row.number, guess=holes,
        black=row.marks.black if marks_read and row.marks is not None else None,
        white=row.marks.white if marks_read and row.marks is not None else None,
        verdict=verdict, uncertain=verdict == "unsure" or row.low_trust,
    )


def _mismarks(program: TableProgram, g: GameState) -> tuple[set[int], dict[int, str]]:
    mismarked: set[int] = set()
    bounded: dict[int, str] = {}
    for verdict in program.verdicts:
        if isinstance(verdict, Mismark) and verdict.game == g.number:
            mismarked.add(verdict.row)
        elif isinstance(verdict, BoundedJudged) and verdict.game == g.number:
            bounded[verdict.row] = verdict.verdict
    if g.verdict is not None and g.verdict.mismarked_row is not None:
        mismarked.add(g.verdict.mismarked_row)
    return mismarked, bounded


def build_state(program: TableProgram, table: str, *, raw_now: int | None = None,
                match: str | None = None) -> State:
    """The state of ``program`` now (its own clock), as table ``table`` publishes it
    (``match``: the journal's match id, when the caller keeps it)."""
    match = match_id(program) if match is None else match
    with program._lock:  # as the display's model is read: a moment, between two events
        raw = program.now_ns() if raw_now is None else raw_now
        cont = raw + program.offset_ns
        flow = program.flow
        g = flow.game
        view = flow.clock_view(cont)
        remaining = {g.codemaker: view.remaining_ns[0], g.codebreaker: view.remaining_ns[1]}
        # Only a game's running phases have a clock on move (MatchFlow.on_move says which).
        running = flow.phase in (Phase.GUESS, Phase.MARKS) and not flow.paused
        on_move = flow.on_move(cont, view=view) if running else None  # the same view: read once
        mismarked, bounded = _mismarks(program, g)
        rows = tuple(_row(r, mismarked, bounded) for r in g.rows)
        uncertain = sorted({*flow.checks(), *(r.row for r in rows if r.uncertain)})
        flags = tuple(PLAYERS[flow.seat_of_role(role)] for role in view.flags)
        alarms = [a for a in (program.alarm, program.camera_message) if a]
        if g.secret_changed:
            alarms.append("SECRET CHANGED")
        alarms.extend(f"illegal row {m.row}" for m in g.standing_illegal)
        return State(
            table=table, match=match, seq=program.journal.last_seq, game=g.number,
            players=flow.players, turn=None if on_move is None else PLAYERS[on_move],
            clocks=tuple(ClockReading(remaining[seat] // 1_000_000, on_move == seat)  # type: ignore[arg-type]
                         for seat in (0, 1)),
            rows=rows, flags=flags, mismarks=tuple(sorted(mismarked)),
            uncertain_rows=tuple(uncertain), alarms=tuple(alarms), phase=flow.phase.value,
            paused=flow.paused, event_seq=program.journal.last_seq_except(SKIPPED_KINDS),
        )
