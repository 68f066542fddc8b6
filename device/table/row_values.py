"""What one frame says of a row, in the forms the vision worker compares across frames.

A row's *value* is what it holds when every hole (and, for the marks, the
key count) is read with confidence: :func:`row_value`. What it is *known*
to hold is per hole the colours it may hold and the key counts or their
bounds: :func:`known_value`. Sensor noise leaves a marginal hole in doubt
in one frame and not in the next, so the worker asks whether a frame only
knows less than a value (:func:`says_less`), and over a run of still
frames keeps everything the frames allowed (:func:`widen`): never more
than any of them knew.
"""

from __future__ import annotations

from typing import Any

from pegwatch.rules.flow.state import TRUST_FULL
from pegwatch.vision.reading import EMPTY, BoardReading, RowReading

Value = tuple[object, ...]
Holes = tuple[tuple[str, ...] | None, ...]
Bounds = tuple[int, int] | None


def row_value(row: RowReading, phase: str) -> Value | None:
    """The row's value when it may be answered for ``phase``, else None.

    Every hole must be read with confidence. Holes read as empty are part of
    the answer (an incomplete row is a move the flow's legality check
    reports, and the judge never judges its marks), but a row with nothing
    in it at all is not a guess yet: most likely the pegs are still in the
    codebreaker's hand, so the worker waits, and gives up as "unknown".
    """
    if any(not h.is_certain for h in row.holes) or all(h.colour == EMPTY for h in row.holes):
        return None
    if phase == "guess":
        return (row.guess,)
    if not row.keys.is_certain:
        return None
    return (row.guess, row.keys.black, row.keys.white)


def known_value(row: RowReading, phase: str) -> Value | None:
    """What the row is known to hold, certain or not: per hole the colours it
    may hold (None: anything), and the key counts or their bounds. None when
    too little is known to judge within bounds (no hole known at all, or key
    pegs neither counted nor bounded): then the row waits for the arbiter."""
    holes = tuple(h.possible for h in row.holes)
    if all(h.colour == EMPTY for h in row.holes) or all(h is None for h in holes):
        return None
    if phase == "guess":
        return (holes,)
    keys = row.keys
    if keys.is_certain:
        return (holes, "exact", keys.black, keys.white)
    if keys.black_bounds is None and keys.white_bounds is None:
        return None
    return (holes, "bounds", keys.black_bounds, keys.white_bounds)


def _count_bounds(known: Value) -> tuple[Bounds, Bounds]:
    if known[1] == "exact":
        black, white = known[2], known[3]
        assert isinstance(black, int) and isinstance(white, int)
        return (black, black), (white, white)
    black_b, white_b = known[2], known[3]
    assert black_b is None or isinstance(black_b, tuple)
    assert white_b is None or isinstance(white_b, tuple)
    return black_b, white_b


def says_less(known: Value | None, value: Value | None, phase: str) -> bool:
    """Does a frame that knows the row only as ``known`` (:func:`known_value`)
    leave ``value`` (:func:`row_value`) possible? Every hole may hold the
    value's colour, and each key count's bounds hold the value's count.
    Nothing known at all is not "less": a row that reads nothing is covered
    or gone."""
    if known is None or value is None:
        return False
    guess, holes = value[0], known[0]
    assert isinstance(guess, tuple) and isinstance(holes, tuple)
    if any(possible is not None and colour not in possible for colour, possible in zip(guess, holes, strict=True)):
        return False
    if phase == "guess":
        return True
    for bounds, n in zip(_count_bounds(known), value[1:3], strict=True):
        if bounds is not None and not (isinstance(n, int) and bounds[0] <= n <= bounds[1]):
            return False
    return True


def widen(a: Value, b: Value) -> Value:
    """Everything two frames of one row left possible (both :func:`known_value`s of one phase)."""
    holes_a, holes_b = a[0], b[0]
    assert isinstance(holes_a, tuple) and isinstance(holes_b, tuple)
    holes: Holes = tuple(
        None if x is None or y is None else tuple(dict.fromkeys((*x, *y)))
        for x, y in zip(holes_a, holes_b, strict=True)
    )
    if len(a) == 1:
        return (holes,)
    counts: list[Bounds] = [
        None if x is None or y is None else (min(x[0], y[0]), max(x[1], y[1]))
        for x, y in zip(_count_bounds(a), _count_bounds(b), strict=True)
    ]
    black, white = counts
    if black is not None and white is not None and black[0] == black[1] and white[0] == white[1]:
        return (holes, "exact", black[0], white[0])
    return (holes, "bounds", black, white)


def known_payload(known: Value) -> dict[str, Any]:
    """What the row is known to hold, for the flow, which judges it over every
    completion: ``candidates``, and for the marks the key counts' bounds
    (``keys_status`` "unknown"); exact counts keep the reading's own
    counts and have no bounds (null), as in a reading record."""
    holes = known[0]
    assert isinstance(holes, tuple)
    out: dict[str, Any] = {"candidates": [None if h is None else list(h) for h in holes]}
    if len(known) == 1:
        return out
    if known[1] == "exact":
        return {**out, "black_bounds": None, "white_bounds": None}
    black, white = _count_bounds(known)
    out["black_bounds"] = None if black is None else list(black)
    out["white_bounds"] = None if white is None else list(white)
    out["keys_status"] = "unknown"
    return out


def secret_value(reading: BoardReading) -> Value | None:
    """The secret when it may be accepted: every hole read confidently (no
    hole doubtful, occluded or empty), on a board the camera trusts, with
    nothing over the shield's area and the shield not closed."""
    secret = reading.secret
    if (
        secret is None
        or reading.problem is not None
        or reading.trust != TRUST_FULL
        or reading.shield in ("closed", "covered")
        or any(not h.is_certain or h.colour == EMPTY for h in secret)
    ):
        return None
    return (tuple(h.colour for h in secret),)
