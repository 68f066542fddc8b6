"""The table's pin map: which BCM GPIO drives which button, LED and buzzer.

The map comes from the ``[pins]`` section of the table configuration
(``firmware_config/pegwatch.toml``). :meth:`PinMap.from_mapping` validates
it and reports the first problem as one line naming the file, the key and
what is allowed, e.g.::

    firmware_config/pegwatch.toml: pins.player_leds[1]: GPIO 17 is already
    used by pins.player_buttons[0]; each GPIO may be used once

Numbers are BCM GPIO numbers (what gpiozero calls ``GPIO17``), never the
physical header position. GPIO 0 and 1 are the HAT ID EEPROM bus, so the
usable range on a 40-pin header is 2..27. GPIO 2 and 3 are I2C SDA/SCL: they
are refused when the display is on I2C (pass the display's pins as
*reserved*).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from pegwatch.device.errors import ConfigError

logger = logging.getLogger(__name__)

#: The lowest and highest BCM GPIO usable on a 40-pin header.
MIN_GPIO = 2
MAX_GPIO = 27
MIN_PLAYERS = 2
MAX_PLAYERS = 4

#: Pins of the I2C bus 1 that an I2C display (SSD1306, SH1106, ...) uses.
I2C_PINS: Mapping[int, str] = {2: "I2C SDA", 3: "I2C SCL"}

_KEYS = (
    "player_buttons",
    "arbiter_button",
    "player_leds",
    "buzzer",
    "buttons_pull_up",
    "leds_active_high",
    "buzzer_active_high",
)


@dataclass(frozen=True)
class PinMap:
    """Where the clock's parts are wired, as BCM GPIO numbers.

    ``player_buttons[i]`` and ``player_leds[i]`` belong to player *i*
    (0-based, in seating order). *buzzer* is ``None`` when none is fitted.
    """

    player_buttons: tuple[int, ...] = (17, 27)
    arbiter_button: int = 22
    player_leds: tuple[int, ...] = (5, 6)
    buzzer: int | None = 18
    #: Buttons close to ground and use the internal pull-up (the usual wiring).
    buttons_pull_up: bool = True
    leds_active_high: bool = True
    buzzer_active_high: bool = True

    def __post_init__(self) -> None:
        # Constructed directly (not from a file) the map is still checked,
        # so a bad map can never reach gpiozero.
        _validate(self, source="PinMap", reserved={})

    @property
    def players(self) -> int:
        """How many players the map wires (2..4)."""
        return len(self.player_buttons)

    def used(self) -> dict[int, str]:
        """Every GPIO the map uses, with the key that uses it."""
        return dict(_uses(self))

    @classmethod
    def from_mapping(
        cls,
        data: Mapping[str, object],
        *,
        source: str,
        reserved: Mapping[int, str] | None = None,
    ) -> PinMap:
        """Build a map from the ``[pins]`` table of a configuration file.

        *source* names the file in error messages. *reserved* maps GPIOs
        that something else needs (e.g. ``{2: "display (I2C SDA)"}``) to a
        description; using one of them is an error. Missing keys take the
        default wiring. Raises :class:`~pegwatch.device.errors.ConfigError`.
        """
        unknown = sorted(set(data) - set(_KEYS))
        if unknown:
            raise ConfigError(
                f"{source}: pins.{unknown[0]}: unknown key; allowed keys are {', '.join(_KEYS)}"
            )
        defaults = cls()
        buttons = (
            _gpio_list(data["player_buttons"], source, "player_buttons")
            if "player_buttons" in data
            else defaults.player_buttons
        )
        leds = (
            _gpio_list(data["player_leds"], source, "player_leds")
            if "player_leds" in data
            else defaults.player_leds
        )
        arbiter = (
            _gpio(data["arbiter_button"], source, "arbiter_button")
            if "arbiter_button" in data
            else defaults.arbiter_button
        )
        buzzer: int | None = defaults.buzzer
        if "buzzer" in data:
            raw = data["buzzer"]
            # TOML has no null: "none" (or false) says no buzzer is fitted.
            buzzer = None if raw in ("none", False) else _gpio(raw, source, "buzzer")
        flags = {
            key: _flag(data[key], source, key) if key in data else getattr(defaults, key)
            for key in ("buttons_pull_up", "leds_active_high", "buzzer_active_high")
        }
        # Checked here first so that errors name the file, not the class.
        _check(buttons, arbiter, leds, buzzer, source=source, reserved=reserved or {})
        return cls(buttons, arbiter, leds, buzzer, **flags)


def _uses(pin_map: PinMap) -> list[tuple[int, str]]:
    return _uses_of(
        pin_map.player_buttons, pin_map.arbiter_button, pin_map.player_leds, pin_map.buzzer
    )


def _uses_of(
    buttons: tuple[int, ...], arbiter: int, leds: tuple[int, ...], buzzer: int | None
) -> list[tuple[int, str]]:
    uses = [(gpio, f"pins.player_buttons[{i}]") for i, gpio in enumerate(buttons)]
    uses.append((arbiter, "pins.arbiter_button"))
    uses += [(gpio, f"pins.player_leds[{i}]") for i, gpio in enumerate(leds)]
    if buzzer is not None:
        uses.append((buzzer, "pins.buzzer"))
    return uses


def _validate(pin_map: PinMap, *, source: str, reserved: Mapping[int, str]) -> None:
    _check(
        pin_map.player_buttons,
        pin_map.arbiter_button,
        pin_map.player_leds,
        pin_map.buzzer,
        source=source,
        reserved=reserved,
    )


def _check(
    buttons: tuple[int, ...],
    arbiter: int,
    leds: tuple[int, ...],
    buzzer: int | None,
    *,
    source: str,
    reserved: Mapping[int, str],
) -> None:
    count = len(buttons)
    if not MIN_PLAYERS <= count <= MAX_PLAYERS:
        raise ConfigError(
            f"{source}: pins.player_buttons: {count} buttons given; "
            f"a table has {MIN_PLAYERS} to {MAX_PLAYERS} players, one button each"
        )
    if len(leds) != count:
        raise ConfigError(
            f"{source}: pins.player_leds: {len(leds)} LEDs given for "
            f"{count} player buttons; give one LED per player"
        )
    seen: dict[int, str] = {}
    for gpio, key in _uses_of(buttons, arbiter, leds, buzzer):
        if isinstance(gpio, bool) or not isinstance(gpio, int):
            raise ConfigError(f"{source}: {key}: {gpio!r} is not a GPIO number; "
                              f"use a BCM number {MIN_GPIO}..{MAX_GPIO}")
        if not MIN_GPIO <= gpio <= MAX_GPIO:
            raise ConfigError(
                f"{source}: {key}: GPIO {gpio} is not usable; "
                f"use a BCM number {MIN_GPIO}..{MAX_GPIO} (40-pin header)"
            )
        if gpio in seen:
            raise ConfigError(
                f"{source}: {key}: GPIO {gpio} is already used by {seen[gpio]}; "
                "each GPIO may be used once"
            )
        if gpio in reserved:
            raise ConfigError(
                f"{source}: {key}: GPIO {gpio} is needed by {reserved[gpio]}; choose another GPIO"
            )
        seen[gpio] = key
    for gpio, what in I2C_PINS.items():
        if gpio in seen and source != "PinMap":
            # Legal when no I2C device is fitted, but the board's fixed
            # 1.8 kOhm pull-ups make it an unusual choice worth a word.
            logger.warning("%s: %s uses GPIO %d (%s)", source, seen[gpio], gpio, what)


def _gpio(value: object, source: str, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(
            f"{source}: pins.{key}: {value!r} is not a GPIO number; "
            f"use a BCM number {MIN_GPIO}..{MAX_GPIO}"
        )
    return value


def _gpio_list(value: object, source: str, key: str) -> tuple[int, ...]:
    if not isinstance(value, list | tuple):
        raise ConfigError(
            f"{source}: pins.{key}: {value!r} is not a list; "
            f"give a list of BCM numbers, e.g. [17, 27]"
        )
    return tuple(_gpio(item, source, f"{key}[{i}]") for i, item in enumerate(value))


def _flag(value: object, source: str, key: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{source}: pins.{key}: {value!r} is not true or false")
    return value
