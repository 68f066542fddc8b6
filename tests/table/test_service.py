"""``pegwatch run`` as a service: a clean stop on SIGTERM, and parts that come and go.

The stop runs the real program in a subprocess, with systemd's notify socket
faked by a datagram socket the test binds and the display drawn by luma's
emulator into a PNG: STOPPING=1 must arrive, the process must exit 0 and the
last picture must say STOPPED with the times the table stopped at. The
hot-plug tests open a display that is missing, then present, then lost, and
a camera that fails to open, then works, then fails again, through the same
code ``pegwatch run`` uses, and check that the clock's side never waited.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image, ImageChops

from pegwatch.device.display.devices import DisplaySettings, open_display
from pegwatch.device.display.model import DisplayModel, Message, PlayerFace, Severity
from pegwatch.device.display.render import render
from pegwatch.device.table.run import _camera_worker, _display_loop
from pegwatch.device.table.service import Backoff, HardwareSlot, Parts, RetryThread, stopped_model
from pegwatch.device.table.vision_worker import VisionWorker, wait_for
from pegwatch.rules.record import Role
from pegwatch.vision.sources import CameraUnavailableError, PacedSource, ReopeningSource

WAIT_S = 60.0
PEGWATCH = Path(sys.executable).parent / "pegwatch"


def _config(tmp_path: Path, display_png: Path) -> Path:
    path = tmp_path / "pegwatch.toml"
    path.write_text(f"""
