"""The hub's store: what the tables sent and what the arbiter sent them.

:class:`HallStore` is the interface the hub's service and page use; the
hall's one-machine store is :class:`SqliteHallStore` (one SQLite file in WAL
mode, every write made by one writer thread, reads from any thread). A
hall of many venues swaps it for PostgreSQL behind the same interface
(docs/hall.md, "Past one hall").

Events, results and evidence are stored by their id, once: a message the
broker delivers again (the table's outbox resends until acknowledged, the
broker redelivers to a hub that came back) is counted as a duplicate and
changes nothing. A table's status and state are kept as their latest,
stamped with the hub's own ``time.monotonic_ns()`` when it received them,
so the page can run a clock without a wall clock crossing the wire.
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Protocol, TypeVar

from pegwatch.rules.errors import BadInput, DeviceFault

__all__ = [
    "COMMAND_STATUSES",
    "HallStore",
    "HallStoreError",
    "SqliteHallStore",
    "StoredCommand",
    "StoredMessage",
    "TableLatest",
]

logger = logging.getLogger(__name__)

#: ``PRAGMA application_id`` of a hub store ("PgWh").
APPLICATION_ID: Final = 0x50675768
SCHEMA_VERSION: Final = 1
#: A command is "pending" until sent, "sent" until the table acknowledges it.
COMMAND_STATUSES: Final = ("pending", "sent", "applied", "refused", "duplicate")

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS tables (
    tbl          TEXT PRIMARY KEY,
    status       TEXT,
    status_rx_ns INTEGER,
    state        TEXT,
    state_rx_ns  INTEGER
);
CREATE TABLE IF NOT EXISTS messages (
    n       INTEGER PRIMARY KEY,
    kind    TEXT    NOT NULL,
    id      TEXT    NOT NULL,
    tbl     TEXT    NOT NULL,
    rx_ns   INTEGER NOT NULL,
    payload TEXT    NOT NULL,
    UNIQUE (kind, id)
);
CREATE INDEX IF NOT EXISTS messages_by_table ON messages (kind, tbl, n);
CREATE TABLE IF NOT EXISTS commands (
    id         TEXT PRIMARY KEY,
    tbl        TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    payload    TEXT    NOT NULL,
    by         TEXT    NOT NULL,
    status     TEXT    NOT NULL,
    sends      INTEGER NOT NULL DEFAULT 0,
    reason     TEXT,
    seq        INTEGER,
    created_ns INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS commands_by_table ON commands (tbl, status);
CREATE TABLE IF NOT EXISTS counters (
    name  TEXT PRIMARY KEY,
    count INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

#: What a message kind is stored as; each is unique by (kind, id).
MESSAGE_KINDS: Final = ("event", "result", "evidence")

T = TypeVar("T")


class HallStoreError(BadInput):
    """The store's file is not a hub store (or is damaged); the message names it."""


@dataclass(frozen=True)
class TableLatest:
    """A table's last status and state, each with the hub's receive time (monotonic ns)."""

    table: str
    status: Mapping[str, Any] | None
    status_rx_ns: int | None
    state: Mapping[str, Any] | None
    state_rx_ns: int | None


@dataclass(frozen=True)
class StoredMessage:
    kind: str
    id: str
    table: str
    rx_ns: int
    payload: Mapping[str, Any]


@dataclass(frozen=True)
class StoredCommand:
    id: str
    table: str
    kind: str
    payload: Mapping[str, Any]
    """The command as sent on the wire."""
    by: str
    status: str
    sends: int
    reason: str | None
    seq: int | None
    created_ns: int


