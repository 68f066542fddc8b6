"""Markers at one end: the far end, extrapolated, is stretched onto the hole pattern."""

from __future__ import annotations

import numpy as np
import pytest

from pegwatch.simulation.render import Conditions, random_contents, render
from pegwatch.vision.localise.base import apply_homography
from pegwatch.vision.localise.outline import open_axes
from pegwatch.vision.localise.stretch import stretched
from pegwatch.vision.profile import load_profile

LEFT = (0, 3)  # the two markers at the board's left end


@pytest.fixture(scope="module")
def board():
    p = load_profile("invicta-12x4")
    out = render(p, random_contents(p, np.random.default_rng(11)), Conditions.easy(), seed=11)
    return p, out, np.linalg.inv(out.board_to_image)


def _along(p, factor):
    """A board-side stretch along x about the left markers (what their extrapolation gets wrong)."""
    anchor = float(np.mean([m.centre_mm[0] for m in p.markers if m.id in LEFT]))
    s = np.eye(3)
    s[0, 0] = 1.0 + factor
    s[0, 2] = -anchor * factor
    return s


def _worst_mm(p, out, image_to_board):
    holes = np.array(p.all_hole_centres_mm(), dtype=np.float64)
    return float(np.max(np.linalg.norm(apply_homography(image_to_board, out.project(holes)) - holes, axis=1)))


@pytest.mark.parametrize("factor", [0.035, -0.05, 0.08])
def test_a_far_end_rows_off_is_stretched_back_onto_the_pattern(board, factor):
    p, out, true = board
    off = _along(p, factor) @ true
    assert _worst_mm(p, out, off) > 7.0  # the far rows lie further off than the pattern's row search reaches
    got = stretched(p, out.image, off, LEFT)
    assert _worst_mm(p, out, got) < 0.8


def test_markers_along_one_long_side_stretch_the_fit_across_the_board(board):
    """The top markers (0 and 1) leave the bottom edge to extrapolation."""
    p, out, true = board
    anchor = float(np.mean([m.centre_mm[1] for m in p.markers if m.id in (0, 1)]))
    s = np.eye(3)
    s[1, 1], s[1, 2] = 1.1, -anchor * 0.1
    off = s @ true
    assert _worst_mm(p, out, off) > 5.0
    assert _worst_mm(p, out, stretched(p, out.image, off, (0, 1))) < 0.8


def test_markers_that_span_the_board_leave_the_fit_alone(board):
    p, out, true = board
    off = _along(p, 0.05) @ true
    def axes(used):
        return open_axes(np.array([m.centre_mm for m in p.markers if m.id in used]), p.size_mm)

    assert axes((0, 1, 2, 3)) == [] and axes((0, 2)) == []
    assert stretched(p, out.image, off, (0, 1, 2, 3)) is off
    assert axes(LEFT) == [0] and axes((0, 1)) == [1]


def test_no_pattern_is_no_answer(board):
    """A frame with nothing on it: every stretch scores alike, and none is taken."""
    p, out, true = board
    off = _along(p, 0.05) @ true
    assert stretched(p, np.full_like(out.image, 90), off, LEFT) is off


def test_a_sleeve_over_the_far_rows_leaves_the_rows_in_view_to_decide(board):
    """Its straight edge is one more ring's worth at most: the holes in view outweigh it."""
    import cv2

    p, out, true = board
    x_far = p.hole_centres_mm(9)[0][0]  # rows 9 to 12 (and the key holes beside them) lie under the sleeve
    sleeve = out.project(np.array([[x_far - 4.0, -30.0], [400.0, -30.0], [400.0, 130.0], [x_far - 4.0, 130.0]]))
    image = out.image.copy()
    cv2.fillConvexPoly(image, np.round(sleeve).astype(np.int32), (40, 30, 25))
    off = _along(p, 0.06) @ true
    got = stretched(p, image, off, LEFT)
    seen = np.array([c for r in range(1, 9) for c in p.hole_centres_mm(r)], dtype=np.float64)
    err = np.linalg.norm(apply_homography(got, out.project(seen)) - seen, axis=1)
    assert float(err.max()) < 0.8
