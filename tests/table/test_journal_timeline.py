"""The continuous timeline across restarts and reboots (docs/journal.md)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from pegwatch.device.table.journal import Journal, JournalEvent, Timeline, segment_starts, timeline


def ev(seq: int, at_ns: int, boot: str = "b1", session: int = 1) -> JournalEvent:
    return JournalEvent(
        seq=seq, kind="press", at_ns=at_ns, boot_id=boot, payload={}, session=session
    )


def test_one_segment_keeps_its_stamps():
    events = [ev(1, 100), ev(2, 250), ev(3, 1_000)]
    assert [t for _, t in timeline(events)] == [100, 250, 1_000]
    assert segment_starts(events) == []


def test_a_restart_removes_the_outage_within_one_boot():
    # Session 1 ran until 5 s; the program came back at 65 s of the same boot.
    events = [ev(1, 1_000), ev(2, 5_000), ev(3, 65_000, session=2), ev(4, 66_500, session=2)]
    assert [t for _, t in timeline(events)] == [1_000, 5_000, 5_000, 6_500]
    assert segment_starts(events) == [3]


def test_a_reboot_maps_a_smaller_stamp_onto_the_continuing_line():
    events = [
        ev(1, 9_000_000),
        ev(2, 9_400_000),
        ev(3, 12_000, boot="b2", session=2),
        ev(4, 15_000, boot="b2", session=2),
    ]
    assert [t for _, t in timeline(events)] == [9_000_000, 9_400_000, 9_400_000, 9_403_000]
    assert segment_starts(events) == [3]


def test_a_stamp_going_back_in_one_session_starts_a_segment_rather_than_going_back():
    events = [ev(1, 500), ev(2, 400)]
    assert [t for _, t in timeline(events)] == [500, 500]


def test_live_stamps_of_the_current_segment_map_too():
    line = Timeline()
    assert line.at(42) == 42
    line.add(ev(1, 1_000))
    line.add(ev(2, 2_000))
    line.add(ev(3, 50, boot="b2", session=2))
    assert line.last_ns == 2_000
    assert line.at(1_050) == 3_000
    assert line.at(10) == 2_000  # never before the last event
    assert line.segments == 2


def test_timeline_of_a_real_journal_with_two_sessions(tmp_path):
    path = tmp_path / "j.sqlite"
    with Journal(path, boot_id="boot") as journal:
        journal.append("press", {}, at_ns=100)
        journal.append("press", {}, at_ns=300)
    with Journal(path, boot_id="boot") as journal:
        journal.append("restart", {}, at_ns=10_000)
        journal.append("press", {}, at_ns=10_700)
        events = list(journal.events())
    assert [t for _, t in timeline(events)] == [100, 300, 300, 1_000]


segments = st.lists(
    st.tuples(
        st.sampled_from(["b1", "b2", "b3"]),
        st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=6),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=60, deadline=None)
@given(segments)
def test_continuous_time_never_goes_back_and_keeps_in_segment_gaps(parts):
    events = []
    seq = 0
    for session, (boot, gaps) in enumerate(parts, start=1):
        at = 10**9 * session % 7_777_777  # unrelated origins per session
        for gap in gaps:
            at += gap
            seq += 1
            events.append(ev(seq, at, boot=boot, session=session))
    line = timeline(events)
    times = [t for _, t in line]
    assert times == sorted(times)
    # Within a session every gap is kept exactly; across sessions none is.
    for (a, ta), (b, tb) in itertools.pairwise(line):
        if a.session == b.session:
            assert tb - ta == b.at_ns - a.at_ns
        else:
            assert tb == ta
    assert len(segment_starts(events)) == len(parts) - 1
