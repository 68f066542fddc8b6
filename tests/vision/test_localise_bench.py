"""benchmarks/localise.py runs and ends with its one JSON line of named numbers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))


def test_the_motion_kernel_is_a_line_of_its_length():
    from localise import motion_kernel  # type: ignore[import-not-found]

    k = motion_kernel(9.0, 0.0)
    assert abs(float(k.sum()) - 1.0) < 1e-5
    rows = np.flatnonzero(k.sum(axis=1) > 0.05)
    cols = np.flatnonzero(k.sum(axis=0) > 1e-3)
    assert len(rows) == 1 and 8 <= len(cols) <= 11


def test_benchmark_quick_ends_with_one_json_line():
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "localise.py"), "--boards", "1", "--profiles", "invicta-12x4"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        cwd=ROOT,
    ).stdout
    data = json.loads(out.strip().splitlines()[-1])
    for key in ("board_found_rate", "board_found_rate_blur", "board_found_rate_low_ppm", "locate_ms_median"):
        assert key in data, key
        assert data[key] >= 0
    assert data["boards"] == 4
