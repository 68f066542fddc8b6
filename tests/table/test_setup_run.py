"""Issue 15's "done when": ``pegwatch run`` with the shipped configuration, no
calibration and a rendered camera walks the guided set-up on the mock
buttons and ends reading rows.

The shipped ``firmware_config/pegwatch.toml`` is used as it is: off a Pi its
``auto`` settings give mock pins and the renderer, its ``calibration = ""``
gives no calibration. The desk stands for a fresh table: it asks for the
set-up instead of calibrating its rendered board itself, and the test lays
the board out as the arbiter would, pressing the buttons through the pins
and waiting for what the journal says, never for a fixed time.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from test_setup_guided import CAMERA, Board

from pegwatch.device.table.config import DEFAULT_CONFIG, load_config
from pegwatch.device.table.journal import Journal
from pegwatch.device.table.run import run_table
from pegwatch.simulation.camera import RenderedSource
from pegwatch.simulation.desk import SimulatedDesk
from pegwatch.vision.calibration import Calibration
from pegwatch.vision.profile import load_profile

WAIT_S = 90.0


class _Keys:
    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


class FreshTableDesk(SimulatedDesk):
    """A table just unpacked: a rendered camera over a board the test lays out, and no calibration."""

    guided_setup = True

    def __init__(self, board: Board) -> None:
        super().__init__(seed=3)
        self.board_contents = board
        self.ready = threading.Event()
        self.hardware = None
        self.quit = None

    def open_source(self, spec, *, size):
        profile = load_profile("invicta-12x4")
        return RenderedSource(profile, lambda: self.board_contents.contents, CAMERA, seed=3)

    def keyboard(self, hardware, *, on_quit, on_confirm):
        self.hardware, self.quit = hardware, on_quit
        self.ready.set()
        return _Keys()

    def help_lines(self):
        return []


def _events(journal: Path, kind: str) -> list:
    if not journal.exists():
        return []
    with Journal(journal, create=False) as j:
        return [e.payload for e in j.events() if e.kind == kind]


def _wait_for(what: str, test) -> None:
    deadline = time.monotonic() + WAIT_S
    while not test():
        if time.monotonic() > deadline:
            pytest.fail(f"the table never got to: {what}")
        time.sleep(0.02)  # a poll of the condition, not a wait for time to pass


@pytest.mark.slow
def test_a_fresh_table_is_set_up_with_its_own_buttons_and_then_reads_rows(tmp_path, monkeypatch):
    monkeypatch.delenv("PEGWATCH_CONFIG", raising=False)
    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)  # the shipped [display] save writes pegwatch-display.png here
    shipped = load_config(DEFAULT_CONFIG)
    assert shipped.calibration is None and shipped.camera == "render" and shipped.simulated
    journal = tmp_path / "state" / "pegwatch" / "journal.sqlite"
    assert shipped.journal == journal

    board = Board()  # clear, shield closed
    desk = FreshTableDesk(board)
    result: dict[str, int] = {}
    loop = threading.Thread(
        target=lambda: result.setdefault("rc", run_table(config=str(DEFAULT_CONFIG), desk=lambda: desk)),
        daemon=True,
    )
    loop.start()
    assert desk.ready.wait(WAIT_S), "the table never built its buttons"
    hw = desk.hardware

    def said(words: str):
        return lambda: any(words in str(p.get("status", "")) for p in _events(journal, "setup"))

    def tap(button) -> None:
        button.pin.drive_low()
        button.pin.drive_high()

    try:
        _wait_for("the board found by its markers", said("board found by 4 markers"))
        tap(hw.arbiter_button)
        _wait_for("asked to clear the board", said("clear the board"))
        tap(hw.arbiter_button)
        _wait_for("asked how to learn the colours", said("colours from a card or layout"))
        # While the set-up talks, the players' buttons answer it: no press reaches the clock.
        assert not _events(journal, "press")
        tap(hw.player_buttons[0])  # left: a card or the layout
        _wait_for("asked for the card or the layout", said("a peg on each circle"))
        board.lay_out()
        tap(hw.arbiter_button)
        _wait_for("the set-up done", said("done; the table reads with full trust"))
        # The first game: the board cleared, the codemaker starts, a guess is read by the camera.
        board.clear()
        tap(hw.player_buttons[0])
        _wait_for("the codemaker's press", lambda: len(_events(journal, "press")) == 1)
        board.place(1, guess=("green", "blue", "blue", "red"))
        tap(hw.player_buttons[1])
        _wait_for("the guess read", lambda: any(
            p.get("phase") == "guess" and p.get("status") == "ok" for p in _events(journal, "reading")))
    finally:
        desk.quit()
        loop.join(WAIT_S)
    assert not loop.is_alive() and result["rc"] == 0
    reading = next(p for p in _events(journal, "reading") if p.get("phase") == "guess")
    assert list(reading["guess"]) == ["green", "blue", "blue", "red"] and reading["row"] == 1
    # The calibration is kept beside the journal: the next start carries on reading.
    kept = Calibration.load(journal.parent / "calibration.json")
    assert kept.trust == "full" and kept.method == "markers"
    assert hw.is_closed
