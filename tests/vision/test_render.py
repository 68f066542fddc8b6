"""The synthetic board renderer: geometry, truth and spoilers."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from pegwatch.rules.codes import score
from pegwatch.simulation.render import (
    NOMINAL_RGB,
    BoardContents,
    Conditions,
    LoosePeg,
    RenderError,
    random_conditions,
    random_contents,
    render,
)
from pegwatch.simulation.render.geometry import distort, tray_to_image
from pegwatch.vision.localise import apply_homography
from pegwatch.vision.profile import load_profile


@pytest.fixture(scope="module")
def invicta():
    return load_profile("invicta-12x4")


def _contents(p, rows):
    guesses = [None] * p.rows
    keys = [None] * p.rows
    for r, (g, k) in rows.items():
        guesses[r - 1] = g
        keys[r - 1] = k
    return BoardContents(tuple(guesses), tuple(keys), secret=("red", "red", "blue", "green"), shield_open=True)


def _bgr_at(img, xy, r=2):
    x, y = (round(float(v)) for v in xy)
    return img[y - r : y + r + 1, x - r : x + r + 1].reshape(-1, 3).mean(axis=0)


def test_render_is_deterministic_and_sized(invicta):
    c = _contents(invicta, {1: (("red", "green", "blue", "yellow"), (1, 2))})
    a = render(invicta, c, Conditions.easy(), seed=3)
    b = render(invicta, c, Conditions.easy(), seed=3)
    assert a.image.shape == (720, 1280, 3) and a.image.dtype == np.uint8
    assert np.array_equal(a.image, b.image)
    other = render(invicta, c, Conditions.easy(), seed=4)
    assert not np.array_equal(a.image, other.image)


@pytest.mark.parametrize("k1", [0.0, -0.1])
@pytest.mark.parametrize("tilt", [0.0, 12.0])
def test_pegs_land_where_the_truth_says(invicta, k1, tilt):
    """Each projected hole centre shows the colour of the peg that the truth puts there."""
    colours = ("red", "green", "blue", "yellow")
    rows = {r: (tuple(colours[(r + i) % 4] for i in range(4)), None) for r in range(1, 13)}
    c = _contents(invicta, rows)
    cond = Conditions.easy().with_(k1=k1, tilt_x_deg=tilt, tilt_y_deg=-tilt / 2, yaw_deg=tilt / 3, noise_sigma=0)
    out = render(invicta, c, cond, seed=1)
    for r in range(1, 13):
        centres = out.project(invicta.hole_centres_mm(r))
        for colour, xy in zip(rows[r][0], centres, strict=True):
            b, g, rr = _bgr_at(out.image, xy)
            want = NOMINAL_RGB[colour]
            # The dominant channel of the nominal colour dominates in the photo too.
            assert int(np.argmax([rr, g, b])) == int(np.argmax(want)), (r, colour, (rr, g, b))


def test_empty_holes_are_dark_and_key_pegs_counted(invicta):
    c = _contents(invicta, {2: (("white", "white", "white", "white"), (2, 1))})
    out = render(invicta, c, Conditions.easy(), seed=2)
    board = _bgr_at(out.image, out.project([(invicta.size_mm[0] / 2, 80.0)])[0])
    for xy in out.project(invicta.hole_centres_mm(5)):
        assert _bgr_at(out.image, xy, r=1).mean() < board.mean() * 0.8
    slots = out.key_positions[1]
    assert sorted(slots) == sorted(["red", "red", "white", "empty"])
    for colour, xy in zip(slots, out.project(invicta.key_centres_mm(2)), strict=True):
        b, g, r = _bgr_at(out.image, xy, r=1)
        if colour == "red":
            assert r > g + 40 and r > b + 40
        elif colour == "white":
            assert min(r, g, b) > 150
        else:
            assert max(r, g, b) < board.mean()
    assert all(s == ("empty",) * 4 for s in out.key_positions[2:])


def test_key_pegs_go_in_random_holes(invicta):
    c = _contents(invicta, {1: (("red",) * 4, (1, 0))})
    seen = {render(invicta, c, Conditions.easy(), seed=s).key_positions[0].index("red") for s in range(12)}
    assert len(seen) > 1


def test_closed_shield_hides_the_secret(invicta):
    c = _contents(invicta, {})
    closed = BoardContents(c.guesses, c.keys, secret=("yellow",) * 4, shield_open=False)
    opened = BoardContents(c.guesses, c.keys, secret=("yellow",) * 4, shield_open=True)
    for contents, yellow in ((closed, False), (opened, True)):
        out = render(invicta, contents, Conditions.easy(), seed=1)
        for xy in out.project(invicta.secret_centres_mm()):
            b, g, r = _bgr_at(out.image, xy)
            assert (r > 150 and g > 120 and b < 90) == yellow


def test_board_offset_moves_the_board_not_the_markers(invicta):
    c = _contents(invicta, {})
    a = render(invicta, c, Conditions.easy(), seed=1)
    b = render(invicta, c, Conditions.easy().with_(board_offset_mm=(4.0, -2.0, 1.0)), seed=1)
    assert np.allclose(a.tray_to_image, b.tray_to_image)
    shift = b.project([(130.0, 40.0)]) - a.project([(130.0, 40.0)])
    assert np.linalg.norm(shift) > 5  # pixels; about 4.5 mm
    moved = b.board_to_image @ np.array([130.0, 40.0, 1.0])
    tray = a.tray_to_image @ np.array([134.0, 38.0, 1.0])
    assert np.allclose(moved[:2] / moved[2], tray[:2] / tray[2], atol=0.5)


def test_hand_marks_the_rows_it_covers(invicta):
    c = random_contents(invicta, np.random.default_rng(5), rows_played=12)
    rng = np.random.default_rng(0)
    found = 0
    for seed in range(12):
        cond = random_conditions(rng, difficulty="medium", profile=invicta, hand_probability=1.0)
        out = render(invicta, c, cond, seed=seed)
        assert out.hand_mask is not None
        for row in range(1, 13):
            pts = out.project(invicta.hole_centres_mm(row) + invicta.key_centres_mm(row))
            q = np.round(pts).astype(int)
            inside = (q[:, 0] >= 0) & (q[:, 0] < 1280) & (q[:, 1] >= 0) & (q[:, 1] < 720)
            on_hand = bool(np.any(out.hand_mask[q[inside, 1], q[inside, 0]] > 0))
            if on_hand:
                assert row in out.occluded_rows
        # A hand covers a few rows, never the whole board.
        assert 1 <= len(out.occluded_rows) <= 8
        found += len(out.occluded_rows)
    assert found > 0


def test_no_hand_no_occlusion(invicta):
    out = render(invicta, _contents(invicta, {}), Conditions.easy(), seed=1)
    assert out.occluded_rows == frozenset() and not out.occluded_secret and out.hand_mask is None


@pytest.mark.parametrize("name", ["invicta-12x4", "lego-10x4", "super-12x5"])
@pytest.mark.parametrize("difficulty", ["easy", "medium", "hard"])
def test_random_conditions_keep_the_tray_in_frame(name, difficulty):
    p = load_profile(name)
    rng = np.random.default_rng(11)
    m = p.render.tray_margin_mm
    w, h = p.size_mm
    for _ in range(20):
        c = random_conditions(rng, difficulty=difficulty, profile=p)
        out = render(p, BoardContents.empty(p), c.with_(hand=None), seed=0) if _ == 0 else None
        if out is not None:
            assert out.image.shape == (c.height, c.width, 3)
        q = distort(c, apply_homography(tray_to_image(p, c), np.array([[-m, -m], [w + m, -m], [w + m, h + m], [-m, h + m]])))
        assert q[:, 0].min() >= 0 and q[:, 0].max() < c.width and q[:, 1].min() >= 0 and q[:, 1].max() < c.height


def test_hard_conditions_really_vary():
    rng = np.random.default_rng(1)
    cs = [random_conditions(rng) for _ in range(60)]
    assert max(abs(c.tilt_x_deg) for c in cs) > 10
    assert max(c.light_ratio for c in cs) > 1.8
    assert min(c.k1 for c in cs) < -0.07
    assert {c.jpeg_quality is not None for c in cs} == {True}
    assert min(c.jpeg_quality for c in cs) < 50
    assert sum(c.hand is not None for c in cs) >= 10
    assert sum(bool(c.loose_pegs) for c in cs) >= 20
    assert any(c.colour_cast[2] < 0.85 for c in cs)  # warm light
    assert any(c.colour_cast[2] > 1.07 for c in cs)  # cool light
    assert Conditions.easy().hand is None


def test_loose_pegs_are_drawn_off_the_board(invicta):
    c = _contents(invicta, {})
    base = render(invicta, c, Conditions.easy().with_(noise_sigma=0), seed=1)
    peg = LoosePeg((130.0, 100.0), 30.0, "blue")
    out = render(invicta, c, Conditions.easy().with_(noise_sigma=0, loose_pegs=(peg,)), seed=1)
    diff = np.abs(out.image.astype(int) - base.image.astype(int)).sum(axis=2) > 30
    ys, xs = np.nonzero(diff)
    assert len(xs) > 30
    centre = out.project([(130.0, 100.0)])[0]
    assert abs(np.median(xs) - centre[0]) < 25 and abs(np.median(ys) - centre[1]) < 25


def test_spoilers_change_the_photo(invicta):
    c = _contents(invicta, {1: (("red", "green", "blue", "yellow"), (0, 0))})
    clean = render(invicta, c, Conditions.easy().with_(noise_sigma=0), seed=1).image.astype(float)
    noisy = render(invicta, c, Conditions.easy().with_(noise_sigma=4), seed=1).image.astype(float)
    assert 2.5 < np.std(noisy - clean) < 5.5
    dark = render(invicta, c, Conditions.easy().with_(noise_sigma=0, exposure=0.6), seed=1).image.astype(float)
    assert 0.5 < dark.mean() / clean.mean() < 0.7
    warm = render(invicta, c, Conditions.easy().with_(noise_sigma=0, colour_cast=(1.2, 1.0, 0.7)), seed=1).image
    assert warm[:, :, 0].mean() < clean[:, :, 0].mean() * 0.8  # less blue
    jpeg = render(invicta, c, Conditions.easy().with_(noise_sigma=0, jpeg_quality=40), seed=1).image.astype(float)
    assert 0 < np.abs(jpeg - clean).mean() < 6
    blur = render(invicta, c, Conditions.easy().with_(noise_sigma=0, blur_sigma=1.5), seed=1).image
    lap = lambda im: cv2.Laplacian(cv2.cvtColor(im.astype(np.uint8), cv2.COLOR_BGR2GRAY), cv2.CV_64F).var()  # noqa: E731
    assert lap(blur) < lap(clean) * 0.6


def test_random_contents_are_marked_right_except_the_mismarked(invicta):
    rng = np.random.default_rng(3)
    for _ in range(30):
        c = random_contents(invicta, rng, rows_played=8, mismark_rows=2, last_row_marked=True)
        assert len(c.mismarked_rows) == 2
        for r in range(1, 9):
            right = score(c.secret, c.guesses[r - 1])
            assert (c.keys[r - 1] != right) == (r in c.mismarked_rows)
            b, w = c.keys[r - 1]
            assert b >= 0 and w >= 0 and b + w <= 4
        assert c.guesses[8:] == (None,) * 4


def test_score_counts_blanks_as_a_colour():
    assert score(("red", "empty", "blue", "blue"), ("empty", "red", "blue", "green")) == (1, 2)
    assert score(("a", "b", "c", "d"), ("a", "b", "c", "d")) == (4, 0)


def test_bad_contents_are_refused(invicta):
    with pytest.raises(RenderError, match="row 1: 3 pegs"):
        render(invicta, _contents(invicta, {1: (("red",) * 3, None)}), Conditions.easy(), seed=0)
    with pytest.raises(RenderError, match="keys"):
        render(invicta, _contents(invicta, {1: (("red",) * 4, (3, 2))}), Conditions.easy(), seed=0)
    with pytest.raises(RenderError, match="difficulty"):
        random_conditions(np.random.default_rng(0), difficulty="brutal")


@pytest.mark.parametrize("name", ["lego-10x4", "super-12x5"])
def test_other_boards_render(name):
    p = load_profile(name)
    c = random_contents(p, np.random.default_rng(1), rows_played=p.rows, shield_open=True)
    out = render(p, c, Conditions.easy(), seed=1)
    for r in range(1, p.rows + 1):
        for colour, xy in zip(c.guesses[r - 1], out.project(p.hole_centres_mm(r)), strict=True):
            if colour in ("empty", "white", "black"):
                continue
            b, g, rr = _bgr_at(out.image, xy)
            assert int(np.argmax([rr, g, b])) == int(np.argmax(NOMINAL_RGB[colour])), (r, colour)
