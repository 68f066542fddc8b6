"""Best-effort localisation: the board found without markers or corners.

With the calibration's picture of the board (:mod:`.appearance`), its own
features place it first; the largest board-shaped blob otherwise.
"""

from __future__ import annotations

import math
import time

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.localise.appearance import BoardLook, find_by_look
from pegwatch.vision.localise.base import (
    NO_BOARD,
    Localisation,
    check_frame,
    corners_homography,
    failed,
    rectify_board,
)
from pegwatch.vision.localise.grid import (
    GridFit,
    measure_grid,
    per_hole,
    refine_per_hole,
    refine_to_grid,
    row_tuple,
    worst_residual,
)
from pegwatch.vision.localise.still import StillWindows, Window, within
from pegwatch.vision.profile import BoardProfile

#: A fixed camera's board stays where it was found while the frame round
#: its corners looks as it did (a search costs a few hundred ms a frame); it
#: is looked for again after this much frame time all the same.
RECHECK_S = 1.0
#: Half the side of the window watched round each of the board's corners.
CORNER_WINDOW_MM = 6.0


class BestEffortLocaliser:
    """Find the board without markers or corners: the largest board-shaped blob.

    Both polarities are tried (a dark board on a light tray, a light board
    on a dark table); a candidate must be a convex quadrilateral-ish blob
    with roughly the profile's aspect ratio. Its 180° ambiguity is settled by
    which way round the hole pattern fits. The result carries a modest
    ``quality`` so that a reader can be more careful with it.

    ``look``: the board as the calibration saw it. Where its features place
    the board, and the rows of holes that answer lie where they put them,
    that is the board: it needs no outline, and may lie partly out of the
    frame or be turned any way.
    """

    method = "best-effort"

    def __init__(self, profile: BoardProfile, *, work_width: int = 640, look: BoardLook | None = None) -> None:
        self.profile = profile
        self.work_width = work_width
        self.look = look
        self._kept: tuple[Localisation, int] | None = None
        self._still = StillWindows()

    def _candidates(self, frame: NDArray[np.uint8]) -> list[tuple[float, NDArray[np.float64]]]:
        w0 = frame.shape[1]
        scale = min(1.0, self.work_width / w0)
        small = cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else frame
        gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY) if small.ndim == 3 else small
        gray = cv2.GaussianBlur(gray, (0, 0), 2.0)
        area_img = gray.shape[0] * gray.shape[1]
        want = self.profile.size_mm[0] / self.profile.size_mm[1]
        out: list[tuple[float, NDArray[np.float64]]] = []
        otsu, _b = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        # One global threshold rarely separates board, tray and table at once:
        # try a ladder of them, both ways round.
        levels = sorted({int(otsu), *(int(v) for v in np.percentile(gray, [10, 20, 30, 40, 50, 60, 70, 80, 90]))})
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (9, 9))
        masks: list[NDArray[np.uint8]] = []
        for t in levels:
            _t, binary = cv2.threshold(gray, t, 255, cv2.THRESH_BINARY)
            b = np.asarray(binary, dtype=np.uint8)
            masks.extend((b, 255 - b))
        for mask in masks:
            # Close over the holes and pegs, open away thin bridges to the surroundings.
            m = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, kernel)
            m = cv2.morphologyEx(m, cv2.MORPH_OPEN, kernel)
            contours, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            for cnt in contours:
                area = cv2.contourArea(cnt)
                if area < 0.04 * area_img:
                    continue
                (cx, cy), (rw, rh), _ang = cv2.minAreaRect(cnt)
                if min(rw, rh) < 10:
                    continue
                aspect = max(rw, rh) / min(rw, rh)
                if not 0.8 * want <= aspect <= 1.25 * want:
                    continue
                fill = area / (rw * rh)
                if fill < 0.75:
                    continue
                hull = cv2.convexHull(cnt)
                quad = None
                peri = cv2.arcLength(hull, True)
                for eps in (0.01, 0.02, 0.03, 0.05):
                    approx = cv2.approxPolyDP(hull, eps * peri, True)
                    if len(approx) == 4:
                        quad = approx.reshape(4, 2).astype(np.float64)
                        break
                if quad is None:
                    quad = cv2.boxPoints(((cx, cy), (rw, rh), _ang)).astype(np.float64)
                quad = (quad + 0.5) / scale - 0.5
                out.append((area * fill, quad))
        out.sort(key=lambda t: -t[0])
        # Many thresholds find the same board: keep one of each.
        unique: list[tuple[float, NDArray[np.float64]]] = []
        for score, quad in out:
            centre = quad.mean(axis=0)
            if all(np.linalg.norm(centre - q.mean(axis=0)) > 10 for _s, q in unique):
                unique.append((score, quad))
        return unique

    def _unalias(
        self,
        frame: NDArray[np.uint8],
        h: NDArray[np.float64],
        fit: GridFit,
    ) -> tuple[NDArray[np.float64], GridFit]:
        """Settle a fit that may sit one row or one hole off.

        A regular grid also matches itself shifted by a whole pitch: the
        board's edges settle it. A fit moved by a pitch is taken only when
        its edges lie on lines 1.25 times as strong. Where the board's ends
        barely show (a board flush with its tray), nothing moves it: such a
        fit may stay a row off, and best effort is never trusted to accuse.
        """
        p = self.profile
        steps = [np.array(p.row_step_mm)]
        if len(p.hole_offsets_mm) > 1:
            steps.append(np.subtract(p.hole_offsets_mm[1], p.hole_offsets_mm[0]))

        gray = np.asarray(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame, dtype=np.uint8)
        best_h, best_fit = h, fit
        for step in steps:
            # A shift along x shows on the left and right edges, along y on the others.
            side = 0 if abs(step[0]) >= abs(step[1]) else 1
            here = _outline_score(p, gray, best_h)[side]
            for sign in (-1.0, 1.0):
                dx, dy = sign * step
                alt = np.array([[1, 0, dx], [0, 1, dy], [0, 0, 1]], dtype=np.float64) @ best_h
                # Move only on clear evidence: the board's edge is a strong line.
                if _outline_score(p, gray, alt)[side] > 1.25 * here:
                    best_h, best_fit = alt, measure_grid(p, frame, alt, search_mm=2.0)
                    break
        return best_h, best_fit

    def _orderings(self, quad: NDArray[np.float64]) -> list[NDArray[np.float64]]:
        """The two ways round (TL, TR, BR, BL) that put the board's long side along its x."""
        c = quad.mean(axis=0)
        ang = np.arctan2(quad[:, 1] - c[1], quad[:, 0] - c[0])
        q = quad[np.argsort(ang)]  # clockwise in image coordinates (y down)
        # Start at the corner where the following side is a long side.
        starts = []
        for i in range(4):
            a, b, d = q[i], q[(i + 1) % 4], q[(i + 3) % 4]
            if np.linalg.norm(b - a) >= np.linalg.norm(d - a):
                starts.append(i)
        return [np.roll(q, -i, axis=0) for i in starts[:2]]

    def locate(self, frame: NDArray[np.uint8], *, at_ns: int | None = None) -> Localisation:
        """Find the board; not ok with "no board found" when nothing board-like is seen.

        ``at_ns`` is the frame's monotonic stamp (None: now). A board found is
        kept while the windows round its corners look as they did, for at most
        :data:`RECHECK_S` of frame time (a stamp before the fit's starts afresh).
        """
        check_frame(frame)
        now = time.monotonic_ns() if at_ns is None else at_ns
        kept = self._kept
        if kept is not None and within(kept[1], now, RECHECK_S) and self._still.unchanged(frame):
            return kept[0]
        self._kept = None
        self._still.forget()
        loc = self._search(frame)
        if loc.ok:
            self._kept = (loc, now)
            self._still.take(frame, self._corner_windows(loc, frame.shape))
        return loc

    def _corner_windows(self, loc: Localisation, shape: tuple[int, ...]) -> dict[int, Window]:
        """The windows round the board's corners in the frame (those inside it): the board's edges
        against the table, which any move of the board or the camera changes."""
        w, h = self.profile.size_mm
        d = CORNER_WINDOW_MM
        corners = np.array([[0.0, 0.0], [w, 0.0], [w, h], [0.0, h]])
        centres = loc.to_image(corners)
        half = np.linalg.norm(loc.to_image(corners + np.array([d, 0.0])) - centres, axis=1)
        hgt, wid = int(shape[0]), int(shape[1])
        out: dict[int, Window] = {}
        for i, ((x, y), r) in enumerate(zip(centres, np.maximum(half, 8.0), strict=True)):
            x0, y0, x1, y1 = int(x - r), int(y - r), int(x + r) + 1, int(y + r) + 1
            if x0 >= 0 and y0 >= 0 and x1 <= wid and y1 <= hgt:
                out[i] = (x0, y0, x1, y1)
        return out

    def _search(self, frame: NDArray[np.uint8]) -> Localisation:
        p = self.profile
        by_look = None if self.look is None else self._by_look(frame, self.look)
        if by_look is not None:
            return by_look
        secret = np.array(p.secret_centres_mm())
        secret_d = np.full(len(secret), p.code_hole_diameter_mm)

        def secret_score(h: NDArray[np.float64], search: float) -> float:
            # Some boards look the same turned round but for the secret row.
            _sh, sc = per_hole(p, frame, h, secret, secret_d, search_mm=search)
            return float(np.sum(np.clip(sc, 0, 20)))

        tries: list[tuple[float, NDArray[np.float64]]] = []
        for _score, quad in self._candidates(frame)[:3]:
            for order in self._orderings(quad):
                h = corners_homography(p, order)
                fit = measure_grid(p, frame, h, search_mm=3.0)
                if fit.clear_rows.sum() < max(2, p.rows // 3):
                    continue
                tries.append((float(np.sum(np.clip(fit.row_contrast, 0, 20))) + secret_score(h, 3.0), h))
        tries.sort(key=lambda t: -t[0])
        best: tuple[float, Localisation] | None = None
        for _score, h in tries[:3]:
            h2, fit2 = refine_to_grid(p, frame, h, rounds=3, again_mm=0.5)
            # The blob's corners may be off in scale too: finish hole by hole.
            for _ in range(2):
                h3 = refine_per_hole(p, frame, h2)
                if h3 is None:
                    break
                h2 = h3
                fit2 = measure_grid(p, frame, h2, search_mm=2.0)
            h2, fit2 = self._unalias(frame, h2, fit2)
            worst = worst_residual(fit2)
            clear = float(np.mean(fit2.clear_rows))
            # Refuse rather than guess: the pattern must fit well over most rows.
            if h2 is h or math.isnan(worst) or worst > 1.5 or clear < 0.5:
                continue
            final = clear * 20 * p.rows / (1.0 + worst) + secret_score(h2, 1.5)
            loc = self._found(h2, fit2, worst)
            if best is None or final > best[0]:
                best = (final, loc)
        if best is None:
            return failed(self.method, NO_BOARD)
        return best[1]

    def _by_look(self, frame: NDArray[np.uint8], look: BoardLook) -> Localisation | None:
        """The board where its features put it, unless the hole pattern says otherwise.

        The features fit the whole board, the holes among them; the rows of
        holes that answer (two at least) must lie where the fit puts them.
        It is not nudged onto the pattern: on a real board the pegs' heads
        and their shadows pull a pattern fit further than the features err.
        """
        p = self.profile
        h = find_by_look(frame, look, p.size_mm)
        if h is None:
            return None
        fit = measure_grid(p, frame, h, search_mm=3.0)
        worst = worst_residual(fit)
        if int(fit.clear_rows.sum()) < 2 or math.isnan(worst) or worst > 1.5:
            return None
        return self._found(h, fit, worst)

    def _found(self, h: NDArray[np.float64], fit: GridFit, worst: float) -> Localisation:
        """The board at ``h``, its hole pattern ``fit`` lying ``worst`` mm off at most."""
        # Best effort is never as trustworthy as markers or picked corners.
        quality = 0.6 * float(np.mean(fit.clear_rows)) / (1.0 + worst)
        return Localisation(True, self.method, h, None, quality, (), worst, self.profile.size_mm, row_tuple(fit))


def _outline_score(
    profile: BoardProfile, gray: NDArray[np.uint8], image_to_board: NDArray[np.float64]
) -> tuple[float, float]:
    """How strongly the board's edges show where ``image_to_board`` puts them: (left + right, top + bottom).

    Each edge's gradient on the expected line is compared with lines 3 mm
    inside and outside it; a fit off by a row or a hole has its edges on
    bare plastic or tray.
    """
    ppm, m = 2.0, 6.0
    w, h = profile.size_mm
    rect = rectify_board(gray, image_to_board, profile.size_mm, px_per_mm=ppm, margin_mm=m).astype(np.float32)
    gx = np.abs(cv2.Sobel(rect, cv2.CV_32F, 1, 0, ksize=3))
    gy = np.abs(cv2.Sobel(rect, cv2.CV_32F, 0, 1, ksize=3))
    off = round(3.0 * ppm)
    ys = slice(round((m + 0.15 * h) * ppm), round((m + 0.85 * h) * ppm))
    xs = slice(round((m + 0.15 * w) * ppm), round((m + 0.85 * w) * ppm))
    sides = [0.0, 0.0]
    for pos, along_x in ((m, True), (m + w, True), (m, False), (m + h, False)):
        c = round(pos * ppm)

        def line(k: int, along_x: bool = along_x) -> float:
            if along_x:
                return float(gx[ys, max(0, k - 1) : k + 2].max(axis=1).mean())
            return float(gy[max(0, k - 1) : k + 2, xs].max(axis=0).mean())

        sides[0 if along_x else 1] += line(c) / (0.5 * (line(c - off) + line(c + off)) + 1.0)
    return sides[0], sides[1]
