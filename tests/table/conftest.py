"""Fixtures of the table program's tests: a calibrated reader on rendered frames."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def calibrated():
    """``(profile, reader, conditions)``: the demo's calibration, done once."""
    from pegwatch.simulation.demo import calibrated_reader

    return calibrated_reader()
