"""What the camera's view tells the person mounting it: is the board found,
is it big enough, is it sharp.

:func:`look_at` locates the board in one frame and measures it;
:func:`draw_look` draws the board's outline and hole grid on the frame
with the verdicts written across the top. ``pegwatch preview`` shows the
result as a JPEG on disk and on the table's preview page.

The board's pixels per millimetre and sharpness are the reader's own
measures: carried by the localisation, or taken with
:func:`pegwatch.vision.localise.board_sharpness` when a localiser gives
none. Only where that cannot measure are they taken here: pixels per
millimetre from the scale of the homography at the board's centre,
sharpness as the variance of the Laplacian over the board warped to a
top-down image (on its own scale, with its own minimum).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.localise import (
    MIN_PX_PER_MM,
    BestEffortLocaliser,
    Localisation,
    Localiser,
    MarkerLocaliser,
    apply_homography,
    rectify_board,
)
from pegwatch.vision.localise import MIN_SHARPNESS as READER_MIN_SHARPNESS
from pegwatch.vision.localise import board_sharpness as reader_sharpness
from pegwatch.vision.localise.base import board_scale_px_per_mm
from pegwatch.vision.profile import BoardProfile

logger = logging.getLogger(__name__)

__all__ = ["MIN_SHARPNESS", "Look", "PreviewLocaliser", "draw_look", "look_at"]

#: The variance of the Laplacian, on the board warped to
#: :data:`SHARPNESS_PX_PER_MM`, below which the picture is soft. A focused
#: board's peg edges and hole rims give a few hundred; a blur of about
#: 0.6 mm (sigma) brings it to this, and a Camera Module 3 left focused at
#: 1 m blurs a board at 35 cm by more than that.
MIN_SHARPNESS = 80.0
#: The scale the board is warped to before its sharpness is measured: below
#: any capture the reader accepts, so the warp only ever shrinks, and a blur
#: of so many millimetres gives the same figure from any height.
SHARPNESS_PX_PER_MM = 2.0


@dataclass(frozen=True)
class Look:
    """What one frame says about the camera's mount."""

    found: bool
    #: How the board was located: "markers", "corners" or "best-effort" (or "none").
    method: str
    markers_seen: tuple[int, ...]
    markers_total: int
    problem: str | None
    px_per_mm: float | None
    min_px_per_mm: float
    sharpness: float | None
    min_sharpness: float
    width: int
    height: int

    @property
    def markers_found(self) -> bool:
        """At least two of the board's markers are in view (what the marker localiser needs)."""
        return self.method == "markers" and self.found

    @property
    def big_enough(self) -> bool | None:
        """Whether the board has the pixels per millimetre the reader needs (None: not measured)."""
        return None if self.px_per_mm is None else self.px_per_mm >= self.min_px_per_mm

    @property
    def sharp(self) -> bool | None:
        """Whether the board's image is sharp (None: not measured)."""
        return None if self.sharpness is None else self.sharpness >= self.min_sharpness

    @property
    def good(self) -> bool:
        """Found, big enough and sharp: the mount is right."""
        return self.found and bool(self.big_enough) and bool(self.sharp)

    def lines(self) -> list[str]:
        """The verdicts in plain words, one a line (the page and the terminal show these)."""
        if self.found and self.method == "markers":
            where = f"markers found: {len(self.markers_seen)} of {self.markers_total} (ids " + \
                ", ".join(str(i) for i in self.markers_seen) + ")"
        elif self.found:
            where = f"markers not found; the board was located by {self.method}"
        else:
            where = f"board not found: {self.problem or 'nothing board-like in view'}"
        out = [where]
        if self.px_per_mm is None:
            out.append(f"pixels per mm: not measured (needs at least {self.min_px_per_mm:.1f})")
        else:
            verdict = "ok" if self.big_enough else "TOO FEW: move the camera closer or raise the resolution"
            out.append(f"pixels per mm: {self.px_per_mm:.2f} (needs at least {self.min_px_per_mm:.1f}): {verdict}")
        if self.sharpness is None:
            out.append("sharpness: not measured")
        else:
            verdict = "sharp" if self.sharp else "SOFT: focus the lens at the mount's distance"
            out.append(f"sharpness: {_num(self.sharpness)} (sharp from {_num(self.min_sharpness)}): {verdict}")
        return out

    def to_json(self) -> dict[str, Any]:
        """The look as JSON (the page's ``/status.json``)."""
        return {
            "found": self.found,
            "method": self.method,
            "markers_found": self.markers_found,
            "markers_seen": list(self.markers_seen),
            "markers_total": self.markers_total,
            "problem": self.problem,
            "px_per_mm": None if self.px_per_mm is None else round(self.px_per_mm, 3),
            "min_px_per_mm": self.min_px_per_mm,
            "big_enough": self.big_enough,
            "sharpness": None if self.sharpness is None else round(self.sharpness, 1),
            "min_sharpness": self.min_sharpness,
            "sharp": self.sharp,
            "good": self.good,
            "size": [self.width, self.height],
            "lines": self.lines(),
        }


