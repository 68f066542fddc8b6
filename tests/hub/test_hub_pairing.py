"""Pairings: the published Berger tables, Swiss by matching, the random draw,
and the arbiter's late entries, withdrawals and byes."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hub_testkit import CONNECTION_4, WIN, back, connection_round, mastermind_round, tournament

from pegwatch.hub.model import Format, HubError, Player, Result
from pegwatch.hub.pairing import berger_table, next_round, pair_next_round, random_draw_sizes
from pegwatch.hub.results import result_vp
from pegwatch.hub.standings import final_table, standings


def _parse(text):
    return [[tuple(int(n) for n in game.split("-")) for game in rnd.split()] for rnd in text.strip().splitlines()]


# FIDE Handbook C.05, Annex 1 (Berger tables), as published (also
# c.w.fox.tripod.com/chess/berger.html): round by round, board by board,
# first-named (white) - second-named.
PUBLISHED = {
    4: """
1-4 2-3
4-3 1-2
2-4 3-1
""",
    6: """
1-6 2-5 3-4
6-4 5-3 1-2
2-6 3-1 4-5
6-5 1-4 2-3
3-6 4-2 5-1
""",
    8: """
1-8 2-7 3-6 4-5
8-5 6-4 7-3 1-2
2-8 3-1 4-7 5-6
8-6 7-5 1-4 2-3
3-8 4-2 5-1 6-7
8-7 1-6 2-5 3-4
4-8 5-3 6-2 7-1
""",
    10: """
