"""Benchmark of the table's button path and the small display.

Everything measured drives the real match table, as ``pegwatch run``
builds it: :class:`~pegwatch.device.table.program.TableProgram` on a
journal, :class:`~pegwatch.device.hardware.gpio.TableHardware` on gpiozero's
MockFactory pins, the buttons wired through
:class:`~pegwatch.device.table.run.ArbiterButton`, and a main loop doing
what ``pegwatch run``'s does (``program.step(timeout=0.02)``, then the LEDs
follow the running seat). Measured, on this machine:

* **press to state**: a player's button pin is driven low; the time until
  the table's state has changed (the seat whose clock runs, read by the main
  loop right after the step that took the press), through the whole path:
  mock pin edge, software debounce, ``ArbiterButton``, ``TableProgram.press``
  onto the queue, the main loop waking, **the journal append (SQLite WAL,
  ``synchronous=FULL``: an fsync)**, ``MatchFlow.apply``. The LEDs are set
  right after. Median, p95 and max over many presses: each match's game 1
  (the codemaker's start, then guesses and marks to row 12), a fresh
  journal per match.

  Because the table journals every press before acting on it, the figure
  is mostly the disk's fsync. It is measured twice: with the journal in a
  temporary directory on the normal disk (``press_to_state_*``; change it
  with ``--disk-dir``) and in ``/dev/shm`` when there is one
  (``press_to_state_shm_*``: a RAM file system, where fsync costs next to
  nothing), which isolates the CPU path. Until issue 13 this benchmark drove
  a second, bare-clock pipeline that journaled nothing (0.32 ms median on
  the development machine); the ``shm`` figure is the one to compare with
  that, the disk figure is what a press costs at a real table.

  As before, the lock-outs are shortened (1 ms for the pins' debounce and
  the clock's own per-player debounce) so that presses can follow each
  other within milliseconds; the path is the same as with the defaults.
* **render**: one 128x64 frame drawn with Pillow (and the same sent to a
  luma ``dummy`` device).
* **display CPU**: process CPU time (``time.process_time``) while a
  :class:`~pegwatch.device.display.loop.DisplayLoop` keeps a luma dummy
  device showing the real table's ``display_model`` at up to 10 frames/s,
  as a percentage of one core, with the codebreaker's clock running.
  Measured with tenths showing (a new face every 100 ms: the worst case)
  and with seconds, while the table's main loop is idle (as before: the
  display's own cost), and once more with tenths showing and the table's
  main loop running too (``table_cpu_percent``: its 50 Hz step, the
  journaled heartbeat once a second, plus the display).

Run: ``.venv/bin/python benchmarks/clock.py [--presses N] [--seconds S]``.
The last line is one JSON object of named numbers.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpiozero.pins.mock import MockFactory, MockPWMPin

from pegwatch.device.display.devices import open_display
from pegwatch.device.display.loop import DisplayLoop
from pegwatch.device.display.model import DisplayModel, PlayerFace
from pegwatch.device.display.render import render
from pegwatch.device.hardware.buzzer import BuzzerSettings
from pegwatch.device.hardware.gpio import TableHardware
from pegwatch.device.hardware.pins import PinMap
from pegwatch.device.table.journal import Journal
from pegwatch.device.table.program import TableProgram
from pegwatch.device.table.run import ArbiterButton, TableLoop
from pegwatch.rules.clock.controls import TimeControl
from pegwatch.rules.clock.engine import Clock
from pegwatch.rules.flow import ROLES, MatchFlow
from pegwatch.rules.record import Role

S = 1_000_000_000
MS = 1_000_000
PLAYERS = ("Alice", "Bob")
#: Presses in one game with no readings: the start, then 12 guesses and 12 marks.
PRESSES_PER_GAME = 25


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


class Table:
    """The real table on mock pins, with ``pegwatch run``'s main loop in a thread.

    ``when_turned`` is set by the loop each time it sees the running seat
    change, with the ``perf_counter_ns`` at which it saw it.
    """

    def __init__(self, journal: Path, hardware: TableHardware,
                 clock_factory: Callable[[], Clock]) -> None:
        self.hardware = hardware
        flow = MatchFlow(PLAYERS, clock_factory=clock_factory)
        self.program = TableProgram(flow, Journal(journal), sounder=hardware.sounder)
        self.program.writer.append("match", {"players": list(PLAYERS), "rules": "mso",
                                             "clock": "mso-mastermind"}, at_ns=time.monotonic_ns())
        ArbiterButton(self.program).attach(hardware)
        self.wake_display: Callable[[], None] | None = None
        self.turned = threading.Event()
        self.turned_at = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def running_seat(self) -> int | None:
        return self.program.running_seat(time.monotonic_ns())

    def start_loop(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="table-main", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        # What pegwatch run's main loop does (device/table/run.py), minus the watchdog.
        loop = TableLoop(self.program, self.hardware)
        while not self._stop.is_set():
            handled, turned = loop.step(timeout=0.02)
            if turned:
                self.turned_at = time.perf_counter_ns()
                self.turned.set()
            if self.wake_display is not None and (handled or turned):
                self.wake_display()

    def stop_loop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def close(self) -> None:
        self.stop_loop()
        self.program.close()


def bench_press(presses: int, directory: Path) -> list[float]:
    """Milliseconds from a player's pin going low to the running seat changing."""
    factory = MockFactory(pin_class=MockPWMPin)
    pins = PinMap()
    # Short lock-outs so that presses can follow each other quickly here;
    # the path measured is the same as with the table's defaults.
    hardware = TableHardware(pins, pin_factory=factory, lockout_ns=1 * MS,
                             buzzer=BuzzerSettings(muted=True))
    quick = functools.partial(Clock.from_preset, "mso-mastermind", roles=ROLES, debounce_ns=1 * MS)
    work = Path(tempfile.mkdtemp(prefix="pegwatch-bench-clock-", dir=directory))
    latencies: list[float] = []
    match = 0
    try:
        while len(latencies) < presses:
            match += 1
            table = Table(work / f"match-{match}.sqlite", hardware, quick)
            table.start_loop()
            try:
                for _ in range(min(PRESSES_PER_GAME, presses - len(latencies))):
                    before = table.running_seat()
                    g = table.program.flow.game
                    # The codemaker starts the game and marks; the codebreaker guesses.
                    seat = g.codebreaker if before == g.codebreaker else g.codemaker
                    pin = factory.pin(pins.player_buttons[seat])
                    table.turned.clear()
                    t0 = time.perf_counter_ns()
                    pin.drive_low()
                    if not table.turned.wait(5):
                        raise RuntimeError(f"press {len(latencies) + 1}: the table did not turn")
                    latencies.append((table.turned_at - t0) / MS)
                    assert table.running_seat() != before
                    time.sleep(0.0015)
                    pin.drive_high()
                    time.sleep(0.0015)
            finally:
                table.close()
    finally:
        hardware.close()
        factory.close()
        shutil.rmtree(work, ignore_errors=True)
    return latencies


