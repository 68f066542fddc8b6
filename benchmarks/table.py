"""Benchmark of the whole table: press to verdict, with the real vision, in real time.

A full simulated MSO match (two games) is played in real time by a
"players" thread against the table program as it runs at the table: the
vision worker in its own thread reads camera frames, the main loop journals
every event (SQLite, WAL, synchronous=FULL) and applies it to the match flow.
The camera is a source that serves, at ``--fps`` frames a second and stamped
with ``time.monotonic_ns()`` when served, a photo of the board as it is now;
the photos are rendered before the match (rendering is the camera's cost,
not the table's).

Measured:

* **press to verdict**: from the monotonic stamp of the codemaker's press
  confirming the marks to the moment the flow's verdict on that row exists
  (frame after the press read, accepted, journaled, judged, verdict
  journaled). Median and p95 over every row of the match.
* **press to reading** (guesses): the same for the codebreaker's press, up
  to the guess reading being applied.
* **rss_mb**: peak resident memory of this process (the table process).

Run: ``.venv/bin/python benchmarks/table.py [--fps 30] [--frames-to-accept 3]``.
The last line is ONE JSON object of named numbers.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pegwatch.device.table.journal import Journal
from pegwatch.device.table.program import TableProgram
from pegwatch.device.table.vision_worker import VisionWorker
from pegwatch.rules.codes import score
from pegwatch.rules.flow import MatchFlow, Phase, RowState
from pegwatch.simulation.demo import Scene, calibrated_reader

PLAYERS = ("Alice", "Bob")
GAMES = (
    (("red", "green", "blue", "yellow"), [
        ("red", "red", "white", "white"), ("green", "red", "orange", "orange"),
        ("red", "blue", "green", "purple"), ("blue", "green", "red", "yellow"),
        ("black", "black", "blue", "yellow"), ("red", "green", "blue", "yellow"),
    ]),
    (("orange", "purple", "purple", "white"), [
        ("orange", "orange", "purple", "purple"), ("purple", "orange", "white", "red"),
        ("white", "white", "black", "black"), ("orange", "purple", "white", "purple"),
        ("green", "purple", "purple", "white"), ("orange", "purple", "purple", "white"),
    ]),
)


class LiveSource:
    """A camera: the photo of the board as it is now, at ``fps``, stamped when served."""

    def __init__(self, fps: float) -> None:
        self.period_ns = int(1e9 / fps)
        self.image: Any = None
        self._next = time.monotonic_ns()
        self.lock = threading.Lock()

    def read(self) -> tuple[Any, int]:
        now = time.monotonic_ns()
        if now < self._next:
            time.sleep((self._next - now) / 1e9)
            now = time.monotonic_ns()
        self._next = max(self._next + self.period_ns, now)
        with self.lock:
            return self.image, now


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fps", type=float, default=30.0, help="camera frames per second")
    parser.add_argument("--frames-to-accept", type=int, default=3,
                        help="frames a reading must hold (the configuration's default: 3)")
    parser.add_argument("--think", type=float, default=0.4, help="seconds between board change and press")
    args = parser.parse_args()

    print("calibrating ...", flush=True)
    profile, reader, conditions = calibrated_reader()
    from pegwatch.simulation.render import BoardContents

    scene = Scene(profile, BoardContents.empty(profile), conditions)
    source = LiveSource(args.fps)

    def show() -> None:
        image = scene.photo()
        with source.lock:
            source.image = image

    scene.new_game(GAMES[0][0])
    show()
    tmp = Path(tempfile.mkdtemp(prefix="pegwatch-bench-"))
    flow = MatchFlow(PLAYERS)
    worker = VisionWorker(source, reader, submit=lambda *a: None,
                          frames_to_accept=args.frames_to_accept, give_up_frames=30)
    program = TableProgram(flow, Journal(tmp / "bench.sqlite"), worker=worker)
    program.writer.append("match", {"players": list(PLAYERS), "rules": "mso",
                                    "clock": "mso-mastermind"}, at_ns=time.monotonic_ns())
    stop = threading.Event()
    loop = threading.Thread(target=program.run, args=(stop,), kwargs={"period_s": 0.005}, daemon=True)
    loop.start()
    worker.start()

    verdict_ms: list[float] = []
    reading_ms: list[float] = []

    def wait(predicate: Any, timeout: float = 10.0) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            time.sleep(0.001)
        return False

    def press(seat: int) -> int:
        stamp = time.monotonic_ns()
        program.press(seat, stamp)
        return stamp

    started = time.monotonic()
    try:
        for number, (secret, guesses) in enumerate(GAMES, start=1):
            maker, breaker = (number - 1) % 2, number % 2
            if number > 1:
                scene.new_game(secret)
                show()
            time.sleep(args.think)
            press(maker)
            wait(lambda: flow.phase is Phase.GUESS)
            time.sleep(args.think)
            scene.shield(open_=False)
            show()
            for row, guess in enumerate(guesses, start=1):
                scene.place_guess(row, guess)
                show()
                time.sleep(args.think)
                t = press(breaker)
                ok = wait(lambda row=row: len(flow.game.rows) >= row
                          and flow.game.rows[row - 1].guess_state is not RowState.PENDING)
                if ok:
                    reading_ms.append((time.monotonic_ns() - t) / 1e6)
                black, white = score(secret, guess)
                scene.place_keys(row, black, white)
                show()
                time.sleep(args.think)
                t = press(maker)
                key = (number, row)
                if wait(lambda key=key: key in program.verdict_ns):
                    verdict_ms.append((program.verdict_ns[key] - t) / 1e6)
                if flow.game.ended_ns is not None:
                    break
            scene.shield(open_=True)
            show()
            wait(lambda number=number: flow.games[number - 1].final, timeout=10)
    finally:
        stop.set()
        loop.join(2)
        program.close()
    elapsed = time.monotonic() - started
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def q(values: list[float], p: float) -> float:
        if not values:
            return float("nan")
        s = sorted(values)
        return s[min(len(s) - 1, round(p * (len(s) - 1)))]

    print(f"match: {flow.phase.value}; {len(verdict_ms)} row verdicts, {len(reading_ms)} guess readings, "
          f"{worker.frames_read} frames read in {elapsed:.1f} s ({worker.frames_read / elapsed:.1f} frames/s)")
    print(f"press -> verdict (marks): median {statistics.median(verdict_ms):.0f} ms, "
          f"p95 {q(verdict_ms, 0.95):.0f} ms, max {max(verdict_ms):.0f} ms")
    print(f"press -> reading (guess): median {statistics.median(reading_ms):.0f} ms, "
          f"p95 {q(reading_ms, 0.95):.0f} ms")
    print(f"peak RSS {rss_mb:.0f} MB")
    figures = {
        "press_to_verdict_ms_median": round(statistics.median(verdict_ms), 1),
        "press_to_verdict_ms_p95": round(q(verdict_ms, 0.95), 1),
        "press_to_verdict_ms_max": round(max(verdict_ms), 1),
        "press_to_reading_ms_median": round(statistics.median(reading_ms), 1),
        "press_to_reading_ms_p95": round(q(reading_ms, 0.95), 1),
        "rows": len(verdict_ms),
        "frames_per_s": round(worker.frames_read / elapsed, 1),
        "frames_to_accept": args.frames_to_accept,
        "rss_mb": round(rss_mb, 1),
        "match_complete": flow.phase is Phase.MATCH_OVER,
    }
    print(json.dumps(figures))
    return 0 if flow.phase is Phase.MATCH_OVER else 1


if __name__ == "__main__":
    sys.exit(main())