[table]
name = "Table 9"
[match]
players = ["Ann", "Bob"]
[camera]
source = "render"
[journal]
path = "{tmp_path / 'journal.sqlite'}"
[hardware]
mode = "simulated"
[display]
kind = "emulator-png"
output = "{display_png}"
save = ""
scale = 1
""")
    return path


def _bw(image: Image.Image) -> Image.Image:
    """A picture as black and white levels (the emulator saves RGB; no dithering)."""
    return image.convert("L").point(lambda v: 255 if v > 127 else 0)


def _picture(png: Path) -> Image.Image:
    """The picture in ``png`` once there is a whole one (the emulator rewrites it in place)."""
    got: list[Image.Image] = []

    def whole() -> bool:
        try:
            got.append(_bw(Image.open(png)))
        except (OSError, SyntaxError, ValueError):
            return False
        return True

    assert wait_for(whole, WAIT_S)
    return got[-1]


def _same(png: Path, model: DisplayModel) -> bool:
    return ImageChops.difference(_picture(png), _bw(render(model))).getbbox() is None


def _messages(sock: socket.socket, until: str) -> list[str]:
    got: list[str] = []
    while not any(until in m.split("\n") for m in got):
        got.append(sock.recv(4096).decode())
    return got


@pytest.mark.slow
@pytest.mark.skipif(not PEGWATCH.exists(), reason="the pegwatch command is not installed in this venv")
def test_sigterm_stops_cleanly_with_stopping_sent_and_stopped_on_the_display(tmp_path):
    png = tmp_path / "display.png"
    notify = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(notify))
    sock.settimeout(WAIT_S)
    env = dict(os.environ, NOTIFY_SOCKET=str(notify), WATCHDOG_USEC="20000000", PYTHONUNBUFFERED="1")
    env.pop("WATCHDOG_PID", None)
    proc = subprocess.Popen(
        [str(PEGWATCH), "run", "--config", str(_config(tmp_path, png))],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path,
    )
    try:
        before = _messages(sock, "READY=1")
        assert before[-1] == "READY=1\nSTATUS=table running", before
        running = _picture(png)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=WAIT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    after = _messages(sock, "STOPPING=1")
    sock.close()
    assert proc.returncode == 0, err.decode()
    assert "Traceback" not in err.decode()
    assert b"table stopped" in out
    assert any(m == "STOPPING=1" for m in after)
    # The last picture: the times of a match not started, nobody on move, STOPPED.
    expected = stopped_model(DisplayModel(
        players=(PlayerFace("Ann", 240 * 10**9, Role.CODEMAKER), PlayerFace("Bob", 480 * 10**9, Role.CODEBREAKER)),
        table="Table 9",
    ))
    assert _same(png, expected)
    assert ImageChops.difference(_picture(png), running).getbbox() is not None  # it did change


# --- the display comes and goes ---------------------------------------------------------


class _Program:
    """What the display loop reads of the table program: a fixed picture."""

    def __init__(self) -> None:
        self.model = DisplayModel(players=(PlayerFace("Ann", 240 * 10**9), PlayerFace("Bob", 480 * 10**9)))
        self.asked = 0

    def display_model(self, raw_now: int | None = None) -> DisplayModel:
        self.asked += 1
        return self.model

    def next_display_change_ns(self, raw_now: int) -> int | None:
        return None


def test_a_display_missing_at_start_is_shown_when_it_comes_and_again_after_it_is_lost(tmp_path):
    png = tmp_path / "oled.png"
    settings = DisplaySettings(kind="emulator-png", output=str(png), scale=1, retry_s=0.1)
    opened: list[object] = []

    def opener(s: DisplaySettings):
        if len(opened) < 2:  # not there at start, nor at the first retry
            opened.append(None)
            raise OSError("display ssd1306: I2C device not found: /dev/i2c-1")
        display = open_display(s)
        opened.append(display)
        return display

    seen: list[tuple[str, ...]] = []
    parts = Parts(on_change=lambda p: seen.append(p.names))
    program = _Program()
    cfg = SimpleNamespace(display=settings)
    loop = _display_loop(cfg, program, parts=parts, opener=opener)
    try:
        assert seen[0] == ("display",)
        assert wait_for(lambda: png.exists() and "display" not in parts.names, WAIT_S)
        assert _same(png, program.model)
        # Lost later (unplugged): the device raises; a fresh one is opened.
        first = opened[-1]
        first.device.display = _raise_oserror
        png.unlink()
        program.model = DisplayModel(players=(PlayerFace("Ann", 200 * 10**9), PlayerFace("Bob", 480 * 10**9)))
        loop.wake()
        assert wait_for(lambda: png.exists() and len(opened) >= 4, WAIT_S)
        assert opened[-1] is not first
        assert _same(png, program.model)
    finally:
        loop.stop()
        loop.display.close()


def _raise_oserror(image):
    raise OSError("I2C write failed")


def test_the_display_loop_backs_off_while_a_display_stays_missing():
    from pegwatch.device.display.devices import AbsentDisplay
    from pegwatch.device.display.loop import DisplayLoop

    tries: list[int] = []
    now = [0]
    settings = DisplaySettings(kind="ssd1306")

    def reopen():
        tries.append(now[0])
        raise OSError("not there")

    program = _Program()
    loop = DisplayLoop(AbsentDisplay(settings, "not there"), program.display_model, retry_s=1.0,
                       max_retry_s=4.0, reopen=reopen, now_ns=lambda: now[0])
    for t in range(0, 20):
        now[0] = t * 10**9
        loop.step()
    # 1 s, then 2, then 4, 4, 4...: not every second for ever.
    assert [t // 10**9 for t in tries] == [1, 3, 7, 11, 15, 19]


# --- the camera comes and goes ------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 10**12

    def __call__(self) -> int:
        return self.now


def test_a_camera_that_fails_to_open_then_works_then_fails_is_followed(tmp_path):
    from pegwatch.simulation.desk import SimulatedDesk

    reader, scene = SimulatedDesk(seed=3).camera("invicta-12x4", fps=10)
    clock = _Clock()
    attempts: list[int] = []
    state = {"unplugged": False}

    class FlakyCamera:
        def read(self):
            if state["unplugged"]:
                raise CameraUnavailableError("Pi camera failed: camera gone")
            return scene.read()

    def opener():
        attempts.append(clock.now)
        if len(attempts) == 1:
            raise CameraUnavailableError("Pi camera 0 cannot be opened: no cameras available")
        return FlakyCamera()

    changes: list[tuple[bool, str]] = []
    worker = VisionWorker(
        PacedSource(ReopeningSource(opener, first_s=0.5, now_ns=clock), fps=10, now_ns=clock,
                    wait=lambda s: None),
        reader, submit=lambda *a: None, on_camera=lambda ok, problem: changes.append((ok, problem)),
    )
    assert worker.poll() is False and not worker.camera_ok
    assert "no cameras available" in changes[-1][1]
    clock.now += 600_000_000
    assert worker.poll() is True and worker.camera_ok and worker.frames_read == 1
    state["unplugged"] = True
    clock.now += 200_000_000
    assert worker.poll() is False and changes[-1] == (False, "camera: Pi camera failed: camera gone")
    state["unplugged"] = False
    clock.now += 600_000_000
    assert worker.poll() is True and worker.frames_read == 2
    assert [ok for ok, _ in changes] == [False, True, False, True]
    assert len(attempts) == 2  # opened once it could be; a failed read does not reopen it
    worker.stop()


def test_a_real_camera_without_calibration_is_not_read_and_the_display_says_set_up(tmp_path):
    cfg = SimpleNamespace(board="invicta-12x4", calibration=None, camera="picamera2",
                          vision=SimpleNamespace(fps=10.0))
    parts = Parts()
    assert _camera_worker(cfg, lambda *a: None, None, parts) is None
    assert parts.names == ("calibration",)
    model = DisplayModel(players=(PlayerFace("Ann", 1), PlayerFace("Bob", 2)))
    assert parts.overlay(model).message == Message("SET-UP: NO CAMERA CAL", Severity.WARNING)
    # An alarm of the table's own is not hidden by it.
    alarm = DisplayModel(players=model.players, message=Message("FLAG Ann", Severity.ALARM))
    assert parts.overlay(alarm).message == alarm.message
    # Missing buttons are an alarm: over a warning, not over an alarm.
    parts.missing("buttons", "no /dev/gpiochip0")
    warned = DisplayModel(players=model.players, message=Message("CHECK ROW 2", Severity.WARNING))
    assert parts.overlay(warned).message == Message("NO BUTTONS", Severity.ALARM)
    assert parts.overlay(alarm).message == alarm.message
    assert parts.status().startswith("table running; missing: calibration")
    parts.back("buttons")
    parts.back("calibration")
    assert parts.overlay(warned) == warned and parts.status() == "table running"


# --- the buttons' chip --------------------------------------------------------------------


class _Hardware:
    def __init__(self) -> None:
        self.turns: list[tuple[int | None, bool]] = []
        self.closed = False

    def show_turn(self, on_move, *, paused=False):
        self.turns.append((on_move, paused))

    def close(self):
        self.closed = True


def test_buttons_that_come_late_get_the_turn_and_are_released_at_the_end():
    slot = HardwareSlot()
    slot.show_turn(1)  # the clock runs before the GPIO chip answers
    tries: list[int] = []
    failures: list[BaseException | None] = []
    hardware = _Hardware()

    def attempt() -> bool:
        tries.append(1)
        if len(tries) < 3:
            raise OSError("no /dev/gpiochip0")
        return slot.connect(hardware)

    retry = RetryThread(attempt, backoff=Backoff(0.01, 0.02), name="test-gpio", on_failure=failures.append)
    retry.start()
    assert wait_for(lambda: slot.hardware is hardware, WAIT_S)
    retry.stop()
    assert len(tries) == 3 and len(failures) == 2
    assert hardware.turns == [(1, False)]
    slot.show_turn(0, paused=True)
    assert hardware.turns[-1] == (0, True)
    slot.close()
    assert hardware.closed
    late = _Hardware()
    assert slot.connect(late) is False and late.closed  # after the end: released at once


def test_backoff_doubles_to_its_cap():
    backoff = Backoff(0.5, 3.0)
    assert [backoff.next() for _ in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    backoff.reset()
    assert backoff.next() == 0.5
    assert np.isfinite(backoff.max_s)


def test_buttons_lost_later_are_let_go_and_opened_again_off_the_clocks_thread():
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    from pegwatch.device.hardware.gpio import TableHardware
    from pegwatch.device.hardware.pins import PinMap
    from pegwatch.device.table.service import PartKeeper

    factory = MockFactory(pin_class=MockPWMPin)
    seen: list[tuple[str, ...]] = []
    parts = Parts(on_change=lambda p: seen.append(p.names))
    slot = HardwareSlot()
    opened: list[TableHardware] = []
    fail_next = [1]

    def open_() -> TableHardware:
        if fail_next[0]:
            fail_next[0] -= 1
            raise OSError("lgpio: no /dev/gpiochip0")
        hardware = TableHardware(PinMap(), pin_factory=factory, watch=False)
        hardware.when_fault = keeper.lost
        opened.append(hardware)
        return hardware

    keeper = PartKeeper("buttons", open_, attach=slot.connect, detach=slot.detach, parts=parts,
                        backoff=Backoff(0.01, 0.05))
    try:
        keeper.start()
        assert seen[0] == ("buttons",)  # missing at start: the clock runs without them
        assert wait_for(lambda: slot.hardware is not None and "buttons" not in parts.names, WAIT_S)
        first = opened[0]
        slot.show_turn(0)
        assert first.led_states == ("on", "off")

        # The chip goes away: the next LED change fails. The caller (the main
        # loop) only hears that it is being dealt with; the retry thread does the rest.
        def gone(*args, **kwargs):
            raise OSError("lgpio: bad handle")

        first.leds[1].on = gone
        slot.show_turn(1)
        assert keeper.losses == 1 and ("buttons",) in seen[1:]
        assert wait_for(lambda: len(opened) == 2 and slot.hardware is opened[1], WAIT_S)
        assert first.is_closed and "buttons" not in parts.names
        assert opened[1].led_states == ("off", "on")  # the turn carried over to the new chip
    finally:
        keeper.stop()
        slot.close()
        factory.close()


def test_stop_signals_set_the_event_and_put_the_handlers_back():
    import threading

    from pegwatch.device.table.service import StopSignals

    stop = threading.Event()
    before = signal.getsignal(signal.SIGTERM)
    with StopSignals(stop) as signals:
        os.kill(os.getpid(), signal.SIGTERM)
        assert wait_for(stop.is_set, WAIT_S)
        assert signals.received == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is before
