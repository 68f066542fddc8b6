"""Every setting docs/configuration.md documents works, and no other is read.

The page's example (its ```toml block) is loaded with ``load_config``. Each
documented key must be in it, be accepted, and *reach the code*: set to
another allowed value it changes the :class:`TableConfig` attribute the
program uses, and that attribute is read outside ``config.py``. The two
that once went nowhere are followed into the running program: ``[table]
name`` to the display's header, the journal and the exports, ``[journal]
max_mb`` to the journal's cap. Finally, ``config.py`` reads no key the page
does not document.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from pegwatch.device.table import config as config_module
from pegwatch.device.table.config import load_config
from pegwatch.device.table.program import TableProgram

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "configuration.md"
NOT_A_PI = Path("/nonexistent/device-tree/model")

# Where each documented key lands in TableConfig, and another allowed value.
REACHES = {
    ("table", "name"): ("table_name", "Table 9"),
    ("table", "board"): ("board", "lego-10x4"),
    ("table", "calibration"): ("calibration", "cal.json"),
    ("match", "players"): ("players", ["Cy", "Di"]),
    ("match", "rules"): ("rules", "mso-5"),
    ("match", "clock"): ("clock", "blitz-5+0"),
    ("camera", "source"): ("camera", "webcam:1"),
    ("camera", "resolution"): ("vision.resolution", [640, 480]),
    ("camera", "fps"): ("vision.fps", 5),
    ("camera", "focus"): ("vision.focus", "once"),
    ("camera", "focus_cm"): ("vision.focus_cm", 50),
    ("vision", "frames_to_accept"): ("vision.frames_to_accept", 5),
    ("vision", "motion_threshold"): ("vision.motion_threshold", 20.5),
    ("journal", "path"): ("journal", "other.sqlite"),
    ("journal", "evidence"): ("evidence", False),
    ("journal", "evidence_jpeg_quality"): ("vision.jpeg_quality", 60),
    ("journal", "max_mb"): ("journal_max_bytes", 64),
    ("hardware", "mode"): ("simulated", "pi"),
}


def documented_keys() -> set[tuple[str, str]]:
    """(section, key) of every row of the page's key tables."""
    keys = set()
    section = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"### `\[(\w+)\]`$", line)
        if heading:
            section = heading.group(1)
        elif line.startswith("#"):
            section = None
        row = re.match(r"\| `(\w+)` \|", line)
        if section is not None and row:
            keys.add((section, row.group(1)))
    return keys


def example() -> dict:
    blocks = re.findall(r"```toml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert blocks, "docs/configuration.md has no ```toml example"
    return tomllib.loads("\n".join(blocks))


def write_toml(path: Path, data: dict) -> Path:
    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return repr(v)

    lines = []
    for section, table in data.items():
        lines.append(f"[{section}]")
        lines.extend(f"{key} = {value(v)}" for key, v in table.items())
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def attr(cfg, dotted):
    for part in dotted.split("."):
        cfg = getattr(cfg, part)
    return cfg


def runtime_source() -> str:
    """The code that uses a TableConfig: everything under device/ but config.py."""
    files = sorted((REPO / "device").rglob("*.py"))
    return "\n".join(f.read_text(encoding="utf-8") for f in files if f.name != "config.py")


def test_the_example_holds_every_documented_key_and_loads(tmp_path):
    data = example()
    in_example = {(s, k) for s, table in data.items() for k in table}
    documented = documented_keys()
    assert documented == set(REACHES), "a documented key this test does not follow"
    assert in_example == documented
    cfg = load_config(write_toml(tmp_path / "pegwatch.toml", data), model_path=NOT_A_PI)
    assert cfg.table_name == data["table"]["name"]
    assert cfg.journal_max_bytes == data["journal"]["max_mb"] * 1024 * 1024


@pytest.mark.parametrize(("section", "key"), sorted(REACHES))
def test_each_documented_key_changes_what_the_program_uses(tmp_path, section, key):
    data = example()
    (tmp_path / "cal.json").write_text("{}", encoding="utf-8")
    base = load_config(write_toml(tmp_path / "a.toml", data), model_path=NOT_A_PI)
    dotted, other = REACHES[(section, key)]
    data[section][key] = other
    changed = load_config(write_toml(tmp_path / "b.toml", data), model_path=NOT_A_PI)
    assert attr(changed, dotted) != attr(base, dotted), f"{section}.{key} changed nothing"
    # ... and the attribute is read by the program, not only parsed.
    last = dotted.split(".")[-1]
    assert re.search(rf"\.{last}\b", runtime_source()), f"{dotted} is never read"


def test_table_name_and_max_mb_reach_the_running_table(tmp_path):
    data = example()
    data["table"]["name"] = "Hall B 3"
    data["journal"]["max_mb"] = 3
    cfg = load_config(write_toml(tmp_path / "pegwatch.toml", data), model_path=NOT_A_PI)
    program = TableProgram.from_config(cfg, tmp_path / "table.sqlite")
    try:
        assert program.journal.max_bytes == 3 * 1024 * 1024
        assert program.display_model().table == "Hall B 3"
        assert program.journal.meta["table"] == "Hall B 3"
    finally:
        program.close()
    # The header draws it: the same model without the name looks different.
    from dataclasses import replace

    from pegwatch.device.display.render import render

    model = replace(program.display_model(), banner=None, row=3)
    assert render(model).tobytes() != render(replace(model, table=None)).tobytes()


def _keys_read_by_config() -> set[str]:
    """Every key name config.py reads from its own sections (AST, not a regex)."""
    tree = ast.parse(Path(config_module.__file__).read_text(encoding="utf-8"))
    readers = {"string", "integer", "number", "boolean", "choice", "get", "fail"}
    keys = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        args = [a for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if name in readers and node.args and args and node.args[0] is args[0]:
            keys.add(args[0].value)
        elif name == "_named" and len(node.args) > 1 and isinstance(node.args[1], ast.Constant):
            keys.add(node.args[1].value)
    return keys


def test_config_reads_no_undocumented_key():
    documented = documented_keys()
    own = config_module._KEYS
    assert {(s, k) for s, keys in own.items() for k in keys} == documented
    doc_names = {k for _, k in documented}
    read = {k for k in _keys_read_by_config() if re.fullmatch(r"[a-z_]+", k)}
    # Section names (data.get("table")) are documented as headings.
    undocumented = read - doc_names - set(own) - set(config_module._DEVICE_SECTIONS)
    assert not undocumented, f"config.py reads keys docs/configuration.md does not document: {undocumented}"
    assert {"name", "max_mb", "evidence_jpeg_quality"} <= read  # the scan sees the readers
