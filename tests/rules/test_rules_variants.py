"""Variant presets are data (rules/data/variants.toml), with the seeds' numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from pegwatch.rules.errors import PegwatchError
from pegwatch.rules.variants import (
    Scoring,
    UnknownVariantError,
    VariantError,
    get_variant,
    load_variants,
    parse_variants,
    variant_names,
)


def test_all_presets_are_there() -> None:
    assert set(variant_names()) >= {
        "mso", "mso-5", "hasbro", "hasbro-advanced", "lego", "lego-8", "lego-blanks",
    }


def test_mso() -> None:
    """Seed 000: "Eight colours are in use, no blanks." "The code may include
    repeated colours." "Each match consists of two games." 12 lines."""
    v = get_variant("mso")
    assert (v.colours, v.holes, v.rows, v.blanks, v.repeats) == (8, 4, 12, False, True)
    assert (v.scoring, v.failure_attempts, v.games_per_match) == (Scoring.MSO, 13, 2)
    assert v.clock_preset == "mso-mastermind"
    assert len(v.palette) == 8
    assert get_variant("mso-5").holes == 5


def test_hasbro() -> None:
    """Seed 002: "any combination of the eight coloured Code pegs", "up to 12
    chances"; the advanced game "you have the equivalent of nine colours"."""
    v = get_variant("hasbro")
    assert (v.colours, v.holes, v.rows, v.blanks, v.scoring) == (8, 4, 12, False, Scoring.HOME)
    assert v.mismark_bonus_points == 3 and v.clock_preset is None
    adv = get_variant("hasbro-advanced")
    assert adv.blanks and adv.symbols == 9


def test_lego() -> None:
    """Seed 003: "iedere combinatie van de 6 verschillende kleuren", "maximaal
    10 kansen"; variation A "nu keuze is uit 8 kleuren"; variation B "in
    feite negen kleuren"."""
    v = get_variant("lego")
    assert (v.colours, v.holes, v.rows, v.scoring) == (6, 4, 10, Scoring.HOME)
    assert get_variant("lego-8").colours == 8
    b = get_variant("lego-blanks")
    assert b.blanks and b.symbols == 9


def test_unknown_preset_lists_the_known_ones() -> None:
    with pytest.raises(UnknownVariantError, match=r"unknown rules preset 'go'; known presets: hasbro, "):
        get_variant("go")
    assert issubclass(UnknownVariantError, PegwatchError)


def test_arbiter_presets_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "club.toml"
    path.write_text(
        '[club]\nsource = "our club"\ncolours = 6\nholes = 5\nrows = 10\n'
        'blanks = true\nscoring = "mso"\nclock_preset = "mso-mastermind"\n'
    )
    extra = load_variants(path)
    v = get_variant("club", extra)
    assert (v.colours, v.holes, v.rows, v.symbols, v.failure_attempts) == (6, 5, 10, 7, 11)
    assert "club" in variant_names(extra)
    assert get_variant("mso", extra).name == "mso"
    assert v.to_json()["scoring"] == "mso"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[x]\ncolours = 8\n", "f.toml: [x]: missing key 'holes'"),
        ('[x]\ncolours = 8\nholes = 4\nrows = 12\nscoring = "chess"\n', "[x].scoring: expected one of"),
        ('[x]\ncolours = 0\nholes = 4\nrows = 12\nscoring = "mso"\n', "[x].colours: expected an integer 1..254, got 0"),
        ('[x]\ncolours = 8\nholes = 4\nrows = 12\nscoring = "mso"\nflavour = 1\n', "[x]: unknown key 'flavour'"),
        ('[x]\ncolours = 2\npalette = ["a"]\nholes = 4\nrows = 12\nscoring = "mso"\n', "[x].palette: 1 names for 2 colours"),
        ("[x\n", "f.toml: malformed TOML"),
    ],
)
def test_bad_preset_files(text: str, message: str) -> None:
    with pytest.raises(VariantError) as info:
        parse_variants(text, source="f.toml")
    assert message in str(info.value)
    assert str(info.value).startswith("f.toml")


def test_clock_presets_exist() -> None:
    """Seed 000 TIME: "The Codebreaker has 8 minutes. The Codemaker has 4
    minutes.": the MSO presets name the clock preset that holds them."""
    clock = pytest.importorskip("pegwatch.rules.clock")
    names = clock.preset_names()
    for name in variant_names():
        preset = get_variant(name).clock_preset
        assert preset is None or preset in names, (name, preset)
