"""``[journal] max_mb``: old evidence images of finished games make room; events never go.

A table program on a virtual clock plays real events (presses, readings with
their JPEG frames) into a journal capped far below what the match needs. The
images of the finished game are evicted, oldest first (exported games
first), each recorded by an ``evidence_pruned`` event; the game in play
keeps every frame; replay and export still work. A cap that nothing can be
evicted under shows the warning first, then the disk-full alarm, and the
clock goes on.
"""

from __future__ import annotations

import json
import random

from pegwatch.device.table.export import export_records
from pegwatch.device.table.journal import (
    PRUNED_KIND,
    PRUNED_NOTE,
    Journal,
    JournalEvent,
    JournalWriter,
    PendingEvent,
)
from pegwatch.device.table.program import TableProgram, replay_journal
from pegwatch.rules.codes import score
from pegwatch.rules.flow import Phase

S = 1_000_000_000
KIB = 1024
IMAGE = 150 * KIB


class VirtualTable:
    """A TableProgram on a clock the test moves; every reading brings a frame."""

    def __init__(self, path, *, max_bytes, table_name="Table 7", seed=1):
        self.t = 100 * S
        self.rng = random.Random(seed)
        self.program = TableProgram.open(
            path, players=("Ann", "Bob"), max_bytes=max_bytes, table_name=table_name,
            now_ns=lambda: self.t,
        )

    def jpeg(self):
        # Incompressible bytes behind a JPEG header: SQLite stores them as they are.
        return b"\xff\xd8\xff" + self.rng.randbytes(IMAGE - 3)

    def press(self, seat):
        self.t += S
        self.program.press(seat)
        self.program.step()

    def read(self, **payload):
        self.t += S // 2
        self.program.submit("reading", {"status": "ok", **payload}, jpeg=self.jpeg())
        self.program.step()

    def row(self, game, row, secret, guess, *, maker, breaker):
        self.press(breaker)
        self.read(game=game, row=row, phase="guess", guess=list(guess))
        black, white = score(secret, guess)
        self.press(maker)
        self.read(game=game, row=row, phase="marks", black=black, white=white)

    def start_game(self, game, secret, *, maker):
        self.press(maker)
        self.read(game=game, row=0, phase="secret", shield="closed", code=list(secret))

    def reveal(self, game, secret):
        self.read(game=game, row=0, phase="secret", shield="open", code=list(secret))


GAME1 = ("red", "green", "blue", "yellow")
GAME2 = ("pink", "pink", "orange", "white")
MISSES = [("black", "black", "black", "black"), ("white", "white", "orange", "orange"),
          ("red", "red", "green", "green"), ("blue", "yellow", "pink", "black"),
          ("green", "red", "yellow", "blue")]


def test_the_finished_games_images_make_room_and_the_game_in_play_keeps_every_frame(tmp_path):
    path = tmp_path / "table.sqlite"
    table = VirtualTable(path, max_bytes=2560 * KIB)
    program = table.program
    assert program.journal.max_bytes == 2560 * KIB
    table.start_game(1, GAME1, maker=0)
    for row, guess in enumerate([MISSES[0], MISSES[1], GAME1], start=1):
        table.row(1, row, GAME1, guess, maker=0, breaker=1)
    table.reveal(1, GAME1)
    assert program.flow.games[0].final
    game1_images = len(program.journal.all_evidence(game=1))
    assert game1_images == 8  # nothing had to go yet: the cap was not near
    table.start_game(2, GAME2, maker=1)
    for row, guess in enumerate(MISSES, start=1):
        table.row(2, row, GAME2, guess, maker=1, breaker=0)
    journal = program.journal
    assert program.writer.alarm is None and program.writer.pending == 0
    game1 = journal.all_evidence(game=1)
    game2 = journal.all_evidence(game=2)
    # The game in play lost nothing; the finished game's oldest frames went.
    assert len(game2) == 11 and not any(item.pruned for item in game2)
    assert all(item.image.startswith(b"\xff\xd8\xff") for item in game2)
    pruned = [item for item in game1 if item.pruned]
    assert pruned and len(game1) == game1_images
    assert game1[: len(pruned)] == pruned, "the oldest go first"
    assert all(item.image == b"" and item.reading["game"] == 1 for item in pruned)
    assert journal.used_bytes <= journal.max_bytes
    # Each eviction is itself an event, naming what went and why.
    events = list(journal.events())
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    records = [e for e in events if e.kind == PRUNED_KIND]
    assert records and all(r.payload["reason"] == PRUNED_NOTE for r in records)
    named = {(p["event_seq"], p["row"]) for r in records for p in r.payload["evidence"]}
    assert named == {(item.event_seq, item.row) for item in pruned}
    presses = [e for e in events if e.kind == "press"]
    assert len(presses) == 2 + 2 * 3 + 2 * 5
    program.close()

    replayed = replay_journal(path)
    assert not replayed.mismatches and replayed.flow.phase is Phase.GUESS
    out = tmp_path / "out"
    written = export_records(path, out, evidence=True)
    record = json.loads((out / "game1.json").read_text())
    assert record["table"] == "Table 7"
    notes = [json.loads(p.read_text()) for p in written if p.suffix == ".json" and "evidence" in p.parts]
    assert sum(1 for n in notes if n.get("pruned") == PRUNED_NOTE and n["image"] is None) == len(pruned)
    assert len(list((out / "evidence").glob("game1-*.jpg"))) == game1_images - len(pruned)


