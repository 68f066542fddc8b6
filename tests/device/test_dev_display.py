"""Display model, devices, text layouts and the display loop."""

from __future__ import annotations

import dataclasses
import io
import logging
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pegwatch.device.display.charlcd import layout
from pegwatch.device.display.devices import DisplaySettings, open_display
from pegwatch.device.display.loop import DisplayLoop
from pegwatch.device.display.model import (
    DisplayModel,
    Message,
    PlayerFace,
    Severity,
    format_time,
    until_face_changes_ns,
)
from pegwatch.device.display.render import render
from pegwatch.device.display.samples import SAMPLES
from pegwatch.device.display.terminal import to_half_blocks
from pegwatch.device.errors import ConfigError
from pegwatch.rules.record import Role

S = 1_000_000_000
SRC = "firmware_config/pegwatch.toml"


@pytest.mark.parametrize(
    ("ns", "face"),
    [
        (8 * 60 * S, "8:00"),
        (8 * 60 * S - 1, "7:59"),  # rounded down: never time the player has not got
        (20 * S, "0:20"),
        (20 * S - 1, "19.9"),
        (10 * S + 50_000_000, "10.0"),
        (S, "1.0"),
        (99_999_999, "0.1"),  # 0.0 is kept for the flag
        (1, "0.1"),
        (0, "0.0"),
        (-5, "0.0"),
        (3600 * S, "1:00:00"),
        (3600 * S + 59 * 60 * S + 59 * S + 999, "1:59:59"),
        (10 * 3600 * S, "10:00:00"),
    ],
)
def test_format_time(ns, face):
    assert format_time(ns) == face


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=3 * 3600 * S))
def test_face_changes_exactly_when_promised(remaining):
    wait = until_face_changes_ns(remaining)
    assert wait is not None and wait >= 1
    assert format_time(remaining - wait) != format_time(remaining)
    assert format_time(remaining - wait + 1) == format_time(remaining)


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=3 * 3600 * S), st.integers(min_value=0, max_value=S))
def test_quantized_models_are_equal_when_faces_are(remaining, less):
    a = DisplayModel(players=(PlayerFace("A", remaining), PlayerFace("B", 5 * S)), on_move=0)
    b = DisplayModel(players=(PlayerFace("A", max(0, remaining - less)), PlayerFace("B", 5 * S)),
                     on_move=0)
    same_face = format_time(a.players[0].remaining_ns) == format_time(b.players[0].remaining_ns)
    assert (a.quantized() == b.quantized()) == same_face


@pytest.mark.parametrize(
    ("used", "face"),
    [
        (0, "0.0"),  # the start of a count, not a flag
        (1, "0.0"),  # right after the press: the first tenth is not reached yet
        (99_999_999, "0.0"),
        (100_000_000, "0.1"),
        (20 * S - 1, "19.9"),
        (20 * S, "0:20"),
        (61 * S + 999_999_999, "1:01"),
    ],
)
def test_count_up_faces_round_down(used, face):
    assert format_time(used, count_up=True) == face
    assert PlayerFace("A", used, count_up=True).face == face


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=3 * 3600 * S))
def test_count_up_face_changes_exactly_when_promised(used):
    wait = until_face_changes_ns(used, count_up=True)
    assert wait is not None and wait >= 1
    assert format_time(used + wait, count_up=True) != format_time(used, count_up=True)
    assert format_time(used + wait - 1, count_up=True) == format_time(used, count_up=True)
    a = DisplayModel(players=(PlayerFace("A", used, count_up=True), PlayerFace("B", 0, count_up=True)),
                     on_move=0)
    assert a.is_running and a.until_change_ns() == wait
    b = dataclasses.replace(a, players=(PlayerFace("A", used + wait - 1, count_up=True), a.players[1]))
    assert a.quantized() == b.quantized()


