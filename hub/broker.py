"""The hall's broker: Mosquitto's configuration with one user per table, and a local Mosquitto to run.

:func:`write_config` writes the three files a hall's Mosquitto needs
(``mosquitto.conf``, ``passwd``, ``acl``): no anonymous clients; one user per
table (``table-<id>``, :func:`table_user`) that may publish only under its own
``pegwatch/<tournament>/tables/<id>/`` (status, state, events, results,
evidence, acks) and read only its own ``commands``; and a ``hub`` user that
reads everything and writes commands. The passwords are stored in
Mosquitto's own PBKDF2-SHA512 format (what ``mosquitto_passwd`` writes),
so no Mosquitto tool is needed to write them. TLS is a setting
(:class:`TlsFiles`).

:class:`MosquittoBroker` runs ``/usr/sbin/mosquitto`` with such a
configuration on a free loopback port, for the tests, ``pegwatch demo
--hall`` and the benchmark: start, stop, kill and restart keep the port and
the persistence directory, as a real hall's broker keeps both across a
restart.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Final

from pegwatch.hub.wire import TOPIC_ROOT, Channel, check_id
from pegwatch.rules.errors import DeviceFault

__all__ = [
    "HUB_USER",
    "MOSQUITTO",
    "BrokerError",
    "MosquittoBroker",
    "TlsFiles",
    "ephemeral_range",
    "free_port",
    "hash_password",
    "table_user",
    "write_config",
]

logger = logging.getLogger(__name__)

MOSQUITTO: Final = "/usr/sbin/mosquitto"
HUB_USER: Final = "hub"
#: What a table may publish: everything of its own but commands.
TABLE_WRITES: Final = tuple(c for c in Channel if c is not Channel.COMMANDS)
_PBKDF2_ITERATIONS: Final = 101  # mosquitto_passwd's own count (format $7$)
#: Room for an evidence frame (512 KiB of JSON) and its topic.
MAX_PACKET_BYTES: Final = 1024 * 1024


class BrokerError(DeviceFault):
    """The local Mosquitto could not be started or did not answer; the message says why."""


@dataclass(frozen=True)
class TlsFiles:
    """A TLS listener: the CA that signed the broker's certificate, the certificate, its key."""

    cafile: Path
    certfile: Path
    keyfile: Path


def table_user(table: str) -> str:
    """The broker user of a table: ``table-<id>``."""
    return f"table-{check_id(table, 'table')}"


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    """``$7$101$<salt>$<hash>``: Mosquitto's PBKDF2-SHA512 entry, as ``mosquitto_passwd`` writes it."""
    salt = secrets.token_bytes(12) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha512", password.encode("utf-8"), salt, _PBKDF2_ITERATIONS)
    b64 = base64.b64encode
    return f"$7${_PBKDF2_ITERATIONS}${b64(salt).decode()}${b64(digest).decode()}"


def _acl(tables: Mapping[str, str], tournament: str) -> str:
    lines = [
        "# pegwatch hall ACL: a table publishes only under its own topics and reads only its commands.",
        f"user {HUB_USER}",
        f"topic read {TOPIC_ROOT}/#",
        f"topic write {TOPIC_ROOT}/{tournament}/tables/+/{Channel.COMMANDS.value}",
        "",
    ]
    for table in tables:
        base = f"{TOPIC_ROOT}/{tournament}/tables/{table}"
        lines.append(f"user {table_user(table)}")
        lines.extend(f"topic write {base}/{c.value}" for c in TABLE_WRITES)
        lines.append(f"topic read {base}/{Channel.COMMANDS.value}")
        lines.append("")
    return "\n".join(lines)


