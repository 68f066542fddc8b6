"""Mutating valid files and running the CLI on them, for the bad-input properties.

A mutation takes a valid example (a JSON or TOML document as Python data)
and changes one place in it, in structure (type swaps, a missing or
duplicated key, deep nesting, huge arrays) or in value (huge and negative
numbers, NaN and infinities, long strings, control characters), then writes
it out as text, where the raw tokens that no serializer would write (a
5 000-digit integer, ``NaN``, a thousand nested brackets) are spliced in.
:func:`byte_damage` adds the file-level faults: bytes that are not UTF-8,
truncation, an empty file.

:func:`run_cli` calls ``pegwatch.device.cli.main`` in-process with a
per-call alarm, and :func:`check_outcome` asserts the promise of the README:
exit status 2 and exactly one stderr line naming the file, or 0 (the
mutation stayed valid), never a traceback or a hang.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

#: Examples per file type; PEGWATCH_FUZZ_EXAMPLES=2000 runs many more.
EXAMPLES = int(os.environ.get("PEGWATCH_FUZZ_EXAMPLES", "0") or 0)


def fuzz_settings(default: int) -> settings:
    """Hypothesis settings for one file type: ``default`` examples unless the env var says more."""
    return settings(
        max_examples=EXAMPLES or default,
        deadline=None,
        derandomize=not EXAMPLES,
        suppress_health_check=[
            HealthCheck.function_scoped_fixture,
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
        print_blob=True,
    )


#: How many inputs each property tried in this session (reported by the conftest).
TRIED: dict[str, int] = {}

MARK = "@@PEGWATCH-MUTATION@@"
PEGWATCH = Path(sys.executable).with_name("pegwatch")


class Hang(Exception):
    """A CLI call outlived its alarm."""


@contextlib.contextmanager
def alarm(seconds: int) -> Iterator[None]:
    def ring(signum: int, frame: object) -> None:
        raise Hang(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def run_cli(argv: list[str], capsys: Any, *, seconds: int = 20) -> tuple[int, str, str]:
    """``pegwatch ARGV`` in-process: (status, stdout, stderr)."""
    from pegwatch.device.cli import main

    capsys.readouterr()
    try:
        with alarm(seconds):
            status = main(argv)
    except SystemExit as exc:  # argparse
        status = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return status, out, err


def check_outcome(
    status: int,
    out: str,
    err: str,
    path: str,
    *,
    field: str | None = None,
    problem_ok: bool = False,
) -> None:
    """Exit 2 with one stderr line naming ``path`` (and ``field``), or a valid run.

    ``problem_ok``: ``pegwatch read`` exits 1 when the board cannot be
    found in the photo, saying so on standard output, not as an error.
    """
    assert "Traceback" not in err and "Traceback" not in out, err
    if status == 0:
        return
    if status == 1 and problem_ok and not err and "PROBLEM" in out:
        return
    assert status == 2, (status, err)
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert path in lines[0], lines[0]
    if field is not None:
        assert field in lines[0], (field, lines[0])


def smoke(argv: list[str], path: str, cwd: Path) -> str:
    """Run the real ``pegwatch`` console script; assert one clean error line naming ``path``."""
    proc = subprocess.run(
        [str(PEGWATCH), *argv], capture_output=True, text=True, timeout=120, cwd=cwd, check=False
    )
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert path in lines[0] and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


# --- mutating documents -----------------------------------------------------------


@dataclass(frozen=True)
class Mutation:
    """What was done where: ``path`` is the place as messages spell it (``rows[1].black``)."""

    kind: str
    path: tuple[str | int, ...]
    text: str

    @property
    def place(self) -> str:
        out = ""
        for p in self.path:
            out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
        return out

    @property
    def field(self) -> str | None:
        """The top-level key a message about a type swap must name (None: no promise)."""
        if self.kind != "type" or not self.path or not isinstance(self.path[0], str):
            return None
        return self.path[0]


def places(data: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every place in ``data`` (the root is ``()``)."""
    out = [prefix]
    if isinstance(data, dict):
        for k, v in data.items():
            out.extend(places(v, (*prefix, k)))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out.extend(places(v, (*prefix, i)))
    return out


