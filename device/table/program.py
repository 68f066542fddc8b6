"""The table program: clock buttons, camera, display and journal around the match flow.

Everything that happens at the table becomes an event on one queue
(:meth:`TablePlayer.submit`): a press from the GPIO thread with its
``time.monotonic_ns()`` stamp, a reading from the vision worker's thread,
an arbiter action. The main loop (:meth:`TableProgram.step`) takes them in
order and, for each, **journals it first** and then applies it to the pure
:class:`pegwatch.rules.flow.MatchFlow`; the verdicts the flow returns are
journaled too. Nothing in that loop waits for the camera or the display:
the vision worker runs in its own thread, and a display that fails is
reported and skipped. A full disk does not stop the clock either: T1's
:class:`pegwatch.device.table.journal.JournalWriter` holds events in memory, raises an
alarm, and writes them when space returns.

The parts that follow the flow are rooms of their own, mixed into
:class:`TableProgram`: the arbiter's menu (:mod:`~pegwatch.device.table.menu_wiring`),
the buzzer (:mod:`~pegwatch.device.table.buzzer_wiring`) and the display's
faces and messages (:mod:`~pegwatch.device.table.faces`). Re-running a
journal is :mod:`~pegwatch.device.table.replay`.

On start the journal is replayed (:meth:`TableProgram.open`). When it held
a match in progress, a ``boot`` event is journaled: the clock comes back
paused at the last journaled instant (the outage is cut out of the
timeline, see ``docs/journal.md``) and waits for the arbiter to resume.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pegwatch.device.hardware.buzzer import Alert, BuzzerSettings, LowTimeWarnings, Sounder
from pegwatch.device.lifetime import Closeable
from pegwatch.device.table.arbiter_menu import ArbiterMenu
from pegwatch.device.table.buzzer_wiring import BuzzerWiring
from pegwatch.device.table.faces import DisplaySink, TableFaces
from pegwatch.device.table.journal import (
    Journal,
    JournalError,
    JournalEvent,
    JournalWriter,
    PendingEvent,
)
from pegwatch.device.table.menu_wiring import TABLE_MENU_ITEMS, MenuWiring, table_presets
from pegwatch.device.table.replay import (
    FLOW_KINDS,
    ReplayResult,
    flow_from_journal,
    log_from_journal,
    muted_in,
    replay_journal,
)
from pegwatch.device.table.rulings import RULING, FlowLog
from pegwatch.device.table.vision_worker import VisionWorker
from pegwatch.rules.codes import EMPTY
from pegwatch.rules.flow import FlowError, MatchFlow, Outcome, Verdict
from pegwatch.rules.flow.verdicts import (
    Check,
    Flag,
    Illegal,
    Inconsistent,
    JointConfirm,
    Mismark,
    RowJudged,
)

if TYPE_CHECKING:
    from pegwatch.device.table.config import TableConfig

logger = logging.getLogger(__name__)

# DisplaySink, FLOW_KINDS and the replay functions are imported from here too.
__all__ = [
    "FLOW_KINDS",
    "DisplaySink",
    "ReplayResult",
    "TableProgram",
    "flow_from_journal",
    "replay_journal",
]

#: The verdicts that call for a person at the table: an alert on the buzzer.
ALERT_VERDICTS = (Mismark, Inconsistent, Check, Illegal)


@dataclass(frozen=True)
class _Queued:
    kind: str
    payload: Mapping[str, Any]
    at_ns: int
    jpeg: bytes | None = None


class TableProgram(TableFaces, MenuWiring, BuzzerWiring, Closeable):
    """The table's main loop around a :class:`MatchFlow` (see the module doc).

    ``now_ns`` is the time source (``time.monotonic_ns``; the demo gives a
    virtual one). ``on_line`` receives each transcript line. A ``worker``
    given here is wired to this program: its answers go to :meth:`submit`
    and its camera state to the display. ``displays`` are refreshed after
    every :meth:`step` (the Pi uses :class:`pegwatch.device.display.loop.DisplayLoop`
    on :meth:`display_model` instead). ``palette`` names the colours the
    arbiter may enter by hand (the board profile's, as the camera names
    them; default: the variant's). ``sounder`` is the table's buzzer (see
    :meth:`attach_sounder`). ``log`` is the flow's
    :class:`~pegwatch.device.table.rulings.FlowLog` when the flow was
    rebuilt from a journal (:meth:`open`); the arbiter's undo needs it.
    """

    def __init__(
        self,
        flow: MatchFlow,
        journal: Journal,
        *,
        worker: VisionWorker | None = None,
        displays: tuple[DisplaySink, ...] = (),
        now_ns: Callable[[], int] = time.monotonic_ns,
        on_line: Callable[[str], None] | None = None,
        offset_ns: int = 0,
        watchdog: Any = None,
        heartbeat_ns: int = 1_000_000_000,
        palette: Sequence[str] | None = None,
        sounder: Sounder | None = None,
        table_name: str | None = None,
        log: FlowLog | None = None,
    ) -> None:
        #: The flow and the events it took (an undo rebuilds the flow from them).
        self.log = log if log is not None and log.flow is flow else FlowLog.around(flow)
        self.flow = flow
        self.journal = journal
        #: ``[table] name``: shown in the display's header, kept in the journal's meta.
        self.table_name = table_name
        # Under [journal] max_mb, the images of finished games may be evicted.
        self.writer = JournalWriter(
            journal, when_alarm=self._journal_alarm, prunable=self._finished_games
        )
        self.worker = worker
        self.displays = list(displays)
        self.now_ns = now_ns
        self.on_line = on_line
        #: Called on the stepping thread after a :meth:`step` that journaled
        #: something or said a line: the hall's publisher looks at the table at
        #: once instead of at its next round.
        self.when_changed: Callable[[], None] | None = None
        self._changed = False
        self.watchdog = watchdog
        #: continuous (flow) time = this boot's monotonic stamp + offset_ns
        self.offset_ns = offset_ns
        #: While a clock runs, a ``tick`` is journaled this often, so that a
        #: power cut loses at most this much of the running player's time
        #: (the clock comes back at the last journaled instant).
        self.heartbeat_ns = heartbeat_ns
        self.queue: queue.Queue[_Queued] = queue.Queue()
        self.transcript: list[str] = []
        self.verdicts: list[Verdict] = []
        self.alarm: str | None = None
        self.camera_message: str | None = None
        self.display_failures: dict[int, str] = {}
        self.last_lines: list[str] = []
        self.verdict_ns: dict[tuple[int, int], int] = {}
        self._last_raw = 0
        self._lock = threading.RLock()
        colours = tuple(str(c).strip().lower() for c in (palette or flow.variant.palette))
        if flow.variant.blanks and EMPTY not in colours:
            colours = (*colours, EMPTY)
        #: What a hole may hold when the arbiter enters a row by hand.
        self.palette = colours
        #: The arbiter's menu (opened by a long press of the arbiter button).
        self.menu = ArbiterMenu(players=2, items=TABLE_MENU_ITEMS, presets=table_presets())
        #: The buzzer, if the table has one (:meth:`attach_sounder`).
        self.sounder: Sounder | None = None
        self._muted = False  # in force: changed only by a journaled event
        self._mute_asked = False  # what the last mute/unmute queued asks for
        self._muted_by_journal = False  # the journal, not [buzzer] muted, says
        self._low_time = LowTimeWarnings.start(BuzzerSettings().low_time_warnings_ns, players=2)
        self._low_time_game = flow.game.number
        self._remaining_seen = self._remaining(self.now_ns() + offset_ns)
        if sounder is not None:
            self.attach_sounder(sounder)
        if worker is not None:
            worker.on_camera = self._camera_changed
            worker.submit = self.submit
            self._push_requests()

    # -- construction from a journal -----------------------------------------------

    @classmethod
    def open(
        cls,
        journal_path: str | Path,
        *,
        players: tuple[str, str],
        rules: str = "mso",
        clock: str = "mso-mastermind",
        max_bytes: int | None = None,
        **options: Any,
    ) -> TableProgram:
        """Open (or create) the journal, replay it, and come back paused if a
        match was in progress.

        ``max_bytes`` caps the journal (``[journal] max_mb``; see
        :class:`JournalWriter`); ``table_name`` (an option) is shown in the
        display's header and kept in the journal's meta ``table``.
        """
        journal = Journal(journal_path, max_bytes=max_bytes)
        try:
            log, line, events, missing = log_from_journal(
                journal, players=players, rules=rules, clock=clock
            )
        except Exception:
            journal.close()
            raise
        flow = log.flow
        program = cls(flow, journal, log=log, **options)
        muted = muted_in(events)
        if muted is not None:
            program._muted_by_journal = True
            program._set_muted(muted)
        now = program.now_ns()
        if events:
            # Verdicts the flow reached for events journaled just before a
            # crash, which the crash kept from the journal: written now, in order.
            last_at = events[-1].at_ns if events[-1].boot_id == journal.boot_id else 0
            for verdict in missing:
                program.writer.append("verdict", verdict.to_json(), at_ns=max(now, last_at))
            # A restart: journal it at once, paused, waiting for the arbiter.
            event = program.writer.append("boot", {"after_seq": journal.last_seq}, at_ns=now)
            cont = line.add(event) if isinstance(event, JournalEvent) else line.last_ns
            program.offset_ns = cont - now
            program._last_raw = now
            # Through the log: an undo after the restart rebuilds the boot's pause too.
            program._emit(program.log.apply("boot", {}, cont))
            program._low_time_game = flow.game.number
            program._remaining_seen = program._remaining(cont)
        else:
            program.writer.append(
                "match", {"players": list(players), "rules": rules, "clock": clock}, at_ns=now
            )
            program._last_raw = now
        program._record_table_name()
        program._push_requests()
        return program

    @classmethod
    def from_config(cls, cfg: TableConfig, journal_path: str | Path, **options: Any) -> TableProgram:
        """:meth:`open` with what the configuration says: players, presets,
        ``[table] name`` and ``[journal] max_mb`` (``pegwatch run``)."""
        options.setdefault("table_name", cfg.table_name)
        return cls.open(
            journal_path, players=cfg.players, rules=cfg.rules, clock=cfg.clock,
            max_bytes=cfg.journal_max_bytes, **options,
        )

    def _record_table_name(self) -> None:
        """Keep ``[table] name`` in the journal's meta (the latest run's), for exports."""
        name = self.table_name
        if name is None or self.journal.meta.get("table") == name:
            return
        try:
            self.journal.set_meta("table", name)
        except JournalError as exc:  # a full disk must not keep the table from starting
            logger.error("table name not recorded in the journal: %s", exc)

    def _finished_games(self) -> list[int]:
        """The games whose evidence images may be evicted under the size cap."""
        return [g.number for g in self.flow.games if g.final]

    # -- events in ---------------------------------------------------------------------

    def submit(
        self, kind: str, payload: Mapping[str, Any], at_ns: int | None = None, jpeg: bytes | None = None
    ) -> None:
        """Queue one event (any thread). ``at_ns`` defaults to now."""
        stamp = self.now_ns() if at_ns is None else at_ns
        self.queue.put(_Queued(kind, dict(payload), stamp, jpeg))

    def press(self, seat: int, at_ns: int | None = None) -> None:
        """A player's clock button (seat 0 is the first-named player)."""
        self.submit("press", {"player": seat}, at_ns)

    def arbiter(self, action: str, at_ns: int | None = None, **payload: Any) -> None:
        """An arbiter action (pause, resume, adjust, confirm_row, confirm_secret)."""
        self.submit("arbiter", {"action": action, **payload}, at_ns)

    def ruling(self, action: str, at_ns: int | None = None, *, by: str = "arbiter", why: str = "",
               **payload: Any) -> None:
        """An arbiter's ruling (undo, set, penalty, preset; see
        :mod:`~pegwatch.device.table.rulings`), journaled with who gave it and why."""
        self.submit(RULING, {"action": action, **payload, "by": by, "why": why}, at_ns)

    def confirm_row_from_camera(self, game: int, row: int, *, by: str = "arbiter") -> bool:
        """Confirm a row waiting for a check with what the camera reads now.

        Returns False (and shows why) when the camera still cannot read it:
        the arbiter then enters the row by hand (``confirm_row`` with values).
        """
        reading = self.worker.last_reading if self.worker is not None else None
        if reading is None or reading.problem is not None:
            self._say("the camera cannot read the board: enter the row by hand")
            return False
        r = reading.row(row)
        if r.status != "ok":
            self._say(f"row {row} still reads {r.status}: enter it by hand")
            return False
        self.arbiter("confirm_row", game=game, row=row, guess=list(r.guess),
                     black=r.keys.black, white=r.keys.white, by=by)
        return True

    # -- the loop -------------------------------------------------------------------------

    def step(self, *, timeout: float = 0.0) -> int:
        """Process every queued event (waiting up to ``timeout`` for the first);
        then check for a flag and refresh the display. Returns how many events
        were processed."""
        done = 0
        try:
            item: _Queued | None = self.queue.get(timeout=timeout) if timeout > 0 else self.queue.get_nowait()
        except queue.Empty:
            item = None
        while item is not None:
            self._handle(item)
            done += 1
            try:
                item = self.queue.get_nowait()
            except queue.Empty:
                item = None
        now = self.now_ns()
        self._check_flag(now)
        with self._lock:
            self._follow_low_time(now + self.offset_ns)
        if (
            self.heartbeat_ns > 0
            and now - self._last_raw >= self.heartbeat_ns
            and self.flow.on_move(now + self.offset_ns) is not None
        ):
            self._journal_and_apply("tick", {}, now)
        self._push_requests()
        self.writer.flush()
        self.refresh_display()
        if self.watchdog is not None:
            self.watchdog.tick()
        if self._changed:
            self._changed = False
            if self.when_changed is not None:
                self.when_changed()
        return done

    def run(self, stop: threading.Event, *, period_s: float = 0.02) -> None:
        """Run :meth:`step` until ``stop`` is set (the real table's main loop)."""
        while not stop.is_set():
            self.step(timeout=period_s)

    def _stamp(self, at_ns: int) -> int:
        # Journaled stamps never go back within a boot (the journal's
        # timeline would read that as a restart): a press that raced a
        # reading through the queue keeps its order, with the later stamp.
        raw = max(at_ns, self._last_raw)
        self._last_raw = raw
        return raw

    def _check_flag(self, raw_now: int) -> None:
        due = self.flow.flag_due(raw_now + self.offset_ns)
        if due is None:
            return
        seat, flag_cont = due
        self._journal_and_apply("flag", {"player": seat, "flag_ns": flag_cont}, flag_cont - self.offset_ns)

    def _handle(self, item: _Queued) -> None:
        if item.kind in ("press", "arbiter", "reading"):
            self._check_flag(item.at_ns)
        self._journal_and_apply(item.kind, item.payload, item.at_ns, item.jpeg)

    def _journal_and_apply(
        self, kind: str, payload: Mapping[str, Any], at_ns: int, jpeg: bytes | None = None
    ) -> Outcome:
        with self._lock:
            return self._journal_and_apply_locked(kind, payload, at_ns, jpeg)

    def _journal_and_apply_locked(
        self, kind: str, payload: Mapping[str, Any], at_ns: int, jpeg: bytes | None
    ) -> Outcome:
        raw = self._stamp(at_ns)
        self._changed = True
        # Journal first: nothing acts before it is on the disk (or held, with an alarm).
        event = self.writer.append(kind, payload, at_ns=raw)
        if jpeg is not None and kind == "reading":
            self._store_evidence(event, payload, jpeg)
        cont = raw + self.offset_ns
        # The warnings due before this event, at its own instant.
        self._follow_low_time(cont)
        try:
            outcome = self.log.apply(kind, payload, cont)
        except FlowError as exc:
            # Bad input never stops the table: one line, and on we go.
            self._say(f"{kind} refused: {exc}")
            return Outcome()
        finally:
            # An undo or a new preset rebuilds the flow.
            self.flow = self.log.flow
        self._after(kind, payload, cont)
        self._emit(outcome, raw)
        self._follow_low_time(cont)
        return outcome

    def _after(self, kind: str, payload: Mapping[str, Any], cont: int) -> None:
        """What a journaled event does beyond the flow: mute, re-arm, alerts."""
        action = payload.get("action")
        if kind == "menu" and action in ("mute", "unmute"):
            self._set_muted(action == "mute")
            self._say("buzzer muted" if self._muted else "buzzer on")
        elif kind == "arbiter" and action == "adjust":
            seat = payload.get("player")
            if isinstance(seat, int) and 0 <= seat < 2:
                # Time given back by the arbiter re-arms its warnings.
                self._low_time = self._low_time.rearm(seat, self._remaining(cont)[seat])
        elif kind == RULING:
            # A time set, a penalty's time or an undo: the warnings follow the new times.
            left = self._remaining(cont)
            for seat in (0, 1):
                self._low_time = self._low_time.rearm(seat, left[seat])
            self._remaining_seen = left
        elif kind == "camera" and payload.get("state") == "lost":
            self._sound(Alert.ALERT)

    def _store_evidence(self, event: JournalEvent | PendingEvent, payload: Mapping[str, Any], jpeg: bytes) -> None:
        game, row = payload.get("game"), payload.get("row")
        if not isinstance(game, int) or not isinstance(row, int) or row < 0:  # row 0: the secret
            return
        try:
            self.writer.store_evidence(event, game=game, row=row, image=jpeg, reading=payload)
        except Exception as exc:  # evidence is precious but must not stop the clock
            logger.error("evidence for game %s row %s not stored: %s", game, row, exc)

    def _emit(self, outcome: Outcome, raw: int | None = None) -> None:
        stamp = self._last_raw if raw is None else raw
        for verdict in outcome.verdicts:
            self.writer.append("verdict", verdict.to_json(), at_ns=stamp)
            self.verdicts.append(verdict)
            if isinstance(verdict, RowJudged | Check):
                self.verdict_ns.setdefault((verdict.game, verdict.row), time.monotonic_ns())
        for line in outcome.lines:
            self._say(line)
        if any(isinstance(verdict, Flag) for verdict in outcome.verdicts):
            self._sound(Alert.FLAG)
        if any(isinstance(verdict, ALERT_VERDICTS) for verdict in outcome.verdicts):
            self._sound(Alert.ALERT)
        for verdict in outcome.verdicts:
            if isinstance(verdict, JointConfirm):
                self.confirm_row_from_camera(verdict.game, verdict.row, by="players")
        if outcome.ignored:
            logger.info("ignored: %s", outcome.ignored)

    def _say(self, line: str) -> None:
        self._changed = True
        self.transcript.append(line)
        self.last_lines = [*self.last_lines, line][-4:]
        if self.on_line is not None:
            self.on_line(line)

    def _push_requests(self) -> None:
        if self.worker is not None:
            self.worker.set_requests(self.flow.read_requests(), self.offset_ns)

    # -- alarms ---------------------------------------------------------------------------

    def _journal_alarm(self, alarm: str | None) -> None:
        self.alarm = alarm
        if alarm is not None:
            self._say(f"ALARM: {alarm}")
            self._sound(Alert.ALERT)

    def _camera_changed(self, ok: bool, problem: str) -> None:
        # Called from the vision thread: queue an informational event.
        self.camera_message = None if ok else "CAMERA LOST"
        self.submit("camera", {"state": "back" if ok else "lost", "problem": problem[:200]})

    # -- lifetime ---------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the worker, write what is held, close the journal."""
        if self.worker is not None:
            self.worker.stop()
        try:
            self.writer.flush()
        finally:
            self.journal.close()
