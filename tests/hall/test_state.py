"""The state message read from a table program: mis-marks, rows for the arbiter, flags, pause; never the secret."""

from __future__ import annotations

import json

from hall_kit import GAME_1, SECRET, S

from pegwatch.device.table.hall.state import build_state
from pegwatch.device.table.program import TableProgram
from pegwatch.hub import wire
from pegwatch.simulation.demo import VirtualClock


class Table:
    def __init__(self, tmp_path):
        self.clock = VirtualClock()
        self.program = TableProgram.open(tmp_path / "j.sqlite", players=("Ann", "Bob"), now_ns=self.clock)

    def step(self, seconds=0.2):
        self.clock.advance(int(seconds * S))
        self.program.step()

    def press(self, seat):
        self.step()
        self.program.press(seat)
        self.program.step()

    def reading(self, row, phase, guess, black=0, white=0, status="ok", code=None):
        self.step()
        payload = {"game": 1, "row": row, "phase": phase, "guess": list(guess), "black": black, "white": white,
                   "status": status, "confidence": 0.9, "frame_ns": self.clock()}
        if code is not None:
            payload.update(row=0, phase="secret", shield="closed", code=list(code))
        self.program.submit("reading", payload)
        self.program.step()

    def state(self) -> wire.State:
        state = build_state(self.program, "7")
        assert wire.parse_state(wire.format_state(state)) == state
        assert json.dumps(list(SECRET), separators=(",", ":")) not in wire.format_state(state).decode()
        return state


def test_a_mis_mark_and_a_row_for_the_arbiter_show_in_the_state(tmp_path) -> None:
    t = Table(tmp_path)
    try:
        assert t.state().phase == "setup" and t.state().turn is None
        t.press(0)
        t.reading(0, "secret", (), code=SECRET)  # the secret seen under the shield
        guess, black, white = GAME_1[0]
        t.press(1)
        t.reading(1, "guess", guess)
        t.press(0)
        t.reading(1, "marks", guess, black, white + 1)  # one white too many: a mis-mark
        state = t.state()
        assert state.mismarks == (1,) and state.rows[0].verdict == "mismark"
        assert state.rows[0].guess == guess and (state.rows[0].black, state.rows[0].white) == (0, 3)
    finally:
        t.program.close()


def test_an_unreadable_row_waits_for_the_arbiter_and_a_pause_stops_both_clocks(tmp_path) -> None:
    t = Table(tmp_path)
    try:
        t.press(0)
        t.press(1)
        t.reading(1, "guess", ("red", "unknown", "blue", "blue"), status="unknown")
        state = t.state()
        assert 1 in state.uncertain_rows and state.rows[0].verdict == "unsure" and state.rows[0].uncertain
        assert state.rows[0].guess == ("red", None, "blue", "blue")
        assert state.turn == "white" and state.clocks[0].running
        t.program.arbiter("pause")
        t.step()
        state = t.state()
        assert state.paused and state.turn is None and not any(c.running for c in state.clocks)
    finally:
        t.program.close()


def test_a_flag_is_named_by_its_seat(tmp_path) -> None:
    t = Table(tmp_path)
    try:
        t.press(0)  # Bob's 8 minutes run
        for _ in range(100):
            t.step(6)
        state = t.state()
        assert state.flags == ("black",) and state.clocks[1].remaining_ms == 0
    finally:
        t.program.close()
