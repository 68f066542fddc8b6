"""Illegal guesses at the table (seed 004 §3.4): reported, shown, counted, never judged.

Seed 004 §3.4: an illegal move "that leaves the game in a valid state" may be
accepted by the opponent ("as soon as the opponent makes a move of their own
this is considered an acceptance"), or undone and replayed; "if the player
commits a second illegal move the arbiter should be called".
"""

from __future__ import annotations

import json

import pytest
from flow_script import FlowScript

from pegwatch.device.cli import main
from pegwatch.device.display.model import Severity
from pegwatch.device.table.export import export_records
from pegwatch.device.table.program import TableProgram, replay_journal
from pegwatch.device.table.vision_worker import VisionWorker
from pegwatch.rules.codes import Feedback, score
from pegwatch.rules.flow import MatchFlow, Phase, replay_events
from pegwatch.rules.flow.verdicts import Illegal
from pegwatch.rules.judge import is_incomplete, judge_game
from pegwatch.rules.record import GameRecord, Row
from pegwatch.rules.variants import get_variant
from pegwatch.simulation.demo import Scene, VirtualClock

S = 1_000_000_000
MS = 1_000_000
SECRET = ("red", "green", "blue", "yellow")
INCOMPLETE = ("red", "empty", "blue", "blue")
PLAYERS = ("Ann", "Bob")


class Script(FlowScript):
    """Events fed to a flow as the table journals them (verdicts included)."""

    def __init__(self):
        super().__init__(PLAYERS)

    def press(self, seat):
        return self.ev("press", player=seat)

    def read(self, row, phase, guess, black=0, white=0, game=1):
        return self.ev("reading", 100 * MS, game=game, row=row, phase=phase, guess=list(guess),
                       black=black, white=white, status="ok")

    def guess(self, guess, game=1):
        breaker = self.flow.game.codebreaker
        self.press(breaker)
        self.read(len(self.flow.game.rows), "guess", guess, game=game)

    def marks(self, black, white, game=1):
        row = self.flow.game.rows[-1]
        self.press(self.flow.game.codemaker)
        self.read(row.number, "marks", row.guess, black, white, game=game)

    def start(self, secret=SECRET):
        self.press(self.flow.game.codemaker)
        self.ev("reading", 100 * MS, game=self.flow.game.number, row=0, phase="secret",
                code=list(secret), shield="closed", status="ok")

    def illegal(self):
        return [v for v in self.verdicts if v["what"] == "illegal"]


# -- the judge: an incomplete row is never judged --------------------------------------

def test_an_incomplete_row_is_reported_and_its_marks_are_never_judged():
    """Wrong-looking marks on an incomplete row are not a mis-mark: the table
    cannot know how an empty hole should be marked (nor that it is empty)."""
    mso = get_variant("mso")
    assert is_incomplete(INCOMPLETE, mso) and not is_incomplete(SECRET, mso)
    assert not is_incomplete(INCOMPLETE, get_variant("hasbro-advanced"))  # blanks allowed
    assert score(SECRET, INCOMPLETE) == (2, 0)
    rows = (Row(INCOMPLETE, Feedback(1, 1)),
            Row(("red", "red", "green", "green"), score(SECRET, ("red", "red", "green", "green"))))
    verdict = judge_game(GameRecord("mso", SECRET, rows))
    assert [r.row for r in verdict.illegal_rows] == [1]
    assert verdict.mismarked_row is None
    assert any("row 1 is incomplete" in note for note in verdict.notes)
    # The same rows judged without the secret: no inconsistency from row 1 either.
    hidden = judge_game(GameRecord("mso", None, rows))
    assert hidden.consistent and hidden.consistent > 0
    # A wrong mark on a complete row is still a mis-mark.
    wrong = (rows[0], Row(rows[1].guess, score(SECRET, rows[1].guess)._replace(black=0)))
    assert judge_game(GameRecord("mso", SECRET, wrong)).mismarked_row == 2


def test_all_black_on_an_incomplete_row_does_not_end_a_hidden_game():
    rows = (Row(INCOMPLETE, (4, 0)),)
    verdict = judge_game(GameRecord("mso", None, rows))
    assert not verdict.solved and verdict.mismarked_row is None


