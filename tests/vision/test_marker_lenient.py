"""A marker read with every bit corrected counts only where the markers found surely place it."""

import numpy as np

from pegwatch.vision.localise import MarkerLocaliser
from pegwatch.vision.markers import DETECTOR_KINDS, DetectedMarker
from pegwatch.vision.profile import load_profile

PX_PER_MM = 3.0
ORIGIN = np.array([120.0, 90.0])


def _seen(profile, marker_id, shift_mm=(0.0, 0.0), scale=1.0):
    m = next(m for m in profile.markers if m.id == marker_id)
    mm = np.asarray(m.corners_mm(), dtype=np.float64)
    centre = mm.mean(axis=0)
    mm = centre + (mm - centre) * scale + np.asarray(shift_mm)
    return DetectedMarker(marker_id, (ORIGIN + mm * PX_PER_MM).astype(np.float32))


def test_a_lenient_marker_is_kept_only_where_the_profile_puts_it():
    p = load_profile("invicta-12x4")
    loc = MarkerLocaliser(p)
    sure = [_seen(p, 3)]
    assert "lenient" in DETECTOR_KINDS
    assert loc._confirmed(_seen(p, 0), sure)
    # 119 mm from the sure marker, a few mm off is the fit's own error...
    assert loc._confirmed(_seen(p, 0, shift_mm=(4.0, -6.0)), sure)
    # ...but an id found 40 mm away, or at twice the size, is made up.
    assert not loc._confirmed(_seen(p, 0, shift_mm=(40.0, 0.0)), sure)
    assert not loc._confirmed(_seen(p, 0, scale=2.0), sure)
    # Nothing sure: nothing to confirm by.
    assert not loc._confirmed(_seen(p, 0), [])
