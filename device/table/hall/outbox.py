"""The hall's outbox: the messages of the journal's events, in the journal's own file, until the broker has them.

An event is journaled first (by the table program, as always); the outbox
then reads it from the journal (:meth:`Outbox.fill`), turns it into its
messages and keeps them in the table ``hall_outbox`` of the same SQLite
file, in journal order; the publisher sends them, and a message is marked
sent only on the broker's acknowledgement (its PUBACK). A broker or network
outage of any length loses nothing: the messages wait in the file and are
sent in order when it comes back; a restart of the table program finds the
unsent ones where they were and sends them. The broker may see a message
twice (sent, then the connection lost before the PUBACK); the hub keeps
each id once.

The outbox has a connection of its own (WAL: reading never blocks the
table's appends), used by one thread, the publisher's. Its writes are
synced lazily (``synchronous=NORMAL``): everything in it can be made again
from the journal, which is synced at every append, and the cursor (the last
journal event read) is written in the same transaction as its messages.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pegwatch.device.lifetime import Closeable
from pegwatch.device.table.journal import JournalEvent
from pegwatch.hub.wire import Channel

__all__ = ["Outbox", "OutboxItem"]

logger = logging.getLogger(__name__)

_SCHEMA: Final = """
CREATE TABLE IF NOT EXISTS hall_outbox (
    id       INTEGER PRIMARY KEY AUTOINCREMENT,
    seq      INTEGER NOT NULL,
    channel  TEXT    NOT NULL,
    payload  BLOB    NOT NULL,
    sent_ns  INTEGER,
    UNIQUE (seq, channel)
);
CREATE INDEX IF NOT EXISTS hall_outbox_unsent ON hall_outbox (id) WHERE sent_ns IS NULL;
CREATE TABLE IF NOT EXISTS hall_cursor (
    name  TEXT PRIMARY KEY,
    seq   INTEGER NOT NULL
);
"""
#: Sent messages kept for a look afterwards; older ones are deleted (their pages reused).
KEEP_SENT: Final = 500
#: Under a journal size cap, the share of it past which the outbox takes no more.
OUTBOX_SHARE: Final = 0.9

#: A journal event's messages, in the order they are published.
Build = Callable[[JournalEvent], list[tuple[Channel, bytes]]]


@dataclass(frozen=True)
class OutboxItem:
    id: int
    seq: int
    channel: Channel
    payload: bytes


class Outbox(Closeable):
    """The ``hall_outbox`` table of the journal at ``path`` (created on first use)."""

    def __init__(self, path: str | Path, *, max_bytes: int | None = None,
                 journal_seq: Callable[[], int] | None = None) -> None:
        self.path = Path(path)
        #: The journal's last seq as its writer knows it (no query): with it, a round
        #: with nothing new asks the file nothing.
        self.journal_seq = journal_seq
        self._read_up_to = -1  # the cursor as of the last fill (-1: not known yet)
        self._db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False,
                                   timeout=10.0)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(_SCHEMA)
        if max_bytes is not None:
            # Under [journal] max_mb the outbox stops short of the cap: a hall
            # that waits must never make the table's own journal full.
            page_size = int(self._db.execute("PRAGMA page_size").fetchone()[0])
            self._db.execute(f"PRAGMA max_page_count={max(1, int(max_bytes * OUTBOX_SHARE) // page_size)}")
        self._full_logged = False
        self._version: object = None
        self._more = False
        self._closed = False
        # The publisher's thread uses it; a drain or a test looks from another.
        self._lock = threading.RLock()

    @property
    def cursor(self) -> int:
        """The seq of the last journal event turned into messages."""
        with self._lock:
            row = self._db.execute("SELECT seq FROM hall_cursor WHERE name = 'journal'").fetchone()
        return int(row[0]) if row else 0

    def caught_up(self) -> bool:
        """Every journaled event is in the outbox, and every message in it sent."""
        with self._lock:
            last = int(self._db.execute("SELECT COALESCE(MAX(seq), 0) FROM events").fetchone()[0])
            return self.cursor >= last and self.counts()[1] == 0

    def fill(self, build: Build, *, limit: int = 512) -> int:
        """Read the journal's events after the cursor (up to ``limit``), queue their messages.

        Returns how many events were read. An event ``build`` fails on is
        logged and skipped: one bad event must not hold the hall back.
        """
        if self.journal_seq is not None and not self._more and self.journal_seq() <= self._read_up_to:
            return 0
        with self._lock:
            # Another connection's commit (the table's journal) changes data_version:
            # when it has not changed and the last read was not cut short, nothing is new.
            version = self._db.execute("PRAGMA data_version").fetchone()[0]
            if version == self._version and not self._more:
                return 0
            self._version = version
            cursor = self.cursor
            rows = self._db.execute(
                "SELECT seq, kind, at_ns, boot_id, session, wall_ns, payload FROM events WHERE seq > ? "
                "ORDER BY seq LIMIT ?", (cursor, limit),
            ).fetchall()
            self._more = len(rows) >= limit
            if not rows:
                self._read_up_to = cursor
                return 0
            queued: list[tuple[int, str, bytes]] = []
            for seq, kind, at_ns, boot_id, session, wall_ns, text in rows:
                try:
                    event = JournalEvent(seq=seq, kind=kind, at_ns=at_ns, boot_id=boot_id, payload=json.loads(text),
                                         session=session, wall_ns=wall_ns)
                    for channel, payload in build(event):
                        queued.append((seq, channel.value, payload))
                except Exception as exc:  # a bad event is logged, never stops the outbox
                    logger.error("journal event %d (%s) not published: %s", seq, kind, exc)
            last = int(rows[-1][0])
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(
                    "INSERT OR IGNORE INTO hall_outbox (seq, channel, payload) VALUES (?, ?, ?)", queued)
                self._db.execute(
                    "INSERT INTO hall_cursor (name, seq) VALUES ('journal', ?) "
                    "ON CONFLICT(name) DO UPDATE SET seq = excluded.seq", (last,))
                self._db.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                self._rollback()
                if getattr(exc, "sqlite_errorcode", None) != sqlite3.SQLITE_FULL:
                    raise
                # The cursor stays: these events are read again when sent messages make room.
                self._more = True
                if not self._full_logged:
                    logger.error("the hall's outbox is full (%s); the hall waits, the table goes on", exc)
                self._full_logged = True
                return 0
            except BaseException:
                self._rollback()
                raise
            self._full_logged = False
            self._read_up_to = last
            return len(rows)

    def unsent(self, *, after_id: int = 0, limit: int = 100) -> list[OutboxItem]:
        """Messages not yet acknowledged by the broker, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, seq, channel, payload FROM hall_outbox WHERE sent_ns IS NULL AND id > ? "
                "ORDER BY id LIMIT ?", (after_id, limit),
            ).fetchall()
            return [OutboxItem(int(i), int(s), Channel(c), bytes(p)) for i, s, c, p in rows]

    def mark_sent(self, ids: Iterable[int]) -> None:
        """The broker has these: never send them again."""
        with self._lock:
            done = [(time.monotonic_ns(), i) for i in ids]
            if not done:
                return
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany("UPDATE hall_outbox SET sent_ns = ? WHERE id = ?", done)
                # A full outbox keeps no sent message: their room is what it waits for.
                keep = 0 if self._full_logged else KEEP_SENT
                self._db.execute(
                    "DELETE FROM hall_outbox WHERE sent_ns IS NOT NULL AND id <= "
                    "(SELECT MAX(id) FROM hall_outbox) - ?", (keep,))
                self._db.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

    def _rollback(self) -> None:
        # SQLite may have rolled back already (a full disk can do that).
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    @property
    def full(self) -> bool:
        """The last fill found no room (under a journal size cap)."""
        return self._full_logged

    def counts(self) -> tuple[int, int]:
        """``(kept, unsent)`` messages."""
        with self._lock:
            kept, unsent = self._db.execute(
                "SELECT COUNT(*), COALESCE(SUM(sent_ns IS NULL), 0) FROM hall_outbox").fetchone()
            return int(kept), int(unsent)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._db.close()

    def __repr__(self) -> str:
        return f"Outbox({str(self.path)!r})"
