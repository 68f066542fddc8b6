"""The reader on rendered boards: easy round trip, hard boards, hands, light drift."""

from __future__ import annotations

import numpy as np
import pytest

from pegwatch.simulation.hardset import hard_case, truth_reading
from pegwatch.simulation.render import Conditions, random_conditions, random_contents, render
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import OCCLUDED, UNKNOWN


def _compare(truth, reading):
    """(confident hole errors, unknown-or-occluded holes, total, key errors)."""
    errors = unknown = total = key_errors = 0
    for t, r in zip(truth.rows, reading.rows, strict=True):
        for th, rh in zip(t.holes, r.holes, strict=True):
            total += 1
            if rh.colour in (UNKNOWN, OCCLUDED):
                unknown += 1
            elif rh.colour != th.colour:
                errors += 1
        if r.keys.is_certain and r.status != "occluded" and (r.keys.black, r.keys.white) != (t.keys.black, t.keys.white):
            key_errors += 1
    return errors, unknown, total, key_errors


def test_easy_roundtrip_reads_every_hole(invicta_table, invicta_cal):
    p = invicta_table.profile
    reader = BoardReader(p, invicta_cal)
    rng = np.random.default_rng(3)
    for seed in range(3):
        contents = random_contents(p, rng, rows_played=9, shield_open=True, last_row_marked=True)
        r = render(p, contents, Conditions.easy().with_(peg_set=invicta_table.peg_set), seed=seed)
        reading = reader.read(r.image, at_ns=seed)
        truth = truth_reading(contents, p)
        assert reading.problem is None
        for t, row in zip(truth.rows, reading.rows, strict=True):
            assert row.guess == t.guess, f"row {t.row}"
            assert (row.keys.black, row.keys.white) == (t.keys.black, t.keys.white), f"row {t.row} keys"
            assert row.status in ("ok", "empty")
            assert min(h.confidence for h in row.holes) > 0.9
        assert reading.secret is not None
        assert tuple(h.colour for h in reading.secret) == contents.secret


@pytest.mark.parametrize("which", ["invicta", "super", "lego"])
def test_hard_boards_no_confident_wrong_reading(which, request):
    table = request.getfixturevalue(f"{which}_table")
    cal = request.getfixturevalue(f"{which}_cal")
    reader = BoardReader(table.profile, cal)
    errors = unknown = total = key_errors = 0
    for i in range(6):
        case = hard_case(table, i, seed=21)
        reading = reader.read(case.rendered.image, at_ns=i)
        e, u, n, k = _compare(truth_reading(case.rendered.contents, table.profile), reading)
        errors, unknown, total, key_errors = errors + e, unknown + u, total + n, key_errors + k
    assert errors == 0
    assert key_errors == 0
    # "I'm not sure" is allowed, but not as a way of never answering.
    assert unknown / total < 0.3


def test_hand_covered_rows_come_out_occluded_or_unknown(invicta_table, invicta_cal):
    p = invicta_table.profile
    reader = BoardReader(p, invicta_cal)
    covered = 0
    for seed in range(4):
        rng = np.random.default_rng([seed, 99])
        contents = random_contents(p, rng, rows_played=12, last_row_marked=True)
        cond = random_conditions(rng, difficulty="medium", profile=p, hand_probability=1.0, peg_set=invicta_table.peg_set)
        r = render(p, contents, cond, seed=seed)
        reading = reader.read(r.image, at_ns=seed)
        assert r.occluded_rows, "the hand should cover some rows"
        truth = truth_reading(contents, p)
        for row in r.occluded_rows:
            got = reading.row(row)
            assert got.status in ("occluded", "unknown"), f"seed {seed} row {row}: {got}"
            covered += got.status == "occluded"
        e, _, _, k = _compare(truth, reading)
        assert e == 0 and k == 0
    assert covered > 0


@pytest.mark.parametrize(
    ("change", "max_unknown"),
    [
        # 30 % brighter than at calibration clips orange and yellow pegs in
        # the red channel: their hue is lost, and the reader says so.
        ({"exposure": 1.3}, 0.25),
        ({"exposure": 0.7}, 0.05),
        ({"colour_cast": (1.15, 1.0, 0.82)}, 0.05),  # warmer than at calibration
        ({"colour_cast": (0.88, 1.0, 1.12)}, 0.05),  # cooler
        ({"light_ratio": 1.8, "light_angle_deg": 30.0}, 0.1),
    ],
)
def test_light_drift_still_reads_right(invicta_table, invicta_cal, change, max_unknown):
    p = invicta_table.profile
    reader = BoardReader(p, invicta_cal)
    contents = random_contents(p, np.random.default_rng(8), rows_played=10, shield_open=True, last_row_marked=True)
    cond = Conditions.easy().with_(peg_set=invicta_table.peg_set, **change)
    r = render(p, contents, cond, seed=4)
    e, u, n, k = _compare(truth_reading(contents, p), reader.read(r.image, at_ns=1))
    assert e == 0 and k == 0
    assert u / n <= max_unknown


