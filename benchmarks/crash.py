"""Crash safety at scale: ``pegwatch run --script`` killed with SIGKILL, over and over.

Scripted matches (presses, and the camera's readings as ``reading JSON``
lines) are played through ``pegwatch run --script -`` in a subprocess, which
is killed with SIGKILL at a random moment (during start-up and replay, in
the middle of a command, between commands) and restarted on the same
journal, ``--kills`` times in all. After each restart the driver reads where
the journal stands and goes on from there: the arbiter resumes, the next
step of the script is played. When a match is complete (after the last
kill, it is finished without kills) a new one starts on a new journal.

Checked:

* **no confirmed event lost**: every command the table acknowledged
  (``ack SEQ``) is in the journal, between the previous acknowledgement
  and ``SEQ``;
* **the restored clock**: after each restart the table reports its times
  (``status``, paused); they must equal, within 1 ms, the times computed
  here independently from the journal's stamps, with the outage treated
  as docs/table.md says (the clock comes back paused at the last journaled
  instant: the outage and the unjournaled moments before the kill are
  charged to nobody);
* **the verdicts**: each match's journal reaches exactly the verdicts of an
  uninterrupted run of the same script, and ``pegwatch replay`` reproduces
  them.

Run:  .venv/bin/python benchmarks/crash.py [--kills 1000] [--seed 1] [--plans 6]

The last line is one JSON object: kills, lost_events, clock_error_ms_max,
verdicts_differ, replay_mismatches, matches, restarts, seconds, ...
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
MS = 1_000_000
S = 1_000 * MS
#: The clock takes a player's second press within 50 ms as a contact bounce:
#: presses of one seat are paced this far apart (real time).
PRESS_GAP_NS = 60 * MS
PALETTE = ("red", "green", "blue", "yellow", "white", "black", "orange", "pink")
#: mso-mastermind: the codemaker has 4 minutes, the codebreaker 8.
MAKER_NS, BREAKER_NS = 240 * S, 480 * S
DEBOUNCE_NS = 50 * MS


# -- the scripts ------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    tag: str
    line: str  # the command sent
    seat: int | None = None  # a press's seat


@dataclass
class Plan:
    steps: list[Step]
    end_rows: dict[int, int]  # game -> the row whose marks press ends it


def _score(secret: tuple[str, ...], guess: tuple[str, ...]) -> tuple[int, int]:
    black = sum(a == b for a, b in zip(secret, guess, strict=True))
    common = sum(min(secret.count(c), guess.count(c)) for c in set(guess))
    return black, common - black


def make_plan(rng: random.Random, number: int) -> Plan:
    """A match of two games: the code seen at the start, a few rows, maybe a
    mis-mark, then the shield opened."""
    steps: list[Step] = []
    end_rows: dict[int, int] = {}
    for game, maker in ((1, 0), (2, 1)):
        breaker = 1 - maker
        secret = tuple(rng.choice(PALETTE) for _ in range(4))
        solve = rng.randint(2, 6)
        mismark = rng.randint(1, solve - 1) if rng.random() < 0.4 else None
        end_rows[game] = mismark if mismark is not None else solve

        def tag(what: str, game: int = game) -> str:
            return f"m{number}g{game}{what}"

        def reading(t: str, payload: dict[str, Any], game: int = game) -> Step:
            body = {"game": game, "status": "ok", "tag": t, **payload}
            return Step(t, "reading " + json.dumps(body, separators=(",", ":")))

        steps.append(Step(tag("start"), f"press {maker} {tag('start')}", maker))
        steps.append(reading(tag("seen"), {"row": 0, "phase": "secret", "shield": "closed",
                                           "code": list(secret)}))
        for row in range(1, end_rows[game] + 1):
            guess = secret
            while guess == secret and row != solve:
                guess = tuple(rng.choice(PALETTE) for _ in range(4))
            black, white = _score(secret, guess)
            if row == mismark:
                wrong = [(b, w) for b in range(4) for w in range(5 - b)
                         if b + w <= 4 and (b, w) != (black, white)]
                black, white = rng.choice(wrong)
            steps.append(Step(tag(f"r{row}g"), f"press {breaker} {tag(f'r{row}g')}", breaker))
            steps.append(reading(tag(f"r{row}G"), {"row": row, "phase": "guess", "guess": list(guess)}))
            steps.append(Step(tag(f"r{row}m"), f"press {maker} {tag(f'r{row}m')}", maker))
            steps.append(reading(tag(f"r{row}M"), {"row": row, "phase": "marks",
                                                    "black": black, "white": white}))
        steps.append(reading(tag("open"), {"row": 0, "phase": "secret", "shield": "open",
                                           "code": list(secret)}))
    return Plan(steps, end_rows)


# -- the table in a subprocess --------------------------------------------------------


class Table:
    """One ``pegwatch run --script -`` process."""

    def __init__(self, journal: Path) -> None:
        env = dict(os.environ)
        env.pop("NOTIFY_SOCKET", None)
        self.started_ns = time.monotonic_ns()
        self.stderr = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 (closed per round)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "pegwatch.device", "run", "--script", "-", "--journal", str(journal)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
            text=True, bufsize=1, cwd=REPO, env=env,
        )
        self.last_press: dict[int, int] = {}
        self.ready_ns = 0

    def ready(self) -> int | None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        while line and not line.startswith("ready"):
            line = self.proc.stdout.readline()  # e.g. "the match in FILE is over"
        if not line:
            return None
        self.ready_ns = time.monotonic_ns()
        return int(line.split()[1])

    def send(self, line: str) -> str:
        """One command; its answer, or '' once the process is gone."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return ""
        return self.proc.stdout.readline()

    def pace(self, seat: int) -> None:
        """Wait out the clock's debounce for this seat (a deadline, not a guess)."""
        due = max(self.ready_ns, self.last_press.get(seat, 0)) + PRESS_GAP_NS
        delay = due - time.monotonic_ns()
        if delay > 0:
            time.sleep(delay / 1e9)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.send("quit")
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


