"""The software debounce rule, on its own (pure)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from pegwatch.device.hardware.debounce import Change, Debouncer

MS = 1_000_000


def test_bouncing_press_gives_one_change_stamped_at_first_edge():
    d = Debouncer(lockout_ns=20 * MS)
    t0 = 10_000 * MS
    results = [d.edge(pressed, t0 + i * MS // 2) for i, pressed in enumerate([True, False] * 4 + [True])]
    assert results[0] == Change(True, t0)
    assert all(r is None for r in results[1:])
    assert d.is_pressed


def test_release_after_lockout_is_accepted():
    d = Debouncer(lockout_ns=20 * MS)
    assert d.edge(True, 0) == Change(True, 0)
    assert d.edge(False, 50 * MS) == Change(False, 50 * MS)
    assert d.edge(True, 100 * MS) == Change(True, 100 * MS)


def test_change_swallowed_by_lockout_is_repaired_by_settle():
    d = Debouncer(lockout_ns=20 * MS)
    d.edge(True, 0)
    assert d.edge(False, 5 * MS) is None  # a very short press: release inside the lock-out
    assert d.settle(10 * MS) is None  # not stable long enough yet
    assert d.settle_due_ns() == 25 * MS
    assert d.settle(25 * MS) == Change(False, 5 * MS)
    assert not d.is_pressed
    assert d.settle_due_ns() is None


def test_bounce_back_to_accepted_state_needs_no_repair():
    d = Debouncer(lockout_ns=20 * MS)
    d.edge(True, 0)
    d.edge(False, 1 * MS)
    d.edge(True, 2 * MS)
    assert d.settle_due_ns() is None
    assert d.settle(100 * MS) is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=30))
def test_accepted_changes_alternate_and_end_in_pin_state(gaps_ms):
    """Whatever the edge timing, accepted changes alternate and, once the
    pin is stable, the accepted state equals the pin."""
    d = Debouncer(lockout_ns=20 * MS)
    t = 0
    pin = False
    accepted = []
    for gap in gaps_ms:
        t += gap * MS
        pin = not pin
        change = d.edge(pin, t)
        if change:
            accepted.append(change)
    change = d.settle(t + 20 * MS)
    if change:
        accepted.append(change)
    assert d.is_pressed == pin
    for a, b in itertools.pairwise(accepted):
        assert a.pressed != b.pressed
        assert a.at_ns <= b.at_ns
    if accepted:
        assert accepted[0].pressed is True