def test_count_up_clock_at_the_table_reads_what_was_used(tmp_path):
    """The count-up preset at a table: the faces the display draws never run ahead."""
    from pegwatch.device.table.journal import Journal
    from pegwatch.device.table.program import TableProgram
    from pegwatch.rules.flow import MatchFlow, preset_clock_factory

    now = [5 * S]
    flow = MatchFlow(("Alice", "Bob"), clock_factory=preset_clock_factory("count-up"))
    with Journal(tmp_path / "j.sqlite", create=True) as journal:
        program = TableProgram(flow, journal, now_ns=lambda: now[0])
        program.submit("press", {"player": 0}, now[0])  # the codemaker starts Bob's count
        program.step()
        for later, face in ((1, "0.0"), (50_000_000, "0.0"), (150_000_000, "0.1"), (21 * S, "0:21")):
            model = program.display_model(now[0] + later)
            bob = model.players[1]
            assert bob.count_up and bob.face == face
            assert layout(model, 16, 2)[0].endswith(f" {face}")  # the character LCD too
        # The display loop wakes when the count reaches its next tenth, not before.
        assert program.next_display_change_ns(now[0] + 50_000_000) == now[0] + 100_000_000


def test_until_change_is_none_when_nothing_runs():
    model = SAMPLES["paused"]
    assert model.until_change_ns() is None
    assert SAMPLES["timeout"].until_change_ns() is None
    assert SAMPLES["running"].until_change_ns() == 400_000_001


# -- character LCD -----------------------------------------------------------

def test_charlcd_16x2():
    assert layout(SAMPLES["running"], 16, 2) == [" AL 3:41>BO 7:59", "ROW 3 BREAKER   "]
    assert layout(SAMPLES["mis-mark"], 16, 2) == [" AL 3:41 BO 7:59", "MIS-MARK ROW 3  "]
    assert layout(SAMPLES["timeout"], 16, 2) == [" AL 3:41 BO FLAG", "FLAG BOB        "]


def test_charlcd_20x4():
    assert layout(SAMPLES["running"], 20, 4) == [
        " ALICE    >BOB      ",
        " MKR 3:41  BRK 7:59 ",
        "ROW 3 BREAKER       ",
        "                    ",
    ]
    assert layout(SAMPLES["timeout"], 20, 4)[1:] == [
        " MKR 3:41  BRK FLAG ",
        "OPEN THE SHIELD     ",
        "FLAG BOB            ",
    ]


def test_charlcd_four_players():
    assert layout(SAMPLES["mensa-4"], 20, 4) == [
        " ANN 14:03 BEN 11:47",
        " CY   FLAG>DEE  16.8",
        "                    ",
        "TIMEOUT CY          ",
    ]
    # Two lines cannot hold four times: the player on move, then the next.
    assert layout(SAMPLES["mensa-4"], 16, 2) == [">DE 16.8 A 14:03", "TIMEOUT CY      "]


def test_charlcd_lines_are_ascii_and_exact_width():
    for model in SAMPLES.values():
        for cols, rows in ((16, 2), (20, 4)):
            lines = layout(model, cols, rows)
            assert len(lines) == rows
            assert all(len(line) == cols and line.isascii() for line in lines)


def test_charlcd_refuses_other_sizes():
    with pytest.raises(ValueError, match="16x2 or 20x4"):
        layout(SAMPLES["running"], 40, 2)


# -- devices -----------------------------------------------------------------

def test_dummy_device_shows_the_render():
    display = open_display("dummy")
    display.show(SAMPLES["running"])
    assert display.device.image.tobytes() == render(SAMPLES["running"]).tobytes()


def test_terminal_view():
    stream = io.StringIO()
    display = open_display("terminal", stream=stream)
    display.show(SAMPLES["low-time"])
    text = stream.getvalue()
    assert text.count("\n") == 34  # 32 lines of half blocks and two borders
    assert "█" in text
    lines = to_half_blocks(render(SAMPLES["low-time"]))
    assert len(lines) == 32


def test_emulator_png_writes_the_picture(tmp_path):
    out = tmp_path / "screen.png"
    display = open_display(DisplaySettings(kind="emulator-png", output=str(out), scale=1))
    display.show(SAMPLES["timeout"])
    from PIL import Image

    written = Image.open(out).convert("1")
    assert written.tobytes() == render(SAMPLES["timeout"]).tobytes()
    display.close()


