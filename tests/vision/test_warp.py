"""The lens's bend fitted to the markers, and the board's outline as a check on a fit."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest
from vision_kit import hide_marker, hole_errors_mm, silence_pattern_rows

from pegwatch.simulation.render import Conditions, random_contents, render
from pegwatch.vision.localise import MarkerLocaliser, rectify
from pegwatch.vision.localise.base import apply_homography
from pegwatch.vision.localise.grid import shortest_repeat_mm
from pegwatch.vision.localise.outline import (
    OUTLINE_TOLERANCE_MM,
    outline_error_mm,
    outline_offsets,
    placement_unconfirmed,
)
from pegwatch.vision.localise.warp import RadialWarp, fit_radial_warp, remap_maps
from pegwatch.vision.profile import load_profile
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import TRUST_FULL, TRUST_LOW


@pytest.fixture(scope="module")
def invicta():
    return load_profile("invicta-12x4")


def test_a_radial_warp_goes_there_and_back():
    warp = RadialWarp.for_frame((1280, 720), -0.15)
    pts = np.array([[0.0, 0.0], [640.0, 360.0], [1279.0, 719.0], [100.0, 600.0]])
    assert np.allclose(warp.to_ideal(warp.to_image(pts)), pts, atol=1e-4)
    # Barrel distortion: the ideal pinhole sees the frame's corners further out.
    assert np.linalg.norm(warp.to_ideal(pts[:1]) - warp.centre) > np.linalg.norm(pts[0] - warp.centre)


def test_the_bend_is_found_from_sixteen_corners_and_a_straight_lens_keeps_the_homography():
    size = (1280, 720)
    board = np.array([[x, y] for x in (0.0, 20.0, 300.0, 320.0) for y in (0.0, 20.0, 130.0, 150.0)])
    h_true = np.array([[3.5, 0.1, 90.0], [-0.05, 3.4, 110.0], [1e-4, 2e-4, 1.0]])
    ideal = apply_homography(h_true, board)
    bent = RadialWarp.for_frame(size, -0.12).to_image(ideal)
    fitted = fit_radial_warp(bent, board, size)
    assert fitted is not None
    warp, h = fitted
    assert warp.k == pytest.approx(-0.12, abs=0.01)
    back = apply_homography(h, warp.to_ideal(bent))
    assert np.abs(back - board).max() < 0.05  # mm
    assert fit_radial_warp(ideal, board, size) is None  # nothing to take out
    assert fit_radial_warp(bent[:12], board[:12], size) is None  # three markers cannot tell


def test_remap_maps_follow_the_warp():
    warp = RadialWarp.for_frame((1280, 720), -0.12)
    grid_to_ideal = np.array([[0.5, 0.02, 100.0], [0.01, 0.5, 80.0], [1e-5, 2e-5, 1.0]])
    mx, my = remap_maps(warp, grid_to_ideal, (500, 200))
    yy, xx = np.mgrid[0:200, 0:500].astype(np.float64)
    exact = warp.to_image(apply_homography(grid_to_ideal, np.column_stack([xx.ravel(), yy.ravel()])))
    assert np.abs(mx.ravel() - exact[:, 0]).max() < 0.01
    assert np.abs(my.ravel() - exact[:, 1]).max() < 0.01


def test_a_barrel_lens_is_taken_out_from_the_markers_alone(invicta):
    c = random_contents(invicta, np.random.default_rng(5), rows_played=6)
    out = render(invicta, c, Conditions.easy().with_(k1=-0.18, tilt_x_deg=8.0), seed=5)
    bent = MarkerLocaliser(invicta, refine=False).locate(out.image)
    assert bent.ok and bent.warp is not None
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("pegwatch.vision.localise.plumb.fit_radial_warp", lambda *a, **k: None)
        mp.setattr("pegwatch.vision.localise.marker_localiser.bend_to_markers_and_edges", lambda *a, **k: None)
        plain = MarkerLocaliser(invicta, refine=False).locate(out.image)
    assert plain.warp is None
    err_bent, err_plain = hole_errors_mm(invicta, bent, out), hole_errors_mm(invicta, plain, out)
    assert err_bent.max() < 0.6 < err_plain.max()
    # to_image and to_board go through the warp both ways.
    holes = np.array(invicta.all_hole_centres_mm())
    assert np.allclose(bent.to_board(bent.to_image(holes)), holes, atol=1e-3)
    # The top-down picture is taken through it too: the board fills it edge to edge.
    top = rectify(out.image, bent)
    assert top.shape[:2] == (round(invicta.size_mm[1] * 4), round(invicta.size_mm[0] * 4))


def test_the_outline_check_says_how_far_a_fit_is_off(invicta):
    out = render(invicta, random_contents(invicta, np.random.default_rng(6), rows_played=5), Conditions.easy(), seed=6)
    loc = MarkerLocaliser(invicta).locate(out.image)
    assert loc.outline_mm is not None and loc.outline_mm < OUTLINE_TOLERANCE_MM
    gray = out.image.mean(axis=2).astype(np.float32)
    b2i = np.linalg.inv(loc.image_to_board)
    moved = np.array([[1.0, 0.0, -4.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # the fit 4 mm off along x
    off = outline_offsets(gray, lambda pts: apply_homography(b2i, pts @ moved[:2, :2].T + moved[:2, 2]), invicta.size_mm)
    assert off[1] == pytest.approx(4.0, abs=1.5) and off[3] == pytest.approx(-4.0, abs=1.5)
    assert abs(off[0] or 0.0) < 1.0  # along the top edge nothing moved
    err = outline_error_mm(off)
    assert err is not None and err > OUTLINE_TOLERANCE_MM
    # An edge that does not show (a board the colour of its tray) answers nothing.
    flat = np.full_like(gray, 120.0)
    assert outline_offsets(flat, lambda pts: apply_homography(b2i, pts), invicta.size_mm) == (None,) * 4
    assert outline_error_mm((None,) * 4) is None


def test_a_fit_whose_outline_is_off_is_read_but_low_trust(invicta_table, invicta_cal):
    reader = BoardReader(invicta_table.profile, invicta_cal)
    frame = invicta_table.calibration[0].image
    good = reader.read(frame)
    assert good.trust == TRUST_FULL, good.trust_reasons
    real = reader.localiser.locate

    class OffBy3mm:
        method = "markers"

        def locate(self, image, *, at_ns=None):
            return replace(real(image, at_ns=at_ns), outline_mm=3.0)

    reader._localiser = OffBy3mm()
    low = reader.read(frame)
    assert low.trust == TRUST_LOW
    assert any("edge lies 3.0 mm" in r for r in low.trust_reasons)
    assert [r.holes for r in low.rows] == [r.holes for r in good.rows]  # read all the same


def test_a_doubted_fit_no_row_of_the_pattern_confirms_reads_no_hole_surely(invicta_table, invicta_cal):
    # A small blurred board whose pattern gives no answer, its outline off:
    # the fit may be rows off, and each hole would read its neighbour's peg.
    reader = BoardReader(invicta_table.profile, invicta_cal)
    frame = invicta_table.calibration[0].image
    good = reader.read(frame)
    real = reader.localiser.locate

    class OffAndUnanswered:
        method = "markers"

        def locate(self, image, *, at_ns=None):
            return replace(real(image, at_ns=at_ns), outline_mm=3.0, row_shift_mm=None)

    reader._localiser = OffAndUnanswered()
    low = reader.read(frame)
    assert low.trust == TRUST_LOW
    pairs = [(g, h) for gr, lr in zip(good.rows, low.rows, strict=True) for g, h in zip(gr.holes, lr.holes, strict=True)]
    assert all(not h.is_certain for _, h in pairs)
    assert all(g.colour in {c for c, _ in h.candidates} for g, h in pairs if g.is_certain)  # still among the candidates
    assert all(not r.keys.is_certain for r in low.rows)
    assert good.secret is not None and low.secret is not None
    assert all(not h.is_certain for h in low.secret)


def test_a_doubted_fit_is_unconfirmed_unless_two_rows_answered_near_it(invicta_table, invicta_cal):
    p = invicta_table.profile
    loc = BoardReader(p, invicta_cal).localiser.locate(invicta_table.calibration[0].image)
    nan = (float("nan"), float("nan"))
    silent = tuple(nan for _ in range(p.rows))
    assert not placement_unconfirmed(loc, p) and not placement_unconfirmed(None, p)
    assert not placement_unconfirmed(replace(loc, row_shift_mm=silent), p)  # in place: nothing doubts it
    assert placement_unconfirmed(replace(loc, row_shift_mm=silent, outline_mm=3.0), p)
    assert placement_unconfirmed(replace(loc, row_shift_mm=None, unpinned_edge="right"), p)
    assert not placement_unconfirmed(replace(loc, outline_mm=3.0), p)  # its rows answered
    # Rows that answered only far from the fit (under a hand, or the fit off there) confirm nothing.
    far = (*silent[:7], (0.0, -4.0), nan, (0.5, 2.1), *silent[10:])
    assert placement_unconfirmed(replace(loc, row_shift_mm=far, unpinned_edge="top"), p)
    # One row near it is what a repeating pattern gives by chance; two confirm it.
    one_near = (*far[:3], (0.3, -0.9), *far[4:])
    assert placement_unconfirmed(replace(loc, row_shift_mm=one_near, unpinned_edge="top"), p)
    two_near = (*one_near[:5], (1.0, 1.2), *one_near[6:])
    assert not placement_unconfirmed(replace(loc, row_shift_mm=two_near, unpinned_edge="top"), p)


def _slipped_by(dx_mm: float):
    """A stand-in for the hole pattern's re-fit that slips the board ``dx_mm`` along its rows."""
    from pegwatch.vision.localise import grid

    real = grid.refine_to_grid

    def slip(profile, frame, h, **kw):
        _h, fit = real(profile, frame, h, **kw)
        shift = np.array([[1.0, 0.0, dx_mm], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
        return shift @ h, fit

    return slip


def test_a_pattern_re_fit_that_slipped_off_the_edges_is_re_placed_by_them_and_trusted(invicta, monkeypatch):
    # The hole pattern is periodic and the pegs' heads lean: its re-fit can
    # slip while the markers and the board's own edges agree where it is.
    out = render(invicta, random_contents(invicta, np.random.default_rng(7), rows_played=6), Conditions.easy(), seed=7)
    monkeypatch.setattr("pegwatch.vision.localise.marker_localiser.refine_to_grid", _slipped_by(5.0))
    loc = MarkerLocaliser(invicta).locate(out.image)
    assert loc.ok and loc.outline_mm is not None and loc.outline_mm <= OUTLINE_TOLERANCE_MM
    assert hole_errors_mm(invicta, loc, out).max() < 1.0


def test_a_re_fit_to_edges_that_cannot_all_be_seen_stays_low_trust(invicta, monkeypatch):
    from pegwatch.vision.localise import outline

    out = render(invicta, random_contents(invicta, np.random.default_rng(7), rows_played=6), Conditions.easy(), seed=7)
    monkeypatch.setattr("pegwatch.vision.localise.marker_localiser.refine_to_grid", _slipped_by(5.0))
    real, real_refit = outline.fit_edges, outline.refit_to_edges
    calls: list[int] = []

    def right_edge_hidden(gray, h, warp_to_image, size_mm):
        # The re-fits to the edges (and a bend's search) lose the right edge (a hand over it).
        got = real(gray, h, warp_to_image, size_mm)
        return (got[0], None, got[2], got[3])

    def counted(*args, **kw):
        calls.append(1)
        return real_refit(*args, **kw)

    monkeypatch.setattr(outline, "fit_edges", right_edge_hidden)
    monkeypatch.setattr(outline, "refit_to_edges", counted)
    loc = MarkerLocaliser(invicta).locate(out.image)
    assert len(calls) == 2  # from the pattern's re-fit, then from the markers' fit
    assert loc.ok and loc.outline_mm is not None and loc.outline_mm > OUTLINE_TOLERANCE_MM


def _turned_by(radians: float, centre_mm: tuple[float, float]):
    """A stand-in for the hole pattern's re-fit that turns the board about its centre: its
    ends move further than a peg's lean while every edge stays, on the median, in place."""
    from pegwatch.vision.localise import grid

    real = grid.refine_to_grid
    cx, cy = centre_mm
    c, s = np.cos(radians), np.sin(radians)
    turn = np.array([[c, -s, cx - c * cx + s * cy], [s, c, cy - s * cx - c * cy], [0.0, 0.0, 1.0]])

    def slip(profile, frame, h, **kw):
        _h, fit = real(profile, frame, h, **kw)
        return turn @ h, fit

    return slip


def test_with_the_bend_taken_out_four_markers_outweigh_a_slipping_pattern(invicta, monkeypatch):
    c = random_contents(invicta, np.random.default_rng(8), rows_played=6)
    out = render(invicta, c, Conditions.easy().with_(k1=-0.12, tilt_x_deg=6.0), seed=8)
    w, h = invicta.size_mm
    monkeypatch.setattr("pegwatch.vision.localise.marker_localiser.refine_to_grid", _turned_by(0.025, (w / 2, h / 2)))
    loc = MarkerLocaliser(invicta).locate(out.image)
    assert loc.ok and loc.warp is not None and len(loc.markers_seen) == 4
    assert loc.outline_mm is not None and loc.outline_mm <= OUTLINE_TOLERANCE_MM
    assert hole_errors_mm(invicta, loc, out).max() < 1.0  # the markers' fit, not the slip


def test_an_end_of_the_board_only_extrapolation_places_is_named():
    from pegwatch.vision.localise.outline import unpinned_edge

    size = (260.0, 85.0)
    left = np.array([[-10.0, -10.0], [-10.0, 95.0]])  # two markers, both at the left end
    assert unpinned_edge((0.1, None, 0.2, 0.3), left, size) == "right"
    assert unpinned_edge((0.1, 3.5, 0.2, 0.3), left, size) == "right"  # an edge that is not where the fit puts it
    assert unpinned_edge((0.1, 0.4, 0.2, 0.3), left, size) is None
    diagonal = np.array([[-10.0, -10.0], [270.0, 95.0]])
    assert unpinned_edge((None, None, None, None), diagonal, size) is None
    top = np.array([[-10.0, -10.0], [270.0, -10.0]])  # both along the top: the bottom is extrapolated
    assert unpinned_edge((0.1, 0.1, None, 0.1), top, size) == "bottom"


def _grid_fit(p, shifts: list[tuple[float, float]]):
    """A hole pattern's answer, row by row: NaN for a row that gave none."""
    from pegwatch.vision.localise.grid import GridFit

    arr = np.array(shifts, dtype=np.float64)
    contrast = np.where(np.isfinite(arr).all(axis=1), 10.0, 0.0)
    return GridFit(arr, contrast, np.zeros((p.rows, 2)), 10.0)


def test_a_hole_pattern_in_place_in_every_row_holds_the_board():
    from pegwatch.vision.localise.grid import GridFit

    p = load_profile("invicta-12x4")  # its shortest repeat: key holes 7 mm apart

    def fit(shifts: list[tuple[float, float]]) -> GridFit:
        return _grid_fit(p, shifts)

    nan = (float("nan"), float("nan"))
    near = [(0.3, -0.2)] * p.rows
    assert fit(near).holds_whole_board(p)
    off = [*near[:11], (1.5, 1.0)]
    assert not fit(off).holds_whole_board(p)  # 1.8 mm: more than a quarter of 7 mm
    # A row under a hand, its neighbours in place: a slip would show beside it.
    assert fit([*near[:5], nan, *near[6:]]).holds_whole_board(p)
    assert fit([*near[:5], nan, *near[6:9], nan, *near[10:]]).holds_whole_board(p)
    assert not fit([*near[:5], nan, nan, *near[7:]]).holds_whole_board(p)  # two side by side: too much unseen
    # A silent end row is held where the two rows before it put it.
    assert fit([*near[:11], nan]).holds_whole_board(p) and fit([nan, *near[1:]]).holds_whole_board(p)
    steep = [*near[:9], (0.3, -0.2), (1.5, -0.2), nan]  # the line through rows 10 and 11 puts row 12 2.7 mm off
    assert not fit(steep).holds_whole_board(p)
    # A fit that slipped by a repeat (7 mm) at the far end: the rows between lie a fraction of it off,
    # folded onto the nearest hole; a silent row among them hides nothing.
    slipped = [(((7.0 * k / (p.rows - 1)) + 3.5) % 7.0 - 3.5, 0.0) for k in range(p.rows)]
    assert not fit([*slipped[:6], nan, *slipped[7:]]).holds_whole_board(p)


def test_a_hole_pattern_with_rows_under_a_hand_confirms_a_fit_only_on_a_line_through_its_ends():
    from pegwatch.vision.localise.grid import GridFit

    p = load_profile("invicta-12x4")
    nan = (float("nan"), float("nan"))

    def fit(shifts: list[tuple[float, float]]) -> GridFit:
        return _grid_fit(p, shifts)

    near = [(0.3, -0.2)] * p.rows
    hand = [*near[:4], *[nan] * 5, *near[9:]]  # rows 5-9 under a hand give no answer
    assert fit(hand).confirms_fit(p) and not fit(hand).holds_whole_board(p)
    assert not fit([*near[:7], *[nan] * 5]).confirms_fit(p)  # the last rows' place is the line's extrapolation
    assert not fit([*near[:3], *[nan] * 7, *near[10:]]).confirms_fit(p)  # fewer than half answered
    odd = [*near[:3], (2.5, 0.4), (-1.9, 1.2), (2.2, 0.0), *near[6:]]  # rows a hand hides answer off
    assert fit(odd).confirms_fit(p)
    # An end pulled onto something else's edge: rows slide further the nearer
    # that end, 7 mm (a repeat) at the last row; the rows between are hidden.
    pulled = [(7.0 * k / (p.rows - 1), 0.0) for k in range(p.rows)]
    assert not fit([*pulled[:4], *[nan] * 4, *pulled[8:]]).confirms_fit(p)
    assert not fit([(7.0, 0.0)] * p.rows).confirms_fit(p)  # a whole repeat off


def _markers_part_from_the_edges(monkeypatch):
    """The fit to the board's edges comes back untrusted, as when an unknown
    lens bends the markers (on the tray beyond the board) off it; the
    pattern's re-fit slips, so the markers' fit is off the edges too."""
    from pegwatch.vision.localise import marker_localiser

    real = marker_localiser.place_by_edges

    def untrusted(*args, **kwargs):
        got = real(*args, **kwargs)
        return None if got is None else (got[0], got[1], False)

    monkeypatch.setattr(marker_localiser, "place_by_edges", untrusted)
    monkeypatch.setattr(marker_localiser, "refine_to_grid", _slipped_by(5.0))


def test_edges_and_the_pattern_hold_a_fit_the_markers_part_from(invicta, monkeypatch):
    out = render(invicta, random_contents(invicta, np.random.default_rng(7), rows_played=6), Conditions.easy(), seed=7)
    _markers_part_from_the_edges(monkeypatch)
    loc = MarkerLocaliser(invicta).locate(out.image)
    assert loc.ok and loc.outline_mm is not None and loc.outline_mm <= OUTLINE_TOLERANCE_MM
    # Placed on the edges, with a bend fitted to them and the markers: within the bound the pattern confirmed.
    assert hole_errors_mm(invicta, loc, out).max() < shortest_repeat_mm(invicta) / 4


def test_the_rows_a_fit_reports_answered_where_that_fit_puts_them(invicta, monkeypatch):
    # The pattern's re-fit slips 5 mm and the board's edges re-place it: the
    # rows' answers it reports (which say whether anything confirms the fit)
    # are measured on the fit it returns, not on the slipped one.
    from pegwatch.vision.localise import grid

    out = render(invicta, random_contents(invicta, np.random.default_rng(7), rows_played=6), Conditions.easy(), seed=7)
    _markers_part_from_the_edges(monkeypatch)
    shift = np.array([[1.0, 0.0, 5.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])

    def slipped(profile, frame, h, **kw):
        return shift @ h, grid.measure_grid(profile, frame, shift @ h, warp=kw.get("warp"))

    monkeypatch.setattr("pegwatch.vision.localise.marker_localiser.refine_to_grid", slipped)
    loc = MarkerLocaliser(invicta).locate(out.image)
    assert loc.ok and loc.row_shift_mm is not None and loc.image_to_board is not None
    again = grid.row_tuple(grid.measure_grid(invicta, out.image, loc.image_to_board, warp=loc.warp))
    np.testing.assert_allclose(np.array(loc.row_shift_mm), np.array(again), rtol=0, atol=1e-3)  # float32 sums
    assert hole_errors_mm(invicta, loc, out).max() < shortest_repeat_mm(invicta) / 4
    assert not placement_unconfirmed(loc, invicta)


@pytest.mark.parametrize(
    ("hand", "right_edge", "held"),
    [
        (slice(4, 8), True, True),  # four edges, and the pattern answers at both ends
        (slice(8, 12), True, False),  # the last rows' place would be the pattern's extrapolation
        (slice(4, 8), False, False),  # an end hidden: the pattern must answer in every row
    ],
)
def test_where_the_markers_part_from_the_edges_the_edges_and_the_pattern_must_both_hold_the_fit(
    invicta, monkeypatch, hand, right_edge, held
):
    out = render(invicta, random_contents(invicta, np.random.default_rng(7), rows_played=6), Conditions.easy(), seed=7)
    _markers_part_from_the_edges(monkeypatch)
    silence_pattern_rows(monkeypatch, hand)
    if not right_edge:
        _right_edge_hidden(monkeypatch)
    loc = MarkerLocaliser(invicta).locate(out.image)
    assert loc.ok and loc.outline_mm is not None
    assert (loc.outline_mm <= OUTLINE_TOLERANCE_MM) is held


def _right_edge_hidden(monkeypatch):
    from pegwatch.vision.localise import marker_localiser

    real = marker_localiser.fit_edges

    def no_right_edge(*args, **kwargs):
        top, _, bottom, left = real(*args, **kwargs)
        return (top, None, bottom, left)

    monkeypatch.setattr(marker_localiser, "fit_edges", no_right_edge)


def test_two_markers_at_one_end_hold_the_far_end_when_every_row_answers_in_place(invicta, monkeypatch):
    c = random_contents(invicta, np.random.default_rng(3), rows_played=5)
    out = render(invicta, c, Conditions.easy().with_(tilt_x_deg=6.0), seed=3)
    image = out.image
    for m in invicta.markers:
        if m.centre_mm[0] > invicta.size_mm[0] / 2:
            image = hide_marker(image, out, m)
    _right_edge_hidden(monkeypatch)
    held = MarkerLocaliser(invicta).locate(image)
    assert held.ok and len(held.markers_seen) == 2
    assert held.unpinned_edge is None
    assert hole_errors_mm(invicta, held, out).max() < 1.0
    # Without the pattern's answer the far end is the markers' extrapolation alone.
    alone = MarkerLocaliser(invicta, refine=False).locate(image)
    assert alone.ok and alone.unpinned_edge == "right"


def test_a_reading_whose_far_end_is_extrapolated_is_low_trust(invicta_table, invicta_cal):
    reader = BoardReader(invicta_table.profile, invicta_cal)
    frame = invicta_table.calibration[0].image
    real = reader.localiser.locate

    class TwoMarkersOnTheLeft:
        method = "markers"

        def locate(self, image, *, at_ns=None):
            return replace(real(image, at_ns=at_ns), unpinned_edge="right")

    reader._localiser = TwoMarkersOnTheLeft()
    low = reader.read(frame)
    assert low.trust == TRUST_LOW
    assert any("right end is placed by extrapolation" in r for r in low.trust_reasons)


def test_with_three_markers_the_board_s_straight_edges_show_the_bend(invicta):
    c = random_contents(invicta, np.random.default_rng(5), rows_played=6)
    out = render(invicta, c, Conditions.easy().with_(k1=-0.18, tilt_x_deg=8.0), seed=5)
    image = hide_marker(out.image, out, invicta.markers[0])
    bent = MarkerLocaliser(invicta, refine=False).locate(image)
    assert bent.ok and len(bent.markers_seen) == 3
    assert isinstance(bent.warp, RadialWarp) and bent.warp.k < -0.05
    assert bent.bend_from_edges
    assert not MarkerLocaliser(invicta, refine=False).locate(out.image).bend_from_edges  # four markers: sure
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("pegwatch.vision.localise.plumb.fit_bend_to_edges", lambda *a, **k: None)
        mp.setattr("pegwatch.vision.localise.marker_localiser.bend_to_markers_and_edges", lambda *a, **k: None)
        plain = MarkerLocaliser(invicta, refine=False).locate(image)
    assert plain.warp is None
    err_bent, err_plain = hole_errors_mm(invicta, bent, out), hole_errors_mm(invicta, plain, out)
    assert err_bent.max() < 0.7 * err_plain.max()
    assert err_bent.max() < 1.0


def test_a_straight_lens_with_three_markers_fits_no_bend(invicta):
    c = random_contents(invicta, np.random.default_rng(7), rows_played=6)
    out = render(invicta, c, Conditions.easy().with_(tilt_x_deg=8.0), seed=7)
    loc = MarkerLocaliser(invicta, refine=False).locate(hide_marker(out.image, out, invicta.markers[2]))
    assert loc.ok and len(loc.markers_seen) == 3
    assert loc.warp is None
    assert hole_errors_mm(invicta, loc, out).max() < 0.5


def _bent_from_edges(table):
    """A board with six rows played, rendered through a strong barrel lens with one marker
    hidden: its fit's bend is read from the board's edges (the render, and the frame)."""
    p = table.profile
    c = random_contents(p, np.random.default_rng(9), rows_played=6, shield_open=True, last_row_marked=True)
    out = render(p, c, Conditions.easy().with_(k1=-0.18, tilt_x_deg=8.0, peg_set=table.peg_set), seed=9)
    return out, hide_marker(out.image, out, p.markers[0])


def test_on_a_fit_bent_from_the_edges_a_bare_key_hole_counts_only_where_no_key_peg_shows_round_it(
    invicta_table, invicta_cal, monkeypatch
):
    """Such a fit may sit a key peg's radius off near the hidden marker's end: a key hole
    read bare in a row in play is evidence only where every look round its head's place,
    a key peg's radius out, reads bare too. Elsewhere key pegs seen count, and key holes
    read bare are only room for more."""
    from pegwatch.vision.head_looks import HeadPlaces

    p = invicta_table.profile
    out, frame = _bent_from_edges(invicta_table)
    reader = BoardReader(p, invicta_cal)
    reading = reader.read(frame, at_ns=1)
    loc = reader.last_localisation
    assert loc is not None and loc.bend_from_edges
    truth = {i + 1: (keys.count(p.right_place_key), keys.count(p.right_colour_key)) for i, keys in enumerate(out.key_positions)}
    bare = [r for r in reading.rows if r.row <= 6 and r.status != "occluded" and r.keys.empty > 0]
    assert bare, "some played row has a key hole read bare"
    counted = [r for r in bare if r.keys.is_certain]
    assert counted, "some played row's bare key holes all look bare round their heads' places"
    for r in counted:
        assert (r.keys.black, r.keys.white) == truth[r.row]
    for r in reading.rows[6:]:
        assert r.status == "empty"  # rows not in play keep their bare holes

    # A key peg standing a key peg's radius off one counted row's bare hole's head's place
    # (as the fit places it), across the row: it shows in a look round that place.
    row = counted[0]
    k = p.key_holes
    f = reader.sampler.features_from_frame(frame, loc.image_to_board, invicta_cal.plastic_linear, covers=False, warp=loc.warp)
    kc = reader.key_model.classify(f.keys)
    names = np.asarray(reader.key_model.names)[kc.best]
    hole = next(i for i in range((row.row - 1) * k, row.row * k) if names[i] == "empty")
    white = next(i for i in range(len(names)) if kc.accepted[i] and names[i] == p.right_colour_key)
    centres = reader.sampler.key_centres_mm
    shift = HeadPlaces(p, reader.sampler).shift(loc, keys=True)
    assert shift is not None
    colour = frame[tuple(np.round(loc.to_image(centres[white : white + 1])[0, ::-1]).astype(int))]
    across = np.array([0.0, -1.0 if centres[hole][1] < centres[hole ^ 2][1] else 1.0])  # away from the key hole beside it
    radius = p.key_hole_diameter_mm / 2
    stray = centres[hole] + shift[hole] + radius * across
    at, rim = loc.to_image(np.array([stray, stray + np.array([radius, 0.0])]))
    painted = frame.copy()
    cv2.circle(painted, tuple(int(v) for v in np.round(at)), round(float(np.hypot(*(rim - at)))), tuple(int(v) for v in colour), -1)
    again = BoardReader(p, invicta_cal).read(painted, at_ns=2).row(row.row)
    assert again.keys.empty == row.keys.empty  # the hole itself still reads bare
    assert not again.keys.is_certain
    assert again.keys.white_bounds is not None and again.keys.white_bounds[1] > row.keys.white

    # With no look round a hole reading bare, no bare key hole in play counts.
    monkeypatch.setattr(HeadPlaces, "keys_clear_around", lambda self, *a: np.zeros(len(centres), dtype=bool))
    doubted = BoardReader(p, invicta_cal).read(frame, at_ns=3)
    for r in bare:
        keys = doubted.row(r.row).keys
        assert not keys.is_certain and keys.black_bounds is not None and keys.white_bounds is not None
        assert keys.black_bounds[1] + keys.white_bounds[1] >= keys.black + keys.white + keys.empty


def test_on_a_fit_bent_from_the_edges_no_key_peg_is_held_from_its_head_s_place(invicta_table, invicta_cal, monkeypatch):
    """Its blocks may lie a head's radius off, over a neighbour's peg: every head's place
    showing a peg surely, and every block standing, still hold nothing."""
    import pegwatch.vision.reader as reader_module

    p = invicta_table.profile
    c = random_contents(p, np.random.default_rng(9), rows_played=6, shield_open=True, last_row_marked=True)
    out = render(p, c, Conditions.easy().with_(k1=-0.18, tilt_x_deg=8.0, peg_set=invicta_table.peg_set), seed=9)
    reader = BoardReader(p, invicta_cal, keep_still=False)  # the same frame read again, in full
    frame = hide_marker(out.image, out, p.markers[0])
    n = len(reader.sampler.key_centres_mm)
    white = reader.key_model.names.index(p.right_colour_key)
    real = reader._head_classes

    def heads(image, loc, light, *, keys, only=None):
        return (np.full(n, white), np.ones(n, dtype=bool)) if keys else real(image, loc, light, keys=keys, only=only)

    plain = reader.read(frame, at_ns=1)
    assert reader.last_localisation is not None and reader.last_localisation.bend_from_edges
    bare = [r.row for r in plain.rows if r.row <= 6 and r.status != "occluded" and r.keys.empty > 0]
    assert bare, "some played row has a key hole read bare"
    reader._head_classes = heads
    monkeypatch.setattr(reader_module, "key_holes_seen", lambda *a, **k: (np.zeros(n, dtype=bool), np.ones(n, dtype=bool)))
    reading = reader.read(frame, at_ns=2)
    assert not any(reading.row(r).keys.is_certain for r in bare)


def test_an_edge_whose_steps_scatter_across_the_reach_does_not_answer(invicta):
    """An edge lies along a line: steps scattered either side of the fit (a
    sleeve's folds, a hand's shadow) are not the board's edge."""
    w, h = invicta.size_mm
    s = 3.0  # px per mm, the board at (40, 40) px
    gray = np.full((int((h + 40) * s), int((w + 40) * s)), 200, dtype=np.uint8)
    x0, y0 = 20 * s, 20 * s
    cv2.rectangle(gray, (int(x0), int(y0)), (int(x0 + w * s), int(y0 + h * s)), 60, -1)
    rng = np.random.default_rng(3)
    for y in np.arange(0.0, h, 3.0):  # the left edge torn into strips 2 or 5 mm in or out
        dx = float(rng.choice([-5.0, -2.0, 2.0, 5.0]))
        left = int(x0 + min(0.0, dx) * s)
        right = int(x0 + max(0.0, dx) * s)
        cv2.rectangle(gray, (left, int(y0 + y * s)), (right, int(y0 + (y + 3.0) * s)), 200 if dx > 0 else 60, -1)
    to_px = np.array([[s, 0.0, x0], [0.0, s, y0], [0.0, 0.0, 1.0]])
    off = outline_offsets(gray, lambda pts: apply_homography(to_px, pts), invicta.size_mm)
    assert off[3] is None  # left
    assert all(o is not None and abs(o) < 0.5 for o in off[:3])


def test_a_re_fit_that_slips_a_row_off_the_markers_end_is_not_taken(invicta, monkeypatch):
    """With two markers at one end, a pattern re-fit a row off takes that end's
    edge out of reach: the markers' fit, which placed it, is kept."""
    out = render(invicta, random_contents(invicta, np.random.default_rng(7), rows_played=6), Conditions.easy(), seed=7)
    image = hide_marker(hide_marker(out.image, out, invicta.markers[1]), out, invicta.markers[2])
    monkeypatch.setattr(
        "pegwatch.vision.localise.marker_localiser.refine_to_grid", _slipped_by(-invicta.row_step_mm[0])
    )
    loc = MarkerLocaliser(invicta).locate(image)
    assert loc.ok and loc.markers_seen == (0, 3)
    assert hole_errors_mm(invicta, loc, out).max() < 2.0
    monkeypatch.setattr("pegwatch.vision.localise.marker_localiser.end_lost", lambda *a: False)
    slipped = MarkerLocaliser(invicta).locate(image)
    assert hole_errors_mm(invicta, slipped, out).max() > 10.0  # what the check stops


def test_an_end_is_lost_only_when_it_stops_answering():
    from pegwatch.vision.localise.outline import end_lost

    along_x = (16.0, 0.0)
    assert end_lost((0.1, 0.3, 0.2, -1.6), (0.9, None, -0.8, None), along_x)  # the left end went out of reach
    assert not end_lost((0.1, 0.3, 0.2, -0.9), (0.9, 0.4, -0.8, -2.1), along_x)  # moved, not slipped
    assert not end_lost((0.1, 0.3, 0.2, 3.5), (0.9, 0.4, -0.8, None), along_x)  # it was never placed
    assert not end_lost((-0.9, None, 0.2, 0.3), (None, None, 0.2, 0.3), along_x)  # a long edge: no row step across it
    assert end_lost((-0.9, None, 0.2, 0.3), (None, None, 0.2, 0.3), (0.0, 16.0))


def test_markers_a_strong_barrel_lens_bends_off_one_plane_agree_once_it_is_out(invicta):
    """Close to the board, a strong barrel lens bends the corners of the
    markers near the frame's corners by more than the markers' RMS allows."""
    from pegwatch.vision.localise.marker_plane import markers_homography
    from pegwatch.vision.markers import detect_markers, profile_marker_points

    c = Conditions.easy()
    out = render(invicta, random_contents(invicta, np.random.default_rng(5), rows_played=6),
                 c.with_(k1=-0.25, tilt_x_deg=8.0, distance_mm=0.7 * c.distance_mm), seed=5)
    img_pts, board_pts, used = profile_marker_points(invicta, detect_markers(out.image, invicta.aruco_dictionary))
    assert len(used) == 4
    assert markers_homography(img_pts, board_pts, used) is None  # off one plane as they are
    size = (out.image.shape[1], out.image.shape[0])
    assert markers_homography(img_pts, board_pts, used, frame_size=size) is not None
    loc = MarkerLocaliser(invicta).locate(out.image)
    assert loc.ok and loc.warp is not None
    assert hole_errors_mm(invicta, loc, out).max() < 1.0


def test_a_known_bend_is_sure_only_while_every_marker_corner_agrees(invicta):
    """A sleeve over a marker's edge moves the corner the detector finds
    (10 px on seed 2, table 503, case 39): the markers' fit must not then
    be held against the hole pattern as if it were sure."""
    from pegwatch.vision.lens import Lens
    from pegwatch.vision.localise.plumb import corners_agree, frame_bend
    from pegwatch.vision.localise.warp import LensWarp

    lens = Lens(np.array([[1000.0, 0, 640.0], [0, 1000.0, 360.0], [0, 0, 1]]), np.array([-0.15, 0.03, 0.0, 0.0, 0.0]),
                (1280, 720), 0.3, 12)
    board = np.array([c for m in invicta.markers for c in m.corners_mm()], dtype=np.float64)
    board_to_ideal = np.array([[3.4, 0.08, 190.0], [-0.05, 3.3, 210.0], [2e-5, 1e-4, 1.0]])
    img = lens.distort_points(apply_homography(board_to_ideal, board))
    gray = np.zeros((720, 1280), dtype=np.uint8)
    warp, fit, sure = frame_bend(lens, gray, img, board, np.eye(3), invicta.size_mm)
    assert isinstance(warp, LensWarp) and sure
    assert corners_agree(fit, warp.to_ideal(img), board)
    hidden = img.copy()
    hidden[5] += (10.0, 0.0)  # one corner of the second marker, found along a sleeve's edge
    warp, fit, sure = frame_bend(lens, gray, hidden, board, np.eye(3), invicta.size_mm)
    assert isinstance(warp, LensWarp) and not sure
