"""hub.toml: read back what is written; every mistake one line naming the file and the key."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest
from hub_testkit import CONNECTION_4

from pegwatch.hub.config import MAX_HUB_FILE_BYTES, HubConfigError, format_hub, load_hub, parse_hub
from pegwatch.hub.model import Format, GameKind, Player, Result, Tournament
from pegwatch.hub.pairing import pair_next_round
from pegwatch.hub.standings import standings
from pegwatch.rules.errors import BadInput

GOOD = """
[tournament]
name = "MSO 2026 Mastermind"
game = "mastermind"
variant = "mso"
rounds = 7
tables = ["A1", "A2", "A3"]

[[players]]
id = "ada"
name = "Ada Lovelace"

[[players]]
id = "bob"
name = "Bob \\"the breaker\\""

[[players]]
id = "cy"
joined = 2
"""


def test_a_small_file_reads():
    t = parse_hub(GOOD)
    assert t.game.kind is GameKind.MASTERMIND and t.game.variant == "mso"
    assert [p.name for p in t.players] == ["Ada Lovelace", 'Bob "the breaker"', ""]
    assert t.player("cy").joined == 2
    assert t.effective_format() is Format.ROUND_ROBIN
    assert parse_hub(format_hub(t)) == t


def _play(t, rounds, rng):
    for number in range(1, rounds + 1):
        t = pair_next_round(t)
        for pairing in t.played[-1].pairings:
            if len(pairing.players) == 2 and rng.random() < 0.1:
                result = Result(number, pairing.table, pairing.players, forfeited=pairing.players[rng.randint(0, 1):])
            elif t.game.kind is GameKind.MASTERMIND:
                result = Result(number, pairing.table, pairing.players,
                                attempts=tuple((rng.randint(1, 13),) for _ in pairing.players),
                                penalties=tuple(rng.choice((0.0, 0.5)) for _ in pairing.players))
            else:
                result = Result(number, pairing.table, pairing.players,
                                levels=tuple(tuple(rng.randint(0, 18) for _ in range(6)) for _ in pairing.players))
            t = t.record(result)
    return t


@pytest.mark.parametrize("seed", range(3))
def test_a_whole_tournament_round_trips(seed):
    rng = random.Random(seed)
    t = parse_hub(GOOD)
    t = replace(t, players=tuple(Player(f"p{i}", f"Player \u00e9{i}\u007f") for i in range(13)), tables=())
    t = t.enter(Player("late", joined=3)).withdraw("p4", 3).grant_bye("p7", 3, 0.5).grant_bye("p1", 6, 0.0)
    t = _play(t, 4, rng)
    text = format_hub(t)
    again = parse_hub(text)
    assert again == t
    assert standings(again) == standings(t)
    four = _play(parse_hub(format_hub(Tournament("c4", CONNECTION_4, players=t.players[:9], seed=seed))), 2, rng)
    assert parse_hub(format_hub(four)) == four


def test_load_reads_a_file_and_refuses_a_huge_one(tmp_path):
    path = tmp_path / "hub.toml"
    path.write_text(GOOD, encoding="utf-8")
    assert load_hub(path).name == "MSO 2026 Mastermind"
    path.write_bytes(b"#" * (MAX_HUB_FILE_BYTES + 1))
    with pytest.raises(HubConfigError, match=r"hub.toml: .*too large"):
        load_hub(path)
    with pytest.raises(HubConfigError, match="no such file"):
        load_hub(tmp_path / "missing.toml")


HEAD = '[tournament]\nname = "t"\ngame = "mastermind"\n'
P = '[[players]]\nid = "a"\n[[players]]\nid = "b"\n'

BAD = [
    ("", "hub.toml: tournament: expected a table"),
    ("[tournament]\nname = 't'\n", "hub.toml: tournament.game: expected a non-empty string, got None"),
    ('[tournament]\nname = "t"\ngame = "chess"\n', "hub.toml: tournament.game: expected one of mastermind, connection, got 'chess'"),
    (HEAD + 'variant = "nope"\n', "hub.toml: tournament.variant: unknown rules preset 'nope'"),
    (HEAD + "seats = 4\n", "hub.toml: tournament.seats: Mastermind is played by 2, not 4"),
    (HEAD + "rounds = 0\n", "hub.toml: tournament.rounds: expected an integer 1..1000, got 0"),
    (HEAD + "colour = 1\n", "hub.toml: tournament.colour: unknown key"),
    (HEAD + 'format = "random-draw"\n', "hub.toml: tournament.format: random-draw does not suit 2-player tables"),
    (HEAD + 'tiebreaks = ["coin"]\n', "hub.toml: tournament.tiebreaks: unknown tie-break 'coin'"),
    (HEAD + 'bye_score = "one"\n', "hub.toml: tournament.bye_score: expected a number"),
    (HEAD + "[readings]\nequalise_opponents = 1\n", "hub.toml: readings.equalise_opponents: expected true or false"),
    (HEAD + "[[players]]\nname = 'x'\n", "hub.toml: players[0].id: expected a non-empty string"),
    (HEAD + P + '[[players]]\nid = "a"\n', "hub.toml: players[2].id: 'a' is entered twice"),
    (HEAD + P + "[[rounds]]\nnumber = 2\n", "hub.toml: rounds[0]: round 2: the next round is 1"),
    (HEAD + P + '[[rounds]]\nnumber = 1\n[[rounds.tables]]\ntable = "1"\nplayers = ["a", "z"]\n',
     "hub.toml: rounds[0]: no player 'z' in the tournament"),
    (HEAD + P + '[[rounds]]\nnumber = 1\n[[rounds.tables]]\ntable = "1"\nplayers = ["a", "b"]\n'
     '[[results]]\nround = 1\ntable = "1"\nplayers = ["a", "b"]\nattempts = [[3], [99]]\n',
     "hub.toml: results[0]: result of round 1, table 1: attempts of 'b' must be 1..13"),
    (HEAD + P + '[[results]]\nround = 1\ntable = "1"\nplayers = ["a", "b"]\nattempts = [[3], [4]]\n',
     "hub.toml: results[0]: result of round 1: that round is not paired"),
    (HEAD + P + '[[results]]\nround = 1\ntable = "1"\nplayers = ["a", "b"]\nattempts = [[3], ["x"]]\n',
     "hub.toml: results[0].attempts[1]: expected a list of integers"),
    (HEAD + "seed = 99999999999999999999999\n", "hub.toml: tournament.seed: the integer is too large (at most 64 bits)"),
    (HEAD + "players = 3\n", "hub.toml: tournament.players: unknown key"),
    ("players = 3\n" + HEAD, "hub.toml: players: expected a list, got 3"),
    ("[tournament\n", "hub.toml: not valid TOML"),
    (HEAD + P + '[[rounds]]\nnumber = 1\n[[rounds.tables]]\ntable = "1"\nplayers = ["a", "b"]\n'
     '[[results]]\nround = 1\ntable = "1"\nplayers = ["a", "b"]\nforfeited = ["c"]\n',
     "hub.toml: results[0]: result of round 1, table 1: a forfeit names one or both players"),
]


@pytest.mark.parametrize(("text", "message"), BAD, ids=[m.split(": ", 1)[1][:40] for _, m in BAD])
def test_bad_input_is_one_line_naming_the_file_and_key(text, message):
    with pytest.raises(HubConfigError) as caught:
        parse_hub(text)
    shown = str(caught.value)
    assert "\n" not in shown
    assert shown.startswith(message), shown
    assert isinstance(caught.value, BadInput)


def test_the_example_in_docs_reads():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "hall.md").read_text(encoding="utf-8")
    example = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    t = parse_hub(example, source="docs/hall.md")
    assert [p.id for p in t.players] == ["ada", "bob", "cy"]
    # ada won (5 attempts against 13), cy had the bye: both on 1, level on every tie-break.
    assert [(r.player, r.rank, r.shared) for r in standings(t).rows][:2] == [("ada", 1, True), ("cy", 1, True)]
    assert parse_hub(format_hub(t)) == t
