"""What the small display shows, as plain frozen data, and how times read.

:class:`DisplayModel` is everything one frame needs; :func:`format_time` is
the one place that turns nanoseconds into digits. Rendering
(:mod:`pegwatch.device.display.render`) and the character-LCD layout
(:mod:`pegwatch.device.display.charlcd`) both read from here, so every device shows
the same thing.

Rounding: like DGT clocks, times are shown rounded **down** (a player never
sees time they do not have). Under 20 s tenths appear (``19.9``). ``0.0``
means the flag and nothing else: the last, partial tenth before the flag
shows as ``0.1``. A count-up face (:attr:`PlayerFace.count_up`, the clock's
``ClockView.count_up``) shows the time used, also rounded down: it starts
at ``0.0`` (no flag in this mode) and never shows a step not yet reached.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, replace

from pegwatch.rules.clock.engine import ClockView
from pegwatch.rules.record import Role

NS_PER_S = 1_000_000_000
NS_PER_TENTH = NS_PER_S // 10
#: Below this, tenths of a second are shown.
TENTHS_BELOW_NS = 20 * NS_PER_S


def time_unit_ns(remaining_ns: int) -> int:
    """The resolution at which *remaining_ns* is shown: a tenth or a second."""
    return NS_PER_TENTH if remaining_ns < TENTHS_BELOW_NS else NS_PER_S


def format_time(remaining_ns: int, *, count_up: bool = False) -> str:
    """The clock face of *remaining_ns*: ``H:MM:SS``, ``M:SS`` or ``S.t``.

    With ``count_up`` *remaining_ns* is the time used: ``0.0`` is the start,
    not a flag, and the first tenth reads ``0.0`` (a count shown ahead
    would be time the player has not used).

    >>> format_time(480 * 10**9), format_time(19_999_999_999), format_time(0)
    ('8:00', '19.9', '0.0')
    >>> format_time(50_000_000), format_time(50_000_000, count_up=True)
    ('0.1', '0.0')
    """
    if remaining_ns <= 0:
        return "0.0"
    if remaining_ns < TENTHS_BELOW_NS:
        tenths = remaining_ns // NS_PER_TENTH
        if not count_up:
            tenths = max(1, tenths)  # 0.0 is kept for the flag
        return f"{tenths // 10}.{tenths % 10}"
    seconds = remaining_ns // NS_PER_S
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def shown_ns(remaining_ns: int, *, count_up: bool = False) -> int:
    """*remaining_ns* floored to what the face shows (same face, same value)."""
    if remaining_ns <= 0:
        return 0
    unit = time_unit_ns(remaining_ns)
    floored = remaining_ns // unit * unit
    return floored if count_up else max(NS_PER_TENTH, floored)


def until_face_changes_ns(remaining_ns: int, *, count_up: bool = False) -> int | None:
    """How long a running time keeps its face; ``None`` once flagged.

    ``format_time(r - until_face_changes_ns(r))`` differs from
    ``format_time(r)`` and anything sooner does not. With ``count_up`` the
    time grows: ``format_time(r + until, count_up=True)`` differs, and
    anything sooner does not.
    """
    if count_up:
        used = max(0, remaining_ns)
        unit = time_unit_ns(used)
        return unit - used % unit
    if remaining_ns <= 0:
        return None
    if remaining_ns < 2 * NS_PER_TENTH:  # shown as 0.1 until the flag
        return remaining_ns
    unit = time_unit_ns(remaining_ns)
    return remaining_ns - remaining_ns // unit * unit + 1


def next_visible_change_ns(
    view: ClockView,
    now_ns: int,
    clock_next_change_ns: Callable[[int, int], int | None],
) -> int | None:
    """When the running player's face next changes if nothing else happens.

    ``clock_next_change_ns(at_ns, resolution_ns)`` is the clock's own answer
    (:meth:`pegwatch.rules.clock.Clock.next_change_ns`), which marks where a
    rounded-up face would change; faces here round down, so they change one
    nanosecond later. The face's own arithmetic covers the instant it
    switches to tenths. ``None`` when no time runs: the display loop then
    sleeps until it is woken.
    """
    if view.on_move is None or not view.running:
        return None
    remaining = view.remaining_ns[view.on_move]
    count_up = view.on_move < len(view.count_up) and view.count_up[view.on_move]
    own = until_face_changes_ns(remaining, count_up=count_up)
    candidates = [now_ns + own] if own is not None else []
    clock_due = clock_next_change_ns(now_ns, time_unit_ns(remaining))
    if clock_due is not None:
        candidates.append(clock_due + 1)
    return min(candidates) if candidates else None


def role_label(role: Role) -> str:
    """The role as the display writes it beside a name."""
    return "BREAKER" if role is Role.CODEBREAKER else "MAKER"


class Severity(enum.Enum):
    """How loudly a message is shown: plain, framed, or inverted."""

    INFO = "info"
    WARNING = "warning"
    ALARM = "alarm"


@dataclass(frozen=True)
class Message:
    """A line for the bottom bar, e.g. ``Message("MIS-MARK row 3", Severity.ALARM)``."""

    text: str
    severity: Severity = Severity.INFO


@dataclass(frozen=True)
class PlayerFace:
    """One player's panel."""

    name: str
    remaining_ns: int
    role: Role | None = None
    flagged: bool = False
    #: The face counts the time used up (a count-up clock): rounded down too.
    count_up: bool = False

    @property
    def face(self) -> str:
        """The digits shown: :func:`format_time` of this face."""
        return format_time(self.remaining_ns, count_up=self.count_up)


