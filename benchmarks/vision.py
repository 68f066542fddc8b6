"""Benchmark the board reader on the hard rendered set, side by side with the HSV baseline.

    .venv/bin/python benchmarks/vision.py [--quick] [--boards N] [--seed S]
    .venv/bin/python benchmarks/vision.py --set pbr [--boards N] [--cache DIR [--cached-only]] [--spp S]

``--set pbr`` reads the physically based hard set instead (Mitsuba 3 renders
with pegs as solids, hands and sleeves, shields, warm and mixed light, lens
distortion, blur, Bayer noise and JPEG; see ``docs/testbed.md``): each table
is calibrated from its easy photos through ``pegwatch.vision.calibrate`` and
its hard boards are read with the real reader; the JSON line has the keys of
issue 14's table (``pegwatch.simulation.pbr.yardstick``). Rendered boards are
kept in ``--cache`` and read from it on the next run.

Per profile, a few tables are calibrated from easy photos (as an installer
would), then read hard photos of games in progress: half marked correctly,
half with injected mis-marks. Printed: per-hole accuracy, per-row key-count
accuracy, mis-marks flagged on correctly marked boards, mis-marks caught,
uncertain or missed on wrongly marked boards, unknown and occluded rates,
occluded rows caught, and read times at 1280x720 on one core
(``cv2.setNumThreads(1)``). The last line is one JSON object.

Definitions:

* a hole *error* is a hole read confidently (not unknown/occluded) as the
  wrong thing; ``hole_error_rate`` = errors / all code holes of all rows
  (plus the secret holes when the shield is open);
* a row is *judged* when the reader says it is ok (every hole and key hole
  read confidently), it is complete and it is marked (its keys are present,
  or a later row is played); it is *flagged* when ``pegwatch.rules.codes.score`` of
  the truth's secret against the read guess differs from the read keys;
* ``false_mismark_rows``: rows flagged on correctly marked boards;
* ``missed_mismarks``: injected mis-marks that were neither flagged nor
  reported uncertain (the row not "ok");
* ``read_ms_median``: a read of a frame from a fixed camera, which is the
  table's steady state (the localiser keeps its fit while the markers stay
  put): a later frame of the same still scene, each frame's sensor noise
  and JPEG drawn again (``simulation.pbr.sensor.recapture``), read once
  the reader has seen the board unchanged for as many frames as it wants
  (three, a frame apart, after the first); ``read_kept_share``: the share
  of those frames the reader found unchanged and gave the last reading
  (``pegwatch.vision.still_board``);
  ``read_ms_full_median``: the same frames read in full, the still board
  off; ``read_ms_first_median``: the first read of a new camera pose,
  which also detects the markers afresh and fits the hole grid.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2
import numpy as np

from pegwatch.rules.codes import score
from pegwatch.simulation.baseline_hsv import read_hsv
from pegwatch.simulation.hardset import PROFILES, hard_set, truth_reading
from pegwatch.simulation.pbr.conditions import PbrConditions
from pegwatch.simulation.pbr.sensor import recapture
from pegwatch.vision.calibrate import calibrate, truth_from_record
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import EMPTY, OCCLUDED, ROW_OK, TRUST_FULL, UNKNOWN, BoardReading
from pegwatch.vision.still_board import AGREE_READS

#: The frames' stamps, as a table's camera would give them: each hard case a
#: moment of a game ten seconds after the last, and its steady read a few
#: frames later. The reader keeps its fit by these stamps, never by how long a read took.
MOVE_NS = 10_000_000_000
FRAME_NS = 33_333_333


class SteadyTimes:
    """The steady reads' times (ms): as the table reads them, and the same frames read in full."""

    def __init__(self) -> None:
        self.kept_or_not: list[float] = []
        self.full: list[float] = []
        self.kept: list[bool] = []

    def figures(self) -> dict[str, Any]:
        n = len(self.kept_or_not)
        return {
            "read_ms_median": round(float(np.median(self.kept_or_not)), 3) if n else None,
            "read_ms_full_median": round(float(np.median(self.full)), 3) if n else None,
            "read_kept_share": round(sum(self.kept) / n, 4) if n else None,
        }


