"""Clock presets: named time controls kept in TOML data, not in code.

The built-in presets live in ``rules/data/clocks.toml``; an event can load
its own file with :func:`load_presets`. The file format is documented in
``docs/clock.md``; in short::

    [presets.blitz-3+2]
    description = "Blitz: 3 minutes plus 2 seconds per move"
    control = { time = "3:00", increment = "2s" }

    [presets.mso-mastermind]
    roles = ["codemaker", "codebreaker"]
    [presets.mso-mastermind.controls]
    codemaker = { time = "4:00" }
    codebreaker = { time = "8:00" }
"""

from __future__ import annotations

import functools
import importlib.resources
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
from pegwatch.rules.clock.durations import parse_duration
from pegwatch.rules.clock.errors import (
    ClockError,
    InvalidPlayerError,
    PresetFileError,
    UnknownClockPresetError,
)
from pegwatch.rules.clock.state import MAX_PLAYERS, MIN_PLAYERS
from pegwatch.rules.textfile import MIB, parse_toml, read_text

logger = logging.getLogger(__name__)

#: A presets file larger than this is refused before it is parsed.
MAX_PRESETS_BYTES = 1 * MIB

DEFAULT_ROLE = "player"


@dataclass(frozen=True)
class ClockPreset:
    """A named clock set-up: one time control per role and the flag rules.

    ``roles`` and ``controls`` run in parallel. A preset with a single role
    gives every player the same control; otherwise ``roles`` is also the
    default seat order (MSO Mastermind: the first-named player is codemaker
    in game 1). ``players`` lists the player counts the preset is for.
    """

    name: str
    description: str
    roles: tuple[str, ...]
    controls: tuple[TimeControl, ...]
    players: tuple[int, ...] = (2,)
    skip_flagged: bool = False
    freeze_at_flag: bool = True
    source: str = ""
    readings: ClockReadings | None = None
    """Where the sources differ, which reading the preset's clock follows (None: the defaults)."""

    def __post_init__(self) -> None:
        if not self.roles or len(self.roles) != len(self.controls):
            raise PresetFileError(f"preset {self.name!r}: needs one control per role")
        if len(set(self.roles)) != len(self.roles):
            raise PresetFileError(f"preset {self.name!r}: role names repeat")
        if not self.players or any(not MIN_PLAYERS <= n <= MAX_PLAYERS for n in self.players):
            raise PresetFileError(
                f"preset {self.name!r}: players must be counts from {MIN_PLAYERS} to {MAX_PLAYERS}"
            )

    def control(self, role: str) -> TimeControl:
        """The time control of *role*."""
        try:
            return self.controls[self.roles.index(role)]
        except ValueError:
            raise InvalidPlayerError(
                f"preset {self.name!r} has no role {role!r}; roles: {', '.join(self.roles)}"
            ) from None

    def controls_for(
        self, players: int, roles: Sequence[str] | None = None
    ) -> tuple[TimeControl, ...]:
        """One control per player: player ``i`` gets the control of ``roles[i]``."""
        if players not in self.players:
            allowed = " or ".join(str(n) for n in self.players)
            raise InvalidPlayerError(
                f"preset {self.name!r} is for {allowed} players, not {players}"
            )
        if roles is None:
            if len(self.roles) == 1:
                return (self.controls[0],) * players
            if len(self.roles) == players:
                return self.controls
            raise InvalidPlayerError(
                f"preset {self.name!r} needs roles for {players} players from: {', '.join(self.roles)}"
            )
        roles = tuple(roles)
        if len(roles) != players:
            raise InvalidPlayerError(
                f"preset {self.name!r}: {len(roles)} roles given for {players} players"
            )
        return tuple(self.control(r) for r in roles)


# ----------------------------------------------------------------------
# Reading TOML

_PRESET_KEYS = {
    "description", "source", "players", "roles", "control", "controls",
    "skip_flagged", "freeze_at_flag", "readings",
}  # fmt: skip
_READINGS_KEYS = {"bronstein", "stage_at_flag", "delay_with_moves"}
_CONTROL_KEYS = {
    "mode",
    "pgn",
    "stages",
    "advance",
    "overtime",
    "time",
    "moves",
    "increment",
    "delay",
    "delay_kind",
}
_STAGE_KEYS = {"time", "moves", "increment", "delay", "delay_kind"}
_OVERTIME_KEYS = {"kind", "period", "periods", "moves"}


