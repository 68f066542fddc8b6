"""Rows known only within bounds (issue 14, "judge with what is known").

A doubtful hole is a set of colours, a doubtful key count a range. The
judge proves a mis-mark only when every completion disagrees, clears the
row when none does, and otherwise names the holes that decide. Each claim
is checked here against brute force over every completion (and, for the
hidden-secret check, every code) of a small board.
"""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pegwatch.device.cli import main
from pegwatch.rules.bounded import BoundedRow, CountRange, Judgement, judge_row
from pegwatch.rules.bounded_consistency import Consistency, analyse_bounded
from pegwatch.rules.codes import EMPTY, UNKNOWN, Feedback, score
from pegwatch.rules.judge import judge_game
from pegwatch.rules.record import GameRecord, RecordError, Row, parse_record
from pegwatch.rules.variants import Scoring, Variant, get_variant

SECRET = ("red", "red", "yellow", "blue")


def _tiny(blanks: bool) -> Variant:
    return Variant(
        name="tiny", colours=3, palette=("a", "b", "c"), holes=3, rows=5, blanks=blanks,
        repeats=True, scoring=Scoring.MSO, clock_preset=None, failure_attempts=6,
        games_per_match=2,
    )


def _symbols(variant: Variant) -> list[str]:
    return list(variant.palette) + ([EMPTY] if variant.blanks else [])


def _completions(row: BoundedRow, variant: Variant) -> list[tuple[tuple[str, ...], Feedback]]:
    """Every completion by brute force, with real colour names."""
    anything = _symbols(variant)
    holes = [anything if h is None else list(h) for h in row.holes]
    return [(guess, pair) for guess in itertools.product(*holes)
            for pair in row.marks_pairs(variant.holes)]


def _wrong(secret: tuple[str, ...], guess: tuple[str, ...], pair: Feedback, variant: Variant) -> bool:
    incomplete = not variant.blanks and EMPTY in guess
    return not incomplete and score(secret, guess) != pair


@st.composite
def bounded_rows(draw: st.DrawFn, variant: Variant) -> BoundedRow:
    names = _symbols(variant) + ([] if variant.blanks else [EMPTY] * draw(st.integers(0, 1)))
    hole = st.one_of(
        st.sampled_from(names).map(lambda c: (c,)),
        st.lists(st.sampled_from(names), min_size=2, max_size=3, unique=True).map(tuple),
        st.none(),
    )
    holes = tuple(draw(hole) for _ in range(variant.holes))
    b_lo = draw(st.integers(0, variant.holes))
    b_hi = draw(st.integers(b_lo, min(variant.holes, b_lo + 1)))
    w_lo = draw(st.integers(0, variant.holes - b_lo))
    w_hi = draw(st.integers(w_lo, min(variant.holes - b_lo, w_lo + 1)))
    return BoundedRow(holes, CountRange(b_lo, b_hi), CountRange(w_lo, w_hi))


@settings(max_examples=200, deadline=None)
@given(st.booleans(), st.data())
def test_judge_row_agrees_with_brute_force(blanks: bool, data: st.DataObject) -> None:
    variant = _tiny(blanks)
    secret = data.draw(st.tuples(*[st.sampled_from(_symbols(variant))] * variant.holes))
    row = data.draw(bounded_rows(variant))
    got = judge_row(secret, row, variant)
    every = _completions(row, variant)
    wrong = [_wrong(secret, g, p, variant) for g, p in every]
    want = (Judgement.MISMARK if all(wrong) else Judgement.CORRECT if not any(wrong)
            else Judgement.UNSURE)
    assert got.verdict is want
    # A hole decides when two completions differing only there differ.
    outcome = {(g, p): _wrong(secret, g, p, variant) for g, p in every}
    deciding = set()
    for (g, p), w in outcome.items():
        for (h, q), v in outcome.items():
            if p == q and w != v and sum(a != b for a, b in zip(g, h, strict=True)) == 1:
                deciding.add(next(i + 1 for i in range(len(g)) if g[i] != h[i]))
    assert set(got.deciding_holes) == (deciding if want is Judgement.UNSURE else set())
    assert got.may_be_code == any(g == secret for g, _ in every)


