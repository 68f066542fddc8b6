"""Display settings and the device factory: one drawing, many devices.

:class:`DisplaySettings` is the parsed ``[display]`` section of the table
configuration; :func:`open_display` turns it into a :class:`Display`, which
renders a :class:`~pegwatch.device.display.model.DisplayModel` at the device's size
and hands the image to a luma device (or the text to a character LCD).

Kinds:

* ``ssd1306``, ``sh1106``, ``ssd1309`` -- 128x64 OLEDs (luma.oled) on I2C
  or SPI;
* ``st7735``, ``ili9341`` -- larger SPI LCDs (luma.lcd, optional);
* ``emulator-png`` (luma.emulator ``capture``: one PNG, rewritten on every
  change unless *output* has a ``{0}`` counter), ``emulator-gif``
  (``gifanim``: written on close), ``pygame`` (a window);
* ``dummy`` (luma.core: keeps the last image; tests, benchmarks);
* ``terminal`` (Unicode half blocks on stdout; the desktop default);
* ``hd44780`` -- a 16x2 or 20x4 character LCD through RPLCD.

Drivers are imported when a display is opened, never at import time.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from PIL import Image

from pegwatch.device.display.model import DisplayModel
from pegwatch.device.display.render import render
from pegwatch.device.errors import ConfigError
from pegwatch.device.hardware.pins import I2C_PINS

logger = logging.getLogger(__name__)

OLED_KINDS = ("ssd1306", "sh1106", "ssd1309")
LCD_KINDS = ("st7735", "ili9341")
EMULATOR_KINDS = ("emulator-png", "emulator-gif", "pygame")
KINDS = (*OLED_KINDS, *LCD_KINDS, *EMULATOR_KINDS, "dummy", "terminal", "hd44780")
INTERFACES = ("i2c", "spi")

_DEFAULT_SIZES = {"st7735": (160, 128), "ili9341": (320, 240), "hd44780": (16, 2)}
#: The SPI clock speeds luma.core accepts.
SPI_SPEEDS_HZ = tuple(
    int(mhz * 1_000_000) for mhz in (0.5, 1, 2, 4, 8, 16, 20, 24, 28, 32, 36, 40, 44, 48, 50, 52)
)
_SPI0 = {7: "SPI0 CE1", 8: "SPI0 CE0", 9: "SPI0 MISO", 10: "SPI0 MOSI", 11: "SPI0 SCLK"}


@dataclass(frozen=True)
class DisplaySettings:
    """The ``[display]`` section (see ``firmware_config/pegwatch.toml``)."""

    kind: str = "terminal"
    #: Pixels (or characters for ``hd44780``); 0 takes the kind's default.
    width: int = 0
    height: int = 0
    rotate: int = 0
    interface: str = "i2c"
    i2c_port: int = 1
    i2c_address: int = 0x3C
    spi_port: int = 0
    spi_device: int = 0
    spi_dc: int = 24
    spi_rst: int = 25
    spi_speed_hz: int = 8_000_000
    #: emulator-png / emulator-gif file.
    output: str = ""
    #: Also save every picture to this .png (rewritten) or .gif (written at
    #: the end), whatever ``kind`` shows it on: the terminal view and a GIF
    #: of the match on a desktop, or a record of what the OLED showed.
    save: str = ""
    #: Emulator pixel scale.
    scale: int = 4
    #: The most frames per second the loop sends (fewer when nothing changes).
    fps: float = 10.0
    #: Seconds between attempts to reopen a failed display.
    retry_s: float = 5.0

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) with the kind's defaults filled in."""
        default = _DEFAULT_SIZES.get(self.kind, (128, 64))
        return (self.width or default[0], self.height or default[1])

    @property
    def uses_i2c(self) -> bool:
        return self.kind == "hd44780" or (self.kind in OLED_KINDS and self.interface == "i2c")

    @property
    def uses_spi(self) -> bool:
        return self.kind in LCD_KINDS or (self.kind in OLED_KINDS and self.interface == "spi")

    def reserved_pins(self) -> dict[int, str]:
        """GPIOs this display needs, for :meth:`pegwatch.device.hardware.pins.PinMap.from_mapping`."""
        if self.uses_i2c:
            return {gpio: f"the display ({what})" for gpio, what in I2C_PINS.items()}
        if self.uses_spi:
            pins = {g: f"the display ({w})" for g, w in _SPI0.items()}
            pins[self.spi_dc] = "the display (SPI DC)"
            pins[self.spi_rst] = "the display (SPI RST)"
            return pins
        return {}

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], *, source: str) -> DisplaySettings:
        """Parse the ``[display]`` table; :class:`ConfigError` names file and key."""
        allowed = [f.name for f in fields(cls)]
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            raise ConfigError(
                f"{source}: display.{unknown[0]}: unknown key; allowed keys are {', '.join(allowed)}"
            )
        values: dict[str, Any] = {}

        def fail(key: str, problem: str) -> ConfigError:
            return ConfigError(f"{source}: display.{key}: {problem}")

        for key in ("kind", "interface"):
            if key in data:
                options = KINDS if key == "kind" else INTERFACES
                if data[key] not in options:
                    raise fail(key, f"{data[key]!r} is not allowed; use one of {', '.join(options)}")
                values[key] = data[key]
        if "output" in data:
            if not isinstance(data["output"], str):
                raise fail("output", f"{data['output']!r} is not a file name")
            values["output"] = data["output"]
        if "save" in data:
            save = data["save"]
            if not isinstance(save, str) or (save and not save.lower().endswith((".png", ".gif"))):
                raise fail("save", f"{save!r} is not allowed; give a .png or .gif file name, or \"\" for none")
            values["save"] = save
        ranges: dict[str, tuple[int, int]] = {
            "width": (0, 1024), "height": (0, 1024), "rotate": (0, 3), "i2c_port": (0, 22),
            "spi_port": (0, 6), "spi_device": (0, 2), "spi_dc": (2, 27), "spi_rst": (2, 27),
            "scale": (1, 8),
        }
        for key, (low, high) in ranges.items():
            if key in data:
                value = data[key]
                if isinstance(value, bool) or not isinstance(value, int):
                    raise fail(key, f"{value!r} is not a whole number")
                if not low <= value <= high:
                    raise fail(key, f"{value} is out of range; allowed {low}..{high}")
                values[key] = value
        if "spi_speed_hz" in data:
            if data["spi_speed_hz"] not in SPI_SPEEDS_HZ or isinstance(data["spi_speed_hz"], bool):
                raise fail("spi_speed_hz", f"{data['spi_speed_hz']!r} is not a speed luma supports; "
                           f"use one of {', '.join(str(s) for s in SPI_SPEEDS_HZ)}")
            values["spi_speed_hz"] = data["spi_speed_hz"]
        if "i2c_address" in data:
            values["i2c_address"] = _address(data["i2c_address"], fail)
        for key, low_f, high_f in (("fps", 0.1, 60.0), ("retry_s", 0.1, 600.0)):
            if key in data:
                value = data[key]
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise fail(key, f"{value!r} is not a number")
                if not low_f <= value <= high_f:
                    raise fail(key, f"{value} is out of range; allowed {low_f}..{high_f}")
                values[key] = float(value)
        settings = cls(**values)
        if settings.kind == "hd44780" and settings.size not in ((16, 2), (20, 4)):
            raise fail("width", f"a character LCD is 16x2 or 20x4, not {settings.size[0]}x{settings.size[1]}")
        return settings


