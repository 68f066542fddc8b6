"""The journal's API: durable appends, replay order, meta, evidence, bad input."""

from __future__ import annotations

import io
import json
import sqlite3
import threading

import pytest
from PIL import Image

from pegwatch.device.table.journal import (
    Journal,
    JournalError,
    JournalEvent,
    current_boot_id,
)
from pegwatch.rules.errors import PegwatchError


def jpeg(colour: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (32, 24), colour).save(buf, format="JPEG")
    return buf.getvalue()


def test_append_returns_durable_numbered_events(tmp_path):
    path = tmp_path / "j.sqlite"
    with Journal(path, boot_id="boot-a") as journal:
        first = journal.append("press", {"player": 0}, at_ns=1_000)
        second = journal.append("reading", {"row": 1, "pegs": ["R", "G"]}, at_ns=2_500)
        assert (first.seq, second.seq) == (1, 2)
        assert first.boot_id == "boot-a"
        assert first.session == second.session == 1
        assert journal.last_seq == 2
    # A fresh connection sees exactly what was appended, in order.
    with Journal(path, create=False, boot_id="boot-a") as journal:
        events = list(journal.events())
    assert [(e.seq, e.kind, e.at_ns) for e in events] == [
        (1, "press", 1_000),
        (2, "reading", 2_500),
    ]
    assert events[1].payload["pegs"] == ("R", "G")
    assert events[0] == first


def test_sqlite_settings_are_wal_and_full_sync(tmp_path):
    path = tmp_path / "j.sqlite"
    with Journal(path) as journal:
        journal.append("press", {}, at_ns=1)
        # Read through a separate connection: the settings that matter are on disk.
        raw = sqlite3.connect(path)
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        raw.close()
        assert journal._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_events_since_and_kinds(tmp_path):
    with Journal(tmp_path / "j.sqlite") as journal:
        for i in range(540):  # more than one internal batch of 512
            journal.append("press" if i % 3 else "verdict", {"i": i}, at_ns=i)
        assert [e.seq for e in journal.events(since=535)] == [536, 537, 538, 539, 540]
        verdicts = list(journal.events(kinds={"verdict"}))
        assert len(verdicts) == 180
        assert all(e.kind == "verdict" for e in verdicts)
        assert [e.payload["i"] for e in journal.events()] == list(range(540))


def test_each_process_run_is_a_new_session(tmp_path):
    path = tmp_path / "j.sqlite"
    with Journal(path) as journal:
        assert journal.session is None
        journal.append("press", {}, at_ns=5)
        assert journal.session == 1
    with Journal(path) as journal:
        # Opening to read (export, replay) does not start a session.
        assert [e.session for e in journal.events()] == [1]
    with Journal(path) as journal:
        assert journal.append("press", {}, at_ns=6).session == 2


def test_payload_is_read_only_and_round_trips(tmp_path):
    with Journal(tmp_path / "j.sqlite") as journal:
        event = journal.append("verdict", {"marks": {"black": 2, "white": 1}}, at_ns=9)
        with pytest.raises(TypeError):
            event.payload["marks"] = 0  # type: ignore[index]
        assert event.to_dict()["payload"] == {"marks": {"black": 2, "white": 1}}
        json.dumps(event.to_dict())


@pytest.mark.parametrize(
    ("kind", "payload", "at_ns", "fragment"),
    [
        ("Press", {}, 1, "event kind 'Press'"),
        ("", {}, 1, "event kind ''"),
        ("press", {}, -1, "at_ns"),
        ("press", {}, 1.5, "at_ns"),
        ("press", {}, True, "at_ns"),
        ("press", {"x": object()}, 1, "press event payload cannot be journaled"),
        ("press", {"x": float("nan")}, 1, "press event payload cannot be journaled"),
        ("press", [1, 2], 1, "payload must be a mapping"),
    ],
)
def test_bad_events_raise_one_clear_line_and_write_nothing(
    tmp_path, kind, payload, at_ns, fragment
):
    with Journal(tmp_path / "j.sqlite") as journal:
        with pytest.raises(JournalError) as info:
            journal.append(kind, payload, at_ns=at_ns)
        assert fragment in str(info.value)
        assert "\n" not in str(info.value)
        assert isinstance(info.value, PegwatchError)
        assert journal.last_seq == 0


def test_opening_problems_name_the_file(tmp_path):
    with pytest.raises(JournalError, match="no journal there"):
        Journal(tmp_path / "missing.sqlite", create=False)
    assert not (tmp_path / "missing.sqlite").exists()

    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not sqlite at all" * 200)
    with pytest.raises(JournalError, match=r"garbage\.sqlite: not a usable pegwatch journal"):
        Journal(garbage)

    other = tmp_path / "other.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t(x)")
    con.commit()
    con.close()
    with pytest.raises(JournalError, match="not a pegwatch journal"):
        Journal(other)

    with pytest.raises(JournalError, match="is a directory"):
        Journal(tmp_path)


def test_damaged_journal_is_refused_at_open(tmp_path):
    path = tmp_path / "j.sqlite"
    with Journal(path) as journal:
        for i in range(60):
            journal.append("press", {"pad": "x" * 1000, "i": i}, at_ns=i)
    # Fold the WAL in, then overwrite a page in the middle of the events' b-tree.
    con = sqlite3.connect(path)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 8 * page
    data[5 * page : 6 * page] = b"\x0d" + b"\xff" * (page - 1)
    path.write_bytes(bytes(data))
    with pytest.raises(JournalError) as info:
        Journal(path)
    assert str(info.value).startswith(str(path))


