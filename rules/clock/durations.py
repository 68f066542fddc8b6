"""Durations as exact integer nanoseconds, with a symmetric text form.

Clock state never holds a float: every time is an ``int`` of nanoseconds.
:func:`parse_duration` reads what people write on a tournament sheet
(``"90:00"``, ``"1:30:00"``, ``"30s"``, ``"1h30m"``, ``"250ms"``) and
:func:`format_duration` writes the canonical form back, so that
``parse_duration(format_duration(ns)) == ns`` for every ``ns >= 0``.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from pegwatch.rules.clock.errors import DurationError

NS_PER_US = 1_000
NS_PER_MS = 1_000_000
NS_PER_S = 1_000_000_000
NS_PER_MIN = 60 * NS_PER_S
NS_PER_H = 60 * NS_PER_MIN

_UNITS = {
    "h": NS_PER_H,
    "m": NS_PER_MIN,
    "min": NS_PER_MIN,
    "s": NS_PER_S,
    "ms": NS_PER_MS,
    "us": NS_PER_US,
    "µs": NS_PER_US,
    "ns": 1,
}
_NUMBER = r"\d+(?:\.\d+)?"
_UNIT_PART = re.compile(rf"({_NUMBER})\s*(h|min|ms|us|µs|ns|m|s)")
_UNITS_WHOLE = re.compile(rf"(?:{_NUMBER}\s*(?:h|min|ms|us|µs|ns|m|s)\s*)+")
_CLOCK_FORM = re.compile(r"(?:(\d+):)?(\d+):(\d{2})(?:\.(\d{1,9}))?")


def _exact_ns(number: str, unit_ns: int, text: str) -> int:
    try:
        value = Decimal(number) * unit_ns
    except InvalidOperation as exc:  # pragma: no cover - the regexes only pass digits
        raise DurationError(f"duration {text!r}: {number!r} is not a number") from exc
    if value != value.to_integral_value():
        raise DurationError(f"duration {text!r} is not a whole number of nanoseconds")
    return int(value)


def parse_duration(text: str | int | float) -> int:
    """Return the duration *text* in integer nanoseconds.

    Accepted forms: ``"M:SS"`` and ``"H:MM:SS"`` with an optional fraction
    (``"4:00"``, ``"1:30:00"``, ``"0:59.5"``); one or more number-unit parts
    with units ``h``, ``m``/``min``, ``s``, ``ms``, ``us``, ``ns``
    (``"30s"``, ``"1h30m"``, ``"2.5s"``); a bare number of seconds
    (``"30"``, ``30``, ``0.5``). Raises :class:`DurationError` otherwise.
    """
    if isinstance(text, bool):
        raise DurationError(f"duration {text!r} is not a duration")
    if isinstance(text, int):
        if text < 0:
            raise DurationError(f"duration {text!r} is negative")
        return text * NS_PER_S
    if isinstance(text, float):
        if text != text or text < 0 or text in (float("inf"),):
            raise DurationError(f"duration {text!r} is not a non-negative number")
        # repr() gives the shortest decimal that round-trips, so 0.1 means 0.1.
        return _exact_ns(repr(text), NS_PER_S, repr(text))
    if not isinstance(text, str):
        raise DurationError(f"duration {text!r} is not text or a number")
    s = text.strip()
    if not s:
        raise DurationError("duration is empty")
    m = _CLOCK_FORM.fullmatch(s)
    if m:
        hours, minutes, seconds, fraction = m.groups()
        if int(seconds) >= 60 or (hours is not None and int(minutes) >= 60):
            raise DurationError(f"duration {text!r}: minutes and seconds must be below 60")
        ns = (int(hours or 0) * 60 + int(minutes)) * NS_PER_MIN + int(seconds) * NS_PER_S
        if fraction:
            ns += int(fraction.ljust(9, "0"))
        return ns
    if re.fullmatch(_NUMBER, s):
        return _exact_ns(s, NS_PER_S, text)
    if _UNITS_WHOLE.fullmatch(s):
        return sum(_exact_ns(n, _UNITS[u], text) for n, u in _UNIT_PART.findall(s))
    raise DurationError(
        f"duration {text!r} is not understood; write e.g. '90:00', '1:30:00', '30s', '1h30m'"
    )


def format_duration(ns: int) -> str:
    """Return the canonical text of *ns* nanoseconds (inverse of :func:`parse_duration`).

    Below a minute the form is seconds with a unit (``"30s"``, ``"0.25s"``);
    from a minute up it is clock form (``"4:00"``, ``"1:30:00"``, ``"2:05.5"``).
    """
    if ns < 0:
        raise DurationError(f"duration {ns} ns is negative")
    whole_s, frac_ns = divmod(ns, NS_PER_S)
    fraction = f".{frac_ns:09d}".rstrip("0") if frac_ns else ""
    if whole_s < 60:
        return f"{whole_s}{fraction}s"
    hours, rest = divmod(whole_s, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}:{minutes:02d}:{seconds:02d}{fraction}"
    return f"{minutes}:{seconds:02d}{fraction}"


def ceil_div(a: int, b: int) -> int:
    """Return ``ceil(a / b)`` for integers, exactly."""
    return -(-a // b)
