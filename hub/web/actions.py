"""The arbiter's actions, from the page's forms.

Two kinds: a command to one table (sent over MQTT, shown "applied" only
once the table acknowledges it: :meth:`pegwatch.hub.service.Hall.send_command`)
and an action on the tournament (a result entered or corrected, the next
round, a late entry, a withdrawal, a bye), applied to the hub's tournament
and saved in its store. Each reads its form fields here and raises
:class:`~pegwatch.hub.web.auth.FormError` or the core's ``HubError`` (both
``BadInput``) with one line naming the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from pegwatch.hub import wire
from pegwatch.hub.config import format_hub, parse_hub
from pegwatch.hub.model import Format, Game, GameKind, Player, Result, Tournament
from pegwatch.hub.pairing import pair_next_round
from pegwatch.hub.service import Hall
from pegwatch.hub.store import StoredCommand
from pegwatch.hub.web.auth import FormError

__all__ = ["TOURNAMENT_ACTIONS", "command_from_form", "send_command", "tournament_action"]


def _int(form: Mapping[str, str], key: str, *, low: int | None = None, default: int | None = None) -> int:
    text = form.get(key, "").strip()
    if not text and default is not None:
        return default
    try:
        value = int(text)
    except ValueError:
        raise FormError(f"{key}: expected a whole number, got {text[:40]!r}") from None
    if low is not None and value < low:
        raise FormError(f"{key}: expected at least {low}, got {value}")
    return value


def _num(form: Mapping[str, str], key: str, default: float = 0.0) -> float:
    text = form.get(key, "").strip()
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        raise FormError(f"{key}: expected a number, got {text[:40]!r}") from None


def _text(form: Mapping[str, str], key: str) -> str:
    text = form.get(key, "").strip()
    if not text:
        raise FormError(f"{key}: missing")
    return text


def _words(form: Mapping[str, str], key: str) -> list[str]:
    """``red, blue green``: colour names (or player ids) split on commas and spaces."""
    return [w for w in form.get(key, "").replace(",", " ").split() if w]


def _ints(form: Mapping[str, str], key: str) -> tuple[int, ...]:
    try:
        return tuple(int(w) for w in _words(form, key))
    except ValueError:
        raise FormError(f"{key}: expected whole numbers, got {form.get(key, '')[:40]!r}") from None


def command_from_form(form: Mapping[str, str]) -> tuple[wire.CommandKind, dict[str, Any]]:
    """The command kind and its wire args from a detail page's form (clock times in seconds)."""
    try:
        kind = wire.CommandKind(form.get("kind", ""))
    except ValueError:
        raise FormError(f"kind: not a command: {form.get('kind', '')[:40]!r}") from None
    args: dict[str, Any] = {}
    if kind in (wire.CommandKind.CONFIRM_ROW, wire.CommandKind.CORRECT_ROW, wire.CommandKind.SEND_EVIDENCE):
        args["game"] = _int(form, "game", low=1)
        args["row"] = _int(form, "row", low=0)
    if kind in (wire.CommandKind.CONFIRM_ROW, wire.CommandKind.CORRECT_ROW):
        if form.get("guess", "").strip():
            args["guess"] = _words(form, "guess")
        if form.get("black", "").strip() or form.get("white", "").strip():
            args["black"] = _int(form, "black", low=0)
            args["white"] = _int(form, "white", low=0)
    elif kind is wire.CommandKind.ADJUST_CLOCK:
        args["player"] = form.get("player", "")
        args["delta_ms"] = round(_num(form, "delta_s") * 1000)
        if args["delta_ms"] == 0:
            raise FormError("delta_s: give the seconds to add (negative to take)")
    elif kind is wire.CommandKind.ADD_PENALTY:
        args["player"] = form.get("player", "")
        args["penalty"] = form.get("penalty", "")
        if form.get("time_s", "").strip():
            args["time_ms"] = round(_num(form, "time_s") * 1000)
        if form.get("points", "").strip():
            args["points"] = _int(form, "points", low=0)
        if form.get("why", "").strip():
            args["why"] = form["why"].strip()[:200]
    elif kind is wire.CommandKind.ENTER_RESULT:
        args["game"] = _int(form, "game", low=1)
        args["secret"] = _words(form, "secret")
    return kind, args


