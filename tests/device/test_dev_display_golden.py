"""Display renders compared pixel-exactly against the stored goldens.

The goldens are committed files; this test never writes them. After a
deliberate change of the drawing, regenerate them (and the docs' pictures)
with a separate command, then look at them before committing:

    .venv/bin/python -m pegwatch.device.display.samples --golden tests/device/golden
    .venv/bin/python -m pegwatch.device.display.samples docs/img
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image, ImageChops

from pegwatch.device.display.model import DisplayModel, PlayerFace
from pegwatch.device.display.render import render
from pegwatch.device.display.samples import SAMPLES, golden_images

GOLDEN = Path(__file__).parent / "golden"


def _check(name: str, image: Image.Image) -> None:
    path = GOLDEN / f"{name}.png"
    assert path.exists(), f"no golden {path}; see this module's docstring"
    golden = Image.open(path)
    assert golden.mode == image.mode and golden.size == image.size
    diff = ImageChops.difference(golden.convert("L"), image.convert("L")).getbbox()
    assert diff is None, f"{name}: render differs from {path} in box {diff}"


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_oled_128x64_matches_golden(name):
    image = render(SAMPLES[name])
    assert image.mode == "1" and image.size == (128, 64)
    _check(name, image)


def test_larger_lcd_layout_matches_golden():
    _check("lcd-320x240-running", render(SAMPLES["running"], (320, 240)))


def test_each_state_looks_different():
    images = {name: render(model).tobytes() for name, model in SAMPLES.items()}
    assert len(set(images.values())) == len(images)


def test_golden_comparison_catches_one_pixel():
    image = render(SAMPLES["running"])
    image.putpixel((0, 63), 1 - image.getpixel((0, 63)))
    with pytest.raises(AssertionError, match="differs"):
        _check("running", image)


def test_every_golden_is_compared_and_none_is_stale():
    assert {p.stem for p in GOLDEN.glob("*.png")} == set(golden_images())


def test_three_digit_hours_still_fit():
    model = DisplayModel(players=(PlayerFace("A", 2 * 3600 * 10**9), PlayerFace("B", 59 * 10**9)),
                         on_move=0)
    image = render(model)
    assert image.getbbox() is not None
