"""The table's journal: every event in SQLite before it is acted on.

A :class:`Journal` is one SQLite file in WAL mode with ``synchronous=FULL``:
when :meth:`Journal.append` returns, the event is on the disk and survives a
power cut or ``kill -9``. Events carry the ``time.monotonic_ns()`` stamp of
the moment they happened, the kernel's boot id (monotonic stamps are only
comparable within one boot) and the session that wrote them (one per
process that appended). The wall time is stored for people reading the
journal, never used for timing.

:func:`timeline` maps the stamps of every boot and session onto one
continuous timeline with the outages removed (see ``docs/journal.md``).

When the disk is full, :meth:`Journal.append` raises
:class:`JournalFullError`; a :class:`JournalWriter` keeps such events in
memory, raises an alarm, and writes them in order once space returns, so
that the clock never waits for the disk.

Evidence for disputes (seed 004 §4): :meth:`Journal.store_evidence` keeps
the JPEG of the frame used for a confirmed row and the reading, in a table
of its own.
"""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import Final, TypeVar

from pegwatch.device.lifetime import Closeable
from pegwatch.rules.errors import BadInput, DeviceFault, PegwatchError

logger = logging.getLogger(__name__)

__all__ = [
    "BOOT_ID_PATH",
    "PRUNED_KIND",
    "PRUNED_NOTE",
    "Evidence",
    "Journal",
    "JournalError",
    "JournalEvent",
    "JournalFullError",
    "JournalStorageError",
    "JournalWriter",
    "PendingEvent",
    "Timeline",
    "current_boot_id",
    "segment_starts",
    "timeline",
]

#: Where Linux keeps the id of the current boot.
BOOT_ID_PATH: Final = Path("/proc/sys/kernel/random/boot_id")

#: ``PRAGMA application_id`` of a pegwatch journal ("PgWj").
APPLICATION_ID: Final = 0x5067576A
#: ``PRAGMA user_version``: the schema this module writes.
SCHEMA_VERSION: Final = 1

#: The kind of the event that records evidence images evicted under the size cap.
PRUNED_KIND: Final = "evidence_pruned"
#: What a dispute tool says of an evicted image.
PRUNED_NOTE: Final = "image pruned at max_mb"

_KIND_RE: Final = re.compile(r"[a-z][a-z0-9_.\-]{0,63}")
_JPEG_MAGIC: Final = b"\xff\xd8\xff"

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


class JournalError(PegwatchError):
    """The journal cannot be opened, read or written; the message says why and where."""


class BadJournal(JournalError, BadInput):
    """The file is not a usable pegwatch journal, or an event cannot be journaled."""


class JournalStorageError(JournalError, DeviceFault):
    """Writing failed for a reason of the storage (full disk, I/O error, read-only file).

    The event was not written; the caller may keep it and retry
    (:class:`JournalWriter` does).
    """


class JournalFullError(JournalStorageError):
    """The disk (or the journal's size cap) is full: SQLite reported SQLITE_FULL."""


def current_boot_id(path: Path = BOOT_ID_PATH) -> str:
    """The kernel's id of this boot, or ``"unknown"`` where there is none (not Linux)."""
    try:
        return path.read_text(encoding="ascii").strip() or "unknown"
    except OSError:
        return "unknown"


def _freeze(value: object) -> object:
    """Read-only views of decoded JSON, so a journaled payload cannot be edited in place."""
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: object) -> object:
    """The inverse of :func:`_freeze`, for re-encoding."""
    if isinstance(value, Mapping):
        return {str(k): _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_thaw(v) for v in value]
    return value


