"""``pegwatch run``: the table program with the devices of the configuration.

On a Pi: GPIO buttons, LEDs and buzzer (gpiozero), the OLED (luma) and the
camera. Elsewhere the same program runs on simulated devices: mock pins
driven from the keyboard (:mod:`pegwatch.simulation.keyboard`), frames from the
configured source (the renderer by default), and the display in the
terminal (or an emulator PNG/GIF, as ``[display]`` says).

``--script FILE`` replaces the keyboard with commands, one a line
(``press 0 [TAG]``, ``arbiter pause``, ``arbiter resume``, ``confirm``,
``reading JSON`` (a camera reading's payload), ``status``, ``quit``), each answered on stdout with ``ack SEQ`` once the
event is journaled: what the fault tests drive and kill.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Protocol

from pegwatch.device.table.hall.wiring import start_hall
from pegwatch.device.table.program import TableProgram
from pegwatch.rules.flow import Phase

logger = logging.getLogger(__name__)

__all__ = ["ArbiterButton", "Desk", "TableLoop", "archive_journal", "run_table"]


class Stoppable(Protocol):
    def start(self) -> object: ...
    def stop(self) -> None: ...


class Desk(Protocol):
    """The simulated parts of a table off the Pi, given by the composition root.

    The table program never imports the simulation: ``pegwatch run`` (the
    CLI) passes :class:`pegwatch.simulation.desk.SimulatedDesk` here, and
    the table uses it only where the configuration asks for simulated
    devices (``camera = "render"``, or no Pi).
    """

    def open_source(self, spec: str, *, size: tuple[int, int] | None) -> Any:
        """A frame source for ``spec``, the renderer included."""

    def camera(self, board: str, *, fps: float) -> tuple[Any, Any]:
        """A calibrated reader and a source showing a board moved by keys."""

    def keyboard(self, hardware: Any, *, on_quit: Callable[[], None],
                 on_confirm: Callable[[], None]) -> Stoppable:
        """The keyboard driving ``hardware``'s mock pins (and the rendered board)."""

    def help_lines(self) -> list[str]:
        """What the keys do, for the terminal."""


class TableLoop:
    """One pass of ``pegwatch run``'s main loop: the program's events, then the
    LEDs follow whose clock runs (set only when that changes). The clock
    benchmark and the tests on mock pins run this same pass."""

    def __init__(self, program: TableProgram, hardware: Any) -> None:
        self.program = program
        self.hardware = hardware
        self._shown: tuple[int | None, bool] | None = None

    def step(self, *, timeout: float = 0.0) -> tuple[int, bool]:
        """Events handled, and whether the turn (seat on move, paused) changed."""
        program = self.program
        handled = program.step(timeout=timeout)
        turn = (program.running_seat(program.now_ns()), program.flow.paused)
        turned = turn != self._shown
        if turned:
            self.hardware.show_turn(turn[0], paused=turn[1])
            self._shown = turn
        return handled, turned


class ArbiterButton:
    """What the table's buttons do, beyond a player ending their turn.

    The arbiter's button, down while a clock runs: pause at once. A short
    press when a row waits for a check: confirm it with what the camera
    reads now. A short press on a paused clock (not the press that paused
    it): resume. Held (1.5 s): the arbiter menu (:meth:`TableProgram.menu_held`),
    where the short presses and the players' buttons work the menu instead
    (entering a row by hand, adjusting a time, muting the buzzer). :meth:`attach` wires all of
    it to a :class:`~pegwatch.device.hardware.gpio.TableHardware`: the Pi's pins and the
    desktop's keyboard-driven mock pins take the same path.
    """

    def __init__(self, program: TableProgram) -> None:
        self.program = program
        self._paused_by_down = False

    def attach(self, hardware: Any) -> None:
        """Route every button of ``hardware`` to the program through this object."""
        hardware.when_player_pressed = self.player
        hardware.when_arbiter_pressed = self.down
        hardware.when_arbiter_short = self.short
        hardware.when_arbiter_held = self.held

    def player(self, seat: int, at_ns: int) -> None:
        if not self.program.menu_player(seat, at_ns):
            self.program.press(seat, at_ns)

    def down(self, at_ns: int) -> None:
        self._paused_by_down = False
        if self.program.running_seat(at_ns) is not None:
            self._paused_by_down = True
            self.program.arbiter("pause", at_ns)

    def held(self, at_ns: int) -> None:
        # The press that paused the clock is now a long press: the next
        # short press belongs to the menu, not to "do not resume".
        self._paused_by_down = False
        self.program.menu_held(at_ns)

    def short(self, at_ns: int) -> None:
        if self.program.menu_short(at_ns):
            self._paused_by_down = False
            return
        flow = self.program.flow
        if self._paused_by_down:
            self._paused_by_down = False
            return
        checks = flow.checks()
        if checks and checks[0] > 0:
            self.program.confirm_row_from_camera(flow.game.number, checks[0])
        elif flow.paused:
            self.program.arbiter("resume", at_ns)


