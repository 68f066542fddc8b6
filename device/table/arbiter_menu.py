"""The arbiter's menu, driven by the arbiter button and the player buttons.

A long arbiter press opens it (the clock is paused first). Inside it:

* **items** -- a short arbiter press steps to the next item, a long press
  chooses it: BACK (close), ADJUST, UNDO, SET, PENALTY, PRESET, MUTE.
  UNDO undoes the last press at once (an "undo" action) and closes the
  menu. MUTE toggles the
  buzzer (a "mute" action; the owner decides which way and sets
  :attr:`ArbiterMenu.muted`, so the item reads UNMUTE while muted) and
  the menu stays on it.
* **adjust** -- a short arbiter press steps the amount (+10 s, +1 s, -1 s,
  -10 s, +1 min, -1 min); a player's button gives that amount to that
  player; a long arbiter press goes back to the items.
* **set** -- the DGT's pause mode: a short arbiter press steps through
  what to change and by how much (time +1 min, -1 min, +10 s, -10 s,
  +1 s, -1 s; moves +1, -1; period +1, -1); a player's button changes it
  for that player (a "set" action); a long press goes back to the items.
* **penalty** -- a short arbiter press steps through the penalties
  (warning, time to the opponent, VP docked, loss of the game); a player's
  button gives it to that player (a "penalty" action; the menu goes back to
  the items); a long press goes back without one.
* **preset** -- a short arbiter press steps through the presets, a long
  press loads the one shown and goes back to the items.
* **entry** (ENTER ROW, ENTER SECRET; offered only while the owner has set
  an :class:`EntryTarget` for them) -- the arbiter enters a row by hand:
  the first player's button cycles the value of the field shown (a hole's
  colour, then the black and white counts), the second player's button
  moves to the next field, a short arbiter press commits it (an
  "enter_row" action; the menu closes) and a long press cancels (back to
  the items).

Pure: it returns :class:`MenuAction` values and touches no hardware.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from pegwatch.device.display.model import EntryCell
from pegwatch.rules.codes import EMPTY
from pegwatch.rules.errors import BadInput


class MenuItem(enum.Enum):
    BACK = "BACK"
    ENTER_ROW = "ENTER ROW"
    ENTER_SECRET = "ENTER SECRET"
    ADJUST = "ADJUST"
    UNDO = "UNDO"
    SET = "SET"
    PENALTY = "PENALTY"
    PRESET = "PRESET"
    MUTE = "MUTE"


class MenuMode(enum.Enum):
    CLOSED = "closed"
    ITEMS = "items"
    ADJUST = "adjust"
    SET = "set"
    PENALTY = "penalty"
    PRESET = "preset"
    ENTRY = "entry"


#: The items a bare clock offers (ENTER ROW / ENTER SECRET need a target).
CLOCK_ITEMS = (MenuItem.BACK, MenuItem.ADJUST, MenuItem.UNDO, MenuItem.PRESET, MenuItem.MUTE)


class SetField(enum.StrEnum):
    """What the SET mode changes (the DGT 3000's pause mode)."""

    TIME = "time"
    MOVES = "moves"
    PERIOD = "period"


#: SET mode's steps: what changes and by how much (seconds for the time).
DEFAULT_SET_STEPS: tuple[tuple[SetField, int], ...] = (
    (SetField.TIME, 60), (SetField.TIME, -60), (SetField.TIME, 10), (SetField.TIME, -10),
    (SetField.TIME, 1), (SetField.TIME, -1), (SetField.MOVES, 1), (SetField.MOVES, -1),
    (SetField.PERIOD, 1), (SetField.PERIOD, -1),
)


@dataclass(frozen=True)
class PenaltyChoice:
    """One penalty the menu offers: a :class:`~pegwatch.rules.penalties.PenaltyKind`
    value and its amount (``time_s`` to the opponent, or ``points`` docked)."""

    kind: str
    time_s: int | None = None
    points: float | None = None

    @property
    def label(self) -> str:
        if self.kind == "time":
            t = self.time_s or 0
            return f"+{t // 60}min OPP" if t % 60 == 0 else f"+{t}s OPP"
        if self.kind == "points":
            return f"-{self.points:g} VP"
        return self.kind.upper()


#: Seed 004 §5.1 (warning, points docked, loss of game) and time to the opponent.
DEFAULT_PENALTIES = (
    PenaltyChoice("warning"), PenaltyChoice("time", time_s=120),
    PenaltyChoice("points", points=10), PenaltyChoice("loss"),
)


def short_names(palette: Sequence[str]) -> dict[str, str]:
    """Upper-case labels for colour names, three letters or more, all distinct.

    >>> short_names(["red", "blue", "black", "empty"])
    {'red': 'RED', 'blue': 'BLU', 'black': 'BLA', 'empty': '--'}
    """
    names = {c: "--" for c in palette if c == EMPTY}
    colours = [c for c in palette if c != EMPTY]
    for colour in colours:
        n = 3
        while n < len(colour) and any(
            o != colour and o[:n].upper() == colour[:n].upper() for o in colours
        ):
            n += 1
        names[colour] = colour[:n].upper()
    return {c: names[c] for c in palette}


@dataclass(frozen=True)
class EntryTarget:
    """A row the arbiter may enter by hand (``row`` 0 is the secret).

    ``palette`` is what a hole may hold (the board's colour names, plus
    ``"empty"`` where blanks are allowed). ``guess``, ``black`` and
    ``white`` are where the fields start (what is known, e.g. the holes the
    camera did read; ``None``: nothing, and no marks yet); ``edit_guess``
    and ``edit_marks`` say which halves the arbiter enters (the other is
    shown, fixed, when known). ``correction`` marks a row
    already read, entered again in a dispute.
    """

    game: int
    row: int
    holes: int
    palette: tuple[str, ...]
    guess: tuple[str, ...] | None = None
    black: int | None = None
    white: int | None = None
    edit_guess: bool = True
    edit_marks: bool = False
    correction: bool = False

    def __post_init__(self) -> None:
        if self.holes < 1 or not self.palette:
            raise BadInput("an entry needs at least one hole and one colour")

    @property
    def is_secret(self) -> bool:
        return self.row == 0

    @property
    def title(self) -> str:
        return "SECRET" if self.is_secret else f"ROW {self.row}"


@dataclass(frozen=True)
class RowEntry:
    """A row being entered: immutable, each button gives a new one.

    Fields are numbered holes first (0 .. holes-1), then black, then white;
    only the editable ones are visited.
    """

    target: EntryTarget
    guess: tuple[str, ...]
    black: int
    white: int
    field: int

    @classmethod
    def start(cls, target: EntryTarget) -> RowEntry:
        """The entry at its first editable field, holes filled from the target
        (a hole the camera could not read starts at the first colour)."""
        known = target.guess or ()
        guess = tuple(
            known[i] if i < len(known) and known[i] in target.palette else target.palette[0]
            for i in range(target.holes)
        )
        black = min(max(target.black or 0, 0), target.holes)
        white = min(max(target.white or 0, 0), target.holes - black)
        entry = cls(target, guess, black, white, 0)
        fields = entry.editable_fields()
        return replace(entry, field=fields[0] if fields else 0)

    def editable_fields(self) -> tuple[int, ...]:
        holes = self.target.holes
        out: list[int] = []
        if self.target.edit_guess:
            out.extend(range(holes))
        if self.target.edit_marks and not self.target.is_secret:
            out.extend((holes, holes + 1))
        return tuple(out)

    def cycle(self) -> RowEntry:
        """The next value of the current field (wrapping round)."""
        holes = self.target.holes
        if self.field not in self.editable_fields():
            return self
        if self.field < holes:
            palette = self.target.palette
            colour = palette[(palette.index(self.guess[self.field]) + 1) % len(palette)]
            guess = (*self.guess[: self.field], colour, *self.guess[self.field + 1 :])
            return replace(self, guess=guess)
        if self.field == holes:
            black = (self.black + 1) % (holes + 1)
            return replace(self, black=black, white=min(self.white, holes - black))
        return replace(self, white=(self.white + 1) % (holes - self.black + 1))

    def next_field(self) -> RowEntry:
        """Move to the next editable field (after the last, the first again)."""
        fields = self.editable_fields()
        if not fields:
            return self
        later = [f for f in fields if f > self.field]
        return replace(self, field=later[0] if later else fields[0])

    def fields(self) -> tuple[tuple[EntryCell, ...], tuple[EntryCell, ...]]:
        """The holes and the marks (none for the secret) as the display shows them."""
        names = short_names(self.target.palette)
        editable = set(self.editable_fields())
        holes = tuple(
            EntryCell(names.get(c, c[:3].upper()), i == self.field, i in editable)
            for i, c in enumerate(self.guess)
        )
        if self.target.is_secret or not (self.target.edit_marks or self.target.black is not None):
            return holes, ()  # no marks on the board yet
        h = self.target.holes
        marks = (
            EntryCell(f"{self.black}B", self.field == h, h in editable),
            EntryCell(f"{self.white}W", self.field == h + 1, h + 1 in editable),
        )
        return holes, marks

    def text(self) -> str:
        """One line, the current field in brackets: ``ROW 5 [RED] GRE BLU YEL 2B 1W``."""
        holes, marks = self.fields()
        cells = " ".join(f"[{f.text}]" if f.current else f.text for f in (*holes, *marks))
        return f"{self.target.title} {cells}"

    def payload(self) -> dict[str, object]:
        """The ``arbiter`` event that commits this entry (``by`` is added by the table)."""
        t = self.target
        if t.is_secret:
            return {"action": "confirm_secret", "game": t.game, "code": list(self.guess)}
        out: dict[str, object] = {"action": "confirm_row", "game": t.game, "row": t.row, "hand": True}
        if t.edit_guess:
            out["guess"] = list(self.guess)
        if t.edit_marks:
            out["black"] = self.black
            out["white"] = self.white
        return out


class MenuActionKind(enum.StrEnum):
    """What a menu action does."""

    CLOSE = "close"
    ADJUST = "adjust"
    UNDO = "undo"
    PRESET = "preset"
    MUTE = "mute"
    ENTER_ROW = "enter_row"
    CANCEL_ENTRY = "cancel_entry"
    SET = "set"
    PENALTY = "penalty"


@dataclass(frozen=True)
class MenuAction:
    """What the arbiter chose (``entry`` is the row entered, for ENTER_ROW;
    ``field`` and ``delta`` what SET changes by how much (ns for the time);
    ``penalty`` the penalty given to ``player``)."""

    kind: MenuActionKind
    player: int | None = None
    delta_ns: int = 0
    preset: int | None = None
    entry: RowEntry | None = None
    field: SetField | None = None
    delta: int = 0
    penalty: PenaltyChoice | None = None


DEFAULT_STEPS_S = (10, 1, -1, -10, 60, -60)


class ArbiterMenu:
    """State machine of the arbiter menu (see the module docstring).

    ``items`` are the items offered, in order (default: those of a bare
    clock). ENTER ROW and ENTER SECRET appear only while :attr:`targets`
    holds a target for them; the owner keeps that mapping current.
    """

    def __init__(
        self,
        *,
        players: int,
        presets: Sequence[str] = (),
        steps_s: Sequence[int] = DEFAULT_STEPS_S,
        items: Sequence[MenuItem] = CLOCK_ITEMS,
        set_steps: Sequence[tuple[SetField, int]] = DEFAULT_SET_STEPS,
        penalties: Sequence[PenaltyChoice] = DEFAULT_PENALTIES,
    ) -> None:
        if not steps_s:
            raise BadInput("steps_s must not be empty")
        if MenuItem.BACK not in items:
            raise BadInput("the menu needs a BACK item")
        self.players = players
        self.presets = tuple(presets)
        self.steps_s = tuple(steps_s)
        self.items = tuple(items)
        self.set_steps = tuple(set_steps) or DEFAULT_SET_STEPS
        self.penalties = tuple(penalties) or DEFAULT_PENALTIES
        self._set = 0
        self._penalty = 0
        self.targets: Mapping[MenuItem, EntryTarget] = {}
        #: Items that would do nothing now (kept by the owner): not offered.
        self.hidden: frozenset[MenuItem] = frozenset()
        #: Whether the buzzer is muted now (kept by the owner): MUTE reads UNMUTE.
        self.muted = False
        self.mode = MenuMode.CLOSED
        self.entry: RowEntry | None = None
        self._item = MenuItem.BACK
        self._step = 0
        self._preset = 0

    @property
    def is_open(self) -> bool:
        return self.mode is not MenuMode.CLOSED

    def offered(self) -> tuple[MenuItem, ...]:
        """The items offered now (an entry item only with a target; none in :attr:`hidden`)."""
        entries = (MenuItem.ENTER_ROW, MenuItem.ENTER_SECRET)
        return tuple(
            i for i in self.items
            if (i not in entries or i in self.targets) and i not in self.hidden
        )

    @property
    def item(self) -> MenuItem:
        return self._item if self._item in self.offered() else MenuItem.BACK

    @property
    def step_ns(self) -> int:
        return self.steps_s[self._step] * 1_000_000_000

    def open(self) -> None:
        self.mode = MenuMode.ITEMS
        self._item = MenuItem.BACK
        self.entry = None

    def close(self) -> None:
        self.mode = MenuMode.CLOSED
        self.entry = None

    def short(self) -> list[MenuAction]:
        """A short arbiter press inside the menu."""
        if self.mode is MenuMode.ITEMS:
            offered = self.offered()
            self._item = offered[(offered.index(self.item) + 1) % len(offered)]
        elif self.mode is MenuMode.ADJUST:
            self._step = (self._step + 1) % len(self.steps_s)
        elif self.mode is MenuMode.SET:
            self._set = (self._set + 1) % len(self.set_steps)
        elif self.mode is MenuMode.PENALTY:
            self._penalty = (self._penalty + 1) % len(self.penalties)
        elif self.mode is MenuMode.PRESET and self.presets:
            self._preset = (self._preset + 1) % len(self.presets)
        elif self.mode is MenuMode.ENTRY and self.entry is not None:
            entry = self.entry
            self.close()
            return [MenuAction(MenuActionKind.ENTER_ROW, entry=entry)]
        return []

    def long(self) -> list[MenuAction]:
        """A long arbiter press: open the menu, or choose what is shown."""
        if self.mode is MenuMode.CLOSED:
            self.open()
            return []
        if self.mode in (MenuMode.ADJUST, MenuMode.SET, MenuMode.PENALTY):
            self.mode = MenuMode.ITEMS
            return []
        if self.mode is MenuMode.ENTRY:
            self.mode = MenuMode.ITEMS
            self.entry = None
            return [MenuAction(MenuActionKind.CANCEL_ENTRY)]
        if self.mode is MenuMode.PRESET:
            self.mode = MenuMode.ITEMS
            return [MenuAction(MenuActionKind.PRESET, preset=self._preset)] if self.presets else []
        item = self.item
        if item is MenuItem.BACK:
            self.close()
            return [MenuAction(MenuActionKind.CLOSE)]
        if item in (MenuItem.ENTER_ROW, MenuItem.ENTER_SECRET):
            self.entry = RowEntry.start(self.targets[item])
            self.mode = MenuMode.ENTRY
            return []
        if item is MenuItem.ADJUST:
            self.mode = MenuMode.ADJUST
            return []
        if item is MenuItem.UNDO:
            # One press undone per visit: a second long press must not undo another.
            self.close()
            return [MenuAction(MenuActionKind.UNDO)]
        if item is MenuItem.SET:
            self.mode = MenuMode.SET
            return []
        if item is MenuItem.PENALTY:
            self.mode = MenuMode.PENALTY
            self._penalty = 0
            return []
        if item is MenuItem.PRESET:
            if self.presets:
                self.mode = MenuMode.PRESET
            return []
        return [MenuAction(MenuActionKind.MUTE)]

    def player(self, player: int) -> list[MenuAction]:
        """A player's button inside the menu (ADJUST and the entry use it)."""
        if self.mode is MenuMode.ADJUST and 0 <= player < self.players:
            return [MenuAction(MenuActionKind.ADJUST, player=player, delta_ns=self.step_ns)]
        if self.mode is MenuMode.SET and 0 <= player < self.players:
            field, delta = self.set_steps[self._set]
            if field is SetField.TIME:
                delta *= 1_000_000_000
            return [MenuAction(MenuActionKind.SET, player=player, field=field, delta=delta)]
        if self.mode is MenuMode.PENALTY and 0 <= player < self.players:
            self.mode = MenuMode.ITEMS
            return [MenuAction(MenuActionKind.PENALTY, player=player,
                               penalty=self.penalties[self._penalty])]
        if self.mode is MenuMode.ENTRY and self.entry is not None:
            # The first player's button changes the value, the second's moves on.
            if player == 0:
                self.entry = self.entry.cycle()
            elif player == 1:
                self.entry = self.entry.next_field()
        return []

    def caption(self) -> str | None:
        """One short line for the display, or ``None`` when closed."""
        if self.mode is MenuMode.ITEMS:
            if self.item is MenuItem.MUTE and self.muted:
                return "MENU: UNMUTE"
            return f"MENU: {self.item.value}"
        if self.mode is MenuMode.ADJUST:
            step = self.steps_s[self._step]
            amount = f"{step:+d}s" if abs(step) < 60 else f"{step // 60:+d}min"
            return f"ADJUST {amount}"
        if self.mode is MenuMode.SET:
            field, delta = self.set_steps[self._set]
            if field is SetField.TIME:
                amount = f"{delta:+d}s" if abs(delta) < 60 or delta % 60 else f"{delta // 60:+d}min"
            else:
                amount = f"{delta:+d}"
            return f"SET {field.value.upper()} {amount}"
        if self.mode is MenuMode.PENALTY:
            return f"PENALTY: {self.penalties[self._penalty].label}"
        if self.mode is MenuMode.PRESET:
            return f"PRESET: {self.presets[self._preset]}" if self.presets else "PRESET: none"
        if self.mode is MenuMode.ENTRY and self.entry is not None:
            return f"ENTER {self.entry.target.title}"
        return None
