"""kill -9 at random points: every event reported durable survives, and the journal opens."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time

from pegwatch.device.table.journal import Journal, timeline

# The child appends numbered events as fast as it can and prints each one's
# seq and stamp only after append() has returned, so every line it printed
# is a promise of durability. Now and then it stores evidence too, so that
# kills also land in the middle of writing large blobs.
CHILD = textwrap.dedent(
    """
    import sys, time
    from pegwatch.device.table.journal import Journal
    journal = Journal(sys.argv[1])
    run = int(sys.argv[2])
    print("ready", flush=True)
    n = 0
    while True:
        n += 1
        at = time.monotonic_ns()
        event = journal.append("tick", {"run": run, "n": n, "pad": "x" * (n * 37 % 3000)}, at_ns=at)
        if n % 7 == 0:
            journal.store_evidence(event_seq=event.seq, game=1, row=n % 12 + 1,
                                   image=b"\\xff\\xd8\\xff" + bytes(20000), reading={"n": n})
        print(event.seq, event.at_ns, run, n, flush=True)
    """
)


def test_sigkill_at_random_points_loses_nothing_reported(tmp_path):
    path = tmp_path / "journal.sqlite"
    rng = random.Random(20261121)
    env = dict(os.environ)
    promised: dict[int, tuple[int, int, int]] = {}
    kills = 30
    for run in range(1, kills + 1):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, str(path), str(run)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            text=True,
        )
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready", (
            child.stderr.read() if child.stderr else ""
        )
        time.sleep(rng.uniform(0.0, 0.08))
        child.send_signal(signal.SIGKILL)
        out, err = child.communicate(timeout=30)
        assert child.returncode == -signal.SIGKILL, err
        for line in out.splitlines():
            parts = line.split()
            if len(parts) != 4:
                continue  # the kill can cut the last line short; it was not a promise yet
            seq, at_ns, r, n = map(int, parts)
            promised[seq] = (at_ns, r, n)

    with Journal(path) as journal:  # opening runs the integrity check
        events = list(journal.events())
        evidence = journal.all_evidence()
    assert promised, "the child never managed to append; the test proved nothing"
    seqs = [e.seq for e in events]
    assert seqs == list(range(1, len(events) + 1)), "sequence has gaps"
    by_seq = {e.seq: e for e in events}
    for seq, (at_ns, run, n) in promised.items():
        event = by_seq.get(seq)
        assert event is not None, f"event {seq} was reported durable but is gone"
        assert event.at_ns == at_ns  # stamps survive to the nanosecond
        assert (event.payload["run"], event.payload["n"]) == (run, n)
    # Each run numbers its events 1, 2, 3... with none missing before the kill.
    for run in {e.payload["run"] for e in events}:
        ns = [e.payload["n"] for e in events if e.payload["run"] == run]
        assert ns == list(range(1, len(ns) + 1))
    # Each run that wrote is its own session, and the timeline never goes back.
    runs = [e.payload["run"] for e in events]
    assert [e.session for e in events] == [sorted(set(runs)).index(r) + 1 for r in runs]
    times = [t for _, t in timeline(events)]
    assert times == sorted(times)
    assert all(by_seq[item.event_seq].payload["n"] % 7 == 0 for item in evidence)
