"""The camera beside the clock: frames in, answers to the match flow's read requests out.

The :class:`VisionWorker` reads frames from a source, reads each with the
board reader, follows motion with :class:`pegwatch.vision.temporal.StableBoard`, and
answers the requests of :meth:`pegwatch.rules.flow.MatchFlow.read_requests`:
for a row confirmed by a press at ``t``, the answer is the first reading
that stays the same, and still, over ``frames_to_accept`` frames all taken
at or after ``t`` (so a peg moved before the press never counts, and one
moved after it is seen moving). A frame that only knows less than that
reading and says nothing against it (a hole in doubt with the reading's
colour among its candidates, a key count whose bounds hold the reading's)
neither counts for it nor breaks its run: sensor noise leaves a marginal
hole in doubt in one frame and not in the next
(:mod:`~pegwatch.device.table.row_values`). When no such reading comes
within ``give_up_frames`` frames, the answer is "unknown" or "occluded"
and the row waits for the arbiter: the worker never guesses.

A row the camera cannot read for certain is still answered with what is
known, once a run of at least ``frames_to_accept`` still frames each knew
something of it: everything those frames left possible, per hole the
colours it may hold (``candidates``, null for anything) and the key
counts' bounds, never more than any one frame knew. The flow then judges
it over every completion. Every answer carries the board's ``trust``. The secret is
accepted only from ``secret_frames`` identical frames in which every hole
reads confidently, on a trusted board, with nothing over the shield's area;
the accepted code is then watched (``secret_watch``), and answered again
only when it reads differently, for the alarm.

It runs in a thread of its own (:meth:`start`) so that nothing it does can
stall the clock; :meth:`feed` processes one frame synchronously, which is
what the scripted demo and the tests use. Answers go to ``submit`` (the
table program's queue) with the frame's JPEG as evidence.

A source that raises (the camera unplugged) makes :attr:`camera_ok` False;
the worker retries every ``retry_s`` and reading resumes when frames come
back.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from pegwatch.device.table.row_values import (
    Value,
    known_payload,
    known_value,
    row_value,
    says_less,
    secret_value,
    widen,
)
from pegwatch.rules.flow import ReadRequest
from pegwatch.vision.reading import BoardReading, RowReading
from pegwatch.vision.sources import FrameSource
from pegwatch.vision.temporal import StableBoard

logger = logging.getLogger(__name__)

__all__ = ["FrameSource", "ReaderLike", "Submit", "VisionWorker"]

Frame = NDArray[np.uint8]
Submit = Callable[[str, Mapping[str, Any], int, bytes | None], None]
"""``submit(kind, payload, at_ns, jpeg)``: hand an event to the table program."""


class ReaderLike(Protocol):
    """What the worker needs of :class:`pegwatch.vision.reader.BoardReader`."""

    def read(self, frame: Frame, *, at_ns: int | None = None) -> BoardReading: ...


@dataclass
class _Progress:
    value: tuple[object, ...] | None = None
    count: int = 0
    frames: int = 0
    bad: str = "unknown"
    best: RowReading | None = None


class VisionWorker:
    """Answers the flow's read requests from camera frames (see the module doc)."""

    def __init__(
        self,
        source: FrameSource | None,
        reader: ReaderLike,
        *,
        submit: Submit,
        frames_to_accept: int = 3,
        give_up_frames: int = 12,
        secret_frames: int | None = None,
        motion_threshold: float | None = None,
        jpeg_quality: int = 85,
        evidence: bool = True,
        retry_s: float = 0.5,
        on_camera: Callable[[bool, str], None] | None = None,
    ) -> None:
        self.source = source
        self.reader = reader
        self.submit = submit
        self.frames_to_accept = max(1, frames_to_accept)
        self.give_up_frames = max(self.frames_to_accept, give_up_frames)
        # The secret is accepted once only and judges every row: it must
        # read the same in at least three frames, and never fewer than a row.
        self.secret_frames = max(self.frames_to_accept,
                                 secret_frames if secret_frames is not None else 3)
        self.stable = (
            StableBoard(frames_to_accept=self.frames_to_accept)
            if motion_threshold is None
            else StableBoard(frames_to_accept=self.frames_to_accept, motion_threshold=motion_threshold)
        )
        self.jpeg_quality = jpeg_quality
        self.evidence = evidence
        self.retry_s = retry_s
        self.on_camera = on_camera
        self.camera_ok = True
        self.camera_problem = ""
        self.frames_read = 0
        self.last_reading: BoardReading | None = None
        self._lock = threading.Lock()
        self._requests: tuple[tuple[ReadRequest, int], ...] = ()
        self._progress: dict[tuple[int, int, str], _Progress] = {}
        # Per row and kind of value ("guess", "marks", "secret"): the value
        # read in the latest frames and for how many frames in a row, still.
        self._streaks: dict[tuple[int, str], tuple[tuple[object, ...] | None, int]] = {}
        self._answered: set[tuple[int, int, str, int]] = set()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- requests ---------------------------------------------------------------

    def set_requests(self, requests: Sequence[ReadRequest], offset_ns: int = 0) -> None:
        """Replace the open requests. ``offset_ns`` maps the flow's continuous
        time to this boot's monotonic stamps (``raw = continuous - offset``)."""
        with self._lock:
            self._requests = tuple((r, r.not_before_ns - offset_ns) for r in requests)
            keys = {(r.game, r.row, r.phase) for r in requests}
            for key in list(self._progress):
                if key not in keys:
                    del self._progress[key]

    @property
    def has_requests(self) -> bool:
        """True while some request is not answered yet."""
        with self._lock:
            return any(
                (r.game, r.row, r.phase, r.not_before_ns) not in self._answered
                for r, _ in self._requests
            )

    # -- frames -----------------------------------------------------------------

    def feed(self, frame: Frame, at_ns: int) -> BoardReading:
        """Read one frame stamped ``at_ns`` and answer what it settles."""
        reading = self.reader.read(frame, at_ns=at_ns)
        self.stable.update(reading)
        self._update_streaks(reading)
        self.frames_read += 1
        self.last_reading = reading
        with self._lock:
            requests = self._requests
        for request, raw_not_before in requests:
            key = (request.game, request.row, request.phase)
            done_key = (*key, request.not_before_ns)
            if done_key in self._answered or at_ns < raw_not_before:
                continue
            answer = self._advance(request, reading)
            if answer is None:
                continue
            with self._lock:
                self._answered.add(done_key)
                self._progress.pop(key, None)
            # Row 0 is the secret: its frame is the evidence for the final judgement.
            jpeg = self._jpeg(frame) if self.evidence else None
            answer["frame_ns"] = at_ns
            self.submit("reading", answer, at_ns, jpeg)
        return reading

    def _update_streaks(self, reading: BoardReading) -> None:
        moving = self.stable.moving_rows
        for row in reading.rows:
            for kind in ("guess", "marks"):
                value = known = None
                if reading.problem is None and row.row not in moving:
                    value = row_value(row, kind)
                    known = known_value(row, kind)
                held = self._streaks.get((row.row, kind), (None, 0))[0]
                if value is not None or not says_less(known, held, kind):
                    self._bump((row.row, kind), value)
                self._widen((row.row, f"{kind} known"), known)
        self._bump((0, "secret"), secret_value(reading))

    def _bump(self, key: tuple[int, str], value: tuple[object, ...] | None) -> None:
        old, count = self._streaks.get(key, (None, 0))
        if value is None:
            self._streaks[key] = (None, 0)
        else:
            self._streaks[key] = (value, count + 1 if value == old else 1)

    def _widen(self, key: tuple[int, str], known: Value | None) -> None:
        old, count = self._streaks.get(key, (None, 0))
        if known is None:
            self._streaks[key] = (None, 0)
        else:
            self._streaks[key] = (known, 1) if old is None else (widen(old, known), count + 1)

    def _known(self, row: int, phase: str) -> Value | None:
        """Everything the still frames of the row's latest run left possible,
        once the run is ``frames_to_accept`` frames long: each of them knew
        something of the row, and none saw it move."""
        known, count = self._streaks.get((row, f"{phase} known"), (None, 0))
        return known if count >= self.frames_to_accept else None

    def _streak(self, row: int, kind: str) -> int:
        """For how many frames up to this one the value has stayed the same and still.

        A value that was already stable before the press and is still there,
        unmoved, in the first frame after it is what was confirmed: no need to
        wait for more frames (this keeps press-to-verdict short)."""
        return self._streaks.get((row, kind), (None, 0))[1]

    def _advance(self, request: ReadRequest, reading: BoardReading) -> dict[str, Any] | None:
        key = (request.game, request.row, request.phase)
        with self._lock:
            p = self._progress.setdefault(key, _Progress())
        p.frames += 1
        base: dict[str, Any] = {"game": request.game, "row": request.row, "phase": request.phase}
        if reading.problem is not None:
            if request.phase == "secret_watch":
                return None  # a watch never gives up
            p.value, p.count, p.bad = None, 0, "unknown"
            return self._give_up(p, base, request)
        if request.phase in ("secret", "secret_hidden", "secret_watch"):
            return self._advance_secret(p, request, reading, base)
        base["trust"] = reading.trust
        row = reading.row(request.row)
        moving = request.row in self.stable.moving_rows
        value = None if moving else row_value(row, request.phase)
        if value is None:
            p.value, p.count = None, 0
            p.bad = "occluded" if moving or row.status == "occluded" else "unknown"
            p.best = row
            known = self._known(request.row, "marks") if request.phase == "marks" and row.keys.is_certain else None
            if known is not None and known[1] == "exact":
                # The keys are counted, the same and still; the holes' doubt
                # was the guess's to settle: no need to wait for the give-up.
                return {**base, **self._row_payload(row), **known_payload(known), "status": p.bad}
            return self._give_up(p, base, request)
        p.value = value
        p.best = row
        if self._streak(request.row, request.phase) < self.frames_to_accept:
            return self._give_up(p, base, request)
        return {**base, **self._row_payload(row), **_doubt_payload(row), "status": "ok"}

    @staticmethod
    def _bounds_payload(row: RowReading) -> dict[str, Any]:
        """What one frame knew of the row (:func:`known_payload` then says what
        the run of frames knew)."""
        return {
            "candidates": _candidates(row),
            "black_bounds": None if row.keys.black_bounds is None else list(row.keys.black_bounds),
            "white_bounds": None if row.keys.white_bounds is None else list(row.keys.white_bounds),
        }

    def _advance_secret(
        self, p: _Progress, request: ReadRequest, reading: BoardReading, base: dict[str, Any]
    ) -> dict[str, Any] | None:
        shield = "open" if request.phase == "secret" else "closed"
        base = {**base, "phase": "secret", "shield": shield, "trust": reading.trust}
        value = secret_value(reading)
        if request.phase == "secret_watch":
            # Answered only when the accepted code reads differently, as
            # surely as it was accepted: the flow raises the alarm.
            if (value is None or request.expect is None or value == (tuple(request.expect),)
                    or self._streak(0, "secret") < self.secret_frames):
                return None
            assert reading.secret is not None
            return {**base, "code": [h.colour for h in reading.secret], "status": "ok"}
        if value is None:
            p.value, p.count = None, 0
            if reading.secret is None and request.phase == "secret_hidden":
                # The camera cannot see under the shield: nothing to store.
                if p.frames >= self.frames_to_accept:
                    return {**base, "code": None, "status": "hidden"}
                return None
            if reading.secret is None:
                return None  # the shield is still closed: wait for it to open
            p.bad = "unknown"
            if p.frames >= self.give_up_frames and request.phase == "secret":
                return {**base, "code": [h.colour for h in reading.secret], "status": "unknown"}
            if p.frames >= self.give_up_frames:
                return {**base, "code": None, "status": "unknown"}
            return None
        p.value = value
        if self._streak(0, "secret") < self.secret_frames:
            return None
        assert reading.secret is not None
        return {
            **base,
            "code": [h.colour for h in reading.secret],
            "confidence": [round(h.confidence, 4) for h in reading.secret],
            "status": "ok",
        }

    def _give_up(
        self, p: _Progress, base: dict[str, Any], request: ReadRequest
    ) -> dict[str, Any] | None:
        if p.frames < self.give_up_frames:
            return None
        payload = {**base, "status": p.bad}
        if p.best is not None:
            payload.update(self._row_payload(p.best))
            known = self._known(request.row, request.phase)
            if known is not None:
                payload.update(self._bounds_payload(p.best))
                payload.update(known_payload(known))
        return payload

    @staticmethod
    def _row_payload(row: RowReading) -> dict[str, Any]:
        return {
            "guess": list(row.guess),
            "black": row.keys.black,
            "white": row.keys.white,
            "keys_status": row.keys.status,
            "row_status": row.status,
            "confidence": [round(h.confidence, 4) for h in row.holes],
            "keys_confidence": round(row.keys.confidence, 4),
        }

    def _jpeg(self, frame: Frame) -> bytes | None:
        import cv2

        ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, self.jpeg_quality])
        return bytes(buf.tobytes()) if ok else None

    # -- the thread -------------------------------------------------------------

    def poll(self) -> bool:
        """Read and process one frame from the source; False if the camera is gone."""
        if self.source is None:
            return False
        try:
            got = self.source.read()
            frame, at_ns = got if isinstance(got, tuple) else (got.image, got.at_ns)
        except Exception as exc:  # any failure of the camera is "camera gone"
            self._camera(False, str(exc) or type(exc).__name__)
            return False
        self._camera(True, "")
        self.feed(frame, at_ns)
        return True

    def _camera(self, ok: bool, problem: str) -> None:
        if ok == self.camera_ok:
            return
        self.camera_ok = ok
        self.camera_problem = problem
        if ok:
            logger.warning("camera back")
        else:
            logger.error("camera gone: %s", problem)
        if self.on_camera is not None:
            self.on_camera(ok, problem)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                if not self.poll():
                    self._stop.wait(self.retry_s)
            except Exception:  # the worker must never die: the clock goes on regardless
                logger.exception("vision worker: frame failed")
                self._stop.wait(self.retry_s)

    def start(self) -> None:
        """Run :meth:`poll` in a daemon thread until :meth:`stop`."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="pegwatch-vision", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the thread (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        close = getattr(self.source, "close", None)
        if callable(close):
            close()


def wait_for(predicate: Callable[[], bool], timeout_s: float, step_s: float = 0.01) -> bool:
    """Poll ``predicate`` until true or ``timeout_s`` passes (tests, demo)."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step_s)
    return predicate()


def _doubt_payload(row: RowReading) -> dict[str, Any]:
    """For a row answered ``ok`` with a peg read not quite surely, its ``candidates``: the
    flow judges it as any colour that peg may still be. Only there: on an answer that is
    not ``ok``, ``candidates`` say what still frames knew (:func:`known_payload`), and
    without them the row goes to the arbiter."""
    if not any(h.is_certain and len(h.possible or ()) > 1 for h in row.holes):
        return {}
    return {"candidates": _candidates(row)}


def _candidates(row: RowReading) -> list[list[str] | None]:
    """Per hole the colours it may hold (null: anything), as the flow reads ``candidates``."""
    return [None if h.possible is None else list(h.possible) for h in row.holes]
