"""Consistency while the secret is hidden, checked against brute force."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from pegwatch.rules.codes import EMPTY, Feedback, score
from pegwatch.rules.consistency import analyse
from pegwatch.rules.record import Row
from pegwatch.rules.variants import Variant, get_variant


def small(blanks: bool = False) -> Variant:
    base = get_variant("lego")
    return Variant(
        name="tiny", colours=4, palette=("a", "b", "c", "d"), holes=3, rows=8, blanks=blanks,
        repeats=True, scoring=base.scoring, clock_preset=None, failure_attempts=9,
        games_per_match=2,
    )


def brute(rows: list[Row], variant: Variant) -> tuple[int, tuple[int, ...]]:
    symbols = list(variant.palette) + ([EMPTY] if variant.blanks else [])
    codes = list(itertools.product(symbols, repeat=variant.holes))
    marked = [(i, r) for i, r in enumerate(rows, start=1) if r.marks is not None]

    def fits(code: tuple[str, ...], skip: int) -> bool:
        return all(score(code, r.guess) == r.marks for i, r in marked if i != skip)

    consistent = sum(fits(c, 0) for c in codes)
    suspects: tuple[int, ...] = ()
    if consistent == 0:
        suspects = tuple(i for i, _ in marked if any(fits(c, i) for c in codes))
    return consistent, suspects


@settings(max_examples=40, deadline=None)
@given(st.booleans(), st.data())
def test_agrees_with_brute_force(blanks: bool, data: st.DataObject) -> None:
    """The count of codes that agree with every marked row, and the rows whose
    removal alone restores consistency, equal a brute-force search."""
    variant = small(blanks)
    symbols = list(variant.palette) + ([EMPTY] if blanks else [])
    code = st.lists(st.sampled_from(symbols), min_size=3, max_size=3).map(tuple)
    secret = data.draw(code)
    guesses = data.draw(st.lists(code, min_size=0, max_size=6))
    rows = [Row(g, score(secret, g)) for g in guesses]
    # Sometimes corrupt one or two rows with arbitrary marks.
    for _ in range(data.draw(st.integers(0, 2))):
        if rows:
            i = data.draw(st.integers(0, len(rows) - 1))
            b = data.draw(st.integers(0, 3))
            w = data.draw(st.integers(0, 3 - b))
            rows[i] = Row(rows[i].guess, Feedback(b, w))
    report = analyse(rows, variant)
    assert (report.consistent, report.suspect_rows) == brute(rows, variant)
    assert report.possible == len(symbols) ** 3
    # first_failed: codes agreeing with every row before a row, not with it.
    first: dict[int, int] = {}
    for c in itertools.product(symbols, repeat=3):
        wrong = [i for i, r in enumerate(rows, start=1) if score(c, r.guess) != r.marks]
        if wrong:
            first[wrong[0]] = first.get(wrong[0], 0) + 1
    assert report.first_failed == tuple(sorted(first.items()))


def test_rows_after_an_all_black_mark_are_evidence() -> None:
    """Seed 000 (issue 12, example 1): row 3 repeats row 2's guess and 4
    blacks after it; kept as evidence, it leaves row 1 the only suspect."""
    variant = get_variant("mso")
    rows = [Row(("white", "black", "yellow", "green"), Feedback(0, 0)),
            Row(("red", "green", "orange", "green"), Feedback(4, 0)),
            Row(("red", "green", "orange", "green"), Feedback(4, 0))]
    assert analyse(rows, variant).suspect_rows == (1,)
    assert analyse(rows[:2], variant).suspect_rows == (1, 2)


def test_correct_rows_keep_the_secret_consistent() -> None:
    variant = get_variant("mso-5")
    secret = ("red", "red", "blue", "pink", "black")
    guesses = [("red", "green", "blue", "yellow", "white"), ("pink", "pink", "red", "red", "orange"),
               ("black", "blue", "red", "red", "pink")]
    report = analyse([Row(g, score(secret, g)) for g in guesses], variant)
    assert report.consistent >= 1 and report.suspect_rows == ()


def test_single_mismark_is_among_the_suspects() -> None:
    variant = get_variant("mso")
    secret = ("red", "red", "yellow", "blue")
    guesses = [("red", "green", "blue", "yellow"), ("red", "red", "orange", "orange"),
               ("white", "red", "yellow", "blue"), ("red", "red", "yellow", "black")]
    rows = [Row(g, score(secret, g)) for g in guesses]
    rows[1] = Row(rows[1].guess, Feedback(0, 0))
    report = analyse(rows, variant)
    assert report.consistent == 0 and 2 in report.suspect_rows


def test_unmarked_rows_and_unusable_pegs() -> None:
    """Unmarked rows are ignored; a blank where blanks are not allowed, or a
    ninth colour, never matches any code."""
    variant = get_variant("mso")
    assert analyse([Row(("red",) * 4, None)], variant).consistent == 8**4
    rows = [Row(("red", EMPTY, EMPTY, EMPTY), Feedback(1, 0))]
    assert analyse(rows, variant).consistent == 8**3  # red in hole 1, anything else
    many = [Row((f"c{i}", f"c{i}", f"c{i}", f"c{i}"), Feedback(0, 0)) for i in range(9)]
    assert analyse(many, variant).consistent == 0


@settings(max_examples=30, deadline=None)
@given(st.data())
def test_the_true_secret_keeps_a_single_mismark_a_suspect(data: st.DataObject) -> None:
    """With one mis-marked row the real secret fails that row alone, so the
    row is always a suspect when no code is consistent (8 x 5 board)."""
    variant = get_variant("mso-5")
    code = st.lists(st.sampled_from(list(variant.palette)), min_size=5, max_size=5).map(tuple)
    secret = data.draw(code)
    guesses = data.draw(st.lists(code, min_size=1, max_size=12))
    rows = [Row(g, score(secret, g)) for g in guesses]
    assert analyse(rows, variant).consistent >= 1
    k = data.draw(st.integers(0, len(rows) - 1))
    b = data.draw(st.integers(0, 5))
    w = data.draw(st.integers(0, 5 - b))
    if Feedback(b, w) == rows[k].marks:
        return
    rows[k] = Row(rows[k].guess, Feedback(b, w))
    report = analyse(rows, variant)
    assert report.consistent >= 1 or k + 1 in report.suspect_rows
