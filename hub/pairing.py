"""The next round: Berger tables, Swiss by maximum-weight matching, the random draw.

Seeds 000 and 001: "Swiss tournament, with at least 7 to 9 matches. Till 10
players will be all play all." Seed 001, four players: "Random Draw
followed by a Final table". The Swiss pairing is one maximum-weight perfect
matching (networkx's blossom algorithm) over every pair of active players,
plus a bye node when their count is odd. Each pair's cost is built in
levels, each level weighing more than every lower level of a whole round
could add up to, so the matching minimises, in this order: rematches, a
second pairing bye, the spread of scores within pairs (the bye counts as
an opponent on 0, so it goes to the lowest score), seat preferences that
clash, and last a Dutch-like split of each score group (top half against
bottom half).
"""

from __future__ import annotations

import logging
import random
from dataclasses import replace

import networkx as nx

from pegwatch.hub.ledger import Ledger, build_ledger
from pegwatch.hub.model import Bye, Format, HubError, Pairing, Round, Tournament
from pegwatch.hub.standings import standings

__all__ = ["berger_table", "next_round", "pair_next_round", "random_draw_sizes", "swiss_pairs"]

logger = logging.getLogger(__name__)


def berger_table(players: int) -> list[list[tuple[int, int]]]:
    """FIDE's Berger tables (Handbook C.05, Annex 1) for ``players`` pairing
    numbers: per round, per board, (first-named, second-named). With an odd
    count the highest number, one more than the players, is the bye.

    Round r pairs a with b where a + b = r + 1 modulo n - 1; the number
    that would meet itself meets n, as first-named in even rounds, and of
    the other pairs the one whose partner lies an odd step ahead is first-named.
    """
    n = players + players % 2
    m = n - 1
    table: list[list[tuple[int, int]]] = []
    for r in range(1, n):
        a = next(x for x in range(1, m + 1) if (2 * x - (r + 1)) % m == 0)
        boards = [(n, a) if r % 2 == 0 else (a, n)]
        for k in range(1, n // 2):
            boards.append(((a + k - 1) % m + 1, (a - k - 1) % m + 1))
        table.append(boards)
    return table


def random_draw_sizes(count: int, seats: int) -> list[int]:
    """Tables for ``count`` players at most ``seats`` each, as even as can be
    (10 at fours: 4, 3, 3)."""
    if count < 2:
        return []
    tables = -(-count // seats)
    return [count // tables + (1 if i < count % tables else 0) for i in range(tables)]


def _seat_wish(player: str, ledger: Ledger) -> int:
    """-1: wants the first seat, 1: the second, 0: either (first seat means
    codemaker of game 1 in Mastermind, first to play in Connection)."""
    balance = ledger.first_seats(player)
    if balance:
        return -1 if balance < 0 else 1
    last = ledger.last_seat(player)
    return 0 if last is None else (-1 if last == 1 else 1)


def _seat_order(a: str, b: str, ledger: Ledger, rank: dict[str, int]) -> tuple[str, str]:
    def key(p: str) -> tuple[int, int, int]:
        last = ledger.last_seat(p)
        return (ledger.first_seats(p), 0 if last == 1 else 1, rank[p])

    return (a, b) if key(a) <= key(b) else (b, a)


#: Pairs further apart than this in the standings (and from the Dutch
#: partner) are left out of the first, sparse matching; a large Swiss would
#: otherwise hand the blossom algorithm every pair of hundreds of players.
NEAR = 24


def _candidates(n: int, group_of: list[tuple[int, int]], *, near: int | None) -> set[tuple[int, int]]:
    """Pairs (i < j) of standings positions the matching may use; all when ``near`` is None."""
    if near is None or n <= 2 * near:
        return {(i, j) for i in range(n) for j in range(i + 1, n)}
    pairs: set[tuple[int, int]] = set()
    for i in range(n):
        pairs.update((i, j) for j in range(i + 1, min(n, i + near + 1)))
        start, size = group_of[i]
        g = i - start
        if g < size // 2:
            partner = start + g + size // 2
            low, high = max(i + 1, partner - near // 2), min(start + size, partner + near // 2 + 1)
            pairs.update((i, j) for j in range(low, high))
    return pairs


def swiss_pairs(
    players: list[str], ledger: Ledger, *, near: int | None = NEAR
) -> tuple[list[tuple[str, str]], str | None]:
    """Pairs (in seat order, top boards first) and the player with the bye.

    ``players`` are in standings order; the cost levels are in the module's
    docstring. The near pairs are matched first; when they cannot pair
    everyone without a rematch or a second bye, every pair is offered, so
    those two are avoided whenever they can be."""
    n = len(players)
    if n < 2:
        return [], (players[0] if players else None)
    rank = {p: i for i, p in enumerate(players)}
    quarter = {p: round(ledger.score[p] * 4) for p in players}
    group_of: list[tuple[int, int]] = []  # (start, size) of each position's score group
    start = 0
    while start < n:
        end = start
        while end < n and quarter[players[end]] == quarter[players[start]]:
            end += 1
        group_of.extend([(start, end - start)] * (end - start))
        start = end
    bye = n  # the bye's node
    nodes = n + n % 2
    edges = nodes // 2
    spread = max(0, *quarter.values()) - min(0, *quarter.values())
    # (per-edge maximum) of each level, lowest first: Dutch split, seats, scores, second bye, rematch.
    maxima = (n, 1, spread * spread, 1, 1)
    mult: list[int] = []
    below = 0
    for top in maxima:
        mult.append(below + 1)
        below += mult[-1] * top * edges
    ceiling = below + 1
    wish = {p: _seat_wish(p, ledger) for p in players}

    def levels(i: int, j: int) -> tuple[int, int, int, int, int]:
        if j == bye:
            p = players[i]
            return (0, 0, quarter[p] ** 2, int(ledger.had_pairing_bye(p)), 0)
        p, q = players[i], players[j]
        (sp, size), (sq, _) = group_of[i], group_of[j]
        dutch = abs(abs((i - sp) - (j - sq)) - size // 2) if sp == sq else 0
        clash = int(wish[p] != 0 and wish[p] == wish[q])
        return (dutch, clash, (quarter[p] - quarter[q]) ** 2, 0, int(q in ledger.met[p]))

    def match(near: int | None) -> tuple[set[tuple[int, int]], bool]:
        graph: nx.Graph[int] = nx.Graph()
        graph.add_nodes_from(range(nodes))
        for i, j in _candidates(n, group_of, near=near):
            graph.add_edge(i, j, weight=ceiling - sum(m * c for m, c in zip(mult, levels(i, j), strict=True)))
        if n % 2:
            for i in range(n):
                graph.add_edge(i, bye, weight=ceiling - sum(m * c for m, c in zip(mult, levels(i, bye), strict=True)))
        found = {(min(i, j), max(i, j)) for i, j in nx.max_weight_matching(graph, maxcardinality=True)}
        clean = len(found) == edges and not any(levels(i, j)[3] or levels(i, j)[4] for i, j in found)
        return found, clean

    matching, clean = match(near)
    if not clean and near is not None:
        matching, _ = match(None)
    pairs: list[tuple[str, str]] = []
    bye_player: str | None = None
    for i, j in sorted(matching):
        if j == bye:
            bye_player = players[i]
        else:
            pairs.append(_seat_order(players[i], players[j], ledger, rank))
    pairs.sort(key=lambda pr: (-max(quarter[pr[0]], quarter[pr[1]]), min(rank[pr[0]], rank[pr[1]])))
    return pairs, bye_player


def _round_robin(t: Tournament, number: int, active: set[str]) -> tuple[list[tuple[str, ...]], list[str]]:
    ids = [p.id for p in t.players]
    boards = berger_table(len(ids))[number - 1]
    games: list[tuple[str, ...]] = []
    byes: list[str] = []
    for first, second in boards:
        pair = [ids[k - 1] for k in (first, second) if k <= len(ids) and ids[k - 1] in active]
        if len(pair) == 2:
            games.append(tuple(pair))
        elif pair:
            byes.append(pair[0])  # the odd number's bye, or an opponent who withdrew or asked for a bye
    return games, byes


def _random_draw(t: Tournament, number: int, active: list[str]) -> tuple[list[tuple[str, ...]], list[str]]:
    """Seed 001's "Random Draw": shuffled by a generator seeded with the
    tournament's seed and the round, so the hub draws the same tables again."""
    order = sorted(active)
    random.Random(f"{t.seed}/{number}").shuffle(order)
    sizes = random_draw_sizes(len(order), t.game.seats)
    games: list[tuple[str, ...]] = []
    start = 0
    for size in sizes:
        games.append(tuple(order[start : start + size]))
        start += size
    return games, order[start:]


def next_round(t: Tournament) -> Round:
    """The pairings of the next round, with its byes; an additional round
    for the perfect scores once the published rounds are over (seed 004)."""
    number = len(t.played) + 1
    fmt = t.effective_format()
    requested = {b.player: b for b in t.bye_requests if b.round == number}
    table = standings(t)
    order = table.order()
    if number > t.planned_rounds():
        if not table.extra_round:
            raise HubError(f"round {number}: the tournament's {t.planned_rounds()} rounds are over")
        pool = [p for p in order if p in table.extra_round]
        fmt = Format.SWISS if t.game.seats == 2 else Format.RANDOM_DRAW
    else:
        pool = [p for p in order if t.player(p).active_in(number)]
    playing = [p for p in pool if p not in requested]
    ledger = build_ledger(t)
    if fmt is Format.ROUND_ROBIN:
        games, bye_ids = _round_robin(t, number, set(playing))
    elif fmt is Format.RANDOM_DRAW:
        games, bye_ids = _random_draw(t, number, playing)
    else:
        pairs, bye = swiss_pairs(playing, ledger)
        games, bye_ids = list(pairs), ([bye] if bye else [])
    names = t.table_names(len(games))
    byes = [Bye(p, t.bye_score) for p in bye_ids]
    byes += [Bye(b.player, b.score, requested=True) for b in requested.values() if b.player in pool]
    logger.info("round %d: %d tables, %d byes (%s)", number, len(games), len(byes), fmt.value)
    return Round(number, tuple(Pairing(n, g) for n, g in zip(names, games, strict=True)), tuple(byes))


def pair_next_round(t: Tournament) -> Tournament:
    """The arbiter's "start the next round": the tournament with it paired."""
    if t.format is Format.AUTO:
        t = replace(t, format=t.effective_format())  # fixed at the first draw
    return t.add_round(next_round(t))
