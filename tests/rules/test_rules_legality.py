"""Legal guesses (seed 004, Rules of Competition)."""

from __future__ import annotations

import pytest

from pegwatch.rules.codes import EMPTY
from pegwatch.rules.legality import IllegalGuessError, check_guess
from pegwatch.rules.variants import get_variant


def test_legal_guess_passes() -> None:
    check_guess(("red", "red", "blue", "green"), get_variant("mso"))
    check_guess(("red", EMPTY, EMPTY, "green"), get_variant("hasbro-advanced"))


def test_incomplete_row_is_illegal() -> None:
    """Seed 000: "Eight colours are in use, no blanks": an empty hole in an
    MSO guess is an incomplete row."""
    with pytest.raises(IllegalGuessError, match="incomplete: hole 2, 4 empty, and mso allows no blanks"):
        check_guess(("red", EMPTY, "blue", EMPTY), get_variant("mso"))


def test_wrong_length_is_illegal() -> None:
    with pytest.raises(IllegalGuessError, match="has 3 pegs; the mso-5 board has 5 holes"):
        check_guess(("red",) * 3, get_variant("mso-5"))


def test_more_colours_than_the_variant_has() -> None:
    """Seed 003: "iedere combinatie van de 6 verschillende kleuren": a
    seventh colour cannot be on a 6-colour board."""
    seen = {"a", "b", "c", "d", "e"}
    check_guess(("a", "b", "c", "f"), get_variant("lego"), colours_seen=seen)
    with pytest.raises(IllegalGuessError, match="brings the colours used to 7"):
        check_guess(("a", "f", "g", "a"), get_variant("lego"), colours_seen=seen)