def _address(value: object, fail: Any) -> int:
    # TOML has no hex literal for strings people copy from i2cdetect ("3c"),
    # so both 60, 0x3C and "0x3C" are accepted.
    if isinstance(value, str):
        try:
            value = int(value, 16)
        except ValueError:
            raise fail("i2c_address", f"{value!r} is not an I2C address; write e.g. 0x3C") from None
    if isinstance(value, bool) or not isinstance(value, int) or not 0x03 <= value <= 0x77:
        raise fail("i2c_address", f"{value!r} is not an I2C address; allowed 0x03..0x77")
    return value


class Display:
    """An open display: :meth:`show` a model, :meth:`close` when done.

    Wraps a luma device (anything with ``size``, ``mode`` and
    ``display(image)``) or a character LCD (``show_model(model)``).
    """

    def __init__(self, device: Any, *, kind: str, settings: DisplaySettings | None = None) -> None:
        self.device = device
        self.kind = kind
        self.settings = settings or DisplaySettings(kind=kind)
        self.last_image: Image.Image | None = None

    @property
    def size(self) -> tuple[int, int]:
        size = getattr(self.device, "size", None)
        if size is None:
            return self.settings.size
        return (int(size[0]), int(size[1]))

    def show(self, model: DisplayModel, at_ns: int | None = None) -> None:
        """Draw *model* on the device (may raise the device's I/O error).

        *at_ns* is accepted so a :class:`Display` is a table display sink;
        the picture does not depend on it.
        """
        if hasattr(self.device, "show_model"):
            self.device.show_model(model)
            return
        image = render(model, self.size)
        if image.mode != self.device.mode:
            image = image.convert(self.device.mode)
        self.device.display(image)
        self.last_image = image

    def close(self) -> None:
        """Release the device (writes the GIF of ``emulator-gif``)."""
        writer = getattr(self.device, "write_animation", None)
        if writer is not None:
            writer()
            # luma registered it with atexit too; empty it so it is not
            # written a second time.
            self.device._images = []
        cleanup = getattr(self.device, "cleanup", None)
        if cleanup is not None:
            cleanup()


class AbsentDisplay(Display):
    """Stands in for a display that could not be opened: every :meth:`show`
    raises ``OSError`` with the reason, so the display loop keeps trying to
    open the real one (its *reopen*) and the clock never waits for it."""

    def __init__(self, settings: DisplaySettings, problem: str) -> None:
        super().__init__(None, kind=settings.kind, settings=settings)
        self.problem = problem

    @property
    def size(self) -> tuple[int, int]:
        return self.settings.size

    def show(self, model: DisplayModel, at_ns: int | None = None) -> None:
        raise OSError(self.problem)

    def close(self) -> None:
        pass


