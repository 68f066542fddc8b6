"""The table's MQTT client: the outbox drained to the broker, the live state, the hub's commands.

:class:`Publisher` owns a paho client (MQTT 5, paho 2's callback API) and
one thread, which does everything: it runs paho's network loop itself
(paho's documented external-loop calls, ``loop_read``, ``loop_write`` and
``loop_misc`` around one ``select``), connects and reconnects with a
growing delay (``reconnect_s``), and between two waits pumps: it moves the
journal's new events into the outbox, sends the unsent messages in order (at
most ``window`` in flight), marks each sent on its PUBACK, and publishes the
latest state offered (:meth:`offer_state`): at once when it changed, else
twice a second. One thread rather than paho's plus a pump's: each message
is written to the socket where it is made, with no thread woken to send it
(a hall benchmark runs hundreds of tables on one machine; a Pi has little
to spare). Nothing here waits on the clock thread, and the clock thread
never waits on the network: it only ever fills a slot or writes one byte to
wake the thread (:meth:`wake`).

The ``status`` topic says ``online`` (retained) on every connection; the
last will says ``offline`` when the connection dies, and :meth:`close`
says it on the way out. The session is kept by the broker
(``clean_start`` false, a week's expiry), so commands sent while the table
is away reach it when it is back. A command is handled on the thread
(``on_command``) before the broker gets its acknowledgement.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Final

from pegwatch.device.lifetime import Closeable
from pegwatch.device.table.hall.netloop import NetLoop
from pegwatch.device.table.hall.outbox import Build, Outbox
from pegwatch.device.table.hall.settings import HallSettings
from pegwatch.hub.wire import (
    Channel,
    ClockReading,
    State,
    Status,
    format_state,
    format_status,
    topic,
)

__all__ = ["Publisher"]

logger = logging.getLogger(__name__)

STATE_PERIOD_S: Final = 0.5
SESSION_EXPIRY_S: Final = 7 * 24 * 3600
#: PUBACK reasons worth a retry (quota exceeded, server busy); any other failure is final.
_RETRY_REASONS: Final = frozenset({0x97, 0x89})


class Publisher(Closeable):
    """Publishes the table's outbox and state to the hall's broker (see the module doc).

    ``build`` turns a journal event into its messages
    (:func:`~pegwatch.device.table.hall.messages.messages_for`); ``tick`` is
    called on the publisher's thread every round (the wiring offers the
    state there) and returns the seconds until it wants the next one, or
    None; the thread waits until then, ``poll_s`` at most, or until
    :meth:`wake`. ``on_command(topic, payload)`` gets each message on the
    table's ``commands`` topic, on the same thread.
    """

    def __init__(
        self,
        settings: HallSettings,
        outbox: Outbox,
        build: Build,
        *,
        match: str | None = None,
        on_command: Callable[[str, bytes], None] | None = None,
        tick: Callable[[], float | None] | None = None,
        keepalive_s: int = 30,
        reconnect_s: tuple[int, int] = (1, 30),
        poll_s: float = 0.05,
        window: int = 100,
        client_id: str | None = None,
    ) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        self.settings = settings
        self.outbox = outbox
        self.build = build
        self.match = match
        self.on_command = on_command
        self.tick = tick
        self.poll_s = poll_s
        self.window = window
        #: Messages the broker refused for good (ACL, format), logged each.
        self.refused = 0
        self.sent = 0
        self.connected = threading.Event()
        #: Set once the broker has the table's subscription to its commands (and ``online`` is said).
        self.subscribed = threading.Event()
        self._topics = {c: topic(settings.tournament, settings.table, c) for c in Channel}
        self._acks: queue.SimpleQueue[tuple[int, int]] = queue.SimpleQueue()
        self._inflight: dict[int, int] = {}  # paho mid -> outbox id
        self._last_sent_id = 0
        self._unsent_maybe = True
        self._generation = 0  # connections so far: a new one resends what was in flight
        self._seen_generation = 0
        self._state_slot: State | None = None
        self._state_sent: State | None = None
        self._state_sent_at = 0.0
        self._stop = threading.Event()
        self._now: queue.SimpleQueue[tuple[Channel, bytes]] = queue.SimpleQueue()  # publish_now's
        self._lock = threading.Lock()
        self._login_refused: str | None = None

        client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id or f"pegwatch-{settings.tournament}-{settings.table}",
            protocol=mqtt.MQTTv5,
        )
        client.username_pw_set(settings.username, settings.password())
        if settings.tls:
            client.tls_set(ca_certs=None if settings.ca_file is None else str(settings.ca_file))
        client.will_set(self._topics[Channel.STATUS], self._status(False), qos=1, retain=True)
        client.max_inflight_messages_set(window)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_publish = self._on_publish
        client.on_subscribe = self._on_subscribe
        client.on_message = self._on_message
        self.client = client
        props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
        props.SessionExpiryInterval = SESSION_EXPIRY_S
        host, port = settings.address
        client.connect_async(host, port, keepalive=keepalive_s, clean_start=False, properties=props)
        self._net = NetLoop(client, reconnect_s=reconnect_s, broker=f"the hall broker {settings.broker}")
        self._thread = threading.Thread(target=self._run, name="hall-publisher", daemon=True)

    def start(self) -> Publisher:
        self._thread.start()
        return self

    def _status(self, online: bool) -> bytes:
        return format_status(Status(self.settings.table, online, self.match))

    # -- paho's callbacks (on the thread, from NetLoop.run_once) ----------------------------

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            if self._login_refused != str(reason):
                logger.error("hall broker %s refused table %s: %s", self.settings.broker,
                             self.settings.table, reason)
            self._login_refused = str(reason)
            return
        self._login_refused = None
        self._net.accepted()
        logger.info("connected to the hall broker %s as table %s", self.settings.broker, self.settings.table)
        client.subscribe(self._topics[Channel.COMMANDS], qos=1)
        with self._lock:
            self._generation += 1
        self.connected.set()

    def _on_subscribe(self, client: Any, userdata: Any, mid: int, reasons: Any, properties: Any) -> None:
        if any(r.is_failure for r in reasons):
            logger.error("hall broker refused table %s its commands (%s)", self.settings.table,
                         ", ".join(str(r) for r in reasons))
        # Online once the commands can reach the table: the hub resends what waits when it says so.
        client.publish(self._topics[Channel.STATUS], self._status(True), qos=1, retain=True)
        self.subscribed.set()

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if self.connected.is_set() and not self._stop.is_set():
            logger.warning("hall broker connection lost (%s); the outbox keeps what is unsent", reason)
        self.connected.clear()
        self.subscribed.clear()

    def _on_publish(self, client: Any, userdata: Any, mid: int, reason: Any, properties: Any) -> None:
        self._acks.put((mid, int(reason.value)))

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        if self.on_command is None:
            return
        try:
            self.on_command(str(message.topic), bytes(message.payload))
        except Exception:  # a command must never take the connection down
            logger.exception("hall command on %s not handled", message.topic)

    # -- the thread ---------------------------------------------------------------------

    def offer_state(self, state: State) -> None:
        """The latest state (any thread); only the newest one waiting is sent."""
        self._state_slot = state
        if threading.get_ident() != self._thread.ident:  # on its own round it is sent in that round
            self._net.wake()

    def wake(self) -> None:
        """Look at the journal now rather than at the next round (any thread)."""
        self._net.wake()

    def _run(self) -> None:
        while not self._stop.is_set():
            wait = self.poll_s
            try:
                wait = min(wait, self.pump_once())
                self._net.run_once(wait)
            except Exception:  # the hall must never stop the table
                logger.exception("hall publisher round failed; trying again")
                self._stop.wait(1.0)
        self._farewell()

    def pump_once(self) -> float:
        """One round: tick, fill the outbox, take acknowledgements, send, publish the state.

        Returns the seconds the tick asked to wait (``poll_s`` when it asked nothing)."""
        hint = self.tick() if self.tick is not None else None
        wait = self.poll_s if hint is None else max(0.0, hint)
        while True:
            read = self.outbox.fill(self.build)
            self._unsent_maybe |= read > 0
            if read < 512:
                break
        self._take_acks()
        if not self.connected.is_set():
            return wait
        while not self._now.empty():
            channel, payload = self._now.get_nowait()
            self.client.publish(self._topics[channel], payload, qos=1)
        with self._lock:
            generation = self._generation
        if generation != self._seen_generation:
            # A new connection: whatever was in flight is sent again, in order.
            self._seen_generation = generation
            self._inflight.clear()
            self._last_sent_id = 0
            self._unsent_maybe = True
        if self._unsent_maybe:  # the outbox is asked only when it may hold something to send
            self._send()
        self._send_state()
        return wait

    def _take_acks(self) -> None:
        done: list[int] = []
        while True:
            try:
                mid, reason = self._acks.get_nowait()
            except queue.Empty:
                break
            item = self._inflight.pop(mid, None)
            if item is None:
                continue  # a status, a state, an evidence frame, or a resend's twin
            if reason < 0x80:
                done.append(item)
            elif reason in _RETRY_REASONS:
                self._last_sent_id = min(self._last_sent_id, item - 1)
                self._unsent_maybe = True
            else:
                self.refused += 1
                done.append(item)
                logger.error("the hall broker refused outbox message %d for good (reason %d)", item, reason)
        if done:
            self.outbox.mark_sent(done)
            self.sent += len(done)
            self._unsent_maybe = True  # room in the window, and a full outbox may read on

    def _send(self) -> None:
        room = self.window - len(self._inflight)
        if room <= 0:
            return
        items = self.outbox.unsent(after_id=self._last_sent_id, limit=room)
        # Asked again next round only if this one may have left some behind.
        self._unsent_maybe = len(items) >= room
        for item in items:
            info = self.client.publish(self._topics[item.channel], item.payload, qos=1)
            if info.rc != 0:
                logger.debug("publish of outbox message %d deferred (rc %s)", item.id, info.rc)
                self._unsent_maybe = True
                return
            self._inflight[info.mid] = item.id
            self._last_sent_id = item.id

    def _send_state(self) -> None:
        state = self._state_slot
        if state is None:
            return
        now = time.monotonic()
        sent = self._state_sent
        still = ClockReading(0, False)
        changed = sent is None or replace(state, clocks=(still, still)) != replace(sent, clocks=(still, still))
        if not changed and (state == sent or now - self._state_sent_at < STATE_PERIOD_S):
            return
        info = self.client.publish(self._topics[Channel.STATE], format_state(state), qos=0, retain=True)
        if info.rc == 0:
            self._state_sent, self._state_sent_at = state, now

    def publish_now(self, channel: Channel, payload: bytes) -> None:
        """Publish one message outside the outbox, next round (QoS 1; paho keeps it through a
        short outage once handed over)."""
        self._now.put((channel, payload))
        self._net.wake()

    # -- the end ------------------------------------------------------------------------------

    def unsent(self) -> int:
        return self.outbox.counts()[1]

    def drain(self, timeout: float) -> bool:
        """Wait (on the caller's thread) until the journal is in the outbox and all of it sent."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._net.wake()
            if self._caught_up():
                return True
            time.sleep(0.02)
        return self._caught_up()

    def _caught_up(self) -> bool:
        return self.outbox.caught_up()

    def _farewell(self) -> None:
        """On the thread, at :meth:`close`: say ``offline`` (retained, 2 s at most), disconnect."""
        try:
            if self.connected.is_set():
                info = self.client.publish(self._topics[Channel.STATUS], self._status(False), qos=1, retain=True)
                deadline = time.monotonic() + 2.0
                while not info.is_published() and self.connected.is_set() and time.monotonic() < deadline:
                    self._net.run_once(0.05)
            self.client.disconnect()
        except Exception:  # on the way out: the broker's last will says offline anyway
            logger.debug("hall publisher: farewell not said", exc_info=True)

    def close(self) -> None:
        """Stop the thread; it says ``offline`` (retained) and disconnects."""
        if self._stop.is_set():
            return
        self._stop.set()
        self._net.wake()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)
        else:
            self._farewell()  # never started: nothing was said
        self._net.close()
