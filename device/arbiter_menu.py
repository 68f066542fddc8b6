"""The arbiter's menu, driven by the arbiter button and the player buttons.

A long arbiter press opens it (the clock is paused first). Inside it:

* **items** -- a short arbiter press steps to the next item, a long press
  chooses it: BACK (close), ADJUST, UNDO, PRESET, MUTE.
* **adjust** -- a short arbiter press steps the amount (+10 s, +1 s, -1 s,
  -10 s, +1 min, -1 min); a player's button gives that amount to that
  player; a long arbiter press goes back to the items.
* **preset** -- a short arbiter press steps through the presets, a long
  press loads the one shown and goes back to the items.

Pure: it returns :class:`MenuAction` values and touches no hardware.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass


class MenuItem(enum.Enum):
    BACK = "BACK"
    ADJUST = "ADJUST"
    UNDO = "UNDO"
    PRESET = "PRESET"
    MUTE = "MUTE"


class MenuMode(enum.Enum):
    CLOSED = "closed"
    ITEMS = "items"
    ADJUST = "adjust"
    PRESET = "preset"


@dataclass(frozen=True)
class MenuAction:
    """What the arbiter chose: ``kind`` is one of "close", "adjust",
    "undo", "preset" or "mute"."""

    kind: str
    player: int | None = None
    delta_ns: int = 0
    preset: int | None = None


DEFAULT_STEPS_S = (10, 1, -1, -10, 60, -60)


class ArbiterMenu:
    """State machine of the arbiter menu (see the module docstring)."""

    def __init__(
        self,
        *,
        players: int,
        presets: Sequence[str] = (),
        steps_s: Sequence[int] = DEFAULT_STEPS_S,
    ) -> None:
        if not steps_s:
            raise ValueError("steps_s must not be empty")
        self.players = players
        self.presets = tuple(presets)
        self.steps_s = tuple(steps_s)
        self.mode = MenuMode.CLOSED
        self._item = 0
        self._step = 0
        self._preset = 0

    @property
    def is_open(self) -> bool:
        return self.mode is not MenuMode.CLOSED

    @property
    def item(self) -> MenuItem:
        return list(MenuItem)[self._item]

    @property
    def step_ns(self) -> int:
        return self.steps_s[self._step] * 1_000_000_000

    def open(self) -> None:
        self.mode = MenuMode.ITEMS
        self._item = 0

    def close(self) -> None:
        self.mode = MenuMode.CLOSED

    def short(self) -> list[MenuAction]:
        """A short arbiter press inside the menu."""
        if self.mode is MenuMode.ITEMS:
            self._item = (self._item + 1) % len(MenuItem)
        elif self.mode is MenuMode.ADJUST:
            self._step = (self._step + 1) % len(self.steps_s)
        elif self.mode is MenuMode.PRESET and self.presets:
            self._preset = (self._preset + 1) % len(self.presets)
        return []

    def long(self) -> list[MenuAction]:
        """A long arbiter press: open the menu, or choose what is shown."""
        if self.mode is MenuMode.CLOSED:
            self.open()
            return []
        if self.mode is MenuMode.ADJUST:
            self.mode = MenuMode.ITEMS
            return []
        if self.mode is MenuMode.PRESET:
            self.mode = MenuMode.ITEMS
            return [MenuAction("preset", preset=self._preset)] if self.presets else []
        item = self.item
        if item is MenuItem.BACK:
            self.close()
            return [MenuAction("close")]
        if item is MenuItem.ADJUST:
            self.mode = MenuMode.ADJUST
            return []
        if item is MenuItem.UNDO:
            return [MenuAction("undo")]
        if item is MenuItem.PRESET:
            if self.presets:
                self.mode = MenuMode.PRESET
            return []
        return [MenuAction("mute")]

    def player(self, player: int) -> list[MenuAction]:
        """A player's button inside the menu (only ADJUST uses it)."""
        if self.mode is MenuMode.ADJUST and 0 <= player < self.players:
            return [MenuAction("adjust", player=player, delta_ns=self.step_ns)]
        return []

    def caption(self) -> str | None:
        """One short line for the display, or ``None`` when closed."""
        if self.mode is MenuMode.ITEMS:
            return f"MENU: {self.item.value}"
        if self.mode is MenuMode.ADJUST:
            step = self.steps_s[self._step]
            amount = f"{step:+d}s" if abs(step) < 60 else f"{step // 60:+d}min"
            return f"ADJUST {amount}"
        if self.mode is MenuMode.PRESET:
            return f"PRESET: {self.presets[self._preset]}" if self.presets else "PRESET: none"
        return None
