"""The game clock: pure, exact, integer nanoseconds, no hardware.

``from pegwatch.rules.clock import Clock`` is the entry point; see ``docs/clock.md``.
"""

from __future__ import annotations

from pegwatch.rules.clock.controls import (
    BronsteinCount,
    ClockReadings,
    ControlMode,
    DelayKind,
    DelayWithMoves,
    Overtime,
    OvertimeKind,
    Stage,
    StageAddAtFlag,
    StageAdvance,
    TimeControl,
)
from pegwatch.rules.clock.durations import (
    NS_PER_MIN,
    NS_PER_MS,
    NS_PER_S,
    ceil_div,
    format_duration,
    parse_duration,
)
from pegwatch.rules.clock.engine import (
    DEFAULT_DEBOUNCE_NS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    Clock,
    ClockEvent,
    ClockEventKind,
    ClockView,
    PressOutcome,
    StageExpiry,
)
from pegwatch.rules.clock.errors import (
    ClockError,
    ClockStateError,
    DurationError,
    InvalidPlayerError,
    InvalidTimeControlError,
    PresetFileError,
    UnknownClockPresetError,
)
from pegwatch.rules.clock.presets import (
    ClockPreset,
    builtin_presets,
    get_preset,
    load_presets,
    parse_presets,
    preset_names,
)

__all__ = [
    "DEFAULT_DEBOUNCE_NS",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "NS_PER_MIN",
    "NS_PER_MS",
    "NS_PER_S",
    "BronsteinCount",
    "Clock",
    "ClockError",
    "ClockEvent",
    "ClockEventKind",
    "ClockPreset",
    "ClockReadings",
    "ClockStateError",
    "ClockView",
    "ControlMode",
    "DelayKind",
    "DelayWithMoves",
    "DurationError",
    "InvalidPlayerError",
    "InvalidTimeControlError",
    "Overtime",
    "OvertimeKind",
    "PresetFileError",
    "PressOutcome",
    "Stage",
    "StageAddAtFlag",
    "StageAdvance",
    "StageExpiry",
    "TimeControl",
    "UnknownClockPresetError",
    "builtin_presets",
    "ceil_div",
    "format_duration",
    "get_preset",
    "load_presets",
    "parse_duration",
    "parse_presets",
    "preset_names",
]