def test_no_board_in_frame_is_a_problem_not_a_guess(invicta_cal, invicta_table):
    reader = BoardReader(invicta_table.profile, invicta_cal)
    frame = np.full((720, 1280, 3), 90, dtype=np.uint8)
    reading = reader.read(frame, at_ns=5)
    assert reading.problem
    assert all(r.status == "unknown" for r in reading.rows)
    assert reading.at_ns == 5


def test_read_rectified_matches_read(invicta_table, invicta_cal):
    from pegwatch.vision.localise import rectify

    p = invicta_table.profile
    reader = BoardReader(p, invicta_cal)
    img = invicta_table.calibration[0].image
    a = reader.read(img, at_ns=1)
    rect = rectify(img, reader.last_localisation, px_per_mm=invicta_cal.px_per_mm)
    b = reader.read_rectified(rect, at_ns=1)
    assert [r.guess for r in a.rows] == [r.guess for r in b.rows]


def test_calibration_for_another_board_is_refused(invicta_cal, super_table):
    from pegwatch.vision.calibration import CalibrationError

    with pytest.raises(CalibrationError, match="not 'super-12x5'"):
        BoardReader(super_table.profile, invicta_cal)


@pytest.mark.parametrize(
    "frame",
    [np.zeros((720, 1280), dtype=np.uint8), np.zeros((720, 1280, 3), dtype=np.float32), np.zeros((4, 4, 3), dtype=np.uint8)],
)
def test_bad_frames_are_problems_not_crashes(invicta_cal, invicta_table, frame):
    reading = BoardReader(invicta_table.profile, invicta_cal).read(frame, at_ns=1)
    assert reading.problem
    assert all(r.status == "unknown" for r in reading.rows)


def test_a_board_imaged_too_coarse_is_read_low_trust_and_says_why(invicta_table, invicta_cal):
    """The reader judges down to MIN_PX_PER_MM, where a key peg's sample disc
    still holds whole pixels; below it the board is shown, never accused."""
    import cv2

    from pegwatch.vision.localise import MIN_PX_PER_MM

    p = invicta_table.profile
    rng = np.random.default_rng(11)
    contents = random_contents(p, rng, rows_played=8, shield_open=True, last_row_marked=True)
    image = render(p, contents, Conditions.easy().with_(peg_set=invicta_table.peg_set), seed=4).image
    truth = truth_reading(contents, p)
    seen = {}
    for scale in (0.7, 0.5):
        small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        reading = BoardReader(p, invicta_cal).read(small, at_ns=1)
        assert reading.problem is None and reading.px_per_mm is not None
        seen[scale] = reading
        errors, _, _, key_errors = _compare(truth, reading)
        assert errors == 0 and key_errors == 0, f"at {reading.px_per_mm:.2f} px/mm"
    coarse_enough, too_coarse = seen[0.7], seen[0.5]
    assert MIN_PX_PER_MM <= coarse_enough.px_per_mm < 2.5
    assert coarse_enough.trust == "full"
    assert not any("px/mm" in why for why in coarse_enough.picture_warnings)
    assert too_coarse.px_per_mm < MIN_PX_PER_MM
    assert too_coarse.trust == "low"
    assert any("px/mm" in why for why in too_coarse.trust_reasons)
    assert any("px/mm" in why for why in too_coarse.picture_warnings)


@pytest.mark.parametrize(("reach_mm", "row_5"), [(9.0, "empty"), (16.0, "occluded")])
def test_a_hand_over_the_next_row_leaves_the_bare_row_beyond_it_bare(invicta_table, invicta_cal, reach_mm, row_5):
    """Rows 1-3 played, a hand over row 4 (the next to play) reaching toward row 5: its holes
    show their recesses, so row 5 reads bare, until the hand reaches over them."""
    p = invicta_table.profile
    contents = random_contents(p, np.random.default_rng(21), rows_played=3, shield_open=True, last_row_marked=True)
    x = float(np.mean(p.hole_centres_mm(4), axis=0)[0])
    reach = x + reach_mm  # row 5's holes lie a row step (16 mm) on
    hand = (((x - 5.0, -30.0), (reach, -30.0), (reach, 51.0), (x - 5.0, 51.0)),)  # over the code holes, from the tray
    r = render(p, contents, Conditions.easy().with_(peg_set=invicta_table.peg_set, hand=hand), seed=21)
    reading = BoardReader(p, invicta_cal).read(r.image, at_ns=1)
    assert reading.row(4).status == "occluded"
    assert reading.row(5).status == row_5
    assert [reading.row(k).status for k in (1, 2, 3)] == ["ok"] * 3
