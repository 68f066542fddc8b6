"""The physically based test bed: its cached boards read through the real calibrate and reader.

``tests/data/pbr`` holds one table (two calibration photos and twelve hard
photos, JPEG as developed, with their truth) rendered by
``python -m pegwatch.simulation.pbr tests/data/pbr --boards 12``. The hard
line the reader must hold on them: no correctly marked row is accused.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from pegwatch.simulation.pbr.camera import Camera
from pegwatch.simulation.pbr.conditions import blackbody_rgb
from pegwatch.simulation.pbr.testbed import (
    COVER_TRUTH_VERSION,
    RENDERER_VERSION,
    PbrBoard,
    case_inputs,
    load_cached,
    make_table,
    table_conditions,
    with_cover_truth,
)
from pegwatch.simulation.pbr.yardstick import (
    CLEAR,
    MISMARK,
    NOT_MARKED,
    SURE_CONFIDENCE,
    UNSURE,
    PbrTally,
    hands_capped,
    hands_capped_apart,
    judge_row,
    nothing_over,
    summary,
)
from pegwatch.vision.calibrate import calibrate, truth_from_record
from pegwatch.vision.markers import detect_markers
from pegwatch.vision.profile import load_profile
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import (
    OCCLUDED,
    TRUST_FULL,
    UNKNOWN,
    HoleReading,
    KeyReading,
    RowReading,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "pbr"
TABLE = DATA / "invicta-12x4-s0-p500"
PEG_SET, SEED = 500, 0


def _cases() -> list[PbrBoard]:
    out = []
    for js in sorted(TABLE.glob("case-*.json"), key=lambda p: int(p.stem.split("-")[1])):
        seed = json.loads(js.read_text())["pbr"]["seed"]
        board = load_cached(TABLE, js.stem, seed)
        assert board is not None, f"{js} is stale: re-render the cache"
        out.append(board)
    return out


@pytest.fixture(scope="module")
def table():
    return make_table("invicta-12x4", peg_set=PEG_SET, seed=SEED, cache=DATA)


@pytest.fixture(scope="module")
def cases():
    return _cases()


def test_the_cache_is_small_and_complete(table, cases):
    # This table, two boards of seed 2's with their calibration photos (a grey sleeve), and two of
    # seed 8's with theirs (fabric over pegs: tests/vision/test_recess.py, test_bare_rows.py).
    size = sum(f.stat().st_size for f in DATA.rglob("*") if f.is_file())
    assert size < 6.5 * 1024 * 1024
    assert len(table.calibration) == 2 and len(cases) >= 12
    assert any(b.meta["hands"] for b in cases), "no hand in the cached set"
    assert any(b.meta["shield_closed"] for b in cases) and any(not b.meta["shield_closed"] for b in cases)
    assert any(b.meta["mismarked_rows"] for b in cases)


def test_no_correct_row_is_accused(table, cases):
    p = table.profile
    truths = [truth_from_record(b.truth, p, where="calibration truth") for b in table.calibration]
    cal = calibrate([b.image for b in table.calibration], truths, p)
    tally = PbrTally()
    uncertain = holes = free = 0
    stated = {"below_999": [0, 0], "999_up": [0, 0]}  # confident holes on full-trust boards, and errors, by confidence
    found = []
    for i, b in enumerate(cases):
        reading = BoardReader(p, cal).read(b.image, at_ns=i)  # every case is its own camera
        if reading.problem is None:
            found.append(b)
        assert reading.problem is None or reading.problem.strip(), "a board refused without a reason"
        tally.add(p, b, reading, name=f"case {b.meta.get('index')}")
        truth = truth_from_record(b.truth, p, where="truth")
        if reading.trust == TRUST_FULL:
            pairs = [(t, h) for tr, rr in zip(truth.rows, reading.rows, strict=True) for t, h in zip(tr.holes, rr.holes, strict=True)]
            if truth.secret is not None and reading.secret is not None:
                pairs += list(zip(truth.secret, reading.secret, strict=True))
            for t, h in pairs:
                if h.is_certain:
                    band = stated["below_999" if h.confidence < SURE_CONFIDENCE else "999_up"]
                    band[0] += 1
                    band[1] += h.colour != t.colour
        if reading.problem is None and nothing_over(b):
            free += 1
            seen = [h for r in reading.rows for h in r.holes]
            if truth.secret is not None and reading.secret is not None:
                seen += list(reading.secret)
            holes += len(seen)
            uncertain += sum(h.colour in (UNKNOWN, OCCLUDED) for h in seen)
    assert tally.c["boards"] == len(cases)
    assert tally.c["false_mismark_rows"] == 0, f"false accusations on {tally.false_boards}"
    s = summary(tally, [], [])
    assert free and s["boards_no_hand"] == free
    assert s["hole_uncertain_rate_no_hand"] == round(uncertain / holes, 4)
    assert stated["below_999"][0] and stated["999_up"][0]
    for name, (n, wrong) in stated.items():
        assert s[f"hole_error_rate_full_trust_conf_{name}"] == round(wrong / n, 6)
    assert s["holes_confident_full_trust_conf_below_999_share"] == round(stated["below_999"][0] / sum(v[0] for v in stated.values()), 4)
    # The mis-marks no hand is over are counted apart: every mis-mark judged is one or the other.
    hidden = 0
    for b in found:
        truth = truth_from_record(b.truth, p, where="truth")
        last = max((r.row for r in truth.rows if any(h.colour != "empty" for h in r.holes)), default=0)
        hidden += sum(
            1 for r in truth.rows
            if r.row in b.meta["mismarked_rows"] and r.row in b.meta["covered_rows"] and r.row <= last
            and (r.keys.black + r.keys.white > 0 or r.row < last)
        )
    assert hidden and s["mismarks_injected_uncovered"]
    assert s["mismarks_injected"] - s["mismarks_injected_uncovered"] == hidden
    assert s["mismarks_caught_uncovered"] + s["mismarks_unjudged_uncovered"] + s["mismarks_missed_uncovered"] == s["mismarks_injected_uncovered"]
    assert s["mismarks_caught_rate_uncovered"] == round(s["mismarks_caught_uncovered"] / s["mismarks_injected_uncovered"], 4)


def test_the_uncertainty_bar_s_set_takes_hand_boards_in_order_until_hands_would_cover_more_than_a_twentieth_of_rows():
    # (a hand in the picture, rows, rows under a hand, holes, holes uncertain)
    free = [(False, 12, 0, 100, 2)] * 9  # 108 rows
    hands = [(True, 12, 3, 100, 30), (True, 12, 1, 100, 20), (True, 12, 4, 100, 40), (True, 12, 0, 100, 10)]
    rate, boards, share = hands_capped([hands[0], *free[:5], hands[1], *free[5:], hands[2], hands[3]])
    # 3 + 1 rows under a hand of 132 pass; the third hand (8 of 144) would not, and nothing after it is taken,
    # not even the fourth, whose hand covers no row: no board is chosen for how little its hand covers.
    assert (boards, share) == (11, round(4 / 132, 4))
    assert rate == round((9 * 2 + 30 + 20) / 1100, 4)
    assert hands_capped(free) == (0.02, 9, 0.0)
    assert hands_capped([]) == (0.0, 0, 0.0)


def test_the_uncertainty_bar_s_set_tells_the_holes_a_hand_hides_from_those_the_reader_leaves_uncertain():
    # (a hand in the picture, rows, rows under a hand, holes, holes uncertain, holes in those rows, uncertain elsewhere)
    free = [(False, 12, 0, 100, 2, 0, 2)] * 9
    hands = [(True, 12, 3, 100, 30, 12, 6), (True, 12, 4, 100, 40, 16, 20)]
    under, elsewhere = hands_capped_apart([hands[0], *free, hands[1]])
    # The second hand would take the rows covered past a twentieth: the set is the first hand's board and the free ones.
    assert (under, elsewhere) == (round(12 / 1000, 4), round((9 * 2 + 6) / 1000, 4))
    assert hands_capped_apart([]) == (0.0, 0.0)


def test_the_truth_is_what_the_seed_gives(cases):
    """Contents and conditions are a pure function of the seed: regenerate and compare, without rendering."""
    p = load_profile("invicta-12x4")
    for b in cases:
        meta = b.meta
        assert meta["renderer_version"] == RENDERER_VERSION
        assert meta["cover_truth"] == COVER_TRUTH_VERSION
        contents, cond, rseed = case_inputs(p, PEG_SET, SEED, int(meta["index"]), spp=int(meta["spp"]))
        assert rseed == meta["seed"]
        assert list(contents.secret or ()) == meta["secret"]
        assert sorted(contents.mismarked_rows) == meta["mismarked_rows"]
        assert round(cond.light_kelvin) == meta["light_kelvin"]
        assert cond.shield_closed == meta["shield_closed"]
        assert round(Camera.of(cond).px_per_mm(p), 3) == meta["px_per_mm"]
        guesses = [r["guess"] for r in b.truth["rows"]]
        assert guesses == [list(g) for g in contents.guesses[: len(guesses)] if g is not None]


def test_markers_sit_where_the_truth_projects_them(table):
    """The camera model and Mitsuba's agree: detected marker corners match the truth projection."""
    p = table.profile
    cond = table_conditions(p, PEG_SET, SEED, spp=16)
    cam = Camera.of(cond)
    found = detect_markers(table.calibration[0].image, p.aruco_dictionary)
    assert len(found) == len(p.markers)
    for d in found:
        mk = next(m for m in p.markers if m.id == d.id)
        truth = cam.project(np.array([[x, y, cond.board_lift_mm] for x, y in mk.corners_mm()]))
        assert np.abs(d.corners.reshape(4, 2) - truth).max() < 1.5


