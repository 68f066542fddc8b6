"""Live updates for the page: server-sent events from the hall's listeners.

The hall tells its listeners from the MQTT thread; each open page is a
:class:`Subscriber` on the web server's event loop. A table that changes
many times before the page is sent anything is sent once, as it is then
(the set of changed tables), so a busy hall cannot pile up a backlog in a
slow browser; other news (a command acknowledged, a result) is queued, at
most :data:`MAX_QUEUED` of it, after which the page is told to reload.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Final

from pegwatch.hub.service import Hall
from pegwatch.hub.web.views import table_json

__all__ = ["Broadcaster", "Subscriber"]

MAX_QUEUED: Final = 1000
#: A comment line this often keeps proxies and the browser from closing a quiet stream.
KEEPALIVE_S: Final = 15.0
#: What a spectator's stream carries: no commands, no evidence.
PUBLIC_KINDS: Final = frozenset({"table", "result", "tournament"})
#: The arbiter's also has the commands' progress and evidence that came (not every table event:
#: a large hall sends hundreds a second, and the grid shows none of them).
ARBITER_KINDS: Final = PUBLIC_KINDS | {"command", "evidence"}


class Subscriber:
    def __init__(self, loop: asyncio.AbstractEventLoop, *, public: bool) -> None:
        self.loop = loop
        self.public = public
        self.wake = asyncio.Event()
        #: A wake is on its way to the loop (set under the broadcaster's lock, cleared by the
        #: stream before it reads): a thousand states a second ask the loop once, not a thousand times.
        self.waking = False
        self.dirty: set[str] = set()
        self.news: list[tuple[str, dict[str, Any]]] = []
        self.overflow = False
        self.closed = False


class Broadcaster:
    """Fans the hall's changes out to every open stream."""

    def __init__(self, hall: Hall) -> None:
        self.hall = hall
        self._lock = threading.Lock()
        self._subscribers: list[Subscriber] = []
        self._stop_listening: Callable[[], None] = hall.listen(self._on_change)

    def _on_change(self, what: str, detail: Mapping[str, Any]) -> None:
        table = detail.get("table")
        with self._lock:
            subscribers = []
            for sub in self._subscribers:
                if isinstance(table, str) and what in ("table", "command"):
                    sub.dirty.add(table)  # a command changes the table's pending count
                if what != "table" and what in (PUBLIC_KINDS if sub.public else ARBITER_KINDS):
                    if len(sub.news) >= MAX_QUEUED:
                        sub.overflow = True
                    else:
                        sub.news.append((what, dict(detail)))
                if not sub.waking:  # else it will read what was just added (it clears, then reads)
                    sub.waking = True
                    subscribers.append(sub)
        for sub in subscribers:
            try:
                sub.loop.call_soon_threadsafe(sub.wake.set)
            except RuntimeError:  # its loop has closed: the page is gone
                self._drop(sub)

    def _drop(self, sub: Subscriber) -> None:
        with self._lock:
            if sub in self._subscribers:
                self._subscribers.remove(sub)

    @property
    def subscribers(self) -> int:
        with self._lock:
            return len(self._subscribers)

    async def events(self, *, public: bool) -> AsyncIterator[str]:
        """The text of one page's event stream, until the page goes or the hub stops."""
        sub = Subscriber(asyncio.get_running_loop(), public=public)
        with self._lock:
            self._subscribers.append(sub)
        try:
            yield "retry: 2000\n\n"
            while not sub.closed:
                try:
                    await asyncio.wait_for(sub.wake.wait(), KEEPALIVE_S)
                except TimeoutError:
                    yield ": keepalive\n\n"
                    continue
                sub.wake.clear()
                with self._lock:
                    sub.waking = False
                    dirty, sub.dirty = sub.dirty, set()
                    news, sub.news = sub.news, []
                    overflow, sub.overflow = sub.overflow, False
                if sub.closed:
                    break
                # One write for all that came: a busy hall's stream is one send per wake, not
                # one per table (each send goes through every middleware).
                out = [_event("reload", {})] if overflow else []
                now = self.hall.now_ns()
                for name in sorted(dirty):
                    live = self.hall.table(name)
                    if live is not None:
                        out.append(_event("table", table_json(self.hall, live, now)))
                out.extend(_event(what, detail) for what, detail in news)
                if out:
                    yield "".join(out)
        finally:
            self._drop(sub)

    def close(self) -> None:
        """End every stream (the hub is stopping)."""
        self._stop_listening()
        with self._lock:
            subscribers, self._subscribers = self._subscribers, []
        for sub in subscribers:
            sub.closed = True
            with contextlib.suppress(RuntimeError):
                sub.loop.call_soon_threadsafe(sub.wake.set)


def _event(kind: str, data: Mapping[str, Any]) -> str:
    return f"event: {kind}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"