def steady_read(reader: BoardReader, frames: list[np.ndarray], at_ns: int, times: SteadyTimes) -> None:
    """Read ``frames``, the next frames after the one read at ``at_ns``, one frame apart, as the
    table does, timing the last (the steady state: the frames before it let the reader see the
    board unchanged for as many frames as it wants); then that frame again a frame later with
    the still board off (a full read), timed too."""
    for i, frame in enumerate(frames[:-1], start=1):
        reader.read(frame, at_ns=at_ns + i * FRAME_NS)
    last = at_ns + len(frames) * FRAME_NS
    t0 = time.perf_counter()
    reader.read(frames[-1], at_ns=last)
    t1 = time.perf_counter()
    times.kept.append(reader.last_read_kept)
    reader.keep_still = False
    try:
        reader.read(frames[-1], at_ns=last + FRAME_NS)
    finally:
        reader.keep_still = True
    times.kept_or_not.append((t1 - t0) * 1000)
    times.full.append((time.perf_counter() - t1) * 1000)


def next_frames(frame: np.ndarray, c: PbrConditions, rng: np.random.Generator) -> list[np.ndarray]:
    """The frames after ``frame`` up to the steady state: as many as the reader wants to see the
    board unchanged before it keeps its reading, each with its own noise and JPEG."""
    return [recapture(frame, c, rng) for _ in range(AGREE_READS)]


class Tally:
    """Counts for one reader over the whole set."""

    def __init__(self) -> None:
        self.c: Counter[str] = Counter()
        self.confusion: Counter[tuple[str, str]] = Counter()

    def add_board(
        self,
        profile: BoardProfile,
        truth: BoardReading,
        secret: tuple[str, ...],
        read: BoardReading,
        mismarked: frozenset[int],
        occluded_rows: frozenset[int],
        shield_open: bool,
    ) -> None:
        c = self.c
        c["boards"] += 1
        if read.problem is not None:
            c["board_problems"] += 1
        for t_row, r_row in zip(truth.rows, read.rows, strict=True):
            for t, h in zip(t_row.holes, r_row.holes, strict=True):
                self._hole(t.colour, h.colour)
            if t_row.row in occluded_rows:
                c["rows_truly_occluded"] += 1
                if r_row.status != ROW_OK and r_row.status != "empty":
                    c["occluded_rows_caught"] += 1
            elif r_row.status == "occluded":
                c["rows_occluded_needlessly"] += 1
            c["rows"] += 1
            if r_row.keys.is_certain and r_row.status != "occluded":
                if (r_row.keys.black, r_row.keys.white) != (t_row.keys.black, t_row.keys.white):
                    c["key_errors"] += 1
            else:
                c["key_unknown"] += 1
        if shield_open and read.secret is not None:
            assert truth.secret is not None
            for t, h in zip(truth.secret, read.secret, strict=True):
                self._hole(t.colour, h.colour)

        played = [r.row for r in truth.rows if r.status != "empty"]
        last = max(played, default=0)
        for r_row in read.rows:
            if r_row.row > last:
                continue
            t_row = truth.row(r_row.row)
            # A low-trust board is shown, never accused from (rules.flow): so here too.
            flagged, judged = (False, False) if read.trust != TRUST_FULL else _judge(profile, secret, r_row, is_last=r_row.row == last)
            if r_row.row in mismarked:
                c["mismarks_injected"] += 1
                if flagged:
                    c["mismarks_caught"] += 1
                elif not judged:
                    c["mismarks_uncertain"] += 1
                else:
                    c["missed_mismarks"] += 1
            elif not mismarked:
                if flagged:
                    c["false_mismark_rows"] += 1
                if judged:
                    c["rows_judged_correct_boards"] += 1
            _ = t_row

    def _hole(self, truth: str, read: str) -> None:
        self.c["holes"] += 1
        if read == UNKNOWN:
            self.c["unknown"] += 1
        elif read == OCCLUDED:
            self.c["occluded"] += 1
        elif read != truth:
            self.c["hole_errors"] += 1
            self.confusion[(truth, read)] += 1