def test_emulator_gif_written_on_close(tmp_path):
    out = tmp_path / "game.gif"
    display = open_display(DisplaySettings(kind="emulator-gif", output=str(out)))
    for name in ("running", "low-time", "timeout"):
        display.show(SAMPLES[name])
    display.close()
    from PIL import Image

    with Image.open(out) as gif:
        assert gif.n_frames == 3
        assert gif.size == (128 * 4, 64 * 4)


def test_colour_lcd_gets_rgb():
    class FakeLcd:
        size = (160, 128)
        mode = "RGB"
        image = None

        def display(self, image):
            self.image = image

    from pegwatch.device.display.devices import Display

    display = Display(FakeLcd(), kind="st7735")
    display.show(SAMPLES["running"])
    assert display.device.image.mode == "RGB" and display.device.image.size == (160, 128)


def test_display_settings_parse():
    s = DisplaySettings.from_mapping(
        {"kind": "ssd1306", "i2c_address": "0x3D", "rotate": 2, "fps": 5}, source=SRC
    )
    assert s.i2c_address == 0x3D and s.size == (128, 64) and s.fps == 5.0
    assert s.reserved_pins()[2] == "the display (I2C SDA)"
    spi = DisplaySettings.from_mapping({"kind": "st7735"}, source=SRC)
    assert spi.size == (160, 128) and 24 in spi.reserved_pins() and 10 in spi.reserved_pins()
    assert DisplaySettings().reserved_pins() == {}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"kind": "oled"}, "display.kind: 'oled' is not allowed; use one of ssd1306"),
        ({"rotate": 4}, "display.rotate: 4 is out of range; allowed 0..3"),
        ({"i2c_address": "zz"}, "display.i2c_address: 'zz' is not an I2C address"),
        ({"i2c_address": 0x90}, "display.i2c_address: 144 is not an I2C address"),
        ({"fps": 0}, "display.fps: 0 is out of range"),
        ({"spi_speed_hz": 3_000_000}, "display.spi_speed_hz: 3000000 is not a speed luma supports"),
        ({"kind": "hd44780", "width": 40}, "display.width: a character LCD is 16x2 or 20x4"),
        ({"colour": "red"}, "display.colour: unknown key"),
    ],
)
def test_display_settings_errors(data, expected):
    with pytest.raises(ConfigError) as info:
        DisplaySettings.from_mapping(data, source=SRC)
    assert str(info.value).startswith(f"{SRC}: ")
    assert expected in str(info.value)


def test_missing_oled_is_a_clear_oserror_not_import_time():
    # No I2C bus here: opening fails when asked, as one OSError line.
    with pytest.raises(OSError, match="21") as info:
        open_display(DisplaySettings(kind="ssd1306", i2c_port=21))
    assert "\n" not in str(info.value)


def test_loop_reopens_a_replugged_display():
    from pegwatch.device.display.devices import Display

    first, second = CountingDevice(), CountingDevice()
    first.fail = True
    state = {"now": 0}
    loop = DisplayLoop(Display(first, kind="test"), lambda now: SAMPLES["paused"], retry_s=1,
                       now_ns=lambda: state["now"], reopen=lambda: Display(second, kind="test"))
    loop.step()
    assert loop.is_failing
    state["now"] = 2 * S
    loop.step()
    assert not loop.is_failing and len(second.frames) == 1


# -- the loop ------------------------------------------------------------------

class CountingDevice:
    size = (128, 64)
    mode = "1"

    def __init__(self):
        self.frames = []
        self.fail = False
        self.shown = threading.Condition()

    def display(self, image):
        if self.fail:
            raise OSError(121, "Remote I/O error")
        with self.shown:
            self.frames.append(image.tobytes())
            self.shown.notify_all()

    def wait_for_frames(self, count, timeout=5.0):
        with self.shown:
            return self.shown.wait_for(lambda: len(self.frames) >= count, timeout)


def _running_model(remaining_ns):
    return DisplayModel(players=(PlayerFace("A", remaining_ns, Role.CODEBREAKER),
                                 PlayerFace("B", 60 * S, Role.CODEMAKER)), on_move=0, row=1)


def _loop(device, start_remaining, fps=10.0):
    from pegwatch.device.display.devices import Display

    t0 = 1_000 * S
    state = {"now": t0}
    loop = DisplayLoop(Display(device, kind="test"),
                       lambda now: _running_model(start_remaining - (now - t0)),
                       fps=fps, retry_s=2.0, now_ns=lambda: state["now"])
    return loop, state, t0


