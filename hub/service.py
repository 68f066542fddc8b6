"""The hub's MQTT side: every table's messages in, the arbiter's commands out.

:class:`Hall` is the hub without the network: :meth:`Hall.handle` takes one
topic and payload as the broker delivered them, checks them with
:mod:`pegwatch.hub.wire`, stores them (:mod:`pegwatch.hub.store`), keeps each
table's latest status and state in memory for the page, records finished
matches into the tournament, and tells the page's listeners. A malformed or
oversized payload, a table hub.toml does not name, a replayed id: logged,
counted in the store's counters, never raised, nothing stored twice.

:class:`HallLink` is the paho-mqtt client (user ``hub``) that feeds it:
a persistent session, so the broker keeps the QoS 1 messages of a hub that
was away, and every table's retained status and state on (re)subscribing.
A command stays in the store until the table acknowledges it and is sent
again whenever the table's status says it is back online.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Final

from pegwatch.hub import wire
from pegwatch.hub.clocks_only import CLOCKS_ONLY_EVERY_NS, clocks_ran_on
from pegwatch.hub.config import format_hub, parse_hub
from pegwatch.hub.model import HubError, Tournament
from pegwatch.hub.service_results import result_from_wire
from pegwatch.hub.store import HallStore, StoredCommand
from pegwatch.rules.errors import BadInput

__all__ = ["Hall", "HallLink", "Listener", "TableLive"]

logger = logging.getLogger(__name__)

#: (what changed: "table" | "command" | "result" | "tournament", its JSON-able detail)
Listener = Callable[[str, Mapping[str, Any]], None]
TOURNAMENT_META: Final = "tournament"
#: hub.toml's tournament as the hub last read it: while the store's equals it, no arbiter has acted.
SEED_META: Final = "tournament_seed"


@dataclass(frozen=True)
class TableLive:
    """What the hub last heard from a table; the receive times are the hub's monotonic ns."""

    table: str
    online: bool | None = None
    status_rx_ns: int | None = None
    state: wire.State | None = None
    state_rx_ns: int | None = None


