"""Entering a row by hand in the arbiter menu: the pure state machine and its screen."""

from __future__ import annotations

import pytest

from pegwatch.device.display.charlcd import layout
from pegwatch.device.display.model import DisplayModel, EntryView
from pegwatch.device.display.render import render
from pegwatch.device.display.samples import SAMPLES
from pegwatch.device.table.arbiter_menu import (
    ArbiterMenu,
    EntryTarget,
    MenuItem,
    MenuMode,
    RowEntry,
    short_names,
)
from pegwatch.rules.codes import EMPTY

MSO = ("red", "green", "blue", "yellow", "white", "black", "orange", "pink")
TABLE_ITEMS = (MenuItem.BACK, MenuItem.ENTER_ROW, MenuItem.ENTER_SECRET, MenuItem.ADJUST)


def row_target(**kw):
    options = {"game": 1, "row": 5, "holes": 4, "palette": MSO, "edit_marks": True}
    options.update(kw)
    return EntryTarget(**options)


def test_short_names_are_distinct_and_the_blank_is_a_dash():
    names = short_names(("blue", "black", "brown", "bronze", EMPTY))
    assert names == {"blue": "BLU", "black": "BLA", "brown": "BROW", "bronze": "BRON", EMPTY: "--"}
    assert len(set(short_names(MSO).values())) == len(MSO)


def test_player_one_cycles_the_field_and_player_two_moves_on():
    entry = RowEntry.start(row_target())
    assert entry.guess == ("red",) * 4 and (entry.black, entry.white) == (0, 0)
    assert entry.editable_fields() == (0, 1, 2, 3, 4, 5)
    entry = entry.cycle().cycle()  # red -> green -> blue
    assert entry.guess[0] == "blue"
    for _ in range(len(MSO) - 2):
        entry = entry.cycle()
    assert entry.guess[0] == "red"  # wraps round the palette
    entry = entry.next_field().cycle()
    assert entry.guess == ("red", "green", "red", "red")
    for _ in range(3):
        entry = entry.next_field()
    assert entry.field == 4  # the black count
    entry = entry.cycle().cycle().cycle()
    assert entry.black == 3
    entry = entry.next_field().cycle()
    assert entry.white == 1
    entry = entry.cycle()
    assert entry.white == 0  # 3 black leave room for one white only
    entry = entry.next_field()
    assert entry.field == 0  # after the last field, the first again
    assert entry.text() == "ROW 5 [RED] GRE RED RED 3B 0W"


def test_more_black_clamps_the_white():
    entry = RowEntry.start(row_target(black=1, white=3))
    assert (entry.black, entry.white) == (1, 3)
    entry = RowEntry(entry.target, entry.guess, entry.black, entry.white, 4).cycle()
    assert (entry.black, entry.white) == (2, 2)


def test_only_the_halves_to_enter_are_visited_and_sent():
    marks_only = RowEntry.start(row_target(guess=("red", "red", "green", "green"), edit_guess=False))
    assert marks_only.field == 4 and marks_only.editable_fields() == (4, 5)
    assert marks_only.cycle().guess == ("red", "red", "green", "green")
    holes, marks = marks_only.fields()
    assert not any(c.editable for c in holes) and all(c.editable for c in marks)
    assert marks_only.payload() == {"action": "confirm_row", "game": 1, "row": 5, "hand": True,
                                    "black": 0, "white": 0}
    guess_only = RowEntry.start(row_target(edit_marks=False))
    assert guess_only.fields()[1] == ()  # no marks on the board yet: none shown
    assert guess_only.payload() == {"action": "confirm_row", "game": 1, "row": 5, "hand": True,
                                    "guess": ["red"] * 4}


def test_unread_holes_start_at_the_first_colour_and_read_ones_stay():
    entry = RowEntry.start(row_target(guess=("pink", "unknown", "occluded", "blue")))
    assert entry.guess == ("pink", "red", "red", "blue")


def test_the_secret_has_holes_only():
    entry = RowEntry.start(EntryTarget(game=2, row=0, holes=5, palette=(*MSO, EMPTY)))
    assert entry.target.is_secret and entry.target.title == "SECRET"
    assert entry.editable_fields() == (0, 1, 2, 3, 4)
    for _ in range(len(MSO)):
        entry = entry.cycle()
    assert entry.guess[0] == EMPTY
    assert entry.payload() == {"action": "confirm_secret", "game": 2,
                               "code": [EMPTY, "red", "red", "red", "red"]}