def press_results(latencies: list[float], suffix: str = "") -> dict[str, float]:
    return {
        f"press_to_state{suffix}_ms": statistics.median(latencies),
        f"press_to_state{suffix}_p95_ms": _percentile(latencies, 0.95),
        f"press_to_state{suffix}_max_ms": max(latencies),
    }


def _model(remaining_ns: int) -> DisplayModel:
    return DisplayModel(
        players=(PlayerFace("Alice", 221 * S, Role.CODEMAKER),
                 PlayerFace("Bob", remaining_ns, Role.CODEBREAKER)),
        on_move=1, row=4,
    )


def bench_render(frames: int) -> dict[str, float]:
    times: list[float] = []
    sends: list[float] = []
    display = open_display("dummy")
    for i in range(frames):
        model = _model((479 - i % 400) * S)
        t0 = time.perf_counter_ns()
        render(model)
        t1 = time.perf_counter_ns()
        display.show(model)
        t2 = time.perf_counter_ns()
        times.append((t1 - t0) / MS)
        sends.append((t2 - t1) / MS)
    return {
        "render_ms": statistics.median(times),
        "render_p95_ms": _percentile(times, 0.95),
        "frame_ms": statistics.median(sends),
    }


def bench_display_cpu(seconds: float, start_remaining_ns: int, *,
                      main_loop: bool = False) -> tuple[float, float]:
    """CPU % of one core and frames/s of a display loop following the real
    table, the codebreaker's clock running from ``start_remaining_ns``."""
    factory = MockFactory(pin_class=MockPWMPin)
    pins = PinMap()
    hardware = TableHardware(pins, pin_factory=factory, buzzer=BuzzerSettings(muted=True))
    maker, breaker = TimeControl.sudden_death(240 * S), TimeControl.sudden_death(start_remaining_ns)
    work = Path(tempfile.mkdtemp(prefix="pegwatch-bench-display-"))
    table = Table(work / "display.sqlite", hardware, lambda: Clock((maker, breaker)))
    program = table.program
    display = open_display("dummy")
    loop = DisplayLoop(display, program.display_model,
                       next_change_at=program.next_display_change_ns, fps=10)
    table.wake_display = loop.wake
    try:
        table.start_loop()
        pin = factory.pin(pins.player_buttons[0])
        pin.drive_low()  # Alice, the codemaker, starts Bob's clock
        if not table.turned.wait(5) or table.running_seat() != 1:
            raise RuntimeError("the codebreaker's clock did not start")
        if not main_loop:
            table.stop_loop()  # the display's own cost: the table idle
        loop.start()
        loop.wake()
        time.sleep(0.3)  # settle: fonts loaded, first frames drawn
        frames0 = loop.frames
        cpu0, wall0 = time.process_time(), time.perf_counter()
        time.sleep(seconds)
        cpu1, wall1 = time.process_time(), time.perf_counter()
        frames = loop.frames - frames0
    finally:
        loop.stop()
        table.close()
        hardware.close()
        factory.close()
        shutil.rmtree(work, ignore_errors=True)
    wall = wall1 - wall0
    return 100.0 * (cpu1 - cpu0) / wall, frames / wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--presses", type=int, default=1000)
    parser.add_argument("--frames", type=int, default=400)
    parser.add_argument("--seconds", type=float, default=6.0,
                        help="seconds of display loop per measurement")
    parser.add_argument("--disk-dir", type=Path, default=Path(tempfile.gettempdir()),
                        help="where the on-disk journals go (default: the temporary directory)")
    args = parser.parse_args(argv)

    results: dict[str, float] = {}
    disk = bench_press(args.presses, args.disk_dir)
    results.update(press_results(disk))
    results["presses"] = float(len(disk))
    print(f"press to state, journal in {args.disk_dir}: median {results['press_to_state_ms']:.3f} ms, "
          f"p95 {results['press_to_state_p95_ms']:.3f} ms, "
          f"max {results['press_to_state_max_ms']:.3f} ms over {len(disk)} presses")
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        ram = bench_press(args.presses, shm)
        results.update(press_results(ram, "_shm"))
        print(f"press to state, journal in {shm}: median {results['press_to_state_shm_ms']:.3f} ms, "
              f"p95 {results['press_to_state_shm_p95_ms']:.3f} ms, "
              f"max {results['press_to_state_shm_max_ms']:.3f} ms over {len(ram)} presses")
    else:
        print("press to state in RAM: no writable /dev/shm here; not measured")
    results.update(bench_render(args.frames))
    print(f"render 128x64: median {results['render_ms']:.3f} ms "
          f"(p95 {results['render_p95_ms']:.3f}); render+send to luma dummy "
          f"{results['frame_ms']:.3f} ms")
    cpu, fps = bench_display_cpu(args.seconds, 19 * S + 900 * MS)
    results["display_cpu_percent"] = cpu
    results["display_fps"] = fps
    print(f"display loop, tenths showing: {cpu:.2f} % of one core, {fps:.1f} frames/s")
    cpu_s, fps_s = bench_display_cpu(args.seconds, 480 * S)
    results["display_cpu_percent_seconds"] = cpu_s
    results["display_fps_seconds"] = fps_s
    print(f"display loop, seconds showing: {cpu_s:.2f} % of one core, {fps_s:.1f} frames/s")
    cpu_t, fps_t = bench_display_cpu(args.seconds, 19 * S + 900 * MS, main_loop=True)
    results["table_cpu_percent"] = cpu_t
    results["table_fps"] = fps_t
    print(f"table main loop and display loop, tenths showing: {cpu_t:.2f} % of one core, "
          f"{fps_t:.1f} frames/s")
    print(json.dumps({k: round(v, 4) for k, v in results.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