class _Reader:
    """Turns parsed TOML into presets; every error names the file and key."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, key: str, problem: str) -> PresetFileError:
        return PresetFileError(f"{self.source}: {key}: {problem}")

    def table(self, value: Any, key: str) -> Mapping[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(key, f"must be a table, got {type(value).__name__}")
        return value

    def only(self, table: Mapping[str, Any], allowed: set[str], key: str) -> None:
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise self.fail(
                f"{key}.{unknown[0]}", f"unknown key; allowed: {', '.join(sorted(allowed))}"
            )

    def duration(self, value: Any, key: str) -> int:
        try:
            return parse_duration(value)
        except ClockError as exc:
            raise self.fail(key, str(exc)) from None

    def whole(self, value: Any, key: str, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(key, f"must be a whole number >= {minimum}, got {value!r}")
        return value

    def boolean(self, value: Any, key: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false, got {value!r}")
        return value

    def text(self, value: Any, key: str) -> str:
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {value!r}")
        return value

    def enum_value(self, enum: Any, value: Any, key: str) -> Any:
        try:
            return enum(value)
        except ValueError:
            allowed = ", ".join(repr(e.value) for e in enum)
            raise self.fail(key, f"{value!r} is not one of {allowed}") from None

    def stage(self, t: Mapping[str, Any], key: str) -> Stage:
        if "time" not in t:
            raise self.fail(f"{key}.time", "missing (the stage's time, e.g. '90:00')")
        try:
            return Stage(
                time_ns=self.duration(t["time"], f"{key}.time"),
                moves=None if "moves" not in t else self.whole(t["moves"], f"{key}.moves", 1),
                increment_ns=self.duration(t.get("increment", 0), f"{key}.increment"),
                delay_ns=self.duration(t.get("delay", 0), f"{key}.delay"),
                delay_kind=self.enum_value(
                    DelayKind, t.get("delay_kind", "us"), f"{key}.delay_kind"
                ),
            )
        except PresetFileError:
            raise
        except ClockError as exc:
            raise self.fail(key, str(exc)) from None

    def control(self, value: Any, key: str) -> TimeControl:
        t = self.table(value, key)
        self.only(t, _CONTROL_KEYS, key)
        if "pgn" in t:
            others = sorted((_STAGE_KEYS | {"stages"}) & set(t))
            if others:
                raise self.fail(f"{key}.{others[0]}", "give either 'pgn' or stages, not both")
            try:
                stages = list(TimeControl.from_pgn(self.text(t["pgn"], f"{key}.pgn")).stages)
            except PresetFileError:
                raise
            except ClockError as exc:
                raise self.fail(f"{key}.pgn", str(exc)) from None
        elif "stages" in t:
            shorthand = sorted(_STAGE_KEYS & set(t))
            if shorthand:
                raise self.fail(
                    f"{key}.{shorthand[0]}", "give either 'stages' or one stage's keys, not both"
                )
            raw = t["stages"]
            if not isinstance(raw, list) or not raw:
                raise self.fail(f"{key}.stages", "must be a non-empty list of tables")
            stages = []
            for i, s in enumerate(raw):
                sk = f"{key}.stages[{i}]"
                st = self.table(s, sk)
                self.only(st, _STAGE_KEYS, sk)
                stages.append(self.stage(st, sk))
        else:
            stages = [self.stage({k: v for k, v in t.items() if k in _STAGE_KEYS}, key)]
        advance = self.enum_value(StageAdvance, t.get("advance", "moves"), f"{key}.advance")
        overtime = None
        if "overtime" in t:
            ok = f"{key}.overtime"
            o = self.table(t["overtime"], ok)
            self.only(o, _OVERTIME_KEYS, ok)
            if "kind" not in o or "period" not in o:
                raise self.fail(ok, "needs 'kind' ('byo-yomi' or 'canadian') and 'period'")
            kind = self.enum_value(OvertimeKind, o["kind"], f"{ok}.kind")
            try:
                overtime = Overtime(
                    kind,
                    self.duration(o["period"], f"{ok}.period"),
                    periods=self.whole(o.get("periods", 1), f"{ok}.periods", 1),
                    moves=self.whole(o.get("moves", 1), f"{ok}.moves", 1),
                )
            except PresetFileError:
                raise
            except ClockError as exc:
                raise self.fail(ok, str(exc)) from None
        mode = self.enum_value(ControlMode, t.get("mode", "count-down"), f"{key}.mode")
        try:
            return TimeControl(tuple(stages), advance=advance, overtime=overtime, mode=mode)
        except ClockError as exc:
            raise self.fail(key, str(exc)) from None

    def preset(self, name: str, value: Any) -> ClockPreset:
        key = f"presets.{name}"
        t = self.table(value, key)
        self.only(t, _PRESET_KEYS, key)
        if ("control" in t) == ("controls" in t):
            raise self.fail(
                key, "give exactly one of 'control' (same for everyone) or 'controls' (per role)"
            )
        if "control" in t:
            if "roles" in t:
                raise self.fail(f"{key}.roles", "roles go with 'controls', one control per role")
            roles: tuple[str, ...] = (DEFAULT_ROLE,)
            controls: tuple[TimeControl, ...] = (self.control(t["control"], f"{key}.control"),)
        else:
            per_role = self.table(t["controls"], f"{key}.controls")
            if not per_role:
                raise self.fail(f"{key}.controls", "is empty")
            if "roles" in t:
                raw_roles = t["roles"]
                if not isinstance(raw_roles, list) or not all(
                    isinstance(r, str) for r in raw_roles
                ):
                    raise self.fail(f"{key}.roles", "must be a list of role names")
                if sorted(raw_roles) != sorted(per_role) or len(set(raw_roles)) != len(raw_roles):
                    raise self.fail(
                        f"{key}.roles",
                        f"must name each role of 'controls' once: {', '.join(per_role)}",
                    )
                roles = tuple(raw_roles)
            else:
                roles = tuple(per_role)
            controls = tuple(self.control(per_role[r], f"{key}.controls.{r}") for r in roles)
        players_raw = t.get("players", [2])
        if isinstance(players_raw, int) and not isinstance(players_raw, bool):
            players_raw = [players_raw]
        if not isinstance(players_raw, list) or not players_raw:
            raise self.fail(f"{key}.players", "must be a player count or a list of them")
        players = tuple(self.whole(n, f"{key}.players", MIN_PLAYERS) for n in players_raw)
        if any(n > MAX_PLAYERS for n in players):
            raise self.fail(f"{key}.players", f"at most {MAX_PLAYERS} players")
        readings = None
        if "readings" in t:
            rk = f"{key}.readings"
            raw_r = t["readings"]
            if raw_r == "dgt3000":
                readings = ClockReadings.dgt3000()
            else:
                r = self.table(raw_r, rk)
                self.only(r, _READINGS_KEYS, rk)
                readings = ClockReadings(
                    self.enum_value(BronsteinCount, r.get("bronstein", "give-back"), f"{rk}.bronstein"),
                    self.enum_value(
                        StageAddAtFlag, r.get("stage_at_flag", "per-player"), f"{rk}.stage_at_flag"
                    ),
                    self.enum_value(
                        DelayWithMoves, r.get("delay_with_moves", "allow"), f"{rk}.delay_with_moves"
                    ),
                )
            for i, c in enumerate(controls):
                try:
                    readings.check(c, f"role {roles[i]!r}")
                except ClockError as exc:
                    raise self.fail(rk, str(exc)) from None
        return ClockPreset(
            name=name,
            readings=readings,
            description=self.text(t.get("description", ""), f"{key}.description"),
            roles=roles,
            controls=controls,
            players=players,
            skip_flagged=self.boolean(t.get("skip_flagged", False), f"{key}.skip_flagged"),
            freeze_at_flag=self.boolean(t.get("freeze_at_flag", True), f"{key}.freeze_at_flag"),
            source=self.text(t.get("source", ""), f"{key}.source"),
        )

    def document(self, doc: Mapping[str, Any]) -> dict[str, ClockPreset]:
        self.only(doc, {"presets"}, "(top level)")
        if "presets" not in doc:
            raise self.fail("presets", "missing: presets are [presets.NAME] tables")
        presets = self.table(doc["presets"], "presets")
        return {name: self.preset(name, value) for name, value in presets.items()}


def parse_presets(text: str, *, source: str = "<presets>") -> dict[str, ClockPreset]:
    """Read presets from TOML *text*; errors name *source* and the key."""
    doc = parse_toml(text, source=source, error=PresetFileError)
    return _Reader(source).document(doc)


def load_presets(path: str | os.PathLike[str]) -> dict[str, ClockPreset]:
    """Read an event's own presets file; errors name the file and the key.

    A missing, unreadable, non-UTF-8 or oversized (above
    :data:`MAX_PRESETS_BYTES`) file raises :class:`PresetFileError` naming it.
    """
    text = read_text(path, limit=MAX_PRESETS_BYTES, what="a TOML presets file", error=PresetFileError)
    return parse_presets(text, source=os.fspath(path))


@functools.cache
def builtin_presets() -> Mapping[str, ClockPreset]:
    """The presets shipped in ``rules/data/clocks.toml``."""
    resource = importlib.resources.files("pegwatch.rules").joinpath("data/clocks.toml")
    return parse_presets(resource.read_text(encoding="utf-8"), source="rules/data/clocks.toml")


def preset_names() -> tuple[str, ...]:
    """Names of the built-in presets, in file order."""
    return tuple(builtin_presets())


def get_preset(name: str, extra: Mapping[str, ClockPreset] | None = None) -> ClockPreset:
    """The preset called *name*, looked up in *extra* first, then the built-ins.

    Raises :class:`UnknownClockPresetError` listing the known names.
    """
    if extra is not None and name in extra:
        return extra[name]
    presets = builtin_presets()
    if name in presets:
        return presets[name]
    known = list(presets) + [n for n in (extra or {}) if n not in presets]
    raise UnknownClockPresetError(f"unknown clock preset {name!r}; known: {', '.join(known)}")
