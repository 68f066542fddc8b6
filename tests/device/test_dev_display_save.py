"""[display] save: every picture also goes to a PNG or GIF, whatever shows it."""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageSequence

from pegwatch.device.display.devices import DisplaySettings, open_display
from pegwatch.device.display.render import render
from pegwatch.device.display.samples import SAMPLES
from pegwatch.device.errors import ConfigError


def test_terminal_view_also_saved_as_png(tmp_path):
    out = tmp_path / "face.png"
    stream = io.StringIO()
    display = open_display(DisplaySettings(kind="terminal", save=str(out), scale=1), stream=stream)
    display.show(SAMPLES["running"])
    assert stream.getvalue(), "the terminal still gets the picture"
    display.close()
    saved = Image.open(out).convert("1")
    assert saved.tobytes() == render(SAMPLES["running"], (128, 64)).convert("1").tobytes()


def test_gif_holds_every_picture_shown(tmp_path):
    out = tmp_path / "match.gif"
    display = open_display(DisplaySettings(kind="dummy", save=str(out), scale=1))
    for name in ("ready", "running", "mis-mark"):
        display.show(SAMPLES[name])
    display.close()
    frames = list(ImageSequence.Iterator(Image.open(out)))
    assert len(frames) == 3


def test_a_failing_copy_does_not_starve_the_display(tmp_path):
    display = open_display(DisplaySettings(kind="dummy", save=str(tmp_path / "gone" / "x.png"), scale=1))
    with pytest.raises(OSError, match=r"display save .*gone/x.png"):
        display.show(SAMPLES["running"])  # the folder does not exist
    assert display.first.device.image is not None, "the real display was served first"


@pytest.mark.parametrize("value", ["face.jpg", 3])
def test_save_must_be_png_or_gif(value):
    with pytest.raises(ConfigError, match=r"pegwatch.toml: display.save: .* give a .png or .gif file name"):
        DisplaySettings.from_mapping({"save": value}, source="pegwatch.toml")
