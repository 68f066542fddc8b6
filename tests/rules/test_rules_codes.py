"""score(): the standard definition, and the vectorised path agreeing with it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pegwatch.rules.codes import (
    EMPTY,
    NO_COLOUR,
    CodeLengthError,
    Feedback,
    all_codes,
    colour_counts,
    score,
    score_against_all,
)
from pegwatch.rules.errors import PegwatchError

COLOURS = ["red", "green", "blue", "yellow", "white", "black", "orange", EMPTY]


def codes(holes: int) -> st.SearchStrategy[tuple[str, ...]]:
    return st.lists(st.sampled_from(COLOURS), min_size=holes, max_size=holes).map(tuple)


pairs = st.integers(1, 6).flatmap(lambda h: st.tuples(codes(h), codes(h)))


def test_hasbro_figure_example() -> None:
    """Seed 002: red indicator pegs for "correct colour in the correct
    position", white for "correct colour in an incorrect position"."""
    secret = ("red", "red", "yellow", "blue")
    assert score(secret, ("red", "green", "blue", "yellow")) == Feedback(1, 2)
    assert score(secret, ("red", "red", "yellow", "blue")) == Feedback(4, 0)
    assert score(secret, ("blue", "blue", "blue", "blue")) == Feedback(1, 0)
    # One red in the guess cannot be matched twice.
    assert score(secret, ("yellow", "yellow", "red", "green")) == Feedback(0, 2)


def test_empty_hole_counts_as_a_colour() -> None:
    """Seed 002 advanced game: "treating a vacant hole as you would a
    coloured peg"."""
    secret = ("red", EMPTY, EMPTY, "blue")
    assert score(secret, (EMPTY, "red", EMPTY, "green")) == Feedback(1, 2)


def test_lengths_must_match() -> None:
    with pytest.raises(CodeLengthError, match="4-peg code"):
        score(("red",) * 4, ("red",) * 5)
    assert issubclass(CodeLengthError, PegwatchError)


@settings(max_examples=200)
@given(pairs)
def test_score_is_symmetric(pair: tuple[tuple[str, ...], tuple[str, ...]]) -> None:
    a, b = pair
    assert score(a, b) == score(b, a)


@settings(max_examples=200)
@given(pairs)
def test_black_plus_white_never_exceeds_holes(pair: tuple[tuple[str, ...], tuple[str, ...]]) -> None:
    a, b = pair
    fb = score(a, b)
    assert min(fb) >= 0
    assert fb.black + fb.white <= len(a)
    assert (fb == Feedback(len(a), 0)) == (a == b)


@settings(max_examples=200)
@given(pairs, st.permutations(COLOURS))
def test_renaming_colours_changes_nothing(
    pair: tuple[tuple[str, ...], tuple[str, ...]], perm: list[str]
) -> None:
    rename = dict(zip(COLOURS, perm, strict=True))
    a, b = pair
    assert score(a, b) == score(tuple(rename[c] for c in a), tuple(rename[c] for c in b))


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from([(3, 2), (4, 3), (6, 4), (8, 4), (5, 5)]).flatmap(
        lambda size: st.tuples(
            st.just(size),
            st.lists(
                st.one_of(st.integers(0, size[0] - 1), st.just(NO_COLOUR)),
                min_size=size[1],
                max_size=size[1],
            ),
        )
    )
)
def test_vectorised_path_agrees_with_scalar(case: tuple[tuple[int, int], list[int]]) -> None:
    (colours, holes), guess = case
    table = all_codes(colours, holes)
    blacks, whites = score_against_all(guess, colours, holes)
    names = [f"c{i}" for i in range(colours)]
    guess_names = ["never" if g == NO_COLOUR else names[g] for g in guess]
    # Spot-check a sample of codes (all of them for the small sizes).
    step = max(1, len(table) // 500)
    for i in range(0, len(table), step):
        code = tuple(names[c] for c in table[i])
        assert (blacks[i], whites[i]) == tuple(score(code, guess_names)), (code, guess_names)


def test_all_codes_shape_order_and_counts() -> None:
    table = all_codes(3, 2)
    assert table.shape == (9, 2)
    assert table.tolist()[:4] == [[0, 0], [0, 1], [0, 2], [1, 0]]
    assert len({tuple(r) for r in all_codes(8, 4).tolist()}) == 8**4
    counts = colour_counts(3, 2)
    assert counts.shape == (9, 3)
    assert counts[1].tolist() == [1, 1, 0]
    assert np.all(counts.sum(axis=1) == 2)
    assert not table.flags.writeable


def test_vectorised_path_rejects_bad_input() -> None:
    with pytest.raises(CodeLengthError):
        score_against_all([0, 1, 2], 8, 4)
    with pytest.raises(PegwatchError, match="outside"):
        score_against_all([0, 1, 2, 9], 8, 4)
    with pytest.raises(PegwatchError, match="at most"):
        all_codes(10, 7)
