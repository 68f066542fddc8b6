"""What the page and the JSON API show, as plain JSON-able data.

One function per thing shown, used by the templates, the API and the live
stream alike, so the page and ``/api`` never disagree. Nothing here reads
the secret: a table's state and events have none while its game runs (the
wire has no field for it and the hub strips any), and a result carries it
only after its game is over.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pegwatch.hub.model import Result, Tournament
from pegwatch.hub.results import result_vp
from pegwatch.hub.service import Hall, TableLive
from pegwatch.hub.standings import standings
from pegwatch.hub.store import StoredCommand, StoredMessage

__all__ = [
    "NEEDS_WEIGHTS",
    "command_json",
    "needs_score",
    "pairings_json",
    "results_json",
    "standings_json",
    "table_json",
    "tables_json",
]

#: What makes a table "need the arbiter", and how much: the grid sorts by the sum.
NEEDS_WEIGHTS: Mapping[str, int] = {
    "offline": 5, "mismark": 4, "flag": 3, "uncertain_row": 2, "alarm": 1, "pending_command": 1,
}


def _status(live: TableLive) -> str:
    if live.online is None:
        return "unknown"
    return "online" if live.online else "offline"


def needs_score(summary: Mapping[str, Any]) -> int:
    w = NEEDS_WEIGHTS
    return (
        (w["offline"] if summary["offline"] else 0)
        + w["mismark"] * len(summary["mismarks"])
        + w["flag"] * len(summary["flags"])
        + w["uncertain_row"] * len(summary["uncertain_rows"])
        + w["alarm"] * len(summary["alarms"])
        + w["pending_command"] * int(summary["pending_commands"])
    )


def table_json(hall: Hall, live: TableLive, now_ns: int, *, rows: bool = False) -> dict[str, Any]:
    """One table for the grid (``rows``: with its rows as read, for the detail).

    ``age_ms`` is how long before ``now_ns`` the hub received the state: a
    clock that runs shows ``remaining_ms - age_ms`` now, and the page counts
    on from there with its own monotonic clock.
    """
    s = live.state
    status = _status(live)
    out: dict[str, Any] = {
        "table": live.table,
        "known": hall.is_known(live.table),
        "status": status,
        "offline": status != "online",
        "match": s.match if s else None,
        "game": s.game if s else None,
        "seq": s.seq if s else None,
        "phase": s.phase if s else "",
        "players": {"white": s.players[0], "black": s.players[1]} if s else None,
        "turn": s.turn if s else None,
        "clocks": {side: {"remaining_ms": c.remaining_ms, "running": c.running}
                   for side, c in zip(("white", "black"), s.clocks, strict=True)} if s else None,
        "age_ms": max(0, (now_ns - live.state_rx_ns) // 1_000_000) if s and live.state_rx_ns is not None else None,
        "row": max((r.row for r in s.rows), default=0) if s else 0,
        "flags": list(s.flags) if s else [],
        "mismarks": list(s.mismarks) if s else [],
        "uncertain_rows": list(s.uncertain_rows) if s else [],
        "alarms": list(s.alarms) if s else [],
        "pending_commands": hall.pending(live.table),
    }
    out["needs"] = needs_score(out)
    if rows:
        out["rows"] = [
            {"row": r.row, "guess": list(r.guess), "marks": {"black": r.black, "white": r.white},
             "verdict": r.verdict, "uncertain": r.uncertain}
            for r in (s.rows if s else ())
        ]
    return out


def tables_json(hall: Hall, *, sort: str = "table") -> list[dict[str, Any]]:
    now = hall.now_ns()
    out = [table_json(hall, live, now) for live in hall.tables()]
    if sort == "needs":
        out.sort(key=lambda t: -int(t["needs"]))  # stable: table order among equals
    return out


def command_json(c: StoredCommand) -> dict[str, Any]:
    return {"id": c.id, "table": c.table, "kind": c.kind, "args": dict(c.payload.get("args", {})), "by": c.by,
            "status": c.status, "sends": c.sends, "reason": c.reason, "seq": c.seq}


def _result_json(t: Tournament, r: Result) -> dict[str, Any]:
    vp = result_vp(t.game, r)
    return {
        "round": r.round, "table": r.table, "players": list(r.players),
        "names": [t.player(p).name or p for p in r.players],
        "vp": [vp[p] for p in r.players],
        "attempts": [list(a) for a in r.attempts], "penalties": list(r.penalties),
        "levels": [list(lv) for lv in r.levels], "forfeited": list(r.forfeited),
    }


def _received_json(m: StoredMessage) -> dict[str, Any]:
    p = m.payload
    return {"id": m.id, "table": m.table, "match": p.get("match"), "game": p.get("game"),
            "players": p.get("players"), "result": p.get("result"), "secret": p.get("secret")}


def results_json(hall: Hall, *, limit: int = 1000) -> dict[str, Any]:
    """The tournament's results, and what the tables sent (games and matches, each after it ended)."""
    t = hall.tournament
    return {
        "results": [_result_json(t, r) for r in sorted(t.results, key=lambda r: (r.round, _nat(r.table)))],
        "received": [_received_json(m) for m in hall.store.messages("result", limit=limit)],
    }


def _nat(name: str) -> tuple[int, int | str]:
    return (0, int(name)) if name.isdigit() else (1, name)


def standings_json(t: Tournament) -> dict[str, Any]:
    s = standings(t)
    return {
        "tournament": t.name,
        "rounds_played": len(t.played),
        "tiebreaks": list(s.tiebreaks),
        "rows": [{"rank": r.rank, "player": r.player, "name": r.name or r.player, "score": r.score,
                  "games": r.games, "shared": r.shared, "tiebreaks": list(r.tiebreaks)} for r in s.rows],
        "perfect": list(s.perfect),
        "extra_round": list(s.extra_round),
    }


def pairings_json(t: Tournament, round_number: int | None = None) -> dict[str, Any]:
    """A round's pairings (the latest by default); ``round`` 0 when none is paired yet."""
    if not t.played:
        return {"round": 0, "rounds": 0, "tables": [], "byes": []}
    number = len(t.played) if round_number is None else round_number
    if not 1 <= number <= len(t.played):
        raise LookupError(f"round {number}: rounds 1 to {len(t.played)} are paired")
    rnd = t.played[number - 1]

    def name(p: str) -> str:
        return t.player(p).name or p

    return {
        "round": number,
        "rounds": len(t.played),
        "tables": [{"table": p.table, "players": list(p.players), "names": [name(x) for x in p.players],
                    "result": t.result(number, p.table) is not None} for p in rnd.pairings],
        "byes": [{"player": b.player, "name": name(b.player), "score": b.score, "requested": b.requested}
                 for b in rnd.byes],
    }
