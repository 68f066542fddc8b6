"""The judge's readings of seed 000 (THE CODEBREAKER FAILS / THE CODEMAKER
FAILS) and of the home rules (seeds 002, 003). Each test quotes its clause."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rules_testkit import GUESSES, MISSES, SECRET, make_game

from pegwatch.rules.codes import Feedback, score
from pegwatch.rules.judge import judge_game
from pegwatch.rules.record import GameRecord, Role, Row
from pegwatch.rules.variants import get_variant


def test_attempts_is_the_row_that_solved_the_code() -> None:
    """Seed 000: "The player who has solved the code with less attempts wins
    the match": attempts is the row on which the code was solved."""
    v = judge_game(make_game(SECRET, GUESSES))
    assert (v.attempts, v.solved, v.solved_row, v.mismarked_row) == (5, True, 5, None)
    assert v.codemaker_penalty_vp == 0 and v.finished


def test_not_solved_by_the_last_row_is_13() -> None:
    """Seed 000: "If the Codebreaker fails to solve the code within the 12th
    line (the last on the board), he will be recorded in any case as having
    scored 13 attempts." """
    v = judge_game(make_game(SECRET, MISSES))
    assert (v.attempts, v.solved, v.mismarked_row, v.finished) == (13, False, None, True)


def test_codebreaker_timeout_is_13() -> None:
    """Seed 000: "If the Codebreaker's time expires before he has solved the
    code he will be recorded as having scored 13 attempts." """
    v = judge_game(make_game(SECRET, MISSES[:4], timeout=Role.CODEBREAKER))
    assert (v.attempts, v.solved, v.finished) == (13, False, True)


def test_codebreaker_timeout_after_solving_changes_nothing() -> None:
    """Seed 000: the 13 applies when time expires "before he has solved the
    code"; once solved, a later timeout is moot."""
    v = judge_game(make_game(SECRET, GUESSES, timeout=Role.CODEBREAKER))
    assert v.attempts == 5 and v.solved
    assert any("changes nothing" in n for n in v.notes)


def test_a_row_is_mismarked_when_its_marks_differ_from_score() -> None:
    """Seed 000: "the Codemaker has marked an attempt incorrectly": the marks
    differ from score(secret, guess), in black or in white."""
    for wrong in [(0, 2), (1, 1), (2, 1), (0, 0)]:
        v = judge_game(make_game(SECRET, GUESSES, marks={2: wrong}))
        assert v.mismarked_row == 2, wrong
    # Marks equal to score() are never a mis-mark.
    assert judge_game(make_game(SECRET, GUESSES, marks={2: (2, 0)})).mismarked_row is None


def test_seed_example_mismark_on_line_3_gives_4_attempts() -> None:
    """Seed 000: "Example: Codemaker incorrectly marks line 3. Codebreaker is
    credited with having solved the code in four attempts." """
    v = judge_game(make_game(SECRET, GUESSES, marks={3: (2, 0)}))
    assert (v.mismarked_row, v.attempts, v.codemaker_penalty_vp) == (3, 4, 0.0)
    assert v.expected_marks is not None and v.expected_marks[2] == Feedback(3, 0)


def test_only_the_first_mismarked_row_counts() -> None:
    """Seed 000: "credited with having solved the code on the following
    line": the following line of the first incorrectly marked one."""
    v = judge_game(make_game(SECRET, GUESSES, marks={2: (0, 0), 4: (0, 0)}))
    assert (v.mismarked_row, v.attempts) == (2, 3)


def test_mismark_on_row_12_is_capped_at_13() -> None:
    """Seed 000: "credited with having solved the code on the following
    line": after row 12 that is the 13th, the same as failing."""
    v = judge_game(make_game(SECRET, MISSES, marks={12: (0, 0)}))
    assert (v.mismarked_row, v.attempts) == (12, 13)


def test_exception_when_the_mismarked_row_was_the_code() -> None:
    """Seed 000: "If the incorrectly answered code was the right code to be
    solved (that is, the Codemaker did not realize that the code has already
    been solved), the Codebreaker is credited with the correct number of
    attempts and the Codemaker is penalized by ½ VP." """
    v = judge_game(make_game(SECRET, GUESSES, marks={5: (3, 0)}))
    assert (v.mismarked_row, v.attempts, v.codemaker_penalty_vp) == (5, 5, 0.5)
    assert v.solved and v.finished


