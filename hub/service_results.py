"""A table's match result, as the wire brings it, into the tournament's :class:`Result`.

A table publishes a ``results`` message for each game judged for good
(``game`` >= 1: ``players`` with ``white``, ``black``, ``codemaker`` and
``codebreaker``, ``result`` the game's verdict with the codebreaker's
``attempts``) and one for the match (``game`` 0: ``result`` with ``vp``,
``attempts`` and ``penalties_vp`` by player, as the table's judge gives
them). The table names its players as they were typed at the table; the
tournament's pairing of that table is found by those names (player ids or
names of hub.toml), never guessed: a result whose players are not paired
at that table is refused (:class:`HubError`) and left for the arbiter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pegwatch.hub import wire
from pegwatch.hub.model import GameKind, HubError, Result, Tournament

__all__ = ["result_from_wire"]


def _side_of(key: object, names: Mapping[str, Any]) -> str | None:
    if key in wire.PLAYERS:
        return str(key)
    return next((s for s in wire.PLAYERS if names.get(s) == key), None)


def _per_side(value: object, names: Mapping[str, Any], what: str) -> dict[str, Any]:
    """``{side or player name: value}`` as ``{side: value}``."""
    if not isinstance(value, Mapping):
        raise HubError(f"{what}: expected a value per player")
    out: dict[str, Any] = {}
    for key, v in value.items():
        side = _side_of(key, names)
        if side is None:
            raise HubError(f"{what}: {str(key)[:40]!r} is neither player of the table")
        out[side] = v
    return out


def _attempts(t: Tournament, r: wire.Result, games: Sequence[wire.Result], names: Mapping[str, Any],
              where: str) -> dict[str, tuple[int, ...]]:
    """Each side's attempts as codebreaker, game by game (13 for a failed game, seed 000)."""
    latest: dict[int, wire.Result] = {}
    for g in sorted(games, key=lambda g: g.seq):  # a game judged again: its last verdict
        if g.match == r.match and g.game >= 1:
            latest[g.game] = g
    per_game: dict[str, list[int]] = {s: [] for s in wire.PLAYERS}
    for number in sorted(latest):
        g = latest[number]
        side = _side_of(g.players.get("codebreaker"), names)
        count = g.result.get("attempts")
        if side is not None and isinstance(count, int) and not isinstance(count, bool):
            per_game[side].append(count)
    if sum(len(v) for v in per_game.values()) == t.game.games_per_match:
        return {s: tuple(v) for s, v in per_game.items()}
    # The games' results are not all here: the match's totals, when each breaks once.
    totals = _per_side(r.result.get("attempts"), names, f"{where}.attempts")
    out: dict[str, tuple[int, ...]] = {}
    for side, value in totals.items():
        if isinstance(value, list) and all(isinstance(v, int) for v in value):
            out[side] = tuple(value)
        elif isinstance(value, int) and not isinstance(value, bool) and t.game.games_per_match == 2:
            out[side] = (value,)
        else:
            raise HubError(f"{where}.attempts: the attempts of each game are not known; enter the result by hand")
    return out


def result_from_wire(t: Tournament, r: wire.Result, games: Sequence[wire.Result] = ()) -> Result:
    """The match result ``r`` (``game`` 0) for the tournament; ``games`` the same match's game results."""
    where = f"result {r.id} of table {r.table}"
    names = {s: r.players.get(s) for s in wire.PLAYERS}

    def ident(text: object) -> str | None:
        return next((p.id for p in t.players if text in (p.id, p.name)), None)

    ids = {s: ident(n) for s, n in names.items()}
    seats: list[str] | None = None
    for rnd in reversed(t.played):
        for pairing in rnd.pairings:
            if pairing.table == r.table and None not in ids.values() and set(pairing.players) == set(ids.values()):
                order = {pid: k for k, pid in enumerate(pairing.players)}
                seats = sorted(wire.PLAYERS, key=lambda s: order[ids[s] or ""])
                number, players = rnd.number, pairing.players
                break
        if seats is not None:
            break
    if seats is None:
        shown = " and ".join(repr(names[s]) for s in wire.PLAYERS)
        raise HubError(f"{where}: {shown} are not paired at that table in any round")
    data = dict(r.result)
    if "forfeited" in data:
        lost = data["forfeited"]
        sides = [_side_of(x, names) for x in lost] if isinstance(lost, list) else [None]
        if None in sides:
            raise HubError(f"{where}.forfeited: names the players who lost unplayed")
        return Result(number, r.table, players, forfeited=tuple(players[seats.index(str(s))] for s in sides))
    if t.game.kind is GameKind.MASTERMIND:
        attempts = _attempts(t, r, games, names, where)
        penalties = _per_side(data.get("penalties_vp", data.get("penalties", {})), names, f"{where}.penalties_vp")
        docked = tuple(float(penalties.get(s, 0.0)) for s in seats)
        return Result(number, r.table, players, attempts=tuple(attempts.get(s, ()) for s in seats),
                      penalties=docked if any(docked) else ())
    levels = _per_side(data.get("levels"), names, f"{where}.levels")
    return Result(number, r.table, players, levels=tuple(tuple(levels.get(s, ())) for s in seats))
