"""A row in doubt rests no verdict on key holes read bare (vision.reading.doubt_bare_keys).

A bare key hole is the reader's commonest wrong answer (a black key peg in
shade, a white one under warm light): on the physically based set, every
false accusation came from a row whose code holes were in doubt and whose
key pegs were read as bare holes, judged within bounds.
"""

from __future__ import annotations

from pegwatch.rules.bounded import BoundedRow, CountRange, Judgement, judge_row
from pegwatch.rules.variants import get_variant
from pegwatch.vision.reading import ROW_OCCLUDED, ROW_OK, ROW_UNKNOWN, KeyReading, doubt_bare_keys


def _ranges(keys: KeyReading) -> tuple[CountRange, CountRange]:
    assert keys.black_bounds is not None and keys.white_bounds is not None
    return CountRange(*keys.black_bounds), CountRange(*keys.white_bounds)


def test_bare_holes_become_room_for_pegs_not_seen():
    keys = doubt_bare_keys(KeyReading(0, 0, 4, 0.99, "empty"))
    assert keys.status == ROW_UNKNOWN and not keys.is_certain
    assert (keys.black, keys.white, keys.empty) == (0, 0, 4)
    assert (keys.black_bounds, keys.white_bounds) == ((0, 4), (0, 4))


def test_bounds_already_there_are_widened_by_the_bare_holes():
    keys = doubt_bare_keys(KeyReading(1, 0, 2, 0.4, ROW_UNKNOWN, black_bounds=(1, 2), white_bounds=(0, 1)))
    assert (keys.black_bounds, keys.white_bounds) == ((1, 4), (0, 3))


def test_bare_holes_proved_bare_otherwise_stay_evidence():
    keys = doubt_bare_keys(KeyReading(1, 0, 3, 0.9, ROW_OK), proved=2)
    assert keys.status == ROW_UNKNOWN and (keys.black_bounds, keys.white_bounds) == ((1, 2), (0, 1))
    every = KeyReading(1, 0, 3, 0.9, ROW_OK)
    assert doubt_bare_keys(every, proved=3) is every


def test_nothing_bare_or_covered_is_left_as_read():
    full = KeyReading(2, 2, 0, 0.9, ROW_OK)
    assert doubt_bare_keys(full) is full
    covered = KeyReading(0, 0, 0, 0.0, ROW_OCCLUDED)
    assert doubt_bare_keys(covered) is covered


def test_a_row_in_doubt_with_unseen_key_pegs_is_never_accused():
    # Secret and guess give 0 black, 2 white: the codemaker marked it right,
    # but the camera saw the two white key pegs as bare holes and one code
    # hole is in doubt between orange and yellow.
    mso = get_variant("mso")
    secret = ("red", "blue", "green", "yellow")
    holes = (("orange", "yellow"), ("white",), ("red",), ("black",))
    seen = KeyReading(0, 0, 4, 0.99, "empty")
    as_read = BoundedRow(holes, CountRange.exact(seen.black), CountRange.exact(seen.white))
    # Taken at its word, the bare-hole reading proves a mis-mark that is not there...
    assert judge_row(secret, as_read, mso).verdict is Judgement.MISMARK
    # ...in doubt, it proves nothing.
    doubted = BoundedRow(holes, *_ranges(doubt_bare_keys(seen)))
    assert judge_row(secret, doubted, mso).verdict is not Judgement.MISMARK


def test_pegs_seen_still_prove_a_mis_mark_when_every_completion_disagrees():
    # Four key pegs seen where no completion of the guess can earn four.
    mso = get_variant("mso")
    secret = ("red", "blue", "green", "yellow")
    holes = (("orange", "purple"), ("white",), ("black",), ("purple",))
    seen = KeyReading(0, 3, 1, 0.9, "ok")
    doubted = BoundedRow(holes, *_ranges(doubt_bare_keys(seen)))
    assert judge_row(secret, doubted, mso).verdict is Judgement.MISMARK
