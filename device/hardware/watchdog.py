"""systemd notification and watchdog, without libsystemd.

The unit (``systemd/pegwatch.service``) is ``Type=notify`` with
``WatchdogSec=``: the table program says ``READY=1`` once the clock runs,
then calls :meth:`Watchdog.tick` from its main loop on every pass. A tick
sends ``WATCHDOG=1`` at most every half ``WATCHDOG_USEC``; if the loop
hangs, the pings stop and systemd restarts the service, and the journal
brings the match back paused.

The pings come only from the loop, never from a thread of their own: a
thread would keep pinging while the loop is stuck. Off systemd (no
``$NOTIFY_SOCKET``) everything here is a no-op, so the same code runs on a
laptop.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Mapping

from pegwatch.device.lifetime import Closeable

logger = logging.getLogger(__name__)

__all__ = ["Watchdog", "notify"]


def _address(environ: Mapping[str, str]) -> str | None:
    path = environ.get("NOTIFY_SOCKET", "")
    if not path:
        return None
    if path.startswith("@"):
        # Abstract namespace: the leading '@' stands for a NUL byte.
        return "\0" + path[1:]
    if not path.startswith("/"):
        logger.warning("NOTIFY_SOCKET %r is neither a path nor abstract; ignored", path)
        return None
    return path


def _send(sock: socket.socket, address: str, state: str) -> bool:
    try:
        sock.sendto(state.encode("utf-8"), address)
    except OSError as exc:
        # Never let the service manager's socket take the table down.
        logger.warning("sd_notify %r failed: %s", state.split("\n", 1)[0], exc)
        return False
    return True


def notify(state: str, *, environ: Mapping[str, str] | None = None) -> bool:
    """Send ``state`` (e.g. ``"READY=1"``, ``"STATUS=game 1"``) to systemd.

    Returns ``True`` when sent, ``False`` off systemd or when sending failed
    (logged, never raised).
    """
    address = _address(os.environ if environ is None else environ)
    if address is None:
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
        return _send(sock, address, state)


class Watchdog(Closeable):
    """Keeps systemd's watchdog fed from the table's main loop.

    Reads ``NOTIFY_SOCKET``, ``WATCHDOG_USEC`` and ``WATCHDOG_PID`` from
    ``environ`` (default ``os.environ``). :attr:`is_enabled` is false off
    systemd, when the unit has no ``WatchdogSec=``, or when the watchdog is
    meant for another process. ``clock`` is injectable for tests.
    """

    def __init__(
        self,
        *,
        environ: Mapping[str, str] | None = None,
        clock: Callable[[], int] = time.monotonic_ns,
    ) -> None:
        env = dict(os.environ if environ is None else environ)
        self._clock = clock
        self._address = _address(env)
        self._sock: socket.socket | None = None
        self._last_ping_ns: int | None = None
        self.interval_ns: int | None = None
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        if pid and pid != str(os.getpid()):
            logger.debug("watchdog is for pid %s, not us", pid)
        elif usec:
            try:
                value = int(usec)
            except ValueError:
                value = 0
            if value > 0:
                # Half the timeout, as sd_watchdog_enabled(3) advises.
                self.interval_ns = value * 1000 // 2
            else:
                logger.warning("WATCHDOG_USEC=%r is not a positive number; watchdog off", usec)

    @property
    def is_connected(self) -> bool:
        """Whether there is a systemd notification socket to talk to."""
        return self._address is not None

    @property
    def is_enabled(self) -> bool:
        """Whether systemd expects watchdog pings from this process."""
        return self._address is not None and self.interval_ns is not None

    def _notify(self, state: str) -> bool:
        if self._address is None:
            return False
        if self._sock is None:
            self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
        return _send(self._sock, self._address, state)

    def ready(self, status: str | None = None) -> bool:
        """Tell systemd the service is up (``READY=1``), with an optional status line."""
        sent = self._notify("READY=1" + (f"\nSTATUS={status}" if status else ""))
        if sent:
            self._last_ping_ns = self._clock()
        return sent

    def status(self, text: str) -> bool:
        """Set the one-line status ``systemctl status pegwatch`` shows."""
        return self._notify(f"STATUS={text.splitlines()[0] if text else ''}")

    def stopping(self) -> bool:
        """Tell systemd the service is shutting down cleanly."""
        return self._notify("STOPPING=1")

    def ping(self) -> bool:
        """Send ``WATCHDOG=1`` now (if enabled)."""
        if not self.is_enabled:
            return False
        sent = self._notify("WATCHDOG=1")
        if sent:
            self._last_ping_ns = self._clock()
        return sent

    def tick(self) -> bool:
        """Call on every pass of the main loop; pings when half the timeout has passed."""
        if not self.is_enabled or self.interval_ns is None:
            return False
        now = self._clock()
        if self._last_ping_ns is not None and now - self._last_ping_ns < self.interval_ns:
            return False
        return self.ping()

    def close(self) -> None:
        """Close the socket (idempotent)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

