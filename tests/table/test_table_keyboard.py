"""``pegwatch run`` off the Pi: keys drive gpiozero mock pins; the arbiter's button."""

from __future__ import annotations

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from pegwatch.device.hardware.gpio import TableHardware
from pegwatch.device.hardware.pins import PinMap
from pegwatch.device.table.program import TableProgram
from pegwatch.device.table.run import ArbiterButton
from pegwatch.rules.flow import Phase
from pegwatch.simulation.demo import VirtualClock
from pegwatch.simulation.keyboard import KeyboardPins


@pytest.fixture
def clock():
    return VirtualClock()


@pytest.fixture
def table(tmp_path, clock):
    factory = MockFactory(pin_class=MockPWMPin)
    hardware = TableHardware(PinMap(), pin_factory=factory, watch=False, now_ns=clock)
    program = TableProgram.open(tmp_path / "j.sqlite", players=("Ann", "Bob"), now_ns=clock)
    arbiter = ArbiterButton(program)
    hardware.when_player_pressed = lambda player, at_ns: program.press(player, at_ns)
    hardware.when_arbiter_pressed = arbiter.down
    hardware.when_arbiter_short = arbiter.short
    quits = []
    keys = KeyboardPins(hardware, on_quit=lambda: quits.append(True), fd=0,
                        sleep=lambda s: clock.advance(int(s * 1e9)))
    yield program, keys, quits
    hardware.close()
    program.close()


def test_keys_press_the_mock_buttons_through_the_real_debounce(table, clock):
    program, keys, quits = table
    keys.handle("a")                     # Ann (seat 0) starts Bob's clock
    program.step()
    assert program.flow.phase is Phase.GUESS
    clock.advance(60_000_000)
    keys.handle("l")                     # Bob confirms a guess
    program.step()
    assert program.flow.phase is Phase.MARKS
    stamps = [e.at_ns for e in program.journal.events() if e.kind == "press"]
    assert len(stamps) == 2 and stamps[1] - stamps[0] >= 50_000_000
    keys.handle("q")
    assert quits == [True]


def test_arbiter_button_pauses_on_the_way_down_and_resumes_on_a_short_press(table, clock):
    program, keys, _ = table
    keys.handle("a")
    program.step()
    keys.handle(" ")                     # down: pause at once; up: nothing more
    program.step()
    assert program.flow.paused
    frozen = program.flow.remaining_ns(clock() + program.offset_ns)
    clock.advance(5_000_000_000)
    assert program.flow.remaining_ns(clock() + program.offset_ns) == frozen
    keys.handle(" ")                     # a short press on a paused clock: resume
    program.step()
    assert not program.flow.paused
    actions = [e.payload["action"] for e in program.journal.events() if e.kind == "arbiter"]
    assert actions == ["pause", "resume"]


def test_desk_board_keys_move_the_rendered_board(calibrated):
    from pegwatch.rules.codes import score
    from pegwatch.simulation.demo import Scene
    from pegwatch.simulation.desk import DeskBoard
    from pegwatch.simulation.render import BoardContents

    profile, _, conditions = calibrated
    scene = Scene(profile, BoardContents.empty(profile), conditions)
    desk = DeskBoard(scene, seed=3)
    keys = desk.keys()
    assert scene.contents.shield_open and scene.contents.secret == desk.secret
    keys["o"]()
    keys["g"]()
    keys["k"]()
    guess = scene.contents.guesses[0]
    assert guess is not None and scene.contents.keys[0] == tuple(score(desk.secret, guess))
    keys["g"]()
    keys["w"]()
    second = scene.contents.guesses[1]
    assert scene.contents.keys[1] != tuple(score(desk.secret, second))
    keys["h"]()
    assert scene.conditions.hand is not None
    keys["n"]()
    assert scene.contents.guesses[0] is None
