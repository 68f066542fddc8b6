"""Standings on worked examples, each figure checked by hand in the comments.

The seeds: 000 (Mastermind: "1- the results between players", "2- the less
number of attempts, excluding the lowest one"), 001 (Connection), 004 (the
MSO standard tie-breaks and clarifications 1 and 2).
"""

from __future__ import annotations

from dataclasses import replace

from hub_testkit import (
    CONNECTION_2,
    DRAW,
    LOSS,
    WIN,
    back,
    connection_round,
    mastermind_round,
    tournament,
)

from pegwatch.hub.model import Bye, Format, Pairing, Readings, Result, Round
from pegwatch.hub.pairing import pair_next_round
from pegwatch.hub.results import result_vp
from pegwatch.hub.standings import standings
from pegwatch.hub.tiebreaks import SEED_004_ROUND_ROBIN, SEED_004_SWISS


def _row(table, player):
    return next(r for r in table.rows if r.player == player)


# -- Mastermind (seed 000) ---------------------------------------------------


def test_mastermind_vp_follow_seed_000():
    t = tournament("abcdef")
    t = mastermind_round(t, [("a", "b", ((3,), (5,))), ("c", "d", ((4,), (4,))), ("e", "f", ((13,), (13,)))])
    vp = {r.player: r.score for r in standings(t).rows}
    # fewer attempts wins 1 VP; equal is ½ each; "If both players score 13 attempts, both have lost and get 0 VP".
    assert vp == {"a": 1.0, "b": 0.0, "c": 0.5, "d": 0.5, "e": 0.0, "f": 0.0}


def test_attempts_excluding_the_lowest_with_13_for_a_failure():
    # P and Q never meet, so "the results between players" is 0 each and step 2 decides.
    # P: 1 vs 2 (win), 13 vs 13 (both fail: 0 each), 3 vs 3 (draw) = 1.5 VP; attempts 1, 13, 3.
    # Q: 5 vs 6 (win), 5 vs 4 (loss), 8 vs 8 (draw) = 1.5 VP; attempts 5, 5, 8.
    # Excluding each one's lowest count: P 1+13+3-1 = 16, Q 5+5+8-5 = 13: Q has fewer, Q first.
    # Counting every game instead: P 17, Q 18: P first. So the reading is what decides.
    t = tournament(["p", "q", "u", "v1", "v2", "v3"])
    t = mastermind_round(t, [("p", "u", ((1,), (2,))), ("q", "v1", ((5,), (6,)))])
    t = mastermind_round(t, [("p", "u", ((13,), (13,))), ("q", "v2", ((5,), (4,)))])
    t = mastermind_round(t, [("p", "u", ((3,), (3,))), ("q", "v3", ((8,), (8,)))])
    table = standings(t)
    assert _row(table, "p").score == _row(table, "q").score == 1.5
    assert table.order()[:2] == ["q", "p"]
    assert _row(table, "p").tiebreaks == (0.0, -16.0)
    assert _row(table, "q").tiebreaks == (0.0, -13.0)
    every_game = standings(replace(t, readings=Readings(attempts_exclude_best=False)))
    assert every_game.order()[:2] == ["p", "q"]
    assert _row(every_game, "p").tiebreaks == (0.0, -17.0)


def test_a_split_subset_starts_again_from_step_1():
    # Seed 004, clarification 1. A, B, C, D all end on 2 VP:
    #   R1 A beats B, C beats X, D beats Y; R2 A beats C, B beats D, X-Y drawn;
    #   R3 C beats B; R4 B beats X, D beats Z.
    # Results between the four: A 2 (B, C), B 1 (D), C 1 (B), D 0: {A}, {B, C}, {D}.
    # {B, C} is a new tie "between only those players": C beat B, so C before B,
    # although B's attempts are fewer (B 3+2+13+2-2 = 18, C 11+10+12-10 = 23),
    # which is what going on to step 2 would have used.
    t = tournament(["a", "b", "c", "d", "x", "y", "z"])
    t = mastermind_round(t, [("a", "b", ((2,), (3,))), ("c", "x", ((11,), (12,))), ("d", "y", WIN)])
    t = mastermind_round(t, [("a", "c", ((9,), (10,))), ("b", "d", ((2,), (4,))), ("x", "y", DRAW)])
    t = mastermind_round(t, [("c", "b", ((12,), (13,)))])
    t = mastermind_round(t, [("b", "x", ((2,), (5,))), ("d", "z", WIN)])
    table = standings(t)
    assert {r.player: r.score for r in table.rows if r.score == 2.0}.keys() == {"a", "b", "c", "d"}
    assert table.order()[:4] == ["a", "c", "b", "d"]
    assert _row(table, "b").tiebreaks == (1.0, -18.0)
    assert _row(table, "c").tiebreaks == (1.0, -23.0)


