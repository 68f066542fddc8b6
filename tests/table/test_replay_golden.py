"""Replay against a journal this code did not just write.

``data/demo-match-v1.sqlite`` is the journal of ``pegwatch demo`` as the
table program wrote it before the verdicts gained their ``final`` and
``reveal_can_change`` keys (evidence images dropped to keep it small). A
journal an arbiter kept from an earlier version must still replay to its
own verdicts; one whose verdicts were lost or added must say so.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from pegwatch.device.cli import main
from pegwatch.device.table.program import replay_journal
from pegwatch.rules.flow.verdicts import MatchResult

GOLDEN = Path(__file__).parent / "data" / "demo-match-v1.sqlite"


@pytest.fixture
def journal(tmp_path) -> Path:
    path = tmp_path / "match.sqlite"
    shutil.copy(GOLDEN, path)
    return path


def _verdict_rows(path: Path) -> list[tuple[int, dict]]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT seq, payload FROM events WHERE kind = 'verdict' ORDER BY seq").fetchall()
    return [(seq, json.loads(payload)) for seq, payload in rows]


def test_an_earlier_versions_journal_replays_to_its_own_verdicts(journal):
    result = replay_journal(journal)
    assert result.mismatches == ()
    # Checked by hand against the demo's transcript: game 1, Bob breaks and
    # Alice mis-marks row 3, so Bob is credited with 4 attempts (seed 000:
    # the row of the mis-mark plus one); game 2, Alice breaks and her time
    # runs out, so 13 (the failure count). Fewer attempts wins the match VP.
    match = result.verdicts[-1]
    assert isinstance(match, MatchResult)
    assert match.attempts == {"Alice": 13, "Bob": 4}
    assert match.vp == {"Alice": 0.0, "Bob": 1.0}
    whats = [v.what for v in result.verdicts]
    assert whats.count("mismark") == 1 and whats.count("flag") == 1 and whats.count("game") == 2


def test_a_lost_last_verdict_is_reported(journal):
    seq, last = _verdict_rows(journal)[-1]
    assert last["what"] == "match"
    with sqlite3.connect(journal) as db:
        db.execute("DELETE FROM events WHERE seq = ?", (seq,))
    mismatches = replay_journal(journal).mismatches
    assert len(mismatches) == 1
    assert "the journal has none" in mismatches[0] and "'match'" in mismatches[0]


def test_a_lost_verdict_in_the_middle_is_reported(journal):
    rows = _verdict_rows(journal)
    index = next(i for i, (_, v) in enumerate(rows) if v["what"] == "mismark")
    with sqlite3.connect(journal) as db:
        db.execute("DELETE FROM events WHERE seq = ?", (rows[index][0],))
    mismatches = replay_journal(journal).mismatches
    assert mismatches
    assert mismatches[0].startswith(f"verdict {index + 1}: replay gives ")
    assert "'mismark'" in mismatches[0]


def test_an_extra_verdict_is_reported(journal):
    rows = _verdict_rows(journal)
    with sqlite3.connect(journal) as db:
        at_ns, boot, session, wall = db.execute(
            "SELECT at_ns, boot_id, session, wall_ns FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        db.execute(
            "INSERT INTO events (kind, at_ns, boot_id, session, wall_ns, payload) VALUES (?, ?, ?, ?, ?, ?)",
            ("verdict", at_ns, boot, session, wall,
             json.dumps({"what": "mismark", "game": 2, "row": 1, "attempts": 2, "penalty_vp": 0.5})),
        )
    mismatches = replay_journal(journal).mismatches
    assert mismatches == (f"the journal has {len(rows) + 1} verdicts, the replay reaches {len(rows)}",)


def test_a_changed_verdict_is_reported_and_the_cli_says_so_in_one_line(journal, capsys):
    seq, verdict = next((s, v) for s, v in _verdict_rows(journal) if v["what"] == "mismark")
    verdict["row"] = 1
    with sqlite3.connect(journal) as db:
        db.execute("UPDATE events SET payload = ? WHERE seq = ?", (json.dumps(verdict), seq))
    assert main(["replay", str(journal)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "verdicts differ" in err[0] and str(journal) in err[0]


def test_a_journal_whose_schema_was_damaged_is_refused_in_one_line(journal, capsys):
    # One flipped byte in the schema can rename a column: SQLite's own
    # integrity check passes, and the file must still be refused up front.
    data = bytearray(journal.read_bytes())
    at = data.index(b"payload  TEXT")
    data[at] = ord("q")
    journal.write_bytes(bytes(data))
    assert main(["replay", str(journal)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(journal) in err[0] and "table events" in err[0]
