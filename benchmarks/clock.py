"""Benchmark of the clock's GPIO path and the small display.

Measures, on this machine:

* **press to state**: a player's button pin is driven low on gpiozero's
  MockFactory; the time until the clock's ``on_move`` has changed, through
  the whole device path (mock pin edge, software debounce, event sink,
  ``Clock.apply``, LEDs, low-time check). Median and p95 over many presses.
* **render**: one 128x64 frame drawn with Pillow (and the same sent to a
  luma ``dummy`` device).
* **display CPU**: process CPU time (``time.process_time``) while the
  :class:`~pegwatch.device.display.loop.DisplayLoop` keeps a luma dummy device
  current at 10 frames/s, as a percentage of one core. Measured with tenths
  showing (a new face every 100 ms: the worst case) and with seconds.

Run: ``.venv/bin/python benchmarks/clock.py [--presses N] [--seconds S]``.
The last line is one JSON object of named numbers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpiozero.pins.mock import MockFactory, MockPWMPin

from pegwatch.device.display.devices import open_display
from pegwatch.device.display.loop import DisplayLoop
from pegwatch.device.display.model import DisplayModel, PlayerFace, Role
from pegwatch.device.display.render import render
from pegwatch.device.hardware.buzzer import BuzzerSettings
from pegwatch.device.hardware.gpio import TableHardware
from pegwatch.device.hardware.pins import PinMap
from pegwatch.rules.clock.controls import TimeControl
from pegwatch.rules.clock.engine import Clock
from pegwatch.simulation.clock_device import TableClockDevice

S = 1_000_000_000
MS = 1_000_000


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def bench_press(presses: int) -> dict[str, float]:
    factory = MockFactory(pin_class=MockPWMPin)
    pins = PinMap()
    # Short lock-outs so that presses can follow each other quickly here;
    # the path measured is the same as with the table's defaults.
    hardware = TableHardware(pins, pin_factory=factory, lockout_ns=1 * MS,
                             buzzer=BuzzerSettings(muted=True))
    clock = Clock((TimeControl.sudden_death(3600 * S),) * 2, debounce_ns=1 * MS)
    device = TableClockDevice(hardware, clock)
    device.start(0)
    latencies: list[float] = []
    try:
        for _ in range(presses):
            player = device.view().on_move
            assert player is not None
            pin = factory.pin(pins.player_buttons[player])
            t0 = time.perf_counter_ns()
            pin.drive_low()
            while device.clock.view(time.monotonic_ns()).on_move == player:
                pass  # on mock pins the edge is handled inside drive_low()
            latencies.append((time.perf_counter_ns() - t0) / MS)
            time.sleep(0.0015)
            pin.drive_high()
            time.sleep(0.0015)
    finally:
        device.close()
    return {
        "press_to_state_ms": statistics.median(latencies),
        "press_to_state_p95_ms": _percentile(latencies, 0.95),
        "press_to_state_max_ms": max(latencies),
        "presses": float(presses),
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


def bench_display_cpu(seconds: float, start_remaining_ns: int) -> tuple[float, float]:
    """CPU % of one core and frames/s of a display loop following a running clock."""
    factory = MockFactory(pin_class=MockPWMPin)
    hardware = TableHardware(PinMap(), pin_factory=factory, buzzer=BuzzerSettings(muted=True))
    base = TimeControl.sudden_death(start_remaining_ns)
    clock = Clock((base, base))
    device = TableClockDevice(hardware, clock)
    device.start(0)
    display = open_display("dummy")
    loop = DisplayLoop(display, device.display_model, next_change_at=device.next_change_ns,
                       fps=10)
    device.when_changed.append(loop.wake)
    try:
        loop.start()
        time.sleep(0.3)  # settle: fonts loaded, first frames drawn
        frames0 = loop.frames
        cpu0, wall0 = time.process_time(), time.perf_counter()
        time.sleep(seconds)
        cpu1, wall1 = time.process_time(), time.perf_counter()
        frames = loop.frames - frames0
    finally:
        loop.stop()
        device.close()
    wall = wall1 - wall0
    return 100.0 * (cpu1 - cpu0) / wall, frames / wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--presses", type=int, default=1000)
    parser.add_argument("--frames", type=int, default=400)
    parser.add_argument("--seconds", type=float, default=6.0,
                        help="seconds of display loop per measurement")
    args = parser.parse_args(argv)

    results: dict[str, float] = {}
    results.update(bench_press(args.presses))
    print(f"press to state: median {results['press_to_state_ms']:.3f} ms, "
          f"p95 {results['press_to_state_p95_ms']:.3f} ms, "
          f"max {results['press_to_state_max_ms']:.3f} ms over {args.presses} presses")
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
    print(json.dumps({k: round(v, 4) for k, v in results.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