1-10 2-9 3-8 4-7 5-6
10-6 7-5 8-4 9-3 1-2
2-10 3-1 4-9 5-8 6-7
10-7 8-6 9-5 1-4 2-3
3-10 4-2 5-1 6-9 7-8
10-8 9-7 1-6 2-5 3-4
4-10 5-3 6-2 7-1 8-9
10-9 1-8 2-7 3-6 4-5
5-10 6-4 7-3 8-2 9-1
""",
}


@pytest.mark.parametrize("players", sorted(PUBLISHED))
def test_berger_tables_are_fides(players):
    assert berger_table(players) == _parse(PUBLISHED[players])


@pytest.mark.parametrize("players", [3, 5, 7, 9])
def test_an_odd_count_uses_the_next_table_with_the_highest_number_as_the_bye(players):
    assert berger_table(players) == _parse(PUBLISHED[players + 1])


def test_all_play_all_follows_the_table_and_gives_the_odd_player_a_bye():
    t = tournament("abcde")  # 5 players: the 6-player table, number 6 the bye
    assert t.effective_format() is Format.ROUND_ROBIN and t.planned_rounds() == 5
    t = pair_next_round(t)
    # Round 1: 1-6 (a's bye), 2-5 (b-e), 3-4 (c-d).
    assert [p.players for p in t.played[0].pairings] == [("b", "e"), ("c", "d")]
    assert [b.player for b in t.played[0].byes] == ["a"]
    seen = set()
    for _ in range(4):
        t = pair_next_round(t)
    for rnd in t.played:
        seen.update(frozenset(p.players) for p in rnd.pairings)
    assert len(seen) == 10  # every pair of 5 met exactly once


def test_a_withdrawal_in_all_play_all_gives_the_opponent_a_bye():
    t = pair_next_round(tournament("abcd"))  # R1 1-4 2-3
    t = t.withdraw("c", 2)
    rnd = next_round(t)  # R2 4-3 1-2: d's opponent c has withdrawn
    assert [p.players for p in rnd.pairings] == [("a", "b")]
    assert [(b.player, b.requested) for b in rnd.byes] == [("d", False)]
    with pytest.raises(HubError, match="no late entry"):
        t.enter(Player("e", joined=3))


def test_late_entry_withdrawal_and_requested_bye_in_a_swiss():
    t = tournament([f"p{i}" for i in range(12)], rounds=5)
    assert t.effective_format() is Format.SWISS
    t = t.enter(Player("late", "Late", joined=2))
    t = t.withdraw("p3", 2)
    t = t.grant_bye("p5", 2, 0.5)
    t = pair_next_round(t)
    assert "late" not in t.played[0].seated() and "p3" in t.played[0].seated()
    for pairing in t.played[0].pairings:
        t = t.record(Result(1, pairing.table, pairing.players, attempts=WIN))
    t = pair_next_round(t)
    r2 = t.played[1]
    assert "late" in r2.seated() and "p3" not in r2.seated()
    # 12 + late - p3 (withdrawn) - p5 (requested bye) = 11 playing: 5 tables and one pairing bye.
    assert len(r2.pairings) == 5
    assert [(b.score, b.requested) for b in r2.byes if b.player == "p5"] == [(0.5, True)]
    (odd,) = [b for b in r2.byes if b.player != "p5"]
    assert odd.score == 1.0 and not odd.requested


# -- Four-player Connection (seed 001) ---------------------------------------


def test_four_player_vp_with_split_places():
    # "1st 5VP, 2nd 3VP, 3rd 2VP, 4th 0VP, split positions share the VPs":
    # a first; b and c level on every colour share 2nd and 3rd, (3 + 2) / 2 = 2.5; d last.
    t = tournament("abcd", CONNECTION_4)
    t = connection_round(t, [{"a": back(14), "b": back(12), "c": (18, 18, 18, 18, 18, 12), "d": back(3)}])
    assert result_vp(CONNECTION_4, t.results[0]) == {"a": 5.0, "b": 2.5, "c": 2.5, "d": 0.0}
    # All four level: (5 + 3 + 2 + 0) / 4 = 2.5 each.
    t = connection_round(t, [{p: back(9) for p in "dcba"}])
    assert set(result_vp(CONNECTION_4, t.results[1]).values()) == {2.5}


def test_the_random_draw_is_reproducible_and_seats_everyone_once():
    t = tournament([f"p{i:02}" for i in range(10)], CONNECTION_4, seed=2026, rounds=3)
    assert t.effective_format() is Format.RANDOM_DRAW
    rnd = next_round(t)
    assert [len(p.players) for p in rnd.pairings] == random_draw_sizes(10, 4) == [4, 3, 3]
    assert sorted(p for pairing in rnd.pairings for p in pairing.players) == sorted(p.id for p in t.players)
    assert next_round(t) == rnd  # the same seed draws the same tables
    others = {next_round(replace(t, seed=s)) for s in range(5)}
    assert len(others) > 1  # and the seed matters
    assert random_draw_sizes(5, 4) == [3, 2] and random_draw_sizes(8, 4) == [4, 4]


def test_the_final_table_and_the_dice_for_a_tie_across_the_cut():
    # Round 1: two tables of four (a > b > c > d, e > f > g > h) and one of two (i > j).
    # 5 VP: a, e, i; 3 VP: b, f, j. None of the 3s met, and with one game each the
    # backmost difference "excluding the most favourable result" is 0 for all:
    # b, f and j share 4th, and one of them goes to the final table of four.
    t = tournament("abcdefghij", CONNECTION_4, rounds=1)
    t = connection_round(t, [
        {"a": back(15), "b": back(12), "c": back(9), "d": back(4)},
        {"e": back(16), "f": back(11), "g": back(8), "h": back(2)},
        {"i": back(17), "j": back(10)},
    ])
    table = final_table(t)
    assert (table.players, table.roll, table.places) == (("a", "e", "i"), ("b", "f", "j"), 1)
    tie = final_table(t, {"b": 3, "f": 6, "j": 6})
    assert (tie.players, tie.roll, tie.places) == (("a", "e", "i"), ("f", "j"), 1)
    decided = final_table(t, {"b": 2, "f": 6, "j": 4})
    assert (decided.players, decided.roll) == (("a", "e", "i", "f"), ())


def test_a_result_that_does_not_fit_is_refused():
    t = tournament("abcd", CONNECTION_4)
    t = connection_round(t, [{"a": back(15), "b": back(12), "c": back(9), "d": back(4)}])
    with pytest.raises(HubError, match=r"round 1, table 1: 'a' needs 6 colour levels, each 0..18"):
        t.record(Result(1, "1", ("a", "b", "c", "d"), levels=((19, 1, 1, 1, 1, 1), back(1), back(1), back(1))))
    m = mastermind_round(tournament("ab"), [("a", "b", WIN)])
    with pytest.raises(HubError, match=r"attempts of 'a' must be 1..13"):
        m.record(Result(1, "1", ("a", "b"), attempts=((14,), (3,))))
    with pytest.raises(HubError, match="not the pairing's"):
        m.record(Result(1, "1", ("b", "a"), attempts=WIN))
    assert standings(m).order() == ["a", "b"]