def _camera_worker(cfg: Any, program_submit: Any, desk: Desk | None, parts: Any = None) -> Any:
    """The vision worker for the configured camera, or None when it cannot start.

    The source is read at most ``[camera] fps`` times a second
    (:class:`~pegwatch.vision.sources.PacedSource`), and a camera that is
    missing or fails is opened again with backoff
    (:class:`~pegwatch.vision.sources.ReopeningSource`): the table starts
    without it and picks it up when it comes. A real camera with no
    calibration is not read at all; ``parts`` then shows ``SET-UP`` on the
    display.
    """
    from pegwatch.device.table.vision_worker import VisionWorker
    from pegwatch.vision.sources import PacedSource, ReopeningSource

    try:
        from pegwatch.vision.profile import load_profile
        from pegwatch.vision.reader import BoardReader

        profile = load_profile(cfg.board)
        if cfg.calibration is not None:
            from pegwatch.vision.calibration import Calibration

            reader: Any = BoardReader(profile, Calibration.load(cfg.calibration), keep_after=cfg.vision.frames_to_accept)
            source: Any = ReopeningSource(lambda: _open_source(cfg, desk), name=f"camera {cfg.camera}")
        elif cfg.camera == "render" and desk is not None:
            reader, source = desk.camera(cfg.board, fps=cfg.vision.fps)
        else:
            logger.error(
                "camera %s has no calibration ([table] calibration): the table runs without "
                "reading the board and its display says SET-UP; make one with "
                "`pegwatch calibrate IMAGE... --truth TRUTH.json -o CAL.json` (docs/hardware.md)",
                cfg.camera,
            )
            if parts is not None:
                parts.missing("calibration", "no [table] calibration")
            return None
    except Exception as exc:  # no camera is not a reason to stop the clock
        logger.error("camera not started: %s", exc)
        if parts is not None:
            parts.missing("camera", str(exc))
        return None
    return VisionWorker(
        PacedSource(source, fps=cfg.vision.fps),
        reader,
        submit=program_submit,
        frames_to_accept=cfg.vision.frames_to_accept,
        motion_threshold=cfg.vision.motion_threshold,
        jpeg_quality=cfg.vision.jpeg_quality,
        evidence=cfg.evidence,
    )


def _open_source(cfg: Any, desk: Desk | None) -> Any:
    from pegwatch.vision.sources import open_source

    spec = str(cfg.camera)
    if spec == "render" and desk is not None:
        return desk.open_source(spec, size=cfg.vision.resolution)
    kind, _, arg = spec.partition(":")
    if kind == "webcam":
        # The configuration's webcam[:N] is an OpenCV capture device.
        spec = f"video:{arg or '0'}"
    vision = cfg.vision
    return open_source(spec, size=vision.resolution, fps=vision.fps, focus=vision.focus,
                       focus_cm=vision.focus_cm)


def run_table(
    *,
    config: str | None = None,
    journal: str | None = None,
    script: str | None = None,
    stdout: IO[str] | None = None,
    new: bool = False,
    desk: Callable[[], Desk] | None = None,
) -> int:
    """Run the table until ``quit`` (script), ``q`` (keyboard) or SIGTERM.

    The journal is replayed first: a match in progress comes back paused.
    ``new`` keeps the journal in use as ``NAME.N.sqlite`` and starts afresh.
    """
    from pegwatch.device.table.config import load_config

    out = stdout if stdout is not None else sys.stdout
    cfg = load_config(config)
    journal_path = Path(journal) if journal is not None else cfg.journal
    journal_path.parent.mkdir(parents=True, exist_ok=True)
    if new and journal_path.exists():
        kept = archive_journal(journal_path)
        print(f"previous journal kept as {kept}", file=out, flush=True)

    def say(line: str) -> None:
        print(line, file=out, flush=True)

    program = TableProgram.from_config(
        cfg, journal_path, on_line=say if script is None else None, palette=_board_palette(cfg),
    )
    if program.flow.phase is Phase.MATCH_OVER:
        say(f"the match in {journal_path} is over; start a new one with --new")
    hall = start_hall(cfg, program)  # [hall]: published to the tournament hall
    try:
        try:
            program.journal.set_meta("config", cfg.snapshot())
        except Exception as exc:  # a full disk must not keep the table from starting
            logger.error("configuration not recorded in the journal: %s", exc)
        if script is not None:
            return _run_script(program, script, out)
        return _run_interactive(program, cfg, say, desk() if desk is not None else None)
    finally:
        if hall is not None:
            hall.close()
        program.close()


