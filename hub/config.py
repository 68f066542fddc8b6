"""hub.toml <-> :class:`~pegwatch.hub.model.Tournament`, symmetric.

The file is read through :mod:`pegwatch.rules.textfile` (size limit, UTF-8,
depth, huge numbers); every mistake is one :class:`HubConfigError` line
naming the file and the key (``hub.toml: players[2].joined: ...``). The
rounds and results are replayed through the tournament's own arbiter
actions, so a file can hold nothing the hub would refuse at the table.
docs/hall.md shows a whole file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from pegwatch.hub.model import (
    Bye,
    ByeRequest,
    Format,
    Game,
    GameKind,
    HubError,
    Pairing,
    Player,
    Readings,
    Result,
    Round,
    Tournament,
)
from pegwatch.hub.tiebreaks import check_tiebreaks
from pegwatch.rules.errors import BadInput
from pegwatch.rules.textfile import MIB, parse_toml, read_text

__all__ = [
    "MAX_HUB_FILE_BYTES",
    "Account",
    "HallSettings",
    "HubConfigError",
    "format_hub",
    "load_hall",
    "load_hub",
    "parse_hall",
    "parse_hub",
]

MAX_HUB_FILE_BYTES = 4 * MIB
MAX_ROUND = 1000
T = TypeVar("T")


class HubConfigError(HubError):
    """hub.toml is wrong; the message names the file and the key."""


def _check(ok: bool, where: str, want: str, value: object) -> None:
    if not ok:
        shown = repr(value)
        raise HubConfigError(f"{where}: expected {want}, got {shown[:60]}")


def _table(data: object, where: str, known: set[str]) -> dict[str, Any]:
    _check(isinstance(data, dict), where, "a table", data)
    assert isinstance(data, dict)
    unknown = sorted(set(data) - known)
    if unknown:
        raise HubConfigError(f"{where}.{unknown[0]}: unknown key; known keys: {', '.join(sorted(known))}")
    return data


def _list(data: dict[str, Any], key: str, where: str) -> list[Any]:
    value = data.get(key, [])
    _check(isinstance(value, list), f"{where}{key}", "a list", value)
    assert isinstance(value, list)
    return value


def _str(data: dict[str, Any], key: str, where: str, default: str | None = None) -> str:
    value = data.get(key, default)
    _check(isinstance(value, str) and (value != "" or default == ""), f"{where}.{key}", "a non-empty string", value)
    assert isinstance(value, str)
    return value


def _int(data: dict[str, Any], key: str, where: str, low: int, high: int, default: int | None = None) -> int:
    value = data.get(key, default)
    ok = isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
    _check(ok, f"{where}.{key}", f"an integer {low}..{high}", value)
    assert isinstance(value, int)
    return value


def _num(value: object, where: str) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and -1000 <= value <= 1000
    _check(ok, where, "a number", value)
    assert isinstance(value, int | float)
    return float(value)


def _bool(data: dict[str, Any], key: str, where: str, default: bool) -> bool:
    value = data.get(key, default)
    _check(isinstance(value, bool), f"{where}.{key}", "true or false", value)
    return bool(value)


def _strings(value: object, where: str) -> tuple[str, ...]:
    _check(isinstance(value, list) and all(isinstance(v, str) and v for v in value), where,
           "a list of non-empty strings", value)
    assert isinstance(value, list)
    return tuple(value)


def _ints(value: object, where: str) -> tuple[int, ...]:
    ok = isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    _check(ok, where, "a list of integers", value)
    assert isinstance(value, list)
    return tuple(value)


def _enum(cls: Callable[[str], T], text: str, where: str, allowed: list[str]) -> T:
    try:
        return cls(text)
    except ValueError:
        raise HubConfigError(f"{where}: expected one of {', '.join(allowed)}, got {text!r}") from None


def _tiebreaks(value: object, where: str) -> tuple[str, ...]:
    try:
        return check_tiebreaks(_strings(value, where), where=where)
    except HubConfigError:
        raise
    except HubError as exc:
        raise HubConfigError(str(exc)) from None


def _replay(source: str, where: str, action: Callable[..., Tournament], *args: Any) -> Tournament:
    try:
        return action(*args)
    except HubConfigError:
        raise
    except HubError as exc:
        raise HubConfigError(f"{source}: {where}: {exc}") from None


def parse_hub(text: str, *, source: str = "hub.toml") -> Tournament:
    data = parse_toml(text, source=source, error=HubConfigError)
    # [hall] and [[accounts]] are the hub's own settings (parse_hall), not the tournament's.
    top = _table(data, source, {"tournament", "readings", "players", "byes", "rounds", "results", "hall", "accounts"})
    where = f"{source}: tournament"
    tt = _table(top.get("tournament"), where, {
        "name", "game", "variant", "seats", "format", "rounds", "seed", "bye_score", "tiebreaks", "tables",
    })
    kind = _enum(GameKind, _str(tt, "game", where), f"{where}.game", [k.value for k in GameKind])
    seats = _int(tt, "seats", where, 2, 4, 2)
    variant = _str(tt, "variant", where, "") if kind is GameKind.MASTERMIND else ""
    try:
        game = Game(kind, variant, seats)
    except HubError as exc:
        raise HubConfigError(f"{where}.{exc}") from None
    except BadInput as exc:  # an unknown Mastermind preset
        raise HubConfigError(f"{where}.variant: {exc}") from None
    if "variant" in tt and kind is not GameKind.MASTERMIND:
        raise HubConfigError(f"{where}.variant: only Mastermind has variants")
    fmt = _enum(Format, _str(tt, "format", where, "auto"), f"{where}.format", [f.value for f in Format])
    if (fmt is Format.RANDOM_DRAW) != (game.seats > 2) and fmt is not Format.AUTO:
        raise HubConfigError(f"{where}.format: {fmt.value} does not suit {game.seats}-player tables")
    rw = f"{source}: readings"
    rd = _table(top.get("readings", {}), rw, {"attempts_exclude_best", "equalise_opponents", "connection_progressive"})
    readings = Readings(
        attempts_exclude_best=_bool(rd, "attempts_exclude_best", rw, True),
        equalise_opponents=_bool(rd, "equalise_opponents", rw, True),
        connection_progressive=_bool(rd, "connection_progressive", rw, False),
    )
    players: list[Player] = []
    for i, entry in enumerate(_list(top, "players", f"{source}: ")):
        pw = f"{source}: players[{i}]"
        pt = _table(entry, pw, {"id", "name", "joined", "withdrawn"})
        withdrawn = _int(pt, "withdrawn", pw, 1, MAX_ROUND) if "withdrawn" in pt else None
        player = Player(_str(pt, "id", pw), _str(pt, "name", pw, ""), _int(pt, "joined", pw, 1, MAX_ROUND, 1), withdrawn)
        if any(p.id == player.id for p in players):
            raise HubConfigError(f"{pw}.id: {player.id!r} is entered twice")
        players.append(player)
    t = Tournament(
        name=_str(tt, "name", where),
        game=game,
        format=fmt,
        rounds=_int(tt, "rounds", where, 1, MAX_ROUND, 7),
        players=tuple(players),
        tables=_strings(tt.get("tables", []), f"{where}.tables"),
        seed=_int(tt, "seed", where, 0, 2**63 - 1, 0),
        bye_score=_num(tt.get("bye_score", 1.0), f"{where}.bye_score"),
        tiebreaks=_tiebreaks(tt.get("tiebreaks", []), f"{where}.tiebreaks"),
        readings=readings,
    )
    for i, entry in enumerate(_list(top, "byes", f"{source}: ")):
        bw = f"{source}: byes[{i}]"
        bt = _table(entry, bw, {"round", "player", "score"})
        req = ByeRequest(_int(bt, "round", bw, 1, MAX_ROUND), _str(bt, "player", bw), _num(bt.get("score"), f"{bw}.score"))
        t = _replay(source, f"byes[{i}]", t.grant_bye, req.player, req.round, req.score)
    for i, entry in enumerate(_list(top, "rounds", f"{source}: ")):
        rw = f"rounds[{i}]"
        rt = _table(entry, f"{source}: {rw}", {"number", "tables", "byes"})
        pairings = []
        for j, pe in enumerate(_list(rt, "tables", f"{source}: {rw}.")):
            pw = f"{source}: {rw}.tables[{j}]"
            pt = _table(pe, pw, {"table", "players"})
            pairings.append(Pairing(_str(pt, "table", pw), _strings(pt.get("players"), f"{pw}.players")))
        byes = []
        for j, be in enumerate(_list(rt, "byes", f"{source}: {rw}.")):
            bw = f"{source}: {rw}.byes[{j}]"
            bt = _table(be, bw, {"player", "score", "requested"})
            byes.append(Bye(_str(bt, "player", bw), _num(bt.get("score"), f"{bw}.score"),
                            _bool(bt, "requested", bw, False)))
        number = _int(rt, "number", f"{source}: {rw}", 1, MAX_ROUND)
        rnd = Round(number, tuple(pairings), tuple(byes))
        t = _replay(source, rw, t.add_round, rnd)
    for i, entry in enumerate(_list(top, "results", f"{source}: ")):
        rw = f"{source}: results[{i}]"
        rt = _table(entry, rw, {"round", "table", "players", "attempts", "penalties", "levels", "forfeited"})
        result = Result(
            round=_int(rt, "round", rw, 1, MAX_ROUND),
            table=_str(rt, "table", rw),
            players=_strings(rt.get("players"), f"{rw}.players"),
            attempts=tuple(_ints(a, f"{rw}.attempts[{k}]") for k, a in enumerate(_list(rt, "attempts", f"{rw}."))),
            penalties=tuple(_num(v, f"{rw}.penalties[{k}]") for k, v in enumerate(_list(rt, "penalties", f"{rw}."))),
            levels=tuple(_ints(a, f"{rw}.levels[{k}]") for k, a in enumerate(_list(rt, "levels", f"{rw}."))),
            forfeited=_strings(rt.get("forfeited", []), f"{rw}.forfeited"),
        )
        t = _replay(source, f"results[{i}]", t.record, result)
    return t


def load_hub(path: str | os.PathLike[str]) -> Tournament:
    text = read_text(path, limit=MAX_HUB_FILE_BYTES, what="a hub.toml tournament", error=HubConfigError)
    return parse_hub(text, source=os.fspath(path))


def _q(text: str) -> str:
    # JSON's escapes are TOML's; TOML also forbids a raw DEL in a string.
    return json.dumps(text).replace("\x7f", "\\u007f")


def _v(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _q(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_v(v) for v in value) + "]"
    raise TypeError(type(value))  # pragma: no cover - only the types above are written


def format_hub(t: Tournament) -> str:
    """The tournament as hub.toml text; :func:`parse_hub` reads it back equal."""
    out = ["[tournament]", f"name = {_q(t.name)}", f"game = {_q(t.game.kind.value)}"]
    if t.game.kind is GameKind.MASTERMIND and t.game.variant:
        out.append(f"variant = {_q(t.game.variant)}")
    out += [f"seats = {t.game.seats}", f"format = {_q(t.format.value)}", f"rounds = {t.rounds}",
            f"seed = {t.seed}", f"bye_score = {_v(t.bye_score)}"]
    if t.tiebreaks:
        out.append(f"tiebreaks = {_v(t.tiebreaks)}")
    if t.tables:
        out.append(f"tables = {_v(t.tables)}")
    r = t.readings
    out += ["", "[readings]", f"attempts_exclude_best = {_v(r.attempts_exclude_best)}",
            f"equalise_opponents = {_v(r.equalise_opponents)}",
            f"connection_progressive = {_v(r.connection_progressive)}"]
    for p in t.players:
        out += ["", "[[players]]", f"id = {_q(p.id)}"]
        if p.name:
            out.append(f"name = {_q(p.name)}")
        out.append(f"joined = {p.joined}")
        if p.withdrawn is not None:
            out.append(f"withdrawn = {p.withdrawn}")
    for rnd in t.played:
        out += ["", "[[rounds]]", f"number = {rnd.number}"]
        byes = ", ".join(
            f"{{ player = {_q(b.player)}, score = {_v(b.score)}, requested = {_v(b.requested)} }}" for b in rnd.byes
        )
        out.append(f"byes = [{byes}]")
        for pairing in rnd.pairings:
            out += ["[[rounds.tables]]", f"table = {_q(pairing.table)}", f"players = {_v(pairing.players)}"]
    for req in t.bye_requests:
        out += ["", "[[byes]]", f"round = {req.round}", f"player = {_q(req.player)}", f"score = {_v(req.score)}"]
    for res in t.results:
        out += ["", "[[results]]", f"round = {res.round}", f"table = {_q(res.table)}", f"players = {_v(res.players)}"]
        if res.attempts:
            out.append(f"attempts = {_v(res.attempts)}")
        if res.penalties:
            out.append(f"penalties = {_v(res.penalties)}")
        if res.levels:
            out.append(f"levels = {_v(res.levels)}")
        if res.forfeited:
            out.append(f"forfeited = {_v(res.forfeited)}")
    return "\n".join(out) + "\n"


# -- the hub's own settings: [hall] and [[accounts]] ---------------------------

#: A tournament or table id in a topic (docs/hall.md, the wire contract).
TOPIC_ID = re.compile(r"[A-Za-z0-9_-]{1,32}")
#: hashlib.scrypt's parameters and salt and hash, as `pegwatch hub --hash-password` writes them.
PASSWORD_HASH = re.compile(r"scrypt\$[0-9]{1,8}\$[0-9]{1,3}\$[0-9]{1,3}\$[A-Za-z0-9_=-]{8,200}\$[A-Za-z0-9_=-]{8,200}")


@dataclass(frozen=True)
class Account:
    """An arbiter's login; only the scrypt hash of the password is kept."""

    login: str
    password_hash: str


