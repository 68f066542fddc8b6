"""Simulated hall tables for benchmarks/hall.py: real table programs published through the real link.

Each table is a :class:`~pegwatch.device.table.program.TableProgram` on the
real monotonic clock with its own journal file, linked to the broker by
:class:`~pegwatch.device.table.hall.wiring.TableLink` (the outbox in the
journal's file, the paho publisher, the state offered ten times a second and
published on change and twice a second), exactly as ``pegwatch run`` with
``[hall]`` links a table. A worker process holds a share of the tables and
plays a scripted MSO match (two games: three results) at each, one action
at a time, stamping every action with ``time.monotonic_ns()`` before it and
the journal seq it ended at: the event's send time for the latency.

The worker talks to the benchmark over a pipe: ``go`` (start playing),
``drop`` (hold some tables' network loops and shut their sockets, as a
pulled cable; the broker says their last will; they come back after the
given seconds), ``drain`` (stop playing, wait until every outbox is empty,
answer with what was sent), ``close``.
"""

from __future__ import annotations

import contextlib
import random
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pegwatch.device.table.hall.settings import HallSettings
from pegwatch.device.table.hall.wiring import TableLink
from pegwatch.device.table.program import TableProgram
from pegwatch.hub import wire

SECRET_1 = ("red", "green", "blue", "yellow")
SECRET_2 = ("yellow", "red", "green", "blue")
#: (guess, black, white): game 1 solved on row 3, game 2 on row 2; the marks are right.
ROWS_1 = ((("blue", "blue", "red", "red"), 0, 2), (("red", "yellow", "green", "blue"), 1, 3), (SECRET_1, 4, 0))
ROWS_2 = ((("blue", "blue", "red", "red"), 0, 2), (SECRET_2, 4, 0))


@dataclass
class SimTable:
    name: str
    program: TableProgram
    link: TableLink
    actions: list[Callable[[], None]] = field(default_factory=list)
    #: (journal seq after the action, monotonic ns before it)
    sent: list[tuple[int, int]] = field(default_factory=list)
    next_at: float = 0.0
    interval: float = 1.0

    def press(self, seat: int) -> None:
        self.program.press(seat)
        self.program.step()

    def reading(self, game: int, row: int, phase: str, guess: tuple[str, ...] = (), black: int = 0,
                white: int = 0, code: tuple[str, ...] | None = None, shield: str = "closed") -> None:
        payload: dict[str, Any] = {"game": game, "row": row, "phase": phase, "guess": list(guess), "black": black,
                                   "white": white, "status": "ok", "confidence": 0.9,
                                   "frame_ns": time.monotonic_ns()}
        if code is not None:
            payload.update(row=0, phase="secret", shield=shield, code=list(code))
        self.program.submit("reading", payload)
        self.program.step()

    def script(self) -> list[Callable[[], None]]:
        """The match as actions: each is one press or one camera reading."""
        out: list[Callable[[], None]] = []
        for game, maker, breaker, secret, rows in ((1, 0, 1, SECRET_1, ROWS_1), (2, 1, 0, SECRET_2, ROWS_2)):
            out.append(lambda m=maker: self.press(m))
            out.append(lambda g=game, s=secret: self.reading(g, 0, "secret", code=s))
            for i, (guess, black, white) in enumerate(rows, start=1):
                out.append(lambda b=breaker: self.press(b))
                out.append(lambda g=game, i=i, q=guess: self.reading(g, i, "guess", q))
                out.append(lambda m=maker: self.press(m))
                out.append(lambda g=game, i=i, q=guess, b=black, w=white: self.reading(g, i, "marks", q, b, w))
            out.append(lambda g=game, s=secret: self.reading(g, 0, "secret", code=s, shield="open"))
        return out

    def act(self) -> None:
        t0 = time.monotonic_ns()
        self.actions.pop(0)()
        # No wake of the publisher: as at a real table, its pump finds the event on its next round.
        self.sent.append((self.program.journal.last_seq, t0))

    def expected(self) -> tuple[list[str], list[str]]:
        """The ids the hub must store: every event (not ticks, not acks) and every result."""
        match = self.program.journal.match_id or "unknown"
        events, results = [], []
        for e in self.program.journal.events():
            if e.kind in ("tick", "hall_ack"):
                continue
            events.append(wire.event_id(match, e.seq))
            if e.kind == "verdict" and e.payload.get("what") in ("game", "match"):
                results.append(wire.event_id(match, e.seq))
        return events, results


def _drop(table: SimTable) -> None:
    client = table.link.publisher.client
    client.loop_stop()
    sock = client.socket()
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def worker(conn: Any, tables: list[tuple[str, str, str]], broker: str, tournament: str, play_s: float,
           seed: int) -> None:
    """One worker process: ``tables`` is ``[(name, journal path, password file), ...]``."""
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    rng = random.Random(seed)
    sims: dict[str, SimTable] = {}
    for name, path, password_file in tables:
        program = TableProgram.open(Path(path), players=(f"W{name}", f"B{name}"), now_ns=time.monotonic_ns)
        settings = HallSettings(broker=broker, tournament=tournament, table=name, username=f"table-{name}",
                                password_file=Path(password_file))
        link = TableLink(program, settings, keepalive_s=10, reconnect_s=(1, 4)).start()
        sim = SimTable(name, program, link)
        sim.actions = sim.script()
        sims[name] = sim
    deadline = time.monotonic() + 120
    while not all(s.link.publisher.connected.is_set() for s in sims.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    conn.send(("ready", sum(s.link.publisher.connected.is_set() for s in sims.values())))
    assert conn.recv()[0] == "go"
    start = time.monotonic()
    for s in sims.values():
        s.interval = play_s / len(s.actions)
        s.next_at = start + rng.uniform(0, s.interval)
    restore: list[tuple[float, SimTable]] = []
    playing = True
    while playing:
        now = time.monotonic()
        for s in sims.values():
            if s.actions and s.next_at <= now:
                s.act()
                s.next_at = max(now, s.next_at + s.interval * rng.uniform(0.8, 1.2))
        for at, s in [r for r in restore if r[0] <= now]:
            restore.remove((at, s))
            s.link.publisher.client.loop_start()  # paho finds the dead socket and reconnects
        pending = [s.next_at for s in sims.values() if s.actions] + [r[0] for r in restore]
        wait = max(0.0, min(pending, default=now + 0.2) - time.monotonic())
        if conn.poll(min(wait, 0.2)):
            message = conn.recv()
            if message[0] == "drop":
                for name in message[1]:
                    if name in sims:
                        _drop(sims[name])
                        restore.append((time.monotonic() + message[2], sims[name]))
            elif message[0] == "drain":
                playing = False
    for _, s in restore:
        s.link.publisher.client.loop_start()
    deadline = time.monotonic() + 180
    for s in sims.values():
        s.link.drain(max(1.0, deadline - time.monotonic()))
    out = {}
    for name, s in sims.items():
        events, results = s.expected()
        out[name] = {"sent": s.sent, "events": events, "results": results, "unsent": s.link.publisher.unsent(),
                     "left": len(s.actions)}
    conn.send(("drained", out))
    conn.recv()
    for s in sims.values():
        s.link.close(drain_s=0.5)
        s.program.close()
    conn.send(("closed",))