def write_config(
    directory: str | Path,
    *,
    tables: Mapping[str, str],
    hub_password: str,
    tournament: str | None = None,
    port: int = 1883,
    host: str | None = None,
    tls: TlsFiles | None = None,
    persistence_dir: str | Path | None = None,
    log_file: str | Path | None = None,
    run_as: str | None = None,
) -> Path:
    """Write ``mosquitto.conf``, ``passwd`` and ``acl`` into ``directory``; the conf's path.

    ``tables`` maps each table id to its password (user :func:`table_user`);
    ``tournament`` fixes the tournament in the ACL (any, by default); ``host``
    None listens on every interface; ``tls`` makes the listener TLS-only.
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    level = "+" if tournament is None else check_id(tournament, "tournament")
    for table in tables:
        check_id(table, "table")
    passwd = folder / "passwd"
    entries = [f"{HUB_USER}:{hash_password(hub_password)}"]
    entries.extend(f"{table_user(t)}:{hash_password(pw)}" for t, pw in tables.items())
    _write_private(passwd, "\n".join(entries) + "\n")
    acl = folder / "acl"
    _write_private(acl, _acl(tables, level))
    data = Path(persistence_dir) if persistence_dir is not None else folder / "data"
    data.mkdir(parents=True, exist_ok=True)
    lines = [
        "# pegwatch hall broker (written by pegwatch.hub.broker.write_config)",
        "per_listener_settings false",
        "allow_anonymous false",
        f"password_file {passwd.resolve()}",
        f"acl_file {acl.resolve()}",
        # Messages for the hub's persistent session wait through its restart.
        "persistence true",
        f"persistence_location {data.resolve()}/",
        "autosave_interval 2",
        "max_queued_messages 1000000",
        "max_inflight_messages 100",
        f"max_packet_size {MAX_PACKET_BYTES}",
        f"listener {port}" + ("" if host is None else f" {host}"),
    ]
    if tls is not None:
        lines += [f"cafile {tls.cafile}", f"certfile {tls.certfile}", f"keyfile {tls.keyfile}",
                  "tls_version tlsv1.2"]
    if log_file is not None:
        lines += [f"log_dest file {Path(log_file).resolve()}", "log_type error", "log_type warning",
                  "log_type notice", "log_type information"]
    if run_as is not None:
        lines.append(f"user {run_as}")
    conf = folder / "mosquitto.conf"
    conf.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _hand_over(run_as or "mosquitto", passwd, acl, data)
    return conf


def _hand_over(user: str, *paths: Path) -> None:
    """Started by root, Mosquitto reads its password file and ACL and writes its
    persistence as ``user`` (``mosquitto`` unless the config says): give them to it."""
    if os.geteuid() != 0 or user == "root":
        return
    import pwd

    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        return  # no such user here: Mosquitto will say so, and the admin chooses one
    for path in paths:
        os.chown(path, entry.pw_uid, entry.pw_gid)


def _write_private(path: Path, text: str) -> None:
    # Mosquitto 2.0 warns about (later versions refuse) password files others can read.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)
    os.chmod(path, 0o600)


#: Where the kernel says its ephemeral ports are (Linux); the usual range where it cannot.
EPHEMERAL_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")
#: The lowest port :func:`free_port` hands out (clear of the well-known and common service ports).
LOWEST_FREE_PORT = 20000


def ephemeral_range(path: Path = EPHEMERAL_RANGE_FILE) -> tuple[int, int]:
    """The kernel's range of ports for outgoing connections (first, last)."""
    try:
        low, high = (int(v) for v in path.read_text(encoding="ascii").split())
    except (OSError, ValueError):
        return 32768, 60999
    return low, high


def free_port(host: str = "127.0.0.1", *, ephemeral: tuple[int, int] | None = None) -> int:
    """A TCP port nothing listens on right now, outside the kernel's ephemeral range.

    A broker's port must stay free while it is stopped (:meth:`MosquittoBroker.stop`
    keeps the port for a restart). A port from the ephemeral range may meanwhile be
    taken by any outgoing connection, even by a table retrying the stopped broker
    (a connection to a port nothing listens on can land on itself), and the broker
    then cannot start again.
    """
    low, high = ephemeral if ephemeral is not None else ephemeral_range()
    candidates = [p for p in range(LOWEST_FREE_PORT, 65536) if not low <= p <= high]
    for port in secrets.SystemRandom().sample(candidates, min(len(candidates), 200)):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))  # every port outside the range is taken: any free one
        return int(s.getsockname()[1])