def _judge(profile: BoardProfile, secret: tuple[str, ...], row: Any, *, is_last: bool) -> tuple[bool, bool]:
    """(flagged, judged) as the table program would do it."""
    if row.status != ROW_OK or not row.keys.is_certain:
        return False, False
    guess = row.guess
    if not profile.blanks and EMPTY in guess:
        return False, False  # pegs still being placed
    if is_last and row.keys.status == "empty":
        return False, False  # not marked yet
    fb = score(secret, guess)
    return (fb.black, fb.white) != (row.keys.black, row.keys.white), True


def run(boards: int, seed: int, profiles: tuple[str, ...], tables: int, verbose: bool) -> dict[str, Any]:
    cv2.setNumThreads(1)
    ours, base = Tally(), Tally()
    timings = SteadyTimes()
    first: list[float] = []
    started = time.perf_counter()
    for table, cases in hard_set(boards_per_profile=boards, tables_per_profile=tables, profiles=profiles, seed=seed):
        p = table.profile
        truths = [truth_from_record(t, p, where="calibration truth") for t in table.calibration_truths()]
        cal = calibrate([r.image for r in table.calibration], truths, p)
        reader = BoardReader(p, cal)
        for case in cases:
            r = case.rendered
            contents = r.contents
            assert contents.secret is not None
            truth = truth_reading(contents, p)
            t0 = time.perf_counter()
            reading = reader.read(r.image, at_ns=case.index * MOVE_NS)
            first.append((time.perf_counter() - t0) * 1000)
            # This renderer keeps no sensor model: the next frames get the physically based set's default noise.
            rng = np.random.default_rng([seed, table.peg_set, case.index])
            steady_read(reader, next_frames(r.image, PbrConditions(), rng), case.index * MOVE_NS, timings)
            ours.add_board(p, truth, contents.secret, reading, contents.mismarked_rows, r.occluded_rows, contents.shield_open)
            loc = reader.last_localisation
            if loc is not None and loc.ok:
                hsv = read_hsv(p, reader.sampler, r.image, loc.image_to_board)
            else:
                hsv = reader.unreadable(loc.problem if loc is not None else "no board", 0)
            base.add_board(p, truth, contents.secret, hsv, contents.mismarked_rows, r.occluded_rows, contents.shield_open)
            if verbose:
                print(f"  {p.name} peg set {table.peg_set} board {case.index}: "
                      f"errors so far {ours.c['hole_errors']}, unknown {ours.c['unknown']}", file=sys.stderr)
    elapsed = time.perf_counter() - started
    return {"ours": ours, "base": base, "steady": timings, "first": first, "elapsed": elapsed}


def summary(res: dict[str, Any]) -> dict[str, Any]:
    o: Counter[str] = res["ours"].c
    b: Counter[str] = res["base"].c
    holes = max(o["holes"], 1)
    rows = max(o["rows"], 1)
    occ = max(o["rows_truly_occluded"], 1)
    return {
        "boards": o["boards"],
        "holes": o["holes"],
        "hole_error_rate": round(o["hole_errors"] / holes, 6),
        "hole_errors": o["hole_errors"],
        "unknown_rate": round(o["unknown"] / holes, 4),
        "occluded_rate": round(o["occluded"] / holes, 4),
        "key_error_rate": round(o["key_errors"] / rows, 6),
        "key_unknown_rate": round(o["key_unknown"] / rows, 4),
        "false_mismark_rows": o["false_mismark_rows"],
        "rows_judged_on_correct_boards": o["rows_judged_correct_boards"],
        "mismarks_injected": o["mismarks_injected"],
        "mismarks_caught": o["mismarks_caught"],
        "mismarks_uncertain": o["mismarks_uncertain"],
        "missed_mismarks": o["missed_mismarks"],
        "occluded_rows_caught_rate": round(o["occluded_rows_caught"] / occ, 4),
        "rows_truly_occluded_rate": round(o["rows_truly_occluded"] / rows, 4),
        "rows_occluded_needlessly_rate": round(o["rows_occluded_needlessly"] / rows, 4),
        "board_problems": o["board_problems"],
        **res["steady"].figures(),
        "read_ms_first_median": round(float(np.median(res["first"])), 3),
        "read_ms_p90": round(float(np.percentile(res["steady"].kept_or_not, 90)), 3),
        "baseline_hole_error_rate": round(b["hole_errors"] / max(b["holes"], 1), 6),
        "baseline_key_error_rate": round(b["key_errors"] / max(b["rows"], 1), 6),
        "baseline_false_mismark_rows": b["false_mismark_rows"],
        "baseline_missed_mismarks": b["missed_mismarks"],
        "elapsed_s": round(res["elapsed"], 1),
    }


