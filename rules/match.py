"""Match points and tournament tie-breaks under the MSO rules (seed 000).

"The player who has solved the code with less attempts wins the match and
gets 1VP, while his opponent gets 0 VPs. In case of a draw, both get ½ VP."
"If both players score 13 attempts, both have lost and get 0 VP."

Tie-breaks, in order: "1- the results between players", "2- the less
number of attempts, excluding the lowest one". These functions are for the
standings; :func:`pegwatch.rules.judge.judge_match` uses :func:`match_vp`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from typing import Protocol

__all__ = [
    "MatchResult",
    "attempts_excluding_lowest",
    "break_ties",
    "head_to_head_vp",
    "match_vp",
    "rank",
]


class MatchResult(Protocol):
    """What the tie-breaks need from a judged match (a ``MatchVerdict`` fits)."""

    @property
    def players(self) -> tuple[str, str]: ...

    @property
    def vp(self) -> Mapping[str, float]: ...

    @property
    def game_attempts(self) -> Mapping[str, Sequence[int]]: ...


def match_vp(
    attempts: Mapping[str, int],
    *,
    failure_total: Mapping[str, int],
    penalties: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """VP for the two players of a match.

    ``attempts`` are each player's attempts as codebreaker (summed over the
    games they broke); ``failure_total`` is what those attempts are when
    every such game failed (13 per game under MSO), so that "both 13" gives
    0 VP each. ``penalties`` (½ VP per codemaker exception) come off the
    player who earned them, so VP can go below zero.
    """
    a, b = attempts
    if attempts[a] >= failure_total[a] and attempts[b] >= failure_total[b]:
        vp = {a: 0.0, b: 0.0}
    elif attempts[a] < attempts[b]:
        vp = {a: 1.0, b: 0.0}
    elif attempts[a] > attempts[b]:
        vp = {a: 0.0, b: 1.0}
    else:
        vp = {a: 0.5, b: 0.5}
    for player, penalty in (penalties or {}).items():
        vp[player] -= penalty
    return vp


def attempts_excluding_lowest(attempts: Sequence[int]) -> int:
    """Second MSO tie-break: total attempts without the player's lowest
    (best) game; fewer is better."""
    if not attempts:
        return 0
    return sum(attempts) - min(attempts)


def head_to_head_vp(player: str, tied: Collection[str], matches: Sequence[MatchResult]) -> float:
    """First MSO tie-break: VP ``player`` scored in matches against the other
    ``tied`` players."""
    total = 0.0
    for m in matches:
        if player in m.players:
            other = m.players[1] if m.players[0] == player else m.players[0]
            if other in tied and other != player:
                total += m.vp[player]
    return total


def _group(players: Sequence[str], key: Mapping[str, float], *, reverse: bool) -> list[list[str]]:
    buckets: dict[float, list[str]] = defaultdict(list)
    for p in players:
        buckets[key[p]].append(p)
    return [sorted(buckets[k]) for k in sorted(buckets, reverse=reverse)]


def break_ties(tied: Sequence[str], matches: Sequence[MatchResult]) -> list[list[str]]:
    """Order players level on VP; players still level share a group.

    As seed 004's clarification says, once a step splits the players into
    subsets, each subset still tied starts again from step 1 among itself.
    """
    if len(tied) <= 1:
        return [list(tied)]
    h2h = {p: head_to_head_vp(p, tied, matches) for p in tied}
    groups = _group(tied, h2h, reverse=True)
    if len(groups) > 1:
        return [g for group in groups for g in break_ties(group, matches)]
    history: dict[str, list[int]] = defaultdict(list)
    for m in matches:
        for p, games in m.game_attempts.items():
            history[p].extend(games)
    excl = {p: float(attempts_excluding_lowest(history[p])) for p in tied}
    groups = _group(tied, excl, reverse=False)
    if len(groups) > 1:
        return [g for group in groups for g in break_ties(group, matches)]
    return [sorted(tied)]


def rank(matches: Sequence[MatchResult]) -> list[list[str]]:
    """Standings from judged matches: by total VP, then the tie-breaks.

    Returns groups from first place down; a group of several players is a
    tie the MSO tie-breaks do not break.
    """
    totals: dict[str, float] = defaultdict(float)
    for m in matches:
        for p in m.players:
            totals[p] += m.vp[p]
    out: list[list[str]] = []
    for group in _group(list(totals), totals, reverse=True):
        out.extend(break_ties(group, matches))
    return out