def _encode(what: str, value: object) -> str:
    try:
        return json.dumps(_thaw(value), sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise BadJournal(f"{what} cannot be journaled: {exc}") from None


@dataclass(frozen=True)
class JournalEvent:
    """One journaled event.

    ``seq`` counts from 1 without gaps; ``at_ns`` is the ``time.monotonic_ns()``
    stamp of the event in boot ``boot_id``; ``session`` numbers the processes
    that appended (a restart starts a new one); ``wall_ns`` is the wall time
    of writing, for information only.
    """

    seq: int
    kind: str
    at_ns: int
    boot_id: str
    payload: Mapping[str, object]
    session: int = 0
    wall_ns: int = 0

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict of the event (payload included)."""
        return {
            "seq": self.seq,
            "kind": self.kind,
            "at_ns": self.at_ns,
            "boot_id": self.boot_id,
            "session": self.session,
            "wall_ns": self.wall_ns,
            "payload": _thaw(self.payload),
        }


@dataclass(frozen=True)
class Evidence:
    """The frame and reading behind one confirmed row, kept for disputes."""

    event_seq: int
    game: int
    row: int
    image: bytes = field(repr=False)
    reading: Mapping[str, object]
    #: The image was evicted to keep the journal under ``[journal] max_mb``
    #: (``image`` is then empty; the reading stays). See :data:`PRUNED_NOTE`.
    pruned: bool = False

    @property
    def basename(self) -> str:
        """The file name stem used by :meth:`Journal.export_evidence`."""
        return f"game{self.game}-row{self.row:02d}-seq{self.event_seq}"


def _check_stamp(at_ns: object) -> int:
    if isinstance(at_ns, bool) or not isinstance(at_ns, int) or at_ns < 0:
        raise BadJournal(
            f"at_ns: expected a time.monotonic_ns() stamp (an int >= 0), got {at_ns!r}"
        )
    return at_ns


def _check_kind(kind: object) -> str:
    if not isinstance(kind, str) or not _KIND_RE.fullmatch(kind):
        raise BadJournal(
            f"event kind {kind!r}: expected lower-case letters, digits, '_', '.' or '-', "
            "starting with a letter (at most 64)"
        )
    return kind


class Journal(Closeable):
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
        if not tables:
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

    def set_max_bytes(self, max_bytes: int | None) -> None:
        """Cap the database at about ``max_bytes`` (``None``: no cap beyond the disk's)."""
        with self._lock:
            self._check_open()
            self._max_bytes = max_bytes
            page_size = int(self._db.execute("PRAGMA page_size").fetchone()[0])
            # SQLite's own ceiling when uncapped.
            pages = 4294967294 if max_bytes is None else max(1, max_bytes // page_size)
            self._db.execute(f"PRAGMA max_page_count={int(pages)}")

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
        return JournalEvent(
            seq=seq,
            kind=kind,
            at_ns=at_ns,
            boot_id=self._boot_id,
            payload=_freeze(json.loads(text)),  # type: ignore[arg-type]
            session=session,
            wall_ns=wall_ns,
        )

    def events(
        self, *, since: int = 0, kinds: Iterable[str] | None = None
    ) -> Iterator[JournalEvent]:
        """The events with ``seq > since``, in order (only ``kinds`` if given)."""
        wanted = None if kinds is None else frozenset(kinds)
        last = since
        while True:
            with self._lock:
                self._check_open()
                rows = self._db.execute(
                    "SELECT seq, kind, at_ns, boot_id, session, wall_ns, payload FROM events "
                    "WHERE seq > ? ORDER BY seq LIMIT 512",
                    (last,),
                ).fetchall()
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
                    payload=_freeze(payload),  # type: ignore[arg-type]
                    session=session,
                    wall_ns=wall_ns,
                )

    @property
    def last_seq(self) -> int:
        """The sequence number of the last event (0 when empty)."""
        with self._lock:
            self._check_open()
            return int(self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0])

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
        return MappingProxyType({key: _freeze(json.loads(value)) for key, value in rows})

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

    # -- evidence ---------------------------------------------------------------

    def store_evidence(
        self,
        *,
        event_seq: int,
        game: int,
        row: int,
        image: bytes,
        reading: Mapping[str, object],
    ) -> None:
        """Keep the JPEG ``image`` and ``reading`` behind the row confirmed by event ``event_seq``.

        Row 0 is the secret. A row may collect several pieces of evidence (a
        re-read after the arbiter's check); :meth:`evidence` returns the latest.
        """
        where = f"evidence for game {game} row {row}"
        for name, number, least in (("event_seq", event_seq, 1), ("game", game, 1), ("row", row, 0)):
            if isinstance(number, bool) or not isinstance(number, int) or number < least:
                raise BadJournal(f"{where}: {name} must be an int >= {least}, got {number!r}")
        if not isinstance(image, bytes | bytearray | memoryview):
            raise BadJournal(f"{where}: image must be JPEG bytes, got {type(image).__name__}")
        blob = bytes(image)
        if not blob.startswith(_JPEG_MAGIC):
            raise BadJournal(f"{where}: image is not a JPEG (it must start with FF D8 FF)")
        if not isinstance(reading, Mapping):
            raise BadJournal(f"{where}: reading must be a mapping")
        text = _encode(f"{where}: reading", reading)
        with self._lock:
            self._check_open()
            known = self._db.execute("SELECT 1 FROM events WHERE seq = ?", (event_seq,)).fetchone()
            if known is None:
                raise BadJournal(f"{where}: no event {event_seq} in {self.path}")
            with self._transaction(f"store {where}"):
                self._db.execute(
                    "INSERT INTO evidence(event_seq, game, row, image, reading) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (event_seq, game, row, blob, text),
                )

    def _evidence_rows(self, sql: str, args: tuple[object, ...]) -> list[Evidence]:
        with self._lock:
            self._check_open()
            rows = self._db.execute(sql, args).fetchall()
        return [
            Evidence(
                event_seq=seq,
                game=game,
                row=row,
                image=bytes(image),
                reading=_freeze(json.loads(reading)),  # type: ignore[arg-type]
                pruned=not image,  # a stored JPEG is never empty: evicted
            )
            for seq, game, row, image, reading in rows
        ]

    def evidence(self, game: int, row: int) -> Evidence | None:
        """The latest evidence stored for ``row`` of ``game``, or ``None``."""
        found = self._evidence_rows(
            "SELECT event_seq, game, row, image, reading FROM evidence "
            "WHERE game = ? AND row = ? ORDER BY id DESC LIMIT 1",
            (game, row),
        )
        return found[0] if found else None

    def all_evidence(self, *, game: int | None = None) -> list[Evidence]:
        """Every piece of evidence (of one ``game`` if given), oldest first."""
        if game is None:
            return self._evidence_rows(
                "SELECT event_seq, game, row, image, reading FROM evidence ORDER BY id", ()
            )
        return self._evidence_rows(
            "SELECT event_seq, game, row, image, reading FROM evidence WHERE game = ? ORDER BY id",
            (game,),
        )

    def export_evidence(self, directory: str | Path, *, game: int | None = None) -> list[Path]:
        """Write each piece of evidence as ``gameG-rowRR-seqS.jpg`` plus ``.json``; return the JPEGs."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for item in self.all_evidence(game=game):
            jpeg = out / f"{item.basename}.jpg"
            record: dict[str, object] = {
                "event_seq": item.event_seq,
                "game": item.game,
                "row": item.row,
                "reading": _thaw(item.reading),
            }
            if item.pruned:
                # No picture to write: say why rather than leave a silent gap.
                record["image"] = None
                record["pruned"] = PRUNED_NOTE
            else:
                jpeg.write_bytes(item.image)
            side = out / f"{item.basename}.json"
            side.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
            written.append(side if item.pruned else jpeg)
        return written

    # -- the size cap: pruning old evidence ---------------------------------------

    @property
    def max_bytes(self) -> int | None:
        """The size cap given at open or by :meth:`set_max_bytes` (``None``: none)."""
        return getattr(self, "_max_bytes", None)

    @property
    def used_bytes(self) -> int:
        """Bytes in use inside the database: its pages less the free ones.

        Pruned images leave free pages that new writes reuse, so this, not
        the file's size, is what the cap is measured against.
        """
        with self._lock:
            self._check_open()
            db = self._db
            pages = int(db.execute("PRAGMA page_count").fetchone()[0])
            free = int(db.execute("PRAGMA freelist_count").fetchone()[0])
            return (pages - free) * int(db.execute("PRAGMA page_size").fetchone()[0])

    def exported_games(self) -> frozenset[int]:
        """The games ``pegwatch export`` has written out (meta ``exported``)."""
        raw = self.meta.get("exported")
        games = raw.get("games", ()) if isinstance(raw, Mapping) else ()
        if not isinstance(games, tuple | list):
            return frozenset()
        return frozenset(g for g in games if isinstance(g, int) and not isinstance(g, bool))

    def mark_exported(self, games: Iterable[int]) -> None:
        """Record that ``games`` were exported: their images are evicted first."""
        done = sorted(self.exported_games() | {int(g) for g in games})
        self.set_meta("exported", {"games": done, "wall_ns": time.time_ns()})

    def prunable_bytes(self, games: Iterable[int]) -> int:
        """The bytes of the images of ``games`` that are still stored."""
        wanted = sorted({int(g) for g in games})
        if not wanted:
            return 0
        marks = ",".join("?" * len(wanted))
        with self._lock:
            self._check_open()
            row = self._db.execute(
                f"SELECT COALESCE(SUM(length(image)), 0) FROM evidence WHERE game IN ({marks})",
                wanted,
            ).fetchone()
        return int(row[0])

    def prune_evidence(self, need_bytes: int, *, games: Iterable[int], at_ns: int) -> int:
        """Evict the oldest evidence images of ``games`` until ``need_bytes`` are freed.

        ``games`` are the finished games: the table never evicts an event or
        the evidence of a game in play. Images of games already exported go
        first, then the others, oldest first. In **one transaction** each
        image is replaced by an empty one (the row, its reading and its
        event stay: :attr:`Evidence.pruned`) and an ``evidence_pruned`` event
        lists what went, so the journal says "image pruned at max_mb" where
        a picture is missing. ``at_ns`` stamps that event (never before this
        session's last event). Returns the image bytes freed (0: nothing
        left to evict).
        """
        _check_stamp(at_ns)
        wanted = sorted({int(g) for g in games})
        if need_bytes <= 0 or not wanted:
            return 0
        exported = sorted(self.exported_games())
        marks = ",".join("?" * len(wanted))
        first = ",".join("?" * len(exported)) or "NULL"
        with self._lock:
            self._check_open()
            rows = self._db.execute(
                "SELECT id, event_seq, game, row, length(image) FROM evidence "
                f"WHERE length(image) > 0 AND game IN ({marks}) "
                f"ORDER BY game IN ({first}) DESC, id",
                (*wanted, *exported),
            ).fetchall()
            chosen: list[tuple[int, int, int, int, int]] = []
            freed = 0
            for item in rows:
                if freed >= need_bytes:
                    break
                chosen.append(item)
                freed += int(item[4])
            if not chosen:
                return 0
            payload = {
                "reason": PRUNED_NOTE,
                "max_bytes": self.max_bytes,
                "bytes": freed,
                "evidence": [
                    {"event_seq": seq, "game": game, "row": row, "bytes": size}
                    for _, seq, game, row, size in chosen
                ],
            }
            text = _encode("evidence_pruned event payload", payload)
            with self._transaction("prune evidence images"):
                db = self._db
                session = self._session
                if session is None:
                    session = (db.execute("SELECT MAX(session) FROM events").fetchone()[0] or 0) + 1
                last = db.execute(
                    "SELECT MAX(at_ns) FROM events WHERE session = ? AND boot_id = ?",
                    (session, self._boot_id),
                ).fetchone()[0]
                stamp = max(at_ns, int(last or 0))
                # The images go first: the event below then fits in the pages they free.
                db.executemany(
                    "UPDATE evidence SET image = X'' WHERE id = ?", [(item[0],) for item in chosen]
                )
                db.execute(
                    "INSERT INTO events(kind, at_ns, boot_id, session, wall_ns, payload) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (PRUNED_KIND, stamp, self._boot_id, session, time.time_ns(), text),
                )
            self._session = session
        logger.warning(
            "journal %s: %d evidence image(s) of finished games pruned (%d bytes) to stay under "
            "max_mb", self.path, len(chosen), freed,
        )
        return freed

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


# -- the continuous timeline ----------------------------------------------------


class Timeline:
    """Maps monotonic stamps of several boots and sessions onto one continuous time.

    Within a *segment* (consecutive events of one boot and one session, with
    stamps that do not go back) continuous time advances exactly as the
    stamps do. At the start of a new segment (a restart of the program or of
    the Pi) the outage is removed: the first event of the segment gets the
    continuous time of the last event before it. The table program treats
    that instant as "the clock comes back paused at the last journaled
    instant".

    Feed events in ``seq`` order with :meth:`add`; :meth:`at` maps a live
    stamp of the current segment (for example "now") without journaling it.
    """

    def __init__(self) -> None:
        self._key: tuple[str, int] | None = None
        self._last_at_ns = 0
        self._offset = 0
        self._last_continuous = 0
        self._segments = 0

    def _starts_segment(self, event: JournalEvent) -> bool:
        return (
            self._key != (event.boot_id, event.session)
            # Defensive: a stamp that goes back cannot be of the same clock.
            or event.at_ns < self._last_at_ns
        )

    def add(self, event: JournalEvent) -> int:
        """The continuous time of ``event``, in ns; events must come in order."""
        if self._key is None:
            # The first segment keeps its own stamps: continuous == at_ns.
            self._offset = 0
            self._segments = 1
        elif self._starts_segment(event):
            self._offset = self._last_continuous - event.at_ns
            self._segments += 1
        self._key = (event.boot_id, event.session)
        self._last_at_ns = event.at_ns
        self._last_continuous = event.at_ns + self._offset
        return self._last_continuous

    def at(self, at_ns: int) -> int:
        """The continuous time of a stamp of the current segment (never before the last event)."""
        if self._key is None:
            return at_ns
        return max(self._last_continuous, at_ns + self._offset)

    def starts_segment(self, event: JournalEvent) -> bool:
        """Whether ``event`` (not yet added) would begin a new segment after a restart."""
        return self._key is not None and self._starts_segment(event)

    @property
    def last_ns(self) -> int:
        """The continuous time of the last event added (0 before any)."""
        return self._last_continuous

    @property
    def segments(self) -> int:
        """How many segments (runs between restarts) have been seen."""
        return self._segments


def timeline(events: Iterable[JournalEvent]) -> list[tuple[JournalEvent, int]]:
    """Pair each event with its continuous time in ns (see :class:`Timeline`)."""
    line = Timeline()
    return [(event, line.add(event)) for event in events]


def segment_starts(events: Iterable[JournalEvent]) -> list[int]:
    """The ``seq`` of each event that begins a new segment after a restart (not the first)."""
    line = Timeline()
    starts = []
    for event in events:
        if line.starts_segment(event):
            starts.append(event.seq)
        line.add(event)
    return starts


# -- riding out a full disk ---------------------------------------------------------


@dataclass(frozen=True)
class PendingEvent:
    """An event held in memory because the journal could not take it yet."""

    token: int
    kind: str
    at_ns: int
    payload: Mapping[str, object]


@dataclass
class _HeldEvent:
    pending: PendingEvent


@dataclass
class _HeldEvidence:
    target: JournalEvent | PendingEvent
    game: int
    row: int
    image: bytes
    reading: Mapping[str, object]


_T = TypeVar("_T")

#: Room kept free under a size cap for the events that follow a write.
CAP_HEADROOM_BYTES: Final = 64 * 1024


def _cause(alarm: str) -> str:
    return alarm.split(":", 1)[0]


class JournalWriter:
    """Appends to a :class:`Journal`, holding events in memory while the disk is full.

    :meth:`append` never raises for a storage failure: the event is kept in
    order (:attr:`pending` counts them), :attr:`alarm` says what is wrong in
    one line, and every later call (or :meth:`flush`) tries again, oldest
    first. Bad input (kind, stamp, payload) still raises
    :class:`JournalError` at once. Evidence images held in memory are capped
    at ``max_held_image_bytes`` (the oldest are dropped beyond it, counted in
    :attr:`dropped_evidence`); events are never dropped.

    ``when_alarm`` is called when the alarm is raised or its cause changes
    (with the text) and when it clears (with ``None``); :attr:`alarm` always
    has the current count.

    Under a size cap (``Journal(max_bytes=...)``, ``[journal] max_mb``) a
    write that would pass it first evicts the oldest evidence images of the
    games ``prunable()`` names (the finished ones; see
    :meth:`Journal.prune_evidence`); only when nothing is left to evict does
    the cap raise the disk-full alarm. :attr:`fill` is the part of the cap
    that pruning cannot free, and :attr:`warning` a display line from
    ``warn_fraction`` of it on.
    """

    def __init__(
        self,
        journal: Journal,
        *,
        max_held_image_bytes: int = 32 * 1024 * 1024,
        when_alarm: Callable[[str | None], None] | None = None,
        prunable: Callable[[], Iterable[int]] | None = None,
        warn_fraction: float = 0.8,
    ) -> None:
        self.journal = journal
        self.when_alarm = when_alarm
        self.prunable = prunable
        self.warn_fraction = warn_fraction
        self._fill: float | None = None
        self._max_held_image_bytes = max_held_image_bytes
        self._held: deque[_HeldEvent | _HeldEvidence] = deque()
        self._seq_of: dict[int, int] = {}  # pending token -> seq once written
        self._tokens = 0
        self._error: JournalError | None = None
        self._alarm: str | None = None
        self._lock = threading.RLock()
        self.dropped_evidence = 0
        #: Image bytes this writer evicted to stay under the size cap.
        self.pruned_bytes = 0
        self.refresh_fill()

    @property
    def pending(self) -> int:
        """How many events are held in memory, not yet journaled."""
        with self._lock:
            return sum(isinstance(item, _HeldEvent) for item in self._held)

    @property
    def alarm(self) -> str | None:
        """One line for the display while anything is held, else ``None``."""
        return self._alarm

    @property
    def short_alarm(self) -> str | None:
        """The alarm in at most 21 characters, for one line of a 128-pixel display."""
        if self._alarm is None:
            return None
        what = "DISK FULL" if self._alarm.startswith("DISK FULL") else "JOURNAL ERR"
        return f"{what} {self.pending} held"[:21]

    def _update_alarm(self) -> None:
        alarm = None
        if self._held and self._error is not None:
            held = self.pending
            what = "DISK FULL" if isinstance(self._error, JournalFullError) else "JOURNAL FAILING"
            alarm = f"{what}: {held} event{'s' if held != 1 else ''} held in memory ({self._error})"
        if alarm == self._alarm:
            return
        before, self._alarm = self._alarm, alarm
        # Raising, clearing and a change of cause are news (logged, and
        # passed to when_alarm); the held count going up is detail.
        if alarm is None:
            logger.warning("journal: held events written, alarm cleared")
        elif before is None or _cause(before) != _cause(alarm):
            logger.error("journal: %s", alarm)
        else:
            logger.debug("journal: %s", alarm)
            return
        if self.when_alarm is not None:
            self.when_alarm(alarm)

    def append(
        self, kind: str, payload: Mapping[str, object], *, at_ns: int
    ) -> JournalEvent | PendingEvent:
        """Journal the event, or hold it if the journal cannot take it now."""
        _check_kind(kind)
        _check_stamp(at_ns)
        # Validate the payload now: a bad payload must fail loudly, not sit in the backlog.
        frozen: Mapping[str, object] = _freeze(  # type: ignore[assignment]
            json.loads(_encode(f"{kind} event payload", payload))
        )
        with self._lock:
            if self.flush():
                try:
                    return self._write(
                        lambda: self.journal.append(kind, payload, at_ns=at_ns), 0, at_ns
                    )
                except JournalStorageError as exc:
                    self._error = exc
            self._tokens += 1
            pending = PendingEvent(token=self._tokens, kind=kind, at_ns=at_ns, payload=frozen)
            self._held.append(_HeldEvent(pending))
            self._update_alarm()
            return pending

    def store_evidence(
        self,
        event: JournalEvent | PendingEvent,
        *,
        game: int,
        row: int,
        image: bytes,
        reading: Mapping[str, object],
    ) -> bool:
        """Store evidence for ``event`` now, or hold it; ``True`` when written."""
        with self._lock:
            if isinstance(event, JournalEvent) and self.flush():
                try:
                    self._write(
                        lambda: self.journal.store_evidence(
                            event_seq=event.seq, game=game, row=row, image=image, reading=reading
                        ),
                        len(image),
                        event.at_ns,
                    )
                    return True
                except JournalStorageError as exc:
                    self._error = exc
            self._held.append(_HeldEvidence(event, game, row, bytes(image), reading))
            self._cap_images()
            self._update_alarm()
            return False

    def _cap_images(self) -> None:
        held = [item for item in self._held if isinstance(item, _HeldEvidence)]
        total = sum(len(item.image) for item in held)
        for item in held:
            if total <= self._max_held_image_bytes:
                break
            self._held.remove(item)
            total -= len(item.image)
            self.dropped_evidence += 1
            logger.error("journal: dropped held evidence for game %d row %d", item.game, item.row)

    def flush(self) -> bool:
        """Write what is held, oldest first; ``True`` when nothing is left held."""
        with self._lock:
            while self._held:
                item = self._held[0]
                try:
                    if isinstance(item, _HeldEvent):
                        p = item.pending
                        event = self._write(
                            partial(self.journal.append, p.kind, p.payload, at_ns=p.at_ns),
                            0,
                            p.at_ns,
                        )
                        self._seq_of[p.token] = event.seq
                    else:
                        held = item
                        target = held.target
                        seq = (
                            target.seq
                            if isinstance(target, JournalEvent)
                            else self._seq_of[target.token]
                        )
                        self._write(
                            partial(
                                self.journal.store_evidence,
                                event_seq=seq,
                                game=held.game,
                                row=held.row,
                                image=held.image,
                                reading=held.reading,
                            ),
                            len(held.image),
                            target.at_ns,
                        )
                except JournalStorageError as exc:
                    self._error = exc
                    self._update_alarm()
                    return False
                self._held.popleft()
            self._error = None
            self._update_alarm()
            return True

    # -- the size cap -----------------------------------------------------------------

    def _write(self, write: Callable[[], _T], size: int, at_ns: int) -> _T:
        """One write under the cap: make room first if it would pass it, and
        once more if SQLite still finds the cap full."""
        cap = self.journal.max_bytes
        if cap is not None:
            over = self.journal.used_bytes + size + CAP_HEADROOM_BYTES - cap
            if over > 0:
                self._make_room(over, at_ns)
        try:
            result = write()
        except JournalFullError:
            if cap is None or not self._make_room(size + CAP_HEADROOM_BYTES, at_ns):
                raise
            result = write()
        if cap is not None:
            self.refresh_fill()
        return result

    def _make_room(self, need: int, at_ns: int) -> bool:
        games = list(self.prunable()) if self.prunable is not None else []
        if not games:
            return False
        try:
            freed = self.journal.prune_evidence(need, games=games, at_ns=at_ns)
        except JournalStorageError as exc:
            logger.error("journal: could not prune evidence: %s", exc)
            return False
        self.pruned_bytes += freed
        return freed > 0

    def refresh_fill(self) -> float | None:
        """Measure :attr:`fill` again (after every write under a cap; cheap)."""
        with self._lock:
            cap = self.journal.max_bytes
            if cap is None or self.journal.closed:
                self._fill = None
                return None
            used = self.journal.used_bytes
            if used >= self.warn_fraction * cap and self.prunable is not None:
                # What pruning could still free does not count against the cap.
                used -= self.journal.prunable_bytes(self.prunable())
            self._fill = max(0.0, used / cap)
            return self._fill

    @property
    def fill(self) -> float | None:
        """The part of the cap in use that pruning cannot free (``None``: no cap)."""
        return self._fill

    @property
    def warning(self) -> str | None:
        """``JOURNAL 85% FULL`` from ``warn_fraction`` of the cap on, else ``None``."""
        fill = self._fill
        if fill is None or fill < self.warn_fraction:
            return None
        return f"JOURNAL {min(99, int(fill * 100))}% FULL"

    def written_seq(self, event: JournalEvent | PendingEvent) -> int | None:
        """The ``seq`` an event got once journaled (``None`` while it is held)."""
        if isinstance(event, JournalEvent):
            return event.seq
        with self._lock:
            return self._seq_of.get(event.token)
