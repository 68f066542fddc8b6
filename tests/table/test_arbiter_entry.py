"""The arbiter enters or corrects a row by hand at the table, with the buttons.

Every test drives gpiozero mock pins through the real ``TableHardware``
(debounce, long-press timing) into ``ArbiterButton`` and the table program:
the same path as the Pi's buttons and the desktop keyboard.
"""

from __future__ import annotations

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin
from table_hands import TableOnMockPins

from pegwatch.device.display.render import render
from pegwatch.device.hardware.gpio import TableHardware
from pegwatch.device.hardware.pins import PinMap
from pegwatch.device.table.arbiter_menu import MenuItem, MenuMode
from pegwatch.device.table.program import TableProgram, replay_journal
from pegwatch.device.table.run import ArbiterButton
from pegwatch.rules.flow import Phase, RowState
from pegwatch.simulation.demo import VirtualClock
from pegwatch.simulation.keyboard import KeyboardPins

S = 1_000_000_000
MS = 1_000_000
SECRET = ("red", "green", "blue", "yellow")
PINS = PinMap()


class Table(TableOnMockPins):
    """A table program on mock pins, with a virtual clock shared by both."""

    def __init__(self, tmp_path):
        self.path = tmp_path / "j.sqlite"
        self.clock = VirtualClock()
        self.factory = MockFactory(pin_class=MockPWMPin)
        self.hardware = TableHardware(PINS, pin_factory=self.factory, now_ns=self.clock, watch=False)
        self.program = TableProgram.open(self.path, players=("Ann", "Bob"), now_ns=self.clock)
        self.buttons = ArbiterButton(self.program)
        self.buttons.attach(self.hardware)

    # -- the rest of the table -----------------------------------------------------

    def reading(self, row, phase, guess=SECRET, black=0, white=0, status="ok", game=1):
        self.clock.advance(200 * MS)
        self.program.submit("reading", {
            "game": game, "row": row, "phase": phase, "guess": list(guess),
            "black": black, "white": white, "status": status, "confidence": 0.9,
            "frame_ns": self.clock(),
        })
        self.program.step()

    def secret(self, shield, code=SECRET, status="ok"):
        self.clock.advance(200 * MS)
        self.program.submit("reading", {
            "game": 1, "row": 0, "phase": "secret", "code": list(code), "shield": shield,
            "status": status, "confidence": 0.9, "frame_ns": self.clock(),
        })
        self.program.step()

    def wait(self, seconds):
        self.clock.advance(int(seconds * S))
        self.program.step()

    def choose(self, item):
        """Open the menu and step to *item* with short presses; choose it."""
        self.arbiter_hold()
        menu = self.program.menu
        assert menu.is_open
        for _ in range(len(menu.offered())):
            if menu.item is item:
                break
            self.arbiter_short()
        assert menu.item is item, f"{item} not offered: {menu.offered()}"
        self.arbiter_hold()
        assert menu.mode is MenuMode.ENTRY

    def enter(self, guess=None, black=None, white=None):
        """Set the fields as the arbiter would: player 1 cycles, player 2 moves on."""
        menu = self.program.menu
        entry = menu.entry
        holes = entry.target.holes
        wanted = {}
        if guess is not None:
            wanted.update(dict(enumerate(guess)))
        if black is not None:
            wanted[holes] = black
        if white is not None:
            wanted[holes + 1] = white
        for _ in entry.editable_fields():
            field = menu.entry.field
            for _ in range(len(entry.target.palette) + holes + 2):
                e = menu.entry
                value = e.guess[field] if field < holes else (e.black if field == holes else e.white)
                if field not in wanted or value == wanted[field]:
                    break
                self.player(0)
            else:
                pytest.fail(f"field {field} never reached {wanted[field]!r}")
            self.player(1)


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path)
    yield t
    t.close()


def start_game(t, *, secret_seen=True):
    t.player(0)  # Ann, the codemaker, starts Bob's clock
    if secret_seen:
        t.secret("closed")
    assert t.program.flow.phase is Phase.GUESS


