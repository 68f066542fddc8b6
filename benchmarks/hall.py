"""Load and fault benchmark of the tournament hall: N tables, one broker, one hub, one browser page.

* **Tables**: N table programs on loopback (default 500), each with its own
  journal file in a temporary folder, published through the REAL table-side
  outbox and publisher (``TableLink``), split over worker processes
  (benchmarks/hall_tables.py). Each plays a scripted MSO match in the run's
  time (two games: three results) and publishes its state at 2 Hz.
* **Broker**: a real Mosquitto (``MosquittoBroker``: the hall's users and ACL).
* **Hub**: the real ``pegwatch hub`` command in a subprocess.
* **Page**: Debian's chromium (playwright, headless) on the spectators'
  page ``/hall``; an init script wraps ``EventSource`` so every ``table``
  message of the page's own live stream is stamped with ``performance.now()``
  on arrival, before the page's script draws it.

Latency: from the monotonic ns a table stamped just before an action to the
moment the page first receives that table with a journal ``seq`` at least the
action's. The page's ``performance.now()`` is mapped onto ``time.monotonic_ns()``
by bracketing each read of it (the narrowest bracket wins; both are monotonic
clocks of this machine; no wall clock). Percentiles are over the actions sent
outside the fault windows (a fault and ``--settle-s`` after it), since an
action sent while the broker is away arrives when it is back by design;
``p99_ms_with_faults`` and ``max_ms`` include them.

Faults (unless ``--no-faults``): 10% of the tables drop their connection for
``--drop-s`` (their network loop held and the socket shut: the broker says
their last will), the broker stopped for ``--broker-down`` seconds and started
again, the hub killed with -9 and started again. At the end every table's
outbox is drained and the hub's store is read: every result and event sent
must be stored exactly once.

Run: ``.venv/bin/python benchmarks/hall.py [--tables 500] [--duration 240]
[--no-faults] [--broker-down 60] [--drop-s 30] [--no-hub-kill] [--workers W]``;
``--find-max`` finds the largest table count with p95 <= 1 s (no faults; each step starts once the
machine is idle again).
The last line is ONE JSON object of named numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from hall_tables import worker  # noqa: E402

from pegwatch.hub.broker import HUB_USER, MosquittoBroker, free_port, table_user  # noqa: E402

TOURNAMENT = "bench"
TABLES_PER_WORKER = 100
ARRIVALS_JS = """
(() => {
  window.__arrivals = [];
  const last = {};
  const Original = window.EventSource;
  function Stamped(url, options) {
    const source = new Original(url, options);
    source.addEventListener("table", (e) => {
      const at = performance.now();
      let t;
      try { t = JSON.parse(e.data); } catch (x) { return; }
      if (t.seq === null || t.seq === undefined) return;
      if (last[t.table] === undefined || t.seq > last[t.table]) {
        last[t.table] = t.seq;
        window.__arrivals.push([t.table, t.seq, at]);
      }
    });
    return source;
  }
  Stamped.prototype = Original.prototype;
  window.EventSource = Stamped;
})();
"""
PULL_JS = "() => { const a = window.__arrivals || []; window.__arrivals = []; return [performance.timeOrigin, performance.now(), a]; }"


def log(text: str) -> None:
    print(text, flush=True)


class Hub:
    """``pegwatch hub`` as a subprocess; :meth:`kill` (-9) and :meth:`start` again on the same port and store."""

    def __init__(self, broker: MosquittoBroker, directory: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.db = directory / "hall.sqlite"
        self.cmd = [sys.executable, "-c", "import sys; from pegwatch.device.cli import main; sys.exit(main())",
                    "hub", "--broker", broker.url, "--db", str(self.db), "--http", f"127.0.0.1:{self.port}",
                    "--tournament", TOURNAMENT, "--password-file", str(broker.password_file(HUB_USER))]
        self.log = directory / "hub.log"
        self.process: subprocess.Popen[bytes] | None = None
        self.cpu_s_before = 0.0  # CPU seconds of the hubs killed before this one

    def start(self) -> None:
        import httpx

        with self.log.open("ab") as out:
            self.process = subprocess.Popen(self.cmd, stdout=out, stderr=subprocess.STDOUT,
                                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"pegwatch hub ended: {self.log.read_text(errors='replace')[-2000:]}")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{self.url}/api/counters", timeout=2).status_code == 200:
                    return
            time.sleep(0.1)
        raise SystemExit("pegwatch hub did not answer in 60 s")

    def cpu_s(self) -> float:
        """CPU seconds (user + system, all threads) of this hub and those before it."""
        if self.process is None:
            return self.cpu_s_before
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return self.cpu_s_before
        return self.cpu_s_before + (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mb(self) -> float:
        if self.process is None:
            return 0.0
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def kill(self) -> None:
        assert self.process is not None
        self.cpu_s_before = self.cpu_s()
        self.process.kill()
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Page:
    """The spectators' page in headless chromium, its live stream's arrivals mapped onto monotonic ns."""

    def __init__(self, url: str) -> None:
        from playwright.sync_api import sync_playwright

        chromium = shutil.which("chromium") or "/usr/bin/chromium"
        self._pw = sync_playwright().start()
        self.browser = self._pw.chromium.launch(executable_path=chromium, headless=True,
                                                args=["--no-sandbox", "--disable-dev-shm-usage"])
        context = self.browser.new_context(viewport={"width": 1280, "height": 800})
        context.add_init_script(ARRIVALS_JS)
        self.page = context.new_page()
        self.page.goto(url + "/hall")
        self.page.wait_for_selector('#live[data-state="open"]', timeout=60_000)
        self.offsets: dict[float, tuple[int, int]] = {}  # timeOrigin -> (bracket ns, offset ns)
        self.arrivals: list[tuple[str, int, int, float]] = []  # (table, seq, page ns, its timeOrigin)
        self.reloads = 0

    def pull(self) -> None:
        before = time.monotonic_ns()
        origin, now_ms, batch = self.page.evaluate(PULL_JS)
        after = time.monotonic_ns()
        bracket, offset = after - before, (before + after) // 2 - int(now_ms * 1e6)
        if origin not in self.offsets:
            self.reloads += len(self.offsets) > 0
        if origin not in self.offsets or bracket < self.offsets[origin][0]:
            self.offsets[origin] = (bracket, offset)
        # Arrivals are mapped at the end, with the narrowest bracket of their document.
        self.arrivals.extend((str(t), int(seq), int(at * 1e6), origin) for t, seq, at in batch)

    def mapped(self) -> list[tuple[str, int, int]]:
        """(table, seq, monotonic ns of its arrival at the page)."""
        return [(t, seq, at + self.offsets[origin][1]) for t, seq, at, origin in self.arrivals]

    def bracket_ms(self) -> float:
        return max((b for b, _ in self.offsets.values()), default=0) / 1e6

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.browser.close()
        with contextlib.suppress(Exception):
            self._pw.stop()


def _ms(value: float) -> float | None:
    """Rounded, or None (JSON null) where there was nothing to measure."""
    return None if value != value else round(value, 1)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


def latencies(sent: dict[str, list[tuple[int, int, int]]], arrivals: list[tuple[str, int, int]],
              windows: list[tuple[int, int]]) -> tuple[list[float], list[float], int]:
    """(ms of the actions played on time outside fault windows, ms of all, actions never seen on the page)."""
    by_table: dict[str, list[tuple[int, int]]] = {}
    for table, seq, at in arrivals:
        by_table.setdefault(table, []).append((at, seq))
    calm, everything, unseen = [], [], 0
    for table, actions in sent.items():
        seen = sorted(by_table.get(table, []))
        for seq, t0, late in actions:
            arrival = next((at for at, s in seen if s >= seq and at >= t0), None)
            if arrival is None:
                unseen += 1
                continue
            ms = (arrival - t0) / 1e6
            everything.append(ms)
            if not late and not any(a <= t0 <= b for a, b in windows):
                calm.append(ms)
    return calm, everything, unseen


def to_hub(sent: dict[str, list[tuple[int, int, int]]], matches: dict[str, str], received: dict[str, int],
           windows: list[tuple[int, int]]) -> list[float]:
    """ms from an action to the hub's receipt of its last event (the store's rx_ns), same filter as the page's."""
    out = []
    for table, actions in sent.items():
        for seq, t0, late in actions:
            rx = received.get(f"{matches[table]}:{seq}")
            if rx is not None and not late and not any(a <= t0 <= b for a, b in windows):
                out.append((rx - t0) / 1e6)
    return out


