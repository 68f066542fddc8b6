"""The hidden-secret judge (issue 12): every row is evidence, a blind verdict
is never final, and a record with more colours than its set is bad input."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pegwatch.device.cli import main
from pegwatch.rules.codes import EMPTY, UNKNOWN, Feedback, score
from pegwatch.rules.errors import BadInput
from pegwatch.rules.judge import REVEAL_KEYS, GameVerdict, judge_game, judge_match
from pegwatch.rules.legality import ColourCountError
from pegwatch.rules.record import GameRecord, MatchRecord, RecordError, Role, Row
from pegwatch.rules.variants import Variant, get_variant

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# Example 1 of issue 12 (mso): row 3 repeats row 2's guess and its all-black mark.
SOLVED_TWICE = (
    Row(("white", "black", "yellow", "green"), Feedback(0, 0)),
    Row(("red", "green", "orange", "green"), Feedback(4, 0)),
    Row(("red", "green", "orange", "green"), Feedback(4, 0)),
)
# Example 2 (mso-5): row 1 marked all black, then a different guess marked 0/1.
CODE_5 = ("red", "green", "blue", "yellow", "white")
AFTER_5 = ("green", "red", "pink", "pink", "pink")  # scores 0B2W against CODE_5
PLAYED_ON = (Row(CODE_5, Feedback(5, 0)), Row(AFTER_5, Feedback(0, 1)))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(["judge", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def write(tmp_path: Path, data: object) -> str:
    path = tmp_path / "game.json"
    path.write_text(json.dumps(data))
    return str(path)


# -- 1. every row is evidence ----------------------------------------------------------


def test_rows_after_an_all_black_mark_are_evidence() -> None:
    """Seed 000: "the Codebreaker founds that the Codemaker has marked an
    attempt incorrectly (either during his time or at the end of the game)".
    Row 3 repeats row 2 and its 4 blacks: a wrong mark on row 2 alone cannot
    explain the marks (row 3 says the same), so only row 1 is a suspect."""
    v = judge_game(GameRecord("mso", None, SOLVED_TWICE))
    assert v.consistent == 0 and v.suspect_rows == (1,)
    assert v.mismarked_row is None  # never accuse on a guess
    assert (v.solved_row, v.attempts, v.final) == (2, 2, False)
    assert any("row 3 comes after row 2 was marked all black" in n for n in v.notes)
    # Without row 3 both rows could be the wrong one.
    assert judge_game(GameRecord("mso", None, SOLVED_TWICE[:2])).suspect_rows == (1, 2)


def test_play_after_all_black_contradicting_the_marks_is_reported() -> None:
    """Seed 000: the codemaker's 5 blacks on row 1 say the code is row 1's
    guess, and then row 2 must be marked score(row 1, row 2) = 0B2W, not 0B1W:
    the marks are inconsistent and either row may be the single wrong one."""
    assert score(CODE_5, AFTER_5) == Feedback(0, 2)
    v = judge_game(GameRecord("mso-5", None, PLAYED_ON))
    assert v.consistent == 0 and v.suspect_rows == (1, 2)
    assert v.mismarked_row is None and not v.final
    assert {"attempts", "mismarked_row", "solved_row"} <= set(v.reveal_can_change)
    # If the secret is row 1's guess, row 2's wrong mark comes after the code
    # and changes nothing (seed 000's exception: "already been solved").
    shown = judge_game(GameRecord("mso-5", CODE_5, PLAYED_ON))
    assert (shown.attempts, shown.mismarked_row, shown.final) == (1, None, True)
    # If it is not, row 1's 5 blacks were the mis-mark: 2 attempts.
    other = judge_game(GameRecord("mso-5", AFTER_5, PLAYED_ON))
    assert (other.attempts, other.mismarked_row, other.solved_row) == (2, 1, 2)


def test_play_after_all_black_consistent_with_the_marks_has_no_suspect() -> None:
    """When the later row is marked as the all-black row's code demands, the
    marks agree (one code fits) and nothing is suspect; the result is still
    provisional."""
    rows = (PLAYED_ON[0], Row(AFTER_5, Feedback(0, 2)))
    v = judge_game(GameRecord("mso-5", None, rows))
    assert (v.consistent, v.suspect_rows, v.attempts, v.final) == (1, (), 1, False)


def test_examples_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, str(EXAMPLES / "solved-twice.json"), "--json")
    verdict = json.loads(out)
    assert status == 0 and verdict["suspect_rows"] == [1] and verdict["final"] is False
    status, out, _ = run(capsys, str(EXAMPLES / "played-on.json"), "--json")
    verdict = json.loads(out)
    assert status == 0 and verdict["suspect_rows"] == [1, 2] and verdict["consistent"] == 0
    status, text, _ = run(capsys, str(EXAMPLES / "played-on.json"))
    assert "after an all-black mark: kept as evidence" in text
    assert "PROVISIONAL until the secret is shown" in text


# -- 2. a blind verdict is never final -------------------------------------------------


def test_blind_verdict_json_is_not_final(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, str(EXAMPLES / "hidden-secret.json"), "--json")
    verdict = json.loads(out)
    assert status == 0 and verdict["final"] is False
    assert "mismarked_row" in verdict["reveal_can_change"]
    assert set(verdict["reveal_can_change"]) <= set(REVEAL_KEYS)
    status, out, _ = run(capsys, str(EXAMPLES / "sample-game.json"), "--json")
    verdict = json.loads(out)
    assert verdict["final"] is True and verdict["reveal_can_change"] == []


def test_blind_verdict_for_a_person_is_provisional(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, str(EXAMPLES / "hidden-secret.json"))
    assert status == 0
    assert "PROVISIONAL until the secret is shown" in out
    assert "showing the secret can still change: attempts" in out
    _, out, _ = run(capsys, str(EXAMPLES / "sample-game.json"))
    assert "PROVISIONAL" not in out


def test_codemaker_timeout_blind_can_still_become_the_exception() -> None:
    """Seed 000: "the current attempt is considered incorrectly answered",
    unless "the incorrectly answered code was the right code": blind, the
    timeout row gives k+1, and the reveal can still give k and ½ VP."""
    rows = (Row(("red", "red", "blue", "blue"), Feedback(2, 0)), Row(("red",) * 4, None))
    v = judge_game(GameRecord("mso", None, rows, Role.CODEMAKER))
    assert (v.mismarked_row, v.attempts, v.finished, v.final) == (2, 3, True, False)
    assert {"attempts", "codemaker_penalty_vp"} <= set(v.reveal_can_change)
    shown = judge_game(GameRecord("mso", ("red",) * 4, rows, Role.CODEMAKER))
    assert (shown.attempts, shown.codemaker_penalty_vp) == (2, 0.5)


def test_nothing_to_change_but_the_codes_legality() -> None:
    """No row at all and the codebreaker's time ran out: 13 attempts
    whatever the code ("If the Codebreaker's time expires before he has
    solved the code he will be recorded as having scored 13 attempts")."""
    v = judge_game(GameRecord("mso", None, (), Role.CODEBREAKER))
    assert (v.attempts, v.final, v.reveal_can_change) == (13, False, ("illegal_secret",))


def test_match_verdict_carries_final() -> None:
    code = ("red", "red", "yellow", "blue")
    known = GameRecord("mso", code, (Row(code, Feedback(4, 0)),))
    hidden = GameRecord("mso", None, (Row(code, Feedback(3, 0)), Row(code, None)))
    both = judge_match(MatchRecord("mso", ("A", "B"), (known, known)))
    assert both.final and both.to_json()["final"] is True and both.reveal_can_change == ()
    blind = judge_match(MatchRecord("mso", ("A", "B"), (known, hidden)))
    data = blind.to_json()
    assert data["final"] is False and data["games"][1]["final"] is False
    assert {"vp", "attempts", "penalties_vp"} <= set(data["reveal_can_change"])


def _variant(name: str) -> Variant:
    return get_variant(name)


def _tiny(scoring: str, blanks: bool) -> Variant:
    base = get_variant("hasbro" if scoring == "home" else "mso")
    return Variant(
        name="tiny", colours=3, palette=("a", "b", "c"), holes=3, rows=5, blanks=blanks,
        repeats=True, scoring=base.scoring, clock_preset=None, failure_attempts=6,
        games_per_match=2, mismark_bonus_points=3,
    )


def _game(data: st.DataObject, variant: Variant) -> tuple[tuple[str, ...], tuple[Row, ...], Role | None]:
    """A random game: a random legal secret, guesses (some the secret, some
    repeated, some incomplete or unread), marks correct or not, the last row
    perhaps unmarked, perhaps a timeout."""
    symbols = list(variant.palette) + ([EMPTY] if variant.blanks else [])
    code = st.lists(st.sampled_from(symbols), min_size=variant.holes, max_size=variant.holes).map(tuple)
    secret = data.draw(code)
    odd = st.lists(st.sampled_from([*symbols, EMPTY, UNKNOWN]), min_size=variant.holes,
                   max_size=variant.holes).map(tuple)
    guess = st.one_of(code, code, code, st.just(secret), odd)
    guesses = data.draw(st.lists(guess, min_size=0, max_size=variant.rows))
    rows: list[Row] = []
    for g in guesses:
        right = score(secret, g)
        how = data.draw(st.sampled_from(["right", "right", "right", "wrong", "all-black", "unread"]))
        if how == "wrong":
            b = data.draw(st.integers(0, variant.holes))
            marks = Feedback(b, data.draw(st.integers(0, variant.holes - b)))
        elif how == "all-black":
            marks = Feedback(variant.holes, 0)
        else:
            marks = right
        rows.append(Row(g, None, marks_unread=UNKNOWN) if how == "unread" else Row(g, marks))
    if rows and data.draw(st.booleans()):
        rows[-1] = Row(rows[-1].guess, None)
    timeouts: list[Role | None] = [None, Role.CODEBREAKER] + ([Role.CODEMAKER] if rows else [])
    timeout = data.draw(st.sampled_from(timeouts))
    return secret, tuple(rows), timeout


def _changed(blind: GameVerdict, shown: GameVerdict) -> set[str]:
    return {key for key in REVEAL_KEYS if getattr(blind, key) != getattr(shown, key)}


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["mso", "mso-5", "hasbro-advanced", "lego"]), st.data())
def test_a_blind_verdict_is_provisional_or_what_the_reveal_gives(name: str, data: st.DataObject) -> None:
    """For a random game with a random secret and possibly wrong marks, the
    verdict with the secret hidden is not final, and every key it does not
    list in reveal_can_change equals the verdict with the secret shown; that
    verdict is final. It never accuses on a guess."""
    variant = _variant(name)
    secret, rows, timeout = _game(data, variant)
    blind = judge_game(GameRecord(name, None, rows, timeout), variant)
    shown = judge_game(GameRecord(name, secret, rows, timeout), variant)
    assert shown.final and shown.reveal_can_change == ()
    assert shown.to_json()["final"] is True
    assert not blind.final and blind.to_json()["final"] is False
    assert _changed(blind, shown) <= set(blind.reveal_can_change)
    assert blind.mismarked_row is None or blind.mismark_by_timeout


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["mso", "home"]), st.booleans(), st.data())
def test_reveal_can_change_is_exact_on_a_tiny_board(
    scoring: str, blanks: bool, data: st.DataObject
) -> None:
    """reveal_can_change lists a key exactly when some legal secret, shown,
    changes it (checked against every code of a 3-colour, 3-hole board);
    illegal_secret is always listed, since the code shown may break the
    rules."""
    variant = _tiny(scoring, blanks)
    _, rows, timeout = _game(data, variant)
    blind = judge_game(GameRecord("tiny", None, rows, timeout), variant)
    symbols = list(variant.palette) + ([EMPTY] if blanks else [])
    changed = {"illegal_secret"}
    for secret in itertools.product(symbols, repeat=variant.holes):
        changed |= _changed(blind, judge_game(GameRecord("tiny", secret, rows, timeout), variant))
    assert set(blind.reveal_can_change) == changed


