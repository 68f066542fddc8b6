"""The guided set-up as a pure state machine: what the display says and what each button does.

A table with no calibration walks the arbiter through three short steps on
its own display, with the buttons it already has: the arbiter's button
confirms ("next"), the players' buttons choose between two answers, and a
long press of the arbiter's button leaves the set-up for later.

1. **The board.** The camera looks for the markers; without them, for the
   board's outline, whose corners the arbiter confirms.
2. **The empty board.** The arbiter clears the board and confirms: the
   table learns the geometry, the plastic and the empty holes.
3. **The colours.** Left: a peg on each circle of the swatch card
   (``pegwatch markers --swatch-card``) beside the board, or pegs laid out
   on the board as ``docs/setup.md`` shows (the layout): learned at once.
   Right: play, and the colours are learned from the first rows the
   arbiter confirms.

Until every colour is learned the table reads in **low trust**: what the
camera reads is shown, never accused from, and a row it is unsure of goes
to the arbiter; the display's header says ``SET-UP`` throughout.

:class:`SetupMachine` only steps on events (:meth:`~SetupMachine.saw`,
:meth:`~SetupMachine.press`, :meth:`~SetupMachine.learned`) and returns the
:class:`Action` its driver must take; it touches no camera, no thread and
no clock (:mod:`~pegwatch.device.table.setup.driver` does).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from pegwatch.device.display.model import Message, Severity

__all__ = ["Action", "Button", "Screen", "Seen", "SetupMachine", "Step"]


class Step(enum.Enum):
    """Where the set-up is."""

    BOARD = "board"
    """Looking for the board; the arbiter confirms what was found."""
    EMPTY = "empty"
    """Waiting for the arbiter to say the board is clear."""
    LEARN_EMPTY = "learn_empty"
    """Learning the geometry, the plastic and the empty holes."""
    COLOURS = "colours"
    """Asking: a layout now (left), or the first confirmed rows (right)."""
    LAYOUT = "layout"
    """Waiting for the arbiter to say the swatch card or the layout is in place."""
    LEARN_LAYOUT = "learn_layout"
    """Learning the colours of the card or the layout."""
    ROWS = "rows"
    """Playing in low trust: colours learned from the rows the arbiter confirms."""
    DONE = "done"
    """Calibrated: the table reads with full trust."""
    LATER = "later"
    """Left for later by the arbiter: the table plays with no camera reading."""


#: The steps in which the set-up, not the match, owns the buttons.
DIALOGUE = frozenset({Step.BOARD, Step.EMPTY, Step.LEARN_EMPTY, Step.COLOURS, Step.LAYOUT, Step.LEARN_LAYOUT})


class Button(enum.Enum):
    """A press the set-up understands."""

    LEFT = "left"
    """Seat 0's button."""
    RIGHT = "right"
    """Seat 1's button."""
    OK = "ok"
    """The arbiter's short press."""
    LATER = "later"
    """The arbiter's long press."""


class Action(enum.Enum):
    """What the driver must do after an event."""

    FIX_CORNERS = "fix_corners"
    """Keep the corners of the board as found now (no markers)."""
    CAPTURE_EMPTY = "capture_empty"
    """Take frames of the empty board and calibrate from them."""
    CAPTURE_LAYOUT = "capture_layout"
    """Take a frame of the swatch card (or else the layout) and learn its colours."""
    READ_LOW_TRUST = "read_low_trust"
    """Start reading the board in low trust; learn from confirmed rows."""
    READ = "read"
    """Calibrated: read with full trust and keep the calibration."""
    STOP_READING = "stop_reading"
    """Left for later: no camera reading."""


@dataclass(frozen=True)
class Seen:
    """What the latest frame shows of the board."""

    found: bool
    #: "markers", or how else the board was located ("best-effort"); "" when not found.
    method: str = ""
    markers: int = 0
    problem: str | None = None
    #: Whether the camera gives frames at all.
    camera: bool = True


@dataclass(frozen=True)
class Screen:
    """What the display shows for the set-up: the header's word, the banner and the message line."""

    header: str
    banner: str | None
    message: Message | None


