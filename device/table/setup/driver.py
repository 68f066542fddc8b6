"""The guided set-up at a running table: frames in, calibrations out, the buttons and the display shared.

:class:`GuidedSetup` drives a :class:`~pegwatch.device.table.setup.machine.SetupMachine`.
In a thread of its own it reads the camera while the set-up talks to the
arbiter (looking for the board), takes the frames each step needs, and
calls :func:`pegwatch.vision.calibrate.calibrate`: an empty board first
(geometry, plastic and empty holes: a low-trust calibration), then the
colours on top (``base=``) from the swatch card, the layout of pegs on
the board, or the rows the arbiter confirms. Nothing here can stall the clock: the buttons only queue a
press, the display only reads the machine's screen.

Once the board is learned the ordinary
:class:`~pegwatch.device.table.vision_worker.VisionWorker` reads it. Until
the set-up is done its answers pass through :meth:`GuidedSetup.submit`,
which marks each ``trust: "low"`` (the match flow shows such a reading and
never accuses from it) and sends a row the camera is unsure of to the
arbiter whole; the rows the arbiter confirms teach the colours.
Every calibration is saved beside the journal
(``calibration.json``) as soon as it is made, and a restart carries on from
it.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from pegwatch.device.display.model import DisplayModel, Severity
from pegwatch.device.lifetime import Closeable
from pegwatch.device.table.run import ArbiterButton
from pegwatch.device.table.setup.layout import layout_lines, layout_record
from pegwatch.device.table.setup.machine import Action, Button, Seen, SetupMachine, Step
from pegwatch.rules.flow import Phase, RowState
from pegwatch.vision.reading import UNKNOWN

if TYPE_CHECKING:
    from pegwatch.device.table.program import TableProgram
    from pegwatch.vision.calibration import Calibration
    from pegwatch.vision.profile import BoardProfile
    from pegwatch.vision.reading import BoardReading

logger = logging.getLogger(__name__)

__all__ = ["CALIBRATION_NAME", "GuidedSetup", "SetupButtons", "remaining"]

#: The set-up's calibration file, beside the journal.
CALIBRATION_NAME = "calibration.json"
#: Frames of the empty board averaged into its calibration.
EMPTY_FRAMES = 2
#: What a reading says within bounds (candidate colours, key-count ranges).
_BOUNDS = frozenset({"candidates", "black_bounds", "white_bounds"})
#: The match's phases in which no game is under way: the set-up may hold the buttons.
_IDLE = (Phase.SETUP, Phase.GAME_OVER, Phase.MATCH_OVER)


def remaining(cal: Calibration) -> tuple[str, ...]:
    """What keeps ``cal`` from full trust: the colours not learned, else its trust reasons."""
    missing = (*cal.not_learned, *(f"{k} key" for k in cal.keys_not_learned))
    if missing:
        return missing
    return tuple(cal.trust_reasons) or (("low trust",) if cal.trust != "full" else ())


class _Remembering:
    """The board reader, remembering the last frame it read and what it read
    (the frame the set-up learns a confirmed row from). Its reader can be
    swapped while the worker runs: the next frame uses the new one."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.last: tuple[NDArray[np.uint8], BoardReading] | None = None

    def read(self, frame: NDArray[np.uint8], *, at_ns: int | None = None) -> BoardReading:
        reading: BoardReading = self.reader.read(frame, at_ns=at_ns)
        self.last = (frame, reading)
        return reading


class SetupButtons(ArbiterButton):
    """The table's buttons while a set-up runs: the set-up's own during its
    dialogue, the match's (``inner``) otherwise."""

    def __init__(self, inner: ArbiterButton, setup: GuidedSetup) -> None:
        super().__init__(inner.program)
        self.inner = inner
        self.setup = setup

    def player(self, seat: int, at_ns: int) -> None:
        if self.setup.owns_buttons:
            self.setup.press(Button.LEFT if seat == 0 else Button.RIGHT)
        else:
            self.inner.player(seat, at_ns)

    def down(self, at_ns: int) -> None:
        # In the dialogue the press counts when it ends (short or held).
        if not self.setup.owns_buttons:
            self.inner.down(at_ns)

    def short(self, at_ns: int) -> None:
        if self.setup.owns_buttons:
            self.setup.press(Button.OK)
        else:
            self.inner.short(at_ns)

    def held(self, at_ns: int) -> None:
        if self.setup.owns_buttons:
            self.setup.press(Button.LATER)
        else:
            self.inner.held(at_ns)