def _strip_secret(value: Any) -> tuple[Any, int]:
    """``value`` without any key named "secret", and how many were removed. The
    tables never send it while a game runs; the hub makes sure of it anyway."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        removed = 0
        for k, v in value.items():
            if k == "secret":
                removed += 1
                continue
            out[k], n = _strip_secret(v)
            removed += n
        return out, removed
    if isinstance(value, list):
        items = [_strip_secret(v) for v in value]
        return [v for v, _ in items], sum(n for _, n in items)
    return value, 0


class Hall:
    """The hub's live view and its store, fed one message at a time."""

    def __init__(self, store: HallStore, tournament: Tournament, *, tournament_id: str = "hall",
                 clock: Callable[[], int] = time.monotonic_ns) -> None:
        self.store = store
        self.tournament_id = wire.check_id(tournament_id, "tournament")
        self._clock = clock
        self._lock = threading.RLock()
        self._listeners: list[Listener] = []
        self._publish: Callable[[str, bytes], None] | None = None
        self._tournament = self._starting_tournament(tournament)
        self._tables: dict[str, TableLive] = {}
        self._told_ns: dict[str, int] = {}  # when the listeners last heard of each table's state
        self._pending: dict[str, set[str]] = {}
        # Events stored without waiting (handle's ``done``): what follows each commit, in order.
        self._after: queue.SimpleQueue[tuple[Future[bool], Callable[[bool], None]]] = queue.SimpleQueue()
        self._after_thread: threading.Thread | None = None
        for command in store.commands(unacked_only=True):
            self._pending.setdefault(command.table, set()).add(command.id)
        for latest in store.latest():
            status = wire.parse_status(_json(latest.status)) if latest.status else None
            state = wire.parse_state(_json(latest.state)) if latest.state else None
            self._tables[latest.table] = TableLive(
                latest.table, None if status is None else status.online, latest.status_rx_ns, state, latest.state_rx_ns
            )

    def _starting_tournament(self, given: Tournament) -> Tournament:
        """hub.toml's tournament, unless the arbiter has acted since the hub first read it: then
        the store's (which holds those actions), and a warning if hub.toml changed meanwhile."""
        seed = format_hub(given)
        saved = self.store.get_meta(TOURNAMENT_META)
        old_seed = self.store.get_meta(SEED_META)
        if saved is None or saved == old_seed:
            self.store.set_meta(SEED_META, seed)
            self.store.set_meta(TOURNAMENT_META, seed)
            return given
        if old_seed != seed:
            logger.warning("hub.toml changed since the arbiter acted on the page; the hub keeps the "
                           "tournament in its store (with those actions) and not the file's")
        return parse_hub(saved, source="the hub store's tournament")

    # -- what the page reads ---------------------------------------------------

    @property
    def tournament(self) -> Tournament:
        return self._tournament

    def now_ns(self) -> int:
        return self._clock()

    def tables(self) -> list[TableLive]:
        """Every table heard from or named in hub.toml, in hub.toml's order then by name."""
        with self._lock:
            named = list(self._tournament.tables)
            heard = dict(self._tables)
        names = named + sorted(set(heard) - set(named), key=_natural)
        return [heard.get(n, TableLive(n)) for n in names]

    def table(self, name: str) -> TableLive | None:
        with self._lock:
            live = self._tables.get(name)
        if live is None and name in self._tournament.tables:
            return TableLive(name)
        return live

    def pending(self, table: str) -> int:
        """How many commands the table has not acknowledged yet."""
        with self._lock:
            return len(self._pending.get(table, ()))

    def is_known(self, table: str) -> bool:
        """hub.toml's ``tables`` when it names them; any table otherwise."""
        return not self._tournament.tables or table in self._tournament.tables

    # -- listeners -------------------------------------------------------------

    def listen(self, listener: Listener) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return stop

    def _tell(self, what: str, detail: Mapping[str, Any]) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(what, detail)
            except Exception:  # a page gone away must not stop the hall
                logger.exception("a listener failed on %s", what)

    # -- messages in -----------------------------------------------------------

    def handle(self, topic: str, payload: bytes, *, done: Callable[[], None] | None = None) -> bool:
        """Take one message; True when it changed something (or was handed to the store). Never
        raises on bad input.

        ``done`` (the broker's acknowledgement) is called once the message is taken: on disk
        for what is stored. An event is then not waited for here: it joins the store's next
        commit, and ``done`` follows that commit, so a hall of hundreds of tables is never held
        one commit per event. Without ``done`` every message is taken before this returns.
        """
        rx_ns = self._clock()
        try:
            t, message = wire.parse_message(topic, payload)
            if t.tournament != self.tournament_id:
                raise wire.BadMessage(f"{topic[:120]}: another tournament than {self.tournament_id!r}")
            if not self.is_known(t.table):
                self.store.count("unknown_table")
                logger.warning("%s: table %r is not in hub.toml's tables; ignored", topic[:120], t.table)
                taken = False
            elif done is not None and isinstance(message, wire.Event):
                self._take_event_later(t.table, message, rx_ns, done)
                return True
            else:
                taken = self._take(t.table, message, rx_ns)
        except BadInput as exc:
            self.store.count("bad_message")
            logger.warning("%s", exc)
            taken = False
        if done is not None:
            done()
        return taken

    def _event_payload(self, table: str, message: wire.Event) -> dict[str, Any]:
        data, removed = _strip_secret(dict(message.data))
        if removed:
            self.store.count("secret_stripped", removed)
            logger.warning("event %s of table %s carried a secret; removed", message.id, table)
        return _payload(wire.format_event(wire.Event(message.table, message.match, message.seq,
                                                     message.kind, message.t_ms, data)))

    def _take_event_later(self, table: str, message: wire.Event, rx_ns: int, done: Callable[[], None]) -> None:
        future = self.store.add_message_later("event", message.id, table, self._event_payload(table, message), rx_ns)

        def then(new: bool) -> None:
            if new:
                self._tell("event", {"table": table, "id": message.id})
            done()

        with self._lock:
            if self._after_thread is None:
                self._after_thread = threading.Thread(target=self._follow, name="hub-after-commit", daemon=True)
                self._after_thread.start()
        self._after.put((future, then))

    def _follow(self) -> None:
        """The after-commit thread: each stored event's listeners and acknowledgement, in order."""
        while True:
            future, then = self._after.get()
            try:
                new = future.result()
            except Exception as exc:  # not acknowledged: the broker sends it again
                logger.error("hub could not store an event: %s", exc)
                continue
            try:
                then(new)
            except Exception:
                logger.exception("hub: after storing an event")

    def _take(self, table: str, message: wire.Message, rx_ns: int) -> bool:
        if isinstance(message, wire.Status):
            self.store.put_status(table, _payload(wire.format_status(message)), rx_ns)
            with self._lock:
                old = self._tables.get(table, TableLive(table))
                self._tables[table] = TableLive(table, message.online, rx_ns, old.state, old.state_rx_ns)
            if message.online:
                self.resend(table)
            self._tell("table", {"table": table})
            return True
        if isinstance(message, wire.State):
            self.store.put_state(table, _StatePayload(message), rx_ns)
            with self._lock:
                old = self._tables.get(table, TableLive(table))
                self._tables[table] = TableLive(table, old.online, old.status_rx_ns, message, rx_ns)
                told = self._told_ns.get(table)
                quiet = (told is not None and rx_ns - told < CLOCKS_ONLY_EVERY_NS
                         and clocks_ran_on(old.state, old.state_rx_ns, message, rx_ns))
                if not quiet:
                    self._told_ns[table] = rx_ns
            if not quiet:
                self._tell("table", {"table": table})
            return True
        if isinstance(message, wire.Event):
            new = self.store.add_message("event", message.id, table, self._event_payload(table, message), rx_ns)
            if new:
                self._tell("event", {"table": table, "id": message.id})
            return new
        if isinstance(message, wire.Result):
            new = self.store.add_message("result", message.id, table, _payload(wire.format_result(message)), rx_ns)
            if new:
                self._record(message)
            return new
        if isinstance(message, wire.Evidence):
            payload = _payload(wire.format_evidence(message))
            new = self.store.add_message("evidence", message.id, table, payload, rx_ns)
            if new:
                self._tell("evidence", {"table": table, "id": message.id, "row": message.row})
            return new
        if isinstance(message, wire.Ack):
            applied = self.store.ack_command(message.command, message.status.value, message.reason, message.seq)
            if not applied:
                logger.warning("ack of table %s for command %s: unknown or already acknowledged", table,
                               message.command)
            else:
                with self._lock:
                    self._pending.get(table, set()).discard(message.command)
                self._tell("command", {"table": table, "id": message.command, "status": message.status.value})
            return applied
        self.store.count("bad_message")  # a command published by a table: not the hub's to take
        logger.warning("table %s published on its commands topic; ignored", table)
        return False

    def _record(self, r: wire.Result) -> None:
        if r.game != 0:
            self._tell("result", {"table": r.table, "id": r.id, "recorded": False})
            return
        try:
            games = [wire.parse_result(_json(m.payload)) for m in self.store.messages("result", r.table)]
            with self._lock:
                self.apply(lambda t: t.record(result_from_wire(t, r, games)))
        except HubError as exc:
            self.store.count("result_not_recorded")
            logger.warning("%s", exc)
            self._tell("result", {"table": r.table, "id": r.id, "recorded": False, "why": str(exc)})
            return
        self._tell("result", {"table": r.table, "id": r.id, "recorded": True})

    # -- the tournament --------------------------------------------------------

    def apply(self, action: Callable[[Tournament], Tournament]) -> Tournament:
        """An arbiter's action on the tournament, saved before it is shown (HubError when refused)."""
        with self._lock:
            new = action(self._tournament)
            self.store.set_meta(TOURNAMENT_META, format_hub(new))
            self._tournament = new
        self._tell("tournament", {})
        return new

    # -- commands out ----------------------------------------------------------

    def attach(self, publish: Callable[[str, bytes], None] | None) -> None:
        """Where commands go: ``publish(topic, payload)`` at QoS 1 (None: nowhere yet)."""
        self._publish = publish

    def send_command(self, table: str, kind: wire.CommandKind, args: Mapping[str, Any], by: str) -> StoredCommand:
        """Keep the command, then send it if the table is online; BadMessage if its args are wrong."""
        if not self.is_known(table):
            raise HubError(f"table {table!r} is not in hub.toml's tables")
        command = wire.Command(uuid.uuid4().hex, wire.check_id(table, "table"), kind, dict(args), by)
        stored = StoredCommand(command.id, table, kind.value, _payload(wire.format_command(command)), by,
                               "pending", 0, None, None, self._clock())
        self.store.add_command(stored)
        with self._lock:
            self._pending.setdefault(table, set()).add(command.id)
        live = self.table(table)
        if live is not None and live.online:
            self._send(stored)
        self._tell("command", {"table": table, "id": command.id, "status": "pending"})
        return stored

    def resend(self, table: str) -> int:
        """Send every command the table has not acknowledged (it just came back)."""
        pending = self.store.commands(table, unacked_only=True)
        for command in pending:
            self._send(command)
        return len(pending)

    def _send(self, command: StoredCommand) -> None:
        publish = self._publish
        if publish is None:
            return
        try:
            publish(wire.topic(self.tournament_id, command.table, wire.Channel.COMMANDS),
                    _json(command.payload))
        except Exception as exc:  # the broker is away: it goes again when the table is back
            logger.warning("command %s to table %s not sent: %s", command.id, command.table, exc)
            return
        status = self.store.mark_sent(command.id)  # an ack may have come back before this: its status
        self._tell("command", {"table": command.table, "id": command.id, "status": status or "sent"})


