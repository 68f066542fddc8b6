"""Localisation by the profile's ArUco markers, found afresh in every frame.

The camera is fixed, so a good fit is kept until the markers say the
camera moved: a frame whose markers sit where they sat (within
:data:`MOVE_TOLERANCE_MM`) reuses the fit, and a frame in which they are not
found at all (a hand over them, a blurred frame) keeps it too, marked
``held``. Markers found elsewhere are a move, and the board is fitted anew.
Windows whose pixels have not changed since their markers were read need
no reading (:mod:`~pegwatch.vision.localise.still`).
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import replace

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.lens import Lens, LensError
from pegwatch.vision.localise.base import (
    MARKERS_NOT_FOUND,
    Localisation,
    LocalisationError,
    apply_homography,
    board_sharpness,
    check_frame,
    failed,
)
from pegwatch.vision.localise.corners import MOVED_MM
from pegwatch.vision.localise.grid import measure_grid, refine_to_grid, row_tuple, worst_residual
from pegwatch.vision.localise.marker_plane import candidates_agree, confirmed_by, markers_homography
from pegwatch.vision.localise.outline import (
    OUTLINE_TOLERANCE_MM,
    edges_hold,
    end_lost,
    fit_edges,
    outline_error_mm,
    place_by_edges,
    unpinned_edge,
)
from pegwatch.vision.localise.plumb import bend_to_markers_and_edges, frame_bend
from pegwatch.vision.localise.still import StillWindows, marker_windows, within
from pegwatch.vision.localise.stretch import stretched
from pegwatch.vision.localise.warp import ImageWarp, LensWarp, RadialWarp, to_ideal, to_image
from pegwatch.vision.markers import (
    DetectedMarker,
    detect_markers,
    equalise,
    profile_marker_points,
    sharpen,
    sharpen_fine,
)
from pegwatch.vision.pose import BoardPose, PoseError, board_on_plane, estimate_lens, fit_pose
from pegwatch.vision.profile import BoardProfile

logger = logging.getLogger(__name__)

#: Markers whose centres moved less than this (mm on the board's plane) since
#: the last fit have not moved: the fit is kept. Centres, not corners: blur
#: rounds a marker's corners inwards but leaves its centre where it was.
MOVE_TOLERANCE_MM = 0.5
#: The retry passes run when the first pass found fewer markers than this
#: (or than the profile has) and no kept fit is confirmed: two markers on one
#: side of the board place its far end poorly.
RETRY_BELOW = 3
#: The hole pattern re-fits the markers' homography when a row sits this far
#: (mm) from where it puts it: a board slid on its tray, or the lens's bend
#: where no warp takes it out.
REFINE_FROM_MM = 0.7
#: With the bend taken out, the markers place the holes within a millimetre
#: across the board, and a smaller shift of the pattern is the pegs' own
#: lean and shadows, which a re-fit would chase.
REFINE_BENT_FROM_MM = 2.0
#: How far (mm) the hole pattern's re-fit may move the holes from the
#: markers' fit by following the pegs' heads: a 5 mm head seen 25 degrees
#: off vertical leans about 2.3 mm.
HEAD_LEAN_MM = 2.5


class MarkerLocaliser:
    """Homography (and camera pose) from the profile's ArUco markers.

    At least two of the profile's markers must be seen. The first pass
    detects on a half-size image (markers of 20 mm are still ~25 px wide
    there), looking first where the markers were last time. When it finds
    too few, the frame is searched again: equalised (CLAHE) at half size, at
    full size with every threshold window, equalised at a third of the
    size (where a motion blur is a third as long), and sharpened at full
    size (a defocused marker's bits made steep again). The corners are refined
    at full size. With ``refine`` the fit is then nudged onto the hole
    pattern, which absorbs lens distortion at the board and a board that
    slid on its tray; a pattern that cannot be found is reported in ``quality``.

    ``lens`` is the table's calibrated lens; without one a pinhole is
    estimated (:func:`~pegwatch.vision.pose.estimate_lens`).
    """

    method = "markers"

    def __init__(
        self,
        profile: BoardProfile,
        *,
        refine: bool = True,
        detect_scale: float = 0.5,
        recheck_s: float = 1.0,
        lens: Lens | None = None,
    ) -> None:
        if not profile.markers:
            raise LocalisationError(f"board profile {profile.name} defines no markers")
        self.profile = profile
        self.refine = refine
        self.detect_scale = detect_scale
        self.recheck_s = recheck_s
        self.lens = lens
        # The last good fit: marker centres by id (image px), the result, when it was fitted.
        self._last: tuple[dict[int, NDArray[np.float64]], Localisation, int] | None = None
        self._rois: dict[int, tuple[int, int, int, int]] = {}
        self._still = StillWindows()  # the windows as they looked when the kept fit's markers were last read
        self._unsure: set[int] = set()  # markers last read only by the candidates' readers
        self._how: dict[int, tuple[str, float, str]] = {}  # the retry pass that read each marker
        self._held_checked_ns: int | None = None
        # The picture's figures (px/mm, sharpness) and when they were measured.
        self._measured: tuple[float | None, float | None] = (None, None)
        self._measured_ns: int | None = None
        self._lens_warned = False

    # --- detection -------------------------------------------------------

    def _find(
        self, gray: NDArray[np.uint8], offset: tuple[int, int] = (0, 0), *, scale: float | None = None, kind: str = "steady"
    ) -> list[DetectedMarker]:
        scale = self.detect_scale if scale is None else scale
        small = gray
        if scale != 1.0:
            small = np.asarray(cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA), dtype=np.uint8)
        found = detect_markers(small, self.profile.aruco_dictionary, kind=kind)
        ox, oy = offset
        return [
            replace(f, corners=((f.corners + 0.5) / scale - 0.5 + np.array([ox, oy], dtype=np.float32)).astype(np.float32))
            for f in found
        ]

    def _first_pass(self, gray: NDArray[np.uint8], now: int) -> list[DetectedMarker]:
        found: list[DetectedMarker] = []
        if self._rois:
            # The camera is fixed: look where the markers were last time first;
            # unless the kept fit stands on those found, with the retry passes'
            # detectors in the windows that missed theirs.
            for x0, y0, x1, y1 in self._rois.values():
                found.extend(self._find(gray[y0:y1, x0:x1], (x0, y0)))
            for mid, (x0, y0, x1, y1) in self._rois.items():
                if mid not in {f.id for f in found} and not self._keeps(gray, found, now):
                    found += self._window_retry(gray[y0:y1, x0:x1], (x0, y0), mid)
            if {f.id for f in found} != set(self._rois) and not self._keeps(gray, found, now):
                found = []
        if not found:
            found = self._find(gray)
        return found

    def _window_retry(self, win: NDArray[np.uint8], offset: tuple[int, int], mid: int) -> list[DetectedMarker]:
        """Marker ``mid`` in its window by the retry passes' detectors (a blurred or
        small marker a retry pass found): a window costs a hundredth of the frame.
        A marker last read only as a candidate is read again so, and only so;
        one a retry pass read is read first the way that pass read it."""
        makers = {"plain": lambda w: w, "equalised": equalise, "sharpened": sharpen}
        if mid in self._unsure:
            passes = [(m, k, 1.0) for m in (makers["plain"], sharpen_fine) for k in ("lenient", "soft")]
        else:
            how = self._how.get(mid)
            passes = ([] if how is None else [(makers[how[0]], how[2], how[1])]) + [(m, "retry", 1.0) for m in makers.values()]
        for made, kind, scale in passes:  # each image made only when reached
            got = [f for f in self._find(made(win), offset, scale=scale, kind=kind) if f.id == mid]
            if got:
                return got
        return []

    def _recent(self, then: int | None, now: int) -> bool:
        """Is frame time ``now`` within ``recheck_s`` after ``then`` (:func:`.still.within`)?"""
        return then is not None and within(then, now, self.recheck_s)

    def _keeps(self, gray: NDArray[np.uint8], found: list[DetectedMarker], now: int) -> bool:
        """Would the kept fit stand on ``found`` (two or more markers where they were, within
        ``recheck_s`` of the fit)? Then the markers the windows missed (found by a retry pass
        the first time) need no search of the whole frame."""
        img_pts, _board, used = profile_marker_points(self.profile, found)
        last = self._last
        return (
            last is not None
            and self._recent(last[2], now)
            and self._agrees(self._centres(self._refine_corners(gray, img_pts), used))
        )

    def _retry(self, gray: NDArray[np.uint8], found: list[DetectedMarker], want: int = RETRY_BELOW) -> list[DetectedMarker]:
        """More passes, each adding the markers the others missed, until ``want`` are found."""
        want = min(want, len(self.profile.markers))
        ids = {m.id for m in self.profile.markers}
        have = {f.id: f for f in found if f.id in ids}
        # (image, scale, detector kind) of each pass; equalised and sharpened
        # images are made only when reached.
        passes: tuple[tuple[str, float, str], ...] = (
            ("equalised", self.detect_scale, "steady"), ("plain", 1.0, "retry"),
            ("equalised", 1.0 / 3.0, "retry"), ("sharpened", 1.0, "retry"),
        )
        made: dict[str, NDArray[np.uint8]] = {"plain": gray}
        for image, scale, kind in passes:
            if len(have) >= want:
                break
            if image not in made:
                made[image] = equalise(gray) if image == "equalised" else sharpen(gray)
            for f in self._find(made[image], scale=scale, kind=kind):
                if f.id in ids and f.id not in have:
                    have[f.id], self._how[f.id] = f, (image, scale, kind)
        # Candidates only: each must stand where the sure ones put it, or,
        # with fewer than two sure ones, all of them together on one plane.
        # Read from the frame, then from it finely sharpened.
        cands: list[DetectedMarker] = []
        for fine in (False, True):
            if len(have) >= want:
                break
            picture = sharpen_fine(gray) if fine else gray
            cands += [f for k in ("lenient", "soft") for f in self._find(picture, scale=1.0, kind=k)]
            group = {f.id: f for f in reversed(cands) if f.id in ids} | have
            for f in cands:
                if f.id in ids and f.id not in have and have and confirmed_by(self.profile, f, list(have.values())):
                    have[f.id] = f
            have = group if len(have) < 2 and candidates_agree(self.profile, list(group.values())) else have
        extra = [f for f in found if f.id not in ids]
        return list(have.values()) + extra

    def _refine_corners(self, gray: NDArray[np.uint8], img_pts: NDArray[np.float64]) -> NDArray[np.float64]:
        if self.detect_scale == 1.0 or len(img_pts) == 0:
            return img_pts
        corners = img_pts.astype(np.float32).reshape(-1, 1, 2)
        crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.02)
        win = max(2, round(1.5 / self.detect_scale))
        cv2.cornerSubPix(gray, corners, (win, win), (-1, -1), crit)
        return np.asarray(corners.reshape(-1, 2), dtype=np.float64)

    def _remember_rois(self, found: list[DetectedMarker], used: tuple[int, ...], shape: tuple[int, int]) -> None:
        self._rois = marker_windows([f for f in found if f.id in used], shape, self.detect_scale)
        self._unsure = {f.id for f in found if f.id in used and not f.sure}

    # --- keeping the fit ---------------------------------------------------

    @staticmethod
    def _centres(img_pts: NDArray[np.float64], used: tuple[int, ...]) -> dict[int, NDArray[np.float64]]:
        return {mid: img_pts[4 * k : 4 * k + 4].mean(axis=0) for k, mid in enumerate(used)}

    def _agrees(self, centres: dict[int, NDArray[np.float64]]) -> bool:
        """Do the markers seen now sit where they sat at the last fit (two at least)?"""
        if self._last is None:
            return False
        last_centres, loc, _t = self._last
        common = [i for i in centres if i in last_centres]
        if len(common) < 2:
            return False
        ppm = loc.px_per_mm or 1.0
        worst = max(float(np.linalg.norm(centres[i] - last_centres[i])) for i in common)
        return worst <= MOVE_TOLERANCE_MM * ppm

    def _with_sharpness(self, gray: NDArray[np.uint8], loc: Localisation, now: int, **changes: object) -> Localisation:
        """The kept fit with the picture's figures, measured at most once per
        ``recheck_s``: they describe the mount and the focus, which do not
        change from frame to frame, and measuring costs a millisecond of the
        read the steady camera makes many times a second."""
        if loc.image_to_board is None:
            return replace(loc, **changes)  # type: ignore[arg-type]
        if not self._recent(self._measured_ns, now):
            self._measured = board_sharpness(gray, loc.image_to_board, self.profile.size_mm)
            self._measured_ns = now
        ppm, sharp = self._measured
        return replace(loc, px_per_mm=ppm, sharpness=sharp, **changes)  # type: ignore[arg-type]

    def _still_there(self, frame: NDArray[np.uint8], loc: Localisation, now: int) -> bool:
        """Is the board still where the kept fit puts it? Checked once per ``recheck_s`` while held.

        The markers cannot say (they are not seen), so the hole pattern is
        asked: clear rows displaced by twice :data:`MOVED_MM` mean the camera
        moved out of the markers' sight (a knock), and the fit is dropped
        rather than read through. Rows under a hand give no answer and keep it.
        """
        if loc.image_to_board is None:
            return False
        if self._recent(self._held_checked_ns, now):
            return True
        self._held_checked_ns = now
        fit = measure_grid(self.profile, frame, loc.image_to_board, warp=loc.warp)
        if int(fit.clear_rows.sum()) < max(2, self.profile.rows // 4):
            return True
        disp = fit.max_displacement(self.profile)
        if math.isnan(disp) or disp < 2 * MOVED_MM:
            return True
        logger.info("markers not seen and the holes moved by %.1f mm: the kept fit is dropped", disp)
        return False

    # --- the fit -----------------------------------------------------------

    def _outline(self, gray: NDArray[np.uint8], h: NDArray[np.float64], warp: ImageWarp | None) -> float | None:
        """How far the board's edges in ``gray`` lie from where the fit ``h`` (and ``warp``) puts them."""
        return outline_error_mm(fit_edges(gray, h, lambda u: to_image(warp, u), self.profile.size_mm))

    def _lens_for(self, size: tuple[int, int], h_markers: NDArray[np.float64]) -> Lens:
        """The calibrated lens at this frame size, else one estimated from the markers' plane."""
        if self.lens is not None:
            try:
                return self.lens.for_size(size)
            except LensError as exc:
                if not self._lens_warned:
                    logger.warning("the calibrated lens is not used: %s", exc)
                    self._lens_warned = True
        b2i = np.linalg.inv(h_markers)
        return estimate_lens(b2i / b2i[2, 2], size)

    def _pose(
        self,
        img_pts: NDArray[np.float64],
        board_pts: NDArray[np.float64],
        h_markers: NDArray[np.float64],
        h_board: NDArray[np.float64] | None,
        size: tuple[int, int],
        *,
        board_in_ideal: bool = False,
    ) -> BoardPose | None:
        """The camera's pose from the markers' corners; the board's place on the tray from
        its holes (``h_board``, the fit refined on them; None: where the profile says)."""
        try:
            lens = self._lens_for(size, h_markers)
            to_tray = None
            if h_board is not None:
                holes = np.array(self.profile.all_hole_centres_mm(), dtype=np.float64)
                to_tray = board_on_plane(holes, h_board, img_pts, board_pts, lens, board_in_ideal=board_in_ideal)
            return fit_pose(board_pts, img_pts, lens, board_to_fit=to_tray)
        except (PoseError, cv2.error, np.linalg.LinAlgError) as exc:
            logger.debug("no camera pose: %s", exc)
            return None

    def locate(self, frame: NDArray[np.uint8], *, at_ns: int | None = None) -> Localisation:
        """Find the markers and fit; keep the last fit while they stay put or are not seen.

        Not ok with "markers not found" when fewer than two are seen and no
        fit was ever made. ``at_ns`` is the frame's monotonic stamp (None:
        now): the kept fit is checked again ``recheck_s`` of frame time
        after it was made, so that stored frames read again with their
        stamps give the readings the table gave, however fast they are read.
        """
        check_frame(frame)
        now = time.monotonic_ns() if at_ns is None else at_ns
        last = self._last
        if last is not None and self._recent(last[2], now) and self._still.unchanged(frame):
            return replace(last[1], markers_seen=self._still.ids)
        self._still.forget()
        gray = np.asarray(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame, dtype=np.uint8)
        found = self._first_pass(gray, now)
        img_pts, board_pts, used = profile_marker_points(self.profile, found)
        centres = self._centres(self._refine_corners(gray, img_pts), used)
        agrees = self._agrees(centres)
        # A re-fit falls due with fewer markers than the last fit had (one the
        # retry passes found): look for them again, so that it keeps their help.
        last_fit = self._last
        due = last_fit is not None and not self._recent(last_fit[2], now)
        fewer = last_fit is not None and len(used) < len(last_fit[1].markers_seen)
        if (not agrees and len(used) < min(RETRY_BELOW, len(self.profile.markers))) or (due and fewer):
            found = self._retry(gray, found, max(RETRY_BELOW, len(last_fit[1].markers_seen) if last_fit else 0))
            img_pts, board_pts, used = profile_marker_points(self.profile, found)
            centres = self._centres(self._refine_corners(gray, img_pts), used)
            agrees = self._agrees(centres)
        self._remember_rois(found, used, (gray.shape[0], gray.shape[1]))
        last = self._last
        # The fixed camera has not moved (or the markers cannot say): keep the
        # fit, and re-fit now and then while the markers are seen, so that a
        # board nudged on its tray is followed.
        if last is not None and agrees and self._recent(last[2], now):
            self._still.take(frame, self._rois)
            return self._with_sharpness(gray, last[1], now, markers_seen=used)
        if last is not None and len(used) < 2:
            if not self._still_there(frame, last[1], now):
                self._last = None
                return failed(self.method, MARKERS_NOT_FOUND, markers_seen=used)
            return self._with_sharpness(gray, last[1], now, markers_seen=used, held=True)
        if len(used) < 2:
            return failed(self.method, MARKERS_NOT_FOUND, markers_seen=used)
        img_pts = self._refine_corners(gray, img_pts)
        size = (frame.shape[1], frame.shape[0])
        got = markers_homography(img_pts, board_pts, used, frame_size=size)
        if got is None and len(used) < len(self.profile.markers):
            # Every marker's corners show a strong lens's bend, which three cannot tell from a misplaced one.
            found = self._retry(gray, found, len(self.profile.markers))
            img_pts, board_pts, used = profile_marker_points(self.profile, found)
            img_pts = self._refine_corners(gray, img_pts)
            got = markers_homography(img_pts, board_pts, used, frame_size=size)
        if got is None:
            # Markers that do not agree on one plane: one was moved or misplaced.
            return failed(self.method, "markers disagree; check they are where the profile says", markers_seen=used)
        h, rms, (img_pts, board_pts, used) = got
        lens = self._lens_for(size, h) if self.lens is not None else None
        plain, (warp, h, sure_bend) = h, frame_bend(lens, gray, img_pts, board_pts, h, self.profile.size_mm)
        # A bend read from the edges that the fit needs to meet them (not one that only refines it).
        edge_bent = warp is not None and not sure_bend and (self._outline(gray, plain, None) or 99.0) > OUTLINE_TOLERANCE_MM
        h_markers = h
        quality = len(used) / len(self.profile.markers) / (1.0 + rms)
        shift = None
        rows: tuple[tuple[float, float], ...] | None = None
        ppm, sharp = board_sharpness(gray, h / h[2, 2], self.profile.size_mm)
        edges = fit_edges(gray, h, lambda u: to_image(warp, u), self.profile.size_mm)
        outline = outline_error_mm(edges)
        if self.refine:
            start = REFINE_BENT_FROM_MM if sure_bend else REFINE_FROM_MM
            h2, fit = refine_to_grid(self.profile, frame, stretched(self.profile, frame, h, used, warp), min_shift_mm=start, warp=warp)
            worst = worst_residual(fit)
            if not math.isnan(worst):
                if h2 is not h:
                    # The pattern's re-fit follows the pegs' heads as well as
                    # the holes, so it may put the board's edges a little off
                    # where the markers put them right. Within a head's lean
                    # of the markers' fit, the board is placed when either fit
                    # puts its edges where the picture has them; further off
                    # (a slide, or a slip by a hole), only the re-fit's count.
                    # A re-fit further off is the pattern slipping when it
                    # loses an end the markers' fit placed, or when the
                    # lens's bend is known (calibrated, or seen on four
                    # markers) and three or more markers put the edges right.
                    refit_edges = fit_edges(gray, h2, lambda u: to_image(warp, u), self.profile.size_mm)
                    refit = outline_error_mm(refit_edges)
                    holes = np.asarray(self.profile.all_hole_centres_mm(), dtype=np.float64)
                    back = np.asarray(np.linalg.inv(h), dtype=np.float64)
                    moved = float(np.max(np.linalg.norm(apply_homography(h2, apply_homography(back, holes)) - holes, axis=1)))
                    sure = sure_bend and len(used) >= 3 and outline is not None and outline <= OUTLINE_TOLERANCE_MM
                    held = sure or end_lost(edges, refit_edges, self.profile.row_step_mm)
                    if moved > HEAD_LEAN_MM and held:
                        h2, fit = h, measure_grid(self.profile, frame, h, warp=warp)
                        worst = np.nan_to_num(worst_residual(fit), nan=HEAD_LEAN_MM)
                    elif outline is None or refit is None or moved > HEAD_LEAN_MM:
                        outline = refit
                    else:
                        outline = min(outline, refit)
                h, shift = h2, worst
                rows = row_tuple(fit)
                quality *= 0.5 + 0.5 * float(np.mean(fit.clear_rows)) / (1.0 + worst)
            else:
                quality *= 0.5
        if outline is not None and outline > OUTLINE_TOLERANCE_MM:
            # Too far off to accuse from (``outline_mm`` keeps saying so), but
            # the board's own edges, with the markers, place it better for
            # reading: two or three markers leave its far end to
            # extrapolation, and a pattern re-fit can slip by a hole.
            starts = (h,) if h is h_markers else (h, h_markers)
            placed = place_by_edges(
                gray, starts, lambda u: to_image(warp, u), self.profile.size_mm, to_ideal(warp, img_pts), board_pts
            )
            if placed is not None and placed[1] < outline:
                logger.debug("board edges %.1f mm off; re-fitted to them: %.1f mm", outline, placed[1])
                h = placed[0]
                if placed[2]:
                    outline = placed[1]
            # No bend known: an unmodelled one may be what parts the markers from the
            # edges. Its fit reads the board; ``outline`` still says they disagree.
            bent = None if warp is not None or outline <= OUTLINE_TOLERANCE_MM else bend_to_markers_and_edges(
                gray, img_pts, board_pts, size, self.profile.size_mm
            )
            if bent is not None:
                (warp, h), h_markers = bent, bent[1]  # posed on the bent fit's plane, as frame_bend's
        h = h / h[2, 2]
        off = outline is not None and outline > OUTLINE_TOLERANCE_MM
        final = fit_edges(gray, h, lambda u: to_image(warp, u), self.profile.size_mm) if off or len(used) < 3 else None
        # The pattern as the final fit meets it (that fit may have moved since the pattern's re-fit).
        pattern = None if final is None or rows is None else measure_grid(self.profile, frame, h, warp=warp)
        rows = rows if pattern is None else row_tuple(pattern)
        whole = pattern is not None and pattern.holds_whole_board(self.profile)
        confirmed = whole or (pattern is not None and pattern.confirms_fit(self.profile))
        # An unknown lens bends the markers, printed on the tray beyond the
        # board, further than the board: they may part from its edges while
        # the fit that reads is right. Two other cues then hold it, each
        # blind where the other sees: its own edges, and the hole pattern.
        held = whole or (final is not None and None not in final and confirmed)
        if off and final is not None and edges_hold(final, self.profile.row_step_mm) and held:
            outline = outline_error_mm(final)
        loose = None
        if len(used) < 3 and not whole and final is not None:
            seen_mm = np.array([m.centre_mm for m in self.profile.markers if m.id in used], dtype=np.float64)
            loose = unpinned_edge(final, seen_mm, self.profile.size_mm, confirmed=confirmed)
        # An estimated pinhole has no bend: it is posed on the ideal pixels.
        pose_pts = warp.to_ideal(img_pts) if isinstance(warp, RadialWarp) else img_pts
        pose = self._pose(
            pose_pts, board_pts, h_markers, None if shift is None else h, size, board_in_ideal=isinstance(warp, LensWarp)
        )
        loc = Localisation(
            True, self.method, h, None, float(quality), used, shift, self.profile.size_mm, rows,
            pose=pose, px_per_mm=ppm, sharpness=sharp, warp=warp, outline_mm=outline, unpinned_edge=loose,
            bend_from_edges=edge_bent, markers_unsure=sum(f.sure for f in found if f.id in used) < 2,
        )
        self._last = (self._centres(img_pts, used), loc, now)
        self._measured, self._measured_ns = (ppm, sharp), now
        self._still.take(frame, self._rois)
        return loc

