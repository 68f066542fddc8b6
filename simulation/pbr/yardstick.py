"""Scoring a reader against the physically rendered boards: the figures of issue 14's table.

Definitions (``docs/testbed.md`` has them with the benchmark's keys):

* A row is *judged* as the table would with what the reader knows, by the
  rules core itself (:func:`pegwatch.rules.bounded.judge_row`): each hole
  may hold its read colour (a certain hole), its candidates, or any palette
  colour (an unknown or occluded hole without candidates); the key counts
  are the read ones, their bounds, or anything. The row is a proven
  **mis-mark** when every completion disagrees with the marks, **clear**
  when every completion agrees, and **unsure** otherwise; a completion
  with a bare hole, in a game without blanks, is a row still incomplete,
  which disagrees with nothing.
* The secret judged against is the camera's when the reader reports a
  secret with every hole certain (what a table does with an open shield),
  else the true one (revealed at the end of the game). So an invented
  secret (a hand, a sleeve or a closed shield read as pegs) shows up as
  false accusations.
* Only marked rows are judged (the last played row counts when it has key
  pegs); a row whose read keys are empty on the last row is not marked yet.
* A low-trust reading is never judged: the table shows it and never
  accuses from it (``rules.flow``), so its rows count as unjudged.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from pegwatch.rules.bounded import BoundedRow, CountRange, Judgement
from pegwatch.rules.bounded import judge_row as bounded_judge_row
from pegwatch.rules.variants import Variant, get_variant
from pegwatch.simulation.pbr.testbed import (
    LIGHT_BANDS,
    PbrBoard,
    is_low_ppm,
    light_band,
    truth_secret,
)
from pegwatch.vision.calibrate import truth_from_record
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.reading import (
    EMPTY,
    OCCLUDED,
    ROW_OCCLUDED,
    TRUST_FULL,
    UNKNOWN,
    BoardReading,
    RowReading,
)

MISMARK = "mismark"
CLEAR = "clear"
UNSURE = "unsure"
NOT_MARKED = "not marked"
#: Confident holes read at a confidence below this are tallied apart: the
#: reader accepts a hole from a posterior of 0.99, and those between that
#: and this should err no more often than about one in two hundred.
SURE_CONFIDENCE = 0.999


def judge_row(profile: BoardProfile, secret: Sequence[str], row: RowReading, *, is_last: bool) -> str:
    """The verdict on one read row with what is known: mismark, clear, unsure or not marked.

    The verdict is the product's own (:func:`pegwatch.rules.bounded.judge_row`,
    what ``pegwatch judge`` gives on the read record): a hole that may be
    bare, in a game without blanks, may be a row still incomplete, which is
    never proved mis-marked.
    """
    if row.status == ROW_OCCLUDED:
        return UNSURE
    keys = row.keys
    if keys.is_certain:
        if is_last and keys.black + keys.white == 0:
            return NOT_MARKED
        black, white = CountRange.exact(keys.black), CountRange.exact(keys.white)
    elif keys.black_bounds is not None and keys.white_bounds is not None:
        black, white = CountRange(*keys.black_bounds), CountRange(*keys.white_bounds)
    else:
        return UNSURE
    if any(h.is_certain and h.colour == EMPTY for h in row.holes) and not profile.blanks:
        return NOT_MARKED  # pegs still being placed
    return bounded_verdict(profile, secret, BoundedRow(tuple(h.possible for h in row.holes), black, white))


def bounded_verdict(profile: BoardProfile, secret: Sequence[str], row: BoundedRow) -> str:
    """The rules core's verdict on a row known within bounds: mismark, clear or unsure
    (unsure too when its key counts cannot pair with the holes)."""
    if not row.marks_pairs(profile.holes):
        return UNSURE
    verdict = bounded_judge_row(tuple(secret), row, variant_of(profile)).verdict
    return MISMARK if verdict is Judgement.MISMARK else CLEAR if verdict is Judgement.CORRECT else UNSURE


def variant_of(profile: BoardProfile) -> Variant:
    """The MSO tournament's rules, on the profile's board (its palette, holes, rows and blanks)."""
    return replace(
        get_variant("mso"), name=profile.name, palette=tuple(profile.palette), colours=len(profile.palette),
        holes=profile.holes, rows=profile.rows, blanks=profile.blanks,
    )


def _secret_read(reading: BoardReading) -> tuple[str, ...] | None:
    if reading.secret is None or not all(h.is_certain for h in reading.secret):
        return None
    return tuple(h.colour for h in reading.secret)


#: The counts kept per board as well (for :func:`hands_capped`), in :attr:`PbrTally.boards`' order.
_PER_BOARD = ("rows", "rows_truly_covered", "holes", "holes_uncertain", "holes_under_hand", "holes_uncertain_uncovered")


class PbrTally:
    """Counts over a set of rendered boards read by one reader."""

    def __init__(self) -> None:
        self.c: Counter[str] = Counter()
        self.confusion: Counter[tuple[str, str]] = Counter()
        self.false_boards: list[str] = []
        #: Per board found, in the order read: (a hand in the picture or a row covered, rows, rows covered, holes,
        #: holes uncertain, holes in the rows covered, holes uncertain in the rows not covered).
        self.boards: list[tuple[bool, int, int, int, int, int, int]] = []

    def add(self, profile: BoardProfile, board: PbrBoard, reading: BoardReading, *, name: str = "") -> None:
        """Score ``reading`` of ``board``."""
        c = self.c
        meta = board.meta
        truth = truth_from_record(board.truth, profile, where=name or "pbr truth")
        found = reading.problem is None
        low = is_low_ppm(board)
        c["boards"] += 1
        c["boards_found"] += found
        c["boards_low_ppm"] += low
        c["found_low_ppm"] += found and low
        c["boards_ppm_ok"] += not low
        c["found_ppm_ok"] += found and not low
        c["boards_blurred"] += bool(meta["blurred"])
        c["found_blurred"] += found and bool(meta["blurred"])
        # The bar for blur is at a resolution the reader needs: counted apart.
        c["boards_blurred_ppm_ok"] += bool(meta["blurred"]) and not low
        c["found_blurred_ppm_ok"] += found and bool(meta["blurred"]) and not low
        band = light_band(float(meta["light_kelvin"]))
        covered = set(meta["covered_rows"])
        if not found:
            return
        # The bar for uncertainty holds where hands cover few rows:
        # boards with nothing over them (no hand, no lamp in the way) are counted apart.
        no_hand = nothing_over(board)
        c["boards_no_hand"] += no_hand
        before = [c[k] for k in _PER_BOARD]
        for t_row, r_row in zip(truth.rows, reading.rows, strict=True):
            c["rows"] += 1
            under = t_row.row in covered
            c["rows_truly_covered"] += under
            if r_row.status == ROW_OCCLUDED:
                c["rows_called_covered"] += 1
                if not under:
                    c["rows_covered_needlessly"] += 1
            for t, h in zip(t_row.holes, r_row.holes, strict=True):
                self._hole(
                    t.colour, h.colour, band, under, full=reading.trust == TRUST_FULL, no_hand=no_hand, confidence=h.confidence
                )
            if r_row.keys.is_certain and r_row.status != ROW_OCCLUDED:
                c["key_rows_certain"] += 1
                if (r_row.keys.black, r_row.keys.white) != (t_row.keys.black, t_row.keys.white):
                    c["key_errors"] += 1
        if reading.secret is not None and truth.secret is not None:
            for t, h in zip(truth.secret, reading.secret, strict=True):
                self._hole(
                    t.colour, h.colour, band, bool(meta["secret_covered"]), full=reading.trust == TRUST_FULL, no_hand=no_hand,
                    confidence=h.confidence,
                )
        n_rows, n_under, n_holes, n_uncertain, n_holes_under, n_elsewhere = (c[k] - b for k, b in zip(_PER_BOARD, before, strict=True))
        self.boards.append((not no_hand, n_rows, n_under, n_holes, n_uncertain, n_holes_under, n_elsewhere))
        self._judge(profile, board, truth, reading, name)

    def _hole(
        self, truth: str, read: str, band: str, under_hand: bool, *, full: bool, no_hand: bool = False, confidence: float = 1.0
    ) -> None:
        c = self.c
        c["holes"] += 1
        c["holes_no_hand"] += no_hand
        c["holes_under_hand"] += under_hand
        if read in (UNKNOWN, OCCLUDED):
            c["holes_uncertain"] += 1
            c["holes_uncertain_uncovered"] += not under_hand
            c["holes_uncertain_no_hand"] += no_hand
            return
        # Also counted apart on full-trust boards: a low-trust board is read
        # on a fit the reader says it doubts, and is never accused from.
        for suffix in ("", "_full_trust") if full else ("",):
            c[f"holes_confident{suffix}"] += 1
            c[f"holes_confident{suffix}_{band}"] += 1
            if read != truth:
                c[f"hole_errors{suffix}"] += 1
                c[f"hole_errors{suffix}_{band}"] += 1
        if full:
            # Whether the confidence a hole is read with is a probability:
            # the least sure of the confident holes should err about as often as they say.
            stated = "below_999" if confidence < SURE_CONFIDENCE else "999_up"
            c[f"holes_confident_full_trust_conf_{stated}"] += 1
            c[f"hole_errors_full_trust_conf_{stated}"] += read != truth
        if read != truth:
            self.confusion[(truth, read)] += 1

    def _judge(self, profile: BoardProfile, board: PbrBoard, truth: BoardReading, reading: BoardReading, name: str) -> None:
        c = self.c
        meta = board.meta
        secret_true = truth_secret(board)
        seen = _secret_read(reading)
        if seen is not None:
            c["secrets_read"] += 1
            if meta["shield_closed"] or meta["secret_covered"] or seen != secret_true:
                c["secret_invented"] += 1
        secret = seen if seen is not None else secret_true
        mismarked = set(meta["mismarked_rows"])
        covered = set(meta["covered_rows"])
        played = [r.row for r in truth.rows if any(h.colour != EMPTY for h in r.holes)]
        last = max(played, default=0)
        false_here = 0
        # A low-trust board is shown, never accused from (rules.flow): its rows are unjudged.
        low_trust = reading.trust != TRUST_FULL
        c["boards_low_trust"] += low_trust
        for r_row in reading.rows:
            t_row = truth.row(r_row.row) if r_row.row <= len(truth.rows) else None
            if t_row is None or r_row.row > last:
                continue
            marked = t_row.keys.black + t_row.keys.white > 0 or r_row.row < last
            if not marked:
                continue
            verdict = UNSURE if low_trust else judge_row(profile, secret, r_row, is_last=r_row.row == last)
            exact = r_row.status == "ok" and verdict in (MISMARK, CLEAR)
            if r_row.row in mismarked:
                # Also counted apart where no hand is over the row: no frame can show a row a hand hides.
                for suffix in ("",) if r_row.row in covered else ("", "_uncovered"):
                    c[f"mismarks_injected{suffix}"] += 1
                    if verdict == MISMARK:
                        c[f"mismarks_caught{suffix}"] += 1
                    elif verdict == CLEAR:
                        c[f"mismarks_missed{suffix}"] += 1
                    else:
                        c[f"mismarks_unjudged{suffix}"] += 1
                c["mismarks_caught_exact"] += verdict == MISMARK and exact
            else:
                c["rows_correct"] += 1
                if verdict == MISMARK:
                    c["false_mismark_rows"] += 1
                    false_here += 1
                elif verdict == CLEAR:
                    c["rows_correct_cleared"] += 1
        if false_here:
            c["false_mismark_boards"] += 1
            self.false_boards.append(name)


def nothing_over(board: PbrBoard) -> bool:
    """Whether nothing covers any hole of ``board``: no hand in the picture, no row or secret hole covered."""
    meta = board.meta
    return not (meta["hands"] or meta["covered_rows"] or meta["secret_covered"])


def _rate(n: int, d: int, digits: int = 6) -> float:
    return round(n / d, digits) if d else 0.0


def _capped_set(boards: Sequence[tuple[Any, ...]], share: float) -> list[tuple[Any, ...]]:
    """Every board with nothing over it, and the boards with a hand (or a lamp in the camera's
    way) in the order read up to the first that would take the rows covered past ``share`` (a
    prefix, so that no board is chosen for how little its hand covers)."""
    chosen = [b for b in boards if not b[0]]
    rows, under = sum(b[1] for b in chosen), sum(b[2] for b in chosen)
    for b in (b for b in boards if b[0]):
        if under + b[2] > share * (rows + b[1]):
            break
        chosen.append(b)
        rows, under = rows + b[1], under + b[2]
    return chosen


def hands_capped(boards: Sequence[tuple[Any, ...]], share: float = 0.05) -> tuple[float, int, float]:
    """The holes uncertain on a set whose hands cover at most ``share`` of its rows (the issue's
    condition for its uncertainty bar, :func:`_capped_set`). (rate, boards, share of rows covered)."""
    chosen = _capped_set(boards, share)
    rows, under = sum(b[1] for b in chosen), sum(b[2] for b in chosen)
    holes, uncertain = sum(b[3] for b in chosen), sum(b[4] for b in chosen)
    return _rate(uncertain, holes, 4), len(chosen), _rate(under, rows, 4)


def hands_capped_apart(boards: Sequence[tuple[Any, ...]], share: float = 0.05) -> tuple[float, float]:
    """On the same set as :func:`hands_capped`: the share of its holes in rows a hand truly
    covers (uncertain whatever the reader does), and the share left uncertain in the other rows."""
    chosen = _capped_set(boards, share)
    holes = sum(b[3] for b in chosen)
    return _rate(sum(b[5] for b in chosen), holes, 4), _rate(sum(b[6] for b in chosen), holes, 4)


def summary(t: PbrTally, steady_ms: Sequence[float], first_ms: Sequence[float]) -> dict[str, Any]:
    """The figures, keyed as in issue 14's table where the figure exists."""
    c = t.c
    capped = hands_capped(t.boards)
    apart = hands_capped_apart(t.boards)
    out: dict[str, Any] = {
        "boards": c["boards"],
        "rows": c["rows"],
        "holes": c["holes"],
        "false_mismark_rows": c["false_mismark_rows"],
        "false_mismark_boards": c["false_mismark_boards"],
        "rows_correct": c["rows_correct"],
        "rows_correct_cleared": c["rows_correct_cleared"],
        "mismarks_injected": c["mismarks_injected"],
        "mismarks_caught": c["mismarks_caught"],
        "mismarks_caught_exact": c["mismarks_caught_exact"],
        "mismarks_unjudged": c["mismarks_unjudged"],
        "mismarks_missed": c["mismarks_missed"],
        "mismarks_injected_uncovered": c["mismarks_injected_uncovered"],
        "mismarks_caught_uncovered": c["mismarks_caught_uncovered"],
        "mismarks_unjudged_uncovered": c["mismarks_unjudged_uncovered"],
        "mismarks_missed_uncovered": c["mismarks_missed_uncovered"],
        "mismarks_caught_rate_uncovered": _rate(c["mismarks_caught_uncovered"], c["mismarks_injected_uncovered"], 4),
        "secrets_read": c["secrets_read"],
        "secret_invented": c["secret_invented"],
        "hole_uncertain_rate": _rate(c["holes_uncertain"], c["holes"], 4),
        "hole_uncertain_rate_uncovered": _rate(c["holes_uncertain_uncovered"], c["holes"], 4),
        "hole_uncertain_rate_no_hand": _rate(c["holes_uncertain_no_hand"], c["holes_no_hand"], 4),
        "boards_no_hand": c["boards_no_hand"],
        "hole_uncertain_rate_hands_5pct": capped[0],
        "boards_hands_5pct": capped[1],
        "rows_under_hand_rate_hands_5pct": capped[2],
        "holes_under_hand_rate_hands_5pct": apart[0],
        "hole_uncertain_rate_hands_5pct_uncovered": apart[1],
        "hole_errors": c["hole_errors"],
        "hole_error_rate": _rate(c["hole_errors"], c["holes_confident"]),
        "key_error_rate": _rate(c["key_errors"], c["key_rows_certain"]),
        "rows_called_covered": c["rows_called_covered"],
        "rows_covered_needlessly": c["rows_covered_needlessly"],
        "rows_covered_needlessly_rate": _rate(c["rows_covered_needlessly"], c["rows"], 4),
        "rows_truly_covered_rate": _rate(c["rows_truly_covered"], c["rows"], 4),
        "board_not_found_rate": _rate(c["boards"] - c["boards_found"], c["boards"], 4),
        "boards_low_trust": c["boards_low_trust"],
        "board_found_rate_blur": _rate(c["found_blurred"], c["boards_blurred"], 4),
        "boards_blurred": c["boards_blurred"],
        "board_found_rate_blur_ppm_ok": _rate(c["found_blurred_ppm_ok"], c["boards_blurred_ppm_ok"], 4),
        "boards_blurred_ppm_ok": c["boards_blurred_ppm_ok"],
        "board_found_rate_low_ppm": _rate(c["found_low_ppm"], c["boards_low_ppm"], 4),
        "boards_low_ppm": c["boards_low_ppm"],
        "board_found_rate_ppm_ok": _rate(c["found_ppm_ok"], c["boards_ppm_ok"], 4),
        "read_ms_median": round(float(np.median(steady_ms)), 3) if len(steady_ms) else None,
        "read_ms_first_median": round(float(np.median(first_ms)), 3) if len(first_ms) else None,
    }
    for lo, hi in LIGHT_BANDS:
        band = f"{lo}_{hi}k"
        out[f"hole_error_rate_{band}"] = _rate(c[f"hole_errors_{band}"], c[f"holes_confident_{band}"])
    out["hole_error_rate_full_trust"] = _rate(c["hole_errors_full_trust"], c["holes_confident_full_trust"])
    for stated in ("below_999", "999_up"):
        out[f"hole_error_rate_full_trust_conf_{stated}"] = _rate(
            c[f"hole_errors_full_trust_conf_{stated}"], c[f"holes_confident_full_trust_conf_{stated}"]
        )
    out["holes_confident_full_trust_conf_below_999_share"] = _rate(
        c["holes_confident_full_trust_conf_below_999"], c["holes_confident_full_trust"], 4
    )
    for lo, hi in LIGHT_BANDS:
        band = f"{lo}_{hi}k"
        out[f"hole_error_rate_full_trust_{band}"] = _rate(
            c[f"hole_errors_full_trust_{band}"], c[f"holes_confident_full_trust_{band}"]
        )
    return out
