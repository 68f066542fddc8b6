"""Simulated hall tables for benchmarks/hall.py: real table programs published through the real link.

Each table is a :class:`~pegwatch.device.table.program.TableProgram` on the
real monotonic clock with its own journal file, linked to the broker by
:class:`~pegwatch.device.table.hall.wiring.TableLink` (the outbox in the
journal's file, the paho publisher, the state offered when the program
changed and twice a second), exactly as ``pegwatch run`` with ``[hall]``
links a table. A worker process holds a share of the tables and
plays a scripted MSO match (two games: three results) at each, one action
at a time, stamping every action with ``time.monotonic_ns()`` before it and
the journal seq it ended at: the event's send time for the latency.

The worker talks to the benchmark over a pipe: ``go`` (start playing),
``drop`` (cut some tables off, as a pulled cable: their sockets shut and
their reconnections refused; the broker says their last will; they come
back after the given seconds), ``drain`` (stop playing, wait until every outbox is empty,
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
#: The least seconds between two actions at a table: back to back, the table takes a press and a
#: reading too close together as one (the match would never end), as no player could press.
LATE_GAP_S = 0.5
ROWS_2 = ((("blue", "blue", "red", "red"), 0, 2), (SECRET_2, 4, 0))


@dataclass
class SimTable:
    name: str
    program: TableProgram
    link: TableLink
    actions: list[Callable[[], None]] = field(default_factory=list)
    #: (journal seq after the action, monotonic ns before it, 1 if played late: after the run's time)
    sent: list[tuple[int, int, int]] = field(default_factory=list)
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

    def act(self, *, late: bool = False) -> None:
        t0 = time.monotonic_ns()
        self.actions.pop(0)()  # its step wakes the publisher, as at a real table
        self.sent.append((self.program.journal.last_seq, t0, int(late)))

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


def _dead_port() -> int:
    with socket.socket() as s:  # a port nobody listens on: connecting there is refused
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _drop(table: SimTable, dead_port: int) -> int:
    """Cut the table off as a pulled cable would: its socket shut, and until :func:`_restore` every
    reconnection the publisher tries is refused. The broker says the table's last will."""
    client = table.link.publisher.client
    port = int(client._port)  # the harness's cut: paho keeps its route in _port
    client._port = dead_port
    sock = client.socket()
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
    return port


def _restore(table: SimTable, port: int) -> None:
    table.link.publisher.client._port = port  # the next try (1 to 4 s on) reaches the broker


def worker(conn: Any, tables: list[tuple[str, str, str]], broker: str, tournament: str, play_s: float,
           seed: int, poll_s: float | None = None, nice: int = 0) -> None:
    """One worker process: ``tables`` is ``[(name, journal path, password file), ...]``.

    ``poll_s``: the publisher's idle round (None: the table's own). ``nice``: added to the
    process's niceness (in a hall each table is a Pi of its own, not a share of the hub's CPU).
    """
    import os
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if nice:
        os.nice(nice)
    rng = random.Random(seed)
    sims: dict[str, SimTable] = {}
    for name, path, password_file in tables:
        program = TableProgram.open(Path(path), players=(f"W{name}", f"B{name}"), now_ns=time.monotonic_ns)
        settings = HallSettings(broker=broker, tournament=tournament, table=name, username=f"table-{name}",
                                password_file=Path(password_file))
        rounds = {} if poll_s is None else {"poll_s": poll_s}
        link = TableLink(program, settings, keepalive_s=10, reconnect_s=(1, 4), **rounds).start()
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
    restore: list[tuple[float, SimTable, int]] = []
    dead_port = _dead_port()
    playing = True
    while playing:
        now = time.monotonic()
        for s in sims.values():
            if s.actions and s.next_at <= now:
                s.act()
                s.next_at = max(now + LATE_GAP_S, s.next_at + s.interval * rng.uniform(0.8, 1.2))
        for item in [r for r in restore if r[0] <= now]:
            restore.remove(item)
            _restore(item[1], item[2])
        pending = [s.next_at for s in sims.values() if s.actions] + [r[0] for r in restore]
        wait = max(0.0, min(pending, default=now + 0.2) - time.monotonic())
        if conn.poll(min(wait, 0.2)):
            message = conn.recv()
            if message[0] == "drop":
                for name in message[1]:
                    if name in sims:
                        port = _drop(sims[name], dead_port)
                        restore.append((time.monotonic() + message[2], sims[name], port))
            elif message[0] == "drain":
                playing = False
    for _, s, port in restore:
        _restore(s, port)
    # A table the machine's load held back finishes its match now: every table gives its three results.
    late = {name: len(s.actions) for name, s in sims.items()}
    # Round by round, half a second apart at each table, as players press (a burst would be debounced).
    while any(s.actions for s in sims.values()):
        round_at = time.monotonic()
        for s in sims.values():
            if s.actions:
                s.act(late=True)
        time.sleep(max(0.0, LATE_GAP_S - (time.monotonic() - round_at)))
    deadline = time.monotonic() + 300
    waiting = list(sims.values())
    while waiting and time.monotonic() < deadline:
        for s in waiting:
            s.link.publisher.wake()
        time.sleep(0.5)
        waiting = [s for s in waiting if not s.link.outbox.caught_up()]
    out = {}
    for name, s in sims.items():
        events, results = s.expected()
        out[name] = {"sent": s.sent, "match": s.program.journal.match_id, "events": events, "results": results, "unsent": s.link.publisher.unsent(),
                     "late": late[name]}
    conn.send(("drained", out))
    conn.recv()
    for s in sims.values():
        s.link.close(drain_s=0.5)
        s.program.close()
    conn.send(("closed",))
