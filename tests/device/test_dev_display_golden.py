"""Display renders compared pixel-exactly against the stored goldens.

Regenerate after a deliberate change of the drawing, then look at them:

    PEGWATCH_REGEN_GOLDEN=1 .venv/bin/pytest tests/device/test_dev_display_golden.py
    .venv/bin/python -m pegwatch.device.display.samples docs/img
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from pegwatch.device.display.model import DisplayModel, PlayerFace
from pegwatch.device.display.render import render
from pegwatch.device.display.samples import SAMPLES

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("PEGWATCH_REGEN_GOLDEN") == "1"


def _check(name: str, image: Image.Image) -> None:
    path = GOLDEN / f"{name}.png"
    if REGEN:
        GOLDEN.mkdir(exist_ok=True)
        image.save(path)
    assert path.exists(), f"no golden {path}; run with PEGWATCH_REGEN_GOLDEN=1 and look at it"
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
        if REGEN:
            raise AssertionError("differs (regenerating: nothing to compare)")
        _check("running", image)


def test_three_digit_hours_still_fit():
    model = DisplayModel(players=(PlayerFace("A", 2 * 3600 * 10**9), PlayerFace("B", 59 * 10**9)),
                         on_move=0)
    image = render(model)
    assert image.getbbox() is not None