class SetupMachine:
    """The set-up's steps (see the module doc). Not thread-safe: its driver serialises events."""

    def __init__(self, *, step: Step = Step.BOARD) -> None:
        self.step = step
        self.seen = Seen(found=False, problem="no frame yet")
        #: Why the last learning failed (shown until the next try).
        self.failure: str | None = None
        #: Colours still to learn in low trust (shown on the message line).
        self.to_learn: tuple[str, ...] = ()
        self.corners_fixed = False

    @property
    def owns_buttons(self) -> bool:
        """Whether the buttons belong to the set-up now (else to the match)."""
        return self.step in DIALOGUE

    @property
    def low_trust(self) -> bool:
        """Whether the table reads but must never accuse."""
        return self.step is Step.ROWS

    # -- events ---------------------------------------------------------------------

    def saw(self, seen: Seen) -> None:
        """The latest frame's view of the board (only the board step acts on it)."""
        self.seen = seen

    def press(self, button: Button) -> Action | None:
        """A button press while the set-up owns the buttons."""
        if not self.owns_buttons:
            return None
        if button is Button.LATER:
            self.step = Step.LATER
            return Action.STOP_READING
        step = self.step
        if step is Step.BOARD and button is Button.OK and self.seen.found:
            self.failure = None
            self.step = Step.EMPTY
            if self.seen.method != "markers":
                self.corners_fixed = True
                return Action.FIX_CORNERS
            return None
        if step is Step.EMPTY and button is Button.OK:
            self.step = Step.LEARN_EMPTY
            return Action.CAPTURE_EMPTY
        if step is Step.COLOURS and button is Button.LEFT:
            self.step = Step.LAYOUT
            return None
        if step is Step.COLOURS and button is Button.RIGHT:
            self.step = Step.ROWS
            return Action.READ_LOW_TRUST
        if step is Step.LAYOUT and button is Button.OK:
            self.step = Step.LEARN_LAYOUT
            return Action.CAPTURE_LAYOUT
        if step is Step.LAYOUT and button is Button.RIGHT:
            # Changed one's mind: learn from the rows instead.
            self.step = Step.ROWS
            return Action.READ_LOW_TRUST
        return None

    def learned(self, ok: bool, *, problem: str | None = None, to_learn: tuple[str, ...] = ()) -> Action | None:
        """The result of learning: ``ok`` with the colours ``to_learn`` still
        missing (none: calibrated), or not ok with the ``problem``."""
        self.failure = None if ok else (problem or "not learned")
        if ok:
            self.to_learn = to_learn
        step = self.step
        if step is Step.LEARN_EMPTY:
            self.step = Step.COLOURS if ok else Step.EMPTY
            return None
        if step is Step.LEARN_LAYOUT:
            if not ok:
                self.step = Step.LAYOUT
                return None
            self.step = Step.ROWS if to_learn else Step.DONE
            return Action.READ_LOW_TRUST if to_learn else Action.READ
        if step is Step.ROWS and ok and not to_learn:
            self.step = Step.DONE
            return Action.READ
        return None

    # -- what the display says ---------------------------------------------------------

    def screen(self) -> Screen | None:
        """The set-up's part of the display, or None once calibrated."""
        step = self.step
        if step is Step.DONE:
            return None
        if not self.seen.camera and step in DIALOGUE:
            return Screen("SET-UP", "SET-UP 1/3 BOARD" if step is Step.BOARD else None,
                          Message("SET-UP: NO CAMERA", Severity.ALARM))
        if step is Step.BOARD:
            return Screen("SET-UP", "SET-UP 1/3 BOARD", self._board_message())
        if step in (Step.EMPTY, Step.LEARN_EMPTY):
            text = "LEARNING..." if step is Step.LEARN_EMPTY else "CLEAR BOARD: ARB OK"
            if step is Step.EMPTY and self.failure is not None:
                text = "FAILED: ARB RETRY"
            return Screen("SET-UP", "SET-UP 2/3 EMPTY", Message(text, Severity.WARNING))
        if step is Step.COLOURS:
            return Screen("SET-UP", "SET-UP 3/3 COLOURS", Message("L CARD  R PLAY", Severity.WARNING))
        if step in (Step.LAYOUT, Step.LEARN_LAYOUT):
            text = "LEARNING..." if step is Step.LEARN_LAYOUT else "CARD/LAYOUT: ARB OK"
            if step is Step.LAYOUT and self.failure is not None:
                text = "FAILED: ARB RETRY"
            return Screen("SET-UP", "SET-UP 3/3 CARD", Message(text, Severity.WARNING))
        if step is Step.ROWS:
            return Screen("SET-UP", None, Message("SET-UP: LOW TRUST", Severity.WARNING))
        return Screen("SET-UP", None, Message("SET-UP: ROWS BY HAND", Severity.WARNING))

    def _board_message(self) -> Message:
        seen = self.seen
        if not seen.found:
            return Message("NO BOARD: SEE PREVIEW", Severity.WARNING)
        if seen.method == "markers":
            return Message(f"MARKERS {seen.markers}: ARB OK", Severity.WARNING)
        return Message("CORNERS: ARB OK", Severity.WARNING)

    def status(self) -> str:
        """One line for the log and the journal (a new line is what wakes the display)."""
        if self.failure is not None and self.step in (Step.EMPTY, Step.LAYOUT):
            return f"set-up: not learned ({self.failure}); the arbiter's short press tries again"
        if self.step is Step.BOARD:
            if not self.seen.found:
                return f"set-up: looking for the board ({self.seen.problem or 'not found'})"
            how = f"{self.seen.markers} markers" if self.seen.method == "markers" else "its outline"
            return f"set-up: board found by {how}; the arbiter's short press confirms it"
        return {
            Step.EMPTY: "set-up: clear the board, then the arbiter's short press",
            Step.LEARN_EMPTY: "set-up: learning the empty board",
            Step.COLOURS: "set-up: colours from a card or layout (left button) or from confirmed rows (right button)",
            Step.LAYOUT: "set-up: a peg on each circle of the swatch card beside the board, or the pegs laid out "
            "as docs/setup.md shows; then the arbiter's short press",
            Step.LEARN_LAYOUT: "set-up: learning the colours",
            Step.ROWS: "set-up: low trust; colours are learned from the rows the arbiter confirms"
            + (f" (still to learn: {', '.join(self.to_learn)})" if self.to_learn else ""),
            Step.DONE: "set-up: done; the table reads with full trust",
            Step.LATER: "set-up: left for later; no camera reading (enter rows by hand)",
        }[self.step]