def test_enter_row_is_offered_only_with_a_target():
    menu = ArbiterMenu(players=2, items=TABLE_ITEMS)
    menu.long()
    assert menu.offered() == (MenuItem.BACK, MenuItem.ADJUST)
    menu.targets = {MenuItem.ENTER_ROW: row_target()}
    assert menu.offered() == (MenuItem.BACK, MenuItem.ENTER_ROW, MenuItem.ADJUST)
    menu.short()
    assert menu.caption() == "MENU: ENTER ROW"
    menu.targets = {}
    assert menu.item is MenuItem.BACK  # the row was confirmed meanwhile


def test_commit_closes_the_menu_and_a_hold_cancels():
    menu = ArbiterMenu(players=2, items=TABLE_ITEMS)
    menu.targets = {MenuItem.ENTER_ROW: row_target()}
    menu.long()
    menu.short()
    assert menu.long() == []
    assert menu.mode is MenuMode.ENTRY and menu.caption() == "ENTER ROW 5"
    menu.player(0)
    menu.player(1)
    menu.player(0)
    assert menu.entry.guess == ("green", "green", "red", "red")
    assert [a.kind for a in menu.long()] == ["cancel_entry"]
    assert menu.mode is MenuMode.ITEMS and menu.entry is None
    menu.long()
    menu.player(0)
    [action] = menu.short()
    assert action.kind == "enter_row" and action.entry.guess == ("green", "red", "red", "red")
    assert not menu.is_open
    assert menu.player(0) == [] and menu.short() == []


def test_adjust_still_works_beside_the_entry():
    menu = ArbiterMenu(players=2, items=TABLE_ITEMS)
    menu.targets = {MenuItem.ENTER_ROW: row_target()}
    menu.long()
    menu.short()
    menu.short()
    assert menu.item is MenuItem.ADJUST
    menu.long()
    [action] = menu.player(1)
    assert action.kind == "adjust" and action.player == 1 and action.delta_ns == 10_000_000_000


def test_the_table_offers_only_what_applies_before_a_game(table, drive, fake_time):
    """The real table's menu before a game: nothing to enter, nothing to undo
    or set; the clock preset may still be chosen."""
    drive.press(22)  # the arbiter holds the button
    fake_time.advance_ms(1600)
    table.step()
    drive.release(22)
    table.step()
    menu = table.program.menu
    assert menu.is_open
    assert menu.offered() == (
        MenuItem.BACK, MenuItem.ADJUST, MenuItem.MUTE, MenuItem.PENALTY, MenuItem.PRESET,
    )


def test_the_entry_screen_highlights_the_current_field():
    model = SAMPLES["enter-row"]
    assert model.entry is not None and model.entry.holes[1].current
    image = render(model)
    # The current hole (second of four) is drawn inverted: mostly lit.
    w = 128 // 4
    cell = image.crop((w + 2, 12, 2 * w - 2, 28))
    other = image.crop((2, 12, w - 2, 28))
    def lit(img):
        return img.convert("L").histogram()[255] / (img.width * img.height)

    assert lit(cell) > 0.6 and lit(other) < 0.4


def test_the_entry_replaces_the_times_on_every_device():
    base = SAMPLES["check-row"]
    with_entry = DisplayModel(players=base.players, on_move=base.on_move, row=5, paused=True,
                              banner="ENTER ROW 5", entry=SAMPLES["enter-row"].entry)
    assert render(with_entry).tobytes() != render(base).tobytes()
    assert layout(with_entry, 16, 2) == ["ROW 5 2B 1W     ", " RED>GRE BLU YEL"]
    lines = layout(with_entry, 20, 4)
    assert lines[1].startswith(" RED>GRE") and "P1 CHANGE" in lines[2]
    five = EntryView("SECRET", holes=SAMPLES["enter-row"].entry.holes * 2)
    assert len(layout(DisplayModel(players=base.players, entry=five), 16, 2)[1]) == 16


@pytest.mark.parametrize("holes", [4, 5])
def test_entry_screens_fit_any_variant(holes):
    entry = RowEntry.start(row_target(holes=holes, palette=(*MSO, EMPTY)))
    model = DisplayModel(players=SAMPLES["running"].players, entry=EntryView("ROW 12", *entry.fields()),
                         banner="ENTER ROW 12")
    assert render(model).getbbox() is not None
