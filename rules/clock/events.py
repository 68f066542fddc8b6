"""The clock's events: what is journalled and replayed.

A :class:`ClockEvent` is one call made on a
:class:`~pegwatch.rules.clock.engine.Clock`. Its ``kind`` is a
:class:`ClockEventKind`, a :class:`~enum.StrEnum`: a member equals its
string (``ClockEventKind.PRESS == "press"``), so code and files that use
the strings keep working, while code that names the members is checked by
mypy. :meth:`ClockEvent.to_json` and :meth:`ClockEvent.from_json` carry an
event across a file: ``ClockEvent.from_json(e.to_json()) == e``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from pegwatch.rules.clock.errors import ClockStateError


class ClockEventKind(StrEnum):
    """What a :class:`ClockEvent` does; each member equals its string."""

    START = "start"
    PRESS = "press"
    PAUSE = "pause"
    RESUME = "resume"
    ADJUST = "adjust"
    UNDO = "undo"
    STOP = "stop"

    @classmethod
    def of(cls, kind: object) -> ClockEventKind:
        """*kind* as a member; an unknown kind raises :class:`ClockStateError`."""
        if isinstance(kind, cls):
            return kind
        if isinstance(kind, str):
            with contextlib.suppress(ValueError):
                return cls(kind)
        known = ", ".join(k.value for k in cls)
        raise ClockStateError(f"unknown clock event kind {kind!r}; known: {known}")


_OPTIONAL = ("player", "remaining_ns", "moves", "stage")
_KEYS = ("kind", "at_ns", *_OPTIONAL)


def _whole(data: Mapping[str, object], key: str) -> int | None:
    value = data.get(key)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise ClockStateError(f"clock event {key}: must be a whole number, got {value!r}")
    return value


@dataclass(frozen=True, init=False)
class ClockEvent:
    """One call made on a :class:`~pegwatch.rules.clock.engine.Clock`, as journalled and replayed.

    ``kind`` may be given as a :class:`ClockEventKind` or its string
    (``ClockEvent("press", at_ns, 0)``) and is always stored as the member;
    an unknown kind raises :class:`ClockStateError` here, at construction.
    The other fields are checked when the event is applied, so that
    :meth:`~pegwatch.rules.clock.engine.Clock.replay` skips a refused call.
    """

    kind: ClockEventKind
    at_ns: int
    player: int | None = None
    remaining_ns: int | None = None
    moves: int | None = None
    stage: int | None = None
    """For ``adjust``: the stage (period) the arbiter sets, counted from 0."""

    def __init__(
        self,
        kind: ClockEventKind | str,
        at_ns: int,
        player: int | None = None,
        remaining_ns: int | None = None,
        moves: int | None = None,
        stage: int | None = None,
    ) -> None:
        # Written by hand rather than generated so that the type checker
        # lets callers pass the kind's string while the field is the enum.
        object.__setattr__(self, "kind", ClockEventKind.of(kind))
        object.__setattr__(self, "at_ns", at_ns)
        object.__setattr__(self, "player", player)
        object.__setattr__(self, "remaining_ns", remaining_ns)
        object.__setattr__(self, "moves", moves)
        object.__setattr__(self, "stage", stage)

    def to_json(self) -> dict[str, str | int]:
        """A JSON-ready dict: ``kind`` as its string, ``at_ns``, and the fields that are set."""
        out: dict[str, str | int] = {"kind": self.kind.value, "at_ns": self.at_ns}
        for key in _OPTIONAL:
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out

    @classmethod
    def from_json(cls, data: object) -> ClockEvent:
        """The event written by :meth:`to_json` (a missing or null field is ``None``).

        Raises :class:`ClockStateError` with a one-line message for
        anything else: not an object, an unknown key or kind, a missing
        ``kind`` or ``at_ns``, a value that is not a whole number.
        """
        if not isinstance(data, Mapping):
            raise ClockStateError(
                f"a clock event must be a JSON object, got {type(data).__name__}"
            )
        unknown = sorted(str(k) for k in data if k not in _KEYS)
        if unknown:
            raise ClockStateError(
                f"clock event: unknown key {unknown[0]!r}; allowed: {', '.join(_KEYS)}"
            )
        for key in ("kind", "at_ns"):
            if data.get(key) is None:
                raise ClockStateError(f"clock event: {key!r} is missing")
        at_ns = _whole(data, "at_ns")
        assert at_ns is not None
        return cls(
            ClockEventKind.of(data["kind"]),
            at_ns,
            _whole(data, "player"),
            _whole(data, "remaining_ns"),
            _whole(data, "moves"),
            _whole(data, "stage"),
        )


__all__ = ["ClockEvent", "ClockEventKind"]