# -- 3. more colours than the set has: bad input ---------------------------------------

SEVEN = [("red", "yellow", "blue", "green"), ("orange", "brown", "red", "red"),
         ("red", "purple", "blue", "green")]


def test_more_colours_than_the_variant_is_bad_input_not_a_mismark() -> None:
    """Seed 003: "iedere combinatie van de 6 verschillende kleuren": seven
    colour names cannot be on a LEGO board, so a name is wrong; judging it
    could accuse the codemaker falsely, so the record is refused."""
    rows = tuple(Row(g, Feedback(1, 0)) for g in SEVEN)
    for secret in (None, ("red", "red", "red", "red")):
        with pytest.raises(ColourCountError, match=r"^rows\[2\]\.guess: .*to 7 .*lego has 6") as err:
            judge_game(GameRecord("lego", secret, rows))
        assert isinstance(err.value, RecordError) and isinstance(err.value, BadInput)
        assert err.value.where == "rows[2].guess"
    # Nine names on an eight-colour MSO board, the ninth in the secret.
    mso_rows = tuple(Row((c, c, c, c), Feedback(0, 0)) for c in get_variant("mso").palette)
    with pytest.raises(ColourCountError, match=r"^game\.json: rows\[7\]\.guess: .*to 9"):
        judge_game(GameRecord("mso", ("purple",) * 4, mso_rows), source="game.json")