def send_command(hall: Hall, table: str, form: Mapping[str, str], by: str) -> StoredCommand:
    kind, args = command_from_form(form)
    return hall.send_command(table, kind, args, by)


# -- the tournament ------------------------------------------------------------------


def _result(t: Tournament, form: Mapping[str, str]) -> Tournament:
    number = _int(form, "round", low=1)
    table = _text(form, "table")
    pairing = next((p for p in t.played[number - 1].pairings if p.table == table), None) \
        if number <= len(t.played) else None
    if pairing is None:
        raise FormError(f"table: no table {table!r} in round {number}")
    players = pairing.players
    forfeited = tuple(_words(form, "forfeited"))
    if forfeited:
        return t.record(Result(number, table, players, forfeited=forfeited))
    if t.game.kind is GameKind.MASTERMIND:
        attempts = tuple(_ints(form, f"attempts_{i}") for i in range(len(players)))
        penalties = tuple(_num(form, f"penalty_{i}") for i in range(len(players)))
        return t.record(Result(number, table, players, attempts=attempts,
                               penalties=penalties if any(penalties) else ()))
    levels = tuple(_ints(form, f"levels_{i}") for i in range(len(players)))
    return t.record(Result(number, table, players, levels=levels))


def _entry(t: Tournament, form: Mapping[str, str]) -> Tournament:
    player = wire.check_id(_text(form, "player"), "player")
    return t.enter(Player(player, form.get("name", "").strip()[:100], _int(form, "joined", low=1,
                                                                           default=len(t.played) + 1)))


def _withdraw(t: Tournament, form: Mapping[str, str]) -> Tournament:
    return t.withdraw(_text(form, "player"), _int(form, "from_round", low=1, default=len(t.played) + 1))


def _bye(t: Tournament, form: Mapping[str, str]) -> Tournament:
    return t.grant_bye(_text(form, "player"), _int(form, "round", low=1, default=len(t.played) + 1),
                       _num(form, "score", t.bye_score))


def _setup(t: Tournament, form: Mapping[str, str]) -> Tournament:
    """The tournament's settings, on the page instead of hub.toml, until the first round is paired;
    checked as hub.toml would be (the new tournament is written and read back)."""
    if t.played:
        raise FormError("setup: round 1 is paired; the settings are fixed")
    kind = form.get("game", t.game.kind.value)
    try:
        game = Game(GameKind(kind), form.get("variant", "").strip() if kind == "mastermind" else "",
                    _int(form, "seats", low=2, default=t.game.seats))
        fmt = Format(form.get("format", t.format.value))
    except ValueError as exc:  # an unknown game or format, or a HubError (a BadInput) from Game
        raise FormError(f"setup: {exc}") from None
    tables = tuple(_words(form, "tables"))
    new = replace(t, name=form.get("name", "").strip()[:100] or t.name, game=game, format=fmt,
                  rounds=_int(form, "rounds", low=1, default=t.rounds), tables=tables,
                  bye_score=_num(form, "bye_score", t.bye_score))
    return parse_hub(format_hub(new), source="setup")


#: The tournament actions by the name in their URL (``POST /actions/<name>``).
TOURNAMENT_ACTIONS: Mapping[str, Callable[[Tournament, Mapping[str, str]], Tournament]] = {
    "result": _result,
    "next-round": lambda t, form: pair_next_round(t),
    "entry": _entry,
    "withdraw": _withdraw,
    "bye": _bye,
    "setup": _setup,
}


def tournament_action(hall: Hall, name: str, form: Mapping[str, str]) -> Tournament:
    action = TOURNAMENT_ACTIONS.get(name)
    if action is None:
        raise FormError(f"no action {name!r}")
    return hall.apply(lambda t: action(t, form))