def test_an_unreadable_guess_is_entered_by_hand_and_journaled_with_who(table):
    t = table
    start_game(t)
    t.wait(20)
    t.player(1)  # Bob confirms his guess
    t.reading(1, "guess", ("red", "red", "unknown", "green"), status="unknown")
    assert t.program.flow.checks() == (1,)
    assert t.program.display_model().message.text == "CHECK ROW 1"

    t.choose(MenuItem.ENTER_ROW)
    entry = t.program.menu.entry
    # The holes the camera did read are where the arbiter starts.
    assert entry.guess[:2] == ("red", "red") and entry.target.edit_guess
    assert not entry.target.edit_marks  # Ann has not marked it yet
    model = t.program.display_model()
    assert model.entry is not None and model.banner == "ENTER ROW 1"
    assert [c.current for c in model.entry.holes] == [True, False, False, False]
    t.enter(guess=("red", "red", "green", "green"))
    assert t.program.menu.entry.text() == "ROW 1 [RED] RED GRE GRE"
    t.arbiter_short()  # commit

    assert not t.program.menu.is_open
    entered = [e.payload for e in t.events("arbiter") if e.payload["action"] == "confirm_row"]
    assert len(entered) == 1
    p = entered[0]
    assert p["by"] == "arbiter" and p["hand"] is True and (p["game"], p["row"]) == (1, 1)
    assert list(p["guess"]) == ["red", "red", "green", "green"] and "black" not in p
    row = t.program.flow.game.rows[0]
    assert row.guess == ("red", "red", "green", "green") and row.guess_state is RowState.READ
    assert row.confirmed_by == "arbiter" and t.program.flow.checks() == ()
    assert [e.payload["action"] for e in t.events("menu")] == ["open", "close"]
    # The clock paused when the menu opened; a short press resumes it.
    assert t.program.flow.paused
    t.arbiter_short()
    assert not t.program.flow.paused and t.program.flow.phase is Phase.MARKS


def test_a_hand_entered_mis_mark_is_caught_and_replay_agrees(table):
    t = table
    start_game(t)  # the camera saw the code under the shield: judged exactly
    t.wait(10)
    t.player(1)
    guess = ("red", "red", "green", "green")
    t.reading(1, "guess", guess)
    t.wait(5)
    t.player(0)  # Ann marks: a hand over the key pegs
    t.reading(1, "marks", guess, 3, 0, status="occluded")
    assert t.program.flow.checks() == (1,)
    assert not any(v.what == "mismark" for v in t.program.verdicts)

    t.choose(MenuItem.ENTER_ROW)
    target = t.program.menu.entry.target
    assert (target.edit_guess, target.edit_marks) == (False, True)
    # What is on the board: 2B 0W, where red red green green against the secret is 1B 1W.
    t.enter(black=2, white=0)
    assert t.program.display_model().entry.marks[0].text == "2B"
    t.arbiter_short()

    marks = [e.payload for e in t.events("arbiter") if e.payload["action"] == "confirm_row"]
    assert marks[0]["by"] == "arbiter" and (marks[0]["black"], marks[0]["white"]) == (2, 0)
    assert "guess" not in marks[0]
    mismarks = [v for v in t.program.verdicts if v.what == "mismark"]
    assert [m.row for m in mismarks] == [1]
    rows = [v for v in t.program.verdicts if v.what == "row"]
    assert rows[-1].expected == (1, 1)
    assert t.program.display_model().message.text == "MIS-MARK ROW 1"
    t.program.close()
    replay = replay_journal(t.path)
    assert replay.mismatches == ()
    assert [v.what for v in replay.verdicts] == [v.what for v in t.program.verdicts]
    assert any(v.what == "mismark" and v.row == 1 for v in replay.verdicts)


