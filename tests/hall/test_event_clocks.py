"""The clocks the hall's event messages carry: the report's replay, from any point of the journal."""

from __future__ import annotations

from pegwatch.device.table.hall.event_clocks import EventClocks
from pegwatch.device.table.program import TableProgram
from pegwatch.device.table.report import journal_events


def test_the_clocks_at_each_event_are_the_report_s_from_the_start_after_a_restart_and_read_again(tmp_path):
    now = [10**12]
    path = tmp_path / "j.sqlite"
    program = TableProgram.open(path, players=("Ann", "Bob"), now_ns=lambda: now[0])
    try:
        program.press(0)  # Ann makes the code: Bob's clock runs
        program.step()
        for seat in (1, 0, 1):
            for _ in range(3):  # heartbeats while a clock runs
                now[0] += 1_300_000_000
                program.step()
            program.press(seat)
            program.step()
        events = list(program.journal.events())
        expected = [e["clock_ms"] for e in journal_events(path).events]
        assert len({tuple(c) for c in expected if c}) > 3  # the clocks moved: a real check

        assert EventClocks(program.journal).at(events[0]) == expected[0]
        whole = EventClocks(program.journal)
        assert [whole.at(e) for e in events] == expected
        middle = len(events) // 2
        restarted = EventClocks(program.journal)  # a restart: the outbox's cursor is mid-journal
        assert [restarted.at(e) for e in events[middle:]] == expected[middle:]
        assert restarted.at(events[2]) == expected[2]  # a full outbox reads from an earlier seq again
        assert restarted.at(events[3]) == expected[3]
    finally:
        program.close()


def test_clocks_that_cannot_be_told_leave_the_events_going_out_without_them(tmp_path, caplog):
    """A journal the replay cannot read (here: closed under it) costs the clocks, in one warning line,
    never the event: ``at`` answers None and the outbox still publishes the event."""
    now = [10**12]
    program = TableProgram.open(tmp_path / "j.sqlite", players=("Ann", "Bob"), now_ns=lambda: now[0])
    program.press(0)
    program.step()
    events = list(program.journal.events())
    clocks = EventClocks(program.journal)
    program.close()
    with caplog.at_level("WARNING", logger="pegwatch.device.table.hall.event_clocks"):
        assert clocks.at(events[-1]) is None  # it would replay the journal up to there first
        assert clocks.at(events[-1]) is None
    assert len([r for r in caplog.records if "clocks at it are not known" in r.getMessage()]) == 1