def _num(value: float) -> str:
    """A measure as people read it: whole numbers for large ones, two decimals for a 0..1 share."""
    return f"{value:.0f}" if abs(value) >= 10 else f"{value:.2f}"


class PreviewLocaliser:
    """The markers first; without them, the board's outline (best effort).

    A table calibrated with fixed corners hands its own localiser instead.
    """

    method = "markers"

    def __init__(self, profile: BoardProfile) -> None:
        self.markers: Localiser | None = MarkerLocaliser(profile) if profile.markers else None
        self.outline: Localiser = BestEffortLocaliser(profile)

    def locate(self, frame: NDArray[np.uint8], *, at_ns: int | None = None) -> Localisation:
        first = self.markers.locate(frame, at_ns=at_ns) if self.markers is not None else None
        if first is not None and first.ok:
            return first
        second = self.outline.locate(frame, at_ns=at_ns)
        if second.ok or first is None:
            return second
        return first


def board_sharpness(frame: NDArray[np.uint8], image_to_board: NDArray[np.float64], size_mm: Sequence[float]) -> float:
    """Variance of the Laplacian over the board, warped top-down at 2 px/mm.

    Warping first makes the figure the same for a camera near or far; the
    board alone counts, so a sharp table edge cannot hide a soft board.
    """
    top = rectify_board(frame, image_to_board, (float(size_mm[0]), float(size_mm[1])), px_per_mm=SHARPNESS_PX_PER_MM)
    grey = cv2.cvtColor(top, cv2.COLOR_BGR2GRAY) if top.ndim == 3 else top
    return float(cv2.Laplacian(grey, cv2.CV_64F).var())


def look_at(frame: NDArray[np.uint8], profile: BoardProfile, localiser: Localiser) -> tuple[Look, Localisation]:
    """Locate the board in ``frame`` and measure it (see the module doc)."""
    loc = localiser.locate(frame)
    h, w = frame.shape[:2]
    px: float | None = None
    sharp: float | None = None
    least = MIN_SHARPNESS
    if loc.ok and loc.image_to_board is not None:
        size = loc.size_mm or profile.size_mm
        px, sharp, least = _measures(frame, loc, (float(size[0]), float(size[1])))
    look = Look(
        found=loc.ok,
        method=loc.method if loc.ok else "none",
        markers_seen=tuple(sorted(loc.markers_seen)),
        markers_total=len(profile.markers),
        problem=None if loc.ok else (loc.problem or "board not found"),
        px_per_mm=px,
        min_px_per_mm=MIN_PX_PER_MM,
        sharpness=sharp,
        min_sharpness=least,
        width=int(w),
        height=int(h),
    )
    return look, loc