class TeeDisplay(Display):
    """One display that also saves every picture to a second one (``save``).

    Both get every picture; if one fails the other is still served before
    the error goes to the display loop, which retries.
    """

    def __init__(self, first: Display, copy: Display) -> None:
        super().__init__(first.device, kind=first.kind, settings=first.settings)
        self.first = first
        self.copy = copy

    def show(self, model: DisplayModel, at_ns: int | None = None) -> None:
        try:
            self.first.show(model, at_ns)
            self.last_image = self.first.last_image
        finally:
            try:
                self.copy.show(model, at_ns)
            except OSError:
                raise
            except Exception as exc:  # pygame.error and friends: one line, like open_display
                raise OSError(f"display save {self.copy.settings.output}: {exc}") from exc

    def close(self) -> None:
        try:
            self.first.close()
        finally:
            self.copy.close()


def open_display(settings: DisplaySettings | str, **options: Any) -> Display:
    """Open the display *settings* describe (or a kind name plus options).

    ``open_display("dummy")``, ``open_display("terminal", stream=buf)``,
    ``open_display(DisplaySettings(kind="ssd1306", i2c_address=0x3D))``.
    With ``save`` set, the pictures also go to that PNG or GIF file.
    Missing or unreachable hardware raises ``OSError`` naming the display.
    """
    try:
        display = _open(settings, **options)
        if isinstance(settings, DisplaySettings) and settings.save:
            kind = "emulator-gif" if settings.save.lower().endswith(".gif") else "emulator-png"
            # A character LCD's size is in characters: save the OLED picture.
            width, height = (128, 64) if settings.kind == "hd44780" else display.size
            copy = _open(DisplaySettings(kind=kind, output=settings.save, width=width,
                                         height=height, scale=settings.scale, fps=settings.fps))
            return TeeDisplay(display, copy)
        return display
    except (ConfigError, OSError, TypeError):
        raise
    except Exception as exc:
        # luma's DeviceNotFoundError and friends are not OSErrors; the CLI
        # and the table turn OSError into one line.
        kind = settings if isinstance(settings, str) else settings.kind
        raise OSError(f"display {kind}: {exc}") from exc


def _open(settings: DisplaySettings | str, **options: Any) -> Display:
    if isinstance(settings, str):
        known = {f.name for f in fields(DisplaySettings)}
        settings = DisplaySettings(kind=settings, **{k: v for k, v in options.items() if k in known})
        options = {k: v for k, v in options.items() if k not in known}
    kind = settings.kind
    width, height = settings.size
    if kind == "terminal":
        from pegwatch.device.display.terminal import TerminalDisplay

        return Display(TerminalDisplay(width, height, **options), kind=kind, settings=settings)
    if kind == "dummy":
        from luma.core.device import dummy

        return Display(dummy(width=width, height=height, rotate=settings.rotate, mode="1"),
                       kind=kind, settings=settings)
    if kind in EMULATOR_KINDS:
        # pygame greets on stdout when imported; keep the terminal clean.
        os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
        from luma.emulator import device as emulators

        common = {"width": width, "height": height, "rotate": settings.rotate, "mode": "1",
                  "transform": "identity", "scale": settings.scale}
        if kind == "emulator-png":
            template = settings.output or "pegwatch-display.png"
            dev = emulators.capture(file_template=template, **common)
        elif kind == "emulator-gif":
            # No max_frames: luma calls sys.exit() when it is reached.
            dev = emulators.gifanim(filename=settings.output or "pegwatch-display.gif",
                                    duration=1 / settings.fps, **common)
        else:
            dev = emulators.pygame(**common)
        return Display(dev, kind=kind, settings=settings)
    if kind == "hd44780":
        from pegwatch.device.display.charlcd import CharLcd

        return Display(CharLcd(cols=width, rows=height, i2c_port=settings.i2c_port,
                               address=settings.i2c_address, **options),
                       kind=kind, settings=settings)
    serial = _serial(settings)
    if kind in OLED_KINDS:
        from luma.oled import device as oled

        driver = getattr(oled, kind)
        return Display(driver(serial, width=width, height=height, rotate=settings.rotate),
                       kind=kind, settings=settings)
    if kind in LCD_KINDS:
        from luma.lcd import device as lcd

        driver = getattr(lcd, kind)
        return Display(driver(serial, width=width, height=height, rotate=settings.rotate),
                       kind=kind, settings=settings)
    raise ConfigError(f"display kind {kind!r} is not known; use one of {', '.join(KINDS)}")


def _serial(settings: DisplaySettings) -> Any:
    from luma.core.interface.serial import i2c, spi

    if settings.uses_i2c:
        return i2c(port=settings.i2c_port, address=settings.i2c_address)
    return spi(port=settings.spi_port, device=settings.spi_device, gpio_DC=settings.spi_dc,
               gpio_RST=settings.spi_rst, bus_speed_hz=settings.spi_speed_hz)
