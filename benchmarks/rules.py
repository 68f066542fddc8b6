"""Benchmark of the rules core: scoring against all codes, the
consistency analysis (with and without a mis-marked row), and rows known
within bounds (two holes that may hold anything, in the first row, the
worst place: judged against the secret, and in the hidden-secret check).

Run: ``.venv/bin/python benchmarks/rules.py``. Prints a table, then ONE JSON
line of named figures in milliseconds per call. Single process, no threads.
"""

from __future__ import annotations

import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pegwatch.rules.bounded_consistency import analyse_bounded
from pegwatch.rules.codes import UNKNOWN, Feedback, score, score_against_all
from pegwatch.rules.consistency import analyse
from pegwatch.rules.judge import judge_game
from pegwatch.rules.record import GameRecord, Row
from pegwatch.rules.variants import Scoring, Variant

SIZES = [(8, 4), (8, 5), (9, 6)]
ROWS = 12


def variant(colours: int, holes: int) -> Variant:
    return Variant(
        name=f"{colours}x{holes}", colours=colours,
        palette=tuple(f"c{i}" for i in range(colours)), holes=holes, rows=ROWS,
        blanks=False, repeats=True, scoring=Scoring.MSO, clock_preset=None,
        failure_attempts=ROWS + 1, games_per_match=2,
    )


def history(v: Variant, rng: random.Random, *, mismark: bool) -> list[Row]:
    """Twelve random guesses against a random secret, marked by score();
    with ``mismark``, one row's marks are changed so that no code fits."""
    while True:
        secret = tuple(rng.choice(v.palette) for _ in range(v.holes))
        rows = []
        for _ in range(ROWS):
            guess = tuple(rng.choice(v.palette) for _ in range(v.holes))
            rows.append(Row(guess, score(secret, guess)))
        if not mismark:
            return rows
        i = rng.randrange(ROWS)
        b, w = rows[i].marks or Feedback(0, 0)
        wrong = Feedback(b, w + 1) if b + w < v.holes else Feedback(b - 1, w) if b else Feedback(0, w - 1)
        rows[i] = Row(rows[i].guess, wrong)
        if analyse(rows, v).consistent == 0:
            return rows


def per_call_ms(fn: Callable[[], object], *, min_seconds: float = 0.4, min_calls: int = 5) -> float:
    fn()  # warm caches (the code tables are built once per size)
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds and calls >= min_calls:
            return elapsed * 1000 / calls


def measure(colours: int, holes: int, rng: random.Random) -> dict[str, float]:
    """Figures for one board size, and a printed table line."""
    v = variant(colours, holes)
    tag = f"{colours}x{holes}"
    guess = [rng.randrange(colours) for _ in range(holes)]
    clean = history(v, rng, mismark=False)
    broken = history(v, rng, mismark=True)
    score_ms = per_call_ms(lambda: score_against_all(guess, colours, holes))
    clean_ms = per_call_ms(lambda: analyse(clean, v))
    broken_ms = per_call_ms(lambda: analyse(broken, v))
    report = analyse(broken, v)
    print(f"{tag:>5}  {colours**holes:>7}  {score_ms:>12.3f}  {clean_ms:>14.3f}  "
          f"{broken_ms:>16.3f}  {list(report.suspect_rows)}")
    return {
        f"score_all_ms_{tag}": score_ms,
        f"consistency_ms_{tag}": clean_ms,
        f"consistency_mismark_ms_{tag}": broken_ms,
    }


def measure_bounded(colours: int, holes: int) -> dict[str, float]:
    """Figures for twelve rows whose first has holes 2 and 4 unknown."""
    v = variant(colours, holes)
    tag = f"{colours}x{holes}"
    rng = random.Random(colours * 100 + holes)  # apart from the figures above
    secret = tuple(rng.choice(v.palette) for _ in range(v.holes))
    rows = []
    for _ in range(ROWS):
        guess = tuple(rng.choice(v.palette) for _ in range(v.holes))
        rows.append(Row(guess, score(secret, guess)))
    doubtful = list(rows[0].guess)
    doubtful[1] = doubtful[3] = UNKNOWN
    rows[0] = Row(tuple(doubtful), rows[0].marks)
    shown = GameRecord(v.name, secret, tuple(rows))
    judge_ms = per_call_ms(lambda: judge_game(shown, v))
    hidden_ms = per_call_ms(lambda: analyse_bounded(rows, v))
    report = analyse_bounded(rows, v)
    print(f"{tag:>5}  {judge_ms:>15.3f}  {hidden_ms:>21.3f}  {report.verdict.value}")
    return {f"bounded_judge_ms_{tag}": judge_ms, f"bounded_consistency_ms_{tag}": hidden_ms}


def main() -> None:
    rng = random.Random(2026)
    figures: dict[str, float] = {}
    print(f"{'size':>5}  {'codes':>7}  {'score_all ms':>12}  {'consistency ms':>14}  "
          f"{'with mis-mark ms':>16}  suspects")
    for colours, holes in SIZES:
        figures.update(measure(colours, holes, rng))
    print(f"{'size':>5}  {'bounded judge ms':>15}  {'bounded consistency ms':>21}  verdict")
    for colours, holes in SIZES:
        figures.update(measure_bounded(colours, holes))
    print(json.dumps({k: round(val, 4) for k, val in figures.items()}))


if __name__ == "__main__":
    main()