# -- reading the journal (independently of the table's own code) -----------------------


def journal_events(path: Path) -> list[Any]:
    if not path.exists():
        return []
    from pegwatch.device.table.journal import Journal

    with Journal(path, create=False) as journal:
        return list(journal.events())


def continuous(events: list[Any]) -> list[int]:
    """The timeline rule of docs/journal.md, written out again: within a run
    (boot, session, stamps not going back) time is the stamps'; a new run
    starts at the last instant of the one before."""
    out: list[int] = []
    key = None
    last_at = offset = last = 0
    for e in events:
        if key is None:
            offset = 0
        elif (e.boot_id, e.session) != key or e.at_ns < last_at:
            offset = last - e.at_ns
        key, last_at = (e.boot_id, e.session), e.at_ns
        last = e.at_ns + offset
        out.append(last)
    return out


def model_clock(events: list[Any], plan: Plan) -> dict[int, int]:
    """Each seat's remaining time at the last journaled instant, from the stamps:
    sudden death (mso-mastermind), a fresh clock per game, paused at every
    restart until the arbiter resumes, stopped at the marks press of the row
    that ends the game."""
    times = continuous(events)
    game = 0
    left: dict[int, int] = {0: MAKER_NS, 1: BREAKER_NS}
    maker = 0
    running: int | None = None
    turn_from = 0
    paused = False
    over = True  # no game started
    final = True
    rows = 0
    accepted: dict[int, int] = {}
    t = 0
    for event, t in zip(events, times, strict=True):
        kind, p = event.kind, event.payload
        if kind == "press":
            seat = int(p["player"])
            if paused:
                continue
            if over:
                if final and game < 2 and seat == (0 if game == 0 else 1 - maker):
                    game += 1
                    maker = seat
                    left = {maker: MAKER_NS, 1 - maker: BREAKER_NS}
                    running, turn_from, over, final, rows, accepted = 1 - seat, t, False, False, 0, {}
                continue
            if seat != running or t - accepted.get(seat, -DEBOUNCE_NS) < DEBOUNCE_NS:
                continue
            accepted[seat] = t
            left[seat] -= t - turn_from
            turn_from = t
            running = 1 - seat
            if seat == maker:
                rows += 1
                if rows == plan.end_rows[game]:
                    running, over = None, True
        elif kind == "boot":
            if running is not None and not paused:
                left[running] -= t - turn_from
            paused = True
        elif kind == "arbiter" and p.get("action") == "resume" and paused:
            paused, turn_from = False, t
        elif kind == "reading" and p.get("phase") == "secret" and p.get("shield") == "open":
            final = True
    if running is not None and not paused:
        left[running] -= t - turn_from
    return left


def verdicts(events: list[Any]) -> list[Any]:
    from pegwatch.device.table.journal import thaw

    return [thaw(e.payload) for e in events if e.kind == "verdict"]


# -- the run ------------------------------------------------------------------------------