class GuidedSetup(Closeable):
    """The set-up of a table with no calibration (see the module doc).

    ``source`` is the table's camera; ``save_to`` where each calibration is
    written; ``worker_options`` go to the
    :class:`~pegwatch.device.table.vision_worker.VisionWorker` it starts;
    ``base`` a calibration made before (a restart carries on from it);
    ``companions`` are started and closed with the set-up (the preview page).
    """

    def __init__(
        self,
        program: TableProgram,
        profile: BoardProfile,
        source: Any,
        *,
        save_to: Path | None = None,
        worker_options: Mapping[str, Any] | None = None,
        base: Calibration | None = None,
        period_s: float = 0.1,
        on_change: Callable[[], None] | None = None,
        companions: Sequence[Any] = (),
    ) -> None:
        from pegwatch.device.preview.look import PreviewLocaliser

        self.program = program
        self.profile = profile
        self.source = source
        self.save_to = save_to
        self.worker_options = dict(worker_options or {})
        self.period_s = period_s
        #: Called after each change of what the display shows (wakes the display loop).
        self.on_change = on_change
        self.calibration = base
        #: What lives as long as the set-up (the preview page): started with it, closed with it.
        self.companions = tuple(companions)
        self.machine = SetupMachine()
        self.localiser = PreviewLocaliser(profile)
        self.worker: Any = None
        self.reader: _Remembering | None = None
        self._corners: tuple[tuple[float, float], ...] | None = None
        self._last_loc: Any = None
        self._learned_rows: set[tuple[int, int, str]] = set()
        self._presses: queue.Queue[Button] = queue.Queue()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._said = ""
        self._framed = False  # a frame came: the camera is there
        if base is not None:
            # A restart: carry on from the calibration made before.
            left = remaining(base)
            self.machine.step = Step.ROWS if left else Step.DONE
            self.machine.to_learn = left

    # -- what the table asks ------------------------------------------------------------

    @property
    def owns_buttons(self) -> bool:
        """Whether the buttons belong to the set-up's dialogue now.

        Only while the camera gives frames and no game is under way: a
        table with no camera, or restarted in the middle of a game, keeps
        its clock on its buttons (the display still says ``SET-UP``).
        """
        return (self.machine.owns_buttons and self._framed and self.machine.seen.camera
                and self.program.flow.phase in _IDLE)

    @property
    def step(self) -> Step:
        return self.machine.step

    def buttons(self, arbiter: ArbiterButton) -> SetupButtons:
        """``arbiter`` with the set-up's dialogue in front of it (attach this one)."""
        return SetupButtons(arbiter, self)

    def press(self, button: Button) -> None:
        """A press for the set-up (any thread): queued, handled in the set-up's thread."""
        self._presses.put(button)
        self._wake.set()

    def overlay(self, model: DisplayModel) -> DisplayModel:
        """``model`` with the set-up on it: ``SET-UP`` in the header, and during the
        dialogue its banner and message (an alarm of the table's still wins)."""
        screen = self.machine.screen()
        if screen is None:
            return model
        model = replace(model, table=screen.header)
        alarm = model.message is not None and model.message.severity is Severity.ALARM
        if self.owns_buttons:
            return replace(model, banner=screen.banner, message=model.message if alarm else screen.message)
        urgent = screen.message is not None and screen.message.severity is Severity.ALARM
        if model.message is None or (urgent and not alarm):
            model = replace(model, message=screen.message)
        return model

    def submit(self, kind: str, payload: Mapping[str, Any], at_ns: int | None = None,
               jpeg: bytes | None = None) -> None:
        """The vision worker's answers on their way to the table. Until the set-up
        is done every answer says ``trust: "low"`` (the flow shows such a
        reading and never accuses from it), and one the camera is unsure of
        goes to the arbiter whole, not judged within bounds: the rows the
        arbiter confirms teach the colours."""
        if kind == "reading" and self.machine.step is not Step.DONE:
            payload = {k: v for k, v in payload.items() if k not in _BOUNDS or payload.get("status") == "ok"}
            payload["trust"] = "low"
        self.program.submit(kind, payload, at_ns, jpeg)

    # -- the thread -------------------------------------------------------------------------

    def start(self) -> GuidedSetup:
        """Run :meth:`step` in a daemon thread until :meth:`close`."""
        self._say()
        if self.calibration is not None and self.worker is None and self.machine.step in (Step.ROWS, Step.DONE):
            self._read(self.calibration)
        for companion in self.companions:
            try:
                companion.start()
            except Exception as exc:  # a helper that fails leaves the set-up as it is
                logger.error("set-up: %s not started: %s", type(companion).__name__, exc)
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="pegwatch-setup", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.step_once()
            except Exception:  # the set-up must never take the table down
                logger.exception("set-up: a step failed")
            self._wake.wait(self.period_s)
            self._wake.clear()

    def step_once(self) -> None:
        """One pass: the presses queued, then a frame looked at or rows learned."""
        while True:
            try:
                button = self._presses.get_nowait()
            except queue.Empty:
                break
            self._act(self.machine.press(button))
        if self.machine.step in (Step.BOARD, Step.EMPTY, Step.COLOURS, Step.LAYOUT):
            self._look()
        elif self.machine.step is Step.ROWS:
            self._learn_rows()
        self._say()

    def close(self) -> None:
        """Stop the set-up's thread (the worker it started belongs to the program)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        for companion in self.companions:
            companion.close()
        if self.worker is None:
            close = getattr(self.source, "close", None)
            if callable(close):
                close()

    # -- steps ------------------------------------------------------------------------------

    def _frame(self) -> NDArray[np.uint8] | None:
        try:
            got = self.source.read()
        except Exception as exc:  # the camera missing: said on the display, tried again
            self.machine.saw(Seen(found=False, camera=False, problem=str(exc) or type(exc).__name__))
            return None
        image: NDArray[np.uint8] = got[0] if isinstance(got, tuple) else got.image
        self._framed = True
        return image

    def _look(self) -> None:
        frame = self._frame()
        if frame is None or self.machine.step is not Step.BOARD:
            if frame is not None and not self.machine.seen.camera:
                self.machine.saw(replace(self.machine.seen, camera=True))
            return
        loc = self.localiser.locate(frame)
        self._last_loc = loc if loc.ok else self._last_loc
        self.machine.saw(Seen(found=loc.ok, method=loc.method if loc.ok else "",
                              markers=len(loc.markers_seen), problem=None if loc.ok else loc.problem))

    def _act(self, action: Action | None) -> None:
        if action is None:
            return
        self._journal({"action": action.value})
        if action is Action.FIX_CORNERS:
            loc = self._last_loc
            pts = loc.to_image(np.array(self.profile.corners_mm(), dtype=np.float64))
            self._corners = tuple((float(x), float(y)) for x, y in pts)
        elif action is Action.CAPTURE_EMPTY:
            self._learn_frames(EMPTY_FRAMES, {"rules": "mso", "secret": None, "rows": []}, base=None)
        elif action is Action.CAPTURE_LAYOUT:
            self._learn_card_or_layout()
        elif action in (Action.READ_LOW_TRUST, Action.READ):
            assert self.calibration is not None
            self._read(self.calibration)
        elif action is Action.STOP_READING and self.worker is not None:
            self.worker.stop()
            self.program.worker = None
            self.worker = None

    def _learn_frames(self, count: int, truth: Mapping[str, Any], *, base: Calibration | None) -> None:
        from pegwatch.vision.calibrate import calibrate

        frames = [f for f in (self._frame() for _ in range(count)) if f is not None]
        try:
            if not frames:
                raise RuntimeError(self.machine.seen.problem or "no frame from the camera")
            cal = calibrate(frames, [truth] * len(frames), self.profile, corners=self._corners if base is None else None,
                            base=base)
        except Exception as exc:  # a failed step is said and tried again, never fatal
            logger.error("set-up: %s", exc)
            self._act(self.machine.learned(False, problem=str(exc)))
            return
        self._keep(cal)
        self._act(self.machine.learned(True, to_learn=remaining(cal)))

    def _learn_card_or_layout(self) -> None:
        """The swatch card when its markers are in view (``pegwatch markers
        --swatch-card``, beside the board), else the layout on the board."""
        from pegwatch.vision.calibrate import calibrate
        from pegwatch.vision.swatch import card_for, locate_card, read_card

        frame = self._frame()
        if frame is None or self.calibration is None or locate_card(frame, card_for(self.profile)) is None:
            self._learn_frames(1, layout_record(self.profile), base=self.calibration)
            return
        try:
            samples = read_card(frame, self.profile, self.calibration, name="the swatch card")
            cal = calibrate([], [], self.profile, base=self.calibration,
                            extra_code=samples.code, extra_keys=samples.keys)
        except Exception as exc:  # said on the display, tried again
            logger.error("set-up: %s", exc)
            self._act(self.machine.learned(False, problem=str(exc)))
            return
        self._keep(cal)
        self._act(self.machine.learned(True, to_learn=remaining(cal)))

    def _keep(self, cal: Calibration) -> None:
        self.calibration = cal
        if self.reader is not None:
            from pegwatch.vision.reader import BoardReader

            self.reader.reader = BoardReader(self.profile, cal)
        if self.save_to is not None:
            try:
                cal.save(self.save_to)
            except OSError as exc:  # a full disk loses the file, not the set-up
                logger.error("set-up: calibration not saved to %s: %s", self.save_to, exc)
        left = remaining(cal)
        self._journal({"calibration": str(self.save_to or ""), "trust": cal.trust, "to_learn": list(left)})

    def _read(self, cal: Calibration) -> None:
        """Read the board with ``cal`` (starting the vision worker the first time)."""
        from pegwatch.device.table.vision_worker import VisionWorker
        from pegwatch.vision.reader import BoardReader

        if self.worker is not None:
            assert self.reader is not None
            self.reader.reader = BoardReader(self.profile, cal)
            return
        self.reader = _Remembering(BoardReader(self.profile, cal))
        self.worker = VisionWorker(self.source, self.reader, submit=self.submit, **self.worker_options)
        self.worker.on_camera = self.program._camera_changed
        self.program.worker = self.worker
        self.worker.start()

    def _learn_rows(self) -> None:
        """Learn the colours of the rows the arbiter has confirmed since the last time."""
        from pegwatch.vision.calibrate import calibrate

        if self.reader is None or self.reader.last is None or self.calibration is None:
            return
        game = self.program.flow.game
        rows = list(game.rows)
        # Only what a person confirmed is truth: never the camera's own low-trust reading.
        known = {(game.number, r.number, half) for r in rows if r.confirmed_by is not None
                 for half, state in (("guess", r.guess_state), ("marks", r.marks_state)) if state is RowState.READ}
        if known <= self._learned_rows:
            return
        frame, reading = self.reader.last
        if reading.problem is not None:
            return
        truth = _truth_of([r if r.confirmed_by is not None else None for r in rows], self.profile)
        try:
            cal = calibrate([frame], [truth], self.profile, base=self.calibration)
        except Exception as exc:  # not learned now; tried again at the next confirmed row
            logger.warning("set-up: confirmed rows not learned: %s", exc)
            self._learned_rows |= known
            return
        self._learned_rows |= known
        self._keep(cal)
        self._act(self.machine.learned(True, to_learn=remaining(cal)))

    # -- telling -------------------------------------------------------------------------

    def _journal(self, payload: Mapping[str, Any]) -> None:
        self.program.submit("setup", {"step": self.machine.step.value, **payload})

    def _say(self) -> None:
        status = self.machine.status()
        if status == self._said:
            return
        self._said = status
        logger.warning("%s", status)
        if self.machine.step is Step.LAYOUT:
            for line in layout_lines(self.profile):
                logger.warning("set-up layout: %s", line)
        self._journal({"status": status})
        if self.on_change is not None:
            self.on_change()


def _truth_of(rows: list[Any], profile: BoardProfile) -> dict[str, Any]:
    """What the table knows of the board: the confirmed halves; everything else unknown."""
    out: list[dict[str, Any]] = []
    for number in range(1, profile.rows + 1):
        row = rows[number - 1] if number <= len(rows) else None
        guess = [UNKNOWN] * profile.holes
        black: Any = UNKNOWN
        white: Any = UNKNOWN
        if row is not None and row.guess_state is RowState.READ and row.guess is not None:
            guess = list(row.guess)
        if row is not None and row.marks_state is RowState.READ and row.marks is not None:
            black, white = row.marks.black, row.marks.white
        out.append({"guess": guess, "black": black, "white": white})
    return {"rules": "mso", "secret": [UNKNOWN] * profile.holes, "rows": out}