def received_ns(db: Path) -> dict[str, int]:
    """event id -> the hub's time.monotonic_ns() at its receipt."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)) as con:
        return {i: int(rx) for i, rx in con.execute("SELECT id, MIN(rx_ns) FROM messages WHERE kind = 'event' GROUP BY id")}


def stored_ids(db: Path) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """(result id -> rows, event id -> rows, counters) in the hub's store."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)) as con:
        results: dict[str, int] = {}
        events: dict[str, int] = {}
        for kind, ident, n in con.execute("SELECT kind, id, COUNT(*) FROM messages GROUP BY kind, id"):
            (results if kind == "result" else events if kind == "event" else {})[ident] = n
        counters = dict(con.execute("SELECT name, count FROM counters"))
    return results, events, counters


def run(args: argparse.Namespace, tables: int, *, faults: bool) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="pegwatch-hall-bench-", dir=args.tmp))
    names = [str(i) for i in range(1, tables + 1)]
    load_before = os.getloadavg()
    log(f"hall benchmark: {tables} tables, {args.duration:.0f} s, faults {'on' if faults else 'off'}, "
        f"load average {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f} on {os.cpu_count()} cores")
    broker = MosquittoBroker(tables=names, tournament=TOURNAMENT, directory=workdir / "broker").start()
    hub = Hub(broker, workdir)
    page: Page | None = None
    procs: list[Any] = []
    conns: list[Any] = []
    try:
        hub.start()
        page = Page(hub.url) if not args.no_browser else None
        n_workers = args.workers or max(1, -(-tables // TABLES_PER_WORKER))
        ctx = mp.get_context("spawn")
        play_s = args.duration * 0.8
        for w in range(n_workers):
            share = [(n, str(workdir / f"table-{n}.sqlite"), str(broker.password_file(table_user(n))))
                     for n in names[w::n_workers]]
            parent, child = ctx.Pipe()
            p = ctx.Process(target=worker, args=(child, share, broker.url, TOURNAMENT, play_s, w,
                                                 args.table_poll_s, args.tables_nice), daemon=True)
            p.start()
            procs.append(p)
            conns.append(parent)
        connected = sum(c.recv()[1] for c in conns)
        log(f"  {connected} of {tables} tables connected ({n_workers} worker processes); playing")
        t0 = time.monotonic()
        for c in conns:
            c.send(("go",))
        d = args.duration
        plan: list[tuple[float, str]] = []
        if faults:
            if args.drop_s > 0:
                plan.append((0.10 * d, "drop"))
            if args.broker_down > 0:
                plan.append((0.25 * d, "broker-stop"))
            if not args.no_hub_kill:
                plan.append((0.65 * d, "hub-kill"))
        windows: list[tuple[int, int]] = []
        settle = int(args.settle_s * 1e9)
        cpu_start, cpu_t0 = hub.cpu_s(), time.monotonic()
        rss_peak = 0.0
        broker_back_at: float | None = None
        while time.monotonic() - t0 < d:
            now = time.monotonic() - t0
            while plan and plan[0][0] <= now:
                _, what = plan.pop(0)
                at = time.monotonic_ns()
                if what == "drop":
                    dropped = random.Random(1).sample(names, max(1, tables // 10))
                    for c in conns:
                        c.send(("drop", dropped, args.drop_s))
                    windows.append((at, at + int(args.drop_s * 1e9) + settle))
                    log(f"  [{now:5.1f} s] {len(dropped)} tables drop their connection for {args.drop_s:g} s")
                elif what == "broker-stop":
                    broker.stop()
                    broker_back_at = time.monotonic() + args.broker_down
                    log(f"  [{now:5.1f} s] broker stopped for {args.broker_down:g} s")
                elif what == "hub-kill":
                    hub.kill()
                    hub.start()
                    windows.append((at, time.monotonic_ns() + settle))
                    log(f"  [{now:5.1f} s] hub killed with -9 and started again "
                        f"({(time.monotonic_ns() - at) / 1e9:.1f} s)")
            if broker_back_at is not None and time.monotonic() >= broker_back_at:
                stopped_at = time.monotonic_ns() - int(args.broker_down * 1e9)
                broker.start()
                windows.append((stopped_at, time.monotonic_ns() + settle))
                broker_back_at = None
                log(f"  [{time.monotonic() - t0:5.1f} s] broker started again")
            rss_peak = max(rss_peak, hub.rss_mb())
            if page is not None:
                page.pull()
            time.sleep(1.0)
        if broker_back_at is not None:
            broker.start()
        cpu_percent = 100 * (hub.cpu_s() - cpu_start) / (time.monotonic() - cpu_t0)
        log(f"  [{time.monotonic() - t0:5.1f} s] draining the tables' outboxes")
        for c in conns:
            c.send(("drain",))
        sent: dict[str, list[tuple[int, int, int]]] = {}
        matches: dict[str, str] = {}
        expected_results: list[str] = []
        expected_events: list[str] = []
        unsent = late = 0
        for c in conns:
            _, per_table = c.recv()
            for name, info in per_table.items():
                sent[name] = [(int(a), int(b), int(c)) for a, b, c in info["sent"]]
                matches[name] = info["match"]
                expected_results += info["results"]
                expected_events += info["events"]
                unsent += info["unsent"]
                late += info["late"]
        deadline = time.monotonic() + args.settle_timeout
        while True:
            results, events, counters = stored_ids(hub.db)
            if (set(expected_results) <= results.keys() and set(expected_events) <= events.keys()) \
                    or time.monotonic() > deadline:
                break
            if page is not None:
                page.pull()
            time.sleep(0.5)
        if page is not None:
            page.pull()
        calm, everything, unseen = latencies(sent, page.mapped() if page else [], windows)
        hub_ms = to_hub(sent, matches, received_ns(hub.db), windows)
        load_after = os.getloadavg()
        out = {
            "tables": tables,
            "p50_ms": _ms(percentile(calm, 50)),
            "p95_ms": _ms(percentile(calm, 95)),
            "p99_ms": _ms(percentile(calm, 99)),
            "p99_ms_with_faults": _ms(percentile(everything, 99)),
            "max_ms": _ms(max(everything, default=float("nan"))),
            "latency_samples": len(calm),
            "p50_ms_to_hub": _ms(percentile(hub_ms, 50)),
            "p95_ms_to_hub": _ms(percentile(hub_ms, 95)),
            "actions_unseen_on_page": unseen,
            "hub_cpu_percent": round(cpu_percent, 1),
            "hub_rss_mb": round(rss_peak, 1),
            "results_sent": len(expected_results),
            "results_stored": len(set(expected_results) & results.keys()),
            "lost": len(set(expected_results) - results.keys()),
            "duplicated": sum(n - 1 for n in results.values()),
            "events_sent": len(expected_events),
            "events_lost": len(set(expected_events) - events.keys()),
            "events_duplicated": sum(n - 1 for n in events.values()),
            "copies_ignored_by_id": counters.get("duplicate_results", 0) + counters.get("duplicate_events", 0),
            "outbox_unsent_at_end": unsent,
            "actions_played_late": late,
            "page_reloads": page.reloads if page else 0,
            "clock_bracket_ms": round(page.bracket_ms(), 2) if page else 0,
            "faults": int(faults),
            "load_avg_1m_before": round(load_before[0], 2),
            "load_avg_1m_after": round(load_after[0], 2),
            "cores": os.cpu_count(),
        }
        log(f"  latency at the page (browser, outside fault windows): p50 {out['p50_ms']} ms, "
            f"p95 {out['p95_ms']} ms, p99 {out['p99_ms']} ms over {len(calm)} actions; "
            f"with faults p99 {out['p99_ms_with_faults']} ms, max {out['max_ms']} ms; to the hub's store "
            f"p50 {out['p50_ms_to_hub']} ms, p95 {out['p95_ms_to_hub']} ms")
        log(f"  hub: {out['hub_cpu_percent']} % CPU, {out['hub_rss_mb']} MB RSS; results sent "
            f"{out['results_sent']}, stored {out['results_stored']}, lost {out['lost']}, duplicated "
            f"{out['duplicated']}; events lost {out['events_lost']}")
        return out
    finally:
        for c in conns:
            with contextlib.suppress(Exception):
                c.send(("close",))
        for p in procs:
            p.join(timeout=60)
            if p.is_alive():
                p.kill()
        if page is not None:
            page.close()
        hub.stop()
        broker.close()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def _cpu_idle(seconds: float) -> float:
    """The share of the machine's CPU time that was idle over the next ``seconds``."""
    def sample() -> tuple[int, int]:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
        return fields[3] + fields[4], sum(fields)  # idle + iowait, all
    idle0, total0 = sample()
    time.sleep(seconds)
    idle1, total1 = sample()
    return (idle1 - idle0) / max(1, total1 - total0)


def wait_calm(*, idle: float = 0.9, timeout_s: float = 180.0) -> float:
    """Wait until the machine is idle again (what the last step left, its tables' processes and
    the browser, has wound down), up to ``timeout_s``; returns the last idle share seen."""
    deadline = time.monotonic() + timeout_s
    share = _cpu_idle(2.0) if os.path.exists("/proc/stat") else 1.0
    while share < idle and time.monotonic() < deadline:
        share = _cpu_idle(2.0)
    return share


def find_max(args: argparse.Namespace) -> dict[str, Any]:
    """Double the table count while p95 <= 1 s, then halve the gap a few times; each step starts
    on a calm machine, not in what the last one left."""
    ok, bad, n = 0, 0, args.tables
    steps = []
    while True:
        log(f"find-max: {n} tables next; the machine was {100 * wait_calm():.0f}% idle at the start")
        r = run(args, n, faults=False)
        good = r["p95_ms"] is not None and r["p95_ms"] <= 1000 and r["lost"] == 0
        steps.append({"tables": n, "p95_ms": r["p95_ms"], "ok": good})
        if good:
            ok = n
            if bad == 0:
                n *= 2
                if n > args.max_tables:
                    break
                continue
        else:
            bad = n
        if bad - ok <= max(25, ok // 8):
            break
        n = (ok + bad) // 2 if ok else max(1, bad // 2)
    return {"max_tables_p95_le_1s": ok, "first_failing": bad, "steps": steps, "duration_s": args.duration,
            "load_avg_1m": round(os.getloadavg()[0], 2), "cores": os.cpu_count()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", type=int, default=500)
    p.add_argument("--duration", type=float, default=240.0, help="seconds of play (the matches fit in 80%%)")
    p.add_argument("--no-faults", action="store_true")
    p.add_argument("--broker-down", type=float, default=60.0, help="seconds the broker is stopped (0: never)")
    p.add_argument("--drop-s", type=float, default=30.0, help="seconds 10%% of the tables are cut off (0: never)")
    p.add_argument("--no-hub-kill", action="store_true")
    p.add_argument("--settle-s", type=float, default=10.0, help="after a fault, seconds left out of the percentiles")
    p.add_argument("--settle-timeout", type=float, default=180.0, help="seconds to wait for the hub to store all")
    p.add_argument("--workers", type=int, default=0, help=f"table processes (default: one per {TABLES_PER_WORKER})")
    p.add_argument("--table-poll-s", type=float, default=None,
                   help="the tables' publisher idle round (default: a real table's)")
    p.add_argument("--tables-nice", type=int, default=0,
                   help="niceness added to the table processes (they stand for Pis of their own; "
                        "10 lets the hub, the broker and the browser go first on this one machine)")
    p.add_argument("--no-browser", action="store_true", help="no page: no latency figures")
    p.add_argument("--find-max", action="store_true", help="the largest table count with p95 <= 1 s")
    p.add_argument("--max-tables", type=int, default=4000)
    p.add_argument("--tmp", default=None, help="where the journals go (default: the system's temp folder)")
    p.add_argument("--keep", action="store_true", help="keep the journals, the store and the logs")
    args = p.parse_args(argv)
    if args.tables < 1 or args.duration <= 0:
        p.error("--tables and --duration must be positive")
    out = find_max(args) if args.find_max else run(args, args.tables, faults=not args.no_faults)
    print(json.dumps(out, separators=(", ", ": ")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
