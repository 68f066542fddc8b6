"""The seeds' tie-breaks, each a figure where more is better, and the way a
tie is split (docs/hall.md quotes the seed behind each one).

Seed 004, clarification 1: "In a multi-way tie-break, should any step
succeed in separating the tied players into two or more subsets then
players are ranked in that order. Should any of those subsets still contain
two or more players this is treated as a new tie-break between only those
players and we return to step 1." So every figure is computed for the
players of the tie being broken (head-to-head counts only games among them;
the opponents are evened out among them), and :func:`split` starts again
from the first tie-break for each subset.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import accumulate

from pegwatch.hub.ledger import Ledger
from pegwatch.hub.model import Game, GameKind, HubError
from pegwatch.hub.results import backmost_difference, pairwise

__all__ = [
    "CRITERIA",
    "SEED_004_ROUND_ROBIN",
    "SEED_004_SWISS",
    "check_tiebreaks",
    "default_tiebreaks",
    "split",
]

Criterion = Callable[[str, Sequence[str], Ledger], float]


def head_to_head(player: str, tied: Sequence[str], ledger: Ledger) -> float:
    """Seed 000 "the results between players"; seed 004 "Head to head:
    Highest score counting only games amongst the tied players"."""
    total = 0.0
    for e in ledger.encounters[player]:
        for other in e.opponents:
            if other in tied:
                total += pairwise(ledger.game, e.result, player, other)
    return total


def attempts(player: str, tied: Sequence[str], ledger: Ledger) -> float:
    """Seed 000: "the less number of attempts, excluding the lowest one":
    the attempts as codebreaker over every game, less the lowest (best)
    count; a failed or timed-out game counts 13. Negated: fewer is better."""
    counts = [
        c
        for e in ledger.encounters[player]
        if not e.result.forfeited  # a game not played has no attempts
        for c in e.result.attempts[e.seat]
    ]
    if not counts:
        return 0.0
    drop = min(counts) if ledger.readings.attempts_exclude_best else 0
    return -float(sum(counts) - drop)


def backmost(player: str, tied: Sequence[str], ledger: Ledger) -> float:
    """Seed 001: "the highest progressive difference of the backmost
    colours, excluding the most favourable result"."""
    diffs = [backmost_difference(e.result, player) for e in ledger.encounters[player] if not e.result.forfeited]
    if not diffs:
        return 0.0
    diffs.remove(max(diffs))
    if ledger.readings.connection_progressive:
        return float(sum(accumulate(diffs)))
    return float(sum(diffs))


def _full_buchholz(player: str, ledger: Ledger) -> float:
    return sum(ledger.score[o] for o in ledger.opponents(player))


def _kept_opponents(player: str, tied: Sequence[str], ledger: Ledger, cut: int) -> list[tuple[str, float]]:
    """``player``'s (opponent, result against them), less the lowest ranked:
    to as many as the tied player with the fewest (clarification 2), then
    ``cut`` more (Buchholz drop 2).

    "Lowest ranked" is the lowest score; between equal scores the lower
    full Buchholz, then the name first in order, so the choice is never random."""
    entries = [
        (o, pairwise(ledger.game, e.result, player, o))
        for e in ledger.encounters[player]
        for o in e.opponents
    ]
    entries.sort(key=lambda item: (ledger.score[item[0]], _full_buchholz(item[0], ledger), item[0]))
    entries.reverse()  # highest ranked first: the cut takes from the end
    keep = len(entries)
    if ledger.readings.equalise_opponents:
        keep = min(keep, *(len(ledger.opponents(q)) for q in tied))
    keep = max(0, keep - cut)
    return entries[:keep]


def buchholz(player: str, tied: Sequence[str], ledger: Ledger) -> float:
    """Seed 004: "Full Buchholz: This is the sum of opponents' scores without ignoring any opponents"."""
    return sum(ledger.score[o] for o, _ in _kept_opponents(player, tied, ledger, 0))


def buchholz_cut2(player: str, tied: Sequence[str], ledger: Ledger) -> float:
    """Seed 004: "Buchholz Drop 2: Sum of opponent's scores discarding the two lowest opposition scores"."""
    return sum(ledger.score[o] for o, _ in _kept_opponents(player, tied, ledger, 2))


def sonneborn_berger(player: str, tied: Sequence[str], ledger: Ledger) -> float:
    """Seed 004: "Result against each opponent multiplied by that opponents
    final score, summed for all opponents"."""
    return sum(r * ledger.score[o] for o, r in _kept_opponents(player, tied, ledger, 0))


def progressive(player: str, tied: Sequence[str], ledger: Ledger) -> float:
    """Seed 004: "if your scores were: Win, Loss, Win, Draw then your
    progressive scores are 1, 1, 2, 2.5 and your Progress tie-break value is 6.5"."""
    return float(sum(accumulate(ledger.round_scores[player])))


CRITERIA: dict[str, Criterion] = {
    "head-to-head": head_to_head,
    "attempts": attempts,
    "backmost-difference": backmost,
    "buchholz-cut2": buchholz_cut2,
    "buchholz": buchholz,
    "progressive": progressive,
    "sonneborn-berger": sonneborn_berger,
}


#: Seed 004's standard tie-breaks for 2-player tournaments, live.
SEED_004_SWISS = ("buchholz-cut2", "buchholz", "progressive")
SEED_004_ROUND_ROBIN = ("sonneborn-berger", "head-to-head")


def default_tiebreaks(game: Game) -> tuple[str, ...]:
    """Seed 004: "Some tournaments have their own dedicated tiebreaks ...
    which will be applied. If not specified otherwise, the MSO standard
    tiebreaks outlined below will be applied." Mastermind and Connection
    have their own (seeds 000, 001); an arbiter who wants seed 004's lists
    after them writes them in hub.toml's ``tiebreaks``."""
    if game.kind is GameKind.MASTERMIND:
        return ("head-to-head", "attempts")
    return ("head-to-head", "backmost-difference")


def check_tiebreaks(names: Sequence[str], *, where: str) -> tuple[str, ...]:
    for name in names:
        if name not in CRITERIA:
            raise HubError(f"{where}: unknown tie-break {name!r}; known: {', '.join(CRITERIA)}")
    return tuple(names)


def split(tied: Sequence[str], names: Sequence[str], ledger: Ledger) -> list[list[str]]:
    """Order players level on score into groups, best first; a group of
    several is a tie no tie-break breaks (its players in name order)."""
    if len(tied) <= 1:
        return [list(tied)]
    for name in names:
        values = {p: CRITERIA[name](p, tied, ledger) for p in tied}
        levels = sorted(set(values.values()), reverse=True)
        if len(levels) > 1:
            subsets = [[p for p in tied if values[p] == v] for v in levels]
            return [g for subset in subsets for g in split(subset, names, ledger)]
    return [sorted(tied)]