class MosquittoBroker:
    """A local Mosquitto on ``127.0.0.1:port`` with the hall's users and ACL.

    ``tables`` maps table ids to passwords (a fresh password each when given
    as a list of ids). The files live in ``directory`` (a temporary one by
    default, removed on :meth:`close`). :meth:`stop`, :meth:`kill` and
    :meth:`restart` keep the port and the persistence directory. With
    ``tls`` the listener speaks TLS only (:attr:`url` is ``mqtts://``).
    """

    def __init__(
        self,
        *,
        tables: Mapping[str, str] | list[str] | tuple[str, ...] = (),
        tournament: str | None = None,
        hub_password: str | None = None,
        directory: str | Path | None = None,
        port: int | None = None,
        executable: str = MOSQUITTO,
        tls: TlsFiles | None = None,
    ) -> None:
        if isinstance(tables, Mapping):
            self.passwords = dict(tables)
        else:
            self.passwords = {t: secrets.token_hex(8) for t in tables}
        self.hub_password = hub_password or secrets.token_hex(8)
        self.tournament = tournament
        self.tls = tls
        self.host = "127.0.0.1"
        self.port = port if port is not None else free_port(self.host)
        self._tmp = None if directory is not None else tempfile.mkdtemp(prefix="pegwatch-broker-")
        self.directory = Path(directory) if directory is not None else Path(self._tmp or ".")
        self.executable = shutil.which(executable) or executable
        self.log_file = self.directory / "mosquitto.log"
        self.conf = write_config(
            self.directory, tables=self.passwords, hub_password=self.hub_password,
            tournament=tournament, port=self.port, host=self.host, log_file=self.log_file, tls=tls,
            run_as="root" if os.geteuid() == 0 else None,
        )
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"{'mqtts' if self.tls is not None else 'mqtt'}://{self.host}:{self.port}"

    def password_file(self, user: str) -> Path:
        """A file holding ``user``'s password (what ``[hall] password_file`` names)."""
        password = self.hub_password if user == HUB_USER else self.passwords[user.removeprefix("table-")]
        path = self.directory / f"{user}.password"
        _write_private(path, password + "\n")
        return path

    def password(self, user: str) -> str:
        return self.hub_password if user == HUB_USER else self.passwords[user.removeprefix("table-")]

    # -- lifetime -------------------------------------------------------------------------

    @property
    def is_running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self, *, timeout: float = 10.0) -> MosquittoBroker:
        """Start Mosquitto and wait until it accepts connections."""
        if self.is_running:
            return self
        if not Path(self.executable).exists():
            raise BrokerError(f"{self.executable}: Mosquitto is not installed (apt-get install mosquitto)")
        self._process = subprocess.Popen(
            [self.executable, "-c", str(self.conf)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        self.wait_ready(timeout=timeout)
        logger.info("mosquitto started on %s (pid %d)", self.url, self._process.pid)
        return self

    def wait_ready(self, *, timeout: float = 10.0) -> None:
        """Return once the broker accepts TCP connections; BrokerError if it exits or never does."""
        deadline = time.monotonic() + timeout
        while True:
            process = self._process
            if process is None or process.poll() is not None:
                raise BrokerError(f"mosquitto on port {self.port} exited: {self._why()}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise BrokerError(f"mosquitto on port {self.port} did not answer in {timeout} s") from None
                time.sleep(0.02)

    def _why(self) -> str:
        err = b""
        if self._process is not None and self._process.stderr is not None and self._process.poll() is not None:
            err = self._process.stderr.read() or b""
        lines = err.decode("utf-8", "replace").strip().splitlines()
        if self.log_file.exists():
            # Mosquitto writes its reason to the log once it has read its config; stderr
            # may then hold only a warning (run as root).
            lines += self.log_file.read_text(encoding="utf-8", errors="replace").strip().splitlines()
        return " | ".join(lines[-3:]) or "no message"

    def stop(self, *, timeout: float = 10.0) -> None:
        """Stop gracefully (SIGTERM: Mosquitto saves its persistence file)."""
        self._end(signal.SIGTERM, timeout)

    def kill(self) -> None:
        """Stop at once (SIGKILL), as a power cut would."""
        self._end(signal.SIGKILL, 10.0)

    def restart(self, *, timeout: float = 10.0) -> None:
        self.stop()
        self.start(timeout=timeout)

    def _end(self, how: signal.Signals, timeout: float) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(how)
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stderr is not None:
            process.stderr.close()

    def close(self) -> None:
        self.stop()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)

    def __enter__(self) -> MosquittoBroker:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MosquittoBroker({self.url!r}, running={self.is_running})"
