"""The judge's verdict with the arbiter's penalties applied (``pegwatch judge``).

Seed 004 §5.1: points docked come off the player's match VP; a game lost by
penalty counts, for the match VP, as the worst result for its loser: a
codebreaker who loses it is credited with the variant's failure attempts
(13 under MSO), a codemaker who loses it gives the codebreaker one attempt.
The attempts shown stay those played; ``games_lost`` and ``docked_vp`` say
what the penalties changed. Home scoring (points, not attempts) gets the
points docked only. Warnings and time penalties are listed and change
nothing here (the time was given at the table).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pegwatch.rules.match import match_vp
from pegwatch.rules.penalties import Penalty, games_lost, points_docked
from pegwatch.rules.verdict import GameVerdict, MatchVerdict

__all__ = ["penalise_game", "penalise_match"]


def penalise_game(verdict: GameVerdict, penalties: Sequence[Penalty]) -> GameVerdict:
    """*verdict* listing *penalties* (a game alone has no VP to dock)."""
    if not penalties:
        return verdict
    return replace(verdict, penalties=tuple(p.to_json() for p in penalties))


def penalise_match(
    verdict: MatchVerdict, penalties: Sequence[Penalty], *, failure_attempts: int
) -> MatchVerdict:
    """*verdict* with *penalties* applied to its VP (see the module docstring)."""
    if not penalties:
        return verdict
    players = verdict.players
    docked = points_docked(penalties, players)
    lost = {
        g: p for g, p in games_lost(penalties).items()
        if 1 <= g <= len(verdict.games) and p in players
    }
    vp = dict(verdict.vp)
    if verdict.points is None and lost and verdict.complete:
        attempts = dict(verdict.attempts)
        broken = dict.fromkeys(players, 0)
        for i, maker in enumerate(verdict.codemakers):
            breaker = players[1] if maker == players[0] else players[0]
            broken[breaker] += 1
            loser = lost.get(i + 1)
            if loser is not None:
                worst = failure_attempts if loser == breaker else 1
                attempts[breaker] += worst - verdict.games[i].attempts
        failure_total = {p: failure_attempts * broken[p] for p in players}
        vp = match_vp(attempts, failure_total=failure_total, penalties=verdict.penalties_vp)
    vp = {p: vp[p] - docked.get(p, 0.0) for p in players}
    return replace(
        verdict,
        vp=vp,
        penalties=tuple(p.to_json() for p in penalties),
        docked_vp=docked,
        games_lost=lost,
    )
