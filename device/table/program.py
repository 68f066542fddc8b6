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

The arbiter's button opens a menu (:attr:`TableProgram.menu`, a
:class:`pegwatch.device.table.arbiter_menu.ArbiterMenu`; :meth:`TableProgram.menu_held`,
:meth:`~TableProgram.menu_short`, :meth:`~TableProgram.menu_player`), in
which they can adjust a time or enter a row or the secret by hand; the
entry is committed as an ``arbiter confirm_row`` (``hand: true``) or
``confirm_secret`` event with ``by: "arbiter"``, through the journal like
every other event. Opening, closing and cancelling are journaled as
``menu`` events (information; the flow ignores them).

The buzzer (:meth:`TableProgram.attach_sounder`, a
:class:`pegwatch.device.hardware.buzzer.Sounder`) is an output, never an event: the low-time
warnings (:class:`pegwatch.device.hardware.buzzer.LowTimeWarnings`, each threshold once per
player per game, crossed between two instants of the flow's clock: before
every event at its stamp and at every :meth:`~TableProgram.step`), the
flag, and an alert for whatever needs a person (a mis-mark, marks no code
fits, a row or the secret to check, an illegal guess, the camera gone, the
journal's alarm). Sounding only queues the pattern for the buzzer's own
thread. MUTE in the menu (or :meth:`~TableProgram.set_muted`) is journaled
as ``menu {action: "mute"|"unmute"}`` before it takes effect, so a restart
comes back as muted as it was.

The display's message line is :meth:`TableProgram._message`: the journal
alarm, the camera, a row to check, a mis-mark, a flag, then an illegal
guess whose state stands (``ILLEGAL ROW N``; ``ARBITER: ILLEGAL xN`` from
the codebreaker's second in a game, seed 004 §3.4), marks no code fits,
and a restart waiting for the arbiter.

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
from typing import TYPE_CHECKING, Any, Protocol

from pegwatch.device.display.model import (
    DisplayModel,
    EntryView,
    Message,
    PlayerFace,
    Role,
    Severity,
    next_visible_change_ns,
)
from pegwatch.device.hardware.buzzer import Alert, BuzzerSettings, LowTimeWarnings, Sounder
from pegwatch.device.lifetime import Closeable
from pegwatch.device.table.arbiter_menu import (
    ArbiterMenu,
    EntryTarget,
    MenuAction,
    MenuItem,
    MenuMode,
)
from pegwatch.device.table.journal import (
    Journal,
    JournalError,
    JournalEvent,
    JournalWriter,
    PendingEvent,
    Timeline,
    thaw,
)
from pegwatch.device.table.vision_worker import VisionWorker
from pegwatch.rules.codes import EMPTY
from pegwatch.rules.flow import (
    FlowError,
    MatchFlow,
    Outcome,
    Phase,
    RowState,
    Verdict,
    replay_events,
    verdict_agrees,
)
from pegwatch.rules.flow.verdicts import (
    Check,
    Flag,
    Illegal,
    Inconsistent,
    JointConfirm,
    Mismark,
    RowJudged,
)
from pegwatch.rules.record import Role as RecordRole

if TYPE_CHECKING:
    from pegwatch.device.table.config import TableConfig

logger = logging.getLogger(__name__)

__all__ = [
    "DisplaySink",
    "ReplayResult",
    "TableProgram",
    "flow_from_journal",
    "replay_journal",
]

#: Kinds of events the table journals and the flow reads.
FLOW_KINDS = ("press", "flag", "reading", "arbiter", "boot")

#: What the arbiter menu offers at a table (the flow has no undo or presets).
TABLE_MENU_ITEMS = (
    MenuItem.BACK, MenuItem.ENTER_ROW, MenuItem.ENTER_SECRET, MenuItem.ADJUST, MenuItem.MUTE,
)

#: The verdicts that call for a person at the table: an alert on the buzzer.
ALERT_VERDICTS = (Mismark, Inconsistent, Check, Illegal)


class DisplaySink(Protocol):
    """Where display models go (an OLED, the terminal, a GIF recorder)."""

    def show(self, model: DisplayModel, at_ns: int) -> None: ...


@dataclass(frozen=True)
class _Queued:
    kind: str
    payload: Mapping[str, Any]
    at_ns: int
    jpeg: bytes | None = None


class TableProgram(Closeable):
    """The table's main loop around a :class:`MatchFlow` (see the module doc).

    ``now_ns`` is the time source (``time.monotonic_ns``; the demo gives a
    virtual one). ``on_line`` receives each transcript line. A ``worker``
    given here is wired to this program: its answers go to :meth:`submit`
    and its camera state to the display. ``displays`` are refreshed after
    every :meth:`step` (the Pi uses :class:`pegwatch.device.display.loop.DisplayLoop`
    on :meth:`display_model` instead). ``palette`` names the colours the
    arbiter may enter by hand (the board profile's, as the camera names
    them; default: the variant's). ``sounder`` is the table's buzzer (see
    :meth:`attach_sounder`).
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
    ) -> None:
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
        self.menu = ArbiterMenu(players=2, items=TABLE_MENU_ITEMS)
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
            flow, line, events, missing = flow_from_journal(
                journal, players=players, rules=rules, clock=clock
            )
        except Exception:
            journal.close()
            raise
        program = cls(flow, journal, **options)
        muted = _muted_in(events)
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
            program._emit(flow.apply("boot", {}, cont))
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

    # -- the arbiter's menu -------------------------------------------------------------

    def entry_targets(self) -> dict[MenuItem, EntryTarget]:
        """What the arbiter may enter by hand now (any thread).

        ENTER ROW: the first row waiting for a check; else the latest row of
        the game, whether the camera never answered for it (a broken camera)
        or read it (a dispute). ENTER SECRET: once the game is over on the
        board, until the secret is read.
        """
        with self._lock:
            return self._entry_targets()

    def _entry_targets(self) -> dict[MenuItem, EntryTarget]:
        flow = self.flow
        g = flow.game
        holes = flow.variant.holes
        targets: dict[MenuItem, EntryTarget] = {}
        if g.final:
            return targets
        rows = [n for n in flow.checks() if n > 0]
        if rows:
            row = g.rows[rows[0] - 1]
        elif g.rows:
            row = g.rows[-1]
        else:
            row = None
        if row is not None:
            known = row.guess
            if known is None and row.guess_reading is not None:
                raw = row.guess_reading.get("guess")
                if isinstance(raw, Sequence) and not isinstance(raw, str):
                    known = tuple(str(c) for c in raw)
            # Counts from a reading that was not sure (a hand over the key
            # pegs) are not offered: the entry starts at 0B 0W.
            marks = row.marks if row.marks_state is RowState.READ else None
            if row.needs_check:
                edit_guess = row.guess_state is RowState.CHECK
                edit_marks = row.marks_state is RowState.CHECK
            else:
                edit_guess, edit_marks = True, row.marks_state is not None
            targets[MenuItem.ENTER_ROW] = EntryTarget(
                game=g.number, row=row.number, holes=holes, palette=self.palette,
                guess=known, black=None if marks is None else marks.black,
                white=None if marks is None else marks.white,
                edit_guess=edit_guess, edit_marks=edit_marks,
                correction=RowState.READ in (row.guess_state, row.marks_state) and not row.needs_check,
            )
        if g.ended_ns is not None and g.secret_state is not RowState.READ:
            targets[MenuItem.ENTER_SECRET] = EntryTarget(
                game=g.number, row=0, holes=holes, palette=self.palette,
            )
        return targets

    def menu_held(self, at_ns: int) -> None:
        """A long arbiter press: open the menu, or choose what it shows."""
        with self._lock:
            self.menu.targets = self._entry_targets()
            if not self.menu.is_open:
                self.menu.open()
                self.submit("menu", {"action": "open"}, at_ns)
                return
            self._menu_actions(self.menu.long(), at_ns)

    def menu_short(self, at_ns: int) -> bool:
        """A short arbiter press; True if the open menu took it."""
        with self._lock:
            if not self.menu.is_open:
                return False
            self.menu.targets = self._entry_targets()
            self._menu_actions(self.menu.short(), at_ns)
            return True

    def menu_player(self, seat: int, at_ns: int) -> bool:
        """A player's button; True if the open menu took it (not a clock press)."""
        with self._lock:
            if not self.menu.is_open:
                return False
            self._menu_actions(self.menu.player(seat), at_ns)
            return True

    def _menu_actions(self, actions: list[MenuAction], at_ns: int) -> None:
        for action in actions:
            if action.kind == "close":
                self.submit("menu", {"action": "close"}, at_ns)
            elif action.kind == "cancel_entry":
                self.submit("menu", {"action": "cancel"}, at_ns)
            elif action.kind == "adjust" and action.player is not None:
                self.arbiter("adjust", at_ns, player=action.player, delta_ns=action.delta_ns)
            elif action.kind == "mute":
                self.set_muted(not self._mute_asked, at_ns)
            elif action.kind == "enter_row" and action.entry is not None:
                # Journaled like every other event; the flow judges it.
                self.submit("arbiter", {**action.entry.payload(), "by": "arbiter"}, at_ns)
                self.submit("menu", {"action": "close"}, at_ns)

    # -- the buzzer ------------------------------------------------------------------------

    def attach_sounder(self, sounder: Sounder) -> None:
        """Sound this table's warnings, flags and alerts on *sounder*.

        Its settings give the low-time thresholds. Its mute state (``[buzzer]
        muted``) holds unless the journal says otherwise: a match restarted
        after the arbiter muted or unmuted it comes back as it was.
        """
        with self._lock:
            self.sounder = sounder
            self._low_time = LowTimeWarnings.start(
                sounder.settings.low_time_warnings_ns, players=2
            )
            self._remaining_seen = self._remaining(self._last_raw + self.offset_ns)
            self._set_muted(self._muted if self._muted_by_journal else sounder.is_muted)
            self._mute_asked = self._muted

    @property
    def is_muted(self) -> bool:
        """Whether the buzzer is muted now."""
        return self._muted

    def set_muted(self, muted: bool, at_ns: int | None = None) -> None:
        """Mute or unmute the buzzer (any thread): queued as a ``menu`` event,
        in force once it is journaled."""
        with self._lock:
            self._mute_asked = muted
            self.submit("menu", {"action": "mute" if muted else "unmute"}, at_ns)

    def _set_muted(self, muted: bool) -> None:
        self._muted = muted
        self.menu.muted = muted
        if self.sounder is not None:
            if muted:
                self.sounder.mute()
            else:
                self.sounder.unmute()

    def _sound(self, alert: Alert) -> None:
        # Queues the pattern for the buzzer's thread: never waits here.
        if self.sounder is not None and not self._muted:
            self.sounder.sound(alert)

    def _remaining(self, cont: int) -> tuple[int, int]:
        left = self.flow.remaining_ns(cont)
        return left[0], left[1]

    def _follow_low_time(self, cont: int) -> None:
        """Sound the low-time warnings crossed since the last look, at ``cont``."""
        remaining = self._remaining(cont)
        if self.flow.game.number != self._low_time_game:
            # A new game, a new clock: every threshold may sound once again.
            self._low_time_game = self.flow.game.number
            self._low_time = LowTimeWarnings.start(self._low_time.thresholds_ns, players=2)
        else:
            self._low_time, due = self._low_time.advance(self._remaining_seen, remaining)
            if due:
                self._sound(Alert.LOW_TIME)
        self._remaining_seen = remaining

    def running_seat(self, raw_ns: int) -> int | None:
        """The seat whose clock runs at ``raw_ns`` (any thread)."""
        with self._lock:
            return self.flow.on_move(raw_ns + self.offset_ns)

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
        # Journal first: nothing acts before it is on the disk (or held, with an alarm).
        event = self.writer.append(kind, payload, at_ns=raw)
        if jpeg is not None and kind == "reading":
            self._store_evidence(event, payload, jpeg)
        cont = raw + self.offset_ns
        # The warnings due before this event, at its own instant.
        self._follow_low_time(cont)
        try:
            outcome = self.flow.apply(kind, payload, cont)
        except FlowError as exc:
            # Bad input never stops the table: one line, and on we go.
            self._say(f"{kind} refused: {exc}")
            return Outcome()
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

    # -- the display -----------------------------------------------------------------------

    def next_display_change_ns(self, raw_now: int) -> int | None:
        """When the display next changes if no event comes (this boot's stamps),
        so that a display loop sleeps instead of polling."""
        cont = raw_now + self.offset_ns
        due = next_visible_change_ns(
            self.flow.clock_view(cont),
            cont,
            lambda at, unit: self.flow.next_change_ns(at, resolution_ns=unit),
        )
        return None if due is None else due - self.offset_ns

    def display_model(self, raw_now: int | None = None) -> DisplayModel:
        """What the small display shows now (the secret never appears)."""
        raw = self.now_ns() if raw_now is None else raw_now
        with self._lock:
            return self._display_model(raw)

    def _display_model(self, raw: int) -> DisplayModel:
        flow = self.flow
        cont = raw + self.offset_ns
        g = flow.game
        view = flow.clock_view(cont)
        faces = []
        for seat in (0, 1):
            role_index = 0 if seat == g.codemaker else 1
            faces.append(
                PlayerFace(
                    name=flow.players[seat],
                    remaining_ns=view.remaining_ns[role_index],
                    role=Role.CODEMAKER if role_index == 0 else Role.CODEBREAKER,
                    flagged=role_index in view.flags,
                )
            )
        on_move = flow.on_move(cont)
        row = len(g.rows) + (1 if flow.phase is Phase.GUESS else 0) if g.started_ns is not None else None
        entry = self.menu.entry if self.menu.mode is MenuMode.ENTRY else None
        return DisplayModel(
            players=tuple(faces),
            on_move=on_move,
            row=row,
            paused=flow.paused,
            message=self._message(),
            banner=self.menu.caption() or self._banner(),
            entry=None if entry is None else EntryView(entry.target.title, *entry.fields()),
            table=self.table_name,
        )

    def _message(self) -> Message | None:
        if self.alarm is not None:
            return Message("DISK FULL" if "DISK FULL" in self.alarm else "JOURNAL FAIL", Severity.ALARM)
        if self.camera_message is not None:
            return Message(self.camera_message, Severity.ALARM)
        checks = self.flow.checks()
        if checks:
            return Message("CHECK SECRET" if checks[0] == 0 else f"CHECK ROW {checks[0]}", Severity.WARNING)
        g = self.flow.game
        if g.announced_mismark is not None:
            return Message(f"MIS-MARK ROW {g.announced_mismark}", Severity.ALARM)
        if g.timeout is not None:
            who = g.codebreaker if g.timeout is RecordRole.CODEBREAKER else g.codemaker
            return Message(f"FLAG {self.flow.players[who]}", Severity.ALARM)
        standing = g.standing_illegal if not g.final else ()
        if standing:
            worst = max(move.number for move in standing)
            if worst >= 2:
                # Seed 004 §3.4: at the second illegal move the arbiter is called.
                return Message(f"ARBITER: ILLEGAL x{worst}", Severity.ALARM)
            return Message(f"ILLEGAL ROW {standing[0].row}", Severity.WARNING)
        if g.announced_inconsistent and not g.final:
            return Message("MARKS INCONSISTENT", Severity.WARNING)
        if self.flow.awaiting_resume:
            return Message("RESTARTED: ARBITER", Severity.WARNING)
        warning = self.writer.warning
        if warning is not None:
            # [journal] max_mb: well before the cap, while pruning cannot help.
            return Message(warning, Severity.WARNING)
        return None

    def _banner(self) -> str | None:
        flow = self.flow
        if flow.phase is Phase.MATCH_OVER and flow.match_verdict is not None:
            vp = flow.match_verdict.vp
            return " ".join(f"{p[:6]} {vp[p]:g}" for p in flow.players) + " VP"
        g = flow.game
        if flow.phase is Phase.GAME_OVER and g.verdict is not None:
            return f"G{g.number}: {g.verdict.attempts} ATTEMPTS"
        if flow.phase is Phase.REVEAL:
            return "OPEN THE SHIELD"
        if flow.phase is Phase.SETUP:
            return f"G{g.number}: SET THE CODE"
        return None

    def refresh_display(self, raw_now: int | None = None) -> None:
        """Show the current model on every display; a failing one is skipped."""
        if not self.displays:
            return
        raw = self.now_ns() if raw_now is None else raw_now
        model = self.display_model(raw)
        for i, sink in enumerate(self.displays):
            try:
                sink.show(model, raw)
            except Exception as exc:  # a dead display must never stop the clock
                if i not in self.display_failures:
                    logger.error("display %d failed: %s", i, exc)
                    self._say(f"ALARM: display failed ({exc}); the clock goes on")
                self.display_failures[i] = str(exc)
            else:
                if self.display_failures.pop(i, None) is not None:
                    self._say("display back")

    # -- lifetime ---------------------------------------------------------------------------

    def close(self) -> None:
        """Stop the worker, write what is held, close the journal."""
        if self.worker is not None:
            self.worker.stop()
        try:
            self.writer.flush()
        finally:
            self.journal.close()



def _match_header(
    events: Sequence[JournalEvent],
    *,
    players: tuple[str, str] | None = None,
    rules: str = "mso",
    clock: str = "mso-mastermind",
) -> tuple[tuple[str, str] | None, str, str]:
    """Players and presets from the journal's first ``match`` event, else the defaults given."""
    for event in events:
        if event.kind == "match":
            raw = event.payload.get("players")
            if isinstance(raw, tuple | list) and len(raw) == 2:
                players = (str(raw[0]), str(raw[1]))
            return players, str(event.payload.get("rules", rules)), str(event.payload.get("clock", clock))
    return players, rules, clock


def flow_from_journal(
    journal: Journal,
    *,
    players: tuple[str, str] | None = None,
    rules: str = "mso",
    clock: str = "mso-mastermind",
) -> tuple[MatchFlow, Timeline, list[JournalEvent], list[Verdict]]:
    """Rebuild the flow from a journal: its ``match`` event (if any) names the
    players and presets; every flow event is applied at its continuous time.

    Also returns the verdicts the flow reaches beyond those journaled (the
    tail a crash cut off)."""
    from pegwatch.rules.flow import preset_clock_factory

    events = list(journal.events())
    players, rules, clock = _match_header(events, players=players, rules=rules, clock=clock)
    if players is None:
        raise FlowError(f"{journal.path}: no match event names the players")
    flow = MatchFlow(players, rules=rules, clock_factory=preset_clock_factory(clock))
    line = Timeline()
    produced: list[Verdict] = []
    recorded = 0
    for event in events:
        cont = line.add(event)
        if event.kind in FLOW_KINDS:
            produced.extend(flow.apply(event.kind, thaw(event.payload), cont).verdicts)
        elif event.kind == "verdict":
            recorded += 1
    return flow, line, events, produced[recorded:]


@dataclass(frozen=True)
class ReplayResult:
    """What re-running a journal gave: the flow, its verdicts, and mismatches."""

    flow: MatchFlow
    verdicts: tuple[Verdict, ...]
    mismatches: tuple[str, ...]
    events: int
    #: The buzzer's mute state at the end (None: never changed at the table).
    muted: bool | None = None


def replay_journal(path: str | Path) -> ReplayResult:
    """Re-run a journal and compare the verdicts it reaches with those journaled."""
    from pegwatch.rules.flow import preset_clock_factory

    p = Path(path)
    if not p.is_file():
        raise FlowError(f"{p}: no such journal")
    with Journal(p, create=False) as journal:
        events = list(journal.events())
    players, rules, clock = _match_header(events)
    if players is None:
        raise FlowError(f"{p}: no match event names the players; not a table journal")
    flow = MatchFlow(players, rules=rules, clock_factory=preset_clock_factory(clock))
    line = Timeline()
    stream: list[tuple[str, Mapping[str, Any], int]] = []
    for event in events:
        cont = line.add(event)
        if event.kind in (*FLOW_KINDS, "verdict"):
            stream.append((event.kind, thaw(event.payload), cont))
    try:
        pairs = replay_events(flow, stream)
    except FlowError as exc:
        # A damaged event: one line that names the journal, not only the field.
        raise FlowError(f"{p}: replaying its events: {exc}") from None
    mismatches: list[str] = []
    recorded = sum(1 for k, _, _ in stream if k == "verdict")
    for i, (got, had) in enumerate(pairs, start=1):
        if had is None:
            mismatches.append(f"verdict {i}: replay gives {got.to_json()}, the journal has none")
        elif not verdict_agrees(got, had):
            mismatches.append(f"verdict {i}: replay gives {got.to_json()}, the journal has {had}")
    if recorded > len(pairs):
        mismatches.append(f"the journal has {recorded} verdicts, the replay reaches {len(pairs)}")
    return ReplayResult(
        flow, tuple(v for v, _ in pairs), tuple(mismatches), len(events), _muted_in(events)
    )


def _muted_in(events: Sequence[JournalEvent]) -> bool | None:
    """The mute state the journal's last ``menu`` mute/unmute left (None: none)."""
    muted: bool | None = None
    for event in events:
        if event.kind == "menu" and event.payload.get("action") in ("mute", "unmute"):
            muted = event.payload.get("action") == "mute"
    return muted
