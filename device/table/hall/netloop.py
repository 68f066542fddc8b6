"""paho's network loop run by a thread of ours: one ``select`` over the broker's socket and a wake pipe.

:class:`NetLoop` is what ``loop_start`` would do in a thread of paho's,
done where the caller's thread waits anyway, with paho's documented
external-loop calls (``socket``, ``want_write``, ``loop_read``,
``loop_write``, ``loop_misc``) and :meth:`~paho.mqtt.client.Client.reconnect`.
Its :meth:`wake` (any thread) ends the wait at once. A lost connection is
tried again after a delay that doubles from ``reconnect_s[0]`` to
``reconnect_s[1]`` and starts again after a connection the broker accepted
(:meth:`accepted`), as paho's own loop does.
"""

from __future__ import annotations

import contextlib
import logging
import select
import socket
import time
from typing import Any

__all__ = ["NetLoop"]

logger = logging.getLogger(__name__)


class NetLoop:
    def __init__(self, client: Any, *, reconnect_s: tuple[float, float], broker: str = "the hall broker") -> None:
        self.client = client
        self.broker = broker
        self._failure: str | None = None  # the last connection failure said, said once
        self.reconnect_s = reconnect_s
        self._delay: float | None = None
        self._next_connect = 0.0  # the first connection is tried at once
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._woken = False

    def wake(self) -> None:
        """End the current or next wait (any thread; a byte on the pipe, at most one waiting)."""
        if self._woken:
            return
        self._woken = True
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    def accepted(self) -> None:
        """The broker accepted the connection: the next loss is tried again after the least delay."""
        self._delay = None
        self._failure = None

    def run_once(self, timeout: float) -> None:
        """Wait up to ``timeout`` s for the network or a wake, and handle what came
        (paho calls the client's callbacks here); connect when a try is due."""
        client = self.client
        sock = client.socket()
        if sock is None:
            now = time.monotonic()
            if now >= self._next_connect:
                self._connect()
            else:
                self._wait([], [], min(timeout, self._next_connect - now))
            return
        pending = sock.pending() if hasattr(sock, "pending") else 0  # TLS keeps decrypted bytes
        readable, writable = self._wait([sock], [sock] if client.want_write() else [],
                                        0.0 if pending else timeout)
        if (sock in readable or pending) and (client.loop_read() != 0 or client.socket() is None):
            self._lost()
            return
        if sock in writable and client.loop_write() != 0:
            self._lost()
            return
        if client.loop_misc() != 0:  # the keepalive: a ping, or a broker that stopped answering
            self._lost()

    def _wait(self, rlist: list[Any], wlist: list[Any], timeout: float) -> tuple[list[Any], list[Any]]:
        try:
            readable, writable, _ = select.select([*rlist, self._wake_r], wlist, [], max(0.0, timeout))
        except (OSError, ValueError, TypeError):  # the socket closed under us: paho's next call says so
            return [], []
        if self._wake_r in readable:
            with contextlib.suppress(OSError):
                while self._wake_r.recv(4096):
                    pass
            # After the pipe is empty: a wake from now on writes a new byte. One between the
            # two is not lost: the caller does its round right after this wait.
            self._woken = False
        return readable, writable

    def _connect(self) -> None:
        try:
            self.client.reconnect()
        except (OSError, ValueError) as exc:  # refused, unreachable, a TLS failure: tried again later
            if str(exc) != self._failure:  # one line per cause, not one per try
                logger.warning("cannot reach %s (%s); trying again, the outbox keeps what is unsent",
                               self.broker, exc)
            self._failure = str(exc)
            self._lost()

    def _lost(self) -> None:
        low, high = self.reconnect_s
        self._delay = low if self._delay is None else min(self._delay * 2, high)
        self._next_connect = time.monotonic() + self._delay

    def close(self) -> None:
        self._wake_r.close()
        self._wake_w.close()
