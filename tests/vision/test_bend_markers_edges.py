"""A lens's bend read from the markers and the board's edges together, where neither shows it alone."""

from __future__ import annotations

import numpy as np
import pytest
from vision_kit import hide_marker, hole_errors_mm, silence_pattern_rows

from pegwatch.simulation.render import Conditions, random_contents, render
from pegwatch.vision.localise import MarkerLocaliser
from pegwatch.vision.localise.base import apply_homography
from pegwatch.vision.localise.outline import OUTLINE_TOLERANCE_MM
from pegwatch.vision.localise.plumb import bend_to_markers_and_edges
from pegwatch.vision.localise.warp import RadialWarp
from pegwatch.vision.markers import detect_markers, profile_marker_points
from pegwatch.vision.profile import load_profile
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import TRUST_FULL, TRUST_LOW

JOINT = "pegwatch.vision.localise.marker_localiser.bend_to_markers_and_edges"
# Three markers' corners cannot tell a bend, and on most physically
# rendered boards the edges alone are too short and noisy to show one.
EDGES_ALONE = "pegwatch.vision.localise.plumb.fit_bend_to_edges"


@pytest.fixture(scope="module")
def invicta():
    return load_profile("invicta-12x4")


def _barrel_with_three_markers(p, seed: int, *, peg_set: int = 0):
    c = random_contents(p, np.random.default_rng(seed), rows_played=6)
    out = render(p, c, Conditions.easy().with_(k1=-0.18, tilt_x_deg=8.0, peg_set=peg_set), seed=seed)
    return out, hide_marker(out.image, out, p.markers[0])


def _points(p, image):
    img_pts, board_pts, _used = profile_marker_points(p, detect_markers(image, p.aruco_dictionary))
    return image.mean(axis=2).astype(np.float32), img_pts, board_pts


def test_the_board_is_placed_under_the_bend_the_markers_and_edges_agree_on(invicta, monkeypatch):
    out, image = _barrel_with_three_markers(invicta, 5)
    monkeypatch.setattr(EDGES_ALONE, lambda *a, **k: None)
    bent = MarkerLocaliser(invicta, refine=False).locate(image)
    assert bent.ok and len(bent.markers_seen) == 3
    assert isinstance(bent.warp, RadialWarp) and bent.warp.k < -0.05
    monkeypatch.setattr(JOINT, lambda *a, **k: None)
    plain = MarkerLocaliser(invicta, refine=False).locate(image)
    assert plain.warp is None
    err_bent, err_plain = hole_errors_mm(invicta, bent, out), hole_errors_mm(invicta, plain, out)
    assert err_bent.max() < 0.7 * err_plain.max()
    # What parted them is still said: the markers' own fit is off by this much.
    assert bent.outline_mm == plain.outline_mm and bent.outline_mm is not None
    assert bent.outline_mm > OUTLINE_TOLERANCE_MM


def test_a_board_placed_under_that_bend_is_trusted_only_where_its_hole_pattern_confirms_it(
    invicta_table, invicta_cal, monkeypatch
):
    p = invicta_table.profile
    _out, image = _barrel_with_three_markers(p, 5, peg_set=invicta_table.peg_set)
    monkeypatch.setattr(EDGES_ALONE, lambda *a, **k: None)
    reader = BoardReader(p, invicta_cal)
    reading = reader.read(image, at_ns=1)
    assert isinstance(reader.last_localisation.warp, RadialWarp)
    # Its own four edges and every row of the pattern hold it: the markers'
    # disagreement is the bend's, and the board is trusted.
    assert reading.trust == TRUST_FULL, reading.trust_reasons
    silence_pattern_rows(monkeypatch, slice(p.rows - 4, p.rows))  # a sleeve over the far rows
    doubted = BoardReader(p, invicta_cal).read(image, at_ns=1)
    assert doubted.trust == TRUST_LOW
    assert any("edge lies" in r for r in doubted.trust_reasons)


def test_a_straight_lens_needs_no_bend_and_a_moved_marker_gets_none(invicta):
    out = render(invicta, random_contents(invicta, np.random.default_rng(7), rows_played=6), Conditions.easy(), seed=7)
    gray, img_pts, board_pts = _points(invicta, hide_marker(out.image, out, invicta.markers[0]))
    assert len(img_pts) == 12
    size = (gray.shape[1], gray.shape[0])
    holes = np.array(invicta.all_hole_centres_mm())
    truth = out.project(holes)
    ppm = float(np.linalg.norm(truth[1] - truth[0])) / float(np.linalg.norm(holes[1] - holes[0]))
    straight = bend_to_markers_and_edges(gray, img_pts, board_pts, size, invicta.size_mm)
    assert straight is not None
    warp, h = straight
    placed = warp.to_image(apply_homography(np.linalg.inv(h), holes))
    assert np.linalg.norm(placed - truth, axis=1).max() / ppm < OUTLINE_TOLERANCE_MM
    moved = img_pts.copy()
    moved[4:8, 0] += 6.0 * ppm  # the second marker 6 mm along the board: no bend explains it
    assert bend_to_markers_and_edges(gray, moved, board_pts, size, invicta.size_mm) is None
    slid = img_pts + np.array([-3.0 * ppm, 0.0])  # nor the board 3 mm along its tray
    assert bend_to_markers_and_edges(gray, slid, board_pts, size, invicta.size_mm) is None


def test_two_markers_get_no_bend_from_the_edges_and_them(invicta):
    _out, image = _barrel_with_three_markers(invicta, 5)
    gray, img_pts, board_pts = _points(invicta, image)
    size = (gray.shape[1], gray.shape[0])
    assert bend_to_markers_and_edges(gray, img_pts, board_pts, size, invicta.size_mm) is not None
    assert bend_to_markers_and_edges(gray, img_pts[:8], board_pts[:8], size, invicta.size_mm) is None