def test_a_cheap_rerender_matches_the_cache(cases):
    """One cached board rendered again at half size and 1 sample per pixel shows the same picture.

    Only the path-tracing noise differs (and with it the auto exposure), so
    the two are compared downsampled, each relative to its own mean.
    """
    pytest.importorskip("mitsuba")
    from pegwatch.simulation.pbr.testbed import render_board

    p = load_profile("invicta-12x4")
    b = cases[0]
    contents, cond, rseed = case_inputs(p, PEG_SET, SEED, int(b.meta["index"]), spp=1)
    half = cond.with_(width=cond.width // 2, height=cond.height // 2, focal_px=cond.focal_px / 2)
    again = render_board(p, contents, half, seed=rseed)
    for key in ("covered_rows", "secret_covered", "light_band", "hands", "mismarked_rows", "secret"):
        assert again.meta[key] == b.meta[key], key
    corners = 2 * np.array(again.meta["board_corners_px"]) + 0.5  # OpenCV's pixel centres at half size
    assert np.abs(corners - np.array(b.meta["board_corners_px"])).max() < 0.05
    small = (cond.width // 16, cond.height // 16)
    a = cv2.resize(again.image, small, interpolation=cv2.INTER_AREA).astype(float)
    c = cv2.resize(b.image, small, interpolation=cv2.INTER_AREA).astype(float)
    diff = np.abs(a / a.mean(axis=(0, 1)) - c / c.mean(axis=(0, 1)))
    assert diff.mean() < 0.1  # another board of the set differs by 0.35 or more


def test_a_lamp_hung_between_the_camera_and_the_board_covers_the_rows_it_hides(cases):
    """A lamp panel in the camera's view hides the holes behind it as a sleeve would (seed 3,
    table 500, case 198: ten rows under the key lamp's back, and the truth said none was covered)."""
    pytest.importorskip("mitsuba")
    p = load_profile("invicta-12x4")
    b = next(b for b in cases if not b.meta["hands"])
    contents, cond, rseed = case_inputs(p, PEG_SET, SEED, int(b.meta["index"]), spp=1)
    assert with_cover_truth(b, p, contents, cond, seed=rseed).meta["covered_rows"] == []
    eye = Camera.of(cond).centre
    w, h = p.size_mm
    between = tuple(float(v) for v in 0.6 * eye + 0.4 * np.array([w / 2, h / 2, 0.0]))
    lamp = cond.with_(light_pos_mm=between, light_size_mm=400.0)
    truth = with_cover_truth(b, p, contents, lamp, seed=rseed).meta
    assert truth["covered_rows"] == list(range(1, p.rows + 1))
    assert truth["secret_covered"] and truth["cover_truth"] == COVER_TRUTH_VERSION
    assert b.meta["covered_rows"] == []  # the board given is left as it was


def test_blackbody_colours_run_from_warm_to_cool():
    warm, cool = blackbody_rgb(2700), blackbody_rgb(6500)
    assert warm[0] > warm[1] > warm[2]
    assert abs(cool[0] - cool[2]) < 0.1 * cool[1]  # 6500 K is close to sRGB's white point


def _row(colours, black, white, status="ok", kstatus="ok", bounds=None):
    holes = tuple(HoleReading(c, 1.0 if c not in ("unknown", "occluded") else 0.0) for c in colours)
    keys = KeyReading(black, white, 4 - black - white, 1.0, kstatus, *(bounds or (None, None)))
    return RowReading(1, holes, keys, status)


def test_judge_row_proves_clears_or_stays_unsure():
    p = load_profile("invicta-12x4")
    secret = ("red", "blue", "green", "white")
    assert judge_row(p, secret, _row(["red", "blue", "green", "yellow"], 3, 0), is_last=False) == CLEAR
    assert judge_row(p, secret, _row(["red", "blue", "green", "yellow"], 2, 0), is_last=False) == MISMARK
    # One unknown hole: 3 right-place keys are possible (yellow) and impossible (white) -> unsure.
    assert judge_row(p, secret, _row(["red", "blue", "green", "unknown"], 3, 0, "unknown"), is_last=False) == UNSURE
    # ... but no colour in the unknown hole can give 0 right-place keys: a proven mis-mark.
    assert judge_row(p, secret, _row(["red", "blue", "green", "unknown"], 0, 0, "unknown"), is_last=False) == MISMARK
    assert judge_row(p, secret, _row(["red", "blue", "green", "yellow"], 0, 0, kstatus="empty"), is_last=True) == NOT_MARKED
    assert judge_row(p, secret, _row(["occluded"] * 4, 0, 0, "occluded"), is_last=False) == UNSURE


def test_a_hole_that_may_be_bare_leaves_a_row_unsure_as_the_rules_core_does():
    """Black or bare: black gives 3 right-place keys, not the 0 marked; bare would be a row still
    incomplete, whose marks are never proved wrong (rules.bounded.judge_row, and so pegwatch judge)."""
    p = load_profile("invicta-12x4")
    secret = ("red", "blue", "green", "white")
    row = _row(["red", "blue", "green", "unknown"], 0, 0, "unknown")
    doubtful = HoleReading("unknown", 0.6, (("black", 0.6), ("empty", 0.4)))
    row = RowReading(1, (*row.holes[:3], doubtful), row.keys, "unknown")
    assert judge_row(p, secret, row, is_last=False) == UNSURE
    black_or_yellow = HoleReading("unknown", 0.6, (("black", 0.6), ("yellow", 0.4)))
    row = RowReading(1, (*row.holes[:3], black_or_yellow), row.keys, "unknown")
    assert judge_row(p, secret, row, is_last=False) == MISMARK


@pytest.mark.slow
def test_pegwatch_calibrate_and_read_on_a_cached_board(table, cases, tmp_path):
    """The command line's own path: `pegwatch calibrate` on the cached photos, then `pegwatch read --json`."""
    exe = Path(sys.executable).with_name("pegwatch")
    cal_images, truth_files = [], []
    for i, b in enumerate(table.calibration):
        cal_images.append(str(TABLE / f"cal-{i}.jpg"))
        t = tmp_path / f"truth-{i}.json"
        t.write_text(json.dumps({k: v for k, v in b.truth.items() if k != "pbr"}))
        truth_files += ["--truth", str(t)]
    cal = tmp_path / "cal.json"
    subprocess.run([str(exe), "calibrate", *cal_images, *truth_files, "-o", str(cal)], check=True, capture_output=True, timeout=120)
    case = next(b for b in cases if not b.meta["hands"])
    stem = f"case-{case.meta['index']}.jpg"
    out = subprocess.run(
        [str(exe), "read", str(TABLE / stem), "--calibration", str(cal), "--json"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    record = json.loads(out.stdout)
    assert 1 <= len(record["rows"]) <= table.profile.rows
    assert all(r["status"] in ("ok", "unknown", "occluded", "empty") for r in record["rows"])