@dataclass
class Figures:
    kills: int = 0
    restarts: int = 0
    startup_kills: int = 0
    acked: int = 0
    lost_events: int = 0
    clock_checks: int = 0
    clock_error_ns_max: int = 0
    matches: int = 0
    verdicts_differ: int = 0
    replay_mismatches: int = 0
    round_s: list[float] = field(default_factory=list)


@dataclass
class Acked:
    tag: str | None
    line: str
    after: int  # the seq acknowledged before it (or ready's)
    seq: int


def next_step(plan: Plan, events: list[Any]) -> int:
    """How far the journal got: the first step whose tag it does not hold."""
    done = {e.payload.get("tag") for e in events if e.kind in ("press", "reading")}
    for i, step in enumerate(plan.steps):
        if step.tag not in done:
            return i
    return len(plan.steps)


@dataclass(frozen=True)
class Kill:
    """When to kill: ``after_s`` from the start, or from ``ready`` when ``running``."""

    after_s: float
    running: bool


def play_round(journal: Path, plan: Plan, figures: Figures, acked: list[Acked],
               kill: Kill | None) -> bool:
    """One life of the table: start, check its clock, play on until killed.
    Returns True when the plan is complete."""
    before = journal_events(journal)
    start = next_step(plan, before)
    if start == len(plan.steps):
        # The last step was journaled, its ack cut off by the kill: the table
        # starts once more, as after any power cut, replays the journal and
        # writes the verdicts the kill kept from it.
        table = Table(journal)
        try:
            if table.ready() is None:
                raise RuntimeError("the table did not start on a finished journal")
            figures.restarts += 1
        finally:
            table.close()
            table.stderr.close()
        return True
    table = Table(journal)
    killer = None
    if kill is not None and not kill.running:
        killer = threading.Timer(kill.after_s, _kill, (table.proc,))
        killer.start()
    t0 = time.monotonic()
    done = False
    try:
        seq = table.ready()
        if seq is None:
            figures.startup_kills += 1
            return False
        if kill is not None and kill.running:
            killer = threading.Timer(kill.after_s, _kill, (table.proc,))
            killer.start()
        if before:
            figures.restarts += 1
            status = table.send("status").split()
            if len(status) == 4:
                expected = model_clock(before, plan)
                error = max(abs(int(status[2 + s]) - expected[s]) for s in (0, 1))
                figures.clock_checks += 1
                figures.clock_error_ns_max = max(figures.clock_error_ns_max, error)
            answer = table.send("arbiter resume")
            if not answer.startswith("ack"):
                return False
            acked.append(Acked(None, "arbiter resume", seq, int(answer.split()[1])))
            seq = int(answer.split()[1])
        for step in plan.steps[start:]:
            if step.seat is not None:
                table.pace(step.seat)
            answer = table.send(step.line)
            if answer.startswith("error"):
                raise RuntimeError(f"the table refused {step.line!r}: {answer.strip()}")
            if not answer.startswith("ack"):
                return False
            if step.seat is not None:
                table.last_press[step.seat] = time.monotonic_ns()
            new = int(answer.split()[1])
            acked.append(Acked(step.tag, step.line, seq, new))
            figures.acked += 1
            seq = new
        done = True
        return True
    finally:
        if killer is not None:
            killer.cancel()
            killer.join()
        if done or table.proc.poll() is None:
            table.close()
        else:
            table.proc.wait()
            table.close()
        if table.proc.returncode == -signal.SIGKILL:
            figures.kills += 1
        elif not done:
            # Not our kill: the table failed. Stop rather than loop on it.
            table.stderr.seek(0)
            tail = table.stderr.read()[-2000:]
            table.stderr.close()
            raise RuntimeError(f"the table exited with {table.proc.returncode}:\n{tail}")
        table.stderr.close()
        figures.round_s.append(time.monotonic() - t0)


def _kill(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)