@settings(max_examples=120, deadline=None)
@given(st.booleans(), st.data())
def test_the_hidden_secret_check_claims_only_what_every_completion_shows(
    blanks: bool, data: st.DataObject
) -> None:
    """Inconsistent only when no code fits any completion; consistent only
    when a code fits every completion; the upper count is exact."""
    variant = _tiny(blanks)
    n_rows = data.draw(st.integers(1, 3))
    bounded = [data.draw(bounded_rows(variant)) for _ in range(n_rows)]
    rows = [Row(b.guess, None, marks_unread=UNKNOWN, bounds=b) for b in bounded]
    got = analyse_bounded(rows, variant)
    codes = list(itertools.product(_symbols(variant), repeat=variant.holes))

    def fits(code: tuple[str, ...], row: BoundedRow, guess: tuple[str, ...], pair: Feedback) -> bool:
        return not _wrong(code, guess, pair, variant)

    def may_fit(code: tuple[str, ...], row: BoundedRow) -> bool:
        return any(fits(code, row, g, p) for g, p in _completions(row, variant))

    upper = sum(all(may_fit(c, r) for r in bounded) for c in codes)
    assert got.report.consistent == upper
    joint = itertools.product(*[_completions(r, variant) for r in bounded])
    always = all(any(all(fits(c, r, g, p) for r, (g, p) in zip(bounded, combo, strict=True))
                     for c in codes) for combo in joint)
    if got.verdict is Consistency.INCONSISTENT:
        assert upper == 0
    elif got.verdict is Consistency.CONSISTENT:
        assert always
    else:
        assert upper > 0 and not always and got.deciding


def test_a_doubtful_hole_that_cannot_matter_is_cleared() -> None:
    """Row red ? orange orange marked 1/0 against red red yellow blue: hole 2
    may hold anything; red there would make 2 blacks, so the row is unsure,
    and hole 2 is the hole that decides."""
    mso = get_variant("mso")
    row = BoundedRow((("red",), None, ("orange",), ("orange",)), CountRange.exact(1), CountRange.exact(0))
    got = judge_row(SECRET, row, mso)
    assert got.verdict is Judgement.UNSURE and got.deciding_holes == (2,)
    # Candidates green or white: either way 1 black, 0 white: cleared.
    row = BoundedRow((("red",), ("green", "white"), ("orange",), ("orange",)),
                     CountRange.exact(1), CountRange.exact(0))
    got = judge_row(SECRET, row, mso)
    assert got.verdict is Judgement.CORRECT and got.expected == Feedback(1, 0)
    # A key count known as 0..1 black: unsure, the black count decides.
    row = BoundedRow((("red",), ("green", "white"), ("orange",), ("orange",)),
                     CountRange(0, 1), CountRange.exact(0))
    got = judge_row(SECRET, row, mso)
    assert got.verdict is Judgement.UNSURE and got.deciding_keys == ("black",)


def test_a_9x6_board_with_two_unknown_holes_is_judged_exactly() -> None:
    """Large boards stay exact: two holes that may hold any of 9 colours."""
    v = Variant(name="9x6", colours=9, palette=tuple(f"c{i}" for i in range(9)), holes=6,
                rows=12, blanks=False, repeats=True, scoring=Scoring.MSO, clock_preset=None,
                failure_attempts=13, games_per_match=2)
    secret = ("c0", "c1", "c2", "c3", "c4", "c5")
    guesses = [("c0", "c0", "c1", "c1", "c2", "c2"), ("c3", "c4", "c5", "c6", "c7", "c8"),
               ("c1", "c0", "c3", "c2", "c5", "c4")]
    rows = [Row(g, score(secret, g)) for g in guesses]
    doubtful = ("c0", "c1", "unknown", "c3", "unknown", "c8")
    marks = score(secret, ("c0", "c1", "c7", "c3", "c7", "c8"))  # the truth: c7 in both
    rows.append(Row(doubtful, marks))
    blind = judge_game(GameRecord("9x6", None, tuple(rows)), v)
    assert blind.consistency is not Consistency.INCONSISTENT and blind.consistent >= 1
    shown = judge_game(GameRecord("9x6", secret, tuple(rows)), v)
    assert shown.mismarked_row is None and shown.unsure_rows == (4,)
    assert shown.bounded_rows[0].judgement.deciding_holes == (3, 5)
    # Marked 2/0: holes 1, 2 and 4 are blacks whatever 3 and 5 hold: proved.
    rows[-1] = Row(doubtful, Feedback(2, 0))
    shown = judge_game(GameRecord("9x6", secret, tuple(rows)), v)
    assert shown.mismarked_row == 4 and shown.attempts == 5


