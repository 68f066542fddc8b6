"""Reading the files pegwatch is given, so that no file can crash the reader.

Every JSON and TOML file pegwatch reads (records, truth files, calibrations,
the table configuration, board profiles, rules and clock presets) goes
through :func:`read_text` and :func:`parse_json` / :func:`parse_toml`. They
turn every way a file can be wrong into the caller's
:class:`~pegwatch.rules.errors.BadInput` subclass, with a one-line message
that starts with the file's name as given:

* a file above the format's size limit is refused before it is read;
* bytes that are not UTF-8, and text with unpaired surrogates;
* malformed JSON or TOML (with the line and column);
* nesting deeper than :data:`MAX_DEPTH` levels (no ``RecursionError``);
* integers beyond 64 bits (no "Exceeds the limit (4300 digits)"), and in
  JSON the non-standard ``NaN`` and ``Infinity`` and numbers too large for a
  float.

The checks after parsing name the place in the data (``rows[2].black``)
where there is one. What the values mean is the caller's business.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from pegwatch.rules.errors import BadInput

__all__ = [
    "MAX_DEPTH",
    "MIB",
    "parse_json",
    "parse_toml",
    "read_bytes",
    "read_stdin_text",
    "read_text",
    "size_text",
]

MIB: Final = 1024 * 1024
#: Deepest nesting of arrays and tables/objects any pegwatch file needs, with room to spare.
MAX_DEPTH: Final = 64
#: Integers are 64-bit signed, as TOML says; nothing pegwatch reads needs more.
_INT_LIMIT: Final = 2**63

ErrorType = Callable[[str], BadInput]


def size_text(size: int) -> str:
    """``10 MiB``, ``512 KiB`` or ``300 bytes``."""
    if size >= MIB and size % MIB == 0:
        return f"{size // MIB} MiB"
    if size >= 1024 and size % 1024 == 0:
        return f"{size // 1024} KiB"
    return f"{size} bytes"


def _decode(data: bytes, name: str, what: str, error: ErrorType) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{name}: not UTF-8 text (byte {exc.start}); expected {what}") from None


def read_bytes(
    path: str | os.PathLike[str],
    *,
    limit: int,
    what: str,
    error: ErrorType = BadInput,
    name: str | None = None,
) -> bytes:
    """The bytes of ``path``, refused (``error``) above ``limit`` bytes
    before they are read.

    ``what`` names the format in messages ("a JSON record"); ``name`` is how
    messages show the file (default: the path as given).
    """
    shown = os.fspath(path) if name is None else name
    p = Path(path)
    try:
        if p.is_dir():
            raise error(f"{shown}: is a directory, not {what}")
        with p.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                raise error(f"{shown}: {size} bytes is too large for {what}; the limit is {size_text(limit)}")
            data = f.read(limit + 1)
    except FileNotFoundError:
        raise error(f"{shown}: no such file") from None
    except OSError as exc:
        raise error(f"{shown}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise error(f"{shown}: too large for {what}; the limit is {size_text(limit)}")
    return data


def read_text(
    path: str | os.PathLike[str],
    *,
    limit: int,
    what: str,
    error: ErrorType = BadInput,
    name: str | None = None,
) -> str:
    """The UTF-8 text of ``path``, as :func:`read_bytes` refuses or reads it."""
    data = read_bytes(path, limit=limit, what=what, error=error, name=name)
    return _decode(data, os.fspath(path) if name is None else name, what, error)


def read_stdin_text(*, limit: int, what: str, error: ErrorType = BadInput, name: str = "<stdin>") -> str:
    """Standard input as UTF-8 text, refused above ``limit`` bytes."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text stream put in its place (tests)
        chunk = sys.stdin.read(limit + 1)
        data = chunk.encode("utf-8", "surrogatepass")
    else:
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise error(f"{name}: too large for {what}; the limit is {size_text(limit)}")
    return _decode(data, name, what, error)


class _Refused:
    """A JSON token the hooks below refuse; the tree check reports it with its place."""

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


