"""The journal's store: one SQLite file, opened safely, with its events and meta.

:class:`Journal` opens (and if need be creates) the file, checks that it is
an undamaged pegwatch journal, and appends events one durable transaction
at a time. Its evidence and the size cap come from
:class:`~pegwatch.device.table.journal.evidence.EvidenceStore`.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import Final

from pegwatch.device.lifetime import Closeable
from pegwatch.device.table.journal.evidence import EvidenceStore
from pegwatch.device.table.journal.records import (
    BadJournal,
    JournalError,
    JournalEvent,
    JournalFullError,
    JournalStorageError,
    _check_kind,
    _check_stamp,
    _encode,
    current_boot_id,
    freeze,
)

# The journal's one logger, whichever of its modules speaks (as before the split).
logger = logging.getLogger("pegwatch.device.table.journal")

#: ``PRAGMA application_id`` of a pegwatch journal ("PgWj").
APPLICATION_ID: Final = 0x5067576A
#: ``PRAGMA user_version``: the schema this module writes.
SCHEMA_VERSION: Final = 1

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS events (
    seq      INTEGER PRIMARY KEY,
    kind     TEXT    NOT NULL,
    at_ns    INTEGER NOT NULL,
    boot_id  TEXT    NOT NULL,
    session  INTEGER NOT NULL,
    wall_ns  INTEGER NOT NULL,
    payload  TEXT    NOT NULL
);
CREATE TABLE IF NOT EXISTS evidence (
    id         INTEGER PRIMARY KEY,
    event_seq  INTEGER NOT NULL REFERENCES events(seq),
    game       INTEGER NOT NULL,
    row        INTEGER NOT NULL,
    image      BLOB    NOT NULL,
    reading    TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS evidence_by_row ON evidence (game, row, id);
CREATE TABLE IF NOT EXISTS meta (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);
"""

#: The columns of each table, as _SCHEMA makes them.
_COLUMNS: Final = {
    "events": ("seq", "kind", "at_ns", "boot_id", "session", "wall_ns", "payload"),
    "evidence": ("id", "event_seq", "game", "row", "image", "reading"),
    "meta": ("key", "value"),
}


