"""Matches under MSO rules: VP, penalties and the tie-breaks of seed 000."""

from __future__ import annotations

from dataclasses import dataclass, field

from rules_testkit import GUESSES, MISSES, SECRET, make_game

from pegwatch.rules.judge import judge_match
from pegwatch.rules.match import (
    attempts_excluding_lowest,
    break_ties,
    head_to_head_vp,
    match_vp,
    rank,
)
from pegwatch.rules.record import MatchRecord

FAIL = {"A": 13, "B": 13}


def test_fewer_attempts_wins_one_vp() -> None:
    """Seed 000: "The player who has solved the code with less attempts wins
    the match and gets 1VP, while his opponent gets 0 VPs." """
    assert match_vp({"A": 4, "B": 6}, failure_total=FAIL) == {"A": 1.0, "B": 0.0}
    assert match_vp({"A": 13, "B": 12}, failure_total=FAIL) == {"A": 0.0, "B": 1.0}


def test_draw_gives_half_each() -> None:
    """Seed 000: "In case of a draw, both get ½ VP." """
    assert match_vp({"A": 7, "B": 7}, failure_total=FAIL) == {"A": 0.5, "B": 0.5}


def test_two_thirteens_give_zero() -> None:
    """Seed 000: "If both players score 13 attempts, both have lost and get 0
    VP." """
    assert match_vp({"A": 13, "B": 13}, failure_total=FAIL) == {"A": 0.0, "B": 0.0}


def test_penalty_comes_off_the_codemaker_and_can_go_negative() -> None:
    """Seed 000: "the Codemaker is penalized by ½ VP"."""
    vp = match_vp({"A": 13, "B": 13}, failure_total=FAIL, penalties={"A": 0.5})
    assert vp == {"A": -0.5, "B": 0.0}


def test_judge_match_roles_alternate() -> None:
    """Seed 000: "The first-named player is Codemaker in game 1 with the roles
    reversed in game 2." """
    game1 = make_game(SECRET, GUESSES)                 # B breaks in 5
    game2 = make_game(SECRET, GUESSES[2:])             # A breaks in 3
    verdict = judge_match(MatchRecord("mso", ("A", "B"), (game1, game2)))
    assert verdict.attempts == {"A": 3, "B": 5}
    assert verdict.vp == {"A": 1.0, "B": 0.0}
    assert verdict.complete
    assert verdict.to_json()["vp"] == {"A": 1.0, "B": 0.0}


def test_judge_match_exception_penalty_and_both_fail() -> None:
    """Seed 000: "If both players score 13 attempts, both have lost and get 0
    VP", and the ½ VP penalty still comes off the codemaker who earned it."""
    game1 = make_game(SECRET, MISSES)                        # B: 13
    game2 = make_game(SECRET, [*MISSES[:11], SECRET], marks={12: (3, 0)})  # A: 12, B penalised
    verdict = judge_match(MatchRecord("mso", ("A", "B"), (game1, game2)))
    assert verdict.attempts == {"A": 12, "B": 13}
    assert verdict.penalties_vp == {"A": 0.0, "B": 0.5}
    assert verdict.vp == {"A": 1.0, "B": -0.5}
    both = judge_match(MatchRecord("mso", ("A", "B"), (game1, make_game(SECRET, MISSES))))
    assert both.vp == {"A": 0.0, "B": 0.0}


def test_incomplete_match_has_no_vp_yet() -> None:
    verdict = judge_match(MatchRecord("mso", ("A", "B"), (make_game(SECRET, GUESSES),)))
    assert not verdict.complete and verdict.vp == {"A": 0.0, "B": 0.0}


def test_home_match_points_and_replay() -> None:
    """Seed 002: "The player with the highest score is the winner."; the
    codemaker "scores one point for every line", and an indication error
    means "replay the game and award three extra points to the Decoder":
    the replay has the same codemaker."""
    game1 = make_game(SECRET, GUESSES, rules="hasbro")                  # A makes: 5 points
    game2 = make_game(SECRET, GUESSES[1:], rules="hasbro", marks={1: (0, 0)})  # B errs: A +3
    replay = make_game(SECRET, GUESSES[3:], rules="hasbro")             # B makes again: 2
    verdict = judge_match(MatchRecord("hasbro", ("A", "B"), (game1, game2, replay)))
    assert verdict.codemakers == ("A", "B", "B")
    assert verdict.points == {"A": 8, "B": 2}
    assert verdict.complete and verdict.vp == {"A": 1.0, "B": 0.0}
    unfinished = judge_match(MatchRecord("hasbro", ("A", "B"), (game1, game2)))
    assert not unfinished.complete and unfinished.vp == {"A": 0.0, "B": 0.0}


@dataclass(frozen=True)
class Result:
    players: tuple[str, str]
    vp: dict[str, float]
    game_attempts: dict[str, tuple[int, ...]] = field(default_factory=dict)


def test_tie_break_attempts_excluding_the_lowest() -> None:
    """Seed 000 TIES: "2- the less number of attempts, excluding the lowest
    one"."""
    assert attempts_excluding_lowest([5, 3, 13, 7]) == 25
    assert attempts_excluding_lowest([]) == 0


def test_tie_break_result_between_players_first() -> None:
    """Seed 000 TIES: "1- the results between players", then "2- the less
    number of attempts, excluding the lowest one"."""
    matches = [
        Result(("A", "B"), {"A": 1.0, "B": 0.0}, {"A": (9,), "B": (10,)}),
        Result(("B", "C"), {"B": 1.0, "C": 0.0}, {"B": (4,), "C": (6,)}),
        Result(("C", "A"), {"C": 1.0, "A": 0.0}, {"C": (3,), "A": (8,)}),
        Result(("D", "A"), {"D": 0.0, "A": 1.0}, {"D": (9,), "A": (2,)}),
    ]
    # A has 2 VP; B, C 1 each; D 0. B beat C head to head.
    assert head_to_head_vp("B", {"B", "C"}, matches) == 1.0
    assert rank(matches) == [["A"], ["B"], ["C"], ["D"]]
    # Three-way tie without head-to-head separation: fewer attempts excluding lowest.
    level = [
        Result(("A", "B"), {"A": 0.5, "B": 0.5}, {"A": (5,), "B": (5,)}),
        Result(("C", "D"), {"C": 0.5, "D": 0.5}, {"C": (4,), "D": (4,)}),
        Result(("A", "D"), {"A": 0.5, "D": 0.5}, {"A": (7,), "D": (9,)}),
        Result(("B", "C"), {"B": 0.5, "C": 0.5}, {"B": (6,), "C": (6,)}),
    ]
    # Everyone 1 VP, 1 VP head to head; excluding the lowest: A 7, B 6, C 6, D 9.
    assert break_ties(["A", "B", "C", "D"], level) == [["B", "C"], ["A"], ["D"]]


def test_illegal_moves_are_counted_per_player_in_a_match() -> None:
    """Seed 004, 3.4: "If the player commits a second illegal move the arbiter
    should be called": the match verdict counts illegal moves per player."""
    incomplete = ("red", "empty", "yellow", "blue")
    game1 = make_game(SECRET, [incomplete, incomplete, *GUESSES[2:]])   # B's guesses
    game2 = make_game(("red", "empty", "red", "red"), GUESSES[:1])     # B's code, A's guess
    verdict = judge_match(MatchRecord("mso", ("A", "B"), (game1, game2)))
    assert verdict.illegal_moves == {"A": 0, "B": 3}
    assert verdict.games[1].illegal_secret is not None