def _board_palette(cfg: Any) -> tuple[str, ...] | None:
    """The board profile's colour names (what the camera reads), for hand entry."""
    try:
        from pegwatch.vision.profile import load_profile

        return tuple(load_profile(cfg.board).palette)
    except Exception as exc:  # the variant's names will do
        logger.warning("board profile %s not loaded (%s): hand entry uses the variant's colours",
                       cfg.board, exc)
        return None


def archive_journal(path: Path) -> Path:
    """Rename ``path`` (and its WAL files) to the first free ``NAME.N.sqlite``."""
    n = 1
    while True:
        kept = path.with_name(f"{path.stem}.{n}{path.suffix}")
        if not kept.exists():
            break
        n += 1
    for suffix in ("-wal", "-shm"):
        side = Path(str(path) + suffix)
        if side.exists():
            side.rename(Path(str(kept) + suffix))
    path.rename(kept)
    return kept


def _run_script(program: TableProgram, script: str, out: IO[str]) -> int:
    stream = sys.stdin if script == "-" else open(script, encoding="utf-8")  # noqa: SIM115
    try:
        print(f"ready {program.journal.last_seq}", file=out, flush=True)
        for raw in stream:
            words = raw.split()
            if not words:
                continue
            cmd, args = words[0], words[1:]
            if cmd == "quit":
                break
            if cmd == "press" and args:
                # An optional tag lets a test find this very press in the journal.
                payload: dict[str, object] = {"player": int(args[0])}
                if len(args) > 1:
                    payload["tag"] = args[1]
                program.submit("press", payload)
            elif cmd == "arbiter" and args:
                program.arbiter(args[0])
            elif cmd == "reading" and args:
                # What the camera would submit: one JSON payload (crash benchmark).
                try:
                    reading = json.loads(raw.split(None, 1)[1])
                except ValueError as exc:
                    print(f"error reading: not JSON: {exc}", file=out, flush=True)
                    continue
                if not isinstance(reading, dict):
                    print("error reading: expected a JSON object", file=out, flush=True)
                    continue
                program.submit("reading", reading)
            elif cmd == "confirm":
                checks = program.flow.checks()
                if checks and checks[0] > 0:
                    program.confirm_row_from_camera(program.flow.game.number, checks[0])
            elif cmd == "status":
                now = program.now_ns() + program.offset_ns
                left = program.flow.remaining_ns(now)
                print(f"status {program.flow.phase.value} {left[0]} {left[1]}", file=out, flush=True)
                continue
            else:
                print(f"error unknown command {raw.strip()!r}", file=out, flush=True)
                continue
            program.step()
            print(f"ack {program.journal.last_seq}", file=out, flush=True)
    finally:
        if stream is not sys.stdin:
            stream.close()
    return 0


