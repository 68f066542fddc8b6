"""The vision worker passes on what the camera knows (issue 14): candidates
per doubtful hole, key-count bounds and the board's trust; and it accepts
the secret only from confident, trusted, still frames, and watches it.

The readings are built by hand (a reader that returns them), so each test
says exactly what the camera saw; the worker and the table program are the
real ones.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from pegwatch.device.table.program import TableProgram, replay_journal
from pegwatch.device.table.vision_worker import VisionWorker
from pegwatch.rules.flow import ReadPhase, ReadRequest
from pegwatch.simulation.demo import VirtualClock
from pegwatch.vision.reading import (
    BoardReading,
    HoleReading,
    KeyReading,
    RowReading,
    empty_row,
)

MS = 1_000_000
S = 1_000 * MS
FRAME = np.zeros((8, 8, 3), dtype=np.uint8)
CODE = ("red", "green", "blue", "yellow")


def hole(colour, *cands):
    if cands:
        return HoleReading("unknown", 0.4, tuple((c, 0.4) for c in cands))
    return HoleReading(colour, 0.95)


def row(number, holes, keys=None):
    keys = keys or KeyReading(0, 0, 4, 1.0, "empty")
    status = "ok" if all(h.is_certain for h in holes) and keys.is_certain else "unknown"
    return RowReading(number, tuple(holes), keys, status)


def board(rows=(), secret=CODE, trust="full"):
    all_rows = list(rows) + [empty_row(n, 4, 4) for n in range(len(rows) + 1, 13)]
    sec = None if secret is None else tuple(hole(c) for c in secret)
    return BoardReading("invicta-12x4", tuple(all_rows), sec, None, 0, trust=trust)


class Reader:
    """Returns whatever reading the test has set, stamped with the frame's time."""

    def __init__(self, reading):
        self.reading = reading

    def read(self, frame, *, at_ns=None):
        return replace(self.reading, at_ns=at_ns or 0)


def worker_for(reading, answers, **options):
    reader = Reader(reading)
    worker = VisionWorker(None, reader, submit=lambda kind, payload, at, jpeg: answers.append(dict(payload)),
                          frames_to_accept=2, give_up_frames=5, evidence=False, **options)
    return worker, reader


def feed(worker, n, start=0):
    for i in range(n):
        worker.feed(FRAME, start + (i + 1) * 100 * MS)


DOUBTFUL = [hole("red"), hole(None, "green", "blue"), hole("green"), hole("green")]


def test_a_doubtful_hole_goes_to_the_flow_with_its_candidates():
    answers = []
    worker, _ = worker_for(board([row(1, DOUBTFUL)]), answers)
    worker.set_requests([ReadRequest(1, 1, ReadPhase.GUESS, 0)])
    feed(worker, 4)
    assert answers == []  # a doubtful row waits for the give-up: a hand may move away
    feed(worker, 1, start=400 * MS)
    (answer,) = answers
    assert answer["status"] == "unknown" and answer["trust"] == "full"
    assert answer["candidates"] == [["red"], ["green", "blue"], ["green"], ["green"]]


def test_a_guess_read_with_a_peg_not_quite_sure_names_what_it_may_still_be():
    shaky = HoleReading("yellow", 0.9935, (("yellow", 0.9935), ("orange", 0.0065)))
    for holes, named in (([hole("red"), shaky, hole("green"), hole("green")], True),
                         ([hole(c) for c in CODE], False)):
        answers = []
        worker, _ = worker_for(board([row(1, holes)]), answers)
        worker.set_requests([ReadRequest(1, 1, ReadPhase.GUESS, 0)])
        feed(worker, 2)
        (answer,) = answers
        assert answer["status"] == "ok"  # read at once, as a confident row is
        if named:
            assert answer["candidates"] == [["red"], ["yellow", "orange"], ["green"], ["green"]]
        else:
            assert "candidates" not in answer


class Moving(Reader):
    """The same row every frame, its appearance changing from frame to frame (a hand over it)."""

    def read(self, frame, *, at_ns=None):
        self.n = getattr(self, "n", 0) + 1
        sigs = tuple((float(100 * (self.n % 2) if r == 0 else 0),) for r in range(12))
        return replace(super().read(frame, at_ns=at_ns), row_signatures=sigs)


def test_a_moving_row_goes_to_the_arbiter_whatever_its_last_frame_doubted():
    shaky = HoleReading("yellow", 0.9935, (("yellow", 0.9935), ("orange", 0.0065)))
    answers = []
    worker = VisionWorker(None, Moving(board([row(1, [hole("red"), shaky, hole("green"), hole("green")])])),
                          submit=lambda kind, payload, at, jpeg: answers.append(dict(payload)),
                          frames_to_accept=2, give_up_frames=5, evidence=False)
    worker.set_requests([ReadRequest(1, 1, ReadPhase.GUESS, 0)])
    feed(worker, 5)
    (answer,) = answers
    # Never judged on frames that never stood still: no candidates, so the flow asks the arbiter.
    assert answer["status"] == "occluded" and "candidates" not in answer