def _json_int(text: str) -> int | _Refused:
    digits = len(text.lstrip("-"))
    if digits > 19:  # JSON has no leading zeros: 20 digits are beyond 64 bits
        return _Refused(f"the integer of {digits} digits is too large (at most 64 bits)")
    return int(text)


def _json_float(text: str) -> float | _Refused:
    value = float(text)
    if not math.isfinite(value):
        shown = text if len(text) <= 24 else text[:21] + "..."
        return _Refused(f"the number {shown} is too large")
    return value


def _json_constant(text: str) -> _Refused:
    return _Refused(f"{text} is not a JSON number")


def _join(path: str, key: object) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    text = str(key)
    if text.isidentifier() or text.replace("-", "_").isidentifier():
        return f"{path}.{text}" if path else text
    return f"{path}[{json.dumps(text)[:40]}]"


#: A value's place as links ``(parent's place, key)``: made into text only for an error (a hub
#: parses a thousand messages a second, nearly all of them fine).
_Place = tuple[Any, Any] | None


def _where(source: str, place: _Place) -> str:
    keys: list[Any] = []
    while place is not None:
        place, key = place
        keys.append(key)
    path = ""
    for key in reversed(keys):
        path = _join(path, key)
    return f"{source}: {path}" if path else source


def _check_scalar(value: Any, place: _Place, source: str, error: ErrorType) -> None:
    if isinstance(value, _Refused):
        raise error(f"{_where(source, place)}: {value.why}")
    if isinstance(value, str):
        if not value.isascii():
            _check_string(value, _where(source, place), error)
    elif isinstance(value, int) and not isinstance(value, bool) and not -_INT_LIMIT <= value < _INT_LIMIT:
        raise error(f"{_where(source, place)}: the integer is too large (at most 64 bits)")


def _check_tree(data: Any, source: str, error: ErrorType) -> None:
    """Refuse deep nesting, 64-bit overflow, refused tokens and unpaired surrogates."""
    stack: list[tuple[Any, _Place, int]] = [(data, None, 0)]
    while stack:
        value, place, depth = stack.pop()
        items: Any
        if isinstance(value, dict):
            items = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            _check_scalar(value, place, source, error)
            continue
        if depth >= MAX_DEPTH:
            raise error(f"{_where(source, place)}: nested more than {MAX_DEPTH} levels deep")
        for key, item in items:
            if isinstance(key, str) and not key.isascii():
                _check_string(key, _where(source, place), error)
            if isinstance(item, dict | list):
                stack.append((item, (place, key), depth + 1))
            else:
                _check_scalar(item, (place, key), source, error)


def _check_string(text: str, where: str, error: ErrorType) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise error(f"{where}: a string holds an unpaired surrogate ({text[exc.start]!a})") from None


def parse_json(
    text: str,
    *,
    source: str,
    error: ErrorType = BadInput,
    syntax: str = "malformed JSON",
) -> Any:
    """Decode JSON ``text`` read from ``source``; every fault is one ``error``.

    A syntax error reads ``SOURCE:LINE:COL: {syntax}: what``.
    """
    try:
        data = json.loads(
            text, parse_int=_json_int, parse_float=_json_float, parse_constant=_json_constant
        )
    except json.JSONDecodeError as exc:
        raise error(f"{source}:{exc.lineno}:{exc.colno}: {syntax}: {exc.msg}") from None
    except RecursionError:
        raise error(f"{source}: nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:  # pragma: no cover - the hooks above catch what json lets through
        raise error(f"{source}: {syntax}: {exc}") from None
    _check_tree(data, source, error)
    return data


def parse_toml(
    text: str,
    *,
    source: str,
    error: ErrorType = BadInput,
    syntax: str = "not valid TOML",
) -> dict[str, Any]:
    """Decode TOML ``text`` read from ``source``; every fault is one ``error``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{source}: {syntax}: {exc}") from None
    except RecursionError:
        raise error(f"{source}: nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as exc:
        # int() of a literal of thousands of digits: Python's own limit.
        why = "an integer is too large (at most 64 bits)" if "digits" in str(exc) else str(exc)
        raise error(f"{source}: {syntax}: {why}") from None
    _check_tree(data, source, error)
    return data
