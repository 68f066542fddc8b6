"""Mastermind variants as data.

The presets live in ``rules/data/variants.toml`` so that an arbiter can add
one without touching code: write a TOML file with the same keys and load it
with :func:`load_variants` (the CLI takes it as ``--variants FILE``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cache
from importlib import resources
from pathlib import Path

from pegwatch.rules.codes import EMPTY
from pegwatch.rules.errors import BadInput
from pegwatch.rules.textfile import MIB, parse_toml, read_text

__all__ = [
    "Scoring",
    "UnknownVariantError",
    "Variant",
    "VariantError",
    "get_variant",
    "load_variants",
    "parse_variants",
    "variant_names",
]

logger = logging.getLogger(__name__)


class Scoring(Enum):
    """How a game is scored."""

    MSO = "mso"
    """Attempts per codebreaker, 1 VP to the fewer attempts (seed 000)."""
    HOME = "home"
    """The codemaker scores a point per row placed (seeds 002, 003)."""


class VariantError(BadInput):
    """A variant preset file is malformed."""


class UnknownVariantError(BadInput):
    """No preset has the requested name; the message lists the known ones."""


@dataclass(frozen=True)
class Variant:
    """The rules of one Mastermind variant.

    ``colours`` counts peg colours without the blank; with ``blanks`` the
    empty hole is one more symbol, so the code space is
    ``(colours + 1) ** holes``.
    """

    name: str
    colours: int
    palette: tuple[str, ...]
    holes: int
    rows: int
    blanks: bool
    repeats: bool
    scoring: Scoring
    clock_preset: str | None
    failure_attempts: int
    games_per_match: int
    mismark_bonus_points: int = 0
    source: str = ""

    @property
    def symbols(self) -> int:
        """Distinct symbols a hole may hold: the colours, plus one for a blank."""
        return self.colours + (1 if self.blanks else 0)

    def to_json(self) -> dict[str, object]:
        """The preset as plain data, in the TOML file's keys."""
        return {
            "name": self.name,
            "source": self.source,
            "colours": self.colours,
            "palette": list(self.palette),
            "holes": self.holes,
            "rows": self.rows,
            "blanks": self.blanks,
            "repeats": self.repeats,
            "scoring": self.scoring.value,
            "clock_preset": self.clock_preset,
            "failure_attempts": self.failure_attempts,
            "games_per_match": self.games_per_match,
            "mismark_bonus_points": self.mismark_bonus_points,
        }


#: A presets file larger than this is refused before it is parsed.
MAX_PRESET_FILE_BYTES = 1 * MIB

_INT_KEYS = {
    "colours": (1, 254),
    "holes": (1, 10),
    "rows": (1, 100),
    "failure_attempts": (1, 101),
    "games_per_match": (1, 100),
    "mismark_bonus_points": (0, 1000),
}
_REQUIRED = ("colours", "holes", "rows", "scoring")
_KNOWN_KEYS = {
    *_INT_KEYS,
    "source",
    "palette",
    "blanks",
    "repeats",
    "scoring",
    "clock_preset",
}


def _variant_from_table(name: str, table: object, where: str) -> Variant:
    here = f"{where}: [{name}]"
    if not isinstance(table, dict):
        raise VariantError(f"{here}: expected a table of keys, got {table!r}")
    unknown = sorted(set(table) - _KNOWN_KEYS)
    if unknown:
        raise VariantError(
            f"{here}: unknown key {unknown[0]!r}; known keys: {', '.join(sorted(_KNOWN_KEYS))}"
        )
    for key in _REQUIRED:
        if key not in table:
            raise VariantError(f"{here}: missing key {key!r}")
    ints: dict[str, int] = {}
    for key, (low, high) in _INT_KEYS.items():
        if key not in table:
            continue
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise VariantError(f"{here}.{key}: expected an integer {low}..{high}, got {value!r}")
        ints[key] = value
    bools: dict[str, bool] = {}
    for key, default in (("blanks", False), ("repeats", True)):
        value = table.get(key, default)
        if not isinstance(value, bool):
            raise VariantError(f"{here}.{key}: expected true or false, got {value!r}")
        bools[key] = value
    scoring_text = table["scoring"]
    try:
        scoring = Scoring(scoring_text)
    except ValueError:
        allowed = ", ".join(repr(s.value) for s in Scoring)
        raise VariantError(
            f"{here}.scoring: expected one of {allowed}, got {scoring_text!r}"
        ) from None
    palette_raw = table.get("palette", [])
    if not isinstance(palette_raw, list) or not all(
        isinstance(c, str) and c for c in palette_raw
    ):
        raise VariantError(f"{here}.palette: expected a list of colour names")
    palette = tuple(palette_raw)
    if palette and len(palette) != ints["colours"]:
        raise VariantError(
            f"{here}.palette: {len(palette)} names for {ints['colours']} colours"
        )
    if EMPTY in palette:
        raise VariantError(f"{here}.palette: {EMPTY!r} is the blank, not a colour; use blanks = true")
    clock = table.get("clock_preset")
    if clock is not None and not (isinstance(clock, str) and clock):
        raise VariantError(f"{here}.clock_preset: expected a preset name, got {clock!r}")
    source = table.get("source", "")
    if not isinstance(source, str):
        raise VariantError(f"{here}.source: expected a string, got {source!r}")
    if not bools["repeats"] and ints["colours"] + bools["blanks"] < ints["holes"]:
        raise VariantError(f"{here}: without repeats, {ints['holes']} holes need as many colours")
    rows = ints["rows"]
    return Variant(
        name=name,
        colours=ints["colours"],
        palette=palette,
        holes=ints["holes"],
        rows=rows,
        blanks=bools["blanks"],
        repeats=bools["repeats"],
        scoring=scoring,
        clock_preset=clock,
        failure_attempts=ints.get("failure_attempts", rows + 1),
        games_per_match=ints.get("games_per_match", 2),
        mismark_bonus_points=ints.get("mismark_bonus_points", 0),
        source=source,
    )


def parse_variants(text: str, *, source: str = "variants.toml") -> dict[str, Variant]:
    """Parse TOML text holding one ``[name]`` table per preset."""
    data = parse_toml(text, source=source, error=VariantError, syntax="malformed TOML")
    return {name: _variant_from_table(name, table, source) for name, table in data.items()}


def load_variants(path: str | Path) -> dict[str, Variant]:
    """Read an arbiter's own preset file; pass the result to :func:`get_variant`."""
    text = read_text(path, limit=MAX_PRESET_FILE_BYTES, what="a TOML presets file", error=VariantError)
    return parse_variants(text, source=str(path))


@cache
def _builtin() -> dict[str, Variant]:
    text = resources.files("pegwatch.rules.data").joinpath("variants.toml").read_text(encoding="utf-8")
    return parse_variants(text, source="rules/data/variants.toml")


def variant_names(extra: Mapping[str, Variant] | None = None) -> tuple[str, ...]:
    """Names of the built-in presets (and of ``extra`` ones), sorted."""
    return tuple(sorted({*_builtin(), *(extra or {})}))


def get_variant(name: str, extra: Mapping[str, Variant] | None = None) -> Variant:
    """The preset called ``name``; ``extra`` presets take precedence."""
    if extra and name in extra:
        return extra[name]
    try:
        return _builtin()[name]
    except (KeyError, TypeError):
        raise UnknownVariantError(
            f"unknown rules preset {name!r}; known presets: {', '.join(variant_names(extra))}"
        ) from None
