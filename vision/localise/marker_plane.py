"""The markers' corners on one plane: their homography, leaving out a marker that disagrees,
and candidates that stand together where the profile puts them."""

from __future__ import annotations

import logging

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.localise.base import apply_homography
from pegwatch.vision.localise.warp import fit_radial_warp
from pegwatch.vision.markers import DetectedMarker, profile_marker_points
from pegwatch.vision.profile import BoardProfile

logger = logging.getLogger(__name__)

#: The markers' corners must agree on one plane within this (RMS, mm).
MAX_MARKER_RMS_MM = 2.0

#: Candidates (ids read with every correctable bit corrected, or read
#: again module by module) stand on their own only as a group of at least
#: this many on one plane where the profile puts them: an id made up from
#: the table's grain lies anywhere, at any size.
MIN_CANDIDATE_GROUP = 2

Points = tuple[NDArray[np.float64], NDArray[np.float64], tuple[int, ...]]


def markers_homography(
    img_pts: NDArray[np.float64],
    board_pts: NDArray[np.float64],
    used: tuple[int, ...],
    *,
    frame_size: tuple[int, int] | None = None,
) -> tuple[NDArray[np.float64], float, Points] | None:
    """The markers' homography (image px -> board mm), its RMS (mm) and the
    points it used; a marker that disagrees with the others (misread, moved)
    is left out. None when they do not agree on one plane.

    With the ``frame_size`` and every corner of four markers, markers that
    agree only once the lens's bend is out count as agreeing (a strong
    barrel lens close to the board bends the corners of markers near the
    frame's corners by more than the RMS allows); the homography returned
    is still the plain one, and its RMS the bent fit's."""
    got = _fit(img_pts, board_pts)
    if got is not None and got[1] <= MAX_MARKER_RMS_MM:
        return got[0], got[1], (img_pts, board_pts, used)
    bent = None if frame_size is None else fit_radial_warp(img_pts, board_pts, frame_size)
    if got is not None and bent is not None:
        ideal = _fit(bent[0].to_ideal(img_pts), board_pts)
        if ideal is not None and ideal[1] <= MAX_MARKER_RMS_MM:
            return got[0], ideal[1], (img_pts, board_pts, used)
    best: tuple[NDArray[np.float64], float, Points] | None = None
    if len(used) >= 4:
        for k in range(len(used)):
            keep = np.ones(len(img_pts), dtype=bool)
            keep[4 * k : 4 * k + 4] = False
            sub = _fit(img_pts[keep], board_pts[keep])
            if sub is not None and (best is None or sub[1] < best[1]):
                ids = used[:k] + used[k + 1 :]
                best = (sub[0], sub[1], (img_pts[keep], board_pts[keep], ids))
    if best is not None and best[1] <= MAX_MARKER_RMS_MM:
        logger.info("marker %s disagrees with the others; left out", sorted(set(used) - set(best[2][2])))
        return best
    return None


def _fit(ip: NDArray[np.float64], bp: NDArray[np.float64]) -> tuple[NDArray[np.float64], float] | None:
    found_h, _mask = cv2.findHomography(ip, bp, 0)
    if found_h is None:
        return None
    h = np.asarray(found_h, dtype=np.float64)
    rms = float(np.sqrt(np.mean(np.sum((apply_homography(h, ip) - bp) ** 2, axis=1))))
    return h, rms


def confirmed_by(profile: BoardProfile, candidate: DetectedMarker, sure: list[DetectedMarker]) -> bool:
    """Whether the markers ``sure`` say that ``candidate``'s marker stands where it was seen.

    A marker read with every correctable bit corrected may be an id made
    up from the table's grain; a real one lies where the profile puts
    it, at about the size the sure markers predict. An affine fit to the
    sure markers' corners places it (a perspective fit to one marker's
    four corners extrapolates wildly): its centre must lie within a
    quarter of its side, or a tenth of its distance from the nearest
    sure marker, of the profile's place.
    """
    img_pts, board_pts, _used = profile_marker_points(profile, sure)
    if len(img_pts) < 4:
        return False
    a, _inliers = cv2.estimateAffine2D(img_pts, board_pts, method=cv2.LMEDS)
    if a is None:
        return False
    marker = next(m for m in profile.markers if m.id == candidate.id)
    seen = candidate.corners.astype(np.float64) @ a[:, :2].T + a[:, 2]
    want = np.asarray(marker.corners_mm(), dtype=np.float64)
    centre = want.mean(axis=0)
    off = float(np.linalg.norm(seen.mean(axis=0) - centre))
    nearest = float(np.min(np.linalg.norm(board_pts - centre, axis=1)))
    side = float(np.mean(np.linalg.norm(np.roll(seen, 1, axis=0) - seen, axis=1)))
    return off <= max(marker.size_mm / 4, nearest / 10) and 0.75 <= side / marker.size_mm <= 1.33


def candidates_agree(profile: BoardProfile, group: list[DetectedMarker]) -> bool:
    """Do ``group``'s markers (at most one per id) stand together where the profile puts them?

    At least :data:`MIN_CANDIDATE_GROUP` of the profile's markers, whose
    corners one homography maps onto the profile's within
    :data:`MAX_MARKER_RMS_MM`, over all of them and over each marker. That
    says little (a perspective absorbs one of two or three markers moved
    by a centimetre for about 1 mm of RMS, and blur costs as much), so a
    fit on fewer than two markers read surely is never trusted to accuse
    (``Localisation.markers_unsure``).
    """
    mine = [f for f in group if any(m.id == f.id for m in profile.markers)]
    img_pts, board_pts, used = profile_marker_points(profile, mine)
    if len(used) < MIN_CANDIDATE_GROUP or len(used) < len(mine):
        return False
    got = _fit(img_pts, board_pts)
    if got is None or got[1] > MAX_MARKER_RMS_MM:
        return False
    off = np.linalg.norm(apply_homography(got[0], img_pts) - board_pts, axis=1).reshape(-1, 4)
    return bool(np.all(np.sqrt(np.mean(off**2, axis=1)) <= MAX_MARKER_RMS_MM))
