"""The hard benchmark set is deterministic and honest; the benchmark script ends with its JSON line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from pegwatch.simulation.hardset import (
    calibration_contents,
    hard_case,
    hard_set,
    make_table,
    truth_record,
)
from pegwatch.vision.profile import load_profile

ROOT = Path(__file__).resolve().parents[2]
PBR_CACHE = str(ROOT / "tests" / "data" / "pbr")


def json_line_of(script: str, *args: str) -> dict:
    """Run ``benchmarks/<script>`` with ``args``: the JSON object its last line holds."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), *args],
        capture_output=True,
        text=True,
        timeout=240,
        check=True,
        cwd=ROOT,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_same_seed_same_boards():
    t1 = make_table("lego-10x4", peg_set=5, images=1, seed=3)
    t2 = make_table("lego-10x4", peg_set=5, images=1, seed=3)
    assert np.array_equal(t1.calibration[0].image, t2.calibration[0].image)
    a, b = hard_case(t1, 1, seed=3), hard_case(t2, 1, seed=3)
    assert np.array_equal(a.rendered.image, b.rendered.image)
    assert a.rendered.contents == b.rendered.contents


def test_odd_cases_are_mismarked_even_cases_are_not():
    t = make_table("invicta-12x4", peg_set=5, images=1, seed=3)
    assert not hard_case(t, 0, seed=3).mismarked_rows
    assert hard_case(t, 1, seed=3).mismarked_rows


def test_calibration_contents_cover_the_palette_and_key_classes():
    for name in ("invicta-12x4", "lego-10x4", "super-12x5"):
        p = load_profile(name)
        c = calibration_contents(p, 0, shield_open=True)
        seen = {x for g in c.guesses if g for x in g}
        assert set(p.palette) <= seen
        keys = [k for k in c.keys if k]
        assert any(b for b, _ in keys) and any(w for _, w in keys) and any(b + w < p.key_holes for b, w in keys)


def test_truth_record_is_the_judge_game_record():
    p = load_profile("invicta-12x4")
    rec = truth_record(calibration_contents(p, 1, shield_open=False), p)
    assert set(rec) >= {"rules", "secret", "rows", "timeout"}
    assert rec["secret"] is None
    assert len(rec["rows"]) == p.rows - 2
    assert all(len(r["guess"]) == p.holes for r in rec["rows"])


def test_hard_set_spans_profiles_and_tables():
    tables = [(t.profile.name, t.peg_set) for t, _ in hard_set(boards_per_profile=2, tables_per_profile=2)]
    assert len(tables) == 6
    assert {n for n, _ in tables} == {"invicta-12x4", "lego-10x4", "super-12x5"}
    assert len(set(tables)) == 6


def test_benchmark_quick_ends_with_one_json_line():
    data = json_line_of("vision.py", "--quick")
    for key in (
        "hole_error_rate",
        "false_mismark_rows",
        "missed_mismarks",
        "unknown_rate",
        "occluded_rate",
        "key_error_rate",
        "read_ms_median",
        "read_ms_full_median",
        "read_kept_share",
        "baseline_hole_error_rate",
        "boards",
    ):
        assert key in data, key
    assert data["boards"] == 6
    assert 0.0 <= data["hole_error_rate"] <= 1.0
    assert 0.0 <= data["read_kept_share"] <= 1.0


def test_benchmark_on_the_cached_pbr_set_ends_with_the_issue_keys():
    """`--set pbr` on three boards of the committed cache: nothing is rendered, the JSON line has issue 14's keys."""
    data = json_line_of("vision.py", "--set", "pbr", "--tables", "1", "--cache", PBR_CACHE, "--cases", "0,1,16")
    for key in (
        "false_mismark_rows",
        "mismarks_caught",
        "mismarks_unjudged",
        "hole_uncertain_rate",
        "hole_uncertain_rate_hands_5pct",
        "rows_covered_needlessly",
        "board_not_found_rate",
        "read_ms_median",
        "read_ms_first_median",
        "read_ms_full_median",
        "read_kept_share",
        "hole_error_rate",
        "hole_error_rate_2700_3500k",
        "hole_error_rate_full_trust",
        "hole_error_rate_full_trust_5500_6500k",
        "board_found_rate_blur",
        "board_found_rate_blur_ppm_ok",
        "board_found_rate_low_ppm",
    ):
        assert key in data, key
    assert data["boards"] == 3
    assert data["render_s_median"] is None, "boards were rendered: the cache is stale"
    assert data["false_mismark_rows"] == 0



def test_pbr_cases_read_with_a_known_lens_get_their_camera_s_lens(pbr):
    """`--lens known` reads each case as a table after `pegwatch calibrate-lens` would: with the
    intrinsics and distortion of the case's own camera, marked as measured."""
    import argparse
    import importlib.util

    from pegwatch.simulation.pbr.camera import Camera
    from pegwatch.simulation.pbr.testbed import case_inputs

    spec = importlib.util.spec_from_file_location("vision_bench", ROOT / "benchmarks" / "vision.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    table, cal, _ = pbr
    with_lens = bench._with_case_lens(cal, table.profile, table.peg_set, argparse.Namespace(seed=0, spp=8), 16)
    assert cal.lens is None
    assert with_lens.lens is not None and with_lens.lens.measured
    cam = Camera.of(case_inputs(table.profile, table.peg_set, 0, 16, spp=8)[1])
    assert with_lens.lens.camera_matrix.tolist() == cam.k.tolist()
    assert with_lens.lens.distortion[:2].tolist() == cam.dist[:2].tolist()
    assert with_lens.lens.image_size == (cam.width, cam.height)


def test_table_reads_on_the_cached_pbr_set_ends_with_its_keys():
    """`benchmarks/table_reads.py`: the table's worker over a few frames of three cached boards."""
    data = json_line_of(
        "table_reads.py", "--tables", "1", "--cache", PBR_CACHE, "--cached-only", "--cases", "0,1,16", "--frames", "4"
    )
    rows = data["table_rows_correct"] + data["table_mismarks"]
    assert rows > 0 and data["frames"] == 4
    assert rows == data["first_frame_rows_correct"] + data["first_frame_mismarks"]
    answered = sum(data[f"table_rows_answered_{k}"] for k in ("read", "bounded", "to_arbiter", "unanswered"))
    assert answered == rows
    assert data["table_mismarks"] == (
        data["table_mismarks_caught"] + data["table_mismarks_unjudged"] + data["table_mismarks_missed"]
    )
    assert data["table_false_mismark_rows"] == 0 and data["first_frame_false_mismark_rows"] == 0
    assert data["table_secrets_invented"] == 0 and data["first_frame_secrets_invented"] == 0
    assert 0 <= data["table_secrets_read"] <= 3
