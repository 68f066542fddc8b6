"""The arbiter's menu at the table: what the buttons do while it is open.

The arbiter's button opens a menu (:attr:`TableProgram.menu
<pegwatch.device.table.program.TableProgram.menu>`, an
:class:`~pegwatch.device.table.arbiter_menu.ArbiterMenu`), in which they
can adjust a time, mute the buzzer, or enter a row or the secret by hand;
the entry is committed as an ``arbiter confirm_row`` (``hand: true``) or
``confirm_secret`` event with ``by: "arbiter"``, through the journal like
every other event. UNDO, SET (the DGT's pause mode: times, move counts,
period), PENALTY and PRESET become ``ruling`` events (see
:mod:`~pegwatch.device.table.rulings`) with ``by: "arbiter"`` and a
``why`` naming the menu item. Opening, closing and cancelling are journaled
as ``menu`` events (information; the flow ignores them).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pegwatch.device.table.arbiter_menu import (
    ArbiterMenu,
    EntryTarget,
    MenuAction,
    MenuActionKind,
    MenuItem,
    SetField,
)
from pegwatch.device.table.rulings import FlowLog
from pegwatch.rules.flow import MatchFlow, RowState

__all__ = ["TABLE_MENU_ITEMS", "MenuWiring", "table_presets"]

#: What the arbiter menu offers at a table (the rulings after MUTE, so the
#: items an arbiter already knows keep their places).
TABLE_MENU_ITEMS = (
    MenuItem.BACK, MenuItem.ENTER_ROW, MenuItem.ENTER_SECRET, MenuItem.ADJUST, MenuItem.MUTE,
    MenuItem.UNDO, MenuItem.SET, MenuItem.PENALTY, MenuItem.PRESET,
)

#: The ``why`` of a ruling given from the table's menu (buttons cannot type).
MENU_WHY = {
    MenuActionKind.UNDO: "mis-press, undone from the arbiter menu",
    MenuActionKind.SET: "set in pause mode from the arbiter menu",
    MenuActionKind.PENALTY: "penalty from the arbiter menu",
    MenuActionKind.PRESET: "preset chosen from the arbiter menu",
}


def table_presets() -> tuple[str, ...]:
    """The clock presets the menu's PRESET item offers (the built-in ones)."""
    from pegwatch.rules.clock import preset_names

    return tuple(preset_names())


class MenuWiring:
    """The menu's part of :class:`~pegwatch.device.table.program.TableProgram`."""

    if TYPE_CHECKING:
        flow: MatchFlow
        menu: ArbiterMenu
        palette: tuple[str, ...]
        _lock: threading.RLock
        _mute_asked: bool

        def submit(self, kind: str, payload: Mapping[str, Any], at_ns: int | None = None,
                   jpeg: bytes | None = None) -> None: ...
        log: FlowLog

        def arbiter(self, action: str, at_ns: int | None = None, **payload: Any) -> None: ...
        def ruling(self, action: str, at_ns: int | None = None, *, by: str = "arbiter",
                   why: str = "", **payload: Any) -> None: ...
        offset_ns: int
        def set_muted(self, muted: bool, at_ns: int | None = None) -> None: ...

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
            known = row.guess if row.guess is not None else row.seen_guess
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

    def _hidden_items(self) -> frozenset[MenuItem]:
        """What would do nothing now: UNDO with no press to undo, SET with no
        game clock, PRESET once the first game has started."""
        flow = self.flow
        g = flow.game
        hidden = set()
        if not (self.log.complete and any(e.press_taken for e in self.log.entries)):
            hidden.add(MenuItem.UNDO)
        if g.started_ns is None or g.ended_ns is not None:
            hidden.add(MenuItem.SET)
        if len(flow.games) > 1 or g.started_ns is not None:
            hidden.add(MenuItem.PRESET)
        return frozenset(hidden)

    def menu_held(self, at_ns: int) -> None:
        """A long arbiter press: open the menu, or choose what it shows."""
        with self._lock:
            self.menu.targets = self._entry_targets()
            self.menu.hidden = self._hidden_items()
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
            self.menu.hidden = self._hidden_items()
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
            if action.kind is MenuActionKind.CLOSE:
                self.submit("menu", {"action": "close"}, at_ns)
            elif action.kind is MenuActionKind.CANCEL_ENTRY:
                self.submit("menu", {"action": "cancel"}, at_ns)
            elif action.kind is MenuActionKind.ADJUST and action.player is not None:
                self.arbiter("adjust", at_ns, player=action.player, delta_ns=action.delta_ns)
            elif action.kind is MenuActionKind.MUTE:
                self.set_muted(not self._mute_asked, at_ns)
            elif action.kind is MenuActionKind.UNDO:
                self.ruling("undo", at_ns, why=MENU_WHY[action.kind])
                self.submit("menu", {"action": "close"}, at_ns)
            elif action.kind is MenuActionKind.PRESET and action.preset is not None:
                name = self.menu.presets[action.preset]
                self.ruling("preset", at_ns, why=MENU_WHY[action.kind], name=name)
            elif action.kind is MenuActionKind.SET and action.player is not None:
                self._menu_set(action, at_ns)
            elif action.kind is MenuActionKind.PENALTY and action.player is not None:
                choice = action.penalty
                assert choice is not None
                amount: dict[str, Any] = {}
                if choice.time_s is not None:
                    amount["time_ns"] = choice.time_s * 1_000_000_000
                if choice.points is not None:
                    amount["points"] = choice.points
                self.ruling("penalty", at_ns, why=MENU_WHY[action.kind], player=action.player,
                            penalty=choice.kind, **amount)
            elif action.kind is MenuActionKind.ENTER_ROW and action.entry is not None:
                # Journaled like every other event; the flow judges it.
                self.submit("arbiter", {**action.entry.payload(), "by": "arbiter"}, at_ns)
                self.submit("menu", {"action": "close"}, at_ns)

    def _menu_set(self, action: MenuAction, at_ns: int) -> None:
        """SET: the value shown now, changed by the step, journaled as an absolute value."""
        seat = action.player
        assert seat is not None
        flow = self.flow
        g = flow.game
        if g.started_ns is None or g.ended_ns is not None:
            return  # nothing to set: the menu shows no game clock
        view = flow.clock_view(at_ns + self.offset_ns)
        role = 0 if seat == g.codemaker else 1
        why = MENU_WHY[MenuActionKind.SET]
        if action.field is SetField.TIME:
            self.ruling("set", at_ns, why=why, player=seat,
                        time_ns=max(0, view.remaining_ns[role] + action.delta))
        elif action.field is SetField.MOVES:
            self.ruling("set", at_ns, why=why, player=seat, moves=max(0, view.moves[role] + action.delta))
        elif action.field is SetField.PERIOD:
            stages = len(flow.clock.controls[role].stages)
            period = min(max(1, view.stage[role] + 1 + action.delta), stages)
            self.ruling("set", at_ns, why=why, player=seat, period=period)
