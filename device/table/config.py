"""The table configuration: ``firmware_config/pegwatch.toml``.

:func:`load_config` reads the file, checks every value and returns a frozen
:class:`TableConfig`. Any wrong value, unknown key or unknown section raises
:class:`~pegwatch.device.errors.ConfigError` with one line naming the file, the key
and what is allowed, e.g.::

    firmware_config/pegwatch.toml: match.playerz: unknown key; allowed: players, rules, clock

Every key is optional; a missing key takes its desktop default (documented
in ``docs/configuration.md`` and in the file itself). Relative paths in the
file are relative to the file's own directory.

Which file: the ``path`` argument, else ``$PEGWATCH_CONFIG``, else
``/etc/pegwatch/pegwatch.toml`` (where ``install-pi.sh`` puts it), else the
shipped desktop defaults (``firmware_config/pegwatch.toml``, package data).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Final

from pegwatch.device.display.devices import DisplaySettings
from pegwatch.device.errors import ConfigError
from pegwatch.device.hardware.buzzer import BuzzerSettings
from pegwatch.device.hardware.pins import PinMap
from pegwatch.device.preview.settings import PreviewSettings
from pegwatch.device.table.hall.settings import HallSettings
from pegwatch.rules.textfile import MIB, parse_toml, read_text

logger = logging.getLogger(__name__)

__all__ = [
    "CONFIG_ENV", "DEFAULT_CONFIG", "MAX_CONFIG_BYTES", "PI_MODEL_PATH", "SYSTEM_CONFIG",
    "TableConfig", "VisionOptions", "config_from_mapping", "default_journal_path",
    "find_config", "is_raspberry_pi", "load_config",
]

#: The environment variable that names the configuration file.
CONFIG_ENV: Final = "PEGWATCH_CONFIG"
#: The repository's configuration (the desktop defaults).
DEFAULT_CONFIG: Final = Path(str(resources.files("pegwatch.firmware_config") / "pegwatch.toml"))
#: Where ``firmware_config/install-pi.sh`` installs the table's configuration.
SYSTEM_CONFIG: Final = Path("/etc/pegwatch/pegwatch.toml")
#: The device-tree model string: "Raspberry Pi 5 Model B Rev 1.0" on a Pi.
PI_MODEL_PATH: Final = Path("/proc/device-tree/model")

#: A configuration file larger than this is refused before it is parsed.
MAX_CONFIG_BYTES: Final = 1 * MIB

HARDWARE_MODES: Final = ("auto", "pi", "simulated")
CAMERA_KINDS: Final = ("auto", "render", "picamera2", "webcam", "video", "images")

# Sections this module reads, and those it hands to the device modules.
_OWN_SECTIONS: Final = ("table", "match", "camera", "vision", "journal", "hardware")
_DEVICE_SECTIONS: Final = ("pins", "buzzer", "display", "preview", "hall")
_SECTIONS: Final = _OWN_SECTIONS + _DEVICE_SECTIONS

_KEYS: Final[Mapping[str, tuple[str, ...]]] = {
    "table": ("name", "board", "calibration"),
    "match": ("players", "rules", "clock"),
    "camera": ("source", "resolution", "fps", "focus", "focus_cm"),
    "vision": ("frames_to_accept", "motion_threshold"),
    "journal": ("path", "evidence", "evidence_jpeg_quality", "max_mb"),
    "hardware": ("mode",),
}


def is_raspberry_pi(model_path: Path = PI_MODEL_PATH) -> bool:
    """Whether this machine is a Raspberry Pi (its device-tree model says so)."""
    try:
        return "Raspberry Pi" in model_path.read_bytes().decode("ascii", "replace")
    except OSError:
        return False


def default_journal_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the journal goes when ``journal.path = "auto"``.

    Under systemd, ``$STATE_DIRECTORY/journal.sqlite`` (``/var/lib/pegwatch``);
    otherwise ``$XDG_STATE_HOME/pegwatch/journal.sqlite``, by default
    ``~/.local/state/pegwatch/journal.sqlite``.
    """
    env = os.environ if environ is None else environ
    state_dir = env.get("STATE_DIRECTORY", "").split(":")[0]
    if state_dir:
        return Path(state_dir) / "journal.sqlite"
    xdg = env.get("XDG_STATE_HOME", "")
    base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "state"
    return base / "pegwatch" / "journal.sqlite"


