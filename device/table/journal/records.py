"""The journal's vocabulary: its events, evidence, errors and payload helpers.

:class:`JournalEvent` and :class:`Evidence` are what the journal gives back;
:func:`freeze` makes a decoded payload read-only and :func:`thaw` turns it
back into plain dicts and lists (for JSON, or for code that wants to edit a
copy). The errors say why a journal cannot be opened, read or written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from pegwatch.rules.errors import BadInput, DeviceFault, PegwatchError

#: Where Linux keeps the id of the current boot.
BOOT_ID_PATH: Final = Path("/proc/sys/kernel/random/boot_id")

#: The kind of the event that records evidence images evicted under the size cap.
PRUNED_KIND: Final = "evidence_pruned"
#: What a dispute tool says of an evicted image.
PRUNED_NOTE: Final = "image pruned at max_mb"

_KIND_RE: Final = re.compile(r"[a-z][a-z0-9_.\-]{0,63}")


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


def freeze(value: object) -> object:
    """Read-only views of decoded JSON, so a journaled payload cannot be edited in place."""
    if isinstance(value, dict):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: object) -> Any:
    """The inverse of :func:`freeze`: frozen payload views back into dicts and lists."""
    if isinstance(value, Mapping):
        return {str(k): thaw(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [thaw(v) for v in value]
    return value


def _encode(what: str, value: object) -> str:
    try:
        return json.dumps(thaw(value), sort_keys=True, separators=(",", ":"), allow_nan=False)
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
            "payload": thaw(self.payload),
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