class _StatePayload(Mapping[str, Any]):
    """A state as its wire JSON, made only when the store writes it (the last of a burst):
    the hub takes a thousand states a second from a large hall."""

    def __init__(self, state: wire.State) -> None:
        self._state = state
        self._data: dict[str, Any] | None = None

    def _get(self) -> dict[str, Any]:
        if self._data is None:
            self._data = _payload(wire.format_state(self._state))
        return self._data

    def __getitem__(self, key: str) -> Any:
        return self._get()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())


def _natural(name: str) -> tuple[int, int | str]:
    return (0, int(name)) if name.isdigit() else (1, name)


def _payload(data: bytes) -> dict[str, Any]:
    value = json.loads(data)
    assert isinstance(value, dict)
    return value


def _json(payload: Mapping[str, Any]) -> bytes:
    return json.dumps(dict(payload)).encode("utf-8")


class HallLink:
    """The hub's paho-mqtt client: subscribes to every table of the tournament and feeds :class:`Hall`."""

    def __init__(self, hall: Hall, host: str, port: int, *, username: str | None = "hub",
                 password: str | None = None, tls: bool = False, ca_file: str | None = None,
                 client_id: str | None = None) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.hall = hall
        self.host, self.port = host, port
        self._connected = threading.Event()
        self._client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id or f"pegwatch-hub-{hall.tournament_id}",
            clean_session=False,  # the broker queues QoS 1 messages while the hub is away
            protocol=mqtt.MQTTv311,
            manual_ack=True,  # a message is acknowledged once on disk (Hall.handle's done)
        )
        if username:
            self._client.username_pw_set(username, password)
        if tls or ca_file:
            self._client.tls_set(ca_certs=ca_file)  # None: the system's CAs
        self._client.reconnect_delay_set(min_delay=1, max_delay=10)
        self._client.on_connect = self._on_connect
        self._client.on_disconnect = self._on_disconnect
        self._client.on_message = self._on_message
        self._client.on_subscribe = lambda *_: self._connected.set()

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if reason.is_failure:
            logger.error("broker %s:%d refused the hub: %s", self.host, self.port, reason)
            return
        client.subscribe(wire.hall_filter(self.hall.tournament_id), qos=1)
        logger.info("hub connected to %s:%d", self.host, self.port)

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        self._connected.clear()
        logger.warning("hub lost the broker %s:%d (%s); reconnecting", self.host, self.port, reason)

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        mid, qos = message.mid, message.qos

        def done() -> None:
            if qos > 0:
                client.ack(mid, qos)

        try:
            self.hall.handle(message.topic, message.payload, done=done)
        except Exception:  # the store failed: say so, keep the link (the broker redelivers unacked QoS 1)
            logger.exception("hub could not take %s", message.topic)

    def publish(self, topic: str, payload: bytes) -> None:
        info = self._client.publish(topic, payload, qos=1)
        if info.rc != 0:
            raise ConnectionError(f"publish to {topic}: {info.rc}")

    @property
    def is_connected(self) -> bool:
        return self._connected.is_set()

    def wait_for_connection(self, timeout: float | None = None) -> bool:
        """Wait until the broker has the hub's subscription (so nothing published after is missed)."""
        return self._connected.wait(timeout)

    def start(self) -> HallLink:
        self._client.connect_async(self.host, self.port, keepalive=30)
        self._client.loop_start()
        self.hall.attach(self.publish)
        return self

    def close(self) -> None:
        self.hall.attach(None)
        self._client.disconnect()
        self._client.loop_stop()

    def __enter__(self) -> HallLink:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
