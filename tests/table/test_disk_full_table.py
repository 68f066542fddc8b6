"""Disk full in the middle of a match: a clear alarm, the clock goes on, nothing is lost.

Drives the real table program (device/table.py) with the real match flow and
clock on a virtual monotonic clock; the journal's size cap stands in for a
full SD card (SQLite reports SQLITE_FULL exactly as for a full disk).
"""

from __future__ import annotations

import itertools

import pytest

table = pytest.importorskip("pegwatch.device.table.program")

from pegwatch.device.table.journal import Journal, JournalFullError  # noqa: E402

S = 1_000_000_000
CODEBREAKER_NS = 8 * 60 * S  # seed 000: 8 minutes for the codebreaker
CODEMAKER_NS = 4 * 60 * S  # and 4 for the codemaker


class VirtualClock:
    def __init__(self) -> None:
        self.now = 5_000 * S

    def __call__(self) -> int:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += round(seconds * S)


def press(program, clock: VirtualClock, seat: int, after_s: float) -> None:
    clock.advance(after_s)
    program.press(seat)
    program.step()


def fill_the_card(journal: Journal, at_ns: int) -> None:
    """Cap the journal just above its size and fill it to the last byte.

    Something else (an informational note, as anything could) takes the
    last free space, so that even the smallest event no longer fits.
    """
    journal.set_max_bytes(journal.size_bytes + 8192)
    for pad in (4000, 400, 40, 0):
        while True:
            try:
                journal.append("note", {"pad": "x" * pad}, at_ns=at_ns)
            except JournalFullError:
                break


def times(program, clock: VirtualClock) -> dict[int, int]:
    return dict(program.flow.remaining_ns(clock() + program.offset_ns))


def test_disk_full_mid_match_alarms_keeps_the_clock_and_loses_nothing(tmp_path):
    path = tmp_path / "journal.sqlite"
    clock = VirtualClock()
    program = table.TableProgram.open(path, players=("Ann", "Bob"), now_ns=clock)
    try:
        press(program, clock, 0, 1)  # Ann, codemaker of game 1, starts Bob's clock
        press(program, clock, 1, 30)  # Bob confirms row 1 after 30 s
        durable = program.journal.last_seq
        before_full = times(program, clock)

        # The card fills up.
        fill_the_card(program.journal, clock())
        durable = program.journal.last_seq
        press(program, clock, 0, 20)  # Ann marks row 1 after 20 s
        press(program, clock, 1, 45)  # Bob confirms row 2 after 45 s
        press(program, clock, 0, 10)  # Ann marks row 2 after 10 s

        # A clear alarm, on the display too.
        assert program.writer.pending >= 3
        assert program.alarm is not None and program.alarm.startswith("DISK FULL")
        assert str(path) in program.alarm
        assert program.display_model().message.text == "DISK FULL"
        assert any(line.startswith("ALARM: DISK FULL") for line in program.transcript)
        # The clock went on, to the nanosecond, while nothing could be written.
        clock.advance(7)
        now = times(program, clock)
        assert sorted(now.values()) == sorted(
            [CODEBREAKER_NS - (30 + 45 + 7) * S, CODEMAKER_NS - (20 + 10) * S]
        )
        assert now != before_full
        assert program.journal.last_seq == durable

        # Space returns (the arbiter deletes old files): the next pass writes it all.
        program.journal.set_max_bytes(None)
        program.step()
        assert program.writer.pending == 0
        assert program.alarm is None
        assert program.display_model().message is None or (
            program.display_model().message.text != "DISK FULL"
        )
        live = times(program, clock)
        live_phase = program.flow.phase
    finally:
        program.close()

    # Every press is in the journal, in order, with the stamp of the press
    # itself (not of the late write).
    with Journal(path, create=False) as journal:
        presses = [e for e in journal.events() if e.kind == "press"]
    assert [e.payload["player"] for e in presses] == [0, 1, 0, 1, 0]
    gaps = [(b.at_ns - a.at_ns) / S for a, b in itertools.pairwise(presses)]
    assert gaps == [30, 20, 45, 10]

    # Replaying the journal reaches the same verdicts and the same clock.
    result = table.replay_journal(path)
    assert result.mismatches == ()
    assert result.flow.phase == live_phase
    assert dict(result.flow.remaining_ns(clock() + 0)) == live
