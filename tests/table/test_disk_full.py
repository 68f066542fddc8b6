"""Disk full: a clear alarm, events held in memory in order, written once space returns."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pegwatch.device.table.journal import (
    Journal,
    JournalError,
    JournalEvent,
    JournalFullError,
    JournalWriter,
    PendingEvent,
)

JPEG = b"\xff\xd8\xff\xe0" + bytes(3000)


def fill(journal: Journal) -> int:
    """Append until SQLite reports SQLITE_FULL; return how many went in."""
    n = 0
    with pytest.raises(JournalFullError) as info:
        while True:
            journal.append("press", {"pad": "z" * 400, "n": n}, at_ns=n)
            n += 1
            assert n < 10_000, "the size cap never bit"
    message = str(info.value)
    assert message.startswith(f"{journal.path}: disk full")
    assert "\n" not in message
    return n


def test_sqlite_full_raises_one_clear_line_and_writes_nothing_partial(tmp_path):
    with Journal(tmp_path / "j.sqlite", max_bytes=64 * 1024) as journal:
        n = fill(journal)
        assert n > 10
        assert journal.last_seq == n
        # Still readable, still full.
        assert [e.payload["n"] for e in journal.events()] == list(range(n))
        with pytest.raises(JournalFullError):
            journal.append("press", {"pad": "z" * 400}, at_ns=1)
        journal.set_max_bytes(None)
        assert journal.append("press", {}, at_ns=2).seq == n + 1
    with Journal(tmp_path / "j.sqlite") as journal:
        assert journal.last_seq == n + 1


def test_writer_holds_events_in_order_alarms_and_flushes_when_space_returns(tmp_path):
    alarms: list[str | None] = []
    with Journal(tmp_path / "j.sqlite", max_bytes=64 * 1024) as journal:
        writer = JournalWriter(journal, when_alarm=alarms.append)
        written = []
        n = 0
        # The clock keeps producing events; none may raise.
        while writer.pending == 0:
            written.append(writer.append("press", {"pad": "z" * 400, "n": n}, at_ns=n))
            n += 1
        assert isinstance(written[-1], PendingEvent)
        assert writer.alarm is not None
        assert writer.alarm.startswith("DISK FULL: 1 event held in memory (")
        assert str(journal.path) in writer.alarm
        held = [writer.append("press", {"n": n + i}, at_ns=n + i) for i in range(5)]
        assert all(isinstance(e, PendingEvent) for e in held)
        assert writer.pending == 6
        assert writer.alarm.startswith("DISK FULL: 6 events held in memory")
        # Evidence for a row confirmed while full is held with its event.
        assert not writer.store_evidence(held[2], game=1, row=4, image=JPEG, reading={"r": 4})
        assert not writer.flush()
        assert writer.written_seq(held[0]) is None

        journal.set_max_bytes(None)  # the arbiter freed some space
        after = writer.append("press", {"n": "after"}, at_ns=10**9)

        assert isinstance(after, JournalEvent)
        assert writer.pending == 0
        assert writer.alarm is None
        # Raised once (not once per held event), cleared once.
        assert (
            len(alarms) == 2
            and alarms[0].startswith("DISK FULL: 1 event held")
            and alarms[1] is None
        )
        events = list(journal.events())
        ns = [e.payload["n"] for e in events]
        assert ns == [*range(n + 5), "after"]
        assert [e.at_ns for e in events[:-1]] == list(range(n + 5))
        seq = writer.written_seq(held[2])
        assert seq is not None and journal.evidence(1, 4) is not None
        assert journal.evidence(1, 4).event_seq == seq
        assert by_seq(events)[seq].payload["n"] == n + 2


def by_seq(events):
    return {e.seq: e for e in events}


def test_writer_still_refuses_bad_input_at_once(tmp_path):
    with Journal(tmp_path / "j.sqlite", max_bytes=64 * 1024) as journal:
        writer = JournalWriter(journal)
        while writer.pending == 0:
            writer.append("press", {"pad": "z" * 400}, at_ns=1)
        with pytest.raises(JournalError, match="cannot be journaled"):
            writer.append("press", {"x": object()}, at_ns=1)
        with pytest.raises(JournalError, match="at_ns"):
            writer.append("press", {}, at_ns=-5)
        assert writer.pending == 1


def test_held_evidence_images_are_capped_but_events_never_dropped(tmp_path):
    with Journal(tmp_path / "j.sqlite", max_bytes=64 * 1024) as journal:
        writer = JournalWriter(journal, max_held_image_bytes=10_000)
        while writer.pending == 0:
            writer.append("press", {"pad": "z" * 400}, at_ns=1)
        events = [writer.append("marks", {"row": r}, at_ns=r) for r in range(1, 9)]
        for row, event in enumerate(events, start=1):
            writer.store_evidence(event, game=1, row=row, image=JPEG, reading={})
        assert writer.dropped_evidence == 5  # 3 images of ~3 kB fit in 10 kB
        assert writer.pending == 9
        journal.set_max_bytes(None)
        assert writer.flush()
        assert [e.row for e in journal.all_evidence()] == [6, 7, 8]
        assert [e.payload.get("row") for e in journal.events(kinds={"marks"})] == list(range(1, 9))


# A real refusal by the operating system: the file-size limit (RLIMIT_FSIZE)
# makes write() fail, as a full card does, without needing a special file system.
CHILD = textwrap.dedent(
    """
    import resource, signal, sys
    from pegwatch.device.table.journal import Journal, JournalWriter
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    journal = Journal(sys.argv[1])
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (150_000, hard))
    writer = JournalWriter(journal)
    n = 0
    while writer.pending < 3:
        writer.append("press", {"pad": "y" * 500, "n": n}, at_ns=n)
        n += 1
    print("ALARM", writer.alarm)
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    print("FLUSHED", writer.flush(), n)
    """
)


def test_a_real_write_refusal_is_ridden_out(tmp_path):
    path = tmp_path / "j.sqlite"
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert result.returncode == 0, result.stderr
    lines = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert lines["ALARM"].startswith(("JOURNAL FAILING: 3 events held", "DISK FULL: 3 events held"))
    flushed, n = lines["FLUSHED"].split()
    assert flushed == "True"
    with Journal(path) as journal:
        assert [e.payload["n"] for e in journal.events()] == list(range(int(n)))


def test_short_alarm_fits_one_display_line(tmp_path):
    with Journal(tmp_path / "j.sqlite", max_bytes=64 * 1024) as journal:
        writer = JournalWriter(journal)
        assert writer.short_alarm is None
        while writer.pending < 120:
            writer.append("press", {"pad": "z" * 400}, at_ns=1)
        assert writer.short_alarm == "DISK FULL 120 held"
        assert len(writer.short_alarm) <= 21


ops = st.lists(
    st.sampled_from(["append", "append", "append", "full", "free", "flush"]), max_size=40
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops)
def test_writer_keeps_every_event_in_order_whatever_the_disk_does(tmp_path_factory, script):
    path = tmp_path_factory.mktemp("j") / "j.sqlite"
    with Journal(path) as journal:
        writer = JournalWriter(journal)
        sent = []
        for op in script:
            if op == "append":
                n = len(sent)
                sent.append(n)
                result = writer.append("press", {"n": n, "pad": "p" * 300}, at_ns=n)
                assert isinstance(result, JournalEvent | PendingEvent)
            elif op == "full":
                journal.set_max_bytes(journal.size_bytes)  # no room for one more page
            elif op == "free":
                journal.set_max_bytes(None)
            else:
                writer.flush()
            assert (writer.alarm is None) == (writer.pending == 0)
        journal.set_max_bytes(None)
        assert writer.flush()
        assert writer.alarm is None
        assert [e.payload["n"] for e in journal.events()] == sent
        assert [e.at_ns for e in journal.events()] == sent