def test_rows_after_the_solving_row_are_ignored() -> None:
    """Seed 000 exception: "the Codemaker did not realize that the code has
    already been solved": the codebreaker played on, and those later rows
    change nothing, even if they are mis-marked too."""
    guesses = [*GUESSES, MISSES[0], MISSES[1]]
    v = judge_game(make_game(SECRET, guesses, marks={5: (2, 1), 6: (4, 0)}))
    assert (v.mismarked_row, v.attempts, v.codemaker_penalty_vp) == (5, 5, 0.5)
    assert any("ignored" in n for n in v.notes)


def test_codemaker_timeout_counts_the_current_row_as_mismarked() -> None:
    """Seed 000: "If the Codemaker's time expires before the end of the game,
    the current attempt is considered incorrectly answered." """
    game = make_game(SECRET, GUESSES[:3], marks={3: None}, timeout=Role.CODEMAKER)
    v = judge_game(game)
    assert (v.mismarked_row, v.mismark_by_timeout, v.attempts, v.codemaker_penalty_vp) == (
        3, True, 4, 0.0,
    )


def test_codemaker_timeout_on_the_row_that_was_the_code() -> None:
    """Seed 000: the current attempt "is considered incorrectly answered",
    with the same exception: "If the incorrectly answered code was the right
    code to be solved ... the Codemaker is penalized by ½ VP." """
    game = make_game(SECRET, GUESSES, marks={5: None}, timeout=Role.CODEMAKER)
    v = judge_game(game)
    assert (v.mismarked_row, v.attempts, v.codemaker_penalty_vp) == (5, 5, 0.5)


def test_codemaker_timeout_after_the_game_ended_changes_nothing() -> None:
    """Seed 000: the timeout rule applies "before the end of the game"."""
    v = judge_game(make_game(SECRET, GUESSES, timeout=Role.CODEMAKER))
    assert (v.mismarked_row, v.attempts, v.codemaker_penalty_vp) == (None, 5, 0.0)


def test_mismark_found_at_the_end_survives_a_later_codebreaker_timeout() -> None:
    """Seed 000: "If the Codebreaker founds that the Codemaker has marked an
    attempt incorrectly (either during his time or at the end of the game)":
    a mis-mark on row 2 still gives 3 attempts though time later ran out."""
    game = make_game(SECRET, MISSES[:7], marks={2: (1, 0)}, timeout=Role.CODEBREAKER)
    v = judge_game(game)
    assert (v.mismarked_row, v.attempts) == (2, 3)


def test_mismark_found_at_the_end_survives_failure_and_codemaker_timeout() -> None:
    """Seed 000: "(either during his time or at the end of the game)": an
    earlier mis-mark beats both a 12-row failure and a later codemaker
    timeout."""
    assert judge_game(make_game(SECRET, MISSES, marks={4: (1, 0)})).attempts == 5
    game = make_game(SECRET, MISSES[:8], marks={4: (1, 0), 8: None}, timeout=Role.CODEMAKER)
    v = judge_game(game)
    assert (v.mismarked_row, v.mismark_by_timeout, v.attempts) == (4, False, 5)


def test_game_in_progress_without_secret() -> None:
    """Seed 000: the codemaker "secretly sets a code": until the end the judge
    has no secret, so it never names a mis-marked row (never accuse on a
    guess) and reports consistency instead."""
    game = make_game(None, GUESSES[:3], marks={3: None}, true_secret=SECRET)
    v = judge_game(game)
    assert v.mismarked_row is None and not v.finished
    assert v.consistent is not None and v.consistent > 0
    assert v.suspect_rows == ()
    data = v.to_json()
    assert data["consistent"] == v.consistent and data["suspect_rows"] == []


def test_hidden_secret_with_inconsistent_marks_names_suspects_only() -> None:
    """Seed 000: "the Codebreaker founds that the Codemaker has marked an
    attempt incorrectly": without the secret only the inconsistency is
    certain, so the judge lists the suspect rows and accuses none."""
    game = make_game(None, GUESSES[:4], marks={2: (0, 0)}, true_secret=SECRET)
    v = judge_game(game)
    assert v.mismarked_row is None
    assert v.consistent == 0
    assert v.suspect_rows is not None and 2 in v.suspect_rows
    assert v.attempts == 13 and not v.finished