def _get(data: Any, path: tuple[str | int, ...]) -> Any:
    for p in path:
        data = data[p]
    return data


def _set(data: Any, path: tuple[str | int, ...], value: Any) -> Any:
    if not path:
        return value
    parent = _get(data, path[:-1])
    parent[path[-1]] = value
    return data


def _copy(data: Any) -> Any:
    return json.loads(json.dumps(data))


CONTROL = "".join(chr(c) for c in range(32)) + "\x7f\u2028\u202e"

# Raw tokens (JSON / TOML spellings), spliced in where the mark is.
RAW_JSON = {
    "huge-int": lambda n: "9" * n,
    "huge-negative": lambda n: "-" + "9" * n,
    "big-float": lambda n: "1e" + str(300 + n),
    "nan": lambda n: "NaN",
    "inf": lambda n: "-Infinity" if n % 2 else "Infinity",
    "deep": lambda n: "[" * n + "]" * n,
    "deep-object": lambda n: '{"a":' * n + "1" + "}" * n,
}
RAW_TOML = {
    "huge-int": lambda n: "9" * n,
    "huge-negative": lambda n: "-" + "9" * n,
    "big-float": lambda n: "1e" + str(300 + n),
    "nan": lambda n: "nan",
    "inf": lambda n: "-inf" if n % 2 else "inf",
    "deep": lambda n: "[" * n + "]" * n,
    "deep-object": lambda n: "{a = " * n + "1" + "}" * n,
}


def values() -> st.SearchStrategy[tuple[str, Any]]:
    """(kind, replacement value): ``("raw:NAME", n)`` means a raw token."""
    scalars = st.one_of(
        st.tuples(st.just("type"), st.sampled_from([None, True, False, 0, -1, 1.5, "", "x", [], {}, [1, 2], {"a": 1}])),
        st.tuples(st.just("number"), st.sampled_from([2**63 - 1, -(2**63), 2**53 + 1, -1, 10**18, 1e308, -1e308, 5e-324, 0.0, -0.0])),
        st.tuples(st.just("number"), st.integers(-(2**63), 2**63 - 1)),
        st.tuples(st.just("number"), st.floats(allow_nan=False, allow_infinity=False)),
        st.tuples(st.just("string"), st.text(alphabet=CONTROL + "aé€😀", max_size=40)),
        st.tuples(st.just("string"), st.integers(1, 200_000).map(lambda n: "r" * n)),
        st.tuples(st.just("string"), st.text(max_size=30)),
        st.tuples(st.just("array"), st.integers(1000, 300_000).map(lambda n: [0] * n)),
        st.tuples(st.just("array"), st.integers(1000, 50_000).map(lambda n: ["red"] * n)),
        st.tuples(
            st.sampled_from([f"raw:{k}" for k in RAW_JSON]),
            st.one_of(st.integers(1, 30), st.integers(30, 6000)),
        ),
    )
    return scalars


@st.composite
def mutated(draw: Any, examples: list[Any], fmt: str) -> tuple[bytes, Mutation]:
    """A mutated copy of one of ``examples`` as file bytes, and what was done."""
    base = _copy(draw(st.sampled_from(examples)))
    spots = places(base)
    path = draw(st.sampled_from(spots))
    action = draw(st.sampled_from(["replace"] * 6 + ["delete", "duplicate", "wrap", "keep"]))
    raw: str | None = None
    kind = action
    data = base
    if action == "delete" and path:
        parent = _get(data, path[:-1])
        if isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
    elif action == "wrap":
        # The value, nested a little deeper: an object or a list around it.
        value = _get(data, path)
        data = _set(data, path, draw(st.sampled_from([[value], {"value": value}, [[value]]])))
        kind = "type"
    elif action == "replace":
        kind, value = draw(values())
        if kind.startswith("raw:"):
            table = RAW_JSON if fmt == "json" else RAW_TOML
            raw = table[kind[4:]](value)
            value = MARK
        if fmt == "toml" and not path:
            path = (draw(st.sampled_from(list(base) or ["x"])),)
        if fmt == "toml" and value is None:
            value = "null"  # TOML has no null
        data = _set(data, path, value)
    text = dump_json(data) if fmt == "json" else dump_toml(data)
    if raw is not None:
        quoted = json.dumps(MARK)
        text = text.replace(quoted, raw, 1)
    if action == "duplicate":
        text = duplicate_key(text, fmt, data)
        kind = "duplicate"
    clean = text.encode("utf-8", "surrogatepass")
    blob = draw(byte_damage(clean))
    if blob != clean:
        kind = "bytes"  # the file is damaged as a whole: no promise about a key
    return blob, Mutation(kind, path, "")


