"""Why a reading is low-trust: the calibration, how the board was found, the fit, the resolution.

A low-trust reading is shown and never accused from (``docs/vision.md``).
"""

from __future__ import annotations

from pegwatch.vision.calibration import Calibration
from pegwatch.vision.localise import Localisation
from pegwatch.vision.localise.base import MIN_PX_PER_MM, board_scale_px_per_mm
from pegwatch.vision.localise.outline import OUTLINE_TOLERANCE_MM
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.reading import TRUST_LOW


def board_facts(
    profile: BoardProfile, calibration: Calibration, loc: Localisation | None
) -> tuple[str | None, float | None, float | None, tuple[str, ...]]:
    """How the board was found, its resolution and sharpness, and why trust is low (if it is)."""
    reasons: list[str] = []
    if calibration.trust == TRUST_LOW:
        reasons.extend(calibration.trust_reasons or ("the calibration is low-trust",))
    if loc is None:
        return None, None, None, tuple(reasons)
    found_by = loc.method
    if found_by == "best-effort":
        reasons.append("the board was found by best effort (no markers, no picked corners)")
    if loc.outline_mm is not None and loc.outline_mm > OUTLINE_TOLERANCE_MM:
        reasons.append(
            f"the board's edge lies {loc.outline_mm:.1f} mm from where the markers put it "
            "(a marker misread, or the board moved on its tray)"
        )
    if loc.markers_unsure:
        reasons.append("fewer than two markers were read surely (blurred or small): the fit is a guess")
    if loc.unpinned_edge is not None:
        reasons.append(
            f"the board's {loc.unpinned_edge} end is placed by extrapolation alone "
            "(the markers seen are at the other end, and that end's edge does not show)"
        )
    ppm = loc.px_per_mm
    if ppm is None and loc.image_to_board is not None:
        w, h = profile.size_mm
        ppm = board_scale_px_per_mm(loc.image_to_board, (w / 2, h / 2))
    sharp = loc.sharpness
    # Below the resolution a key peg needs, a reading is the colour
    # model's best effort: shown, never accused from. (A blurred picture
    # is read on: blur mixes a peg's colour with the plastic's, which the
    # colour model refuses rather than misnames.)
    if ppm is not None and ppm < MIN_PX_PER_MM:
        reasons.append(f"the board is imaged at {ppm:.1f} px/mm, below the {MIN_PX_PER_MM:g} the reader needs")
    return found_by, None if ppm is None else float(ppm), None if sharp is None else float(sharp), tuple(reasons)