def test_blanks_and_unread_pegs_are_not_colours() -> None:
    """"empty", "unknown" and "occluded" are not colour names: six colours
    plus them is still a LEGO record (seed 003 variation B counts the blank
    as a colour only where blanks are allowed, and lego-blanks has 8)."""
    rows = (Row(("red", "yellow", "blue", "green"), Feedback(0, 0)),
            Row(("orange", "brown", EMPTY, "unknown"), Feedback(0, 0)),
            Row(("occluded", EMPTY, "red", "red"), Feedback(0, 0)))
    judge_game(GameRecord("lego", None, rows))
    judge_game(GameRecord("lego-blanks", None, rows))


def test_the_table_can_judge_such_a_game_without_judging_marks() -> None:
    rows = tuple(Row(g, Feedback(1, 0)) for g in SEVEN)
    v = judge_game(GameRecord("lego", ("red",) * 4, rows), extra_colours="unjudged")
    assert v.mismarked_row is None and v.expected_marks is not None and not v.final
    assert any("lego has 6" in n for n in v.notes)
    blind = judge_game(GameRecord("lego", None, rows), extra_colours="unjudged")
    assert blind.consistent is None and blind.mismarked_row is None


@pytest.mark.parametrize("match", [False, True])
def test_colour_count_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], match: bool
) -> None:
    game = {"rules": "lego", "secret": None,
            "rows": [{"guess": list(g), "black": 1, "white": 0} for g in SEVEN]}
    data: object = game
    field = "rows[2].guess"
    if match:
        data = {"rules": "lego", "players": ["A", "B"], "games": [
            {"secret": None, "rows": [{"guess": ["red"] * 4, "black": 0, "white": 0}]}, game]}
        field = "games[1].rows[2].guess"
    path = write(tmp_path, data)
    for argv in ((path,), (path, "--json")):
        status, out, err = run(capsys, *argv)
        assert status == 2 and out == ""
        assert err.count("\n") == 1 and "Traceback" not in err
        assert err.startswith(f"pegwatch judge: {path}: {field}: brings the distinct colours")