def test_correct_marks_entered_by_hand_are_not_a_mis_mark(table):
    t = table
    start_game(t)
    t.player(1)
    t.reading(1, "guess", ("red", "red", "green", "green"))
    t.player(0)
    t.reading(1, "marks", status="unknown")
    t.choose(MenuItem.ENTER_ROW)
    t.enter(black=1, white=1)
    t.arbiter_short()
    assert not any(v.what == "mismark" for v in t.program.verdicts)
    assert t.program.flow.game.rows[0].marks_state is RowState.READ


def test_holding_the_button_cancels_the_entry(table):
    t = table
    start_game(t)
    t.player(1)
    t.reading(1, "guess", status="occluded")
    t.choose(MenuItem.ENTER_ROW)
    t.player(0)
    t.player(0)
    t.arbiter_hold()  # cancel: back to the items, nothing entered
    menu = t.program.menu
    assert menu.mode is MenuMode.ITEMS and menu.entry is None
    assert t.program.display_model().entry is None
    assert not [e for e in t.events("arbiter") if e.payload["action"] == "confirm_row"]
    assert t.program.flow.checks() == (1,)
    assert [e.payload["action"] for e in t.events("menu")] == ["open", "cancel"]
    # Player buttons in the menu never reach the clock.
    assert len(t.events("press")) == 2
    t.arbiter_short()  # to ENTER ROW... then BACK closes the menu
    while menu.item is not MenuItem.BACK:
        t.arbiter_short()
    t.arbiter_hold()
    assert not menu.is_open
    assert [e.payload["action"] for e in t.events("menu")] == ["open", "cancel", "close"]


def test_a_broken_camera_never_answers_and_the_arbiter_enters_the_row(table):
    t = table
    start_game(t)
    t.player(1)
    t.wait(3)
    t.player(0)
    row = t.program.flow.game.rows[0]
    assert (row.guess_state, row.marks_state) == (RowState.PENDING, RowState.PENDING)
    assert t.program.flow.checks() == ()  # nothing to check: the camera is silent
    t.choose(MenuItem.ENTER_ROW)
    assert t.program.menu.entry.target.edit_marks
    t.enter(guess=("blue", "red", "green", "yellow"), black=1, white=3)
    t.arbiter_short()
    row = t.program.flow.game.rows[0]
    assert row.guess == ("blue", "red", "green", "yellow") and row.marks == (1, 3)
    assert row.is_judgeable and row.confirmed_by == "arbiter"
    assert not any(v.what == "mismark" for v in t.program.verdicts)
    # A late camera answer does not overrule the arbiter.
    t.reading(1, "guess", ("white", "white", "white", "white"))
    assert t.program.flow.game.rows[0].guess == ("blue", "red", "green", "yellow")


def test_the_secret_is_entered_by_hand_and_the_game_is_judged(table):
    t = table
    start_game(t, secret_seen=False)
    t.player(1)
    t.reading(1, "guess", SECRET)
    t.player(0)
    t.reading(1, "marks", SECRET, 4, 0)
    assert t.program.flow.phase is Phase.REVEAL
    t.secret("open", status="unknown")
    assert t.program.display_model().message.text == "CHECK SECRET"
    assert MenuItem.ENTER_SECRET in t.program.entry_targets()
    t.choose(MenuItem.ENTER_SECRET)
    entry = t.program.menu.entry
    assert entry.target.is_secret and entry.fields()[1] == ()
    t.enter(guess=SECRET)
    t.arbiter_short()
    [p] = [e.payload for e in t.events("arbiter") if e.payload["action"] == "confirm_secret"]
    assert p["by"] == "arbiter" and list(p["code"]) == list(SECRET) and p["game"] == 1
    flow = t.program.flow
    assert flow.game.secret == SECRET and flow.game.final and flow.phase is Phase.GAME_OVER
    assert flow.game.verdict.attempts == 1
    t.program.close()
    assert replay_journal(t.path).mismatches == ()


