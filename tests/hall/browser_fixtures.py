"""The hall in a real browser: ``pegwatch hub`` as a subprocess on a free port, Debian's chromium via playwright.

The browser is the system's chromium (``executable_path``), never one
playwright downloads. Where chromium, playwright or Mosquitto is missing
the tests skip with the reason, except in CI (``CI`` set): there
``./dev test`` has installed them, and a missing one is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hall_kit import TOURNAMENT, wait_until

from pegwatch.hub.broker import HUB_USER, MosquittoBroker, free_port

CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/lib/chromium/chromium")
ARBITER, ARBITER_PASSWORD = "arb", "correct horse"


def _missing(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing in CI (./dev test installs it with apt)")
    pytest.skip(f"{what} is not installed (./dev test installs it with apt)")


def chromium_path() -> str:
    found = shutil.which("chromium") or next((p for p in CHROMIUM_PATHS if Path(p).exists()), None)
    if found is None:
        _missing("Debian's chromium")
    assert found is not None
    return found


HUB_TOML = """\
[tournament]
name = "Browser open"
game = "mastermind"
tables = ["1", "2", "3"]

[[players]]
id = "ann"
name = "Ann"
[[players]]
id = "bob"
name = "Bob"
[[players]]
id = "cy"
name = "Cy"
[[players]]
id = "dee"
name = "Dee"

[[rounds]]
number = 1
[[rounds.tables]]
table = "1"
players = ["ann", "bob"]
[[rounds.tables]]
table = "2"
players = ["cy", "dee"]

[hall]
tournament = "{tournament}"

[[accounts]]
login = "{login}"
password_hash = "{hash}"
"""


@dataclass
class HubProcess:
    """``pegwatch hub`` running as the arbiter runs it; ``url`` is its page."""

    process: subprocess.Popen[str]
    url: str
    db: Path

    def alive(self) -> bool:
        return self.process.poll() is None


def start_hub(broker: MosquittoBroker, directory: Path, *, config_text: str | None = None) -> HubProcess:
    """Start the real CLI on a free loopback port and wait until its API answers."""
    import httpx

    from pegwatch.hub.web.auth import hash_password

    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "hub.toml"
    config.write_text(config_text or HUB_TOML.format(tournament=TOURNAMENT, login=ARBITER,
                                                     hash=hash_password(ARBITER_PASSWORD)), encoding="utf-8")
    port = free_port()
    db = directory / "hall.sqlite"
    cmd = [sys.executable, "-c", "import sys; from pegwatch.device.cli import main; sys.exit(main())", "hub",
           "--broker", broker.url, "--db", str(db), "--http", f"127.0.0.1:{port}",
           "--config", str(config), "--password-file", str(broker.password_file(HUB_USER))]
    log = (directory / "hub.log").open("w", encoding="utf-8")
    process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    hub = HubProcess(process, f"http://127.0.0.1:{port}", db)

    def answers() -> bool:
        if not hub.alive():
            raise AssertionError("pegwatch hub ended: " + (directory / "hub.log").read_text(encoding="utf-8"))
        try:
            return httpx.get(f"{hub.url}/api/tables", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    wait_until(answers, timeout=30, what="pegwatch hub's page")
    return hub


def stop_hub(hub: HubProcess) -> None:
    if hub.alive():
        hub.process.terminate()
        try:
            hub.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            hub.process.kill()
            hub.process.wait()


@pytest.fixture
def hub(broker: MosquittoBroker, tmp_path: Path) -> Iterator[HubProcess]:
    """A real ``pegwatch hub`` (tables 1 to 3, round 1 paired: ann-bob at 1, cy-dee at 2)."""
    running = start_hub(broker, tmp_path / "hub")
    try:
        yield running
    finally:
        stop_hub(running)


@pytest.fixture
def browser() -> Iterator[object]:
    """Debian's chromium, headless, driven by playwright."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright (the dev extra)")
        raise
    path = chromium_path()
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=path, headless=True,
                                     args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            yield chromium
        finally:
            chromium.close()