def check_match(journal: Path, plan: Plan, reference: list[Any], acked: list[Acked],
                figures: Figures, keep: Path | None = None) -> None:
    """Count what the match lost or changed; copy its journal to ``keep`` if it differs."""
    events = journal_events(journal)
    seqs = [e.seq for e in events]
    if seqs != list(range(1, len(events) + 1)):
        figures.lost_events += 1
    for a in acked:
        window = events[a.after:a.seq]  # seq n is events[n - 1]
        if a.tag is None:
            found = any(e.kind == "arbiter" and e.payload.get("action") == "resume" for e in window)
        else:
            found = any(e.payload.get("tag") == a.tag for e in window)
        if not found:
            figures.lost_events += 1
    from pegwatch.device.table.program import replay_journal

    got = verdicts(events)
    mismatches = replay_journal(journal).mismatches
    if got != reference:
        figures.verdicts_differ += 1
        first = next((i for i, (a, b) in enumerate(zip(got, reference, strict=False)) if a != b),
                     min(len(got), len(reference)))
        print(f"{journal.name}: verdict {first + 1} differs from the uninterrupted run: "
              f"{got[first] if first < len(got) else None} != "
              f"{reference[first] if first < len(reference) else None}", file=sys.stderr)
    if mismatches:
        figures.replay_mismatches += 1
        print(f"{journal.name}: replay: {mismatches[0]}", file=sys.stderr)
    if (got != reference or mismatches) and keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        for suffix in ("", "-wal", "-shm"):
            side = Path(str(journal) + suffix)
            if side.exists():
                shutil.copy(side, keep / side.name)
    figures.matches += 1


def reference_verdicts(plan: Plan, directory: Path, name: str) -> list[Any]:
    """The verdicts of the script played once, without a kill."""
    journal = directory / f"{name}.sqlite"
    figures = Figures()
    while not play_round(journal, plan, figures, [], None):
        pass
    return verdicts(journal_events(journal))


def run(kills: int, seed: int, plans: int, window_s: float, workdir: Path,
        startup_share: float = 0.2, keep: Path | None = None) -> dict[str, Any]:
    rng = random.Random(seed)
    pool = [make_plan(random.Random(rng.random()), i) for i in range(plans)]
    references: dict[int, list[Any]] = {}
    figures = Figures()
    t0 = time.monotonic()
    match = 0
    while True:
        index = match % len(pool)
        plan = pool[index]
        if index not in references:
            references[index] = reference_verdicts(plan, workdir, f"reference{index}")
        journal = workdir / f"match{match}.sqlite"
        acked: list[Acked] = []
        complete = False
        while not complete:
            kill = None
            if figures.kills < kills:
                # Mostly while the table plays; one in five during start-up and replay.
                running = rng.random() >= startup_share
                kill = Kill(rng.uniform(0.0, window_s if running else 0.6), running)
            complete = play_round(journal, plan, figures, acked, kill)
        check_match(journal, plan, references[index], acked, figures, keep)
        for suffix in ("", "-wal", "-shm"):
            Path(str(journal) + suffix).unlink(missing_ok=True)
        match += 1
        if figures.kills >= kills:
            break
    seconds = time.monotonic() - t0
    rounds = sorted(figures.round_s)
    return {
        "kills": figures.kills,
        "lost_events": figures.lost_events,
        "clock_error_ms_max": round(figures.clock_error_ns_max / MS, 6),
        "verdicts_differ": figures.verdicts_differ,
        "replay_mismatches": figures.replay_mismatches,
        "matches": figures.matches,
        "restarts": figures.restarts,
        "clock_checks": figures.clock_checks,
        "startup_kills": figures.startup_kills,
        "acked_commands": figures.acked,
        "round_ms_median": round(1000 * rounds[len(rounds) // 2], 1) if rounds else 0.0,
        "seconds": round(seconds, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=1000, help="SIGKILLs in all (default 1000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plans", type=int, default=6, help="distinct scripted matches (default 6)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="copy the journals of matches that differ into this folder")
    parser.add_argument("--window", type=float, default=0.5,
                        help="a kill comes uniformly within this many seconds of the table's "
                             "ready line (default 0.5); one kill in five lands in start-up instead")
    args = parser.parse_args(argv)
    if args.kills < 0 or args.plans < 1 or args.window <= 0:
        parser.error("--kills >= 0, --plans >= 1 and --window > 0")
    with tempfile.TemporaryDirectory(prefix="pegwatch-crash-") as tmp:
        result = run(args.kills, args.seed, args.plans, args.window, Path(tmp), keep=args.keep)
    print(f"kills: {result['kills']} (of which {result['startup_kills']} before the table was ready), "
          f"{result['restarts']} restarts on a journal, {result['matches']} matches")
    print(f"acknowledged commands: {result['acked_commands']}, lost: {result['lost_events']}")
    print(f"restored clock vs the journal: {result['clock_checks']} checks, "
          f"max error {result['clock_error_ms_max']} ms")
    print(f"matches whose verdicts differ from an uninterrupted run: {result['verdicts_differ']}; "
          f"replay mismatches: {result['replay_mismatches']}")
    print(f"{result['seconds']} s, a round {result['round_ms_median']} ms (median)")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
