"""The pin map: parsing, defaults and one-line errors."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from pegwatch.device.errors import ConfigError
from pegwatch.device.hardware.pins import I2C_PINS, PinMap
from pegwatch.rules.errors import PegwatchError

SRC = "firmware_config/pegwatch.toml"


def test_default_wiring_is_valid_and_uses_each_gpio_once():
    pins = PinMap()
    used = pins.used()
    assert len(used) == 2 + 1 + 2 + 1
    assert pins.players == 2
    assert not set(used) & set(I2C_PINS)


def test_shipped_toml_pins_section_parses():
    path = Path(__file__).resolve().parents[2] / "firmware_config" / "pegwatch.toml"
    data = tomllib.loads(path.read_text())
    pins = PinMap.from_mapping(data.get("pins", {}), source=str(path), reserved=I2C_PINS)
    assert pins.players >= 2


def test_four_players():
    pins = PinMap.from_mapping(
        {"player_buttons": [17, 27, 22, 23], "player_leds": [5, 6, 13, 19], "arbiter_button": 26},
        source=SRC,
    )
    assert pins.players == 4
    assert pins.player_leds[3] == 19


def test_no_buzzer():
    assert PinMap.from_mapping({"buzzer": "none"}, source=SRC).buzzer is None


def test_conflict_names_file_key_and_rule():
    with pytest.raises(ConfigError) as info:
        PinMap.from_mapping({"player_leds": [5, 17]}, source=SRC)
    assert str(info.value) == (
        "firmware_config/pegwatch.toml: pins.player_leds[1]: GPIO 17 is already used by "
        "pins.player_buttons[0]; each GPIO may be used once"
    )
    assert isinstance(info.value, PegwatchError)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"player_buttons": [17]}, "pins.player_buttons: 1 buttons given; a table has 2 to 4"),
        ({"player_buttons": [17, 27, 22, 23, 24]}, "pins.player_buttons: 5 buttons given"),
        ({"player_buttons": [12, 16, 20]}, "pins.player_leds: 2 LEDs given for 3 player buttons"),
        ({"arbiter_button": 28}, "pins.arbiter_button: GPIO 28 is not usable; use a BCM number 2..27"),
        ({"buzzer": 1}, "pins.buzzer: GPIO 1 is not usable"),
        ({"buzzer": "GPIO18"}, "pins.buzzer: 'GPIO18' is not a GPIO number"),
        ({"arbiter_button": True}, "pins.arbiter_button: True is not a GPIO number"),
        ({"player_buttons": 17}, "pins.player_buttons: 17 is not a list"),
        ({"player_buttons": [17, "x"]}, "pins.player_buttons[1]: 'x' is not a GPIO number"),
        ({"buzzer": 22}, "pins.buzzer: GPIO 22 is already used by pins.arbiter_button"),
        ({"player_leds": [5, 5]}, "pins.player_leds[1]: GPIO 5 is already used by pins.player_leds[0]"),
        ({"leds": [5, 6]}, "pins.leds: unknown key; allowed keys are player_buttons"),
        ({"buttons_pull_up": "yes"}, "pins.buttons_pull_up: 'yes' is not true or false"),
    ],
)
def test_bad_maps_get_one_clear_line(data, expected):
    with pytest.raises(ConfigError) as info:
        PinMap.from_mapping(data, source=SRC)
    message = str(info.value)
    assert message.startswith(f"{SRC}: ")
    assert expected in message
    assert "\n" not in message


def test_i2c_pins_refused_when_display_is_on_i2c():
    with pytest.raises(ConfigError, match=r"pins.arbiter_button: GPIO 3 is needed by I2C SCL"):
        PinMap.from_mapping({"arbiter_button": 3}, source=SRC, reserved=I2C_PINS)
    # Without an I2C display the pin is legal (with a logged warning).
    assert PinMap.from_mapping({"arbiter_button": 3}, source=SRC).arbiter_button == 3


def test_direct_construction_is_validated_too():
    with pytest.raises(ConfigError, match="each GPIO may be used once"):
        PinMap(player_buttons=(17, 17), player_leds=(5, 6))
