"""The guided set-up's state machine: each step, what each button does there, and what the display says."""

from __future__ import annotations

import pytest

from pegwatch.device.display.model import DisplayModel, PlayerFace, Severity
from pegwatch.device.display.render import render, text_font
from pegwatch.device.table.setup.layout import layout_lines, layout_record
from pegwatch.device.table.setup.machine import Action, Button, Seen, SetupMachine, Step
from pegwatch.vision.profile import load_profile, profile_names

MARKERS = Seen(found=True, method="markers", markers=4)
OUTLINE = Seen(found=True, method="best-effort")
NOTHING = Seen(found=False, problem="markers not found")


def test_markers_then_empty_then_layout_ends_calibrated():
    m = SetupMachine()
    assert m.step is Step.BOARD and m.owns_buttons and not m.low_trust
    assert m.press(Button.OK) is None and m.step is Step.BOARD  # nothing found yet: nothing to confirm
    m.saw(MARKERS)
    assert m.screen().message.text == "MARKERS 4: ARB OK"
    assert m.press(Button.OK) is None and m.step is Step.EMPTY
    assert m.press(Button.LEFT) is None and m.step is Step.EMPTY  # the players' buttons mean nothing here
    assert m.press(Button.OK) is Action.CAPTURE_EMPTY and m.step is Step.LEARN_EMPTY
    assert m.screen().message.text == "LEARNING..."
    assert m.learned(True, to_learn=("red", "blue")) is None and m.step is Step.COLOURS
    assert m.press(Button.LEFT) is None and m.step is Step.LAYOUT
    assert m.press(Button.OK) is Action.CAPTURE_LAYOUT and m.step is Step.LEARN_LAYOUT
    assert m.learned(True, to_learn=()) is Action.READ and m.step is Step.DONE
    assert m.screen() is None and not m.owns_buttons
    assert m.press(Button.OK) is None  # the buttons are the match's now


def test_an_outline_is_confirmed_as_fixed_corners():
    m = SetupMachine()
    m.saw(OUTLINE)
    assert m.screen().message.text == "CORNERS: ARB OK"
    assert m.press(Button.OK) is Action.FIX_CORNERS and m.corners_fixed and m.step is Step.EMPTY


def test_rows_path_reads_low_trust_until_every_colour_is_learned():
    m = SetupMachine(step=Step.COLOURS)
    assert m.press(Button.RIGHT) is Action.READ_LOW_TRUST
    assert m.step is Step.ROWS and m.low_trust and not m.owns_buttons
    screen = m.screen()
    assert screen.header == "SET-UP" and screen.message.text == "SET-UP: LOW TRUST"
    assert m.learned(True, to_learn=("purple",)) is None and m.step is Step.ROWS
    assert "purple" in m.status()
    assert m.learned(False, problem="row covered") is None and m.step is Step.ROWS
    assert m.learned(True, to_learn=()) is Action.READ and m.step is Step.DONE and not m.low_trust


def test_a_layout_that_leaves_colours_unlearned_goes_on_in_low_trust():
    m = SetupMachine(step=Step.LAYOUT)
    assert m.press(Button.OK) is Action.CAPTURE_LAYOUT
    assert m.learned(True, to_learn=("black key",)) is Action.READ_LOW_TRUST and m.step is Step.ROWS


def test_a_failed_step_says_so_and_is_tried_again():
    m = SetupMachine(step=Step.EMPTY)
    m.press(Button.OK)
    assert m.learned(False, problem="board not found") is None and m.step is Step.EMPTY
    assert m.screen().message.text == "FAILED: ARB RETRY" and m.failure == "board not found"
    assert m.status() == "set-up: not learned (board not found); the arbiter's short press tries again"
    assert m.press(Button.OK) is Action.CAPTURE_EMPTY
    m.learned(True, to_learn=("red",))
    assert m.failure is None and m.step is Step.COLOURS


@pytest.mark.parametrize("step", [Step.BOARD, Step.EMPTY, Step.COLOURS, Step.LAYOUT])
def test_the_arbiters_hold_leaves_the_set_up_for_later(step):
    m = SetupMachine(step=step)
    assert m.press(Button.LATER) is Action.STOP_READING and m.step is Step.LATER
    assert not m.owns_buttons and m.screen().header == "SET-UP"


def test_no_camera_is_said_as_an_alarm():
    m = SetupMachine()
    m.saw(Seen(found=False, camera=False, problem="camera picamera2: no camera"))
    screen = m.screen()
    assert screen.message.text == "SET-UP: NO CAMERA" and screen.message.severity is Severity.ALARM


def _every_screen():
    m = SetupMachine()
    for seen in (NOTHING, MARKERS, OUTLINE, Seen(found=False, camera=False)):
        m.saw(seen)
        yield m.screen()
    m.saw(MARKERS)
    for step in Step:
        m.step = step
        m.failure = None
        yield m.screen()
        m.failure = "x"
        yield m.screen()


def test_the_table_is_never_silent_before_it_is_calibrated():
    for screen in _every_screen():
        if screen is None:
            continue
        assert screen.header == "SET-UP" and screen.message is not None


def test_every_set_up_text_fits_the_128x64_display():
    """Measured in the display's own small font, as its renderer cuts the message line
    (text wider than the bar less 4 px) and centres the banner."""
    font = text_font(9)  # the 128x64 panel's small text
    for screen in _every_screen():
        if screen is None:
            continue
        for text in filter(None, (screen.banner, screen.message.text if screen.message else None)):
            assert font.getlength(text.upper()) <= 128 - 4, f"{text!r} does not fit"


def test_a_set_up_screen_is_drawn():
    face = PlayerFace(name="Ann", remaining_ns=240_000_000_000)
    screen = SetupMachine().screen()
    picture = render(DisplayModel(players=(face, face), message=screen.message, banner=screen.banner,
                                  table=screen.header))
    assert picture.size == (128, 64) and picture.convert("L").getbbox() is not None


@pytest.mark.parametrize("name", profile_names())
def test_the_layout_shows_every_colour_both_keys_and_empty_key_holes(name):
    profile = load_profile(name)
    record = layout_record(profile)
    colours = {c for row in record["rows"] for c in row["guess"]}
    assert colours == set(profile.palette)
    assert any(row["black"] for row in record["rows"]) and any(row["white"] for row in record["rows"])
    assert any(row["black"] + row["white"] < profile.key_holes for row in record["rows"])
    assert all(row["black"] + row["white"] <= profile.key_holes for row in record["rows"])
    assert len(record["secret"]) == profile.holes and len(layout_lines(profile)) == len(record["rows"]) + 1


def test_docs_setup_shows_each_boards_layout_as_the_set_up_asks_for_it():
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "setup.md").read_text(encoding="utf-8")
    for name in profile_names():
        if name not in ("invicta-12x4", "lego-10x4", "super-12x5"):
            continue  # a profile added later is printed in the log when the set-up asks for it
        lines = layout_lines(load_profile(name))
        row = f"| {name} | " + " | ".join(line.split(": ", 1)[1] for line in lines) + " |"
        assert row in doc, row