# -- the flow ----------------------------------------------------------------------------

def test_an_illegal_guess_stands_until_the_codemaker_plays_on():
    s = Script()
    s.start()
    s.guess(INCOMPLETE)
    (v,) = s.illegal()
    assert v == {"what": "illegal", "game": 1, "row": 1, "player": "Bob", "count": 1,
                 "reason": "row 1 is incomplete: hole 2 empty, and mso allows no blanks"}
    g = s.flow.game
    assert [m.row for m in g.standing_illegal] == [1]
    # Ann marks it 1B 0W (scored as a code, 2B 0W): her move accepts the
    # illegal guess, and the row is not judged for a mis-mark.
    s.marks(1, 0)
    assert g.standing_illegal == () and g.illegal_moves[0].settled == "accepted"
    assert not [v for v in s.verdicts if v["what"] == "mismark"]
    (row,) = [v for v in s.verdicts if v["what"] == "row"]
    assert row["expected"] is None
    assert any("incomplete row: marks not judged" in line for line in s.lines)
    assert any("illegal guess is accepted" in line for line in s.lines)
    assert s.flow.phase is Phase.GUESS and s.flow.illegal_counts() == {"Ann": 0, "Bob": 1}


def test_a_correction_by_hand_settles_the_row_but_the_move_still_counts():
    s = Script()
    s.start()
    s.guess(INCOMPLETE)
    s.ev("arbiter", action="confirm_row", game=1, row=1, guess=["red", "white", "blue", "blue"],
         by="arbiter", hand=True)
    g = s.flow.game
    assert g.standing_illegal == () and g.illegal_moves[0].settled == "corrected"
    assert any("the guess is legal now" in line for line in s.lines)
    assert s.flow.illegal_counts()["Bob"] == 1  # seed 004 counts the move made
    # Still illegal after the correction: reported again, not counted again.
    s2 = Script()
    s2.start()
    s2.guess(INCOMPLETE)
    s2.ev("arbiter", action="confirm_row", game=1, row=1, guess=["empty", "red", "blue", "blue"],
          by="arbiter", hand=True)
    assert [v["count"] for v in s2.illegal()] == [1, 1]
    assert [m.row for m in s2.flow.game.standing_illegal] == [1]


def test_the_second_illegal_move_of_a_player_calls_the_arbiter_and_the_match_counts_them():
    s = Script()
    s.start()
    s.guess(INCOMPLETE)
    s.marks(1, 0)
    s.guess(("red", "empty", "empty", "green"))
    assert [v["count"] for v in s.illegal()] == [1, 2]
    assert "call the arbiter" in [line for line in s.lines if "ILLEGAL" in line][-1]
    s.marks(1, 1)
    s.guess(SECRET)
    s.marks(4, 0)
    assert s.flow.phase is Phase.REVEAL
    s.ev("reading", 100 * MS, game=1, row=0, phase="secret", code=list(SECRET), shield="open",
         status="ok")
    (game,) = [v for v in s.verdicts if v["what"] == "game"]
    assert game["verdict"]["attempts"] == 3 and game["verdict"]["mismarked_row"] is None
    # Game 2: Ann breaks, with one incomplete row; Bob's count starts afresh
    # in the game, the match keeps both.
    s.press(1)  # Bob, the new codemaker, starts game 2
    s.ev("reading", 100 * MS, game=2, row=0, phase="secret", code=list(SECRET), shield="closed",
         status="ok")
    s.guess(("empty", "green", "blue", "yellow"), game=2)
    assert s.illegal()[-1]["player"] == "Ann" and s.illegal()[-1]["count"] == 1
    s.marks(3, 0, game=2)
    s.guess(SECRET, game=2)
    s.marks(4, 0, game=2)
    s.ev("reading", 100 * MS, game=2, row=0, phase="secret", code=list(SECRET), shield="open",
         status="ok")
    (match,) = [v for v in s.verdicts if v["what"] == "match"]
    assert match["illegal_moves"] == {"Ann": 1, "Bob": 2}
    assert s.flow.illegal_counts() == {"Ann": 1, "Bob": 2}
    assert "illegal moves: Ann 1, Bob 2" in s.lines[-1]
    record = s.flow.match_record().to_json()
    assert record["illegal_moves"] == {"Ann": 1, "Bob": 2}
    assert [m["settled"] for m in record["games"][0]["illegal_moves"]] == ["accepted", "accepted"]
    # Replay: the same events give the same verdicts, counts included.
    again = MatchFlow(PLAYERS)
    pairs = replay_events(again, s.events)
    assert pairs and all(got.to_json() == had for got, had in pairs)
    assert again.illegal_counts() == {"Ann": 1, "Bob": 2}


