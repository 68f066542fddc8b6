"""The journal's evidence for disputes and its size cap (``[journal] max_mb``).

:class:`EvidenceStore` is the part of :class:`~pegwatch.device.table.journal.store.Journal`
that keeps the JPEG and reading behind each camera answer (seed 004 §4),
reads and exports them, and keeps the file under its cap by evicting the
images of finished games (never an event). It is a mixin: it works on the
journal's connection, lock and session.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Final

from pegwatch.device.table.journal.records import (
    PRUNED_KIND,
    PRUNED_NOTE,
    BadJournal,
    Evidence,
    _check_stamp,
    _encode,
    freeze,
    thaw,
)

# The journal's one logger, whichever of its modules speaks (as before the split).
logger = logging.getLogger("pegwatch.device.table.journal")

_JPEG_MAGIC: Final = b"\xff\xd8\xff"


class EvidenceStore:
    """The evidence and size-cap methods of :class:`Journal` (a mixin; see the module)."""

    if TYPE_CHECKING:
        # What the mixin uses of the Journal it is part of.
        path: Path
        _lock: threading.RLock
        _db: sqlite3.Connection
        _boot_id: str
        _session: int | None

        def _check_open(self) -> None: ...

        def _transaction(self, what: str) -> AbstractContextManager[None]: ...

        @property
        def meta(self) -> Mapping[str, object]: ...

        def set_meta(self, key: str, value: object) -> None: ...

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
                reading=freeze(json.loads(reading)),  # type: ignore[arg-type]
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
                "reading": thaw(item.reading),
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