def test_hidden_secret_all_black_row_is_solved() -> None:
    """Seed 002: "If the Decoder breaks the code, the Codemaker must roll back
    the shield": without the secret, the codemaker's all-black marks say so."""
    v = judge_game(make_game(None, GUESSES, true_secret=SECRET))
    assert (v.solved, v.attempts, v.finished, v.consistent) == (True, 5, True, 1)


def test_illegal_guesses_are_reported_not_accepted_silently() -> None:
    """Seed 004, 3.4: "If an illegal move is made ... the opponent should
    notify the player of their mistake"; the judge reports it."""
    guesses = [("red", "empty", "blue", "blue"), *GUESSES[1:]]
    v = judge_game(make_game(SECRET, guesses))
    assert [r.row for r in v.illegal_rows] == [1]
    assert "incomplete" in v.illegal_rows[0].reason
    assert v.illegal_moves[Role.CODEBREAKER] == 1
    assert v.to_json()["illegal_rows"][0]["row"] == 1


def _home(rules: str, guesses, **kw) -> GameRecord:  # type: ignore[no-untyped-def]
    return make_game(SECRET, guesses, rules=rules, **kw)


def test_home_codemaker_scores_a_point_per_row() -> None:
    """Seed 002: "the Codemaker scores one point for every line of Code pegs
    placed by the Decoder"."""
    v = judge_game(_home("hasbro", GUESSES))
    assert (v.codemaker_points, v.decoder_bonus_points, v.replay) == (5, 0, False)
    data = v.to_json()
    assert {"codemaker_points", "decoder_bonus_points", "replay"} <= data.keys()


def test_home_unsolved_board_scores_twelve_no_bonus_row() -> None:
    """Seed 002: "one point for every line of Code pegs placed": 12 lines on
    a full Hasbro board, and no 13th-row bonus."""
    v = judge_game(_home("hasbro", MISSES))
    assert v.codemaker_points == 12