def dump_json(data: Any) -> str:
    return json.dumps(data, indent=draw_indent(data))


def draw_indent(data: Any) -> int | None:
    return 1 if isinstance(data, dict) and len(json.dumps(data)) < 200_000 else None


def duplicate_key(text: str, fmt: str, data: Any) -> str:
    if not isinstance(data, dict) or not data:
        return text
    key = next(iter(data))
    if fmt == "json":
        i = text.index("{")
        return text[: i + 1] + f"{json.dumps(key)}: 0, " + text[i + 1 :]
    return f"{_toml_key(key)} = 0\n" + text


def _toml_key(key: str) -> str:
    return json.dumps(key)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


def dump_toml(data: Any) -> str:
    """TOML text for ``data``: every top-level key on one line, tables inline."""
    if not isinstance(data, dict):
        return f"value = {_toml_value(data)}\n"
    return "".join(f"{_toml_key(k)} = {_toml_value(v)}\n" for k, v in data.items())


@st.composite
def byte_damage(draw: Any, blob: bytes) -> bytes:
    """Mostly the bytes as they are; sometimes not UTF-8, truncated or empty."""
    what = draw(st.sampled_from(["none"] * 8 + ["bad-utf8", "truncate", "empty", "bom", "nul"]))
    if what == "none" or not blob:
        return blob
    at = draw(st.integers(0, len(blob)))
    if what == "bad-utf8":
        junk = draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80\x80", b"\xfe\xff"]))
        return blob[:at] + junk + blob[at:]
    if what == "truncate":
        return blob[:at]
    if what == "bom":
        return b"\xef\xbb\xbf" + blob
    if what == "nul":
        return blob[:at] + b"\x00" + blob[at:]
    return b""


def damage() -> st.SearchStrategy[tuple[Any, ...]]:
    """A recipe (short, so that a failing case prints readably) for :func:`apply_damage`."""
    at = st.integers(0, 2**31)
    return st.one_of(
        st.tuples(st.just("truncate"), at),
        st.tuples(st.just("flip"), st.lists(st.tuples(at, st.integers(0, 255)), min_size=1, max_size=20)),
        st.tuples(st.just("header"), st.binary(min_size=1, max_size=100)),
        st.tuples(st.just("text"), st.text(max_size=200)),
        st.tuples(st.just("append"), st.binary(min_size=1, max_size=4096)),
        st.tuples(st.just("zeros"), at),
        st.tuples(st.just("empty")),
    )


def apply_damage(base: bytes, recipe: tuple[Any, ...]) -> bytes:
    """Binary damage (journals, images): truncation, flipped bytes, text, zeros, nothing."""
    what = recipe[0]
    if what == "truncate":
        return base[: recipe[1] % len(base)]
    if what == "flip":
        data = bytearray(base)
        for at, value in recipe[1]:
            data[at % len(data)] = value
        return bytes(data)
    if what == "header":
        return recipe[1] + base[len(recipe[1]) :]
    if what == "text":
        return str(recipe[1]).encode("utf-8")
    if what == "append":
        return base + recipe[1]
    if what == "zeros":
        start = recipe[1] % len(base)
        return base[:start] + b"\x00" * min(4096, len(base) - start) + base[start + 4096 :]
    return b""


def count(name: str) -> None:
    TRIED[name] = TRIED.get(name, 0) + 1