def test_exported_games_go_first_and_unnamed_games_never(tmp_path):
    path = tmp_path / "j.sqlite"
    rng = random.Random(3)
    with Journal(path) as journal:
        event = journal.append("reading", {"n": 1}, at_ns=10)
        for game in (1, 2, 3):
            for row in (1, 2):
                journal.store_evidence(event_seq=event.seq, game=game, row=row,
                                       image=b"\xff\xd8\xff" + rng.randbytes(1000), reading={"g": game})
        journal.mark_exported([2])
        assert journal.exported_games() == {2}
        # Game 3 is in play: not offered. Game 2 was exported: it goes before the older game 1.
        freed = journal.prune_evidence(1500, games=[1, 2], at_ns=20)
        assert freed == 2006
        assert [(e.game, e.row) for e in journal.all_evidence() if e.pruned] == [(2, 1), (2, 2)]
        journal.prune_evidence(10**9, games=[1, 2], at_ns=30)
        assert not any(e.pruned for e in journal.all_evidence(game=3))
        assert journal.prune_evidence(10**9, games=[1, 2], at_ns=40) == 0  # nothing left
        kinds = [e.kind for e in journal.events()]
        assert kinds == ["reading", PRUNED_KIND, PRUNED_KIND]
        stamps = [e.at_ns for e in journal.events()]
        assert stamps == sorted(stamps)


def test_the_display_warns_well_before_the_cap_then_the_disk_full_alarm_holds(tmp_path):
    path = tmp_path / "table.sqlite"
    table = VirtualTable(path, max_bytes=2048 * KIB)
    program = table.program
    table.start_game(1, GAME1, maker=0)
    messages = []
    row = 0
    while program.writer.alarm is None:
        row += 1
        assert row <= 12, "the cap never filled"
        guess = MISSES[(row - 1) % len(MISSES)]
        black, white = score(GAME1, guess)
        table.press(1)
        for seat, payload in ((1, {"phase": "guess", "guess": list(guess)}),
                              (0, {"phase": "marks", "black": black, "white": white})):
            if seat == 0:
                table.press(0)
            table.read(game=1, row=row, **payload)
            message = program.display_model().message
            messages.append(None if message is None else message.text)
    warnings = [m for m in messages if m is not None and m.startswith("JOURNAL")]
    assert warnings, messages
    first = messages.index(warnings[0])
    assert first < len(messages) - 1, "the warning came only with the alarm"
    assert 80 <= int(warnings[0].split()[1].rstrip("%")) < 100
    # At the cap with nothing to evict (game 1 is in play): held in memory, the clock goes on.
    assert program.display_model().message.text == "DISK FULL"
    assert not any(item.pruned for item in program.journal.all_evidence())
    before = program.flow.remaining_ns(table.t + program.offset_ns)
    seat = program.flow.on_move(table.t + program.offset_ns)
    table.press(seat)
    assert program.writer.pending >= 1
    after = program.flow.remaining_ns(table.t + program.offset_ns)
    assert after[seat] < before[seat] and program.flow.on_move(table.t + program.offset_ns) != seat
    program.close()


def test_a_writer_without_a_cap_prunes_nothing_and_warns_nothing(tmp_path):
    with Journal(tmp_path / "j.sqlite") as journal:
        writer = JournalWriter(journal, prunable=lambda: [1])
        event = writer.append("reading", {"n": 1}, at_ns=5)
        assert isinstance(event, JournalEvent) and not isinstance(event, PendingEvent)
        assert writer.store_evidence(event, game=1, row=1, image=b"\xff\xd8\xff" + bytes(5000), reading={})
        assert writer.fill is None and writer.warning is None and writer.pruned_bytes == 0
