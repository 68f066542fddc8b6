"""The event log of a table's detail: each journaled event in one line of words.

:func:`event_text` gives the line and, where it would name the secret, its
masked twin; :func:`ruling_text` says what an arbiter did. ``name(seat)``
turns a seat number into the player's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pegwatch.hub.detail_fields import int_of, str_of, strs
from pegwatch.hub.detail_text import code_text, duration_text, marks_text

__all__ = ["event_text", "ruling_text", "vp_text"]

Namer = Callable[[object], str]

_HIDDEN = "(hidden until the game is over)"


def _where(d: Mapping[str, Any]) -> str:
    game, row = d.get("game"), d.get("row")
    if row in (None, 0):
        return f"game {game}" if game is not None else "the match"
    return f"game {game} row {row}"


def ruling_text(action: str, d: Mapping[str, Any], name: Namer) -> str:
    """What the arbiter's action did, in words (never the secret)."""
    by = str_of(d.get("by")) or "arbiter"
    why = str_of(d.get("why"))
    tail = f" ({why})" if why else ""
    if action in ("pause", "resume"):
        return f"{by}: {action}d the clock{tail}" if action == "pause" else f"{by}: resumed the clock{tail}"
    if action == "adjust":
        delta = int_of(d.get("delta_ns"))
        amount = "?" if delta is None else ("+" if delta >= 0 else "") + duration_text(delta // 1_000_000)
        return f"{by}: adjusted {name(d.get('player'))}'s clock by {amount}{tail}"
    if action == "confirm_row":
        how = "entered by hand" if d.get("hand") else "confirmed"
        marks = marks_text(d.get("black"), d.get("white"))
        guess = strs(d.get("guess"))
        what = f"{code_text(guess)} {marks}" if guess else marks
        return f"{by}: {_where(d)} {how}: {what}{tail}"
    if action == "confirm_secret":
        return f"{by}: confirmed the code of {_where(d)}{tail}"
    if action == "undo":
        return f"{by}: undid the last press{tail}"
    if action == "set":
        parts = []
        if int_of(d.get("time_ns")) is not None:
            parts.append(f"time {duration_text(int(d['time_ns']) // 1_000_000)}")
        for key in ("moves", "period"):
            if int_of(d.get(key)) is not None:
                parts.append(f"{key} {d[key]}")
        return f"{by}: set {name(d.get('player'))}'s clock: {', '.join(parts) or '-'}{tail}"
    if action == "penalty":
        kind = str_of(d.get("penalty")) or "?"
        extra = ""
        if int_of(d.get("time_ns")) is not None:
            extra = f", {duration_text(int(d['time_ns']) // 1_000_000)} to the opponent"
        elif isinstance(d.get("points"), int | float) and not isinstance(d.get("points"), bool):
            extra = f", {d['points']} VP docked"
        return f"{by}: penalty against {name(d.get('player'))}: {kind}{extra}{tail}"
    if action == "preset":
        return f"{by}: clock preset {d.get('name')}{tail}"
    return f"{by}: {action}{tail}"


def _reading(d: Mapping[str, Any]) -> tuple[str, str | None]:
    where = _where(d)
    status = str_of(d.get("status")) or "?"
    trust = " (low trust)" if d.get("trust") == "low" else ""
    phase = d.get("phase")
    if phase == "secret" or d.get("row") == 0:
        shield = str_of(d.get("shield"))
        under = f" (shield {shield})" if shield else ""
        if status != "ok":
            return f"{where}: the camera could not read the code{under}: {status}{trust}", None
        code = strs(d.get("code"))
        plain = f"{where}: the camera read the code {code_text(code)}{under}{trust}"
        return plain, f"{where}: the camera read the code{under} {_HIDDEN}"
    if status != "ok" and d.get("candidates") is None:
        return f"{where}: the camera could not read the {phase}: {status}{trust}", None
    guess = code_text(strs(d.get("guess")))
    doubt = "" if status == "ok" else f" ({status}, within bounds)"
    if status == "ok" and phase == "guess" and (shaky := _not_quite_sure(d)):
        doubt = f" ({shaky}: judged within bounds)"
    if phase == "marks":
        black = d.get("black_bounds") if d.get("black_bounds") is not None else d.get("black")
        white = d.get("white_bounds") if d.get("white_bounds") is not None else d.get("white")
        return f"{where}: the camera read the marks {marks_text(black, white)}{doubt}{trust}", None
    return f"{where}: the camera read the guess {guess}{doubt}{trust}", None


def _not_quite_sure(d: Mapping[str, Any]) -> str:
    """The pegs of a guess read ``ok`` whose ``candidates`` name more than the colour read:
    read confidently but not surely ("hole 2 may also be orange")."""
    cands, guess = d.get("candidates"), strs(d.get("guess")) or ()
    if not isinstance(cands, Sequence) or isinstance(cands, str):
        return ""
    doubts = []
    for i, (read, may) in enumerate(zip(guess, cands, strict=False), start=1):
        others = [c for c in (strs(may) or ()) if c != read]
        if others:
            doubts.append(f"hole {i} may also be {' or '.join(others)}")
    return ", ".join(doubts)


def vp_text(x: object) -> str:
    """A VP figure as people write it: 1, 0, ½ (1.5 is 1½)."""
    if not isinstance(x, int | float) or isinstance(x, bool):
        return str(x)
    whole, half = divmod(round(float(x) * 2), 2)
    return (str(whole) if whole or not half else "") + ("½" if half else "")


def _verdict(d: Mapping[str, Any], name: Namer) -> tuple[str, str | None]:
    what = str_of(d.get("what")) or "?"
    where = _where(d)
    if what == "start":
        return f"{where}: {d.get('codemaker')} set the code; {d.get('codebreaker')} breaks it", None
    if what == "secret_seen":
        return f"{where}: the camera saw the code as it was set (kept, never shown)", None
    if what == "row":
        marks = marks_text(d.get("black"), d.get("white"))
        expected = d.get("expected")
        judged = f"{where}: {code_text(strs(d.get('guess')))} -> {marks}"
        if d.get("exact") is True and isinstance(expected, Mapping):
            e = marks_text(expected.get("black"), expected.get("white"))
            ok = e == marks
            plain = f"{judged} ({'correct' if ok else f'should be {e}'})"
            return plain, f"{judged} ({'correct' if ok else 'mis-marked'})"
        return f"{judged} (consistent; the code is hidden)", None
    if what == "bounded_row":
        return f"{where}: read within bounds, {d.get('verdict')}", None
    if what == "check":
        what_row = "the code" if d.get("row") in (0, None) else f"ROW {d.get('row')}"
        return f"{where}: CHECK {what_row}: the {d.get('half')} read {d.get('status')}", None
    if what == "joint_confirm":
        return f"{where}: both players confirmed the row", None
    if what == "illegal":
        return f"{where}: illegal guess by {d.get('player')}: {d.get('reason')}", None
    if what == "mismark":
        return f"{where}: MIS-MARK; {d.get('attempts')} attempts (the code as read by {d.get('secret_source')})", None
    if what == "entered":
        return f"{where}: entered by {d.get('by')}: {marks_text(d.get('black'), d.get('white'))}", None
    if what == "secret_changed":
        return f"{where}: the code read differently ({d.get('when')}): the arbiter confirms it", None
    if what == "inconsistent":
        return f"{where}: no code fits the marks; suspect rows {d.get('suspects')}", None
    if what == "flag":
        return f"{where}: FLAG, {d.get('player')} ({d.get('role')}) ran out of time", None
    if what == "game":
        v = d.get("verdict")
        attempts = v.get("attempts") if isinstance(v, Mapping) else "?"
        return f"{where}: judged, {attempts} attempts", None
    if what == "match":
        vp = d.get("vp")
        scores = ", ".join(f"{k} {vp_text(x)} VP" for k, x in vp.items()) if isinstance(vp, Mapping) else "?"
        return f"match over: {scores}", None
    return f"{where}: {what}", None


def event_text(kind: str, d: Mapping[str, Any], name: Namer) -> tuple[str, str | None]:
    """One event in words, and its masked twin when the words would name the secret."""
    if kind == "match":
        players = strs(d.get("players")) or ()
        return f"match: {' and '.join(players)}; rules {d.get('rules')}, clock {d.get('clock')}", None
    if kind == "press":
        tag = f" ({d['tag']})" if isinstance(d.get("tag"), str) else ""
        return f"{name(d.get('player'))} pressed the clock{tag}", None
    if kind == "flag":
        return f"{name(d.get('player'))}'s flag fell", None
    if kind == "reading":
        return _reading(d)
    if kind == "verdict":
        return _verdict(d, name)
    if kind in ("arbiter", "ruling"):
        text = ruling_text(str_of(d.get("action")) or "?", d, name)
        if d.get("action") == "confirm_secret":
            code = strs(d.get("code"))
            return f"{text}: {code_text(code)}", text
        return text, None
    if kind == "boot":
        return "the table restarted: the clock waits, paused, for the arbiter", None
    if kind == "camera":
        problem = f": {d['problem']}" if isinstance(d.get("problem"), str) else ""
        return f"camera {d.get('state')}{problem}", None
    if kind == "menu":
        return f"arbiter menu: {d.get('action')}", None
    if kind == "setup":
        return f"set-up ({d.get('step')}): {d.get('status') or d.get('action') or d.get('calibration')}", None
    if kind == "hall_command":
        return f"hall: {d.get('kind')} from {d.get('by')} (command {str(d.get('id'))[:8]})", None
    if kind == "hall_ack":
        reason = f": {d['reason']}" if isinstance(d.get("reason"), str) else ""
        return f"hall: command {str(d.get('command'))[:8]} {d.get('status')}{reason}", None
    if kind == "evidence_pruned":
        items = d.get("evidence")
        count = len(items) if isinstance(items, list | tuple) else "?"
        return f"{count} evidence image(s) pruned at max_mb", None
    return kind, None
