"""Shared fixtures for the vision tests: simulated tables and their calibrations.

Rendering and calibrating take a moment, so tables are session-wide.
"""

from __future__ import annotations

import cv2
import pytest

from pegwatch.simulation.hardset import Table, make_table
from pegwatch.vision.calibrate import calibrate, truth_from_record
from pegwatch.vision.calibration import Calibration


def _calibrate(table: Table, **kw) -> Calibration:
    p = table.profile
    truths = [truth_from_record(t, p, where="truth") for t in table.calibration_truths()]
    return calibrate([r.image for r in table.calibration], truths, p, **kw)


@pytest.fixture(autouse=True, scope="session")
def _one_core():
    cv2.setNumThreads(1)


@pytest.fixture(scope="session")
def invicta_table() -> Table:
    return make_table("invicta-12x4", peg_set=4242, seed=5)


@pytest.fixture(scope="session")
def invicta_cal(invicta_table) -> Calibration:
    return _calibrate(invicta_table)


@pytest.fixture(scope="session")
def super_table() -> Table:
    return make_table("super-12x5", peg_set=777, seed=5)


@pytest.fixture(scope="session")
def super_cal(super_table) -> Calibration:
    return _calibrate(super_table)


@pytest.fixture(scope="session")
def lego_table() -> Table:
    return make_table("lego-10x4", peg_set=99, seed=5)


@pytest.fixture(scope="session")
def lego_cal(lego_table) -> Calibration:
    return _calibrate(lego_table)


@pytest.fixture
def calibrate_table():
    return _calibrate
