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

The modules: ``records`` (events, evidence, errors, :func:`freeze` and
:func:`thaw`), ``store`` (:class:`Journal`: the file, its events and meta),
``evidence`` (the evidence and the ``max_mb`` cap, part of :class:`Journal`),
``timeline`` and ``writer`` (:class:`JournalWriter`). Import from here.
"""

from __future__ import annotations

from pegwatch.device.table.journal.records import (
    BOOT_ID_PATH,
    PRUNED_KIND,
    PRUNED_NOTE,
    BadJournal,
    Evidence,
    JournalError,
    JournalEvent,
    JournalFullError,
    JournalStorageError,
    current_boot_id,
    freeze,
    thaw,
)
from pegwatch.device.table.journal.store import APPLICATION_ID, SCHEMA_VERSION, Journal
from pegwatch.device.table.journal.timeline import Timeline, segment_starts, timeline
from pegwatch.device.table.journal.writer import (
    CAP_HEADROOM_BYTES,
    JournalWriter,
    PendingEvent,
)

__all__ = [
    "APPLICATION_ID",
    "BOOT_ID_PATH",
    "CAP_HEADROOM_BYTES",
    "PRUNED_KIND",
    "PRUNED_NOTE",
    "SCHEMA_VERSION",
    "BadJournal",
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
    "freeze",
    "segment_starts",
    "thaw",
    "timeline",
]
