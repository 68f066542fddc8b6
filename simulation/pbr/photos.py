"""The real-photo yardstick: every photo of the development set read, or refused with a reason.

The set (``../shared/photos``: ``README.md``, ``index.json``, ``profiles/``) is
not the project's and is never tuned on. For each photo this reads what it
can and compares it with the truth in the index:

* a table is calibrated once per board profile from the photo that carries
  hole centres (``hole_points_mm_to_px``): the board's corners come from the
  homography of those points, the colours from the photo's truth (a real
  installer's one calibration photo);
* that photo is read with its corners; the other photos of the same board
  (``same_as``) and the photos without any board (distractors) are read with
  the same calibration by best effort, as a table whose camera was moved;
* a photo of a board with no profile is refused: no reader can place its
  holes, and the reason says so.

A *false accusation* is a mis-mark the table would raise on a photo whose
rows are marked correctly: with a known secret, a row proven wrong over every
completion (:func:`pegwatch.simulation.pbr.yardstick.judge_row`); with a hidden
secret, read rows that no code can satisfy (the hidden-secret check's alarm).
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from pegwatch.rules.codes import score
from pegwatch.rules.errors import BadInput
from pegwatch.simulation.pbr.yardstick import MISMARK, judge_row
from pegwatch.vision.calibrate import calibrate, truth_from_record
from pegwatch.vision.calibration import Calibration
from pegwatch.vision.profile import BoardProfile, load_profile
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import EMPTY, ROW_OK, BoardReading, RowReading
from pegwatch.vision.sources.images import read_image

logger = logging.getLogger(__name__)


@dataclass
class PhotoResult:
    """What happened to one photo."""

    file: str
    status: str = "refused"  # "read" or "refused"
    reason: str = ""
    how: str = ""
    holes_compared: int = 0
    hole_errors: int = 0
    holes_uncertain: int = 0
    accused_rows: list[int] = field(default_factory=list)
    false_accusation: bool = False
    read_ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        """The result as plain JSON."""
        return dict(self.__dict__)


def load_index(folder: Path) -> list[dict[str, Any]]:
    """The photos' index (a list of entries)."""
    data = json.loads((folder / "index.json").read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise BadInput(f"{folder / 'index.json'}: not a list of photo entries")
    return [e for e in data if isinstance(e, dict) and "file" in e]


def truth_of(entry: dict[str, Any], profile: BoardProfile) -> dict[str, Any] | None:
    """The entry's truth as a game record on ``profile``'s board (None: no rows known)."""
    rows = entry.get("rows")
    if not isinstance(rows, list):
        return None
    out = []
    for r in rows[: profile.rows]:
        pegs = r.get("pegs")
        guess = list(pegs) if isinstance(pegs, list) else [EMPTY] * profile.holes
        out.append({"guess": guess, "black": int(r.get("black", 0)), "white": int(r.get("white", 0))})
    secret = entry.get("secret")
    return {"rules": "mso", "secret": list(secret) if isinstance(secret, list) else None, "rows": out, "timeout": None}


def _corners(entry: dict[str, Any], profile: BoardProfile) -> list[tuple[float, float]]:
    pts = np.array(entry["hole_points_mm_to_px"]["points"], dtype=np.float64)
    h, _ = cv2.findHomography(pts[:, :2], pts[:, 2:], 0)
    if h is None:
        raise BadInput(f"{entry['file']}: the hole points do not fit a plane")
    corners = cv2.perspectiveTransform(np.array(profile.corners_mm(), dtype=np.float64).reshape(-1, 1, 2), h)
    return [(float(x), float(y)) for x, y in corners.reshape(-1, 2)]


def _accused(profile: BoardProfile, reading: BoardReading, secret: Sequence[str] | None) -> list[int]:
    """Rows the table would call wrongly marked (all rows at once when no code fits the read rows)."""
    played = [r.row for r in reading.rows if any(h.colour != EMPTY for h in r.holes)]
    last = max(played, default=0)
    if secret:
        return [r.row for r in reading.rows if r.row <= last and judge_row(profile, secret, r, is_last=r.row == last) == MISMARK]
    judged = [
        r
        for r in reading.rows
        if r.status == ROW_OK and r.keys.is_certain and r.row <= last and (r.row < last or r.keys.black + r.keys.white)
        and (profile.blanks or EMPTY not in r.guess)
    ]
    if not judged:
        return []
    colours = tuple(profile.palette) + ((EMPTY,) if profile.blanks else ())
    for code in itertools.product(colours, repeat=profile.holes):
        if all(_agrees(code, r) for r in judged):
            return []
    return [r.row for r in judged]


def _agrees(code: tuple[str, ...], row: RowReading) -> bool:
    fb = score(code, row.guess)
    return (fb.black, fb.white) == (row.keys.black, row.keys.white)


def run_photos(folder: Path) -> tuple[list[PhotoResult], dict[str, Any]]:
    """Read every photo of ``folder``; the per-photo results and the summary."""
    entries = load_index(folder)
    by_file = {e["file"]: e for e in entries}
    tables: dict[str, tuple[BoardProfile, Calibration | None, str]] = {}
    for e in entries:
        hp = e.get("hole_points_mm_to_px")
        if not isinstance(hp, dict):
            continue
        name = str(hp.get("profile", ""))
        try:
            p = load_profile(str(folder / name))
            img = read_image(folder / e["file"])
            rec = truth_of(e, p)
            assert rec is not None
            truth = truth_from_record(rec, p, where=e["file"])
            cal = calibrate([img], [truth], p, corners=_corners(e, p), names=[e["file"]])
            tables[e["file"]] = (p, cal, "")
        except BadInput as exc:
            tables[e["file"]] = (load_profile(str(folder / name)), None, f"calibration refused: {exc}")
    results: list[PhotoResult] = []
    for e in entries:
        res = PhotoResult(e["file"])
        results.append(res)
        base = e["file"] if e["file"] in tables else e.get("same_as")
        distractor = str(e.get("gt_status", "")).startswith("not")
        if base not in tables and distractor and tables:
            base = next(iter(tables))
        if base not in tables:
            res.reason = f"no board profile for this board ({e.get('kind', 'unknown board')})"
            continue
        p, table_cal, why = tables[str(base)]
        if table_cal is None:
            res.reason = why
            continue
        own = base == e["file"]
        cal_used = table_cal if own else replace(table_cal, method="best-effort", corners_px=None)
        res.how = "corners" if own else "best effort"
        try:
            img = read_image(folder / e["file"])
            reader = BoardReader(p, cal_used)
            started = time.perf_counter()
            reading = reader.read(img, at_ns=0)
            res.read_ms = round((time.perf_counter() - started) * 1000, 3)
        except BadInput as exc:
            res.reason = str(exc)
            continue
        if reading.problem is not None:
            res.reason = reading.problem
            continue
        res.status = "read"
        source = by_file.get(str(e.get("same_as", e["file"])), e)
        rec = None if distractor else truth_of(source, p)
        secret = source.get("secret") if isinstance(source.get("secret"), list) else None
        res.accused_rows = _accused(p, reading, secret)
        known = truth_from_record(rec, p, where=e["file"]) if rec is not None else None
        # An accusation is false unless the true rows themselves hold a mis-mark.
        res.false_accusation = bool(res.accused_rows) and (known is None or not _accused(p, known, secret))
        if known is not None:
            for t_row, r_row in zip(known.rows, reading.rows, strict=True):
                for t, h in zip(t_row.holes, r_row.holes, strict=True):
                    if not h.is_certain:
                        res.holes_uncertain += 1
                        continue
                    res.holes_compared += 1
                    res.hole_errors += h.colour != t.colour
    compared = sum(r.holes_compared for r in results)
    uncertain = sum(r.holes_uncertain for r in results)
    times = [r.read_ms for r in results if r.read_ms is not None]
    summary: dict[str, Any] = {
        "photos": len(results),
        "photos_read": sum(r.status == "read" for r in results),
        "photos_refused": sum(r.status == "refused" for r in results),
        "photos_refused_without_reason": sum(r.status == "refused" and not r.reason for r in results),
        "false_accusations": sum(r.false_accusation for r in results),
        "hole_errors": sum(r.hole_errors for r in results),
        "holes_compared": sum(r.holes_compared for r in results),
        "holes_uncertain": uncertain,
        # The keys of issue 14's table, where the figure exists for photos:
        "false_mismark_rows": sum(len(r.accused_rows) for r in results if r.false_accusation),
        "board_not_found_rate": round(sum(r.status == "refused" for r in results) / max(len(results), 1), 4),
        "hole_uncertain_rate": round(uncertain / max(compared + uncertain, 1), 4),
        "read_ms_median": round(float(np.median(times)), 3) if times else None,
    }
    return results, summary
