"""Which table states a page needs: not those that only say the clocks ran on.

Each table sends its state twice a second, so a page can run its clocks
from the instant the hub heard them. Most of those states change nothing
else; the page runs the clocks itself, so the hub tells its listeners (the
pages' streams) of such a state at most every :data:`CLOCKS_ONLY_EVERY_NS`,
and of any other change at once. A hall of 500 tables sends a thousand
states a second; the pages need a few hundred.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from pegwatch.hub import wire

__all__ = ["CLOCKS_ONLY_EVERY_NS", "CLOCK_SLACK_MS", "clocks_ran_on"]

#: A state that only says the clocks ran on is told at most this often.
CLOCKS_ONLY_EVERY_NS: Final = 5_000_000_000
#: How far a clock may be from where it ran on to count as having only run on (an arbiter's
#: adjustment or a penalty is more).
CLOCK_SLACK_MS: Final = 1_000


def clocks_ran_on(before: wire.State | None, before_rx_ns: int | None, new: wire.State, rx_ns: int) -> bool:
    """``new`` is ``before`` (heard at ``before_rx_ns``) with its clocks run on to ``rx_ns``,
    each within :data:`CLOCK_SLACK_MS`, and nothing else changed but the journal's seq
    (a running clock's heartbeat is journaled; any other event moves ``event_seq``)."""
    if before is None or before_rx_ns is None:
        return False
    if replace(new, seq=before.seq, clocks=before.clocks) != before:
        return False
    elapsed_ms = (rx_ns - before_rx_ns) // 1_000_000
    for was, now in zip(before.clocks, new.clocks, strict=True):
        expected = was.remaining_ms - elapsed_ms if was.running else was.remaining_ms
        if now.running != was.running or abs(now.remaining_ms - expected) > CLOCK_SLACK_MS:
            return False
    return True