def _run_interactive(program: TableProgram, cfg: Any, say: Any, desk: Desk | None) -> int:
    from pegwatch.device.hardware.watchdog import Watchdog
    from pegwatch.device.table.service import HardwareSlot, Parts, StopSignals, stopped_model

    stop = threading.Event()
    watchdog = Watchdog()
    program.watchdog = watchdog
    display_loop: Any = None

    def parts_changed(parts: Parts) -> None:
        watchdog.status(parts.status())
        if display_loop is not None:
            display_loop.wake()

    parts = Parts(on_change=parts_changed)
    slot = HardwareSlot()
    arbiter = ArbiterButton(program)
    setup = _guided_setup(cfg, program, desk)
    if setup is not None:  # never calibrated: the set-up talks first (docs/setup.md)
        arbiter = setup.buttons(arbiter)
    buttons = _connect_buttons(cfg, program, arbiter, slot, parts)
    worker = _camera_worker(cfg, program.submit, desk, parts) if setup is None else None
    if worker is not None:
        program.worker = worker
        worker.on_camera = program._camera_changed
        worker.start()

    def model_at(raw_now: int) -> Any:
        model = program.display_model(raw_now)
        return parts.overlay(setup.overlay(model) if setup is not None else model)

    display_loop = _display_loop(cfg, program, model_at=model_at, parts=parts)
    keyboard = None
    if cfg.simulated and desk is not None and slot.hardware is not None:
        keyboard = desk.keyboard(slot.hardware, on_quit=stop.set,
                                 on_confirm=lambda: arbiter.short(time.monotonic_ns()))
        keyboard.start()
        for line in desk.help_lines():
            say(line)
    loop = TableLoop(program, slot)
    try:
        with StopSignals(stop):
            watchdog.ready(parts.status())
            while not stop.is_set():
                # The short timeout bounds how late a flag is noticed; the flag's
                # instant itself comes from the stamps, not from this loop.
                handled, turned = loop.step(timeout=0.02)
                # Between events the display loop wakes itself at the next
                # visible change; waking it on every poll would cost CPU a Pi
                # Zero does not have.
                if display_loop is not None and (handled or turned):
                    display_loop.wake()
    except KeyboardInterrupt:
        pass
    finally:
        # systemd first: from here on a slow exit is a stop, not a hang.
        watchdog.stopping()
        if keyboard is not None:
            keyboard.stop()
        if buttons is not None:
            buttons.stop()
        if display_loop is not None:
            display_loop.stop()
            # The glass keeps its last picture after the process ends: make it
            # say the table stopped, with the times it stopped at.
            display_loop.show_last(stopped_model(model_at(program.now_ns())))
            display_loop.display.close()
        if setup is not None:
            setup.close()
        slot.close()
        watchdog.close()
        say("table stopped")
    return 0


def _guided_setup(cfg: Any, program: TableProgram, desk: Desk | None) -> Any:
    """The guided set-up, started, when the table has never been calibrated; else None."""
    from pegwatch.device.table.setup import guided_setup

    setup = guided_setup(cfg, program, desk=desk, open_source=lambda: _open_source(cfg, desk))
    return setup.start() if setup is not None else None


def _connect_buttons(cfg: Any, program: TableProgram, arbiter: ArbiterButton, slot: Any,
                     parts: Any) -> Any:
    """Keep the buttons, LEDs and buzzer connected: opened now, or tried
    again in a thread until they open, and again if they fail later (an LED
    that cannot be set). Meanwhile the clock runs, the arbiter menu is out
    of reach and the display says ``NO BUTTONS``. Returns the keeper (to
    stop on exit)."""
    from pegwatch.device.hardware.gpio import TableHardware, make_pin_factory
    from pegwatch.device.table.service import Backoff, PartKeeper

    def open_() -> Any:
        hardware = TableHardware(
            cfg.pins, pin_factory=make_pin_factory("mock" if cfg.simulated else "default"),
            buzzer=cfg.buzzer,
        )
        hardware.when_fault = keeper.lost
        return hardware

    def attach(hardware: Any) -> bool:
        # The buzzer: a MockFactory pin off the Pi, the real one on it.
        program.attach_sounder(hardware.sounder)
        arbiter.attach(hardware)
        return bool(slot.connect(hardware))

    keeper = PartKeeper("buttons", open_, attach=attach, detach=slot.detach, parts=parts,
                        backoff=Backoff(1.0, 30.0))
    return keeper.start()


def _display_loop(cfg: Any, program: TableProgram, *, model_at: Any = None, parts: Any = None,
                  opener: Any = None) -> Any:
    """The display loop; a display that cannot be opened now is tried again
    with backoff (``[display] retry_s``, doubling up to 30 s)."""
    from pegwatch.device.display.devices import AbsentDisplay, DisplaySettings, open_display
    from pegwatch.device.display.loop import DisplayLoop

    settings = cfg.display if isinstance(cfg.display, DisplaySettings) else DisplaySettings()
    open_ = opener if opener is not None else open_display

    def state(ok: bool, problem: str) -> None:
        if parts is not None:
            if ok:
                parts.back("display")
            else:
                parts.missing("display", problem)

    try:
        display = open_(settings)
    except Exception as exc:  # the clock goes on without a display, and tries again
        logger.error("display %s not started: %s; trying again", settings.kind, exc)
        display = AbsentDisplay(settings, str(exc) or type(exc).__name__)
        state(False, display.problem)
    loop = DisplayLoop(
        display,
        model_at if model_at is not None else program.display_model,
        next_change_at=program.next_display_change_ns,
        fps=settings.fps,
        retry_s=settings.retry_s,
        reopen=(lambda: open_(settings)),
        on_state=state,
    )
    return loop.start()