def test_a_disputed_row_is_corrected_and_a_false_mis_mark_taken_back(table):
    t = table
    start_game(t)
    t.wait(30)
    t.player(1)
    guess = ("red", "red", "green", "green")
    t.reading(1, "guess", guess)
    t.wait(10)
    t.player(0)
    # The camera misreads the key pegs (truly 1B 1W) with confidence: a mis-mark.
    t.reading(1, "marks", guess, 2, 0)
    flow = t.program.flow
    assert flow.game.announced_mismark == 1 and flow.phase is Phase.REVEAL
    left = flow.remaining_ns(flow.game.ended_ns)
    # Ann disputes; the arbiter looks at the board and enters what is there.
    t.wait(60)
    t.choose(MenuItem.ENTER_ROW)
    assert t.program.menu.entry.target.correction
    t.enter(black=1, white=1)
    t.arbiter_short()
    assert flow.game.ended_ns is None and flow.phase is Phase.GUESS
    assert flow.game.announced_mismark is None
    assert t.program.display_model().message is None
    # The clock comes back paused where the game had stopped: the minute of
    # the dispute is nobody's.
    assert flow.paused
    assert flow.remaining_ns(t.clock() + t.program.offset_ns) == left
    t.arbiter_short()  # resume
    t.wait(5)
    assert left[1] - 6 * S < flow.remaining_ns(t.clock() + t.program.offset_ns)[1] < left[1] - 5 * S
    t.player(1)  # and Bob plays on
    assert len(flow.game.rows) == 2
    t.program.close()
    replay = replay_journal(t.path)
    assert replay.mismatches == ()
    assert replay.flow.game.ended_ns is None and replay.flow.game.rows[0].marks == (1, 1)


def test_enter_row_is_offered_only_when_there_is_a_row(table):
    t = table
    t.arbiter_hold()
    assert t.program.menu.offered() == (
        MenuItem.BACK, MenuItem.ADJUST, MenuItem.MUTE, MenuItem.PENALTY, MenuItem.PRESET,
    )
    t.arbiter_hold()  # BACK
    assert not t.program.menu.is_open


def test_the_entry_screen_is_what_the_display_draws(table):
    t = table
    start_game(t)
    t.player(1)
    t.reading(1, "guess", status="unknown")
    t.choose(MenuItem.ENTER_ROW)
    before = render(t.program.display_model()).tobytes()
    t.player(1)  # next hole: the highlight moves
    after = render(t.program.display_model()).tobytes()
    assert before != after
    assert t.program.display_model().entry.holes[1].current


def test_the_keyboard_drives_the_same_menu_through_the_mock_pins(tmp_path):
    clock = VirtualClock()
    factory = MockFactory(pin_class=MockPWMPin)
    hardware = TableHardware(PINS, pin_factory=factory, long_press_ns=300 * MS, now_ns=clock,
                             watch=False)
    program = TableProgram.open(tmp_path / "j.sqlite", players=("Ann", "Bob"), now_ns=clock)
    ArbiterButton(program).attach(hardware)
    keys = KeyboardPins(hardware, on_quit=lambda: None, fd=0,
                        sleep=lambda s: clock.advance(int(s * 1e9)))
    try:
        keys.handle("a")
        program.step()
        clock.advance(60 * MS)  # past the clock's 50 ms bounce window
        keys.handle("l")
        program.step()
        program.submit("reading", {"game": 1, "row": 1, "phase": "guess", "guess": list(SECRET),
                                   "black": 0, "white": 0, "status": "unknown"})
        program.step()
        keys.handle("m")  # held past the long press: due when the key is let go
        assert program.menu.is_open
        keys.handle(" ")
        assert program.menu.item is MenuItem.ENTER_ROW
        keys.handle("m")
        assert program.menu.mode is MenuMode.ENTRY
        keys.handle("a")  # the first hole: red -> green
        keys.handle(" ")  # commit
        program.step()
        [p] = [e.payload for e in program.journal.events()
               if e.kind == "arbiter" and e.payload["action"] == "confirm_row"]
        assert p["by"] == "arbiter" and list(p["guess"]) == ["green", "green", "blue", "yellow"]
        assert program.flow.game.rows[0].guess_state is RowState.READ
    finally:
        hardware.close()
        program.close()
        factory.close()
