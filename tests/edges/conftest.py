"""Fixtures for the bad-input properties: valid files of every kind pegwatch reads.

The calibration is made by the real ``pegwatch calibrate`` on rendered
photos, and the journal by the real ``pegwatch demo``, once per session.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import pytest
from edges_kit import EXAMPLES, TRIED

from pegwatch.device.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Photos of a rendered Invicta board, their truth records, and a calibration made from them."""
    from pegwatch.simulation.hardset import make_table

    cv2.setNumThreads(1)
    table = make_table("invicta-12x4", peg_set=4242, images=2, seed=5)
    folder = tmp_path_factory.mktemp("rendered")
    images, truths = [], []
    for i, shot in enumerate(table.calibration):
        path = folder / f"cal{i}.png"
        cv2.imwrite(str(path), shot.image)
        images.append(str(path))
    jpeg = folder / "cal0.jpg"
    cv2.imwrite(str(jpeg), table.calibration[0].image, [cv2.IMWRITE_JPEG_QUALITY, 85])
    for i, t in enumerate(table.calibration_truths()):
        path = folder / f"truth{i}.json"
        path.write_text(json.dumps(t))
        truths.append(str(path))
    cal = folder / "cal.json"
    args = ["calibrate", *images, "-o", str(cal)]
    for t in truths:
        args += ["--truth", t]
    assert main(args) == 0
    return {
        "images": images,
        "jpeg": str(jpeg),
        "truths": truths,
        "truth_records": table.calibration_truths(),
        "calibration": str(cal),
        "calibration_data": json.loads(cal.read_text()),
    }


@pytest.fixture(scope="session")
def journal_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real table journal: the scripted demo match (no GIF)."""
    path = tmp_path_factory.mktemp("journal") / "demo.sqlite"
    assert main(["demo", "--fast", "--journal", str(path)]) == 0
    return path


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if TRIED:
        terminalreporter.write_sep("-", "bad-input inputs tried per file type")
        for name, n in sorted(TRIED.items()):
            terminalreporter.write_line(f"{name}: {n}")
        if EXAMPLES:
            terminalreporter.write_line(f"(PEGWATCH_FUZZ_EXAMPLES={EXAMPLES})")
