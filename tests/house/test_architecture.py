"""The folder tree is the architecture: these checks keep it so.

Imports are read from the source with :mod:`ast`, so the checks see what a
newcomer sees, including imports inside functions (the lazy ones).
"""

from __future__ import annotations

import ast
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGE_DIRS: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]

#: What each top package may import from pegwatch: the layers point one way.
ALLOWED = {
    "rules": {"rules"},
    "vision": {"rules", "vision"},
    # The table publishes to the hall with the hub's wire format; the CLI runs the hub.
    "device": {"rules", "vision", "device", "hub"},
    "simulation": {"rules", "vision", "device", "hub", "simulation"},
    # The tournament hall: its pure core uses the rules only.
    "hub": {"rules", "hub"},
    "firmware_config": set(),
}
#: The composition root may hand simulated devices to the table.
SIMULATION_USERS = ("pegwatch.device.cli",)
MAX_LINES = 500


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            found[".".join([package, *parts])] = path
    return found


MODULES = _modules()


def _imports(path: Path, *, module_level_only: bool) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if module_level_only else list(ast.walk(tree))
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {n for n in names if n.startswith("pegwatch.")}


def _top(module: str) -> str:
    return module.split(".")[1]


def test_every_package_folder_is_in_the_wheel():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    folders = {m for m, p in MODULES.items() if p.name == "__init__.py"}
    assert folders == listed, f"add to or remove from pyproject's packages: {folders ^ listed}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_layers_point_one_way(module):
    allowed = ALLOWED[_top(module)]
    bad = sorted(
        name for name in _imports(MODULES[module], module_level_only=False)
        if _top(name) not in allowed
        and not (_top(name) == "simulation" and module.startswith(SIMULATION_USERS))
    )
    assert not bad, f"{module} imports {bad}"


def test_no_import_cycles():
    graph: dict[str, set[str]] = defaultdict(set)
    for module, path in MODULES.items():
        for name in _imports(path, module_level_only=True):
            # "from pkg import name" may name a module or an attribute.
            target = name if name in MODULES else name.rpartition(".")[0]
            if target in MODULES and target != module:
                graph[module].add(target)
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            # A package's __init__ re-exporting its own modules is not a cycle of design.
            if nxt.startswith(node + "."):
                continue
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for module in sorted(MODULES):
        if module not in state:
            visit(module, [])
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_rooms_stay_small(module):
    lines = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{module} has {lines} lines; split it along its seams"


def _mapped_paths() -> dict[str, bool]:
    """Paths the tree in docs/architecture.md names, each with whether it
    lists children (a folder listed alone covers every module in it)."""
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = doc.split("```\n", 2)[1]
    stack: list[tuple[int, str]] = []
    paths: dict[str, bool] = {}
    for line in block.splitlines():
        stripped = line.lstrip(" ")
        name = stripped.split(" ", 1)[0]
        if not (name.endswith("/") or name.endswith(".py")) or name.startswith("`"):
            continue
        depth = len(line) - len(stripped)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parent = stack[-1][1] if stack else ""
        path = parent + name
        if stack:
            paths[parent] = True
        paths.setdefault(path, False)
        if name.endswith("/"):
            stack.append((depth, path))
    return paths


def test_the_map_in_docs_matches_the_tree():
    paths = _mapped_paths()
    missing = sorted(p for p in paths if not (REPO / p).exists())
    assert not missing, f"docs/architecture.md names what is not there: {missing}"
    leaves = [p for p, has_children in paths.items() if p.endswith("/") and not has_children]
    unmapped = []
    for path in MODULES.values():
        rel = path.relative_to(REPO).as_posix()
        if path.name in ("__init__.py", "__main__.py") or rel in paths:
            continue
        if not any(rel.startswith(leaf) for leaf in leaves):
            unmapped.append(rel)
    assert not unmapped, f"docs/architecture.md does not map: {sorted(unmapped)}"
