"""Localisation by four corners picked once, with the board-moved check.

The check compares the hole pattern of every frame with a
:class:`CornersReference` captured at calibration (or from the first
clear frame), so that a nudged board gives "board moved, recalibrate"
instead of a silent misreading.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.lens import Lens, LensError
from pegwatch.vision.localise.base import (
    BOARD_MOVED,
    NO_BOARD,
    Localisation,
    LocalisationError,
    board_sharpness,
    check_frame,
    corners_homography,
    failed,
)
from pegwatch.vision.localise.grid import (
    MIN_ROW_CONTRAST,
    GridFit,
    bare_hole_ring,
    fit_to_shifts,
    measure_grid,
    quality_from_fit,
)
from pegwatch.vision.localise.warp import fit_key
from pegwatch.vision.pose import BoardPose, PoseError, board_on_plane, estimate_lens, fit_pose
from pegwatch.vision.profile import BoardProfile

logger = logging.getLogger(__name__)

MOVED_MM = 1.5
"""Displacement of the hole pattern (anywhere on the board) that counts as a moved board."""


@dataclass(frozen=True)
class CornersReference:
    """What the hole pattern looked like at calibration, for the board-moved check.

    ``row_shift_mm``: per-row displacement of the pattern from the picked
    corners' fit (picked corners are a little off; this is the baseline).
    """

    row_shift_mm: tuple[tuple[float, float], ...]
    row_contrast: tuple[float, ...]
    strength: float
    #: The board's bare-hole ring (times the head diameter) when it is not
    #: the head's (:func:`~pegwatch.vision.localise.grid.bare_hole_ring`).
    hole_ring: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        out: dict[str, Any] = {
            "row_shift_mm": [[round(float(a), 4) for a in r] for r in self.row_shift_mm],
            "row_contrast": [round(float(c), 3) for c in self.row_contrast],
            "strength": round(float(self.strength), 3),
        }
        if self.hole_ring is not None:
            out["hole_ring"] = self.hole_ring
        return out


def reference_from_dict(data: Mapping[str, Any] | None) -> CornersReference | None:
    """Parse :meth:`CornersReference.to_dict`'s form (None passes through)."""
    if data is None:
        return None
    try:
        shifts = tuple((float(a), float(b)) for a, b in data["row_shift_mm"])
        contrast = tuple(float(c) for c in data["row_contrast"])
        strength = float(data["strength"])
        ring = data.get("hole_ring")
        hole_ring = None if ring is None else float(ring)
    except (KeyError, TypeError, ValueError) as exc:
        raise LocalisationError(f"corners reference is malformed: {exc}") from None
    if len(shifts) != len(contrast):
        raise LocalisationError("corners reference: row_shift_mm and row_contrast differ in length")
    if hole_ring is not None and not 0.05 <= hole_ring <= 0.5:
        raise LocalisationError(f"corners reference: hole_ring {hole_ring} is not in 0.05..0.5")
    return CornersReference(shifts, contrast, strength, hole_ring)


def make_reference(
    profile: BoardProfile, corners_px: Sequence[Sequence[float]] | NDArray[np.float64], frame: NDArray[np.uint8]
) -> CornersReference:
    """Capture the board-moved reference from a calibration frame (no hand over the board)."""
    check_frame(frame)
    h = corners_homography(profile, corners_px)
    ring = bare_hole_ring(profile, frame, h)
    return reference_from_fit(measure_grid(profile, frame, h, hole_ring=ring), hole_ring=ring)


def reference_from_fit(fit: GridFit, *, hole_ring: float | None = None) -> CornersReference:
    return CornersReference(
        tuple((float(a), float(b)) for a, b in np.nan_to_num(fit.row_shift_mm)),
        tuple(float(c) for c in fit.row_contrast),
        fit.strength,
        hole_ring,
    )