def test_counted_keys_under_a_doubtful_guess_are_answered_at_once():
    keys = KeyReading(1, 1, 2, 0.9, "ok")
    answers = []
    worker, _ = worker_for(board([row(1, DOUBTFUL, keys)]), answers)
    worker.set_requests([ReadRequest(1, 1, ReadPhase.MARKS, 0)])
    feed(worker, 2)
    (answer,) = answers
    assert (answer["black"], answer["white"], answer["keys_status"]) == (1, 1, "ok")
    assert "candidates" in answer


def test_key_bounds_are_passed_on():
    keys = KeyReading(1, 1, 2, 0.5, "unknown", black_bounds=(1, 2), white_bounds=(0, 1))
    answers = []
    worker, _ = worker_for(board([row(1, [hole(c) for c in CODE], keys)]), answers)
    worker.set_requests([ReadRequest(1, 1, ReadPhase.MARKS, 0)])
    feed(worker, 5)
    (answer,) = answers
    assert answer["black_bounds"] == [1, 2] and answer["white_bounds"] == [0, 1]


def test_a_row_with_nothing_known_gets_no_candidates():
    covered = [HoleReading("occluded", 0.0)] * 4
    answers = []
    worker, _ = worker_for(board([row(1, covered)]), answers)
    worker.set_requests([ReadRequest(1, 1, ReadPhase.GUESS, 0)])
    feed(worker, 5)
    (answer,) = answers
    assert "candidates" not in answer  # the flow asks the arbiter, as before


def test_the_secret_needs_more_still_frames_than_a_row():
    answers = []
    worker, _ = worker_for(board(), answers, secret_frames=4)
    worker.set_requests([ReadRequest(1, 0, ReadPhase.SECRET_HIDDEN, 0)])
    feed(worker, 3)
    assert answers == []
    feed(worker, 1, start=300 * MS)
    (answer,) = answers
    assert answer["code"] == list(CODE) and answer["status"] == "ok" and answer["trust"] == "full"


@pytest.mark.parametrize("why", ["low trust", "doubtful hole", "covered"])
def test_a_secret_is_never_assumed(why):
    reading = board()
    if why == "low trust":
        reading = board(trust="low")
    elif why == "doubtful hole":
        reading = replace(reading, secret=(hole("red"), hole(None, "green", "blue"), hole("blue"), hole("yellow")))
    else:
        if "shield" not in BoardReading.__dataclass_fields__:
            pytest.skip("the reader does not say what the shield shows yet")
        reading = replace(reading, shield="covered")
    answers = []
    worker, _ = worker_for(reading, answers)
    worker.set_requests([ReadRequest(1, 0, ReadPhase.SECRET_HIDDEN, 0)])
    feed(worker, 8)
    assert all(a["status"] != "ok" for a in answers)


def test_the_accepted_secret_is_watched_and_a_change_raises_the_alarm(tmp_path):
    clock = VirtualClock()
    reader = Reader(board())
    worker = VisionWorker(None, reader, submit=lambda *a: None, frames_to_accept=2,
                          give_up_frames=5)
    program = TableProgram.open(tmp_path / "j.sqlite", players=("Ann", "Bob"), now_ns=clock,
                                worker=worker)
    try:
        def frames(n):
            for _ in range(n):
                clock.advance(100 * MS)
                worker.feed(FRAME, clock())
                program.step()

        program.press(0, clock())
        program.step()
        frames(6)
        game = program.flow.game
        assert game.secret_hidden == CODE and game.secret_source is None
        frames(6)  # the same code, still: nothing said
        assert not game.secret_changed
        reader.reading = board(secret=("red", "red", "blue", "yellow"))
        frames(6)
        assert game.secret_changed and game.secret_hidden == CODE
        message = program.display_model().message
        assert message is not None and message.text == "SECRET CHANGED: CHECK"
        # Both frames are kept as evidence: the code accepted, and the change.
        assert [e.row for e in program.journal.all_evidence(game=1)].count(0) == 2
    finally:
        program.close()
    assert replay_journal(tmp_path / "j.sqlite").mismatches == ()


# -- noise: a hole in doubt in one frame and not the next ------------------------

SURE = [hole(c) for c in CODE]
KEYS = KeyReading(1, 2, 1, 0.9, "ok")


def frames_of(worker, reader, answers, readings):
    """Feed one frame per reading; the frame (1-based) each answer came with."""
    at = []
    for i, reading in enumerate(readings, start=1):
        reader.reading = reading
        before = len(answers)
        worker.feed(FRAME, i * 100 * MS)
        at.extend([i] * (len(answers) - before))
    return at


def noisy_worker():
    answers = []
    worker, reader = worker_for(board([row(1, SURE, KEYS)]), answers)
    return worker, reader, answers


