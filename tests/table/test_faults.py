"""Faults of the running table: kill -9 at random points, then a restart.

The table program runs as a subprocess (``pegwatch run --script -``) fed
with presses; each press it acknowledges (``ack``) has been journaled. It is
killed with SIGKILL at random moments, restarted on the same journal, and
resumed by the arbiter, many times over. Afterwards no acknowledged press
may be missing, and the clock rebuilt from the journal must equal the times
computed here, independently, from the recorded stamps.

Camera gone, display gone and disk full at the table level are in
``test_table.py``.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from pegwatch.device.table.journal import Journal, timeline
from pegwatch.device.table.program import flow_from_journal, replay_journal
from pegwatch.rules.flow import Phase

REPO = Path(__file__).resolve().parents[2]
MS = 1_000_000
S = 1_000 * MS


def start(journal: Path) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env.pop("NOTIFY_SOCKET", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pegwatch.device", "run", "--script", "-", "--journal", str(journal)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
        cwd=REPO,
        env=env,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.startswith("ready"), first + (proc.stderr.read() if proc.stderr else "")
    return proc


def send(proc: subprocess.Popen[str], line: str) -> str:
    """Send one command; the answer line, or '' when the process died."""
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
    except (BrokenPipeError, OSError):
        return ""
    return proc.stdout.readline()


def next_seat(journal_path: Path) -> int:
    with Journal(journal_path) as journal:
        flow, _, _, _ = flow_from_journal(journal)
    if flow.phase is Phase.SETUP:
        return flow.game.codemaker
    return flow.game.codebreaker if flow.phase is Phase.GUESS else flow.game.codemaker


def expected_times(journal_path: Path) -> tuple[dict[int, int], int]:
    """The clock, computed from the stamps alone: codemaker (seat 0) 4 min,
    codebreaker 8 min; a restart pauses at the last journaled instant."""
    left = {0: 240 * S, 1: 480 * S}
    running: int | None = None
    started = paused = False
    last = 0
    presses = 0
    t = 0
    with Journal(journal_path) as journal:
        events = timeline(journal.events())
    for event, t in events:
        if event.kind == "press":
            seat = event.payload["player"]
            if paused or presses >= 24:
                continue
            if not started:
                if seat == 0:
                    started, running, last = True, 1, t
                continue
            if seat == running:
                left[seat] -= t - last
                running, last = 1 - seat, t
                presses += 1
                if presses == 24:
                    running = None  # row 12 is marked: the game is over
        elif event.kind == "boot" and running is not None and not paused:
            left[running] -= t - last
            paused = True
        elif event.kind == "arbiter" and event.payload["action"] == "resume" and paused:
            paused, last = False, t
    if running is not None and not paused:
        left[running] -= t - last
    return left, t


def test_kill_9_at_random_points_loses_no_confirmed_event(tmp_path):
    rng = random.Random(20261121)
    journal = tmp_path / "table.sqlite"
    acked: set[str] = set()
    sent = 0
    for _round in range(20):
        proc = start(journal)
        killer: threading.Timer | None = None
        try:
            if _round:
                assert send(proc, "arbiter resume").startswith("ack")
                time.sleep(0.06)
            seat = next_seat(journal)
            commands = rng.randint(1, 6)
            for i in range(commands):
                tag = f"p{sent}"
                sent += 1
                if i == commands - 1:
                    # Kill somewhere around the last press: before, during or
                    # after its journaling.
                    killer = threading.Timer(
                        rng.uniform(0, 0.02), proc.send_signal, (signal.SIGKILL,)
                    )
                    killer.start()
                # Presses by hand are far apart; the clock treats a second
                # press within 50 ms as a bounce of the first.
                time.sleep(0.06)
                answer = send(proc, f"press {seat} {tag}")
                if answer.startswith("ack"):
                    acked.add(tag)
                    seat = 1 - seat
                else:
                    break
            if killer is not None:
                killer.join()
            proc.wait(timeout=10)
            assert proc.returncode == -signal.SIGKILL
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    with Journal(journal) as j:
        tags = {e.payload.get("tag") for e in j.events() if e.kind == "press"}
        boots = sum(1 for e in j.events() if e.kind == "boot")
    assert acked and acked <= tags, f"acknowledged presses lost: {sorted(acked - tags)}"
    assert boots == 19
    left, last_t = expected_times(journal)
    with Journal(journal) as j:
        flow, _, _, _ = flow_from_journal(j)
    got = flow.remaining_ns(last_t)
    for seat in (0, 1):
        assert abs(got[seat] - left[seat]) < MS, (seat, got, left)
    assert not replay_journal(journal).mismatches


def test_a_clean_quit_and_restart_continues_the_same_match(tmp_path):
    journal = tmp_path / "table.sqlite"
    proc = start(journal)
    assert send(proc, "press 0 a").startswith("ack")
    assert send(proc, "press 1 b").startswith("ack")
    assert send(proc, "quit") == ""
    proc.wait(timeout=10)
    assert proc.returncode == 0
    proc = start(journal)
    status = send(proc, "status").split()
    assert status[:2] == ["status", "marks"]
    # Paused on restart: the time does not run until the arbiter resumes.
    again = send(proc, "status").split()
    assert again[2:] == status[2:]
    assert send(proc, "arbiter resume").startswith("ack")
    assert send(proc, "press 0 c").startswith("ack")
    send(proc, "quit")
    proc.wait(timeout=10)
    with Journal(journal) as j:
        flow, _, _, _ = flow_from_journal(j)
    assert len(flow.game.rows) == 1 and flow.phase is Phase.GUESS