def _measures(
    frame: NDArray[np.uint8], loc: Localisation, size: tuple[float, float]
) -> tuple[float, float, float]:
    """Pixels per mm, sharpness and the sharpness needed: the reader's own
    measures when the vision package gives them (its sharpness is on its own
    scale, with its own minimum), else this module's."""
    assert loc.image_to_board is not None
    px = _number(loc.px_per_mm)
    sharp = _number(loc.sharpness)
    if sharp is None:
        try:
            got = reader_sharpness(frame, loc.image_to_board, size)
            px = px if px is not None else _number(got[0])
            sharp = _number(got[1])
        except Exception as exc:  # a measure that fails is measured here instead
            logger.debug("the reader's sharpness failed (%s); measured here", exc)
    if px is None:
        px = board_scale_px_per_mm(loc.image_to_board, (size[0] / 2, size[1] / 2))
    if sharp is not None:
        return px, sharp, READER_MIN_SHARPNESS
    return px, board_sharpness(frame, loc.image_to_board, size), MIN_SHARPNESS


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


_GREEN = (60, 200, 60)
_RED = (40, 40, 230)
_AMBER = (0, 190, 255)


def draw_look(frame: NDArray[np.uint8], profile: BoardProfile, loc: Localisation, look: Look) -> NDArray[np.uint8]:
    """A copy of ``frame`` with the board's outline, its hole grid and the verdicts drawn on it."""
    out: NDArray[np.uint8] = np.asarray(frame.copy() if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR),
                                        dtype=np.uint8)
    if loc.ok and loc.image_to_board is not None:
        _draw_grid(out, profile, loc, look)
    _draw_text(out, look)
    return out


def _draw_grid(out: NDArray[np.uint8], profile: BoardProfile, loc: Localisation, look: Look) -> None:
    b2i = np.linalg.inv(np.asarray(loc.image_to_board, dtype=np.float64))
    edge = _GREEN if look.good else _AMBER
    corners = apply_homography(b2i, np.array(profile.corners_mm(), dtype=np.float64))
    thick = max(1, round(out.shape[1] / 640))
    cv2.polylines(out, [np.rint(corners).astype(np.int32)], True, edge, 2 * thick, cv2.LINE_AA)
    scale = look.px_per_mm or 1.0
    r_code = max(2, round(profile.code_hole_diameter_mm / 2 * scale))
    r_key = max(1, round(profile.key_hole_diameter_mm / 2 * scale))
    for row in range(1, profile.rows + 1):
        for (x, y) in apply_homography(b2i, np.array(profile.hole_centres_mm(row), dtype=np.float64)):
            cv2.circle(out, (round(x), round(y)), r_code, (255, 255, 0), thick, cv2.LINE_AA)
        for (x, y) in apply_homography(b2i, np.array(profile.key_centres_mm(row), dtype=np.float64)):
            cv2.circle(out, (round(x), round(y)), r_key, (255, 255, 0), thick, cv2.LINE_AA)
    for (x, y) in apply_homography(b2i, np.array(profile.secret_centres_mm(), dtype=np.float64)):
        cv2.circle(out, (round(x), round(y)), r_code, (255, 0, 255), thick, cv2.LINE_AA)
    for marker in profile.markers:
        if marker.id in look.markers_seen:
            quad = apply_homography(b2i, np.array(marker.corners_mm(), dtype=np.float64))
            cv2.polylines(out, [np.rint(quad).astype(np.int32)], True, _GREEN, thick, cv2.LINE_AA)


def _draw_text(out: NDArray[np.uint8], look: Look) -> None:
    font = cv2.FONT_HERSHEY_SIMPLEX
    size = max(0.4, out.shape[1] / 1600)
    step = round(32 * size) + 6
    oks = (look.found, look.big_enough, look.sharp)
    for i, (line, ok) in enumerate(zip(look.lines(), oks, strict=True)):
        colour = _GREEN if ok else _RED
        at = (10, step * (i + 1))
        # A dark outline keeps the words legible on a light table or a dark one.
        cv2.putText(out, line, at, font, size, (0, 0, 0), max(3, round(4 * size)), cv2.LINE_AA)
        cv2.putText(out, line, at, font, size, colour, max(1, round(1.5 * size)), cv2.LINE_AA)