def test_closed_journal_refuses_work(tmp_path):
    journal = Journal(tmp_path / "j.sqlite")
    journal.close()
    journal.close()  # idempotent
    assert journal.closed
    with pytest.raises(JournalError, match="closed"):
        journal.append("press", {}, at_ns=1)


def test_meta_has_a_match_id_and_keeps_the_config(tmp_path):
    path = tmp_path / "j.sqlite"
    with Journal(path) as journal:
        match_id = journal.match_id
        assert len(match_id) == 32
        journal.set_meta("config", {"players": ["Ann", "Bob"], "rules": "mso"})
        journal.set_meta("config", {"players": ["Ann", "Bob"], "rules": "mso", "clock": "x"})
    with Journal(path) as journal:
        assert journal.match_id == match_id
        assert journal.meta["config"]["clock"] == "x"
        assert journal.meta["config"]["players"] == ("Ann", "Bob")
        with pytest.raises(JournalError, match="cannot be journaled"):
            journal.set_meta("bad", {1, 2})


def test_two_journals_have_different_match_ids(tmp_path):
    with Journal(tmp_path / "a.sqlite") as a, Journal(tmp_path / "b.sqlite") as b:
        assert a.match_id != b.match_id


def test_evidence_is_kept_per_row_latest_wins_and_exports(tmp_path):
    with Journal(tmp_path / "j.sqlite") as journal:
        confirm = journal.append("marks", {"game": 1, "row": 3}, at_ns=10)
        recheck = journal.append("arbiter", {"game": 1, "row": 3}, at_ns=20)
        first, second = jpeg((255, 0, 0)), jpeg((0, 0, 255))
        journal.store_evidence(
            event_seq=confirm.seq, game=1, row=3, image=first, reading={"pegs": "RGBY"}
        )
        journal.store_evidence(
            event_seq=recheck.seq, game=1, row=3, image=second, reading={"pegs": "RGBB"}
        )
        latest = journal.evidence(1, 3)
        assert latest is not None
        assert latest.image == second
        assert latest.reading["pegs"] == "RGBB"
        assert journal.evidence(1, 4) is None
        assert journal.evidence(2, 3) is None
        assert [e.event_seq for e in journal.all_evidence()] == [1, 2]
        assert journal.all_evidence(game=2) == []

        files = journal.export_evidence(tmp_path / "out")
        assert [f.name for f in files] == ["game1-row03-seq1.jpg", "game1-row03-seq2.jpg"]
        with Image.open(files[0]) as img:
            assert img.format == "JPEG"
            assert img.getpixel((16, 12))[0] > 200
        meta = json.loads((tmp_path / "out" / "game1-row03-seq2.json").read_text())
        assert meta == {"event_seq": 2, "game": 1, "row": 3, "reading": {"pegs": "RGBB"}}


def test_evidence_bad_input(tmp_path):
    with Journal(tmp_path / "j.sqlite") as journal:
        event = journal.append("marks", {}, at_ns=1)
        with pytest.raises(JournalError, match="not a JPEG"):
            journal.store_evidence(event_seq=event.seq, game=1, row=1, image=b"\x89PNG", reading={})
        with pytest.raises(JournalError, match="no event 99"):
            journal.store_evidence(event_seq=99, game=1, row=1, image=jpeg(), reading={})
        with pytest.raises(JournalError, match="row must be an int >= 0"):
            journal.store_evidence(event_seq=event.seq, game=1, row=-1, image=jpeg(), reading={})
        with pytest.raises(JournalError, match="game must be an int >= 1"):
            journal.store_evidence(event_seq=event.seq, game=0, row=1, image=jpeg(), reading={})
        assert journal.all_evidence() == []


def test_evidence_of_the_secret_is_row_0(tmp_path):
    with Journal(tmp_path / "j.sqlite") as journal:
        event = journal.append("reading", {"phase": "secret"}, at_ns=1)
        journal.store_evidence(event_seq=event.seq, game=1, row=0, image=jpeg(), reading={"phase": "secret"})
        piece = journal.evidence(1, 0)
        assert piece is not None and piece.row == 0 and piece.reading == {"phase": "secret"}


def test_appends_from_several_threads_stay_contiguous(tmp_path):
    with Journal(tmp_path / "j.sqlite") as journal:

        def writer(who: int) -> None:
            for i in range(25):
                journal.append("press", {"who": who, "i": i}, at_ns=i)

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        events = list(journal.events())
    assert [e.seq for e in events] == list(range(1, 101))
    for who in range(4):
        assert [e.payload["i"] for e in events if e.payload["who"] == who] == list(range(25))


def test_boot_id_comes_from_the_kernel(tmp_path):
    boot = tmp_path / "boot_id"
    boot.write_text("1234-abcd\n")
    assert current_boot_id(boot) == "1234-abcd"
    assert current_boot_id(tmp_path / "none") == "unknown"
    with Journal(tmp_path / "j.sqlite") as journal:
        assert journal.append("x", {}, at_ns=1).boot_id == current_boot_id()


def test_event_is_a_frozen_value():
    event = JournalEvent(seq=1, kind="press", at_ns=1, boot_id="b", payload={})
    with pytest.raises(AttributeError):
        event.seq = 2  # type: ignore[misc]
