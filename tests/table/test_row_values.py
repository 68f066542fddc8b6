"""What one frame says of a row, as the vision worker compares frames: pure functions."""

from __future__ import annotations

import pytest

from pegwatch.device.table.row_values import known_payload, known_value, row_value, says_less, widen
from pegwatch.vision.reading import HoleReading, KeyReading, RowReading

SURE = ("red", "green", "blue", "yellow")


COUNTED = KeyReading(1, 2, 1, 0.9, "ok")


def reading(holes, keys=COUNTED):
    return RowReading(3, tuple(holes), keys, "ok")


def sure_holes():
    return [HoleReading(c, 0.95) for c in SURE]


def doubt(*cands):
    return HoleReading("unknown", 0.4, tuple((c, 0.4) for c in cands))


def test_a_row_read_for_certain_has_a_value_and_is_known_exactly():
    row = reading(sure_holes())
    assert row_value(row, "guess") == (SURE,)
    assert row_value(row, "marks") == (SURE, 1, 2)
    assert known_value(row, "marks") == ((("red",), ("green",), ("blue",), ("yellow",)), "exact", 1, 2)


@pytest.mark.parametrize(
    ("hole", "keys", "less"),
    [
        (doubt("green", "black"), COUNTED, True),
        (HoleReading("occluded", 0.0), COUNTED, True),
        (doubt("black", "white"), COUNTED, False),
        (doubt("green"), KeyReading(1, 1, 1, 0.4, "unknown", black_bounds=(0, 2), white_bounds=(1, 3)), True),
        (doubt("green"), KeyReading(1, 1, 1, 0.4, "unknown", black_bounds=(0, 2), white_bounds=(0, 1)), False),
        (doubt("green"), KeyReading(0, 2, 2, 0.9, "ok"), False),
    ],
)
def test_a_frame_says_less_only_when_it_leaves_the_value_possible(hole, keys, less):
    value = row_value(reading(sure_holes()), "marks")
    holes = sure_holes()
    holes[1] = hole
    assert says_less(known_value(reading(holes, keys), "marks"), value, "marks") is less


def test_a_frame_that_knows_nothing_is_not_less():
    covered = [HoleReading("occluded", 0.0)] * 4
    value = row_value(reading(sure_holes()), "guess")
    assert known_value(reading(covered), "guess") is None
    assert not says_less(None, value, "guess")


def test_widening_keeps_every_candidate_and_the_widest_counts():
    holes_a, holes_b = sure_holes(), sure_holes()
    holes_a[1], holes_b[1] = doubt("green", "blue"), doubt("black", "green")
    holes_b[3] = HoleReading("occluded", 0.0)
    a = known_value(reading(holes_a), "marks")
    b = known_value(reading(holes_b, KeyReading(1, 1, 1, 0.4, "unknown", black_bounds=(1, 2), white_bounds=None)), "marks")
    assert a is not None and b is not None
    both = widen(a, b)
    assert both == ((("red",), ("green", "blue", "black"), ("blue",), None), "bounds", (1, 2), None)
    assert widen(a, a) == a  # two frames that say the same stay exact
    assert known_payload(both) == {
        "candidates": [["red"], ["green", "blue", "black"], ["blue"], None],
        "black_bounds": [1, 2],
        "white_bounds": None,
        "keys_status": "unknown",
    }
    assert known_payload(a) == {  # counted keys: the reading's own counts stand
        "candidates": [["red"], ["green", "blue"], ["blue"], ["yellow"]],
        "black_bounds": None,
        "white_bounds": None,
    }
    assert known_payload(widen((a[0],), (b[0],))) == {"candidates": [["red"], ["green", "blue", "black"], ["blue"], None]}
