"""Errors raised by the clock, all :class:`~pegwatch.rules.errors.PegwatchError`."""

from __future__ import annotations

from pegwatch.rules.errors import BadInput


class ClockError(BadInput):
    """Base class of every clock error."""


class DurationError(ClockError):
    """A duration could not be read or is out of range."""


class InvalidTimeControlError(ClockError):
    """A time control is inconsistent (e.g. a middle stage without a move count)."""


class UnknownClockPresetError(ClockError):
    """No preset of that name; the message lists the known names."""


class PresetFileError(ClockError):
    """A presets TOML file is malformed; the message names the file and key."""


class InvalidPlayerError(ClockError):
    """A player index outside ``0 .. players - 1``, or a bad player count or role."""


class ClockStateError(ClockError):
    """An arbiter action that makes no sense now (resume when not paused, ...)."""