@dataclass(frozen=True)
class EntryCell:
    """One field of a row the arbiter enters by hand: a hole or a mark count."""

    text: str
    current: bool = False
    editable: bool = True


@dataclass(frozen=True)
class EntryView:
    """The arbiter's hand entry of a row (or the secret), shown instead of the times.

    *title* is e.g. ``"ROW 5"``; *holes* and *marks* (none for the secret)
    are the fields, the current one highlighted; *hint* says what the
    buttons do.
    """

    title: str
    holes: tuple[EntryCell, ...]
    marks: tuple[EntryCell, ...] = ()
    hint: str = "P1 CHANGE  P2 NEXT"


@dataclass(frozen=True)
class DisplayModel:
    """Everything one frame shows; build it from the clock's view.

    *on_move* is the index into *players* whose time runs (``None`` before
    the start or after the end). *row* is the board row being played.
    """

    players: tuple[PlayerFace, ...]
    on_move: int | None = None
    row: int | None = None
    paused: bool = False
    message: Message | None = None
    #: A short line that replaces the status line (arbiter menu, result).
    banner: str | None = None
    #: The arbiter entering a row by hand: shown instead of the times.
    entry: EntryView | None = None
    #: The table's name (``[table] name``), in the header between the row and PAUSED.
    table: str | None = None

    @property
    def is_running(self) -> bool:
        """True while a time is counting down (not paused, not flagged)."""
        if self.on_move is None or self.paused:
            return False
        face = self.players[self.on_move]
        return not face.flagged and (face.count_up or face.remaining_ns > 0)

    def quantized(self) -> DisplayModel:
        """This model with each time floored to its face: equal faces, equal models.

        The display loop compares quantized models to skip frames that
        would look the same.
        """
        return replace(
            self,
            players=tuple(replace(p, remaining_ns=shown_ns(p.remaining_ns, count_up=p.count_up))
                          for p in self.players),
        )

    def until_change_ns(self) -> int | None:
        """How long this picture stays right if nothing but time happens."""
        if not self.is_running or self.on_move is None:
            return None
        face = self.players[self.on_move]
        return until_face_changes_ns(face.remaining_ns, count_up=face.count_up)