def test_lego_counts_rows_too() -> None:
    """Seed 003: "krijgt de codemaker één punt voor elke rij pips die de
    codebreker heeft neergezet"."""
    # Ten misses in LEGO's six colours (MISSES use eight: not a LEGO record).
    lego = get_variant("lego").palette
    misses = [(lego[i % 6], lego[(i + 1) % 6], lego[(i + 2) % 6], lego[i // 6]) for i in range(10)]
    secret = (lego[0], lego[0], lego[0], lego[0])
    v = judge_game(make_game(secret, misses, rules="lego"))
    assert (v.codemaker_points, v.attempts, v.solved) == (10, 11, False)


def test_home_indication_error_replays_with_three_points() -> None:
    """Seed 002: "If the Codemaker makes a mistake when giving information to
    the Decoder, replay the game and award three extra points to the
    Decoder." """
    v = judge_game(_home("hasbro", GUESSES, marks={2: (0, 1)}))
    assert (v.replay, v.decoder_bonus_points, v.codemaker_points) == (True, 3, 0)
    assert v.codemaker_penalty_vp == 0
    v = judge_game(_home("lego-blanks", GUESSES, marks={1: (0, 0)}))
    assert (v.replay, v.decoder_bonus_points) == (True, 3)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["mso", "mso-5", "hasbro-advanced", "lego"]).flatmap(
        lambda name: st.tuples(
            st.just(name),
            st.data(),
        )
    )
)
def test_correctly_marked_game_is_never_mismarked(case) -> None:  # type: ignore[no-untyped-def]
    """Seed 000: only a row "marked ... incorrectly" is a mis-mark: a game
    marked by score() never gets a mismarked_row, whatever the guesses."""
    name, data = case
    variant = get_variant(name)
    palette = list(variant.palette) + (["empty"] if variant.blanks else [])
    code = st.lists(st.sampled_from(palette), min_size=variant.holes, max_size=variant.holes)
    secret = tuple(data.draw(code))
    guesses = data.draw(st.lists(code, min_size=0, max_size=variant.rows))
    unmarked_last = data.draw(st.booleans()) and bool(guesses)
    rows = [Row(tuple(g), score(secret, g)) for g in guesses]
    if unmarked_last:
        rows[-1] = Row(rows[-1].guess, None)
    v = judge_game(GameRecord(name, secret, tuple(rows)))
    assert v.mismarked_row is None
    assert v.codemaker_penalty_vp == 0
    assert 1 <= v.attempts <= variant.failure_attempts
    if v.solved:
        assert v.attempts == v.solved_row
    if variant.scoring.value == "home":
        assert v.replay is False


def test_unread_pegs_are_judged_over_every_colour_they_may_hold() -> None:
    """Seed 000 "marked an attempt incorrectly" is proved for a row with an
    "unknown" peg only when every colour the peg may hold gives the same
    answer (issue 14: judge with what is known); otherwise the row is
    unsure and the judge names the hole that decides."""
    guesses = [GUESSES[0], ("red", "unknown", "orange", "orange"), *GUESSES[2:]]
    # Hole 1 is a red in place whatever hole 2 holds: at least 1 black, so
    # 0/0 is wrong for every reading: a proved mis-mark, 3 attempts.
    v = judge_game(make_game(SECRET, guesses, marks={2: (0, 0)}))
    assert v.unread_rows == (2,) and v.mismarked_row == 2 and v.attempts == 3
    assert v.illegal_rows == () and v.unsure_rows == ()
    assert v.to_json()["bounded_rows"] == [{
        "row": 2, "verdict": "mismark", "deciding_holes": [], "deciding_keys": [],
        "expected": None, "may_be_code": False}]
    # Marked 2/0: right only when hole 2 holds red: unsure, hole 2 decides.
    v = judge_game(make_game(SECRET, guesses, marks={2: (2, 0)}))
    assert v.mismarked_row is None and v.unsure_rows == (2,) and v.attempts == 5
    assert [(b.row, b.judgement.deciding_holes) for b in v.bounded_rows] == [(2, (2,))]
    assert any("hole 2 decides" in n for n in v.notes)
    assert v.to_json()["unread_rows"] == [2]
    half = GameRecord("mso", ("red", "occluded", "yellow", "blue"),
                      make_game(SECRET, GUESSES, marks={3: (0, 0)}).rows)
    v = judge_game(half)
    assert v.mismarked_row is None and v.consistent == 0 and v.suspect_rows == (3,)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_single_mismark_is_found_and_credited(data) -> None:  # type: ignore[no-untyped-def]
    """Seed 000: "the Codebreaker is credited with having solved the code on
    the following line unless the code was correct on the line incorrectly
    marked": one wrong row k, before any solving row, gives mismarked_row k
    and min(k+1, 13) attempts, whether or not the code comes later."""
    variant = get_variant("mso")
    palette = list(variant.palette)
    code = st.lists(st.sampled_from(palette), min_size=4, max_size=4).map(tuple)
    secret = data.draw(code)
    guesses = data.draw(
        st.lists(code.filter(lambda g: g != secret), min_size=1, max_size=12)
    )
    if len(guesses) < 12 and data.draw(st.booleans()):
        guesses.append(secret)
    k = data.draw(st.integers(1, len(guesses)))
    right = score(secret, guesses[k - 1])
    wrong = data.draw(
        st.tuples(st.integers(0, 4), st.integers(0, 4))
        .filter(lambda m: sum(m) <= 4 and m != tuple(right))
    )
    rows = [Row(g, score(secret, g)) for g in guesses]
    rows[k - 1] = Row(rows[k - 1].guess, Feedback(*wrong))
    v = judge_game(GameRecord("mso", secret, tuple(rows)))
    assert v.mismarked_row == k
    if guesses[k - 1] == secret:
        assert (v.attempts, v.codemaker_penalty_vp) == (k, 0.5)
    else:
        assert (v.attempts, v.codemaker_penalty_vp) == (min(k + 1, 13), 0.0)


def test_huge_custom_preset_still_judged_without_consistency() -> None:
    """A preset too big for the consistency search (20 colours x 6 holes)
    is still judged; the verdict says the analysis was skipped."""
    from dataclasses import replace

    big = replace(get_variant("mso"), name="huge", colours=20, holes=6, palette=())
    guess = ("a", "b", "c", "d", "e", "f")
    v = judge_game(GameRecord("huge", None, (Row(guess, Feedback(1, 0)),)), big)
    assert v.consistent is None and v.attempts == 13
    assert any("consistency not analysed" in n for n in v.notes)