class HallStore(Protocol):
    """What the hub keeps. Every method may be called from any thread."""

    def put_status(self, table: str, payload: Mapping[str, Any], rx_ns: int) -> None: ...
    def put_state(self, table: str, payload: Mapping[str, Any], rx_ns: int) -> None: ...
    def add_message(self, kind: str, msg_id: str, table: str, payload: Mapping[str, Any], rx_ns: int) -> bool:
        """Store an event, result or evidence once; False (and counted) when its id is known."""
        ...
    def add_message_later(self, kind: str, msg_id: str, table: str, payload: Mapping[str, Any],
                          rx_ns: int) -> Future[bool]:
        """:meth:`add_message` without waiting: its outcome once committed (with others)."""
        ...
    def latest(self) -> list[TableLatest]: ...
    def messages(self, kind: str, table: str | None = None, *, limit: int = 200) -> list[StoredMessage]:
        """The newest ``limit`` messages of a kind, oldest first."""
        ...
    def add_command(self, command: StoredCommand) -> None: ...
    def mark_sent(self, command_id: str) -> str | None:
        """Count a sending; the command's status after it ("sent", or its ack's if that came first)."""
        ...
    def ack_command(self, command_id: str, status: str, reason: str | None, seq: int | None) -> bool:
        """Record a table's ack; False when the command is unknown or already acknowledged."""
        ...
    def commands(self, table: str | None = None, *, unacked_only: bool = False) -> list[StoredCommand]: ...
    def count(self, name: str, n: int = 1) -> None: ...
    def counters(self) -> dict[str, int]: ...
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str) -> None: ...
    def close(self) -> None: ...


def _dumps(payload: Mapping[str, Any]) -> str:
    return json.dumps(dict(payload), separators=(",", ":"), ensure_ascii=False, sort_keys=True)


_STOP: Final = object()
_WAKE: Final = object()


