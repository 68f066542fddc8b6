"""What a table's result is worth: VP, places, and the figures the tie-breaks read.

Mastermind (seed 000): "The player who has solved the code with less
attempts wins the match and gets 1VP, while his opponent gets 0 VPs. In
case of a draw, both get ½ VP." and "If both players score 13 attempts,
both have lost and get 0 VP." (:func:`pegwatch.rules.match.match_vp`).

Connection (seed 001): "The score is worked out on the backmost colour and
the winner is the player with the highest among the lowest value; in case
of a tie you go ahead with the second backmost colour, and so on." Two
players: 1 / ½ / 0, a draw "only if all the 6 colors are in the same
position". Four players: "1st 5VP, 2nd 3VP, 3rd 2VP, 4th 0VP, split
positions share the VPs".
"""

from __future__ import annotations

from pegwatch.hub.model import CONNECTION_COLOURS, CONNECTION_TOP, Game, GameKind, HubError, Result
from pegwatch.rules.match import match_vp

__all__ = [
    "backmost_difference",
    "check_result",
    "connection_key",
    "pairwise",
    "result_vp",
]

#: Penalties above this are a typing slip, not a ruling.
MAX_PENALTY_VP = 10.0


def check_result(game: Game, result: Result) -> None:
    """Refuse a result that does not fit the game, with one line naming the table."""
    where = f"result of round {result.round}, table {result.table}"
    n = len(result.players)
    if len(set(result.players)) != n:
        raise HubError(f"{where}: a player is named twice")
    if result.forfeited:
        named = set(result.forfeited)
        if n != 2 or not named <= set(result.players) or len(named) != len(result.forfeited):
            raise HubError(f"{where}: a forfeit names one or both players of a two-player table")
        if result.attempts or result.levels or result.penalties:
            raise HubError(f"{where}: a forfeited game has no attempts, levels or penalties")
        return
    if game.kind is GameKind.MASTERMIND:
        if len(result.attempts) != n or result.levels:
            raise HubError(f"{where}: a Mastermind result gives attempts for each player, no levels")
        lengths = {len(a) for a in result.attempts}
        if len(lengths) != 1 or sum(len(a) for a in result.attempts) != game.games_per_match:
            raise HubError(
                f"{where}: attempts must cover the {game.games_per_match} games of the match, "
                "as many as codebreaker for each player"
            )
        top = game.failure_attempts
        for player, counts in zip(result.players, result.attempts, strict=True):
            if any(isinstance(c, bool) or not 1 <= c <= top for c in counts):
                raise HubError(f"{where}: attempts of {player!r} must be 1..{top} ({top}: failed or timed out)")
        if result.penalties and len(result.penalties) != n:
            raise HubError(f"{where}: penalties must give one figure per player")
        if any(not 0 <= p <= MAX_PENALTY_VP for p in result.penalties):
            raise HubError(f"{where}: a penalty must be 0..{MAX_PENALTY_VP:g} VP")
        return
    if len(result.levels) != n or result.attempts or result.penalties:
        raise HubError(f"{where}: a Connection result gives the levels of every colour for each player")
    for player, levels in zip(result.players, result.levels, strict=True):
        if len(levels) != CONNECTION_COLOURS or any(
            isinstance(v, bool) or not 0 <= v <= CONNECTION_TOP for v in levels
        ):
            raise HubError(
                f"{where}: {player!r} needs {CONNECTION_COLOURS} colour levels, each 0..{CONNECTION_TOP}"
            )


def connection_key(levels: tuple[int, ...]) -> tuple[int, ...]:
    """Levels from the backmost colour up; a larger key wins (seed 001)."""
    return tuple(sorted(levels))


def _shared_places(keys: dict[str, tuple[int, ...]], place_vp: tuple[float, ...]) -> dict[str, float]:
    """VP by place, players with equal keys sharing the VP of the places they split."""
    order = sorted(set(keys.values()), reverse=True)
    vp: dict[str, float] = {}
    start = 0
    for key in order:
        group = [p for p, k in keys.items() if k == key]
        places = [place_vp[i] if i < len(place_vp) else 0.0 for i in range(start, start + len(group))]
        for p in group:
            vp[p] = sum(places) / len(places)
        start += len(group)
    return vp


def result_vp(game: Game, result: Result) -> dict[str, float]:
    """The VP each player of ``result`` earned."""
    if result.forfeited:
        return {p: 0.0 if p in result.forfeited else game.max_vp for p in result.players}
    if game.kind is GameKind.MASTERMIND:
        per_game = game.failure_attempts
        attempts = {p: sum(a) for p, a in zip(result.players, result.attempts, strict=True)}
        failure = {p: per_game * len(a) for p, a in zip(result.players, result.attempts, strict=True)}
        penalties = dict(zip(result.players, result.penalties, strict=True)) if result.penalties else None
        return match_vp(attempts, failure_total=failure, penalties=penalties)
    keys = {p: connection_key(lv) for p, lv in zip(result.players, result.levels, strict=True)}
    return _shared_places(keys, game.place_vp)


def pairwise(game: Game, result: Result, a: str, b: str) -> float:
    """``a``'s result against ``b`` at this table: 1, ½ or 0.

    Two at the table: the VP ``a`` earned (penalties included, so it can be
    below 0). More: 1 if ``a`` placed above ``b``, ½ level, 0 below.
    """
    if len(result.players) == 2:
        return result_vp(game, result)[a]
    levels = dict(zip(result.players, result.levels, strict=True))
    ka, kb = connection_key(levels[a]), connection_key(levels[b])
    return 1.0 if ka > kb else 0.5 if ka == kb else 0.0


def backmost_difference(result: Result, player: str) -> int:
    """Seed 001: "the levels of the backmost colors and their differences
    are reported": the player's backmost level less the best backmost level
    of the others at the table (the winner's, or the second's for the
    winner), so a win is positive and a loss negative."""
    levels = dict(zip(result.players, result.levels, strict=True))
    own = min(levels[player])
    best_other = max(min(lv) for p, lv in levels.items() if p != player)
    return own - best_other