def test_a_match_without_illegal_moves_keeps_its_match_verdict_unchanged():
    """Journals written before the count existed must still replay."""
    s = Script()
    s.start()
    s.guess(SECRET)
    s.marks(4, 0)
    s.ev("reading", 100 * MS, game=1, row=0, phase="secret", code=list(SECRET), shield="open",
         status="ok")
    s.press(1)
    s.start()
    s.guess(SECRET, game=2)
    s.marks(4, 0, game=2)
    s.ev("reading", 100 * MS, game=2, row=0, phase="secret", code=list(SECRET), shield="open",
         status="ok")
    (match,) = [v for v in s.verdicts if v["what"] == "match"]
    assert set(match) == {"what", "vp", "attempts", "penalties_vp"}


# -- the table, with the camera on a rendered board ---------------------------------------

@pytest.fixture
def table(tmp_path, calibrated):
    from pegwatch.simulation.render import BoardContents

    profile, reader, conditions = calibrated
    clock = VirtualClock()
    scene = Scene(profile, BoardContents.empty(profile), conditions)
    scene.new_game(SECRET)
    worker = VisionWorker(None, reader, submit=lambda *a: None, frames_to_accept=2,
                          give_up_frames=6)
    program = TableProgram.open(tmp_path / "j.sqlite", players=PLAYERS, now_ns=clock,
                                worker=worker)

    def frames(n):
        for _ in range(n):
            clock.advance(100 * MS)
            worker.feed(scene.photo(), clock())
            program.step()

    yield program, clock, scene, frames
    program.close()


def test_an_incomplete_row_on_the_board_shows_illegal_row_not_check_row(table, tmp_path):
    program, clock, scene, frames = table
    program.press(0, clock())
    frames(3)
    scene.shield(open_=False)
    # Bob places three pegs and presses: hole 2 stays empty.
    scene.place_guess(1, INCOMPLETE)
    clock.advance(20 * S)
    program.press(1, clock())
    frames(4)
    row = program.flow.game.rows[0]
    assert row.guess == INCOMPLETE
    message = program.display_model().message
    assert (message.text, message.severity) == ("ILLEGAL ROW 1", Severity.WARNING)
    assert program.flow.checks() == ()
    assert any("ILLEGAL GUESS" in line for line in program.transcript)
    # Ann marks 1B 1W (scored as a code, it would be 2B 0W) and presses: she
    # accepts the move, the message goes, and no mis-mark is flagged.
    scene.place_keys(1, 1, 1)
    clock.advance(10 * S)
    program.press(0, clock())
    frames(4)
    assert program.display_model().message is None
    assert not [v for v in program.verdicts if v.what == "mismark"]
    # Bob again: a second incomplete row calls the arbiter.
    scene.place_guess(2, ("green", "empty", "empty", "yellow"))
    clock.advance(20 * S)
    program.press(1, clock())
    frames(4)
    message = program.display_model().message
    assert (message.text, message.severity) == ("ARBITER: ILLEGAL x2", Severity.ALARM)
    assert len(message.text) <= 21
    # The arbiter enters the replayed row by hand: legal now, the message goes.
    program.arbiter("confirm_row", clock(), game=1, row=2, guess=["green", "red", "red", "yellow"],
                    by="arbiter", hand=True)
    program.step()
    assert program.display_model().message is None
    assert program.flow.illegal_counts() == {"Ann": 0, "Bob": 2}
    program.close()
    result = replay_journal(tmp_path / "j.sqlite")
    assert not result.mismatches
    assert [v.count for v in result.verdicts if isinstance(v, Illegal)] == [1, 2]
    assert result.flow.illegal_counts() == {"Ann": 0, "Bob": 2}


