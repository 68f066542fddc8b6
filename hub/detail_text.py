"""The words of a table's detail: why a row has its verdict, and each event of the log.

Pure functions of plain values, so the page, the report and their tests
read the same sentences. A sentence that would name the secret has a masked
twin, used while the game runs and the secret is masked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["clock_text", "code_text", "duration_text", "marks_text", "row_why"]


def marks_text(black: object, white: object) -> str:
    """``1B2W``; a count known within bounds is ``0-2``; unknown is ``?``."""

    def one(v: object) -> str:
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        if isinstance(v, Sequence) and not isinstance(v, str) and len(v) == 2:
            return f"{v[0]}-{v[1]}"
        return "?"

    return f"{one(black)}B{one(white)}W"


def code_text(code: Sequence[object] | None) -> str:
    """A code or guess as its colour words."""
    if not code:
        return "-"
    return " ".join(str(c) if c is not None else "?" for c in code)


def duration_text(ms: int | None) -> str:
    """``m:ss.s`` (``h:mm:ss`` from an hour); ``-`` when unknown."""
    if ms is None:
        return "-"
    sign = "-" if ms < 0 else ""
    tenths = abs(ms) // 100
    seconds, tenth = divmod(tenths, 10)
    minutes, second = divmod(seconds, 60)
    if minutes >= 60:
        hours, minute = divmod(minutes, 60)
        return f"{sign}{hours}:{minute:02d}:{second:02d}"
    return f"{sign}{minutes}:{second:02d}.{tenth}"


def clock_text(ms: int | None) -> str:
    """A remaining time on the clock (never below zero on a face)."""
    return duration_text(None if ms is None else max(ms, 0))


def _holes(numbers: Sequence[int]) -> str:
    if not numbers:
        return ""
    words = ", ".join(str(n) for n in numbers)
    return f"hole {words}" if len(numbers) == 1 else f"holes {words}"


def _decide(args: Mapping[str, Any]) -> str:
    """The verb for what decides a verdict: one hole or count decides, several decide."""
    return "decides" if len(args.get("holes", ())) + len(args.get("keys", ())) == 1 else "decide"


def row_why(reason: str, args: Mapping[str, Any], *, show_expected: bool) -> str:
    """Why a row has its verdict, in one sentence.

    ``show_expected`` is false while the secret is masked: then no sentence
    says which marks the code gives.
    """
    marks = marks_text(args.get("black"), args.get("white"))
    expected = args.get("expected")
    source = args.get("source")
    by = f" (the code as read by {source})" if source else ""
    if reason == "ok":
        return f"marked {marks}, as the code gives{by}"
    if reason == "mismark":
        if show_expected and expected is not None:
            return f"marked {marks}; the code gives {marks_text(*expected)}{by}"
        read = f"the code as read by {source}; " if source else ""
        return f"marked {marks}; not what the code gives ({read}it stays hidden until the game is over)"
    if reason == "agreed":
        return f"marked {marks}; judged against the code at the table, no mis-mark"
    if reason == "hidden":
        return f"marked {marks}; a code still fits every row (the code is hidden: judged when it is shown)"
    if reason in ("cleared", "proved", "unsure"):
        deciding = [*([_holes(args.get("holes", ()))] if args.get("holes") else []),
                    *(f"the {k} count" for k in args.get("keys", ()))]
        if reason == "cleared":
            return f"read within bounds ({marks}); every way its doubtful pegs can read agrees with the marks"
        if reason == "proved":
            return f"read within bounds ({marks}); every way its doubtful pegs can read is mis-marked"
        decide = " and ".join(deciding) if deciding else "its doubtful pegs"
        return f"read within bounds ({marks}); {decide} {_decide(args)} the verdict: the arbiter looks"
    if reason == "check":
        status = args.get("status") or "unknown"
        half = args.get("half") or "row"
        if status == "low trust":
            return f"the {half} was read on a board the camera does not trust: never accused from; the arbiter looks"
        if status == "unsure":
            holes = _holes(args.get("holes", ()))
            keys = " and ".join(f"the {k} count" for k in args.get("keys", ()))
            decide = " and ".join(x for x in (holes, keys) if x) or "its doubtful pegs"
            return f"{decide} {_decide(args)} the verdict: the arbiter looks"
        return f"the camera could not read the {half} ({status}): the arbiter looks"
    if reason == "suspect":
        return "no code fits the marks of every row: this row may be the wrong one; the arbiter looks"
    if reason == "unread":
        return "not read when the game was judged: the arbiter looks"
    if reason == "guess":
        return "guess read; waiting for the marks"
    if reason == "entered":
        return f"marked {marks}, entered by hand; judged when the code is known"
    return "in play: not judged yet"