def test_a_frame_that_only_knows_less_neither_counts_nor_breaks_the_run():
    """Sure, in doubt (the colour among the candidates), sure: the row is
    answered at the third frame, as read; the frame in doubt was no news."""
    worker, reader, answers = noisy_worker()
    worker.set_requests([ReadRequest(1, 1, ReadPhase.GUESS, 0)])
    doubt = [hole("red"), hole(None, "blue", "green"), hole("blue"), hole("yellow")]
    sure, unsure = board([row(1, SURE, KEYS)]), board([row(1, doubt, KEYS)])
    assert frames_of(worker, reader, answers, [sure, unsure, sure]) == [3]
    (answer,) = answers
    assert answer["status"] == "ok" and answer["guess"] == list(CODE)


def test_key_bounds_that_hold_the_counts_are_no_news_either():
    worker, reader, answers = noisy_worker()
    worker.set_requests([ReadRequest(1, 1, ReadPhase.MARKS, 0)])
    bounded = KeyReading(1, 1, 1, 0.4, "unknown", black_bounds=(1, 2), white_bounds=(1, 2))
    sure, unsure = board([row(1, SURE, KEYS)]), board([row(1, SURE, bounded)])
    assert frames_of(worker, reader, answers, [sure, unsure, sure]) == [3]
    assert answers[0]["status"] == "ok" and (answers[0]["black"], answers[0]["white"]) == (1, 2)


@pytest.mark.parametrize("against", ["colour ruled out", "count ruled out", "nothing known", "moving"])
def test_a_frame_that_says_otherwise_breaks_the_run(against):
    worker, reader, answers = noisy_worker()
    phase = ReadPhase.MARKS if against == "count ruled out" else ReadPhase.GUESS
    worker.set_requests([ReadRequest(1, 1, phase, 0)])
    holes, keys, signatures = list(SURE), KEYS, None
    if against == "colour ruled out":
        holes[1] = hole(None, "blue", "yellow")
    elif against == "count ruled out":
        keys = KeyReading(1, 1, 1, 0.4, "unknown", black_bounds=(1, 2), white_bounds=(0, 1))
    elif against == "nothing known":
        holes = [HoleReading("occluded", 0.0)] * 4
    else:
        holes[1] = hole(None, "blue", "green")
        signatures = ((200.0,),) + ((0.0,),) * 11  # the row moved, and stays where it went
    still = ((0.0,),) * 12
    sure = replace(board([row(1, SURE, KEYS)]), row_signatures=still)
    other = replace(board([row(1, holes, keys)]), row_signatures=signatures or still)
    after = replace(sure, row_signatures=signatures or still)
    # The run starts again after the frame that says otherwise: two more sure frames.
    assert frames_of(worker, reader, answers, [sure, other, after, after]) == [4]
    assert answers[0]["status"] == "ok"


def test_the_give_up_says_all_a_run_of_frames_left_possible():
    """Two frames in doubt about one hole, each naming other candidates: no
    one frame's candidates stay the same, yet together they still say much."""
    worker, reader, answers = noisy_worker()
    worker.set_requests([ReadRequest(1, 1, ReadPhase.GUESS, 0), ReadRequest(1, 1, ReadPhase.MARKS, 0)])
    one = [hole("red"), hole(None, "green", "blue"), hole("blue"), hole("yellow")]
    other = [hole("red"), hole(None, "black", "green"), hole("blue"), hole("yellow")]
    bounded = KeyReading(1, 1, 1, 0.4, "unknown", black_bounds=(1, 2), white_bounds=(1, 1))
    a, b = board([row(1, one, KEYS)]), board([row(1, other, bounded)])
    assert frames_of(worker, reader, answers, [a, b, a, b, a]) == [5, 5]
    guess, marks = answers
    assert guess["status"] == "unknown"
    assert guess["candidates"] == [["red"], ["green", "blue", "black"], ["blue"], ["yellow"]]
    # The counts: exact in one frame, bounded in the next: bounded, as the frames were.
    assert marks["keys_status"] == "unknown"
    assert (marks["black_bounds"], marks["white_bounds"]) == ([1, 2], [1, 2])


def test_counted_keys_that_stay_the_same_answer_the_marks_whatever_the_holes_say():
    worker, reader, answers = noisy_worker()
    worker.set_requests([ReadRequest(1, 1, ReadPhase.MARKS, 0)])
    one = [hole("red"), hole(None, "green", "blue"), hole("blue"), hole("yellow")]
    other = [hole("red"), hole(None, "black", "green"), hole("blue"), hole("yellow")]
    assert frames_of(worker, reader, answers, [board([row(1, one, KEYS)]), board([row(1, other, KEYS)])]) == [2]
    assert (answers[0]["black"], answers[0]["white"], answers[0]["keys_status"]) == (1, 2, "ok")
