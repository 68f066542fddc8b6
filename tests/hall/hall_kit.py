"""Real MQTT clients for the hall's tests: connect as a broker user, collect what arrives, wait for it.

Waiting is always for a condition with a generous timeout, never for a fixed time.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from pegwatch.hub.broker import MosquittoBroker

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
                 subscribe: tuple[str, ...] = (), client_id: str | None = None) -> None:
        self.messages: list[Received] = []
        self.pubacks: dict[int, int] = {}
        self.connect_reason: int | None = None
        self._lock = threading.Lock()
        self._subscribe = subscribe
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id or f"test-{user}-{next(_ids)}",
                                  protocol=mqtt.MQTTv5)
        self.client.username_pw_set(user, broker.password(user) if password is None else password)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.client.on_publish = self._on_publish
        self.subscribed = threading.Event()
        self.client.on_subscribe = lambda *_: self.subscribed.set()
        self.client.connect(broker.host, broker.port, keepalive=5)
        self.client.loop_start()

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        self.connect_reason = reason_code.value
        if reason_code.value == 0:
            for pattern in self._subscribe:
                client.subscribe(pattern, qos=1)
        else:
            client.disconnect()  # a refused login: no retries

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
