"""A tiny run of benchmarks/hall.py, so the load benchmark cannot rot: 5 tables, 10 s, one broker restart of 2 s.

It runs the script as a user would and reads its last line: every result and
every event the tables journaled is stored by the hub exactly once, across
the restart. Without chromium (outside CI) it runs without the page.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pegwatch.hub.broker import MOSQUITTO

ROOT = Path(__file__).resolve().parents[2]
KEYS = {"tables", "p50_ms", "p95_ms", "p99_ms", "hub_cpu_percent", "hub_rss_mb", "results_sent", "results_stored",
        "lost", "duplicated"}


def test_the_hall_benchmark_loses_nothing_across_a_broker_restart(tmp_path) -> None:
    if not Path(MOSQUITTO).exists() and shutil.which("mosquitto") is None:
        if os.environ.get("CI"):
            pytest.fail("Mosquitto is missing in CI (./dev test installs it with apt)")
        pytest.skip("Mosquitto is not installed (./dev test installs it with apt)")
    browser = shutil.which("chromium") is not None or bool(os.environ.get("CI"))
    cmd = [sys.executable, str(ROOT / "benchmarks" / "hall.py"), "--tables", "5", "--duration", "10",
           "--broker-down", "2", "--drop-s", "0", "--no-hub-kill", "--settle-s", "2", "--tmp", str(tmp_path)]
    if not browser:
        cmd.append("--no-browser")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    assert "broker stopped for 2 s" in done.stdout and "broker started again" in done.stdout
    figures = json.loads(lines[-1])
    assert figures.keys() >= KEYS
    assert figures["tables"] == 5 and figures["faults"] == 1
    # Five matches of two games: three results each, every one stored once.
    assert figures["results_sent"] == 15 and figures["results_stored"] == 15
    assert figures["lost"] == 0 and figures["duplicated"] == 0
    assert figures["events_sent"] > 15 * 5 and figures["events_lost"] == 0 and figures["events_duplicated"] == 0
    assert figures["outbox_unsent_at_end"] == 0 and figures["actions_played_late"] >= 0
    if browser:
        assert figures["latency_samples"] > 0 and 0 < figures["p50_ms"] <= figures["p95_ms"] <= figures["p99_ms"]
