"""Where is the board in the frame? Homographies from image pixels to board millimetres.

Three localisers share one method, ``locate(frame) -> Localisation``:

* :class:`MarkerLocaliser` finds the ArUco markers of the profile (on the
  board or its tray) in every frame and fits a homography to their corners;
* :class:`FixedCornersLocaliser` uses four corners picked once at
  calibration, and checks every frame that the hole pattern still lines up,
  so that a nudged board gives "board moved, recalibrate" instead of a
  silent misreading;
* :class:`BestEffortLocaliser` looks for the board itself: by the features
  of the calibration's picture of it (:class:`BoardLook`) where it has one,
  else the largest quadrilateral of board-coloured plastic with the
  profile's aspect ratio.

All three then refine or check the fit against the board's own hole
pattern (:func:`measure_grid`): holes and pegs are rings of strong
gradient at known places, whatever colour the pegs are.

Modules: ``base`` (the :class:`Localisation` result, the :class:`Localiser`
protocol, homography helpers, :func:`rectify`), ``grid`` (the hole
pattern), ``marker_localiser``, ``corners`` (fixed corners and the
board-moved check), ``best_effort`` and ``appearance`` (the board's
picture). Every public name is importable
from ``pegwatch.vision.localise``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pegwatch.vision.lens import Lens
from pegwatch.vision.localise.appearance import BoardLook, LookError, find_by_look
from pegwatch.vision.localise.base import (
    BOARD_MOVED,
    MARKERS_NOT_FOUND,
    MIN_PX_PER_MM,
    MIN_SHARPNESS,
    NO_BOARD,
    RECT_PX_PER_MM,
    Localisation,
    LocalisationError,
    Localiser,
    apply_homography,
    board_sharpness,
    corners_homography,
    rectify,
    rectify_board,
)
from pegwatch.vision.localise.best_effort import BestEffortLocaliser
from pegwatch.vision.localise.corners import (
    MOVED_MM,
    CornersReference,
    FixedCornersLocaliser,
    make_reference,
    reference_from_dict,
)
from pegwatch.vision.localise.grid import (
    GRID_PX_PER_MM,
    MIN_ROW_CONTRAST,
    SEARCH_MM,
    GridFit,
    measure_grid,
    refine_per_hole,
    refine_to_grid,
)
from pegwatch.vision.localise.marker_localiser import MarkerLocaliser
from pegwatch.vision.profile import BoardProfile

__all__ = [
    "BOARD_MOVED",
    "GRID_PX_PER_MM",
    "MARKERS_NOT_FOUND",
    "MIN_PX_PER_MM",
    "MIN_ROW_CONTRAST",
    "MIN_SHARPNESS",
    "MOVED_MM",
    "NO_BOARD",
    "RECT_PX_PER_MM",
    "SEARCH_MM",
    "BestEffortLocaliser",
    "BoardLook",
    "CornersReference",
    "FixedCornersLocaliser",
    "GridFit",
    "Localisation",
    "LocalisationError",
    "Localiser",
    "LookError",
    "MarkerLocaliser",
    "apply_homography",
    "board_sharpness",
    "corners_homography",
    "find_by_look",
    "localiser_for",
    "make_reference",
    "measure_grid",
    "rectify",
    "rectify_board",
    "reference_from_dict",
    "refine_per_hole",
    "refine_to_grid",
]


def localiser_for(
    profile: BoardProfile,
    method: str,
    *,
    corners_px: Sequence[Sequence[float]] | None = None,
    reference: CornersReference | Mapping[str, Any] | None = None,
    lens: Lens | None = None,
    look: BoardLook | None = None,
) -> Localiser:
    """A localiser by method name ("markers", "corners", "best-effort").

    ``lens`` is the table's calibrated lens (None: an assumed pinhole): the
    localisers place the board in 3D with it (:attr:`Localisation.pose`).
    ``look``: the board as the calibration saw it, for best effort.
    """
    if method == "markers":
        return MarkerLocaliser(profile, lens=lens)
    if method == "corners":
        if corners_px is None:
            raise LocalisationError("the corners method needs four corners")
        return FixedCornersLocaliser(profile, corners_px, reference=reference, lens=lens)
    if method == "best-effort":
        return BestEffortLocaliser(profile, look=look)
    raise LocalisationError(f"unknown localisation method {method!r} (markers, corners, best-effort)")
