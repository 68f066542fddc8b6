"""Standings: VP, then the tie-breaks; the perfect-score rule; the final table.

The order is total and deterministic: players no tie-break separates share
a rank (``shared``) and are listed by id. Seed 004's perfect scores policy:
"If there are 2 or more players on a perfect tournament score after the
published number of rounds are played then the players involved should play
additional rounds until no more than 1 player remains on a perfect score."
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pegwatch.hub.ledger import Ledger, build_ledger
from pegwatch.hub.model import Tournament
from pegwatch.hub.tiebreaks import CRITERIA, default_tiebreaks, split

__all__ = ["FinalTable", "Standing", "Standings", "final_table", "standings"]


@dataclass(frozen=True)
class Standing:
    rank: int
    player: str
    name: str
    score: float
    games: int
    shared: bool
    tiebreaks: tuple[float, ...]
    """Each tie-break's figure among the players on the same score."""


@dataclass(frozen=True)
class Standings:
    rows: tuple[Standing, ...]
    tiebreaks: tuple[str, ...]
    perfect: tuple[str, ...]
    """Players on a perfect score (seed 004)."""
    extra_round: tuple[str, ...]
    """Who plays an additional round; empty when none is due."""

    def order(self) -> list[str]:
        return [row.player for row in self.rows]


def _is_perfect(player: str, ledger: Ledger) -> bool:
    """Every game at the maximum VP. A bye from the pairing is deemed
    perfect (seed 004: "it is possible for a player to be awarded less than
    the maximum score if a game cannot be played due to missing opponents.
    This player shall be deemed to have a perfect score"); a bye the player
    asked for is not a game that could not be played, so it is perfect only
    at the maximum."""
    top = ledger.game.max_vp
    games = ledger.encounters[player]
    byes = ledger.byes[player]
    if not games and not byes:
        return False
    return all(e.vp >= top for e in games) and all(
        not bye.requested or bye.score >= top for _, bye in byes
    )


def _all_results_in(tournament: Tournament) -> bool:
    return all(
        tournament.result(rnd.number, pairing.table) is not None
        for rnd in tournament.played
        for pairing in rnd.pairings
    )


def standings(tournament: Tournament) -> Standings:
    ledger = build_ledger(tournament)
    names = tournament.tiebreaks or default_tiebreaks(tournament.game)
    by_score: dict[float, list[str]] = {}
    for pid in ledger.players:
        by_score.setdefault(ledger.score[pid], []).append(pid)
    rows: list[Standing] = []
    for score in sorted(by_score, reverse=True):
        tied = sorted(by_score[score])
        figures = {p: tuple(CRITERIA[n](p, tied, ledger) for n in names) for p in tied}
        for group in split(tied, names, ledger):
            rank = len(rows) + 1
            for pid in group:
                rows.append(
                    Standing(
                        rank=rank,
                        player=pid,
                        name=tournament.player(pid).name,
                        score=score,
                        games=len(ledger.encounters[pid]),
                        shared=len(group) > 1,
                        tiebreaks=figures[pid],
                    )
                )
    perfect = tuple(r.player for r in rows if _is_perfect(r.player, ledger))
    done = len(tournament.played) >= tournament.planned_rounds() and _all_results_in(tournament)
    extra: tuple[str, ...] = ()
    if done and len(perfect) >= 2:
        extra = perfect
        # "In multiplayer tournaments any additional round(s) will be played
        # with a number of players at the table that was allowed during the
        # main tournament. This may require the next best ranked player to
        # be involved in the additional round."
        seats = tournament.game.seats
        if len(extra) < seats:
            active = [r.player for r in rows if r.player not in extra and _still_playing(tournament, r.player)]
            extra = (*extra, *active[: seats - len(extra)])
    return Standings(tuple(rows), tuple(names), perfect, extra)


def _still_playing(tournament: Tournament, player: str) -> bool:
    return tournament.player(player).withdrawn is None


@dataclass(frozen=True)
class FinalTable:
    """The final table of four-player Connection (seed 001): "Random Draw
    followed by a Final table which will take the top players based on
    tournament standings including tie-break and an additional tie-break of
    highest dice toll goes onto the final table"."""

    players: tuple[str, ...]
    roll: tuple[str, ...]
    """Players still level for the last places: they roll the dice (again)."""
    places: int
    """How many of ``roll`` go on."""


def final_table(tournament: Tournament, dice: Mapping[str, int] | None = None) -> FinalTable:
    """The top ``seats`` players; a tie across the cut is settled by ``dice``
    (the highest roll goes on), or named in ``roll`` when no dice settle it."""
    seats = tournament.game.seats
    rows = [r for r in standings(tournament).rows if _still_playing(tournament, r.player)]
    chosen: list[str] = []
    i = 0
    while i < len(rows) and len(chosen) < seats:
        group = [r.player for r in rows if r.rank == rows[i].rank]
        if len(chosen) + len(group) <= seats:
            chosen.extend(group)
            i += len(group)
            continue
        left = seats - len(chosen)
        rolls = dice or {}
        if not all(p in rolls for p in group):
            return FinalTable(tuple(chosen), tuple(group), left)
        by_roll = sorted(group, key=lambda p: -rolls[p])
        cut_roll = rolls[by_roll[left - 1]]
        above = [p for p in by_roll if rolls[p] > cut_roll]
        level = [p for p in by_roll if rolls[p] == cut_roll]
        if len(above) + len(level) == left:
            return FinalTable((*chosen, *above, *level), (), 0)
        return FinalTable((*chosen, *above), tuple(sorted(level)), left - len(above))
    return FinalTable(tuple(chosen), (), 0)