def test_checks_and_mismarks_come_before_the_illegal_row(tmp_path):
    clock = VirtualClock()
    program = TableProgram.open(tmp_path / "j.sqlite", players=PLAYERS, now_ns=clock)

    def reading(row, phase, guess, black=0, white=0, status="ok"):
        clock.advance(200 * MS)
        program.submit("reading", {"game": 1, "row": row, "phase": phase, "guess": list(guess),
                                   "black": black, "white": white, "status": status})
        program.step()

    program.press(0, clock())
    program.step()
    clock.advance(S)
    program.submit("reading", {"game": 1, "row": 0, "phase": "secret", "code": list(SECRET),
                               "shield": "closed", "status": "ok"})
    program.step()
    clock.advance(5 * S)
    program.press(1, clock())
    program.step()
    reading(1, "guess", INCOMPLETE)
    assert program.display_model().message.text == "ILLEGAL ROW 1"
    clock.advance(5 * S)
    program.press(0, clock())
    program.step()
    reading(1, "marks", INCOMPLETE, 1, 1)
    # Row 2 is illegal too (Bob's second), and its marks wait for a check.
    clock.advance(5 * S)
    program.press(1, clock())
    program.step()
    reading(2, "guess", ("empty", "empty", "blue", "yellow"))
    assert program.display_model().message.text == "ARBITER: ILLEGAL x2"
    clock.advance(5 * S)
    program.press(0, clock())
    program.step()
    assert program.display_model().message is None  # accepted by Ann's press
    reading(2, "marks", ("empty", "empty", "blue", "yellow"), status="occluded")
    assert program.display_model().message.text == "CHECK ROW 2"
    program.close()


def test_export_and_replay_cli_show_the_counts(tmp_path, capsys):
    clock = VirtualClock()
    path = tmp_path / "j.sqlite"
    program = TableProgram.open(path, players=PLAYERS, now_ns=clock)

    def step(kind, **payload):
        clock.advance(S)
        program.submit(kind, payload)
        program.step()

    for game, maker, breaker in ((1, 0, 1), (2, 1, 0)):
        step("press", player=maker)
        step("reading", game=game, row=0, phase="secret", code=list(SECRET), shield="closed",
             status="ok")
        step("press", player=breaker)
        step("reading", game=game, row=1, phase="guess", guess=list(INCOMPLETE), status="ok")
        step("press", player=maker)
        step("reading", game=game, row=1, phase="marks", guess=list(INCOMPLETE), black=1, white=1,
             status="ok")
        step("press", player=breaker)
        step("reading", game=game, row=2, phase="guess", guess=list(SECRET), status="ok")
        step("press", player=maker)
        step("reading", game=game, row=2, phase="marks", guess=list(SECRET), black=4, white=0,
             status="ok")
        step("reading", game=game, row=0, phase="secret", code=list(SECRET), shield="open",
             status="ok")
    assert program.flow.phase is Phase.MATCH_OVER
    program.close()
    written = export_records(path, tmp_path / "out")
    match = json.loads((tmp_path / "out" / "match.json").read_text())
    assert match["illegal_moves"] == {"Ann": 1, "Bob": 1}
    game1 = json.loads((tmp_path / "out" / "game1.json").read_text())
    assert game1["illegal_moves"][0]["row"] == 1 and game1["illegal_moves"][0]["player"] == "Bob"
    assert len(written) == 3
    capsys.readouterr()
    assert main(["replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "illegal moves: Ann 1, Bob 1" in out and "every verdict reproduced" in out
    assert main(["replay", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["illegal_moves"] == {"Ann": 1, "Bob": 1}
    # The exported match judges again; the judge counts the rows as recorded.
    assert main(["judge", "--json", str(tmp_path / "out" / "match.json")]) == 0
    assert json.loads(capsys.readouterr().out)["illegal_moves"] == {"Ann": 1, "Bob": 1}
