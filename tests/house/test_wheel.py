"""A plain wheel works anywhere: built, installed into a fresh venv, run from another folder.

The wheel is built from this checkout and installed with ``--no-deps`` into
a new venv; the venv borrows the dependencies (numpy, OpenCV, gpiozero,
luma) from the development venv through a ``.pth`` line, which adds that
folder to ``sys.path`` without running its own ``.pth`` files, so the
editable install's import hook is not there and every ``pegwatch`` module
and data file must come from the wheel. ``PEGWATCH_WHEEL_FULL=1`` installs
the dependencies from the package index instead (slower, needs the network).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # Built from a copy, so the build leaves nothing in the checkout.
    source = tmp_path_factory.mktemp("source") / "pegwatch"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"))
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "--disable-pip-version-check", "-w", str(out), str(source)],
        check=True, cwd=out,
    )
    (found,) = out.glob("pegwatch-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(tmp_path_factory, wheel) -> Path:
    root = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True)
    py = root / "bin" / "python"
    pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    if os.environ.get("PEGWATCH_WHEEL_FULL") == "1":
        subprocess.run([*pip, str(wheel)], check=True)
    else:
        subprocess.run([*pip, "--no-deps", "--no-index", str(wheel)], check=True)
        site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True).stdout.strip()
        Path(site, "_borrowed_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return root


def _run(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PEGWATCH_CONFIG")}
    return subprocess.run([str(venv / "bin" / "pegwatch"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_wheel_installs_only_pegwatch_at_the_top(wheel):
    tops = {name.split("/")[0] for name in zipfile.ZipFile(wheel).namelist()}
    assert tops == {"pegwatch", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info"}


def test_the_wheel_carries_its_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for data in ("pegwatch/firmware_config/boards/invicta-12x4.toml",
                 "pegwatch/firmware_config/pegwatch.toml",
                 "pegwatch/rules/data/variants.toml",
                 "pegwatch/rules/data/clocks.toml",
                 "pegwatch/device/fonts/DejaVuSansMono-Bold.ttf"):
        assert data in names


def test_markers_from_another_folder(venv, tmp_path):
    result = _run(venv, "markers", "--profile", "invicta-12x4", "-o", "sheet.pdf", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "sheet.pdf").read_bytes().startswith(b"%PDF")


def test_demo_from_another_folder_uses_the_installed_package(venv, tmp_path):
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import pegwatch.rules, pegwatch.device; "
         "print(pegwatch.rules.__file__); print(pegwatch.device.__file__)"],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    ).stdout.split()
    assert all(str(venv) in path for path in where), where
    result = _run(venv, "demo", "--fast", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "match over" in result.stdout
    assert (tmp_path / "pegwatch-demo.sqlite").is_file()
