"""A marker read with every bit corrected counts only where the markers found surely place it."""

import numpy as np

from pegwatch.vision.localise import MarkerLocaliser
from pegwatch.vision.localise.marker_plane import confirmed_by
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
    sure = [_seen(p, 3)]
    assert "lenient" in DETECTOR_KINDS
    assert confirmed_by(p, _seen(p, 0), sure)
    # 119 mm from the sure marker, a few mm off is the fit's own error...
    assert confirmed_by(p, _seen(p, 0, shift_mm=(4.0, -6.0)), sure)
    # ...but an id found 40 mm away, or at twice the size, is made up.
    assert not confirmed_by(p, _seen(p, 0, shift_mm=(40.0, 0.0)), sure)
    assert not confirmed_by(p, _seen(p, 0, scale=2.0), sure)
    # Nothing sure: nothing to confirm by.
    assert not confirmed_by(p, _seen(p, 0), [])


def test_candidates_with_no_sure_marker_stand_only_together_where_the_profile_puts_them():
    from pegwatch.vision.localise.marker_plane import candidates_agree

    p = load_profile("invicta-12x4")
    assert candidates_agree(p, [_seen(p, 0), _seen(p, 3)])
    assert candidates_agree(p, [_seen(p, 0), _seen(p, 1, shift_mm=(0.8, -0.5)), _seen(p, 3)])
    assert not candidates_agree(p, [_seen(p, 0)])  # one alone says nothing
    assert not candidates_agree(p, [_seen(p, 0), _seen(p, 3, shift_mm=(30.0, 0.0))])  # one made up
    assert not candidates_agree(p, [_seen(p, 0), _seen(p, 3, scale=1.5)])
    stray = DetectedMarker(17, _seen(p, 3).corners)  # an id the profile does not have counts for nothing
    assert not candidates_agree(p, [_seen(p, 0), stray])


def test_a_board_whose_markers_only_the_candidate_readers_find_is_found():
    from pegwatch.simulation.render import Conditions, random_contents, render

    invicta = load_profile("invicta-12x4")
    out = render(invicta, random_contents(invicta, np.random.default_rng(3), rows_played=5), Conditions.easy(), seed=3)
    real = MarkerLocaliser._find

    def only_candidates(self, gray, offset=(0, 0), *, scale=None, kind="steady"):
        # Blur and a small board: the sure detectors read no marker at all.
        return real(self, gray, offset, scale=scale, kind=kind) if kind in ("lenient", "soft") else []

    MarkerLocaliser._find = only_candidates
    try:
        loc = MarkerLocaliser(invicta).locate(out.image)
    finally:
        MarkerLocaliser._find = real
    assert loc.ok and len(loc.markers_seen) >= 2
    holes = np.array(invicta.all_hole_centres_mm())
    assert np.linalg.norm(loc.to_board(out.project(holes)) - holes, axis=1).max() < 1.0
    assert loc.markers_unsure  # never trusted to accuse (the reader says so)
    assert not MarkerLocaliser(invicta).locate(out.image).markers_unsure


def test_a_board_found_by_candidate_markers_alone_is_read_low_trust(invicta_table, invicta_cal):
    from dataclasses import replace

    from pegwatch.vision.reader import BoardReader
    from pegwatch.vision.reading import TRUST_LOW

    reader = BoardReader(invicta_table.profile, invicta_cal)
    real = reader.localiser.locate

    class CandidatesOnly:
        method = "markers"

        def locate(self, image, *, at_ns=None):
            return replace(real(image, at_ns=at_ns), markers_unsure=True)

    reader._localiser = CandidatesOnly()
    reading = reader.read(invicta_table.calibration[0].image)
    assert reading.problem is None and reading.trust == TRUST_LOW
    assert any("fewer than two markers were read surely" in r for r in reading.trust_reasons)


def test_a_marker_read_as_a_candidate_is_read_so_again_in_its_window():
    """On the steady camera, not by a search of the whole frame every frame."""
    from pegwatch.simulation.render import Conditions, random_contents, render

    invicta = load_profile("invicta-12x4")
    out = render(invicta, random_contents(invicta, np.random.default_rng(3), rows_played=5), Conditions.easy(), seed=3)
    real = MarkerLocaliser._find
    whole: list[tuple[int, int]] = []

    def only_candidates(self, gray, offset=(0, 0), *, scale=None, kind="steady"):
        if gray.shape[:2] == out.image.shape[:2]:
            whole.append(gray.shape[:2])
        return real(self, gray, offset, scale=scale, kind=kind) if kind in ("lenient", "soft") else []

    MarkerLocaliser._find = only_candidates
    try:
        loc = MarkerLocaliser(invicta)
        first = loc.locate(out.image)
        searched = len(whole)
        again = loc.locate(out.image)
    finally:
        MarkerLocaliser._find = real
    assert first.ok and again.ok and again.markers_unsure
    assert searched > 0 and len(whole) == searched  # the second frame searched windows only


def test_the_steady_camera_compares_refined_corners_with_the_kept_fits(monkeypatch):
    """The kept fit remembers refined corners; the markers of the next frame are
    compared refined too (raw half-size corners lie up to a pixel off, more than
    a marker may move on a small board)."""
    import pegwatch.vision.localise.marker_localiser as ml
    from pegwatch.simulation.render import Conditions, random_contents, render

    invicta = load_profile("invicta-12x4")
    out = render(invicta, random_contents(invicta, np.random.default_rng(2), rows_played=5), Conditions.easy(), seed=2)
    # Refinement that moves every corner 2 px: more than 0.5 mm at this scale.
    monkeypatch.setattr(MarkerLocaliser, "_refine_corners", lambda self, gray, pts: pts + 2.0)
    fits: list[int] = []
    real = ml.markers_homography
    monkeypatch.setattr(ml, "markers_homography", lambda *a, **k: (fits.append(1), real(*a, **k))[1])
    loc = MarkerLocaliser(invicta)
    assert loc.locate(out.image).ok and len(fits) == 1
    assert loc.locate(out.image).ok
    assert len(fits) == 1  # the second frame kept the fit
