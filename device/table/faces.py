"""What the table's small display shows: the faces, the message line, the banner.

The message line (:meth:`TableFaces._message`) shows, first come first:
the journal's alarm, the camera, a row to check (the secret: ``SECRET
CHANGED: CHECK`` when it read differently after it was accepted), a mis-mark, a flag, a secret that read differently (until the arbiter
confirms the code), an illegal guess whose state stands (``ILLEGAL ROW N``; ``ARBITER: ILLEGAL
xN`` from the codebreaker's second in a game, seed 004 §3.4), marks no
code fits, a restart waiting for the arbiter, and the journal filling up.
The secret never appears.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from pegwatch.device.display.model import (
    DisplayModel,
    EntryView,
    Message,
    PlayerFace,
    Severity,
    next_visible_change_ns,
)
from pegwatch.device.table.arbiter_menu import ArbiterMenu, MenuMode
from pegwatch.device.table.journal import JournalWriter
from pegwatch.rules.flow import MatchFlow, Phase, RowState
from pegwatch.rules.record import Role

logger = logging.getLogger("pegwatch.device.table.program")

__all__ = ["DisplaySink", "TableFaces"]


class DisplaySink(Protocol):
    """Where display models go (an OLED, the terminal, a GIF recorder)."""

    def show(self, model: DisplayModel, at_ns: int) -> None: ...


class TableFaces:
    """The display's part of :class:`~pegwatch.device.table.program.TableProgram`."""

    if TYPE_CHECKING:
        flow: MatchFlow
        menu: ArbiterMenu
        writer: JournalWriter
        displays: list[DisplaySink]
        display_failures: dict[int, str]
        now_ns: Callable[[], int]
        offset_ns: int
        table_name: str | None
        alarm: str | None
        camera_message: str | None
        _lock: threading.RLock

        def _say(self, line: str) -> None: ...

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
                    count_up=role_index < len(view.count_up) and view.count_up[role_index],
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
        g = self.flow.game
        # The code read differently after it was accepted (issue 14): an
        # alarm until the arbiter confirms the code.
        secret_alarm = g.secret_changed and not g.final and g.secret_state is not RowState.READ
        checks = self.flow.checks()
        if checks:
            if checks[0] == 0:
                return (Message("SECRET CHANGED: CHECK", Severity.ALARM) if secret_alarm
                        else Message("CHECK SECRET", Severity.WARNING))
            return Message(f"CHECK ROW {checks[0]}", Severity.WARNING)
        if g.announced_mismark is not None:
            return Message(f"MIS-MARK ROW {g.announced_mismark}", Severity.ALARM)
        if g.timeout is not None:
            who = g.codebreaker if g.timeout is Role.CODEBREAKER else g.codemaker
            return Message(f"FLAG {self.flow.players[who]}", Severity.ALARM)
        if secret_alarm:
            return Message("SECRET CHANGED: CHECK", Severity.ALARM)
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
