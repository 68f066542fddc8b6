"""Journals for the table-detail and report tests.

``demo_journal()`` is the real ``pegwatch demo --fast`` journal, played once
per test run (it takes most of these tests' time) and shared by
test_detail.py and test_report.py. ``Table`` plays small matches on a real
``TableProgram`` with a virtual clock and no camera: readings are submitted
as the vision worker would, with a JPEG as evidence when one is given.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from pegwatch.device.cli import main
from pegwatch.device.table.program import TableProgram
from pegwatch.device.table.report import journal_events
from pegwatch.simulation.demo import VirtualClock

S = 1_000_000_000
MS = 1_000_000
SECRET = ("red", "green", "blue", "yellow")


@functools.cache
def demo_journal() -> Path:
    """The journal of the real scripted demo (a mis-mark, a check the arbiter confirms, a flag)."""
    folder = Path(tempfile.mkdtemp(prefix="pegwatch-report-"))
    atexit.register(shutil.rmtree, folder, True)
    path = folder / "demo.sqlite"
    assert main(["demo", "--fast", "--journal", str(path)]) == 0
    return path


class Table:
    """A table program on a virtual clock: Ann (seat 0) sets the code of game 1, Bob breaks it."""

    def __init__(self, path: Path, players: tuple[str, str] = ("Ann", "Bob"), *,
                 start_ns: int | None = None) -> None:
        self.path = path
        self.clock = VirtualClock() if start_ns is None else VirtualClock(start_ns)
        self.program = TableProgram.open(path, players=players, now_ns=self.clock)

    def close(self) -> None:
        self.program.close()

    def wait(self, seconds: float) -> None:
        self.clock.advance(round(seconds * S))
        self.program.step()

    def _event(self, kind: str, payload: dict, *, after: float = 0.2, jpeg: bytes | None = None) -> None:
        self.clock.advance(round(after * S))
        self.program.submit(kind, payload, jpeg=jpeg)
        self.program.step()

    def press(self, seat: int, *, after: float) -> None:
        self._event("press", {"player": seat}, after=after)

    def secret(self, shield: str, code=SECRET, *, game: int = 1, jpeg: bytes | None = None) -> None:
        self._event("reading", {"game": game, "row": 0, "phase": "secret", "code": list(code),
                                "shield": shield, "status": "ok", "confidence": [1.0] * len(code),
                                "trust": "full", "frame_ns": self.clock()}, jpeg=jpeg)

    def guess(self, row: int, guess, *, game: int = 1, jpeg: bytes | None = None) -> None:
        self._event("reading", {"game": game, "row": row, "phase": "guess", "guess": list(guess),
                                "status": "ok", "confidence": [0.9] * len(guess), "trust": "full",
                                "black": 0, "white": 0, "keys_status": "empty",
                                "frame_ns": self.clock()}, jpeg=jpeg)

    def marks(self, row: int, guess, black: int, white: int, *, game: int = 1, status: str = "ok",
              jpeg: bytes | None = None) -> None:
        holes = list(guess) if status == "ok" else [status] * len(guess)
        self._event("reading", {"game": game, "row": row, "phase": "marks", "guess": holes,
                                "status": status, "keys_status": status, "black": black, "white": white,
                                "confidence": [0.9 if status == "ok" else 0.0] * len(guess),
                                "trust": "full", "frame_ns": self.clock()}, jpeg=jpeg)

    def arbiter(self, action: str, *, after: float = 1.0, **payload) -> None:
        self._event("arbiter", {"action": action, **payload}, after=after)

    def ruling(self, action: str, *, after: float = 1.0, why: str = "", **payload) -> None:
        self._event("ruling", {"action": action, **payload, "by": "arbiter", "why": why}, after=after)

    def events(self) -> list[dict]:
        """The journal as the report reads it (clocks replayed)."""
        return list(journal_events(self.path).events)
