"""The table program: journal first, then the flow; camera, display and disk never stop the clock."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from pegwatch.device.cli import main
from pegwatch.device.table.journal import Journal
from pegwatch.device.table.program import TableProgram, flow_from_journal, replay_journal
from pegwatch.device.table.vision_worker import VisionWorker
from pegwatch.rules.flow import MatchFlow, Phase
from pegwatch.simulation.demo import Scene, VirtualClock

S = 1_000_000_000
PLAYERS = ("Ann", "Bob")
SECRET = ("red", "green", "blue", "yellow")


def make_program(tmp_path, *, worker=None, displays=(), clock=None):
    clock = clock or VirtualClock()
    program = TableProgram.open(
        tmp_path / "j.sqlite", players=PLAYERS, now_ns=clock, worker=worker, displays=displays
    )
    return program, clock


class RecordingDisplay:
    def __init__(self):
        self.models = []

    def show(self, model, at_ns):
        self.models.append(model)


class DeadDisplay:
    calls = 0

    def show(self, model, at_ns):
        self.calls += 1
        raise OSError(121, "Remote I/O error (I2C display unplugged)")


def test_every_event_is_journaled_before_the_flow_acts(tmp_path):
    program, clock = make_program(tmp_path)
    seen = []
    apply = program.flow.apply

    def spy(kind, payload, at_ns):
        # At the moment the flow acts, the event is already in the journal.
        with sqlite3.connect(tmp_path / "j.sqlite") as db:
            kinds = [k for (k,) in db.execute("SELECT kind FROM events ORDER BY seq")]
        seen.append((kind, kinds[-1]))
        return apply(kind, payload, at_ns)

    program.flow.apply = spy
    clock.advance(S)
    program.press(0, clock())
    clock.advance(30 * S)
    program.press(1, clock())
    program.step()
    program.close()
    assert seen == [("press", "press"), ("press", "press")]


def test_restart_replays_the_journal_and_comes_back_paused(tmp_path):
    program, clock = make_program(tmp_path)
    clock.advance(S)
    program.press(0, clock())  # Ann starts Bob's clock
    clock.advance(40 * S)
    program.press(1, clock())  # Bob confirms a guess after 40 s
    clock.advance(7 * S)
    program.step()
    before = program.flow.remaining_ns(clock() + program.offset_ns)
    program.close()  # the power goes; 10 minutes pass
    clock.advance(600 * S)
    again, _ = make_program(tmp_path, clock=clock)
    flow = again.flow
    assert flow.paused and flow.awaiting_resume and flow.phase is Phase.MARKS
    # The outage is not charged to anybody: Ann's 7 s of marking are.
    assert again.flow.remaining_ns(clock() + again.offset_ns) == before
    assert again.display_model().message.text == "RESTARTED: ARBITER"
    clock.advance(S)
    again.arbiter("resume", clock())
    clock.advance(3 * S)
    again.step()
    left = again.flow.remaining_ns(clock() + again.offset_ns)
    assert left[0] == before[0] - 3 * S
    assert left[1] == before[1]
    again.close()
    assert not replay_journal(tmp_path / "j.sqlite").mismatches


def test_a_dead_display_is_reported_once_and_the_clock_goes_on(tmp_path):
    dead, good = DeadDisplay(), RecordingDisplay()
    program, clock = make_program(tmp_path, displays=(dead, good))
    clock.advance(S)
    program.press(0, clock())
    for _ in range(5):
        clock.advance(S)
        program.step()
    assert dead.calls >= 5
    assert sum("display failed" in line for line in program.transcript) == 1
    # The other display and the clock go on: Bob's time ran 5 s.
    assert good.models[-1].players[1].remaining_ns == 480 * S - 5 * S
    assert program.flow.on_move(clock()) == 1
    program.close()


def test_disk_full_raises_an_alarm_and_the_clock_goes_on(tmp_path):
    program, clock = make_program(tmp_path)
    display = RecordingDisplay()
    program.displays.append(display)
    clock.advance(S)
    program.press(0, clock())
    program.step()
    journal = program.journal
    # Fill the journal to its cap, as a full SD card would.
    journal.set_max_bytes(journal.path.stat().st_size)
    n = 0
    while program.writer.alarm is None and n < 10_000:
        program.submit("note", {"pad": "z" * 500, "n": n}, clock())
        program.step()
        n += 1
    assert program.writer.alarm is not None and "DISK FULL" in program.writer.alarm
    clock.advance(20 * S)
    program.press(1, clock())  # Bob confirms a guess while the disk is full
    program.step()
    assert program.flow.phase is Phase.MARKS
    assert display.models[-1].message.text == "DISK FULL"
    assert program.flow.remaining_ns(clock())[1] == 460 * S
    # Space comes back: everything held is written, in order, and the alarm clears.
    journal.set_max_bytes(None)
    program.step()
    assert program.writer.alarm is None
    kinds = [e.kind for e in journal.events()]
    assert kinds[-1] == "press"
    program.close()
    assert not replay_journal(tmp_path / "j.sqlite").mismatches


class FlakySource:
    """A camera that can be unplugged."""

    def __init__(self, scene, clock):
        self.scene = scene
        self.clock = clock
        self.plugged = True

    def read(self):
        if not self.plugged:
            raise OSError(19, "No such device (camera unplugged)")
        self.clock.advance(100_000_000)
        return self.scene.photo(), self.clock()


def test_camera_gone_the_clock_goes_on_and_reading_resumes(tmp_path, calibrated):
    from pegwatch.simulation.render import BoardContents

    profile, reader, conditions = calibrated
    clock = VirtualClock()
    scene = Scene(profile, BoardContents.empty(profile), conditions)
    scene.new_game(SECRET)
    source = FlakySource(scene, clock)
    worker = VisionWorker(
        source, reader, submit=lambda *a: None, frames_to_accept=2, give_up_frames=6
    )
    program, _ = make_program(tmp_path, worker=worker, clock=clock)
    clock.advance(S)
    program.press(0, clock())
    program.step()
    source.plugged = False
    scene.place_guess(1, ("red", "red", "white", "white"))
    clock.advance(30 * S)
    program.press(1, clock())
    program.step()
    for _ in range(3):
        assert worker.poll() is False
        clock.advance(S)
        program.step()
    assert not worker.camera_ok
    model = program.display_model()
    assert model.message.text == "CAMERA LOST"
    assert program.flow.on_move(clock()) == 0  # Ann's clock runs all the same
    assert program.flow.remaining_ns(clock())[0] == 240 * S - 3 * S
    source.plugged = True
    for _ in range(10):
        worker.poll()
        program.step()
        if not worker.has_requests:
            break
    assert worker.camera_ok and program.display_model().message is None
    row = program.flow.game.rows[0]
    assert row.guess == ("red", "red", "white", "white")
    # The evidence of the row: the JPEG of the frame used and the reading.
    evidence = program.journal.evidence(1, 1)
    assert evidence is not None and evidence.image.startswith(b"\xff\xd8\xff")
    assert list(evidence.reading["guess"]) == ["red", "red", "white", "white"]
    kinds = [e.payload.get("state") for e in program.journal.events() if e.kind == "camera"]
    assert kinds == ["lost", "back"]
    program.close()


def test_hand_over_the_row_asks_for_a_check_and_never_accuses(tmp_path, calibrated):
    from pegwatch.simulation.render import BoardContents

    profile, reader, conditions = calibrated
    clock = VirtualClock()
    scene = Scene(profile, BoardContents.empty(profile), conditions)
    scene.new_game(SECRET)
    worker = VisionWorker(
        None, reader, submit=lambda *a: None, frames_to_accept=2, give_up_frames=5
    )
    program, _ = make_program(tmp_path, worker=worker, clock=clock)

    def frames(n):
        for _ in range(n):
            clock.advance(100_000_000)
            worker.feed(scene.photo(), clock())
            program.step()

    program.press(0, clock())
    frames(3)
    scene.shield(open_=False)
    scene.place_guess(1, ("green", "red", "orange", "orange"))
    clock.advance(20 * S)
    program.press(1, clock())
    frames(3)
    # Wrong marks (truly 0B2W) under a hand: the camera must not judge them.
    scene.place_keys(1, 3, 0)
    scene.hand_over(1)
    clock.advance(10 * S)
    program.press(0, clock())
    frames(6)
    assert program.flow.checks() == (1,)
    assert program.display_model().message.text == "CHECK ROW 1"
    assert not any(v.what == "mismark" for v in program.verdicts)
    # The hand goes; the arbiter looks, and the row is judged: now it is a mis-mark.
    scene.hand_over(None)
    frames(1)
    assert program.confirm_row_from_camera(1, 1)
    program.step()
    assert any(v.what == "mismark" and v.row == 1 for v in program.verdicts)
    program.close()
    assert not replay_journal(tmp_path / "j.sqlite").mismatches


def test_replay_detects_a_tampered_journal(tmp_path, capsys):
    program, clock = make_program(tmp_path)
    program.press(0, clock())
    clock.advance(S)
    program.press(1, clock())
    program.step()
    program.submit(
        "reading",
        {
            "game": 1,
            "row": 1,
            "phase": "guess",
            "status": "ok",
            "guess": ["red", "red", "red", "red"],
        },
        clock(),
    )
    clock.advance(S)
    program.press(0, clock())
    program.submit(
        "reading",
        {
            "game": 1,
            "row": 1,
            "phase": "marks",
            "status": "ok",
            "guess": ["red", "red", "red", "red"],
            "black": 0,
            "white": 0,
        },
        clock(),
    )
    program.step()
    program.close()
    assert not replay_journal(tmp_path / "j.sqlite").mismatches
    with sqlite3.connect(tmp_path / "j.sqlite") as db:
        db.execute(
            "UPDATE events SET payload = replace(payload, '\"black\":0', '\"black\":1') "
            "WHERE kind = 'verdict'"
        )
    assert replay_journal(tmp_path / "j.sqlite").mismatches
    capsys.readouterr()
    assert main(["replay", str(tmp_path / "j.sqlite")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "verdicts differ" in err


def test_flow_from_journal_matches_the_live_flow(tmp_path):
    program, clock = make_program(tmp_path)
    for seat, dt in ((0, 1), (1, 30), (0, 12), (1, 25)):
        clock.advance(dt * S)
        program.press(seat, clock())
    program.step()
    live = program.flow.remaining_ns(clock())
    program.close()
    with Journal(tmp_path / "j.sqlite") as journal:
        flow, _, _, missing = flow_from_journal(journal)
    assert isinstance(flow, MatchFlow) and not missing
    assert flow.remaining_ns(clock()) == live


def test_bad_event_is_one_line_and_the_table_keeps_running(tmp_path):
    program, clock = make_program(tmp_path)
    program.submit("press", {"player": 7}, clock())
    program.press(0, clock())
    program.step()
    assert any("press refused: player: expected seat 0 or 1" in line for line in program.transcript)
    assert program.flow.phase is Phase.GUESS
    program.close()


def test_display_never_shows_the_secret(tmp_path):
    from pegwatch.device.display.render import render

    program, clock = make_program(tmp_path)
    program.press(0, clock())
    program.submit(
        "reading",
        {
            "game": 1,
            "row": 0,
            "phase": "secret",
            "shield": "closed",
            "status": "ok",
            "code": list(SECRET),
        },
        clock(),
    )
    program.step()
    assert program.flow.game.secret_hidden == SECRET
    model = program.display_model()
    text = repr(model)
    assert not any(c in text for c in SECRET)
    assert np.asarray(render(model).convert("L")).any()
    program.close()


@pytest.mark.parametrize("phase", [Phase.GUESS, Phase.MARKS])
def test_presses_of_the_player_not_on_move_are_ignored(tmp_path, phase):
    program, clock = make_program(tmp_path)
    program.press(0, clock())  # Ann starts Bob's clock: Bob places a guess
    if phase is Phase.MARKS:
        clock.advance(S)
        program.press(1, clock())  # Bob confirms it: Ann marks
    program.step()
    on_move = program.flow.on_move(clock())
    assert program.flow.phase is phase and on_move == (1 if phase is Phase.GUESS else 0)
    left = program.flow.remaining_ns(clock() + program.offset_ns)
    clock.advance(S)
    program.press(1 - on_move, clock())  # the player not on move
    program.step()
    flow = program.flow
    assert flow.phase is phase and flow.on_move(clock()) == on_move
    assert len(flow.game.rows) == (0 if phase is Phase.GUESS else 1)
    # Only the player on move was charged for that second.
    now = flow.remaining_ns(clock() + program.offset_ns)
    assert now[1 - on_move] == left[1 - on_move] and now[on_move] == left[on_move] - S
    assert len([e for e in program.journal.events() if e.kind == "press"]) == (2 if phase is Phase.GUESS else 3)
    program.close()


def test_worker_reads_frames_of_vision_sources(tmp_path, calibrated):
    from pegwatch.simulation.camera import RenderedSource
    from pegwatch.simulation.render import BoardContents

    profile, reader, conditions = calibrated
    scene = Scene(profile, BoardContents.empty(profile), conditions)
    scene.new_game(SECRET)
    scene.shield(open_=False)
    scene.place_guess(1, ("red", "red", "white", "white"))
    source = RenderedSource(profile, lambda: scene.contents, conditions, seed=1)
    worker = VisionWorker(source, reader, submit=lambda *a: None, frames_to_accept=2, give_up_frames=8)
    program = TableProgram.open(tmp_path / "j.sqlite", players=PLAYERS, worker=worker)
    program.press(0)
    program.step()
    program.press(1)
    program.step()
    for _ in range(8):
        assert worker.poll()
        program.step()
        if program.flow.game.rows[0].guess is not None:
            break
    assert program.flow.game.rows[0].guess == ("red", "red", "white", "white")
    program.close()
