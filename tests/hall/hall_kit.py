"""Real MQTT clients for the hall's tests: connect as a broker user, collect what arrives, wait for it.

Waiting is always for a condition with a generous timeout, never for a fixed time.
"""

from __future__ import annotations

import itertools
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from pegwatch.device.table.hall.settings import HallSettings
from pegwatch.device.table.hall.wiring import TableLink
from pegwatch.device.table.program import TableProgram
from pegwatch.hub import wire
from pegwatch.hub.broker import MosquittoBroker, table_user
from pegwatch.simulation.demo import VirtualClock

TOURNAMENT = "mso"
TABLES = ("1", "2", "3", "4")
WAIT_S = 20.0
_ids = itertools.count(1)


def wait_until(condition: Callable[[], object], *, timeout: float = WAIT_S, what: str = "condition") -> None:
    """Poll ``condition`` until it is true; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.01)


@dataclass
class Received:
    topic: str
    payload: bytes
    retain: bool


class Listener:
    """A paho client (MQTT 5) that keeps every message it receives and every PUBACK reason."""

    def __init__(self, broker: MosquittoBroker, user: str, *, password: str | None = None,
                 subscribe: tuple[str, ...] = (), client_id: str | None = None,
                 persistent: bool = False, tls_ca=None) -> None:
        self.messages: list[Received] = []
        self.pubacks: dict[int, int] = {}
        self.connect_reason: int | None = None
        self._lock = threading.Lock()
        self._subscribe = subscribe
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id or f"test-{user}-{next(_ids)}",
                                  protocol=mqtt.MQTTv5)
        self.client.username_pw_set(user, broker.password(user) if password is None else password)
        if tls_ca is not None:
            self.client.tls_set(ca_certs=str(tls_ca))
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_publish = self._on_publish
        self.subscribed = threading.Event()
        self.client.on_subscribe = lambda *_: self.subscribed.set()
        props = None
        if persistent:  # the broker keeps the session and queues for it while away
            props = Properties(PacketTypes.CONNECT)
            props.SessionExpiryInterval = 3600
        self.client.reconnect_delay_set(1, 1)
        self.client.connect_async(broker.host, broker.port, keepalive=5, clean_start=not persistent,
                                  properties=props)
        self.client.loop_start()

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        self.connect_reason = reason_code.value
        if reason_code.value == 0:
            for pattern in self._subscribe:
                client.subscribe(pattern, qos=1)
        else:
            client.disconnect()  # a refused login: no retries
            client.loop_stop()

    def _on_message(self, client, userdata, message) -> None:
        with self._lock:
            self.messages.append(Received(message.topic, bytes(message.payload), bool(message.retain)))

    def _on_publish(self, client, userdata, mid, reason_code, properties) -> None:
        with self._lock:
            self.pubacks[mid] = reason_code.value

    def wait_connected(self) -> int:
        wait_until(lambda: self.connect_reason is not None, what="the broker's CONNACK")
        assert self.connect_reason is not None
        if self.connect_reason == 0 and self._subscribe:
            wait_until(self.subscribed.is_set, what="the SUBACK")
        return self.connect_reason

    def received(self, topic_end: str = "") -> list[Received]:
        with self._lock:
            return [m for m in self.messages if m.topic.endswith(topic_end)]

    def publish(self, topic: str, payload: bytes, *, qos: int = 1) -> int:
        info = self.client.publish(topic, payload, qos=qos)
        wait_until(lambda: info.mid in self.pubacks, what=f"the PUBACK of {topic}")
        return self.pubacks[info.mid]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def unique(self, topic_end: str) -> list[bytes]:
        """Payloads on topics ending so, each once, in order of first arrival."""
        seen: set[bytes] = set()
        out = []
        for m in self.received(topic_end):
            if m.payload not in seen:
                seen.add(m.payload)
                out.append(m.payload)
        return out

    def ids(self, topic_end: str = "/events") -> list[str]:
        """The ids of the events (or results) received, each once, in order of first arrival."""
        out: list[str] = []
        for payload in self.unique(topic_end):
            message = wire.parse_result(payload) if topic_end == "/results" else wire.parse_event(payload)
            if message.id not in out:
                out.append(message.id)
        return out


S = 1_000_000_000
MS = 1_000_000
SECRET = ("red", "green", "blue", "yellow")


class HallTable:
    """A table program on a virtual clock, published to ``broker`` as ``table`` through the real link."""

    def __init__(self, broker: MosquittoBroker, path, table: str = "1", *, start: bool = True,
                 clock: VirtualClock | None = None, max_bytes: int | None = None) -> None:
        self.path = path
        self.table = table
        self.clock = clock or VirtualClock()
        self.program = TableProgram.open(path, players=("Ann", "Bob"), now_ns=self.clock, max_bytes=max_bytes)
        user = table_user(table)
        self.settings = HallSettings(broker=broker.url, tournament=TOURNAMENT, table=table, username=user,
                                     password_file=broker.password_file(user))
        self.link = TableLink(self.program, self.settings, keepalive_s=5, reconnect_s=(1, 1), poll_s=0.02)
        if start:
            self.link.start()
            if broker.is_running:
                # Ready as a table in the hall is: its commands reach it (its status says online).
                wait_until(self.link.publisher.subscribed.is_set, what=f"table {table}'s subscription")

    def step(self, seconds: float = 0.2) -> None:
        self.clock.advance(int(seconds * S))
        self.program.step()

    def press(self, seat: int) -> None:
        self.step()
        self.program.press(seat)
        self.program.step()

    def reading(self, row: int, phase: str, guess=SECRET, black=0, white=0, status="ok", game=1) -> None:
        self.step()
        self.program.submit("reading", {
            "game": game, "row": row, "phase": phase, "guess": list(guess),
            "black": black, "white": white, "status": status, "confidence": 0.9, "frame_ns": self.clock(),
        })
        self.program.step()

    def secret(self, shield: str, code=SECRET, status="ok", game=1) -> None:
        self.step()
        self.program.submit("reading", {
            "game": game, "row": 0, "phase": "secret", "code": list(code), "shield": shield,
            "status": status, "confidence": 0.9, "frame_ns": self.clock(),
        })
        self.program.step()

    def row(self, row: int, guess, black: int, white: int) -> None:
        """Bob places and confirms a guess; Ann marks it."""
        self.press(1)
        self.reading(row, "guess", guess)
        self.press(0)
        self.reading(row, "marks", guess, black, white)

    def events(self, kind: str | None = None):
        return list(self.program.journal.events(kinds=None if kind is None else (kind,)))

    def expected_ids(self) -> list[str]:
        """The ids of every journal event the hall should have (not ticks, not acks)."""
        match = self.program.journal.match_id
        return [wire.event_id(match, e.seq) for e in self.events() if e.kind not in ("tick", "hall_ack")]

    def hang(self) -> None:
        """The table stops dead, with no goodbye: its link's thread is held (waiting for the
        program's lock, as behind a hung program) and its socket cut, so the broker says its
        last will and nothing reconnects until :meth:`close`."""
        self.program._lock.acquire()
        self._hung = True
        self.link._program_changed()  # the next round reads the state: it waits for the lock
        time.sleep(0.3)
        sock = self.link.publisher.client.socket()
        assert sock is not None
        sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        if getattr(self, "_hung", False):
            self._hung = False
            self.program._lock.release()
        try:
            self.link.close()
        finally:
            self.program.close()


# Game 1 of the scripted table: Ann sets SECRET, Bob solves it on row 3.
GAME_1 = (
    (("blue", "blue", "red", "red"), 0, 2),
    (("red", "yellow", "green", "blue"), 1, 3),
    (SECRET, 4, 0),
)


def play_game_1(t: HallTable, *, upto: int = 3) -> None:
    """Start game 1 (the secret seen under the shield) and play ``upto`` of its rows."""
    t.press(0)
    t.secret("closed")
    for i, (guess, black, white) in enumerate(GAME_1[:upto], start=1):
        t.row(i, guess, black, white)