def _with_case_lens(cal: Any, p: BoardProfile, peg_set: int, args: argparse.Namespace, index: int) -> Any:
    """``cal`` with the lens of hard case ``index``'s camera, as ``pegwatch calibrate-lens`` would measure it."""
    import dataclasses

    from pegwatch.simulation.pbr.camera import Camera
    from pegwatch.simulation.pbr.testbed import case_inputs
    from pegwatch.vision.lens import Lens

    _, cond, _ = case_inputs(p, peg_set, args.seed, index, spp=args.spp)
    cam = Camera.of(cond)
    lens = Lens(camera_matrix=cam.k, distortion=cam.dist, image_size=(cam.width, cam.height), rms_px=0.0, views=1)
    return dataclasses.replace(cal, lens=lens)


def run_pbr(args: argparse.Namespace) -> int:
    """The physically based set: render (or read from the cache), calibrate, read and score."""
    import logging

    from pegwatch.simulation.pbr.testbed import LIGHT_BANDS, case_inputs, parse_cases, pbr_set
    from pegwatch.simulation.pbr.yardstick import PbrTally
    from pegwatch.simulation.pbr.yardstick import summary as pbr_summary

    logging.getLogger("pegwatch").setLevel(logging.ERROR)
    cv2.setNumThreads(1)
    profiles = tuple(p for p in (args.profiles or "invicta-12x4").split(",") if p)
    boards = args.boards or 12
    tables = args.tables or 2
    cache = Path(args.cache) if args.cache else None
    tally = PbrTally()
    timings = SteadyTimes()
    first: list[float] = []
    render_s: list[float] = []
    started = time.perf_counter()
    if args.cached_only and cache is None:
        print("--cached-only needs --cache DIR", file=sys.stderr)
        return 2
    for table, cases in pbr_set(
        boards_per_profile=boards,
        profiles=profiles,
        tables_per_profile=tables,
        seed=args.seed,
        spp=args.spp,
        cache=cache,
        cases=parse_cases(args.cases) if args.cases else None,
        cached_only=args.cached_only,
    ):
        p = table.profile
        truths = [truth_from_record(b.truth, p, where="calibration truth") for b in table.calibration]
        cal = calibrate([b.image for b in table.calibration], truths, p)
        for case in cases:
            # Every case is its own camera (pose, lens, light): a fit kept
            # from the last case's camera would read another board.
            reader = BoardReader(p, _with_case_lens(cal, p, table.peg_set, args, case.index) if args.lens == "known" else cal)
            b = case.board
            if b.seconds:
                render_s.append(b.seconds)
            t0 = time.perf_counter()
            reading = reader.read(b.image, at_ns=case.index * MOVE_NS)
            first.append((time.perf_counter() - t0) * 1000)
            cond = case_inputs(p, table.peg_set, table.seed, case.index, spp=args.spp)[1]
            rng = np.random.default_rng([args.seed, table.peg_set, case.index, 3])
            steady_read(reader, next_frames(b.image, cond, rng), case.index * MOVE_NS, timings)
            name = f"{p.name} peg set {table.peg_set} case {case.index}"
            tally.add(p, b, reading, name=name)
            if args.verbose:
                print(f"  {name}: {reading.problem or 'read'}; false so far {tally.c['false_mismark_rows']}",
                      file=sys.stderr, flush=True)
    s = pbr_summary(tally, timings.kept_or_not, first)
    s.update(timings.figures())
    s["render_s_median"] = round(float(np.median(render_s)), 2) if render_s else None
    s["lens"] = args.lens
    s["elapsed_s"] = round(time.perf_counter() - started, 1)
    print(f"vision benchmark, physically based set: {s['boards']} boards ({', '.join(profiles)}), seed {args.seed}, "
          f"{tables} table(s) per profile, {args.spp} spp, cache {cache}, 1280x720, one core, lens {args.lens}")
    print(f"{'correct rows accused of a mis-mark':44s} {s['false_mismark_rows']} of {s['rows_correct']}"
          f" (on {s['false_mismark_boards']} boards)")
    print(f"{'mis-marked rows caught / never judged':44s} {s['mismarks_caught']} / {s['mismarks_unjudged']}"
          f" of {s['mismarks_injected']} (missed while judged: {s['mismarks_missed']})")
    print(f"{'  of them with no hand over the row':44s} {s['mismarks_caught_uncovered']} / {s['mismarks_unjudged_uncovered']}"
          f" of {s['mismarks_injected_uncovered']} ({100 * s['mismarks_caught_rate_uncovered']:.1f} % caught)")
    print(f"{'holes uncertain':44s} {100 * s['hole_uncertain_rate']:.1f} %"
          f" (not under a hand: {100 * s['hole_uncertain_rate_uncovered']:.1f} %;"
          f" on the {s['boards_no_hand']} boards with no hand: {100 * s['hole_uncertain_rate_no_hand']:.1f} %;"
          f" on {s['boards_hands_5pct']} boards with {100 * s['rows_under_hand_rate_hands_5pct']:.1f} % of rows under a hand:"
          f" {100 * s['hole_uncertain_rate_hands_5pct']:.1f} %)")
    print(f"{'  of that set: holes in rows under a hand':44s} {100 * s['holes_under_hand_rate_hands_5pct']:.1f} %;"
          f" uncertain in the other rows {100 * s['hole_uncertain_rate_hands_5pct_uncovered']:.1f} %")
    print(f"{'rows called covered with no hand over them':44s} {s['rows_covered_needlessly']} of "
          f"{s['rows_called_covered']} covered rows ({s['rows']} rows, {100 * s['rows_truly_covered_rate']:.1f} % under a hand)")
    print(f"{'board not found':44s} {100 * s['board_not_found_rate']:.1f} %"
          f" (found: blurred {s['board_found_rate_blur']:.3f} of {s['boards_blurred']}"
          f" ({s['board_found_rate_blur_ppm_ok']:.3f} of {s['boards_blurred_ppm_ok']} at >= 2.5 px/mm),"
          f" < 2.5 px/mm {s['board_found_rate_low_ppm']:.3f} of {s['boards_low_ppm']},"
          f" >= 2.5 px/mm {s['board_found_rate_ppm_ok']:.3f})")
    print(f"{'boards read low-trust (never accused)':44s} {s['boards_low_trust']}")
    print(f"{'read time median (fixed camera / new pose)':44s} {s['read_ms_median']} / {s['read_ms_first_median']} ms"
          f" (fixed camera: {100 * s['read_kept_share']:.1f} % of frames unchanged, kept; read in full {s['read_ms_full_median']} ms)")
    bands = [f"{lo}_{hi}k" for lo, hi in LIGHT_BANDS]
    print(f"{'hole errors on confident holes':44s} {s['hole_error_rate']:.5f}  by light: " + ", ".join(
        f"{b} {s['hole_error_rate_' + b]:.5f}" for b in bands))
    print(f"{'  of those on full-trust boards':44s} {s['hole_error_rate_full_trust']:.5f}  by light: " + ", ".join(
        f"{b} {s['hole_error_rate_full_trust_' + b]:.5f}" for b in bands))
    print(f"{'  by the confidence they were read with':44s} below 0.999: {s['hole_error_rate_full_trust_conf_below_999']:.5f}"
          f" ({100 * s['holes_confident_full_trust_conf_below_999_share']:.1f} % of them),"
          f" 0.999 and up: {s['hole_error_rate_full_trust_conf_999_up']:.5f}")
    print(f"{'secrets read / invented':44s} {s['secrets_read']} / {s['secret_invented']}")
    conf = tally.confusion.most_common(8)
    if conf:
        print("confusions (truth -> read): " + ", ".join(f"{t}->{r} x{n}" for (t, r), n in conf))
    if tally.false_boards:
        print("boards with a false accusation: " + "; ".join(tally.false_boards))
    print(json.dumps(s, sort_keys=True))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a tiny set (for the test of this script)")
    ap.add_argument("--boards", type=int, default=None, help="hard boards per profile (default 100; quick 2)")
    ap.add_argument("--tables", type=int, default=None, help="tables (peg sets) per profile (default 2; quick 1)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profiles", default=None, help=f"default {','.join(PROFILES)} (pbr: invicta-12x4)")
    ap.add_argument("--set", choices=("render", "pbr"), default="render",
                    help="the hand-written renderer's hard set (default) or the physically based one")
    ap.add_argument("--cache", default=None, help="pbr: a folder keeping rendered boards between runs")
    ap.add_argument("--spp", type=int, default=8, help="pbr: samples per pixel of the hard boards")
    ap.add_argument("--cases", default=None, help='pbr: case numbers per table, e.g. "0-9,16" (instead of --boards)')
    ap.add_argument("--cached-only", action="store_true", help="pbr: read only the cases the cache holds; render nothing")
    ap.add_argument("--lens", choices=("none", "known"), default="none",
                    help="pbr: read each case without a calibrated lens, or with its camera's true lens "
                         "(a table after pegwatch calibrate-lens)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    if args.set == "pbr":
        return run_pbr(args)
    boards = args.boards or (2 if args.quick else 100)
    tables = args.tables or (1 if args.quick else 2)
    profiles = tuple(p for p in (args.profiles or ",".join(PROFILES)).split(",") if p)
    res = run(boards, args.seed, profiles, tables, args.verbose)
    s = summary(res)
    print(f"vision benchmark: {s['boards']} hard boards ({', '.join(profiles)}), seed {args.seed}, "
          f"{tables} table(s) per profile, 1280x720, one core")
    print(f"{'':32s} {'reader':>12s} {'HSV baseline':>14s}")
    print(f"{'hole error rate':32s} {s['hole_error_rate']:12.5f} {s['baseline_hole_error_rate']:14.5f}")
    print(f"{'key-count error rate (rows)':32s} {s['key_error_rate']:12.5f} {s['baseline_key_error_rate']:14.5f}")
    print(f"{'false mis-mark rows':32s} {s['false_mismark_rows']:12d} {s['baseline_false_mismark_rows']:14d}")
    print(f"{'missed mis-marks':32s} {s['missed_mismarks']:12d} {s['baseline_missed_mismarks']:14d}")
    print(f"{'mis-marks caught / uncertain':32s} {s['mismarks_caught']:>6d} / {s['mismarks_uncertain']:<4d}"
          f"   (of {s['mismarks_injected']} injected)")
    print(f"{'unknown / occluded hole rate':32s} {s['unknown_rate']:>6.4f} / {s['occluded_rate']:.4f}")
    print(f"{'key rows unknown':32s} {s['key_unknown_rate']:12.4f}")
    print(f"{'hand-covered rows not ok':32s} {s['occluded_rows_caught_rate']:12.4f}"
          f"   (rows under a hand: {s['rows_truly_occluded_rate']:.4f}; "
          f"rows called occluded needlessly: {s['rows_occluded_needlessly_rate']:.4f})")
    print(f"{'read ms median (fixed camera)':32s} {s['read_ms_median']:12.2f}")
    print(f"{'  frames unchanged, kept':32s} {s['read_kept_share']:12.4f}")
    print(f"{'  read in full, median ms':32s} {s['read_ms_full_median']:12.2f}")
    print(f"{'read ms median (new pose)':32s} {s['read_ms_first_median']:12.2f}")
    conf = res["ours"].confusion.most_common(8)
    if conf:
        print("reader confusions (truth -> read): " + ", ".join(f"{t}->{r} x{n}" for (t, r), n in conf))
    bconf = res["base"].confusion.most_common(5)
    if bconf:
        print("baseline confusions: " + ", ".join(f"{t}->{r} x{n}" for (t, r), n in bconf))
    print(json.dumps(s, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
