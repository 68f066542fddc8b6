"""Errors raised by the device layer."""

from __future__ import annotations

from pegwatch.rules.errors import BadInput


class ConfigError(BadInput):
    """A table configuration value is wrong.

    The message names the file, the key and what is allowed, e.g.
    ``firmware_config/pegwatch.toml: pins.player_buttons[1]: GPIO 17 is
    already used by pins.arbiter_button; each pin may be used once``.
    """
