"""The table's main loop as the Pi runs it: ``pegwatch run`` with mock pins, a camera and a display.

``run_table`` runs in a thread with the devices the configuration names:
gpiozero's MockFactory for the buttons and LEDs (what a desktop table
uses), the rendered board as the camera, and luma's dummy display saving
its picture. The test presses the buttons through the pins and waits for
what the journal says, never for a fixed time.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from PIL import Image

from pegwatch.device.table.journal import Journal
from pegwatch.device.table.run import run_table
from pegwatch.simulation.desk import SimulatedDesk

WAIT_S = 60.0


class _Keys:
    """Stands in for the keyboard: the test holds the buttons itself."""

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


class HandsOnDesk(SimulatedDesk):
    """The simulated desk, but the test, not a terminal, presses the buttons."""

    def __init__(self) -> None:
        super().__init__(seed=5)
        self.ready = threading.Event()
        self.hardware = None
        self.quit = None

    def keyboard(self, hardware, *, on_quit, on_confirm):
        self.hardware, self.quit = hardware, on_quit
        self.ready.set()
        return _Keys()


def _config(tmp_path: Path) -> Path:
    path = tmp_path / "pegwatch.toml"
    path.write_text(f"""
[table]
name = "Table 9"
board = "invicta-12x4"
[match]
players = ["Ann", "Bob"]
[camera]
source = "render"
fps = 20
[journal]
path = "{tmp_path / 'table.sqlite'}"
[hardware]
mode = "simulated"
[display]
kind = "dummy"
save = "{tmp_path / 'display.png'}"
""")
    return path


def _events(tmp_path: Path, kind: str) -> list:
    with Journal(tmp_path / "table.sqlite", create=False) as journal:
        return [e for e in journal.events() if e.kind == kind]


def _wait_for(what: str, test) -> None:
    deadline = time.monotonic() + WAIT_S
    while not test():
        if time.monotonic() > deadline:
            pytest.fail(f"the table never got to: {what}")
        time.sleep(0.01)  # a poll of the condition, not a wait for time to pass


@pytest.mark.slow
def test_the_pi_main_loop_plays_a_row_and_stops_cleanly(tmp_path):
    desk = HandsOnDesk()
    result: dict[str, int] = {}
    loop = threading.Thread(
        target=lambda: result.setdefault("rc", run_table(config=str(_config(tmp_path)), desk=lambda: desk)),
        daemon=True,
    )
    loop.start()
    assert desk.ready.wait(WAIT_S), "the table never built its buttons"
    hw = desk.hardware

    def press(button, seq_kind: str, count: int) -> None:
        button.pin.drive_low()
        _wait_for(f"{count} {seq_kind} events", lambda: len(_events(tmp_path, seq_kind)) >= count)
        button.pin.drive_high()

    try:
        # The codemaker starts the codebreaker's clock; the LEDs follow the turn.
        press(hw.player_buttons[0], "press", 1)
        _wait_for("the codebreaker's LED", lambda: hw.led_states[1] != "off")
        # A guess on the board, confirmed by the codebreaker's press, is read by the camera.
        desk.board.guess()
        press(hw.player_buttons[1], "press", 2)
        _wait_for("the guess read", lambda: any(
            e.payload.get("phase") == "guess" for e in _events(tmp_path, "reading")))
        # The codemaker marks it right and presses: the row is judged.
        desk.board.marks()
        press(hw.player_buttons[0], "press", 3)
        _wait_for("the row judged", lambda: any(
            e.payload.get("what") == "row" for e in _events(tmp_path, "verdict")))
        # The arbiter's button, down while a clock runs, pauses at once.
        press(hw.arbiter_button, "arbiter", 1)
        assert _events(tmp_path, "arbiter")[0].payload["action"] == "pause"
        _wait_for("the display saved", lambda: (tmp_path / "display.png").is_file())
    finally:
        desk.quit()
        loop.join(WAIT_S)
    assert not loop.is_alive() and result["rc"] == 0
    row = next(e.payload for e in _events(tmp_path, "verdict") if e.payload.get("what") == "row")
    assert row["row"] == 1 and tuple(row["guess"]) == tuple(desk.board.scene.contents.guesses[0])
    assert hw.is_closed, "the LEDs and buzzer were not released"
    picture = Image.open(tmp_path / "display.png").convert("L")
    assert picture.getbbox() is not None, "the display's picture is blank"


def _script_config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "script.toml"
    path.write_text(f"""
[match]
players = ["Ann", "Bob"]
[journal]
path = "{tmp_path / 'script.sqlite'}"
[hardware]
mode = "simulated"
{extra}
""")
    return path


def test_script_mode_in_process_answers_every_command_and_keeps_old_journals(tmp_path):
    import io

    script = tmp_path / "moves.txt"
    script.write_text("press 0 first\n\nstatus\nbogus\nreading {not json\nreading [1]\n"
                      "press 1\nconfirm\narbiter pause\nquit\npress 0\n")
    config = str(_script_config(tmp_path))
    out = io.StringIO()
    assert run_table(config=config, script=str(script), stdout=out) == 0
    lines = out.getvalue().splitlines()
    assert lines[0] == "ready 1"  # the match event
    assert lines[1].startswith("ack ") and lines[2].startswith("status guess ")
    assert lines[3] == "error unknown command 'bogus'"
    assert lines[4].startswith("error reading: not JSON") and lines[5] == "error reading: expected a JSON object"
    assert [line.split()[0] for line in lines[6:]] == ["ack", "ack", "ack"]
    assert len(_script_events(tmp_path, "press")) == 2  # nothing after quit
    # --new keeps the journal in use under the first free name and starts afresh.
    again = io.StringIO()
    assert run_table(config=config, script=str(script), stdout=again, new=True) == 0
    assert again.getvalue().splitlines()[0] == f"previous journal kept as {tmp_path / 'script.1.sqlite'}"
    assert (tmp_path / "script.1.sqlite").is_file() and len(_script_events(tmp_path, "press")) == 2


def _script_events(tmp_path: Path, kind: str) -> list:
    with Journal(tmp_path / "script.sqlite", create=False) as journal:
        return [e for e in journal.events() if e.kind == kind]


@pytest.mark.slow
def test_no_display_and_no_camera_at_start_do_not_stop_the_clock(tmp_path, caplog):
    """A Pi camera with no calibration, and an OLED that is not there: the
    table still runs its clock from the buttons, and says what is missing."""
    desk = HandsOnDesk()
    config = _script_config(tmp_path, '[camera]\nsource = "picamera2"\n[display]\nkind = "ssd1306"\n')
    loop = threading.Thread(target=run_table, kwargs={"config": str(config), "desk": lambda: desk},
                            daemon=True)
    with caplog.at_level("ERROR"):
        loop.start()
        assert desk.ready.wait(WAIT_S)
        try:
            for seat, count in ((0, 1), (1, 2)):
                desk.hardware.player_buttons[seat].pin.drive_low()
                _wait_for(f"press {count}", lambda c=count: len(_script_events(tmp_path, "press")) >= c)
                desk.hardware.player_buttons[seat].pin.drive_high()
        finally:
            desk.quit()
            loop.join(WAIT_S)
    assert not loop.is_alive()
    messages = " | ".join(r.getMessage() for r in caplog.records)
    assert "camera picamera2 has no calibration" in messages
    assert "display ssd1306 not started" in messages
