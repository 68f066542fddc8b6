"""The arbiter menu state machine (pure)."""

from __future__ import annotations

from pegwatch.device.table.arbiter_menu import ArbiterMenu, MenuAction, MenuItem, MenuMode


def test_walk_items_and_choose():
    menu = ArbiterMenu(players=2, presets=("MSO 8+4", "Mensa 20"))
    assert menu.caption() is None
    menu.long()
    assert menu.is_open and menu.caption() == "MENU: BACK"
    menu.short()
    assert menu.item is MenuItem.ADJUST
    menu.long()
    assert menu.mode is MenuMode.ADJUST and menu.caption() == "ADJUST +10s"
    assert menu.player(1) == [MenuAction("adjust", player=1, delta_ns=10_000_000_000)]
    menu.short()
    menu.short()
    assert menu.caption() == "ADJUST -1s"
    assert menu.player(0) == [MenuAction("adjust", player=0, delta_ns=-1_000_000_000)]
    assert menu.player(5) == []
    menu.long()
    assert menu.mode is MenuMode.ITEMS
    menu.short()
    assert menu.long() == [MenuAction("undo")]
    assert not menu.is_open  # one undo per visit
    menu.long()
    for _ in range(3):
        menu.short()
    assert menu.item is MenuItem.PRESET
    menu.long()
    assert menu.caption() == "PRESET: MSO 8+4"
    menu.short()
    assert menu.long() == [MenuAction("preset", preset=1)]
    menu.short()
    assert menu.item is MenuItem.MUTE
    assert menu.long() == [MenuAction("mute")]
    menu.short()
    assert menu.item is MenuItem.BACK
    assert menu.long() == [MenuAction("close")]
    assert not menu.is_open


def test_players_ignored_outside_adjust():
    menu = ArbiterMenu(players=2)
    menu.open()
    assert menu.player(0) == []
