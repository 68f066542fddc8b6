"""``pegwatch demo``: a whole scripted MSO match at a simulated table, in seconds.

Everything real except the hardware and the passing of time: the board
photos come from :mod:`pegwatch.simulation.render` and are read by the real reader
(calibrated first, from rendered calibration shots), the rules and the
clock are the real ones, and every event goes through
:class:`pegwatch.device.table.program.TableProgram` into a real journal, so that
``pegwatch replay`` of the demo's journal reaches the same verdicts. Time is
virtual: the script says how long each player thinks, and the clock sees
those stamps, so an eight-minute flag takes no time at all.

The match shows what the table is for:

* game 1: the camera sees the code as it is set (stored, never shown); a
  hand stays over row 2 when the codemaker presses, so the camera cannot
  read the marks and asks for a check, which the arbiter confirms; on row 3
  the codemaker marks wrongly, and the mis-mark is caught at once;
* game 2: roles reversed; the codebreaker runs out of time (a flag).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pegwatch.device.display.model import DisplayModel
from pegwatch.device.table.hall.settings import HallSettings
from pegwatch.device.table.hall.wiring import TableLink
from pegwatch.device.table.journal import Journal
from pegwatch.device.table.program import TableProgram
from pegwatch.device.table.vision_worker import VisionWorker
from pegwatch.rules.codes import score
from pegwatch.rules.errors import BadInput
from pegwatch.rules.flow import MatchFlow, Phase, Verdict, preset_clock_factory

logger = logging.getLogger(__name__)

__all__ = ["DemoResult", "GifRecorder", "Scene", "VirtualClock", "calibrated_reader", "run_demo"]

S = 1_000_000_000
MS = 1_000_000
#: Virtual time between two camera frames.
FRAME_NS = 100 * MS
#: The demo's virtual monotonic clock starts here (any positive stamp works).
T0 = 1_000 * S

SECRET_1 = ("red", "green", "blue", "yellow")
SECRET_2 = ("orange", "purple", "purple", "white")
PLAYERS = ("Alice", "Bob")


class VirtualClock:
    """A monotonic time source the script moves forward."""

    def __init__(self, start_ns: int = T0) -> None:
        self.t = start_ns

    def __call__(self) -> int:
        return self.t

    def advance(self, ns: int) -> int:
        """Move forward by ``ns``; returns the new time."""
        self.t += max(0, ns)
        return self.t


@dataclass
class Scene:
    """What is on the board right now, and what the camera sees of it."""

    profile: Any
    contents: Any
    conditions: Any
    seed: int = 1

    def photo(self) -> NDArray[np.uint8]:
        """Render the board as the camera sees it now (the same scene gives the
        same photo: the renderer's seed also places each peg's jitter)."""
        from pegwatch.simulation.render import render

        return render(self.profile, self.contents, self.conditions, seed=self.seed).image

    def place_guess(self, row: int, guess: Sequence[str]) -> None:
        """The codebreaker places ``guess`` in ``row``."""
        guesses = list(self.contents.guesses)
        guesses[row - 1] = tuple(guess)
        self.contents = replace(self.contents, guesses=tuple(guesses))

    def place_keys(self, row: int, black: int, white: int) -> None:
        """The codemaker puts the key pegs of ``row``."""
        keys = list(self.contents.keys)
        keys[row - 1] = (black, white)
        self.contents = replace(self.contents, keys=tuple(keys))

    def hand_over(self, row: int | None) -> None:
        """A hand (and arm) over ``row``, or no hand."""
        hand = None if row is None else hand_polygons(self.profile, row)
        self.conditions = replace(self.conditions, hand=hand)

    def new_game(self, secret: Sequence[str]) -> None:
        """A cleared board with ``secret`` set; the camera sees it from above."""
        from pegwatch.simulation.render import BoardContents

        empty = BoardContents.empty(self.profile)
        self.contents = replace(empty, secret=tuple(secret), shield_open=True)

    def shield(self, *, open_: bool) -> None:
        """Open or close the shield over the secret."""
        self.contents = replace(self.contents, shield_open=open_)


def hand_polygons(profile: Any, row: int) -> tuple[tuple[tuple[float, float], ...], ...]:
    """A hand lying over ``row`` with the arm reaching in from the near edge."""
    x, y, w, h = profile.row_box_mm(row)
    cx, cy = x + w / 2, y + h / 2
    hand = tuple(
        (cx + 24.0 * math.cos(t), cy + 45.0 * math.sin(t))
        for t in np.linspace(0, 2 * math.pi, 20, endpoint=False)
    )
    far = profile.size_mm[1] + 400.0
    arm = ((cx - 20.0, cy + 30.0), (cx + 20.0, cy + 30.0), (cx + 28.0, far), (cx - 28.0, far))
    return (hand, arm)


def calibrated_reader(profile_name: str = "invicta-12x4", *, seed: int = 7) -> tuple[Any, Any, Any]:
    """Render a few calibration shots of known contents, calibrate, and
    return ``(profile, reader, easy_conditions)``."""
    from pegwatch.simulation.hardset import calibration_contents
    from pegwatch.simulation.render import Conditions, render
    from pegwatch.vision.calibrate import calibrate, truth_from_record
    from pegwatch.vision.profile import load_profile
    from pegwatch.vision.reader import BoardReader

    profile = load_profile(profile_name)
    # 2.7 px/mm on the board: above the 2.5 the reader needs to trust a reading.
    conditions = Conditions.easy().with_(width=960, height=540, focal_px=900.0)
    images: list[NDArray[np.uint8]] = []
    truths = []
    # Boards that show every palette colour, empty holes and every key
    # class, as an installer would lay out: random contents could miss a
    # colour, and the reader refuses colours it never saw.
    for i, shield_open in enumerate((True, True, False)):
        contents = calibration_contents(profile, i, shield_open=shield_open)
        images.append(render(profile, contents, conditions, seed=seed + i).image)
        truths.append(truth_from_record(contents_record(contents), profile, where=f"calibration shot {i + 1}"))
    calibration = calibrate(images, truths, profile)
    return profile, BoardReader(profile, calibration), conditions


def contents_record(contents: Any) -> dict[str, Any]:
    """The truth record (judge format) of rendered board contents."""
    rows = []
    for guess, keys in zip(contents.guesses, contents.keys, strict=True):
        if guess is None:
            break
        black, white = keys if keys is not None else (0, 0)
        rows.append({"guess": list(guess), "black": black, "white": white})
    secret = list(contents.secret) if contents.shield_open and contents.secret is not None else None
    return {"rules": "mso", "secret": secret, "rows": rows}


class GifRecorder:
    """A display sink that keeps each new picture, for an animated GIF."""

    def __init__(self, *, size: tuple[int, int] = (128, 64), scale: int = 3) -> None:
        self.size = size
        self.scale = scale
        self.frames: list[Any] = []
        self.stamps: list[int] = []
        self._last: DisplayModel | None = None

    def show(self, model: DisplayModel, at_ns: int) -> None:
        """Keep the picture of ``model`` when it differs from the last one."""
        from pegwatch.device.display.render import render

        q = model.quantized()
        if q == self._last:
            return
        self._last = q
        image = render(model, self.size).convert("L")
        self.frames.append(image.resize((self.size[0] * self.scale, self.size[1] * self.scale)))
        self.stamps.append(at_ns)

    def save(self, path: str | Path, *, speedup: float = 30.0) -> Path:
        """Write the GIF, time running ``speedup`` times faster than at the
        table (each picture held 40 ms to 1.5 s; the last one 4 s)."""
        out = Path(path)
        if not self.frames:
            raise BadInput("no display frames to save")
        durations = []
        for i in range(len(self.frames)):
            dt_ns = self.stamps[i + 1] - self.stamps[i] if i + 1 < len(self.stamps) else 0
            durations.append(int(min(1500, max(40, dt_ns / 1e6 / speedup))))
        durations[-1] = 4000
        self.frames[0].save(
            out, save_all=True, append_images=self.frames[1:], duration=durations, loop=0, optimize=True
        )
        return out


@dataclass
class DemoResult:
    """What the demo produced."""

    transcript: list[str]
    verdicts: list[Verdict]
    result: dict[str, Any]
    journal: Path
    gif: Path | None
    seconds: float
    frames_read: int
    press_to_verdict_ms: list[float] = field(default_factory=list)


class _Driver:
    """Plays the script: moves virtual time, renders frames, presses buttons."""

    def __init__(self, program: TableProgram, worker: VisionWorker, scene: Scene, clock: VirtualClock) -> None:
        self.program = program
        self.worker = worker
        self.scene = scene
        self.clock = clock
        self.narrate: Callable[[str], None] | None = None

    def settle(self, *, max_frames: int = 40) -> None:
        """Feed frames until the flow has nothing left to read (or give up)."""
        self.program.step()
        for _ in range(max_frames):
            if not self.worker.has_requests:
                break
            self.clock.advance(FRAME_NS)
            self.worker.feed(self.scene.photo(), self.clock())
            self.program.step()
        self.program.step()

    def think(self, ns: int, *, step_ns: int = 5 * S) -> None:
        """Let virtual time pass (the clock runs; flags fall on time)."""
        end = self.clock() + ns
        while self.clock() < end:
            self.clock.advance(min(step_ns, end - self.clock()))
            self.program.step()

    def press(self, seat: int) -> None:
        self.program.press(seat, self.clock())
        self.program.step()

    def play_row(self, game: int, row: int, maker: int, breaker: int, guess: Sequence[str],
                 secret: Sequence[str], *, think_s: float, mark_s: float,
                 marks: tuple[int, int] | None = None, hand_at_marks: bool = False) -> None:
        self.think(int(think_s * S))
        self.scene.place_guess(row, guess)
        self.press(breaker)
        self.settle()
        black, white = marks if marks is not None else tuple(score(secret, guess))
        self.think(int(mark_s * S))
        self.scene.place_keys(row, black, white)
        if hand_at_marks:
            self.scene.hand_over(row)
            if self.narrate is not None:
                self.narrate(f"(the codemaker's hand is still over row {row} at the press)")
        self.press(maker)
        self.settle()


def run_demo(
    *,
    journal: str | Path = "pegwatch-demo.sqlite",
    gif: str | Path | None = "pegwatch-demo.gif",
    out: Callable[[str], None] = print,
    fast: bool = False,
    hall: HallSettings | None = None,
) -> DemoResult:
    """Play the scripted match; print the transcript; write journal and GIF.

    With ``hall`` the table publishes to the hall's broker through the real
    outbox and publisher, as ``pegwatch run`` with ``[hall]`` does, and waits
    at the end until the broker has every event."""
    started = time.monotonic()
    journal_path = Path(journal)
    for suffix in ("", "-wal", "-shm"):
        p = Path(str(journal_path) + suffix)
        if p.exists():
            p.unlink()
    out("pegwatch demo: a scripted MSO match at a simulated table")
    out("  calibrating the camera from 3 rendered shots ...")
    profile, reader, conditions = calibrated_reader()
    from pegwatch.simulation.render import BoardContents

    scene = Scene(profile, BoardContents.empty(profile), conditions)
    clock = VirtualClock()
    recorder = GifRecorder()
    worker = VisionWorker(None, reader, submit=lambda *a: None, frames_to_accept=2, give_up_frames=6)

    def line(text: str) -> None:
        m = (clock() - T0) / S
        out(f"  [{int(m // 60):2d}:{m % 60:04.1f}] {text}")

    flow = MatchFlow(PLAYERS, rules="mso", clock_factory=preset_clock_factory("mso-mastermind"))
    program = TableProgram(
        flow, Journal(journal_path), worker=worker, displays=(recorder,), now_ns=clock, on_line=line
    )
    program.writer.append("match", {"players": list(PLAYERS), "rules": "mso", "clock": "mso-mastermind",
                                    "demo": True}, at_ns=clock())
    link = TableLink(program, hall).start() if hall is not None else None
    if hall is not None:
        out(f"  publishing as table {hall.table} of {hall.tournament} to {hall.broker}")
    d = _Driver(program, worker, scene, clock)
    d.narrate = line
    alice, bob = 0, 1
    try:
        out(f"  players: {PLAYERS[0]} (codemaker in game 1) and {PLAYERS[1]}; MSO rules, 8 and 4 minutes")
        out("")
        # ---- game 1: Alice makes the code, Bob breaks it.
        out("  -- game 1: Alice sets the code; Bob breaks it")
        scene.new_game(SECRET_1)
        d.think(20 * S)
        d.press(alice)  # starts Bob's clock; the camera sees the code from above
        d.settle()
        scene.shield(open_=False)
        d.play_row(1, 1, alice, bob, ("red", "red", "white", "white"), SECRET_1, think_s=41, mark_s=12)
        # Alice's hand is still over row 2 as she presses: the camera cannot
        # read it, so it asks for a check instead of guessing.
        d.play_row(1, 2, alice, bob, ("green", "red", "orange", "orange"), SECRET_1,
                   think_s=63, mark_s=9, hand_at_marks=True)
        d.think(8 * S)
        scene.hand_over(None)
        d.settle()
        d.clock.advance(FRAME_NS)
        worker.feed(scene.photo(), clock())
        line("arbiter: looks at row 2 and confirms what the camera now reads")
        program.confirm_row_from_camera(1, 2)
        program.step()
        # Row 3: Alice marks 1 black 1 white; the right marks are 1 black 2 white.
        d.play_row(1, 3, alice, bob, ("red", "blue", "green", "purple"), SECRET_1,
                   think_s=52, mark_s=15, marks=(1, 1))
        d.think(6 * S)
        scene.shield(open_=True)
        d.settle()
        out("")
        # ---- game 2: Bob makes the code, Alice breaks it and runs out of time.
        out("  -- game 2: roles reversed; Bob sets the code; Alice breaks it")
        scene.new_game(SECRET_2)
        d.think(30 * S)
        d.press(bob)
        d.settle()
        scene.shield(open_=False)
        d.play_row(2, 1, bob, alice, ("orange", "orange", "purple", "purple"), SECRET_2, think_s=95, mark_s=14)
        d.play_row(2, 2, bob, alice, ("purple", "orange", "white", "red"), SECRET_2, think_s=140, mark_s=21)
        # Alice thinks too long over row 3: her flag falls at 8:00.
        d.think(6 * 60 * S, step_ns=S)
        scene.shield(open_=True)
        d.settle()
        if flow.phase is not Phase.MATCH_OVER:
            line(f"the match did not finish (phase {flow.phase.value}); see the journal")
    finally:
        program.refresh_display()
        if link is not None:
            drained = link.drain(30.0)
            out("  hall: every event published" if drained else
                f"  hall: {link.publisher.unsent()} messages wait in the journal's outbox for the broker")
            link.close()
        program.close()
    result = _result(flow)
    out("")
    out("  result")
    for g in flow.games:
        if g.verdict is None:
            continue
        v = g.verdict
        extra = f", mis-mark on row {v.mismarked_row}" if v.mismarked_row and not v.mismark_by_timeout else ""
        extra += ", time out" if g.timeout is not None else ""
        out(f"    game {g.number}: {PLAYERS[g.codebreaker]} (codebreaker) {v.attempts} attempts{extra}")
    mv = flow.match_verdict
    if mv is not None:
        for name in PLAYERS:
            out(f"    {name}: {mv.attempts[name]} attempts as codebreaker, {mv.vp[name]:g} VP")
    gif_path = None
    if gif is not None:
        gif_path = recorder.save(gif)
    seconds = time.monotonic() - started
    out("")
    out(f"  journal: {journal_path}  (check it: pegwatch replay {journal_path})")
    if gif_path is not None:
        out(f"  display: {gif_path} ({len(recorder.frames)} frames)")
    out(f"  {worker.frames_read} camera frames read; {seconds:.1f} s")
    return DemoResult(
        transcript=program.transcript,
        verdicts=program.verdicts,
        result=result,
        journal=journal_path,
        gif=gif_path,
        seconds=seconds,
        frames_read=worker.frames_read,
    )


def _result(flow: MatchFlow) -> dict[str, Any]:
    mv = flow.match_verdict
    return {
        "games": [g.verdict.to_json() if g.verdict is not None else None for g in flow.games],
        "vp": None if mv is None else mv.vp,
        "attempts": None if mv is None else mv.attempts,
        "phase": flow.phase.value,
    }