@dataclass(frozen=True)
class VisionOptions:
    """How the camera reading is turned into accepted rows (``[vision]``, ``[camera]``)."""

    #: Consecutive agreeing, still frames before a row's reading is accepted.
    frames_to_accept: int = 3
    #: Mean change of a row's appearance (sRGB levels) that counts as motion.
    motion_threshold: float = 10.0
    #: Frames per second to capture and read.
    fps: float = 10.0
    #: Capture size (width, height) in pixels.
    resolution: tuple[int, int] = (1640, 1232)
    #: JPEG quality of the evidence frames kept in the journal.
    jpeg_quality: int = 85
    #: The Pi camera's focus: "distance" (the lens at focus_cm) or "once" (one autofocus, locked).
    focus: str = "distance"
    #: From the lens to the board, in centimetres (LensPosition = 100 / focus_cm dioptres).
    focus_cm: float = 36.0


@dataclass(frozen=True)
class TableConfig:
    """The whole table configuration, every value checked.

    ``camera`` is a source spec: ``render`` (the built-in renderer),
    ``picamera2``, ``webcam[:N]``, ``video:PATH`` or ``images:DIR``;
    ``auto`` in the file becomes ``picamera2`` on a Pi and ``render``
    elsewhere. ``hardware`` is as written (``auto``, ``pi`` or
    ``simulated``); :attr:`simulated` says what ``auto`` resolved to.
    """

    players: tuple[str, str] = ("Player A", "Player B")
    rules: str = "mso"
    clock: str = "mso-mastermind"
    board: str = "invicta-12x4"
    calibration: Path | None = None
    camera: str = "render"
    pins: PinMap = field(default_factory=PinMap)
    buzzer: BuzzerSettings = field(default_factory=BuzzerSettings)
    display: DisplaySettings = field(default_factory=DisplaySettings)
    preview: PreviewSettings = field(default_factory=PreviewSettings)
    hall: HallSettings | None = None  # [hall]: the tournament hall (None: the table works alone)
    journal: Path = field(default_factory=default_journal_path)
    evidence: bool = True
    hardware: str = "auto"
    vision: VisionOptions = field(default_factory=VisionOptions)
    table_name: str = "Table 1"
    #: Cap on the journal's size in bytes (``None``: the disk is the limit).
    journal_max_bytes: int | None = None
    #: The file this came from.
    source: Path = DEFAULT_CONFIG
    #: Whether ``hardware`` resolved to simulated devices (set by the loader).
    simulated: bool = True

    @property
    def on_pi(self) -> bool:
        """Whether real Pi hardware (GPIO, I2C display, picamera2) is used."""
        return not self.simulated

    def snapshot(self) -> dict[str, object]:
        """A JSON-ready dict of every value, for the journal's ``config`` meta."""

        def plain(value: object) -> object:
            if dataclasses.is_dataclass(value) and not isinstance(value, type):
                return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
            if isinstance(value, Mapping):
                return {str(k): plain(v) for k, v in value.items()}
            if isinstance(value, tuple | list):
                return [plain(v) for v in value]
            if isinstance(value, Path):
                return str(value)
            if value is None or isinstance(value, bool | int | float | str):
                return value
            return repr(value)

        result = plain(self)
        assert isinstance(result, dict)
        return result


# -- finding and reading the file ---------------------------------------------


