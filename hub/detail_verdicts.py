"""What each journaled verdict says of a table's rows, games and match (see :mod:`pegwatch.hub.detail`).

The table journals its flow's verdicts (``docs/table.md``, "Event kinds"):
they, not a second judge here, decide a row's verdict. A row is ``ok`` or
``mismark`` only when the table judged it against the code; a check, an
unsure row within bounds or a suspect of an inconsistency is ``unsure``; a
row consistent with a hidden code is ``pending`` until the game is judged,
when the game's expected marks settle it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pegwatch.hub.detail_fields import bounds, int_of, ints, judged_holes
from pegwatch.hub.detail_model import GameOutcome, MatchOutcome, Ruled

if TYPE_CHECKING:
    from pegwatch.hub.detail_build import Builder, Envelope, GameFacts, RowFacts

__all__ = ["apply_verdict"]


def _count(v: object) -> int | None:
    return int_of(v)


def _expected(v: object) -> tuple[int, int] | None:
    if isinstance(v, Mapping):
        b, w = int_of(v.get("black")), int_of(v.get("white"))
        if b is not None and w is not None:
            return b, w
    return None


def _names(v: object) -> tuple[str, ...]:
    if isinstance(v, Sequence) and not isinstance(v, str):
        return tuple(str(x) for x in v)
    return ()


def _on_row(b: Builder, g: GameFacts, r: RowFacts, d: Mapping[str, Any]) -> None:
    r.guess = judged_holes(d.get("guess"), r.guess)
    r.black, r.white = _count(d.get("black")), _count(d.get("white"))
    r.black_bounds = r.white_bounds = None
    expected = _expected(d.get("expected"))
    if d.get("exact") is True and expected is not None:
        r.expected = expected
        wrong = expected != (r.black, r.white)
        r.judged("mismark" if wrong else "ok", expected=expected, source=g.secret_source)
    elif d.get("exact") is True and g.mismark_row is None:
        # Judged against the code at the table, but the marks it gives were taken out (the
        # hall's events never carry them): the table announces the first wrong row as a
        # mis-mark right after, which overrides this; the game's verdict settles the rest.
        r.judged("agreed", source=g.secret_source)
    elif r.reason != "suspect":
        r.judged("hidden")


def _on_bounded(g: GameFacts, r: RowFacts, d: Mapping[str, Any]) -> None:
    r.guess = judged_holes(d.get("guess"), r.guess)
    black, white = d.get("black"), d.get("white")
    r.black, r.white = _count(black), _count(white)
    r.black_bounds, r.white_bounds = bounds(black), bounds(white)
    reason = {"correct": "cleared", "mismark": "proved"}.get(str(d.get("verdict")), "unsure")
    r.judged(reason, black=black, white=white, holes=ints(d.get("deciding_holes")),
             keys=_names(d.get("deciding_keys")), source=_source(d) or g.secret_source)


def _source(d: Mapping[str, Any]) -> str | None:
    s = d.get("secret_source")
    return s if isinstance(s, str) else None


def _reason(v: Mapping[str, Any], g: GameFacts) -> str:
    if v.get("solved") is True:
        return "solved"
    if int_of(v.get("mismarked_row")) is not None:
        return "mis-mark"
    if g.flag is not None:
        return "time out"
    return "judged"


def _on_game(b: Builder, g: GameFacts, d: Mapping[str, Any]) -> None:
    v = d.get("verdict")
    if not isinstance(v, Mapping):
        return
    g.over = bool(v.get("final", True))
    notes = _names(v.get("notes"))
    penalty = v.get("codemaker_penalty_vp")
    g.outcome = GameOutcome(
        int_of(v.get("attempts")) or 0, v.get("solved") is True, _reason(v, g),
        int_of(v.get("solved_row")), int_of(v.get("mismarked_row")),
        float(penalty) if isinstance(penalty, int | float) and not isinstance(penalty, bool) else 0.0,
        notes,
    )
    source = v.get("secret_source")
    if isinstance(source, str):
        g.secret_source = g.secret_source or source
    # The game's expected marks settle the rows judged while the code was hidden.
    unsure = set(ints(v.get("unsure_rows")))
    unread = set(ints(v.get("unread_rows")))
    marks = v.get("expected_marks")
    expected = list(marks) if isinstance(marks, Sequence) and not isinstance(marks, str) else []
    for number, r in g.rows.items():
        e = _expected(expected[number - 1]) if 0 < number <= len(expected) else None
        if number in unsure:
            if r.reason not in ("unsure", "check"):
                r.judged("unsure")
        elif number in unread:
            r.judged("unread")
        elif e is not None:
            r.expected = e
            if r.reason not in ("mismark", "proved", "ok", "cleared"):
                r.judged("mismark" if e != (r.black, r.white) else "ok", expected=e, source=g.secret_source)
            elif r.reason in ("mismark", "ok"):
                r.args["expected"] = e
    mis = int_of(v.get("mismarked_row"))
    if mis is not None and mis in g.rows and g.rows[mis].reason not in ("mismark", "proved"):
        r = g.rows[mis]
        r.judged("mismark", expected=r.expected, source=g.secret_source)


def apply_verdict(b: Builder, env: Envelope) -> int | None:
    """Take one ``verdict`` event; returns the game it is about (None: the match)."""
    d = env.data
    what = d.get("what")
    if what == "match":
        vp, attempts, pen = d.get("vp"), d.get("attempts"), d.get("penalties_vp")
        illegal = d.get("illegal_moves")
        b.match = MatchOutcome(
            {str(k): float(x) for k, x in vp.items()} if isinstance(vp, Mapping) else {},
            {str(k): int(x) for k, x in attempts.items()} if isinstance(attempts, Mapping) else {},
            {str(k): float(x) for k, x in pen.items()} if isinstance(pen, Mapping) else {},
            {str(k): int(x) for k, x in illegal.items()} if isinstance(illegal, Mapping) else None,
        )
        return None
    g = b.game(d.get("game"))
    if what == "start":
        b.current = g.number
        maker, breaker = d.get("codemaker"), d.get("codebreaker")
        g.codemaker = maker if isinstance(maker, str) else g.codemaker
        g.codebreaker = breaker if isinstance(breaker, str) else g.codebreaker
        return g.number
    row = int_of(d.get("row"))
    r = g.row(row) if row is not None and row > 0 else None
    if what == "row" and r is not None:
        _on_row(b, g, r, d)
    elif what == "bounded_row" and r is not None:
        _on_bounded(g, r, d)
    elif what == "check":
        if r is None:
            g.alarms.append(f"the camera could not read the code ({d.get('status')}): the arbiter checks it")
        else:
            r.judged("check", status=d.get("status"), half=d.get("half"),
                     holes=ints(d.get("deciding_holes")), keys=_names(d.get("deciding_keys")))
    elif what == "joint_confirm" and r is not None:
        r.ruled = Ruled("both players", "confirmed by both players", env.seq)
    elif what == "illegal" and r is not None:
        r.illegal = f"{d.get('reason')} ({d.get('player')}'s illegal move {d.get('count')} in this game)"
    elif what == "mismark" and r is not None:
        g.mismark_row = r.row
        r.judged("mismark", expected=r.expected, source=_source(d) or g.secret_source)
    elif what == "entered" and r is not None:
        r.ruled = Ruled(str(d.get("by") or "arbiter"), "entered by hand", env.seq)
        r.guess = judged_holes(d.get("guess"), r.guess)
        if int_of(d.get("black")) is not None:
            r.black, r.white = int_of(d.get("black")), int_of(d.get("white"))
        if r.reason in ("in play", "guess", "check"):
            r.judged("entered")
    elif what == "secret_changed":
        when = "under the shield" if d.get("when") == "hidden" else "when the shield opened"
        g.alarms.append(f"the code read differently {when} from the one accepted: the arbiter confirms it")
    elif what == "inconsistent":
        suspects = ints(d.get("suspects"))
        g.alarms.append("no code fits the marks of every row"
                        + (f"; the wrong row may be {', '.join(map(str, suspects))}" if suspects else ""))
        for s in suspects:
            sr = g.row(s)
            if sr.reason in ("hidden", "in play", "guess"):
                sr.judged("suspect")
    elif what == "flag":
        player = d.get("player")
        g.flag = player if isinstance(player, str) else "?"
    elif what == "game":
        _on_game(b, g, d)
    return g.number
