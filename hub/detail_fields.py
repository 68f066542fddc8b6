"""Reading a journal payload's fields leniently: a field of an unexpected type is absent.

Shared by :mod:`pegwatch.hub.detail_build` and :mod:`pegwatch.hub.detail_verdicts`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from pegwatch.hub.detail_model import HoleRead

__all__ = ["bounds", "holes", "int_of", "ints", "judged_holes", "str_of", "strs"]

#: The reader's words for a hole it could not give a colour for.
NOT_A_COLOUR: Final = frozenset({"unknown", "occluded", "empty"})


def int_of(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def str_of(v: object) -> str | None:
    return v if isinstance(v, str) else None


def strs(v: object) -> tuple[str, ...] | None:
    if isinstance(v, Sequence) and not isinstance(v, str) and all(isinstance(x, str) for x in v):
        return tuple(v)
    return None


def bounds(v: object) -> tuple[int, int] | None:
    if isinstance(v, Sequence) and not isinstance(v, str) and len(v) == 2:
        lo, hi = int_of(v[0]), int_of(v[1])
        if lo is not None and hi is not None:
            return lo, hi
    return None


def ints(v: object) -> tuple[int, ...]:
    if isinstance(v, Sequence) and not isinstance(v, str):
        return tuple(x for x in v if int_of(x) is not None)
    return ()


def holes(data: Mapping[str, Any]) -> tuple[HoleRead, ...]:
    guess = data.get("guess")
    if not isinstance(guess, Sequence) or isinstance(guess, str):
        return ()
    conf = data.get("confidence")
    cands = data.get("candidates")
    out = []
    for i, raw in enumerate(guess):
        name = raw if isinstance(raw, str) else "unknown"
        c: float | None = None
        if isinstance(conf, Sequence) and not isinstance(conf, str) and i < len(conf):
            c = float(conf[i]) if isinstance(conf[i], int | float) and not isinstance(conf[i], bool) else None
        elif isinstance(conf, int | float) and not isinstance(conf, bool):
            c = float(conf)
        cand = None
        if isinstance(cands, Sequence) and not isinstance(cands, str) and i < len(cands):
            cand = strs(cands[i]) if not isinstance(cands[i], str) else (cands[i],)
        if name in NOT_A_COLOUR:
            out.append(HoleRead(None, name, c, cand))
        else:
            out.append(HoleRead(name, "ok", c, None))
    return tuple(out)


def judged_holes(guess: object, before: tuple[HoleRead, ...]) -> tuple[HoleRead, ...]:
    """A verdict's guess (a colour, candidates or "unknown" per hole), keeping
    the reading's confidence where the colour is the same."""
    if not isinstance(guess, Sequence) or isinstance(guess, str):
        return before
    out = []
    for i, g in enumerate(guess):
        old = before[i] if i < len(before) else None
        if isinstance(g, str) and g not in NOT_A_COLOUR:
            same = old is not None and old.colour == g
            out.append(HoleRead(g, "ok", old.confidence if same and old is not None else None))
        elif isinstance(g, Sequence) and not isinstance(g, str):
            out.append(HoleRead(None, "unknown", None, strs(g)))
        else:
            out.append(old if old is not None and old.colour is None else HoleRead(None, "unknown"))
    return tuple(out)
