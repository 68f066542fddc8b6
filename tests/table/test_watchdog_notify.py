"""sd_notify and the watchdog, against a real AF_UNIX datagram socket."""

from __future__ import annotations

import os
import socket
import uuid

import pytest

from pegwatch.device.hardware.watchdog import Watchdog, notify


@pytest.fixture
def listener(tmp_path):
    path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(2.0)
    yield str(path), sock
    sock.close()


def received(sock: socket.socket) -> list[str]:
    messages = []
    sock.setblocking(False)
    try:
        while True:
            messages.append(sock.recv(4096).decode())
    except BlockingIOError:
        pass
    finally:
        sock.settimeout(2.0)
    return messages


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000_000_000

    def __call__(self) -> int:
        return self.now


def test_notify_sends_one_datagram(listener):
    path, sock = listener
    assert notify("READY=1\nSTATUS=game 1", environ={"NOTIFY_SOCKET": path})
    assert sock.recv(4096) == b"READY=1\nSTATUS=game 1"


def test_notify_abstract_namespace():
    name = f"pegwatch-test-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(2.0)
    try:
        assert notify("READY=1", environ={"NOTIFY_SOCKET": "@" + name})
        assert sock.recv(64) == b"READY=1"
    finally:
        sock.close()


def test_off_systemd_everything_is_a_quiet_no_op():
    assert notify("READY=1", environ={}) is False
    with Watchdog(environ={}) as dog:
        assert not dog.is_connected and not dog.is_enabled
        assert dog.ready() is False
        assert dog.tick() is False
        assert dog.ping() is False


def test_a_vanished_socket_is_logged_not_raised(tmp_path, caplog):
    gone = str(tmp_path / "gone.sock")
    assert notify("READY=1", environ={"NOTIFY_SOCKET": gone}) is False
    assert "sd_notify 'READY=1' failed" in caplog.text
    dog = Watchdog(environ={"NOTIFY_SOCKET": gone, "WATCHDOG_USEC": "1000000"})
    assert dog.tick() is False
    dog.close()


def test_watchdog_pings_at_half_the_timeout(listener):
    path, sock = listener
    clock = FakeClock()
    env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "10000000", "WATCHDOG_PID": str(os.getpid())}
    with Watchdog(environ=env, clock=clock) as dog:
        assert dog.is_enabled
        assert dog.interval_ns == 5_000_000_000
        assert dog.ready("clock running")
        assert sock.recv(4096) == b"READY=1\nSTATUS=clock running"
        # The main loop spins fast; pings go out every 5 s of its clock.
        sent = []
        for _ in range(100):
            clock.now += 200_000_000  # 0.2 s per pass, 20 s in all
            sent.append(dog.tick())
        assert sum(sent) == 4
        assert received(sock) == ["WATCHDOG=1"] * 4
        assert dog.status("game 2, row 5\nignored")
        assert dog.stopping()
        assert received(sock) == ["STATUS=game 2, row 5", "STOPPING=1"]


def test_first_tick_pings_at_once_without_ready(listener):
    path, sock = listener
    dog = Watchdog(environ={"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "4000000"}, clock=FakeClock())
    assert dog.tick()
    assert not dog.tick()
    assert sock.recv(64) == b"WATCHDOG=1"
    dog.close()
    dog.close()


@pytest.mark.parametrize(
    "env",
    [
        {"WATCHDOG_USEC": "10000000", "WATCHDOG_PID": "1"},  # meant for another process
        {"WATCHDOG_USEC": "0"},
        {"WATCHDOG_USEC": "soon"},
        {},  # the unit has no WatchdogSec=
    ],
)
def test_watchdog_disabled_cases_still_notify(listener, env):
    path, sock = listener
    dog = Watchdog(environ={"NOTIFY_SOCKET": path, **env}, clock=FakeClock())
    assert dog.is_connected and not dog.is_enabled
    assert dog.tick() is False
    assert dog.ready()
    assert sock.recv(64) == b"READY=1"
    dog.close()
