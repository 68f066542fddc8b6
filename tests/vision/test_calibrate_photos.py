"""Calibration on real photos (skipped when ../shared/photos is absent).

The empty grey Pressman board of RishitAgrawal06/Mastermind, top-down at
1031x452 and rotated and shrunk to 302x720: its corners are exact (from
four hole centres), yet the board check refused it, because the check's
ring kernel assumed bare holes as wide as the peg heads (as rendered); this
board has narrow holes in wide embossed seats. The calibration now
measures the bare holes' ring on the calibration photo.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from pegwatch.vision.calibrate import calibrate
from pegwatch.vision.localise import CornersReference, reference_from_dict
from pegwatch.vision.profile import profile_from_dict
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import ROW_EMPTY
from pegwatch.vision.sources import read_image

PHOTOS = Path(__file__).resolve().parents[3] / "shared" / "photos"

# Fitted with `pegwatch profile` from the hole centres of mastermind.png
# (hole pitch 9 mm assumed; peg heads 6.5 mm and key heads 3 mm by eye).
PRESSMAN = {
    "name": "pressman-10x4", "rows": 10, "holes": 4, "key_layout": "2x2", "size_mm": [124.816, 51.981],
    "code_hole_diameter_mm": 6.5, "key_hole_diameter_mm": 3.0,
    "palette": ["red", "orange", "yellow", "green", "blue", "purple", "white", "black"],
    "right_place_key": "black", "right_colour_key": "white",
    "geometry": {
        "row_1_mm": [116.08, 6.802], "row_step_mm": [-10.809, -0.001],
        "hole_offsets_mm": [[0.0, 0.0], [-0.003, 8.989], [0.001, 17.976], [0.0, 27.007]],
        "key_offsets_mm": [[-2.27, 34.184], [2.236, 34.177], [-2.266, 38.679], [2.233, 38.668]],
        "secret_mm": [6.503, 6.5],
    },
}
# Centres of code holes (row 1, hole 1), (1, 4), (10, 1), (10, 4) in each photo, in px.
HOLES_PX = {
    "mastermind.png": [(779.6, 145.9), (780.4, 301.3), (221.4, 148.8), (221.5, 303.9)],
    "mastermindboard.png": [(206.9, 549.1), (94.7, 549.0), (207.1, 147.0), (95.1, 146.1)],
}
EMPTY_BOARD = {"rules": "mso", "secret": None, "rows": [], "timeout": None}


@pytest.mark.parametrize("name", sorted(HOLES_PX))
def test_the_empty_pressman_board_passes_the_board_check_and_reads_empty(name):
    path = PHOTOS / "RishitAgrawal06__Mastermind" / name
    if not path.is_file():
        pytest.skip(f"the development photos are not at {PHOTOS}")
    p = profile_from_dict(PRESSMAN, source="pressman")
    image = read_image(str(path))
    mm = np.array([p.hole_centre_mm(r, j) for r, j in ((1, 1), (1, 4), (10, 1), (10, 4))], dtype=np.float32)
    h = cv2.getPerspectiveTransform(mm, np.array(HOLES_PX[name], dtype=np.float32))
    q = np.c_[np.array(p.corners_mm()), np.ones(4)] @ h.T
    corners = [tuple(v) for v in q[:, :2] / q[:, 2:]]
    cal = calibrate([image], [EMPTY_BOARD], p, corners, allow_low_trust=False)
    assert cal.board_check
    ref = cal.reference
    assert isinstance(ref, CornersReference) and ref.hole_ring is not None and ref.hole_ring < 0.4
    assert cal.not_learned == p.palette and cal.trust == "low"  # an empty board: no colour learned yet
    reading = BoardReader(p, cal).read(image, at_ns=0)
    assert reading.problem is None
    statuses = [r.status for r in reading.rows]
    assert statuses.count(ROW_EMPTY) >= 8, statuses
    assert all(h.colour in ("empty", "unknown", "occluded") for r in reading.rows for h in r.holes)


def test_corners_reference_keeps_the_hole_ring_and_old_references_load():
    ref = CornersReference(((0.0, 0.0),) * 2, (5.0, 5.0), 5.0, 0.2)
    assert reference_from_dict(ref.to_dict()) == ref
    old = {"row_shift_mm": [[0, 0], [0, 0]], "row_contrast": [5, 5], "strength": 5}
    assert reference_from_dict(old).hole_ring is None
