"""The login's brake: wrong passwords from one address are slowed down.

The hall's network is the venue's Wi-Fi, shared with the players. An
arbiter's password is checked with scrypt (costly on purpose), but nothing
else stopped a laptop from trying passwords as fast as the hub answers.
After :data:`MAX_FAILURES` wrong tries within :data:`WINDOW_S` from the
same address, that address is refused for :data:`LOCK_S` without its
password being checked; each further wrong try after that doubles the
wait, up to :data:`MAX_LOCK_S`. The key is the address, not the login: a
player who types wrong passwords for the arbiter's login locks out his own
laptop, never the arbiter. A right password clears its address. Time is
the monotonic clock's: a wall clock put back must not lift a lock.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

__all__ = ["LOCK_S", "MAX_FAILURES", "MAX_LOCK_S", "WINDOW_S", "LoginThrottle"]

#: Wrong tries allowed within :data:`WINDOW_S` before a key is locked.
MAX_FAILURES: Final = 5
WINDOW_S: Final = 300.0
#: The first lock, doubled by each wrong try past it, up to :data:`MAX_LOCK_S`.
LOCK_S: Final = 30.0
MAX_LOCK_S: Final = 900.0
#: Keys remembered at most (the oldest are forgotten first): a flood of addresses costs bounded memory.
MAX_KEYS: Final = 10_000


@dataclass
class _Record:
    failures: list[float] = field(default_factory=list)
    locked_until: float = 0.0
    lock_s: float = LOCK_S


class LoginThrottle:
    """Counts wrong logins per key (the client's address); one per hub."""

    def __init__(self, *, max_failures: int = MAX_FAILURES, window_s: float = WINDOW_S, lock_s: float = LOCK_S,
                 max_lock_s: float = MAX_LOCK_S, max_keys: int = MAX_KEYS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self.lock_s = lock_s
        self.max_lock_s = max_lock_s
        self.max_keys = max_keys
        self._clock = clock
        self._records: OrderedDict[str, _Record] = OrderedDict()

    def wait_s(self, keys: Iterable[str]) -> float:
        """Seconds until any of ``keys`` may try again (0: now)."""
        now = self._clock()
        waits = [r.locked_until - now for k in keys if (r := self._records.get(k)) is not None]
        return max([0.0, *waits])

    def failed(self, keys: Iterable[str]) -> None:
        """A wrong login or password came with these keys."""
        now = self._clock()
        for key in keys:
            record = self._records.pop(key, None) or _Record(lock_s=self.lock_s)
            self._records[key] = record  # the most recent last: the oldest are forgotten first
            record.failures = [t for t in record.failures if now - t < self.window_s] + [now]
            if len(record.failures) >= self.max_failures:
                if record.locked_until > 0.0:  # locked before: each try past the lock doubles it
                    record.lock_s = min(record.lock_s * 2, self.max_lock_s)
                record.locked_until = now + record.lock_s
        while len(self._records) > self.max_keys:
            self._records.popitem(last=False)

    def succeeded(self, keys: Iterable[str]) -> None:
        """A right password: these keys start afresh."""
        for key in keys:
            self._records.pop(key, None)