class Journal(EvidenceStore, Closeable):
    """A durable, append-only log of the table's events in one SQLite file.

    ``Journal(path)`` creates the file (and its directory) unless
    ``create=False``, checks its integrity and readies it for appending.
    ``max_bytes`` caps the size of the database (SQLite's
    ``max_page_count``): appends beyond it raise :class:`JournalFullError`
    exactly as a full disk does. Safe to share between threads.

    Use as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        create: bool = True,
        max_bytes: int | None = None,
        boot_id: str | None = None,
    ) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._boot_id = boot_id if boot_id is not None else current_boot_id()
        self._session: int | None = None
        # The journal has one writer, its table program: once it has appended, the last
        # seq is the one it wrote (read without a query: the hall reads it twice a second).
        self._last_seq: int | None = None
        self._last_seq_of: dict[str, int] | None = None  # per kind, read once on first ask
        self._closed = False
        if not self.path.exists():
            if not create:
                raise BadJournal(f"{self.path}: no journal there")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise BadJournal(
                    f"{self.path}: cannot create its directory: {exc.strerror or exc}"
                ) from None
        elif self.path.is_dir():
            raise BadJournal(f"{self.path}: is a directory, not a journal file")
        try:
            # Autocommit mode: every transaction below is explicit.
            self._db = sqlite3.connect(
                str(self.path), isolation_level=None, check_same_thread=False, timeout=5.0
            )
        except sqlite3.Error as exc:
            raise BadJournal(f"{self.path}: cannot open: {exc}") from None
        shown = self.path

        def text(data: bytes) -> str:
            # Text a damaged file turned into bytes that are not UTF-8 is a
            # damaged journal, whichever query meets it first.
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError:
                raise BadJournal(f"{shown}: damaged journal: text that is not UTF-8") from None

        self._db.text_factory = text
        try:
            self._prepare()
            self.set_max_bytes(max_bytes)
        except sqlite3.Error as exc:
            self._db.close()
            raise BadJournal(f"{self.path}: not a usable pegwatch journal: {exc}") from None
        except UnicodeDecodeError:
            # SQLite's own message quoting a damaged schema that is not UTF-8.
            self._db.close()
            raise BadJournal(f"{self.path}: damaged journal: a schema that is not UTF-8") from None
        except JournalError:
            self._db.close()
            raise

    # -- opening -----------------------------------------------------------------

    def _prepare(self) -> None:
        db = self._db
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and app_id != APPLICATION_ID:
            raise BadJournal(f"{self.path}: an SQLite file, but not a pegwatch journal")
        if version > SCHEMA_VERSION:
            raise BadJournal(
                f"{self.path}: written by a newer pegwatch (schema {version}, "
                f"this one reads up to {SCHEMA_VERSION})"
            )
        mode = db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise BadJournal(f"{self.path}: SQLite refused WAL mode (got {mode!r})")
        # FULL: the WAL is synced at every commit, so a returned append
        # survives a power cut, not just a crash of the process.
        db.execute("PRAGMA synchronous=FULL")
        db.execute("PRAGMA foreign_keys=ON")
        check = [r[0] for r in db.execute("PRAGMA integrity_check")]
        if check != ["ok"]:
            raise BadJournal(f"{self.path}: damaged journal: {'; '.join(map(str, check[:3]))}")
        if tables:
            self._check_columns()
        else:
            with self._transaction("create the journal"):
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute(f"PRAGMA application_id={APPLICATION_ID}")
                db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
                db.execute(
                    # OR IGNORE: another process may have created it meanwhile.
                    "INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?), (?, ?)",
                    (
                        "match_id",
                        json.dumps(uuid.uuid4().hex),
                        "created_wall_ns",
                        json.dumps(time.time_ns()),
                    ),
                )
            logger.info("created journal %s", self.path)

    class _Tx:
        def __init__(self, journal: Journal, what: str) -> None:
            self.journal = journal
            self.what = what

        def __enter__(self) -> None:
            try:
                self.journal._db.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                # Locked by another writer past the timeout, or an I/O error.
                raise self.journal._storage_error(self.what, exc) from None

        def __exit__(
            self,
            exc_type: type[BaseException] | None,
            exc: BaseException | None,
            tb: TracebackType | None,
        ) -> None:
            db = self.journal._db
            if exc is None:
                try:
                    db.execute("COMMIT")
                    return
                except sqlite3.Error as commit_exc:
                    exc = commit_exc
            if db.in_transaction:
                try:
                    db.execute("ROLLBACK")
                except sqlite3.Error:
                    logger.warning("rollback failed on %s", self.journal.path)
            if isinstance(exc, sqlite3.Error):
                raise self.journal._storage_error(self.what, exc) from None

    def _transaction(self, what: str) -> Journal._Tx:
        return Journal._Tx(self, what)

    def _storage_error(self, what: str, exc: sqlite3.Error) -> JournalError:
        code = getattr(exc, "sqlite_errorcode", None)
        if code == sqlite3.SQLITE_FULL:
            return JournalFullError(
                f"{self.path}: disk full, could not {what}; free space (or raise the "
                "journal's size cap) and the held events will be written"
            )
        if isinstance(exc, sqlite3.OperationalError):
            return JournalStorageError(f"{self.path}: could not {what}: {exc}")
        return JournalError(f"{self.path}: could not {what}: {exc}")

    def _check_open(self) -> None:
        if self._closed:
            raise BadJournal(f"{self.path}: journal is closed")

    # -- settings ---------------------------------------------------------------

    @property
    def boot_id(self) -> str:
        """The boot id this journal stamps on new events."""
        return self._boot_id

    @property
    def size_bytes(self) -> int:
        """The database's current size in bytes (pages in use, WAL included)."""
        with self._lock:
            self._check_open()
            pages = int(self._db.execute("PRAGMA page_count").fetchone()[0])
            return pages * int(self._db.execute("PRAGMA page_size").fetchone()[0])

    # -- events -----------------------------------------------------------------

    def append(self, kind: str, payload: Mapping[str, object], *, at_ns: int) -> JournalEvent:
        """Write one event durably and return it with its sequence number.

        ``at_ns`` is the ``time.monotonic_ns()`` stamp taken when the event
        happened (not now). Raises :class:`JournalFullError` when the disk is
        full, :class:`JournalStorageError` on other storage failures (nothing
        is written in either case) and :class:`JournalError` for a bad kind,
        stamp or payload.
        """
        kind = _check_kind(kind)
        at_ns = _check_stamp(at_ns)
        if not isinstance(payload, Mapping):
            raise BadJournal(
                f"{kind} event: payload must be a mapping, got {type(payload).__name__}"
            )
        text = _encode(f"{kind} event payload", payload)
        wall_ns = time.time_ns()
        with self._lock:
            self._check_open()
            with self._transaction(f"journal a {kind} event"):
                if self._session is None:
                    last = self._db.execute("SELECT MAX(session) FROM events").fetchone()[0]
                    session = (last or 0) + 1
                else:
                    session = self._session
                cur = self._db.execute(
                    "INSERT INTO events(kind, at_ns, boot_id, session, wall_ns, payload) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (kind, at_ns, self._boot_id, session, wall_ns, text),
                )
                seq = cur.lastrowid
            self._session = session
        assert seq is not None
        self._last_seq = seq
        if self._last_seq_of is not None:
            self._last_seq_of[kind] = seq
        return JournalEvent(
            seq=seq,
            kind=kind,
            at_ns=at_ns,
            boot_id=self._boot_id,
            payload=freeze(json.loads(text)),  # type: ignore[arg-type]
            session=session,
            wall_ns=wall_ns,
        )

    def _check_columns(self) -> None:
        """Every table and column the journal reads is there (a damaged schema
        that SQLite's own check passes must not fail later, mid-replay)."""
        for table, wanted in _COLUMNS.items():
            have = [r[1] for r in self._db.execute(f"PRAGMA table_info({table})")]
            if have != list(wanted):
                shown = ", ".join(have) if have else "no such table"
                raise BadJournal(f"{self.path}: damaged journal: table {table} has {shown}")

    def events(
        self, *, since: int = 0, kinds: Iterable[str] | None = None
    ) -> Iterator[JournalEvent]:
        """The events with ``seq > since``, in order (only ``kinds`` if given)."""
        wanted = None if kinds is None else frozenset(kinds)
        last = since
        while True:
            with self._lock:
                self._check_open()
                try:
                    rows = self._db.execute(
                        "SELECT seq, kind, at_ns, boot_id, session, wall_ns, payload FROM events "
                        "WHERE seq > ? ORDER BY seq LIMIT 512",
                        (last,),
                    ).fetchall()
                except sqlite3.DatabaseError as exc:
                    raise BadJournal(f"{self.path}: damaged journal: {exc}") from None
            if not rows:
                return
            for seq, kind, at_ns, boot_id, session, wall_ns, text in rows:
                last = seq
                if wanted is not None and kind not in wanted:
                    continue
                try:
                    payload = json.loads(text)
                except ValueError:
                    raise BadJournal(f"{self.path}: event {seq}: payload is not JSON") from None
                yield JournalEvent(
                    seq=seq,
                    kind=kind,
                    at_ns=at_ns,
                    boot_id=boot_id,
                    payload=freeze(payload),  # type: ignore[arg-type]
                    session=session,
                    wall_ns=wall_ns,
                )

    @property
    def last_seq(self) -> int:
        """The sequence number of the last event (0 when empty)."""
        with self._lock:
            self._check_open()
            if self._last_seq is not None:
                return self._last_seq
            return int(self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0])

    def last_seq_except(self, kinds: Iterable[str]) -> int:
        """The sequence number of the last event of a kind not in ``kinds`` (0 if none)."""
        with self._lock:
            self._check_open()
            if self._last_seq_of is None:
                self._last_seq_of = {str(k): int(s) for k, s in self._db.execute(
                    "SELECT kind, MAX(seq) FROM events GROUP BY kind")}
            skipped = frozenset(kinds)
            return max((s for k, s in self._last_seq_of.items() if k not in skipped), default=0)

    @property
    def session(self) -> int | None:
        """The session number of this process's events (``None`` before the first append)."""
        return self._session

    # -- meta -------------------------------------------------------------------

    @property
    def meta(self) -> Mapping[str, object]:
        """A read-only snapshot of the journal's metadata (``match_id``, ``config``, ...)."""
        with self._lock:
            self._check_open()
            rows = self._db.execute("SELECT key, value FROM meta ORDER BY key").fetchall()
        return MappingProxyType({key: freeze(json.loads(value)) for key, value in rows})

    @property
    def match_id(self) -> str:
        """The random id given to the match when the journal was created."""
        return str(self.meta.get("match_id", ""))

    def set_meta(self, key: str, value: object) -> None:
        """Durably set one metadata entry to a JSON-able value (e.g. ``"config"``)."""
        if not isinstance(key, str) or not key:
            raise BadJournal(f"meta key must be a non-empty string, got {key!r}")
        text = _encode(f"meta {key!r}", value)
        with self._lock:
            self._check_open()
            with self._transaction(f"set meta {key!r}"):
                self._db.execute(
                    "INSERT INTO meta(key, value) VALUES (?, ?) "
                    "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (key, text),
                )

    # -- lifetime ---------------------------------------------------------------

    def close(self) -> None:
        """Close the file (idempotent). Everything appended is already durable."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._db.close()

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def __repr__(self) -> str:
        return f"Journal({str(self.path)!r})"
