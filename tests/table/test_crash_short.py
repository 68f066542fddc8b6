"""A short run of benchmarks/crash.py: SIGKILL `pegwatch run --script` at random moments.

15 kills of the table (start-up, mid-command, between commands), restarted
on the same journal each time: no acknowledged event may be lost, the
restored clock must equal the journal's to within 1 ms, and each match must
reach the verdicts of an uninterrupted run. The full run (1,000 kills) is
``.venv/bin/python benchmarks/crash.py``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_fifteen_kills_lose_nothing_and_change_no_verdict():
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "crash.py"), "--kills", "15", "--seed", "7",
         "--plans", "2"],
        capture_output=True, text=True, timeout=300, cwd=REPO, check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["kills"] == 15
    assert result["lost_events"] == 0
    assert result["verdicts_differ"] == 0 and result["replay_mismatches"] == 0
    assert result["matches"] >= 1
    # The clock was checked after restarts, and came back as the journal says.
    assert result["clock_checks"] >= 1
    assert result["clock_error_ms_max"] < 1.0