def find_config(path: str | Path | None = None) -> Path:
    """The configuration file to use (see the module's docstring for the order)."""
    if path is not None:
        return Path(path)
    env = os.environ.get(CONFIG_ENV, "")
    if env:
        return Path(env)
    # The installed table's file wins over the shipped desktop defaults.
    for candidate in (SYSTEM_CONFIG, DEFAULT_CONFIG):
        if candidate.is_file():
            return candidate
    raise ConfigError(
        f"no configuration file: looked for {SYSTEM_CONFIG} and {DEFAULT_CONFIG}; "
        f"pass --config or set {CONFIG_ENV}"
    )


def _display_name(path: Path) -> str:
    """The file's name as messages show it: relative to the working directory when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)


def load_config(path: str | Path | None = None, *, model_path: Path = PI_MODEL_PATH) -> TableConfig:
    """Read and check the table configuration; raise :class:`ConfigError` on any problem."""
    file = find_config(path)
    name = _display_name(file)
    text = read_text(
        file, limit=MAX_CONFIG_BYTES, what="a TOML configuration file", error=ConfigError, name=name
    )
    data = parse_toml(text, source=name, error=ConfigError)
    return config_from_mapping(data, source=file, name=name, model_path=model_path)


# -- checking values ------------------------------------------------------------


class _Section:
    """Typed access to one TOML table with messages naming file and key."""

    def __init__(self, name: str, section: str, data: Mapping[str, object]) -> None:
        self.name = name
        self.section = section
        self.data = data

    def fail(self, key: str, why: str) -> ConfigError:
        return ConfigError(f"{self.name}: {self.section}.{key}: {why}")

    def check_keys(self, allowed: tuple[str, ...]) -> None:
        for key in self.data:
            if key not in allowed:
                raise self.fail(key, f"unknown key; allowed: {', '.join(allowed)}")

    def string(self, key: str, default: str, *, pattern: str | None = None, hint: str = "") -> str:
        value = self.data.get(key, default)
        if not isinstance(value, str):
            raise self.fail(key, f"{value!r} is not a string{'; ' + hint if hint else ''}")
        if pattern is not None and not re.fullmatch(pattern, value):
            raise self.fail(key, f"{value!r} is not allowed; {hint}")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self.fail(key, f"{value!r} is not allowed; use true or false")
        return value

    def integer(self, key: str, default: int, low: int, high: int) -> int:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"{value!r} is not a whole number; allowed {low}..{high}")
        if not low <= value <= high:
            raise self.fail(key, f"{value} is out of range; allowed {low}..{high}")
        return value

    def number(self, key: str, default: float, low: float, high: float) -> float:
        value = self.data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"{value!r} is not a number; allowed {low:g}..{high:g}")
        # Compared as written: an int is never turned into a float (it may be
        # too large for one), and NaN and inf are simply out of range.
        if isinstance(value, float) and math.isnan(value):
            raise self.fail(key, f"{value!r} is not a number; allowed {low:g}..{high:g}")
        if not low <= value <= high:
            raise self.fail(key, f"{value:g} is out of range; allowed {low:g}..{high:g}")
        return float(value)

    def choice(self, key: str, default: str, allowed: tuple[str, ...], what: str) -> str:
        value = self.data.get(key, default)
        if not isinstance(value, str) or value not in allowed:
            raise self.fail(key, f"{value!r} is not a known {what}; allowed: {', '.join(allowed)}")
        return value


def _table(name: str, data: Mapping[str, object], section: str) -> Mapping[str, object]:
    value = data.get(section, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{name}: {section}: must be a table ([{section}]), not a value")
    return value


def _registry(name: str) -> tuple[str, ...]:
    """The names a registry of another package knows (imported here, not at start-up)."""
    if name == "rules":
        from pegwatch.rules.variants import variant_names

        return tuple(variant_names())
    if name == "clock":
        from pegwatch.rules.clock import preset_names

        return tuple(preset_names())
    from pegwatch.vision.profile import profile_names

    return tuple(profile_names())


def _resolve(base: Path, raw: str) -> Path:
    path = Path(raw)
    # "~nobody/...": no such user; the path then stays as written.
    with contextlib.suppress(RuntimeError):
        path = path.expanduser()
    return path if path.is_absolute() else base / path


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a file; a name the system refuses (too long, a NUL) is not."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _is_dir(path: Path) -> bool:
    """Whether ``path`` is a folder; a name the system refuses is not."""
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


def _players(s: _Section) -> tuple[str, str]:
    raw = s.data.get("players", ["Player A", "Player B"])
    hint = 'give two names, first the codemaker of game 1, e.g. ["Ann", "Bob"]'
    if not isinstance(raw, list) or len(raw) != 2:
        raise s.fail("players", f"{raw!r} is not allowed; {hint}")
    names = []
    for i, item in enumerate(raw):
        if not isinstance(item, str) or not item.strip():
            raise s.fail(f"players[{i}]", f"{item!r} is not a name; {hint}")
        if len(item) > 40:
            raise s.fail(f"players[{i}]", f"{item[:20]!r}... is too long; at most 40 characters")
        names.append(item.strip())
    if names[0].casefold() == names[1].casefold():
        raise s.fail("players", f"both players are called {names[0]!r}; the names must differ")
    return names[0], names[1]


def _named(s: _Section, key: str, default: str, registry: tuple[str, ...], what: str) -> str:
    value = s.string(key, default)
    if value not in registry:
        raise s.fail(key, f"{value!r} is not a known {what}; allowed: {', '.join(registry)}")
    return value


def _board(s: _Section, base: Path) -> str:
    value = s.string("board", "invicta-12x4")
    if value.endswith(".toml") or "/" in value:
        path = _resolve(base, value)
        if not _is_file(path):
            raise s.fail("board", f"{value!r}: no such profile file ({path})")
        return str(path)
    names = _registry("board")
    if value not in names:
        raise s.fail(
            "board",
            f"{value!r} is not a known board profile; allowed: {', '.join(names)} "
            "or the path of a profile .toml",
        )
    return value


def _camera(s: _Section, base: Path, simulated: bool) -> str:
    value = s.string("source", "auto")
    hint = "allowed: auto, render, picamera2, webcam, webcam:N, video:PATH, images:DIR"
    kind, _, arg = value.partition(":")
    if kind not in CAMERA_KINDS:
        raise s.fail("source", f"{value!r} is not a camera source; {hint}")
    if kind == "auto":
        if arg:
            raise s.fail("source", f"{value!r}: auto takes no argument; {hint}")
        return "render" if simulated else "picamera2"
    if kind in ("render", "picamera2"):
        if arg:
            raise s.fail("source", f"{value!r}: {kind} takes no argument; {hint}")
        return kind
    if kind == "webcam":
        if arg and not arg.isdigit():
            raise s.fail("source", f"{value!r}: the webcam number must be 0, 1, ...; {hint}")
        return f"webcam:{int(arg) if arg else 0}"
    if not arg:
        raise s.fail("source", f"{value!r}: {kind} needs a path; {hint}")
    path = _resolve(base, arg)
    if kind == "video" and not _is_file(path):
        raise s.fail("source", f"{value!r}: no such video file ({path})")
    if kind == "images" and not _is_dir(path):
        raise s.fail("source", f"{value!r}: no such folder of images ({path})")
    return f"{kind}:{path}"


def _resolution(s: _Section) -> tuple[int, int]:
    raw = s.data.get("resolution", [1640, 1232])
    hint = "give [width, height] in pixels, each 160..4608, e.g. [1640, 1232]"
    if (
        not isinstance(raw, list)
        or len(raw) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in raw)
    ):
        raise s.fail("resolution", f"{raw!r} is not allowed; {hint}")
    width, height = raw
    if not (160 <= width <= 4608 and 120 <= height <= 3496):
        raise s.fail("resolution", f"{raw!r} is out of range; {hint}")
    return width, height


def config_from_mapping(
    data: Mapping[str, object],
    *,
    source: Path,
    name: str | None = None,
    model_path: Path = PI_MODEL_PATH,
) -> TableConfig:
    """Check parsed TOML ``data`` as if read from ``source`` (relative paths resolve there)."""
    name = name if name is not None else str(source)
    base = source.parent
    for section in data:
        if section not in _SECTIONS:
            raise ConfigError(f"{name}: [{section}]: unknown section; allowed: {', '.join(_SECTIONS)}")
    sections = {key: _Section(name, key, _table(name, data, key)) for key in _OWN_SECTIONS}
    for key, s in sections.items():
        s.check_keys(_KEYS[key])

    hw = sections["hardware"].choice("mode", "auto", HARDWARE_MODES, "hardware mode")
    simulated = hw == "simulated" or (hw == "auto" and not is_raspberry_pi(model_path))

    table = sections["table"]
    table_name = table.string("name", "Table 1")
    if not table_name.strip() or len(table_name) > 24:
        raise table.fail(
            "name", f'{table_name!r} is not allowed; 1 to 24 characters, e.g. "Table 7"'
        )
    board = _board(table, base)
    calibration_raw = table.string("calibration", "", hint='a file path, or "" for none')
    calibration = _resolve(base, calibration_raw) if calibration_raw else None
    if calibration is not None and not _is_file(calibration):
        raise table.fail(
            "calibration", f'{calibration_raw!r}: no such file ({calibration}); use "" for none'
        )

    match = sections["match"]
    players = _players(match)
    rules = _named(match, "rules", "mso", _registry("rules"), "rules preset")
    clock = _named(match, "clock", "mso-mastermind", _registry("clock"), "clock preset")

    camera_s = sections["camera"]
    camera = _camera(camera_s, base, simulated)
    vision_s = sections["vision"]
    journal_s = sections["journal"]
    vision = VisionOptions(
        frames_to_accept=vision_s.integer("frames_to_accept", 3, 1, 30),
        motion_threshold=vision_s.number("motion_threshold", 10.0, 0.5, 255.0),
        fps=camera_s.number("fps", 10.0, 1.0, 60.0),
        resolution=_resolution(camera_s),
        jpeg_quality=journal_s.integer("evidence_jpeg_quality", 85, 30, 100),
        focus=camera_s.choice("focus", "distance", ("distance", "once"), "focus"),
        focus_cm=camera_s.number("focus_cm", 36.0, 5.0, 300.0),
    )

    journal_raw = journal_s.string("path", "auto", hint='a file path, or "auto"')
    if not journal_raw.strip():
        raise journal_s.fail("path", '"" is not allowed; give a file path, or "auto"')
    journal = default_journal_path() if journal_raw == "auto" else _resolve(base, journal_raw)
    if _is_dir(journal):
        raise journal_s.fail("path", f'{journal_raw!r} is a directory; give a file path, or "auto"')
    max_mb = journal_s.integer("max_mb", 0, 0, 1_000_000)

    display = DisplaySettings.from_mapping(_table(name, data, "display"), source=name)
    # The display's bus pins (I2C, or SPI and its DC/RST) are not for buttons.
    pins = PinMap.from_mapping(
        _table(name, data, "pins"), source=name, reserved=display.reserved_pins()
    )
    buzzer = BuzzerSettings.from_mapping(_table(name, data, "buzzer"), source=name)

    return TableConfig(
        players=players,
        rules=rules,
        clock=clock,
        board=board,
        calibration=calibration,
        camera=camera,
        pins=pins,
        buzzer=buzzer,
        display=display,
        preview=PreviewSettings.from_mapping(_table(name, data, "preview"), source=name),
        hall=HallSettings.from_mapping(_table(name, data, "hall"), source=name, base=base),
        journal=journal,
        evidence=journal_s.boolean("evidence", True),
        hardware=hw,
        vision=vision,
        table_name=table_name.strip(),
        journal_max_bytes=max_mb * 1024 * 1024 if max_mb else None,
        source=source,
        simulated=simulated,
    )
