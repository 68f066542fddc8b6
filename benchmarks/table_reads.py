"""Benchmark what the table answers, over frames, on the physically based hard set.

    .venv/bin/python benchmarks/table_reads.py --boards N --tables T --seed S --cache DIR [--cached-only]

``benchmarks/vision.py --set pbr`` scores one frame of each board. The
table never judges one frame: its vision worker
(``pegwatch.device.table.vision_worker``) answers the match flow's read
request for a row with the first reading that stays the same over
``frames_to_accept`` still frames after the press, and gives up after
``give_up_frames`` with what it knows (candidates and key-count bounds,
judged over every completion) or without (the row goes to the arbiter).

Here each board of the set is the scene in front of a fixed camera for
``--frames`` frames (the table's give-up, 12, by default): the rendered
frame, then the same scene with its sensor noise and JPEG drawn again each
frame (``simulation.pbr.sensor.recapture``: the rendered frame's noise
stays and twice a capture's is added, so each later frame is noisier than
a real one, and the table's figures err low). A table's reader and worker,
configured as ``pegwatch run`` configures them, get a guess and a marks
request for every marked row (every row before the last played, and the
last when it is mis-marked), made before the first frame. Each row is then
judged as the match flow judges the answers (``rules.flow``): a guess and
marks read, or within bounds, are judged by ``rules.bounded``; an answer
that is neither goes to the arbiter; a low-trust board is never accused
from. The secret judged against is the truth's (the arbiter's reveal);
the worker is also asked for the open secret, as at a game's end, and the
code it accepts (``secrets_read``) is checked against the truth
(``secrets_invented``: read on a closed or covered shield, or wrong).

Printed, for the table and for the first frame alone (the single-frame
verdict ``benchmarks/vision.py`` scores): mis-marked rows caught, never
judged and missed (cleared); correct rows accused and cleared; rows
answered read, within bounds, or sent to the arbiter. The last line is one
JSON object: ``table_*`` and ``first_frame_*`` keys (the first frame's secret
is what the worker's own rule accepts from it).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from pegwatch.device.table.row_values import secret_value
from pegwatch.device.table.vision_worker import Submit, VisionWorker
from pegwatch.rules.bounded import BoundedRow, CountRange
from pegwatch.rules.flow import ReadPhase, ReadRequest
from pegwatch.rules.flow.state import code_of, count_ranges, holes_of
from pegwatch.simulation.pbr.sensor import recapture
from pegwatch.simulation.pbr.testbed import case_inputs, parse_cases, pbr_set, truth_secret
from pegwatch.simulation.pbr.yardstick import (
    MISMARK,
    NOT_MARKED,
    bounded_verdict,
    judge_row,
)
from pegwatch.vision.calibrate import calibrate, truth_from_record
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import EMPTY, TRUST_FULL

FRAME_NS = 33_333_333
MOVE_NS = 10_000_000_000
TO_ARBITER = "to arbiter"
LOW_TRUST = "low trust"


def verdict_of(profile: BoardProfile, secret: tuple[str, ...], guess: Mapping[str, Any] | None,
               marks: Mapping[str, Any] | None) -> str:
    """The flow's verdict on a row from its guess and marks answers (see the module doc)."""
    if guess is None or marks is None:
        return TO_ARBITER
    if guess.get("trust") != TRUST_FULL or marks.get("trust") != TRUST_FULL:
        return LOW_TRUST
    n = profile.holes
    if guess["status"] == "ok":
        code = code_of(guess["guess"], n, "guess")
        if EMPTY in code and not profile.blanks:
            return NOT_MARKED  # the flow reports an illegal guess; its marks are not judged
        # A peg read not quite surely names what it may still be (as the flow judges it).
        named = holes_of(guess, n) if "candidates" in guess else None
        holes: tuple[tuple[str, ...] | None, ...] = named if named is not None else tuple((c,) for c in code)
    else:
        bounds = holes_of(guess, n)
        if bounds is None:
            return TO_ARBITER
        holes = bounds
    if marks["status"] == "ok":
        black, white = CountRange.exact(int(marks["black"])), CountRange.exact(int(marks["white"]))
    elif "candidates" in marks:
        black, white = count_ranges(marks, n)
    else:
        return TO_ARBITER
    return bounded_verdict(profile, secret, BoundedRow(holes, black, white))