@dataclass(frozen=True)
class HallSettings:
    """``[hall]`` and ``[[accounts]]`` of hub.toml: what the hub needs beside the tournament."""

    tournament: str = "hall"
    """The ``<tournament>`` of the topics ``pegwatch/<tournament>/tables/...``."""
    accounts: tuple[Account, ...] = ()


def parse_hall(text: str, *, source: str = "hub.toml") -> HallSettings:
    data = parse_toml(text, source=source, error=HubConfigError)
    _check(isinstance(data, dict), source, "a table", data)
    hw = f"{source}: hall"
    hall = _table(data.get("hall", {}), hw, {"tournament"})
    tournament = _str(hall, "tournament", hw, "hall")
    _check(TOPIC_ID.fullmatch(tournament) is not None, f"{hw}.tournament", "1 to 32 of A-Z a-z 0-9 _ -", tournament)
    accounts: list[Account] = []
    for i, entry in enumerate(_list(data, "accounts", f"{source}: ")):
        aw = f"{source}: accounts[{i}]"
        at = _table(entry, aw, {"login", "password_hash"})
        login = _str(at, "login", aw)
        _check(TOPIC_ID.fullmatch(login) is not None, f"{aw}.login", "1 to 32 of A-Z a-z 0-9 _ -", login)
        digest = _str(at, "password_hash", aw)
        _check(PASSWORD_HASH.fullmatch(digest) is not None, f"{aw}.password_hash",
               "a hash from `pegwatch hub --hash-password`", digest[:12] + "...")
        if any(a.login == login for a in accounts):
            raise HubConfigError(f"{aw}.login: {login!r} is listed twice")
        accounts.append(Account(login, digest))
    return HallSettings(tournament, tuple(accounts))


def load_hall(path: str | os.PathLike[str]) -> HallSettings:
    text = read_text(path, limit=MAX_HUB_FILE_BYTES, what="a hub.toml tournament", error=HubConfigError)
    return parse_hall(text, source=os.fspath(path))