class SqliteHallStore:
    """The hall's store in one SQLite file (WAL), written by one thread.

    Writes are queued to the writer thread, which commits whatever is
    queued in one transaction; a caller that needs the outcome (an id new or
    a duplicate) waits for its commit, so a message is on disk before the
    hub acknowledges it to the broker. A state, sent twice a second by every
    table, is not waited for, and of several states of one table queued at
    once only the last is written.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._local = threading.local()
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._pending_states: dict[str, tuple[Mapping[str, Any], int]] = {}
        self._states_lock = threading.Lock()
        self._closed = False
        self._readers: list[sqlite3.Connection] = []
        self._writer_conn = self._connect()
        self._check_and_create(self._writer_conn)
        self._thread = threading.Thread(target=self._write_loop, name="hub-store-writer", daemon=True)
        self._thread.start()

    # -- connections ---------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: a commit survives the hub being killed; only a power cut may lose the last ones.
            conn.execute("PRAGMA synchronous=NORMAL")
        except sqlite3.DatabaseError as exc:
            raise HallStoreError(f"{self.path}: not a hub store ({exc})") from None
        except sqlite3.Error as exc:
            raise DeviceFault(f"{self.path}: cannot open the hub store ({exc})") from None
        return conn

    def _check_and_create(self, conn: sqlite3.Connection) -> None:
        try:
            app = conn.execute("PRAGMA application_id").fetchone()[0]
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if app != APPLICATION_ID and (app != 0 or tables):
                raise HallStoreError(f"{self.path}: not a hub store (another application's SQLite file)")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise HallStoreError(f"{self.path}: a hub store of a newer schema ({version})")
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            raise HallStoreError(f"{self.path}: not a hub store ({exc})") from None

    def _reader(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
            with self._states_lock:
                self._readers.append(conn)
        return conn

    # -- the writer thread ---------------------------------------------------

    def _write_loop(self) -> None:
        conn = self._writer_conn
        while True:
            item = self._queue.get()
            batch = [item]
            while True:  # whatever else is queued goes into the same transaction
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(b is _STOP for b in batch)
            jobs = [b for b in batch if b is not _STOP and b is not _WAKE]
            with self._states_lock:
                states, self._pending_states = self._pending_states, {}
            self._run_batch(conn, jobs, states)
            if stop:
                conn.close()
                return

    def _run_batch(self, conn: sqlite3.Connection, jobs: list[object],
                   states: dict[str, tuple[Mapping[str, Any], int]]) -> None:
        outcomes: list[tuple[Future[Any], Any, BaseException | None]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            for table, (payload, rx_ns) in states.items():
                conn.execute(
                    "INSERT INTO tables (tbl, state, state_rx_ns) VALUES (?, ?, ?) "
                    "ON CONFLICT (tbl) DO UPDATE SET state = excluded.state, state_rx_ns = excluded.state_rx_ns",
                    (table, _dumps(payload), rx_ns),
                )
            for job in jobs:
                assert isinstance(job, tuple)
                fn, future = job
                conn.execute("SAVEPOINT job")
                try:
                    value = fn(conn)
                except Exception as exc:  # one bad write must not undo the batch
                    conn.execute("ROLLBACK TO job")
                    outcomes.append((future, None, exc))
                else:
                    outcomes.append((future, value, None))
                conn.execute("RELEASE job")
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            logger.error("hub store %s: a write failed: %s", self.path, exc)
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            fault = DeviceFault(f"{self.path}: the hub store cannot write ({exc})")
            outcomes = [(f, None, fault) for f, _, _ in outcomes]
            outcomes += [(job[1], None, fault) for job in jobs[len(outcomes):] if isinstance(job, tuple)]
        for future, value, error in outcomes:
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(value)

    def _write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return self._write_later(fn).result()

    def _write_later(self, fn: Callable[[sqlite3.Connection], T]) -> Future[T]:
        if self._closed:
            raise DeviceFault(f"{self.path}: the hub store is closed")
        future: Future[T] = Future()
        self._queue.put((fn, future))
        return future

    # -- tables --------------------------------------------------------------

    def put_status(self, table: str, payload: Mapping[str, Any], rx_ns: int) -> None:
        text = _dumps(payload)
        self._write(lambda c: c.execute(
            "INSERT INTO tables (tbl, status, status_rx_ns) VALUES (?, ?, ?) "
            "ON CONFLICT (tbl) DO UPDATE SET status = excluded.status, status_rx_ns = excluded.status_rx_ns",
            (table, text, rx_ns),
        ))

    def put_state(self, table: str, payload: Mapping[str, Any], rx_ns: int) -> None:
        # Written by the writer thread, and only the last of a burst: a state's text is made there.
        with self._states_lock:
            first = not self._pending_states
            self._pending_states[table] = (payload, rx_ns)
        if first and not self._closed:
            self._queue.put(_WAKE)  # the writer commits the states with whatever else is queued

    def latest(self) -> list[TableLatest]:
        self.flush()
        rows = self._reader().execute(
            "SELECT tbl, status, status_rx_ns, state, state_rx_ns FROM tables ORDER BY tbl"
        ).fetchall()
        return [
            TableLatest(t, json.loads(s) if s else None, srx, json.loads(st) if st else None, strx)
            for t, s, srx, st, strx in rows
        ]

    # -- events, results, evidence ------------------------------------------

    def add_message(self, kind: str, msg_id: str, table: str, payload: Mapping[str, Any], rx_ns: int) -> bool:
        return self.add_message_later(kind, msg_id, table, payload, rx_ns).result()

    def add_message_later(self, kind: str, msg_id: str, table: str, payload: Mapping[str, Any],
                          rx_ns: int) -> Future[bool]:
        if kind not in MESSAGE_KINDS:
            raise ValueError(f"message kind {kind!r} is not one of {MESSAGE_KINDS}")
        text = _dumps(payload)

        def insert(c: sqlite3.Connection) -> bool:
            cur = c.execute(
                "INSERT OR IGNORE INTO messages (kind, id, tbl, rx_ns, payload) VALUES (?, ?, ?, ?, ?)",
                (kind, msg_id, table, rx_ns, text),
            )
            if cur.rowcount == 0:
                _bump(c, f"duplicate_{kind}s", 1)
                return False
            return True

        return self._write_later(insert)

    def messages(self, kind: str, table: str | None = None, *, limit: int = 200) -> list[StoredMessage]:
        sql = "SELECT kind, id, tbl, rx_ns, payload FROM messages WHERE kind = ?"
        args: list[Any] = [kind]
        if table is not None:
            sql += " AND tbl = ?"
            args.append(table)
        sql += " ORDER BY n DESC LIMIT ?"
        args.append(limit)
        rows = self._reader().execute(sql, args).fetchall()
        return [StoredMessage(k, i, t, rx, json.loads(p)) for k, i, t, rx, p in reversed(rows)]

    def message_count(self, kind: str) -> int:
        return int(self._reader().execute("SELECT count(*) FROM messages WHERE kind = ?", (kind,)).fetchone()[0])

    # -- commands ------------------------------------------------------------

    def add_command(self, command: StoredCommand) -> None:
        self._write(lambda c: c.execute(
            "INSERT INTO commands (id, tbl, kind, payload, by, status, sends, reason, seq, created_ns) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (command.id, command.table, command.kind, _dumps(command.payload), command.by, command.status,
             command.sends, command.reason, command.seq, command.created_ns),
        ))

    def mark_sent(self, command_id: str) -> str | None:
        def mark(c: sqlite3.Connection) -> str | None:
            c.execute(
                "UPDATE commands SET sends = sends + 1, status = CASE status WHEN 'pending' THEN 'sent' "
                "ELSE status END WHERE id = ?", (command_id,),
            )
            row = c.execute("SELECT status FROM commands WHERE id = ?", (command_id,)).fetchone()
            return None if row is None else str(row[0])

        return self._write(mark)

    def ack_command(self, command_id: str, status: str, reason: str | None, seq: int | None) -> bool:
        if status not in COMMAND_STATUSES[2:]:
            raise ValueError(f"ack status {status!r}")

        def ack(c: sqlite3.Connection) -> bool:
            cur = c.execute(
                "UPDATE commands SET status = ?, reason = ?, seq = ? WHERE id = ? AND status IN ('pending', 'sent')",
                (status, reason, seq, command_id),
            )
            if cur.rowcount == 0:
                _bump(c, "stray_acks", 1)
                return False
            return True

        return self._write(ack)

    def commands(self, table: str | None = None, *, unacked_only: bool = False) -> list[StoredCommand]:
        self.flush()
        sql = "SELECT id, tbl, kind, payload, by, status, sends, reason, seq, created_ns FROM commands WHERE 1"
        args: list[Any] = []
        if table is not None:
            sql += " AND tbl = ?"
            args.append(table)
        if unacked_only:
            sql += " AND status IN ('pending', 'sent')"
        rows = self._reader().execute(sql + " ORDER BY rowid", args).fetchall()
        return [StoredCommand(i, t, k, json.loads(p), b, s, n, r, q, cr) for i, t, k, p, b, s, n, r, q, cr in rows]

    # -- counters and meta ---------------------------------------------------

    def count(self, name: str, n: int = 1) -> None:
        self._write(lambda c: _bump(c, name, n))

    def counters(self) -> dict[str, int]:
        self.flush()
        return dict(self._reader().execute("SELECT name, count FROM counters ORDER BY name").fetchall())

    def get_meta(self, key: str) -> str | None:
        row = self._reader().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._write(lambda c: c.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        ))

    # -- lifetime ------------------------------------------------------------

    def flush(self) -> None:
        """Wait until every write queued so far (states too) is committed."""
        if not self._closed:
            self._write(lambda c: None)

    def close(self) -> None:
        if self._closed:
            return
        self.flush()
        self._closed = True
        self._queue.put(_STOP)
        self._thread.join()
        with self._states_lock:
            readers, self._readers = self._readers, []
        for conn in readers:
            conn.close()

    def __enter__(self) -> SqliteHallStore:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _bump(c: sqlite3.Connection, name: str, n: int) -> None:
    c.execute(
        "INSERT INTO counters (name, count) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET count = count + ?",
        (name, n, n),
    )