def test_records_carry_candidates_and_ranges_and_round_trip() -> None:
    data = {"rules": "mso", "secret": list(SECRET), "rows": [
        {"guess": ["red", ["green", "white"], "orange", "occluded"], "black": [1, 2], "white": 0},
        {"guess": ["green", "green", "green", "green"], "black": 0, "white": 0},
    ]}
    record = parse_record(data)
    row = record.rows[0]
    assert row.guess == ("red", UNKNOWN, "orange", "occluded") and not row.is_read
    assert row.bounded.holes == (("red",), ("green", "white"), ("orange",), None)
    assert row.bounded.black == CountRange(1, 2) and row.bounded.white == CountRange.exact(0)
    assert record.to_json()["rows"][0] == data["rows"][0]
    assert parse_record(record.to_json()) == record
    # Old records keep their meaning: plain names, "unknown" in both counts.
    old = parse_record({"rules": "mso", "rows": [{"guess": list(SECRET), "black": "unknown",
                                                  "white": "unknown"}]})
    assert old.rows[0].bounds is None and old.rows[0].bounded.black == CountRange(0, 4)


@pytest.mark.parametrize(("row", "message"), [
    ({"guess": ["red", [], "red", "red"], "black": 0, "white": 0},
     r"rows\[0\]\.guess\[1\]: expected a list of candidate colour names"),
    ({"guess": ["red", ["unknown", "red"], "red", "red"], "black": 0, "white": 0},
     r'rows\[0\]\.guess\[1\]: candidates are colour names, not "unknown"'),
    ({"guess": ["red"] * 4, "black": [2, 1], "white": 0},
     r"rows\[0\]\.black: expected a range \[lo, hi\] within 0\.\.4"),
    ({"guess": ["red"] * 4, "black": [3, 4], "white": [2, 2]},
     r"rows\[0\]: black 3-4 \+ white 2 exceeds the 4 holes"),
    ({"guess": ["red"] * 4, "black": [0, 1], "white": "two"},
     r"rows\[0\]\.white: beside a range"),
])
def test_bad_bounds_name_the_place(row: dict[str, object], message: str) -> None:
    with pytest.raises(RecordError, match=message):
        parse_record({"rules": "mso", "rows": [row]})