def answer_kind(guess: Mapping[str, Any] | None, marks: Mapping[str, Any] | None) -> str:
    if guess is None or marks is None:
        return "unanswered"
    if guess["status"] == "ok" and marks["status"] == "ok":
        return "read"
    if ("candidates" in guess or guess["status"] == "ok") and ("candidates" in marks or marks["status"] == "ok"):
        return "bounded"
    return "to_arbiter"


def _keeper(answers: dict[tuple[int, str], dict[str, Any]]) -> Submit:
    """A worker's ``submit`` that keeps each row's first answer per phase."""

    def submit(_kind: str, payload: Mapping[str, Any], _at_ns: int, _jpeg: bytes | None) -> None:
        answers.setdefault((int(payload["row"]), str(payload["phase"])), dict(payload))

    return submit


def run(args: argparse.Namespace) -> dict[str, Any]:
    logging.getLogger("pegwatch").setLevel(logging.ERROR)
    cv2.setNumThreads(1)
    table_c: Counter[str] = Counter()
    first_c: Counter[str] = Counter()
    started = time.perf_counter()
    cache = Path(args.cache) if args.cache else None
    for table, cases in pbr_set(
        boards_per_profile=args.boards, profiles=("invicta-12x4",), tables_per_profile=args.tables,
        seed=args.seed, spp=args.spp, cache=cache,
        cases=parse_cases(args.cases) if args.cases else None, cached_only=args.cached_only,
    ):
        p = table.profile
        cal = calibrate([b.image for b in table.calibration],
                        [truth_from_record(b.truth, p, where="calibration truth") for b in table.calibration], p)
        for case in cases:
            b = case.board
            truth = truth_from_record(b.truth, p, where="truth")
            secret = truth_secret(b)
            mismarked = set(b.meta["mismarked_rows"])
            played = [r.row for r in truth.rows if any(h.colour != EMPTY for h in r.holes)]
            last = max(played, default=0)
            rows = [r for r in played if r < last or r in mismarked]
            cond = case_inputs(p, table.peg_set, table.seed, case.index, spp=args.spp)[1]
            rng = np.random.default_rng([args.seed, table.peg_set, case.index, 7])
            answers: dict[tuple[int, str], dict[str, Any]] = {}
            reader = BoardReader(p, cal, keep_after=args.frames_to_accept)
            worker = VisionWorker(
                None, reader, frames_to_accept=args.frames_to_accept, give_up_frames=args.frames, evidence=False,
                submit=_keeper(answers),
            )
            t0 = case.index * MOVE_NS
            worker.set_requests([ReadRequest(1, r, phase, t0) for r in rows for phase in (ReadPhase.GUESS, ReadPhase.MARKS)]
                                + [ReadRequest(1, 0, ReadPhase.SECRET, t0)])
            first = worker.feed(b.image, t0)
            for i in range(1, args.frames):
                worker.feed(recapture(b.image, cond, rng), t0 + i * FRAME_NS)
            if first.problem is not None:
                table_c["boards_not_found"] += 1
                continue
            seen_first = secret_value(first)
            answer = answers.get((0, "secret"))
            for c, code in ((table_c, tuple(answer["code"]) if answer and answer["status"] == "ok" else None),
                            (first_c, None if seen_first is None else seen_first[0])):
                if code is not None:
                    c["secrets_read"] += 1
                    c["secrets_invented"] += bool(
                        b.meta["shield_closed"] or b.meta["secret_covered"] or code != secret)
            for r in rows:
                kind = "mis" if r in mismarked else "ok"
                guess, marks = answers.get((r, "guess")), answers.get((r, "marks"))
                table_c[f"{kind} {verdict_of(p, secret, guess, marks)}"] += 1
                table_c[f"answer {answer_kind(guess, marks)}"] += 1
                single = judge_row(p, secret, first.row(r), is_last=r == last)
                first_c[f"{kind} {LOW_TRUST if first.trust != TRUST_FULL else single}"] += 1
    out: dict[str, Any] = {"frames": args.frames, "frames_to_accept": args.frames_to_accept}
    for prefix, c in (("table", table_c), ("first_frame", first_c)):
        mis = sum(v for k, v in c.items() if k.startswith("mis "))
        ok = sum(v for k, v in c.items() if k.startswith("ok "))
        out[f"{prefix}_rows_correct"] = ok
        out[f"{prefix}_false_mismark_rows"] = c[f"ok {MISMARK}"]
        out[f"{prefix}_rows_correct_cleared"] = c["ok clear"]
        out[f"{prefix}_mismarks"] = mis
        out[f"{prefix}_mismarks_caught"] = c[f"mis {MISMARK}"]
        out[f"{prefix}_mismarks_missed"] = c["mis clear"]
        out[f"{prefix}_mismarks_unjudged"] = mis - c[f"mis {MISMARK}"] - c["mis clear"]
        out[f"{prefix}_mismarks_caught_rate"] = round(c[f"mis {MISMARK}"] / mis, 4) if mis else None
        out[f"{prefix}_secrets_read"] = c["secrets_read"]
        out[f"{prefix}_secrets_invented"] = c["secrets_invented"]
    for kind in ("read", "bounded", "to_arbiter", "unanswered"):
        out[f"table_rows_answered_{kind}"] = table_c[f"answer {kind}"]
    out["boards_not_found"] = table_c["boards_not_found"]
    out["elapsed_s"] = round(time.perf_counter() - started, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=12, help="hard boards per table (default 12)")
    ap.add_argument("--tables", type=int, default=2, help="tables (peg sets) (default 2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", default=None, help="a folder keeping rendered boards between runs")
    ap.add_argument("--cached-only", action="store_true", help="read only the cases the cache holds; render nothing")
    ap.add_argument("--cases", default=None, help='case numbers per table, e.g. "0-9,16" (instead of --boards)')
    ap.add_argument("--spp", type=int, default=8, help="samples per pixel of the hard boards")
    ap.add_argument("--frames", type=int, default=12, help="frames of each board (default 12: the worker's give-up)")
    ap.add_argument("--frames-to-accept", type=int, default=3, help="the table's frames_to_accept (default 3)")
    args = ap.parse_args(argv)
    if args.cached_only and not args.cache:
        print("--cached-only needs --cache DIR", file=sys.stderr)
        return 2
    s = run(args)
    print(f"table reads, physically based set: seed {args.seed}, {args.tables} table(s), "
          f"{args.frames} frames a board, frames_to_accept {args.frames_to_accept}, one core")
    print(f"{'':40s} {'table':>10s} {'first frame':>12s}")
    for label, key in (("mis-marked rows", "mismarks"), ("  caught", "mismarks_caught"),
                       ("  never judged", "mismarks_unjudged"), ("  missed (cleared)", "mismarks_missed"),
                       ("correct rows", "rows_correct"), ("  accused", "false_mismark_rows"),
                       ("  cleared", "rows_correct_cleared"), ("secrets read", "secrets_read"),
                       ("  invented (closed, covered or wrong)", "secrets_invented")):
        print(f"{label:40s} {s[f'table_{key}']:>10d} {s[f'first_frame_{key}']:>12d}")
    print("rows answered: " + ", ".join(
        f"{kind.replace('_', ' ')} {s[f'table_rows_answered_{kind}']}" for kind in ("read", "bounded", "to_arbiter", "unanswered")))
    print(json.dumps(s, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
