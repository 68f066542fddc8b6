"""Localisation by the profile's ArUco markers, found afresh in every frame."""

from __future__ import annotations

import math
import time

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.localise.base import (
    MARKERS_NOT_FOUND,
    Localisation,
    LocalisationError,
    apply_homography,
    check_frame,
    failed,
)
from pegwatch.vision.localise.grid import refine_to_grid, row_tuple, worst_residual
from pegwatch.vision.markers import DetectedMarker, detect_markers, profile_marker_points
from pegwatch.vision.profile import BoardProfile


class MarkerLocaliser:
    """Homography from the profile's ArUco markers, found afresh in every frame.

    At least two of the profile's markers must be seen. Detection runs on a
    half-size image (markers of 20 mm are still ~25 px wide there) and the
    corners are refined at full size. With ``refine`` the fit is then nudged
    onto the hole pattern, which absorbs lens distortion at the board and a
    board that slid on its tray; a pattern that cannot be found is reported
    in ``quality`` rather than trusted.
    """

    method = "markers"

    def __init__(
        self, profile: BoardProfile, *, refine: bool = True, detect_scale: float = 0.5, recheck_s: float = 1.0
    ) -> None:
        if not profile.markers:
            raise LocalisationError(f"board profile {profile.name} defines no markers")
        self.profile = profile
        self.refine = refine
        self.detect_scale = detect_scale
        self.recheck_s = recheck_s
        self._last: tuple[NDArray[np.float64], Localisation, int] | None = None
        self._rois: dict[int, tuple[int, int, int, int]] = {}

    def _find(self, gray: NDArray[np.uint8], offset: tuple[int, int] = (0, 0)) -> list[DetectedMarker]:
        scale = self.detect_scale
        small = gray
        if scale != 1.0:
            small = np.asarray(cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA), dtype=np.uint8)
        found = detect_markers(small, self.profile.aruco_dictionary)
        ox, oy = offset
        return [
            DetectedMarker(f.id, ((f.corners + 0.5) / scale - 0.5 + np.array([ox, oy], dtype=np.float32)).astype(np.float32))
            for f in found
        ]

    def _detect(self, frame: NDArray[np.uint8]) -> tuple[NDArray[np.float64], NDArray[np.float64], tuple[int, ...]]:
        gray = np.asarray(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame, dtype=np.uint8)
        hgt, wid = gray.shape
        found: list[DetectedMarker] = []
        if self._rois:
            # The camera is fixed: look where the markers were last time first.
            for x0, y0, x1, y1 in self._rois.values():
                found.extend(self._find(gray[y0:y1, x0:x1], (x0, y0)))
            if {f.id for f in found} != set(self._rois):
                found = []
        if not found:
            found = self._find(gray)
        img_pts, board_pts, used = profile_marker_points(self.profile, found)
        self._rois = {}
        for f in found:
            if f.id in used:
                (ax, ay), (bx, by) = f.corners.min(axis=0), f.corners.max(axis=0)
                m = 0.6 * max(bx - ax, by - ay) + 8
                self._rois[f.id] = (
                    max(0, int(ax - m)),
                    max(0, int(ay - m)),
                    min(wid, int(bx + m) + 1),
                    min(hgt, int(by + m) + 1),
                )
        if not used:
            return img_pts, board_pts, used
        if self.detect_scale != 1.0:
            scale = self.detect_scale
            corners = img_pts.astype(np.float32).reshape(-1, 1, 2)
            crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.02)
            win = max(2, round(1.5 / scale))
            cv2.cornerSubPix(gray, corners, (win, win), (-1, -1), crit)
            img_pts = corners.reshape(-1, 2).astype(np.float64)
        return img_pts, board_pts, used

    def locate(self, frame: NDArray[np.uint8]) -> Localisation:
        """Find the markers and fit; not ok with "markers not found" if fewer than two are seen."""
        check_frame(frame)
        img_pts, board_pts, used = self._detect(frame)
        if len(used) < 2:
            return failed(self.method, MARKERS_NOT_FOUND, markers_seen=used)
        found_h, _mask = cv2.findHomography(img_pts, board_pts, 0)
        if found_h is None:
            return failed(self.method, MARKERS_NOT_FOUND, markers_seen=used)
        h: NDArray[np.float64] = np.asarray(found_h, dtype=np.float64)
        rms = float(np.sqrt(np.mean(np.sum((apply_homography(h, img_pts) - board_pts) ** 2, axis=1))))
        if rms > 2.0:
            # Markers that do not agree on one plane: one was moved or misplaced.
            return failed(self.method, f"markers disagree by {rms:.1f} mm; check they are where the profile says", markers_seen=used)
        quality = len(used) / len(self.profile.markers) / (1.0 + rms)
        # The camera is fixed: while the markers stay put, reuse the refined fit
        # for up to recheck_s (a board nudged on its tray is caught by then).
        now = time.monotonic_ns()
        last = self._last
        if (
            last is not None
            and last[0].shape == img_pts.shape
            and float(np.max(np.abs(last[0] - img_pts))) < 0.35
            and now - last[2] < self.recheck_s * 1e9
        ):
            return last[1]
        shift = None
        rows: tuple[tuple[float, float], ...] | None = None
        if self.refine:
            h2, fit = refine_to_grid(self.profile, frame, h, min_shift_mm=0.7)
            worst = worst_residual(fit)
            if not math.isnan(worst):
                h, shift = h2, worst
                rows = row_tuple(fit)
                quality *= 0.5 + 0.5 * float(np.mean(fit.clear_rows)) / (1.0 + worst)
            else:
                quality *= 0.5
        loc = Localisation(True, self.method, h / h[2, 2], None, float(quality), used, shift, self.profile.size_mm, rows)
        self._last = (img_pts, loc, now)
        return loc
