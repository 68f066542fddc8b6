"""Marks that no code can fit while the secret is hidden: said at once, blamed only at the reveal.

Seed 000: a mis-mark costs the codemaker, but with the code under the
shield the table cannot know WHICH row is wrong, so it calls the arbiter
("no code fits the marks") and names the rows that could be the single
wrong one; the row is named only when the secret is read.

The game, worked by hand. The code (never shown until the end) is
``pink red orange white``.
- Row 1 ``red red green green``: truly 1 black (the red in hole 2), but
  marked 0/0: the mis-mark.
- Row 2 ``red red red red``: truly 1 black, marked 1/0: right.
No code has no red (row 1) and exactly one red (row 2): inconsistent, and
either row alone could be the wrong one, so both are suspects.
- Row 3 is the code, marked 4/0: the game ends, the shield opens, the
  secret is read, and row 1 is the mis-mark: the codebreaker is credited
  with 2 attempts (the mis-marked row plus one).
"""

from __future__ import annotations

from flow_script import FlowScript

from pegwatch.device.table.program import TableProgram, replay_journal
from pegwatch.rules.codes import score
from pegwatch.rules.flow import Phase
from pegwatch.simulation.demo import VirtualClock

S = 1_000_000_000
SECRET = ("pink", "red", "orange", "white")
ROWS = ((("red", "red", "green", "green"), (0, 0)),
        (("red", "red", "red", "red"), (1, 0)),
        (SECRET, (4, 0)))


def _reading(game, row, phase, guess, marks=(0, 0)):
    return {"game": game, "row": row, "phase": phase, "guess": list(guess),
            "black": marks[0], "white": marks[1], "status": "ok"}


def _secret(shield, status="ok"):
    return {"game": 1, "row": 0, "phase": "secret", "code": list(SECRET), "shield": shield,
            "status": status}


def test_the_flow_says_inconsistent_names_no_row_then_judges_at_the_reveal():
    s = FlowScript()
    s.ev("press", player=0)
    s.ev("reading", **_secret("closed", status="hidden"))  # the shield hides the code
    for number, (guess, marks) in enumerate(ROWS, start=1):
        s.ev("press", player=1)
        s.ev("reading", **_reading(1, number, "guess", guess))
        s.ev("press", player=0)
        s.ev("reading", **_reading(1, number, "marks", guess, marks))
        whats = [v["what"] for v in s.verdicts]
        if number == 1:
            assert "inconsistent" not in whats
        if number == 2:
            inconsistent = [v for v in s.verdicts if v["what"] == "inconsistent"]
            assert len(inconsistent) == 1 and inconsistent[0]["suspects"] == [1, 2]
        assert "mismark" not in whats, "a row was blamed while the code was hidden"
    assert any("no code fits the marks" in line for line in s.lines)
    assert s.flow.phase is Phase.REVEAL
    s.ev("reading", **_secret("open"))
    mismark = [v for v in s.verdicts if v["what"] == "mismark"]
    assert [(v["row"], v["attempts"]) for v in mismark] == [(1, 2)]
    assert s.flow.phase is Phase.GAME_OVER and s.flow.games[0].verdict.attempts == 2


def test_the_table_journals_it_shows_it_and_replays_it(tmp_path):
    clock = VirtualClock()
    program = TableProgram.open(tmp_path / "j.sqlite", players=("Ann", "Bob"), now_ns=clock)
    try:
        def event(kind, payload):
            clock.advance(S)
            program.submit(kind, payload)
            program.step()

        event("press", {"player": 0})
        event("reading", _secret("closed", status="hidden"))
        for number, (guess, marks) in enumerate(ROWS[:2], start=1):
            event("press", {"player": 1})
            event("reading", _reading(1, number, "guess", guess))
            event("press", {"player": 0})
            event("reading", _reading(1, number, "marks", guess, marks))
        whats = [e.payload["what"] for e in program.journal.events() if e.kind == "verdict"]
        assert "inconsistent" in whats and "mismark" not in whats
        shown = program.display_model()
        assert shown.message is not None and shown.message.text == "MARKS INCONSISTENT"
    finally:
        program.close()
    result = replay_journal(tmp_path / "j.sqlite")
    assert result.mismatches == ()
    assert [v.what for v in result.verdicts].count("inconsistent") == 1


def test_more_colours_than_the_set_has_is_never_judged_and_never_crashes_the_table():
    """mso has 8 colours; nine names on the board (a misread or a stray peg
    set) make the marks unjudgeable, not a mis-mark and not a crash."""
    s = FlowScript()
    s.ev("press", player=0)
    s.ev("reading", **_secret("closed", status="hidden"))
    rows = (("red", "green", "blue", "yellow"), ("orange", "pink", "white", "black"),
            ("brown", "red", "green", "blue"))
    for number, guess in enumerate(rows, start=1):
        s.ev("press", player=1)
        s.ev("reading", **_reading(1, number, "guess", guess))
        s.ev("press", player=0)
        marks = score(SECRET, guess) if "brown" not in guess else (0, 0)
        s.ev("reading", **_reading(1, number, "marks", guess, tuple(marks)))
    whats = [v["what"] for v in s.verdicts]
    assert "mismark" not in whats and "inconsistent" not in whats
    assert "illegal" in whats
    assert s.flow.games[0].verdict is not None and not s.flow.games[0].verdict.final
