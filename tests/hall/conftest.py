"""Fixtures of the hall's tests: a real Mosquitto with the hall's users and ACL.

The broker runs on a free loopback port with a configuration of its own
(``pegwatch.hub.broker``); ``./dev test`` installs Mosquitto with apt where it
is missing, and these tests skip only where it cannot be.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hall_kit import TABLES, TOURNAMENT

from pegwatch.hub.broker import MOSQUITTO, MosquittoBroker


@pytest.fixture
def mosquitto() -> str:
    """Mosquitto's executable (the test skips where it is not installed)."""
    found = MOSQUITTO if Path(MOSQUITTO).exists() else shutil.which("mosquitto")
    if found is None:
        pytest.skip("Mosquitto is not installed (./dev test installs it with apt)")
    return found


@pytest.fixture
def broker(tmp_path: Path, mosquitto: str):
    """A running Mosquitto: tables 1-4 of tournament ``mso`` and the ``hub`` user."""
    with MosquittoBroker(tables=list(TABLES), tournament=TOURNAMENT, directory=tmp_path / "broker") as running:
        yield running

# The hall in a real browser (tests/hall/test_browser.py): `pegwatch hub` as a subprocess, chromium.
from browser_fixtures import browser, hub  # noqa: E402, F401
