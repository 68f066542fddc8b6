"""The tray beside the board: where a dark sleeve lies across it.

A black sleeve over a black board looks like rows of empty holes: no
colour or cover test on the board tells it from an empty board, and
:mod:`~pegwatch.vision.row_order` catches it only before a row that holds
pegs. But an arm reaches the board from outside it, over the tray the
markers are printed on, and the tray is what a table's board lies on: a
surface the camera sees around the board. Where the tray beside a row is
far darker than the rest of the tray, something lies over it, and a row
there that shows no peg is not known to be bare.

The profile's markers are printed at the tray's corners, so a board
found by them is known to lie on that tray (a board found by its corners
alone may lie anywhere, beside its own peg store). One point beside each
guess row on either side (beyond the board's edges the rows run between),
between the markers and clear of them, is compared with the tray's own
colour: the median of the brighter half of the points. Dark points on
both sides mark a sleeve lying across the board. A shadow on the tray
darkens it too, so the answer is only "something may lie over these
rows": rows that show no peg there read
``occluded`` instead of ``empty`` (never a verdict; see
:func:`~pegwatch.vision.row_order.covered_beside_dark`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.localise.base import Localisation
from pegwatch.vision.pixel_stats import channel_means, median_axis1, median_of, square_offsets
from pegwatch.vision.profile import BoardProfile

FloatArray = NDArray[np.float64]

#: How far beyond the board's edge (mm) the tray is looked at: clear of the
#: board's side and its shadow, well inside a printed tray's margin.
TRAY_OFFSET_MM = 9.0
#: The radius (mm) of the patch averaged at each point.
PATCH_MM = 2.0
#: A point darker than this share of the tray's own colour, or whose
#: channels' ratios to it differ by more than this factor (a shadow scales
#: every channel alike, a sleeve or skin does not), is under something.
DARK_SHARE = 0.45
CHROMA_RATIO = 1.3
#: Points the tray must show to have a median worth comparing with.
MIN_POINTS = 8


@dataclass(frozen=True)
class TrayPoints:
    """Points on the tray beside the guess rows (board mm) and the row (0-based) each is beside."""

    points_mm: FloatArray
    row: NDArray[np.intp]

    @classmethod
    def of(cls, profile: BoardProfile) -> TrayPoints:
        w, h = profile.size_mm
        sx, sy = profile.row_step_mm
        pts: list[tuple[float, float]] = []
        rows: list[int] = []
        for r in range(profile.rows):
            ox, oy = (float(v) for v in np.mean(profile.hole_centres_mm(r + 1), axis=0))
            beside = (
                ((ox, -TRAY_OFFSET_MM), (ox, h + TRAY_OFFSET_MM))
                if abs(sx) >= abs(sy)
                else ((-TRAY_OFFSET_MM, oy), (w + TRAY_OFFSET_MM, oy))
            )
            for x, y in beside:
                on_tray = _within_markers(profile, x, y)
                if on_tray and not any(_on_marker(m.centre_mm, m.size_mm, x, y) for m in profile.markers):
                    pts.append((x, y))
                    rows.append(r)
        return cls(np.array(pts, dtype=np.float64).reshape(-1, 2), np.array(rows, dtype=np.intp))


def _within_markers(profile: BoardProfile, x: float, y: float) -> bool:
    # The markers are printed at the tray's corners: between them is tray.
    if len(profile.markers) < 2:
        return False
    xs = [m.centre_mm[0] for m in profile.markers]
    ys = [m.centre_mm[1] for m in profile.markers]
    return min(xs) <= x <= max(xs) and min(ys) <= y <= max(ys)


def _on_marker(centre: tuple[float, float], size: float, x: float, y: float) -> bool:
    # The marker, its quiet zone (a module) and a patch's radius.
    reach = size / 2 + size / 6 + PATCH_MM + 1.0
    return abs(x - centre[0]) <= reach and abs(y - centre[1]) <= reach


class TrayWatch:
    """The tray points of one profile, and where they lie in the last fit's frame (kept while the fit holds)."""

    def __init__(self, profile: BoardProfile) -> None:
        self.tray = TrayPoints.of(profile)
        self._where: tuple[bytes, NDArray[np.intp], NDArray[np.bool_]] | None = None

    def _pixels(self, loc: Localisation, shape: tuple[int, ...], px_per_mm: float) -> tuple[NDArray[np.intp], NDArray[np.bool_]]:
        """Flat pixel indices of every patch (points inside the frame × patch) and which points are inside."""
        hgt, wid = int(shape[0]), int(shape[1])
        r = max(1, round(PATCH_MM * px_per_mm))
        key = loc.fit_key + np.array([hgt, wid, r]).tobytes()
        if self._where is not None and self._where[0] == key:
            return self._where[1], self._where[2]
        px = loc.to_image(self.tray.points_mm)
        inside = (px[:, 0] >= r) & (px[:, 0] < wid - r) & (px[:, 1] >= r) & (px[:, 1] < hgt - r)
        dy, dx = square_offsets(r)
        centre = np.round(px[inside]).astype(np.intp)
        flat = (centre[:, 1, None] + dy[None, :]) * wid + (centre[:, 0, None] + dx[None, :])
        self._where = (key, flat, inside)
        return flat, inside

    def patches(
        self, frame: NDArray[np.uint8], loc: Localisation, px_per_mm: float
    ) -> tuple[NDArray[np.uint8], NDArray[np.bool_]] | None:
        """The pixels of every patch inside the frame (patches, pixels, channels), and which tray
        points those are; None where the tray says nothing (a board not found by its markers)."""
        if loc.method != "markers" or loc.image_to_board is None or len(self.tray.points_mm) < MIN_POINTS:
            # Only a board found by its markers is known to lie on their tray.
            return None
        flat, inside = self._pixels(loc, frame.shape, px_per_mm)
        if int(inside.sum()) < MIN_POINTS:
            return None
        hgt, wid = frame.shape[:2]
        return np.take(frame.reshape(hgt * wid, -1), flat, axis=0), inside  # take: see pixels_at

    def rows_beside_dark(self, frame: NDArray[np.uint8], loc: Localisation, px_per_mm: float) -> set[int]:
        """The guess rows (0-based) a sleeve lying across the board may be
        over: from the first to the last row beside which the tray is dark,
        when it is dark on both sides (an arm reaching in from one side, or
        its shadow, says nothing of the rows it stops short of).
        ``frame``: the camera's picture (BGR or grey)."""
        tray = self.tray
        got = self.patches(frame, loc, px_per_mm)
        if got is None:
            return set()
        patches, inside = got
        colour = channel_means(patches)
        level = colour.mean(axis=1)
        # The tray's own colour: its brighter half (a sleeve or a shadow only darkens it).
        ref = median_axis1(colour[level >= median_of(level)].T)
        if not np.all(ref > 0):
            return set()
        ratio = colour / ref
        seen = (ratio.mean(axis=1) < DARK_SHARE) | (ratio.max(axis=1) > CHROMA_RATIO * ratio.min(axis=1))
        dark = np.zeros(len(inside), dtype=bool)
        dark[inside] = seen
        rows = {int(v) for v in tray.row[dark]}
        if not rows:
            return rows
        sides = {bool(tray.points_mm[i, 1] < 0 or tray.points_mm[i, 0] < 0) for i in np.flatnonzero(dark)}
        if len(sides) < 2:
            return set()
        return set(range(min(rows), max(rows) + 1))