# -- Swiss (seed 004) --------------------------------------------------------


def test_swiss_buchholz_drop_2_then_full_buchholz():
    # R1 a-b 1-0, c-d 1-0, e-f ½-½; R2 a-c 0-1, b-e 1-0, d-f 1-0; R3 a-e 1-0, c-f ½-½, b-d 0-1.
    # Scores: a 2, b 1, c 2.5, d 2, e 0.5, f 1 (9 points for 9 games).
    # a met b 1, c 2.5, e 0.5: drop 2 -> 2.5, full 4.0, progressive 1+1+2 = 4.
    # d met c 2.5, f 1, b 1:   drop 2 -> 2.5, full 4.5, progressive 0+1+2 = 3.
    # Drop 2 ties them, full Buchholz puts d first (progressive would have put a first).
    t = tournament("abcdef", tiebreaks=SEED_004_SWISS)
    t = mastermind_round(t, [("a", "b", WIN), ("c", "d", WIN), ("e", "f", DRAW)])
    t = mastermind_round(t, [("a", "c", LOSS), ("b", "e", WIN), ("d", "f", WIN)])
    t = mastermind_round(t, [("a", "e", WIN), ("c", "f", DRAW), ("b", "d", LOSS)])
    table = standings(t)
    assert table.order()[:3] == ["c", "d", "a"]
    assert _row(table, "a").tiebreaks == (2.5, 4.0, 4.0)
    assert _row(table, "d").tiebreaks == (2.5, 4.5, 3.0)
    # b and f on 1: b met a 2, e 0.5, d 2 -> drop 2 keeps 2; f met e 0.5, d 2, c 2.5 -> keeps 2.5.
    assert table.order()[3:5] == ["f", "b"]


def test_progressive_is_the_seeds_own_example():
    # "if your scores were: Win, Loss, Win, Draw then your progressive scores
    # are 1, 1, 2, 2.5 and your Progress tie-break value is 6.5"; the other
    # player's are 0, 1, 1, 1.5 = 3.5.
    t = tournament("xy", tiebreaks=("progressive",))
    for outcome in (WIN, LOSS, WIN, DRAW):
        t = mastermind_round(t, [("x", "y", outcome)])
    table = standings(t)
    assert _row(table, "x").tiebreaks == (6.5,)
    assert _row(table, "y").tiebreaks == (3.5,)


def test_opponents_are_equalised_for_buchholz():
    # Seed 004, clarification 2. R1 a-b 1-0, c-d 1-0, e bye (1); R2 a-c ½-½, b-e 1-0, d bye (1).
    # Scores: a 1.5, c 1.5, b 1, d 1, e 1.
    # On 1: b met a 1.5 and e 1; d met c 1.5; e met b 1. d and e have one opponent,
    # so b keeps only his highest ranked, a: Buchholz b 1.5, d 1.5, e 1.
    # e is last; {b, d} starts again and stays level: they share 3rd.
    # Without equalising: b 2.5, d 1.5, e 1.
    t = tournament("abcde", tiebreaks=("buchholz",))
    t = mastermind_round(t, [("a", "b", WIN), ("c", "d", WIN)])
    t = t.grant_bye("e", 1, 1.0)
    t = mastermind_round(t, [("a", "c", DRAW), ("b", "e", WIN)])
    t = t.grant_bye("d", 2, 1.0)
    table = standings(t)
    third = [r for r in table.rows if r.score == 1.0]
    assert [(r.player, r.rank, r.shared) for r in third] == [("b", 3, True), ("d", 3, True), ("e", 5, False)]
    assert [r.tiebreaks for r in third] == [(1.5,), (1.5,), (1.0,)]
    plain = standings(replace(t, readings=Readings(equalise_opponents=False)))
    assert [r.player for r in plain.rows if r.score == 1.0] == ["b", "d", "e"]
    assert [r.tiebreaks for r in plain.rows if r.score == 1.0] == [(2.5,), (1.5,), (1.0,)]