class FixedCornersLocaliser:
    """Homography from four board corners picked once (TL, TR, BR, BL in image px).

    Every ``locate`` checks the hole pattern against the ``reference``
    captured at calibration (or, without one, against the first clear frame):
    when it has moved by :data:`MOVED_MM` or more anywhere on the board the
    result is not ok, with "board moved, recalibrate". Rows covered by a hand
    give no clear answer and are left out of the check, so hands and pegs do
    not trigger it. When too few rows answer, the board is "not visible"
    rather than guessed at.
    """

    method = "corners"

    def __init__(
        self,
        profile: BoardProfile,
        corners_px: Sequence[Sequence[float]] | NDArray[np.float64],
        *,
        reference: CornersReference | Mapping[str, Any] | None = None,
        check: bool = True,
        lens: Lens | None = None,
    ) -> None:
        self.profile = profile
        self.lens = lens
        self._pose: tuple[bytes, tuple[int, int], BoardPose | None] | None = None
        self.corners_px = np.asarray(corners_px, dtype=np.float64)
        self.image_to_board = corners_homography(profile, self.corners_px)
        self._corners_only = self.image_to_board  # what the reference was measured against
        if isinstance(reference, Mapping):
            reference = reference_from_dict(reference)
        if reference is not None and len(reference.row_shift_mm) != profile.rows:
            raise LocalisationError(
                f"corners reference has {len(reference.row_shift_mm)} rows; board {profile.name} has {profile.rows}"
            )
        self.reference: CornersReference | None = None
        self.check = check
        if reference is not None:
            self._adopt(reference)

    def _adopt(self, reference: CornersReference) -> None:
        """Take ``reference`` as the calibrated state of the board.

        The reference knows where the holes really were relative to the
        picked corners: the fit moves onto them, so that clicks a little off
        and lens distortion do not shift every reading.
        """
        p = self.profile
        self.reference = reference
        ref_fit = GridFit(
            np.array(reference.row_shift_mm, dtype=np.float64),
            np.array(reference.row_contrast, dtype=np.float64),
            np.array([np.mean(p.hole_centres_mm(r) + p.key_centres_mm(r), axis=0) for r in range(1, p.rows + 1)]),
            reference.strength,
        )
        got = fit_to_shifts(p, self._corners_only, ref_fit)
        self.image_to_board = self._corners_only if got is None else got[0]

    def locate(self, frame: NDArray[np.uint8], *, at_ns: int | None = None) -> Localisation:
        """The fixed fit, checked against the hole pattern.

        Without a reference, the first frame in which most rows answer
        clearly becomes the reference (the board is taken to be where the
        corners were picked at that moment).
        """
        check_frame(frame)
        if not self.check:
            return self._measured(
                frame, Localisation(True, self.method, self.image_to_board, None, 0.5, size_mm=self.profile.size_mm)
            )
        fit = measure_grid(
            self.profile, frame, self._corners_only, hole_ring=None if self.reference is None else self.reference.hole_ring
        )
        if self.reference is None and fit.clear_rows.sum() >= max(2, self.profile.rows // 2):
            disp0 = fit.max_displacement(self.profile)
            if not math.isnan(disp0) and disp0 < 3 * MOVED_MM:
                self._adopt(reference_from_fit(fit))
                logger.info("board-moved reference taken from the first clear frame")
        h = self.image_to_board
        if self.reference is not None:
            base = np.array(self.reference.row_shift_mm)
            usable = np.array(self.reference.row_contrast) >= MIN_ROW_CONTRAST
        else:
            base = np.zeros((self.profile.rows, 2))
            usable = np.ones(self.profile.rows, dtype=bool)
        rel = GridFit(fit.row_shift_mm - base, np.where(usable, fit.row_contrast, 0.0), fit.row_centre_mm, fit.strength)
        clear = int(rel.clear_rows.sum())
        if clear < max(2, self.profile.rows // 4):
            return failed(self.method, NO_BOARD, quality=0.0)
        disp = rel.max_displacement(self.profile)
        if math.isnan(disp) or disp >= MOVED_MM:
            logger.info("board moved by %.1f mm (%d clear rows)", disp, clear)
            return failed(self.method, BOARD_MOVED, quality=0.0, shift_mm=None if math.isnan(disp) else disp)
        quality = quality_from_fit(self.profile, rel)
        return self._measured(frame, Localisation(True, self.method, h, None, quality, (), disp, self.profile.size_mm))

    def pose_for(self, size: tuple[int, int]) -> BoardPose | None:
        """The camera's pose from the picked corners (fitted once per fit and frame size).

        The corners place the camera; the hole pattern's reference says
        where the board lies relative to them (the fit moved onto the holes).
        """
        key = fit_key(self.image_to_board)
        if self._pose is not None and self._pose[0] == key and self._pose[1] == size:
            return self._pose[2]
        pose: BoardPose | None = None
        try:
            corners_fit = self._corners_only
            lens: Lens | None = None
            if self.lens is not None:
                try:
                    lens = self.lens.for_size(size)
                except LensError as exc:
                    logger.warning("the calibrated lens is not used: %s", exc)
            if lens is None:
                b2i = np.linalg.inv(corners_fit)
                lens = estimate_lens(b2i / b2i[2, 2], size)
            corners_mm = np.array(self.profile.corners_mm(), dtype=np.float64)
            to_fit = None
            if self.image_to_board is not corners_fit:  # the reference moved the fit onto the holes
                holes = np.array(self.profile.all_hole_centres_mm(), dtype=np.float64)
                to_fit = board_on_plane(holes, self.image_to_board, self.corners_px, corners_mm, lens)
            pose = fit_pose(corners_mm, self.corners_px, lens, board_to_fit=to_fit)
        except (PoseError, cv2.error, np.linalg.LinAlgError) as exc:
            logger.debug("no camera pose from the corners: %s", exc)
        self._pose = (key, size, pose)
        return pose

    def _measured(self, frame: NDArray[np.uint8], loc: Localisation) -> Localisation:
        """``loc`` with the camera's pose, the board's px/mm and its sharpness in ``frame``."""
        if loc.image_to_board is None:
            return loc
        ppm, sharp = board_sharpness(frame, loc.image_to_board, self.profile.size_mm)
        return replace(loc, pose=self.pose_for((frame.shape[1], frame.shape[0])), px_per_mm=ppm, sharpness=sharp)
