"""A dark sleeve over the board reads as bare rows; where it crosses the tray beside them, they are covered."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from pegwatch.simulation.render import Conditions, random_contents, render
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import ROW_EMPTY, ROW_OCCLUDED, empty_row
from pegwatch.vision.row_order import covered_beside_dark
from pegwatch.vision.tray import TrayPoints


@pytest.fixture(scope="module")
def board(invicta_table):
    p = invicta_table.profile
    c = random_contents(p, np.random.default_rng(21), rows_played=4, shield_open=True, last_row_marked=True)
    return p, render(p, c, Conditions.easy().with_(peg_set=invicta_table.peg_set), seed=21)


def _band(p, out, x0: float, x1: float) -> np.ndarray:
    """A band across the board and the tray on both sides, from x0 to x1 (board mm), in board mm corners."""
    h = p.size_mm[1]
    return out.project(np.array([[x0, -25.0], [x1, -25.0], [x1, h + 25.0], [x0, h + 25.0]]))


def _rows_x(p, rows):
    xs = [np.mean(p.hole_centres_mm(r), axis=0)[0] for r in rows]
    return min(xs) - 6.0, max(xs) + 6.0


def _tray_beside(p, out, rows) -> np.ndarray:
    """A mask (1 inside) of the tray on both sides of ``rows``, the board itself left out."""
    mask = np.zeros(out.image.shape[:2], dtype=np.uint8)
    x0, x1 = _rows_x(p, rows)
    cv2.fillConvexPoly(mask, np.round(_band(p, out, x0, x1)).astype(np.int32), 1)
    w, h = p.size_mm
    board = out.project(np.array([[0.0, 0.0], [w, 0.0], [w, h], [0.0, h]]))
    cv2.fillConvexPoly(mask, np.round(board).astype(np.int32), 0)  # on the tray only: the board's own test is elsewhere
    return mask


def test_a_dark_sleeve_across_bare_rows_and_the_tray_covers_them(board, invicta_cal):
    p, out = board
    plain = BoardReader(p, invicta_cal).read(out.image, at_ns=1)
    assert [plain.row(r).status for r in (6, 7, 8)] == [ROW_EMPTY] * 3
    image = out.image.copy()
    x0, x1 = _rows_x(p, (6, 7, 8))
    x, y = np.round(out.project(np.array([[150.0, 75.0]]))[0]).astype(int)  # bare plastic below the key holes
    board_rgb = tuple(int(v) for v in out.image[y, x])
    cv2.fillConvexPoly(image, np.round(_band(p, out, x0, x1)).astype(np.int32), board_rgb)
    sleeved = BoardReader(p, invicta_cal).read(image, at_ns=1)
    for r in (6, 7, 8):
        assert sleeved.row(r).status == ROW_OCCLUDED, f"row {r}"
    for r in (1, 2, 3, 4, 11, 12):  # played rows keep their readings; bare rows away from it stay bare
        assert sleeved.row(r).status == plain.row(r).status, f"row {r}"


def test_a_shadow_on_the_tray_covers_nothing(board, invicta_cal):
    """A shadow scales the tray's channels alike, and not below half."""
    p, out = board
    mask = _tray_beside(p, out, (6, 7, 8))
    shaded = out.image.astype(np.float64)
    shaded[mask == 1] *= 0.6  # a shadow scales every channel alike
    reading = BoardReader(p, invicta_cal).read(shaded.astype(np.uint8), at_ns=1)
    assert [reading.row(r).status for r in (6, 7, 8)] == [ROW_EMPTY] * 3


def test_only_rows_that_show_no_peg_are_covered():
    rows = [empty_row(r, 4, 4) for r in range(1, 4)]
    out = covered_beside_dark(rows, {0, 2}, key_holes=4)
    assert [r.status for r in out] == [ROW_OCCLUDED, ROW_EMPTY, ROW_OCCLUDED]


def test_tray_points_avoid_the_markers_and_stay_between_them(invicta_table):
    p = invicta_table.profile
    tray = TrayPoints.of(p)
    assert len(tray.points_mm) >= 2 * p.rows - 4
    xs = [m.centre_mm[0] for m in p.markers]
    assert (tray.points_mm[:, 0] >= min(xs)).all() and (tray.points_mm[:, 0] <= max(xs)).all()
    for m in p.markers:
        d = np.abs(tray.points_mm - np.array(m.centre_mm)).max(axis=1)
        assert (d > m.size_mm / 2).all()


def test_a_dark_sleeve_flat_over_bare_rows_hides_their_recesses(board, invicta_cal):
    """Over the board alone (not reaching the tray), a sleeve shows no hole:
    the rows under it are not read bare (the project's renderer draws holes
    deep enough that its flat patch reads unknown; the physically based
    set's dark sleeve read bare, and `covered_flat` occludes it)."""
    p, out = board
    x0, x1 = _rows_x(p, (7, 8))
    h = p.size_mm[1]
    quad = out.project(np.array([[x0, 8.0], [x1, 8.0], [x1, h - 8.0], [x0, h - 8.0]]))
    x, y = np.round(out.project(np.array([[150.0, 75.0]]))[0]).astype(int)
    image = out.image.copy()
    cv2.fillConvexPoly(image, np.round(quad).astype(np.int32), tuple(int(v) for v in out.image[y, x]))
    reading = BoardReader(p, invicta_cal).read(image, at_ns=1)
    for r in (7, 8):  # never read bare: unknown, or covered
        assert reading.row(r).status != ROW_EMPTY
        assert not any(hole.is_certain for hole in reading.row(r).holes)
    assert [reading.row(r).status for r in (10, 11, 12)] == [ROW_EMPTY] * 3


def test_a_sleeve_over_one_side_of_the_tray_only_covers_nothing(board, invicta_cal):
    """An arm reaching in from one side, or lying beside the board, stops
    short of most rows beside it: only a sleeve across the board counts."""
    p, out = board
    x0, x1 = _rows_x(p, (6, 7, 8))
    image = out.image.copy()
    top = out.project(np.array([[x0, -25.0], [x1, -25.0], [x1, -2.0], [x0, -2.0]]))
    cv2.fillConvexPoly(image, np.round(top).astype(np.int32), (40, 30, 30))  # a navy sleeve on the tray
    reading = BoardReader(p, invicta_cal).read(image, at_ns=1)
    assert [reading.row(r).status for r in (6, 7, 8)] == [ROW_EMPTY] * 3


def test_bare_rows_whose_holes_show_their_recesses_stay_bare_beside_a_dark_tray(board, invicta_cal):
    """An arm across the tray that stops short of the board hides no hole: the holes show it."""
    p, out = board
    image = out.image.copy()
    image[_tray_beside(p, out, (6, 7, 8)) == 1] = (40, 30, 60)  # a dark sleeve on the tray, on both sides of the board
    reading = BoardReader(p, invicta_cal).read(image, at_ns=1)
    assert [reading.row(r).status for r in (6, 7, 8)] == [ROW_EMPTY] * 3


def test_a_row_seen_bare_is_not_covered_for_the_tray_beside_it():
    rows = [empty_row(r, 4, 4) for r in range(1, 4)]
    out = covered_beside_dark(rows, {0, 2}, key_holes=4, seen_bare=np.array([True, False, False]))
    assert [r.status for r in out] == [ROW_EMPTY, ROW_EMPTY, ROW_OCCLUDED]