# -- All-play-all (seed 004) -------------------------------------------------


def _round_robin(outcomes):
    """Four players on the Berger table (1-4 2-3 / 4-3 1-2 / 2-4 3-1); ``outcomes``
    gives each game's result from the first-named player's side."""
    t = tournament("xyzw", tiebreaks=SEED_004_ROUND_ROBIN)
    for number in (1, 2, 3):
        t = pair_next_round(t)
        for pairing in t.played[-1].pairings:
            a, b = pairing.players
            t = t.record(Result(number, pairing.table, (a, b), attempts=outcomes[(a, b)]))
    return t


def test_sonneborn_berger_then_head_to_head():
    # x=1, y=2, z=3, w=4. R1 x-w 0-1, y-z 1-0; R2 w-z 1-0, x-y 1-0; R3 y-w ½-½, z-x ½-½.
    # Scores: x 1.5, y 1.5, z 0.5, w 2.5.
    # SB x: beat y 1x1.5 + drew z ½x0.5 = 1.75; SB y: beat z 1x0.5 + drew w ½x2.5 = 1.75.
    # Level, so head to head: x beat y.
    t = _round_robin({("x", "w"): LOSS, ("y", "z"): WIN, ("w", "z"): WIN, ("x", "y"): WIN,
                      ("y", "w"): DRAW, ("z", "x"): DRAW})
    table = standings(t)
    assert table.order() == ["w", "x", "y", "z"]
    assert _row(table, "x").tiebreaks == (1.75, 1.0)
    assert _row(table, "y").tiebreaks == (1.75, 0.0)


def test_sonneborn_berger_decides():
    # R1 x-w 1-0, y-z ½-½; R2 w-z 1-0, x-y 0-1; R3 y-w ½-½, z-x 1-0.
    # Scores: x 1, y 2, z 1.5, w 1.5. SB z: drew y ½x2 + beat x 1x1 = 2;
    # SB w: beat z 1x1.5 + drew y ½x2 = 2.5: w before z.
    t = _round_robin({("x", "w"): WIN, ("y", "z"): DRAW, ("w", "z"): WIN, ("x", "y"): LOSS,
                      ("y", "w"): DRAW, ("z", "x"): WIN})
    table = standings(t)
    assert table.order() == ["y", "w", "z", "x"]
    assert _row(table, "z").tiebreaks[0] == 2.0
    assert _row(table, "w").tiebreaks[0] == 2.5


def test_a_cycle_no_tie_break_breaks_is_a_shared_rank():
    # x beats y, y beats w, w beats x, and all beat z: x, y, w on 2, SB 2 each
    # (each beat one 2-pointer and z on 0), head to head 1 each.
    t = _round_robin({("x", "w"): LOSS, ("y", "z"): WIN, ("w", "z"): WIN, ("x", "y"): WIN,
                      ("y", "w"): WIN, ("z", "x"): LOSS})
    table = standings(t)
    assert [(r.player, r.rank, r.shared) for r in table.rows] == [
        ("w", 1, True), ("x", 1, True), ("y", 1, True), ("z", 4, False)]


# -- Perfect scores (seed 004) -----------------------------------------------


def test_two_perfect_scores_call_for_an_extra_round():
    t = tournament("abcd", rounds=1, format=Format.SWISS)
    t = mastermind_round(t, [("a", "b", WIN), ("c", "d", WIN)])
    table = standings(t)
    assert table.perfect == ("a", "c") and table.extra_round == ("a", "c")
    t = pair_next_round(t)
    assert [p.players for p in t.played[-1].pairings] in ([("a", "c")], [("c", "a")])
    assert t.played[-1].byes == ()  # b and d do not play the additional round
    first, second = t.played[-1].pairings[0].players
    t = t.record(Result(2, "1", (first, second), attempts=WIN))
    assert standings(t).extra_round == ()


def test_a_pairing_bye_is_deemed_perfect_a_requested_one_is_not():
    # Seed 004: a player "awarded less than the maximum score if a game cannot be
    # played due to missing opponents ... shall be deemed to have a perfect score".
    t = tournament("abc", rounds=1, bye_score=0.5, format=Format.SWISS)
    t = mastermind_round(t, [("a", "b", WIN)])
    requested = t.grant_bye("c", 1, 0.5)  # the arbiter granting c's request
    rnd = replace(t.played[0], byes=(Bye("c", 0.5),))  # the odd player's bye
    from_pairing = replace(t, played=(rnd,))
    assert standings(from_pairing).extra_round == ("a", "c")
    assert standings(requested).extra_round == ()