def test_pegwatch_judge_reports_bounded_rows(tmp_path, capsys) -> None:
    path = tmp_path / "g.json"
    path.write_text(json.dumps({"rules": "mso", "secret": list(SECRET), "rows": [
        {"guess": ["red", "unknown", "orange", "orange"], "black": 0, "white": 0},
        {"guess": ["red", "unknown", "orange", "orange"], "black": 2, "white": 0},
    ]}))
    assert main(["judge", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mismarked_row"] == 1 and out["unsure_rows"] == []
    assert [b["verdict"] for b in out["bounded_rows"]] == ["mismark", "unsure"]
    assert out["bounded_rows"][1]["deciding_holes"] == [2]
    assert main(["judge", str(path)]) == 0
    text = capsys.readouterr().out
    assert "MIS-MARKED for every reading" in text and "UNSURE: hole 2 decides" in text


def test_a_reading_record_is_judged_with_what_the_camera_knew() -> None:
    """``pegwatch read --json`` writes doubtful holes as "unknown" with their
    candidates, and uncounted keys with their bounds, beside the guess: the
    judge uses them, and the record round-trips."""
    data = {"rules": "mso", "secret": list(SECRET), "rows": [
        {"guess": ["red", "occluded", "orange", "orange"], "black": "unknown", "white": "unknown",
         "candidates": [[], [["green", 0.5], ["white", 0.4]], [], []],
         "black_bounds": [0, 0], "white_bounds": [0, 1]},
    ]}
    record = parse_record(data)
    row = record.rows[0]
    assert row.bounded.holes == (("red",), ("green", "white"), ("orange",), ("orange",))
    assert row.bounded.black == CountRange(0, 0) and row.bounded.white == CountRange(0, 1)
    assert parse_record(record.to_json()) == record
    # Hole 1 is a red in place: no reading scores 0 black: proved.
    verdict = judge_game(record)
    assert verdict.mismarked_row == 1 and verdict.bounded_rows[0].judgement.verdict is Judgement.MISMARK
    # Without bounds the counts are not read at all: nothing to prove.
    del data["rows"][0]["black_bounds"]
    assert judge_game(parse_record(data)).mismarked_row is None


def test_a_peg_read_not_quite_surely_is_judged_as_anything_it_may_still_be() -> None:
    """``pegwatch read --json`` names, for a peg read confidently but not
    surely, its colour and then what else it may be. Against red red yellow
    blue, red yellow green green scores 1B1W and red orange green green 1B0W:
    marked 1B0W the row is unsure (hole 2 decides), never mis-marked; marked
    0/0 it is wrong either way: proved."""
    shaky = [[], [["yellow", 0.9935], ["orange", 0.0065]], [], []]

    def row(black: int, white: int, candidates: list[list[list[object]]]) -> dict[str, object]:
        return {"guess": ["red", "yellow", "green", "green"], "black": black, "white": white,
                "candidates": candidates}

    unsure = judge_game(parse_record({"rules": "mso", "secret": list(SECRET), "rows": [row(1, 0, shaky)]}))
    assert unsure.mismarked_row is None and unsure.unsure_rows == (1,)
    assert unsure.bounded_rows[0].judgement.deciding_holes == (2,)
    proved = judge_game(parse_record({"rules": "mso", "secret": list(SECRET), "rows": [row(0, 0, shaky)]}))
    assert proved.mismarked_row == 1
    # A list that does not start with the peg read is not the reader's: the peg is as read.
    odd = [[], [["orange", 0.6], ["yellow", 0.4]], [], []]
    plain = judge_game(parse_record({"rules": "mso", "secret": list(SECRET), "rows": [row(1, 0, odd)]}))
    assert plain.mismarked_row == 1 and plain.bounded_rows == ()


def test_bounded_verdicts_read_back_as_written() -> None:
    from pegwatch.rules.verdict import GameVerdict

    # No orange, exactly one red; row 1's two blacks are the red in hole 1
    # and hole 2: a second red there fits no code, any other colour does.
    rows = (Row(("red", UNKNOWN, "orange", "orange"), Feedback(2, 0)),
            Row(("orange",) * 4, Feedback(0, 0)), Row(("red",) * 4, Feedback(1, 0)))
    for secret in (SECRET, None):
        verdict = judge_game(GameRecord("mso", secret, rows, extra={"secret_source": "camera"}))
        assert GameVerdict.from_json(verdict.to_json()) == verdict
    hidden = judge_game(GameRecord("mso", None, rows))
    assert hidden.consistency is Consistency.UNSURE and hidden.secret_source is None
    assert [d.row for d in hidden.consistency_deciding] == [1]
    assert judge_game(GameRecord("mso", SECRET, rows, extra={"secret_source": "camera"})).secret_source == "camera"


@settings(max_examples=60, deadline=None)
@given(st.booleans(), st.data())
def test_past_the_work_cap_the_claims_stay_sound(blanks: bool, data: st.DataObject) -> None:
    """With the caps forced to nothing, rows are scored from score ranges
    only: less is proved, but nothing false is, and ``reveal_can_change``
    still lists every key some secret changes."""
    import pegwatch.rules.bounded_consistency as bc
    from pegwatch.rules.reveal import REVEAL_KEYS

    variant = _tiny(blanks)
    secret = data.draw(st.tuples(*[st.sampled_from(_symbols(variant))] * variant.holes))
    bounded = [data.draw(bounded_rows(variant)) for _ in range(data.draw(st.integers(1, 3)))]
    rows = tuple(Row(b.guess, None, marks_unread=UNKNOWN, bounds=b) for b in bounded)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bc, "_WORK", 0)
        patch.setattr(bc, "_FIT_WORK", 0)
        capped = analyse_bounded(rows, variant)
        blind = judge_game(GameRecord("tiny", None, rows), variant)
    exact = analyse_bounded(rows, variant)
    assert capped.report.consistent >= exact.report.consistent
    if capped.verdict is Consistency.INCONSISTENT:
        assert exact.verdict is Consistency.INCONSISTENT
    shown = judge_game(GameRecord("tiny", secret, rows), variant)
    changed = {k for k in REVEAL_KEYS if getattr(blind, k) != getattr(shown, k)}
    assert changed <= set(blind.reveal_can_change)