def test_loop_draws_only_when_the_face_changes_and_sleeps_until_then():
    device = CountingDevice()
    loop, state, t0 = _loop(device, 30 * S + 500_000_000)
    due = loop.step()
    assert len(device.frames) == 1
    assert due == t0 + 500_000_001  # 0:30 becomes 0:29 one ns after 30.0 s left
    state["now"] = t0 + 200_000_000
    loop.step()
    assert len(device.frames) == 1  # same face: nothing sent
    state["now"] = due
    loop.step()
    assert len(device.frames) == 2
    assert loop.passes == 3 and loop.frames == 2


def test_loop_respects_fps_cap():
    device = CountingDevice()
    loop, state, t0 = _loop(device, 15 * S, fps=5)  # tenths change every 100 ms
    loop.step()
    state["now"] = t0 + 100_000_001
    due = loop.step()
    assert len(device.frames) == 1  # 5 fps: not before 200 ms
    assert due == t0 + 200_000_000
    state["now"] = due
    loop.step()
    assert len(device.frames) == 2


def test_loop_survives_a_failing_display(caplog):
    device = CountingDevice()
    loop, state, _t0 = _loop(device, 100 * S)
    device.fail = True
    with caplog.at_level(logging.ERROR, logger="pegwatch.device.display.loop"):
        loop.step()
        state["now"] += S
        loop.step()
    assert loop.is_failing and loop.errors == 1  # no retry before 2 s
    assert len([r for r in caplog.records if r.levelno >= logging.ERROR]) == 1
    assert "Remote I/O error" in caplog.text and "\n" not in caplog.records[0].getMessage()
    device.fail = False
    state["now"] += S + 1
    loop.step()
    assert not loop.is_failing and len(device.frames) == 1


def test_loop_thread_runs_and_wakes():
    device = CountingDevice()
    from pegwatch.device.display.devices import Display

    model = {"m": SAMPLES["paused"]}
    loop = DisplayLoop(Display(device, kind="test"), lambda now: model["m"], fps=50)
    with loop:
        assert device.wait_for_frames(1)
        model["m"] = SAMPLES["mis-mark"]
        loop.wake()
        assert device.wait_for_frames(2)
    assert len(device.frames) == 2


def test_message_severity_is_drawn():
    base = SAMPLES["running"]
    from dataclasses import replace

    info = render(replace(base, message=Message("CHECK ROW 5", Severity.INFO)))
    alarm = render(replace(base, message=Message("CHECK ROW 5", Severity.ALARM)))
    bar = (0, 54, 128, 64)
    lit_info = info.crop(bar).convert("L").histogram()[255]
    lit_alarm = alarm.crop(bar).convert("L").histogram()[255]
    assert lit_alarm > 3 * lit_info  # the alarm bar is inverted


def test_hd44780_rewrites_only_changed_lines(monkeypatch):
    import RPLCD.i2c

    writes = []

    class FakeCharLCD:
        def __init__(self, expander, address, *, port, cols, rows, auto_linebreaks):
            assert (expander, address, port, cols, rows) == ("PCF8574", 0x27, 1, 16, 2)
            self.cursor_pos = (0, 0)

        def write_string(self, text):
            writes.append((self.cursor_pos, text))

        def close(self, clear=False):
            writes.append(("closed", clear))

    monkeypatch.setattr(RPLCD.i2c, "CharLCD", FakeCharLCD)
    display = open_display(DisplaySettings(kind="hd44780", i2c_address=0x27))
    display.show(SAMPLES["running"])
    assert writes == [((0, 0), " AL 3:41>BO 7:59"), ((1, 0), "ROW 3 BREAKER   ")]
    writes.clear()
    # Same times, new message line: only the changed line is written.
    display.show(dataclasses.replace(SAMPLES["running"], message=Message("ILLEGAL ROW 4", Severity.WARNING)))
    assert writes == [((1, 0), "ILLEGAL ROW 4   ")]
    display.close()
    assert writes[-1] == ("closed", True)
