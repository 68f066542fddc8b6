"""Small builders for the hall's tests: tournaments written round by round."""

from __future__ import annotations

from pegwatch.hub.model import Game, GameKind, Pairing, Player, Result, Round, Tournament

MSO = Game(GameKind.MASTERMIND, "mso")
CONNECTION_2 = Game(GameKind.CONNECTION, seats=2)
CONNECTION_4 = Game(GameKind.CONNECTION, seats=4)

#: A Mastermind match from the first-named player's side: (their attempts, the other's).
#: Under seed 000 fewer attempts wins 1 VP, equal attempts is ½ each, 13 and 13 is 0 each.
WIN, DRAW, LOSS = ((3,), (5,)), ((4,), (4,)), ((5,), (3,))


def tournament(ids: str | list[str], game: Game = MSO, **options) -> Tournament:
    names = list(ids)
    return Tournament("test", game, players=tuple(Player(p, p.upper()) for p in names), **options)


def mastermind_round(t: Tournament, games: list[tuple[str, str, tuple]]) -> Tournament:
    """One round of the arbiter's own pairings, each game (first, second,
    (first's attempts, second's attempts)), the results entered at once."""
    number = len(t.played) + 1
    pairings = tuple(Pairing(str(i + 1), (a, b)) for i, (a, b, _) in enumerate(games))
    t = t.add_round(Round(number, pairings))
    for i, (a, b, (att_a, att_b)) in enumerate(games):
        t = t.record(Result(number, str(i + 1), (a, b), attempts=(att_a, att_b)))
    return t


def back(level: int, second: int = 18) -> tuple[int, ...]:
    """Connection levels whose backmost colour is ``level`` (the next is ``second``)."""
    return (level, second, 18, 18, 18, 18)


def connection_round(t: Tournament, tables: list[dict[str, tuple[int, ...]]]) -> Tournament:
    """One round, each table given as {player: levels} in seat order."""
    number = len(t.played) + 1
    pairings = tuple(Pairing(str(i + 1), tuple(table)) for i, table in enumerate(tables))
    t = t.add_round(Round(number, pairings))
    for i, table in enumerate(tables):
        t = t.record(Result(number, str(i + 1), tuple(table), levels=tuple(table.values())))
    return t
