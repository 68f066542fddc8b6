"""The tournament read once into the figures standings and pairings use.

Only results entered count; a paired table without a result adds nothing
yet (the standings are of the games finished). Byes count their score in
their round and add no opponent (seed 004's clarification 2 then evens the
opponents out for Buchholz and Sonneborn-Berger).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from pegwatch.hub.model import Bye, Game, Readings, Result, Tournament
from pegwatch.hub.results import result_vp

__all__ = ["Encounter", "Ledger", "build_ledger"]


@dataclass(frozen=True)
class Encounter:
    """One finished game from one player's side."""

    round: int
    result: Result
    opponents: tuple[str, ...]
    vp: float
    seat: int


@dataclass
class Ledger:
    game: Game
    readings: Readings
    players: tuple[str, ...]
    rounds: int
    score: dict[str, float] = field(default_factory=dict)
    round_scores: dict[str, list[float]] = field(default_factory=dict)
    encounters: dict[str, list[Encounter]] = field(default_factory=lambda: defaultdict(list))
    byes: dict[str, list[tuple[int, Bye]]] = field(default_factory=lambda: defaultdict(list))
    #: Everyone met at a table, paired or finished: what Swiss must not repeat.
    met: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    def opponents(self, player: str) -> list[str]:
        """One entry per opponent per finished game (multi-player: every other player at the table)."""
        return [o for e in self.encounters[player] for o in e.opponents]

    def first_seats(self, player: str) -> int:
        """First seats less second seats in two-player games (roles: codemaker of game 1, first to play)."""
        return sum(1 if e.seat == 0 else -1 for e in self.encounters[player] if len(e.result.players) == 2)

    def last_seat(self, player: str) -> int | None:
        games = [e for e in self.encounters[player] if len(e.result.players) == 2]
        return games[-1].seat if games else None

    def had_pairing_bye(self, player: str) -> bool:
        return any(not bye.requested for _, bye in self.byes[player])


def build_ledger(tournament: Tournament) -> Ledger:
    game = tournament.game
    ids = tuple(p.id for p in tournament.players)
    rounds = len(tournament.played)
    ledger = Ledger(game, tournament.readings, ids, rounds)
    for pid in ids:
        ledger.score[pid] = 0.0
        ledger.round_scores[pid] = [0.0] * rounds
    for rnd in tournament.played:
        for pairing in rnd.pairings:
            for p in pairing.players:
                ledger.met[p].update(q for q in pairing.players if q != p)
        for bye in rnd.byes:
            ledger.byes[bye.player].append((rnd.number, bye))
            ledger.score[bye.player] += bye.score
            ledger.round_scores[bye.player][rnd.number - 1] += bye.score
    for result in sorted(tournament.results, key=lambda r: (r.round, r.table)):
        vp = result_vp(game, result)
        for seat, p in enumerate(result.players):
            others = tuple(q for q in result.players if q != p)
            ledger.encounters[p].append(Encounter(result.round, result, others, vp[p], seat))
            ledger.score[p] += vp[p]
            ledger.round_scores[p][result.round - 1] += vp[p]
    return ledger