# -- Mensa Connection (seed 001) ---------------------------------------------


def test_connection_two_players_backmost_colour_decides():
    t = tournament("pq", CONNECTION_2)
    # Backmost 7 = 7, then 9 = 9, then 12 = 12, then 18 against 17: p wins.
    t = connection_round(t, [{"p": (18, 7, 18, 12, 9, 18), "q": (7, 9, 12, 17, 18, 18)}])
    assert result_vp(CONNECTION_2, t.results[0]) == {"p": 1.0, "q": 0.0}
    # "a draw (only if all the 6 colors are in the same position!)": the same levels in other colours.
    t = connection_round(t, [{"q": (7, 9, 12, 18, 18, 18), "p": (18, 18, 18, 12, 9, 7)}])
    assert result_vp(CONNECTION_2, t.results[1]) == {"q": 0.5, "p": 0.5}


def test_connection_progressive_difference_excluding_the_best():
    # P: R1 16 vs 7 (+9, win), R2 10 vs 12 (-2, loss), R3 12 vs 11 (+1, win): 2 VP.
    # Q: R1 12 vs 10 (+2, win), R2 11 vs 10 (+1, win), R3 10 vs 10 (0; loses on the second colour): 2 VP.
    # Excluding the most favourable: P -2+1 = -1, Q 1+0 = 1: Q first (all of them: P 8, Q 3).
    # As running totals: P -2, -1 -> -3; Q 1, 1 -> 2.
    t = tournament(["p", "q", "u1", "u2", "u3", "v1", "v2", "v3"], CONNECTION_2)
    t = connection_round(t, [{"p": back(16), "u1": back(7)}, {"q": back(12), "v1": back(10)}])
    t = connection_round(t, [{"p": back(10), "u2": back(12)}, {"q": back(11), "v2": back(10)}])
    t = connection_round(t, [{"p": back(12), "u3": back(11)}, {"q": back(10, 15), "v3": back(10)}])
    table = standings(t)
    assert _row(table, "p").score == _row(table, "q").score == 2.0
    assert table.order()[:2] == ["q", "p"]
    assert _row(table, "p").tiebreaks == (0.0, -1.0)
    assert _row(table, "q").tiebreaks == (0.0, 1.0)
    running = standings(replace(t, readings=Readings(connection_progressive=True)))
    assert _row(running, "p").tiebreaks == (0.0, -3.0)
    assert _row(running, "q").tiebreaks == (0.0, 2.0)


def test_a_forfeit_scores_the_maximum_and_adds_no_attempts():
    # R1 a-b: b did not come (a 1, b 0); c-d: c wins 4 against 6.
    # R2 a-c: a wins 2 against 9; b-d: both forfeited (0 each).
    # a on 2: attempts only from the game played, [2]: excluding the lowest, 0.
    # c on 1 with attempts [4, 9]: 9. d and b on 0: b met d (a forfeit: no games
    # played); head to head b-d is 0-0; attempts: b none (0), d [6]: 0. Level: shared.
    t = tournament("abcd")
    t = t.add_round(Round(1, (Pairing("1", ("a", "b")), Pairing("2", ("c", "d")))))
    t = t.record(Result(1, "1", ("a", "b"), forfeited=("b",)))
    t = t.record(Result(1, "2", ("c", "d"), attempts=((4,), (6,))))
    t = t.add_round(Round(2, (Pairing("1", ("a", "c")), Pairing("2", ("b", "d")))))
    t = t.record(Result(2, "1", ("a", "c"), attempts=((2,), (9,))))
    t = t.record(Result(2, "2", ("b", "d"), forfeited=("b", "d")))
    table = standings(t)
    assert [(r.player, r.score, r.rank) for r in table.rows] == [
        ("a", 2.0, 1), ("c", 1.0, 2), ("b", 0.0, 3), ("d", 0.0, 3)]
    assert _row(table, "a").tiebreaks == (0.0, 0.0)
    assert _row(table, "c").tiebreaks == (0.0, -9.0)
