"""``pegwatch profile``'s fitting: a profile from hole centres in a photo."""

from __future__ import annotations

import json
import logging
import tomllib
from pathlib import Path

import numpy as np
import pytest

from pegwatch.vision.profile import BoardProfile, load_profile, profile_from_dict
from pegwatch.vision.profile_fit import HolePoint, ProfileFitError, fit_profile

PHOTOS = Path(__file__).resolve().parents[3] / "shared" / "photos"


def _project(h: np.ndarray, pts) -> list[tuple[float, float]]:
    out = []
    for x, y in pts:
        v = h @ np.array([x, y, 1.0])
        out.append((float(v[0] / v[2]), float(v[1] / v[2])))
    return out


def _points(p: BoardProfile, board_to_px: np.ndarray, *, noise: float = 0.0, seed: int = 0) -> list[HolePoint]:
    rng = np.random.default_rng(seed)
    pts: list[HolePoint] = []

    def add(kind, row, index, mm):
        (x, y), = _project(board_to_px, [mm])
        pts.append(HolePoint(kind, row, index, (x + rng.normal(0, noise), y + rng.normal(0, noise))))

    for r in range(1, p.rows + 1):
        for j, c in enumerate(p.hole_centres_mm(r), start=1):
            add("code", r, j, c)
        if r == 1:
            for k, c in enumerate(p.key_centres_mm(r), start=1):
                add("key", r, k, c)
    for j, c in enumerate(p.secret_centres_mm(), start=1):
        add("secret", 0, j, c)
    return pts


def _all_holes(p: BoardProfile) -> np.ndarray:
    return np.array([*p.all_hole_centres_mm(), *p.secret_centres_mm()])


def _same_geometry(fitted: BoardProfile, shipped: BoardProfile, tol: float) -> None:
    """The same board, whichever way its profile's axes were turned (never mirrored)."""
    assert (fitted.rows, fitted.holes, fitted.key_layout) == (shipped.rows, shipped.holes, shipped.key_layout)
    assert np.hypot(*fitted.row_step_mm) == pytest.approx(np.hypot(*shipped.row_step_mm), abs=tol)
    a, b = _all_holes(fitted), _all_holes(shipped)
    da = np.linalg.norm(a[:, None] - a[None], axis=2)
    db = np.linalg.norm(b[:, None] - b[None], axis=2)
    assert np.max(np.abs(da - db)) < tol, np.max(np.abs(da - db))

    def turn(p: BoardProfile) -> float:
        h1, h2 = np.array(p.hole_centre_mm(1, 1)), np.array(p.hole_centre_mm(1, 2))
        r2 = np.array(p.hole_centre_mm(2, 1))
        u, v = h2 - h1, r2 - h1
        return float(np.sign(u[0] * v[1] - u[1] * v[0]))

    assert turn(fitted) == turn(shipped)


@pytest.mark.parametrize("name", ["invicta-12x4", "super-12x5", "lego-10x4"])
def test_round_trip_top_down(name):
    shipped = load_profile(name)
    # A camera looking straight down at 3.1 px/mm, turned by 4 degrees.
    a = np.radians(4.0)
    h = np.array([[3.1 * np.cos(a), -3.1 * np.sin(a), 210.0], [3.1 * np.sin(a), 3.1 * np.cos(a), 90.0], [0, 0, 1]])
    pitch = float(np.linalg.norm(np.subtract(shipped.hole_offsets_mm[1], shipped.hole_offsets_mm[0])))
    fit = fit_profile(_points(shipped, h, noise=0.3), name="fitted", hole_pitch_mm=pitch)
    # 0.3 px of clicking noise is 0.1 mm; the row pitch comes from the photo, so
    # its error grows along the board: within 1 mm at the far row.
    _same_geometry(fit.profile, shipped, tol=1.0)
    assert fit.residual_mm < 0.3
    # The TOML it writes loads to the same profile.
    again = profile_from_dict(tomllib.loads(fit.to_toml()), source="fitted.toml")
    assert np.allclose(_all_holes(again), _all_holes(fit.profile), atol=1e-2)


def test_round_trip_oblique_with_both_pitches():
    shipped = load_profile("invicta-12x4")
    h = np.array([[2.6, 0.35, 300.0], [-0.2, 1.6, 200.0], [0.0006, -0.0012, 1.0]])
    fit = fit_profile(_points(shipped, h), name="oblique", hole_pitch_mm=9.0, row_pitch_mm=16.0)
    _same_geometry(fit.profile, shipped, tol=0.05)
    # The corners it reports place the board where the homography does.
    w, hh = fit.profile.size_mm
    back = fit.image_to_board @ np.array([*fit.corners_px[2], 1.0])
    assert np.allclose(back[:2] / back[2], (w, hh), atol=1e-6)


def test_mirrored_grid_keeps_the_camera_view():
    shipped = load_profile("invicta-12x4")
    # Rows run right to left in this photo: the fit must not mirror the board.
    h = np.array([[-3.0, 0.0, 900.0], [0.0, 3.0, 50.0], [0, 0, 1]])
    fit = fit_profile(_points(shipped, h), name="m", hole_pitch_mm=9.0, row_pitch_mm=16.0)
    px = np.array(fit.corners_px)
    area = 0.5 * sum(px[i, 0] * px[(i + 1) % 4, 1] - px[(i + 1) % 4, 0] * px[i, 1] for i in range(4))
    assert area > 0  # TL, TR, BR, BL clockwise in the image, as corners_homography expects


def test_scale_missing_and_bad_grids_are_one_clear_error():
    shipped = load_profile("invicta-12x4")
    pts = _points(shipped, np.diag([3.0, 3.0, 1.0]))
    with pytest.raises(ProfileFitError, match="does not show the board's scale"):
        fit_profile(pts, name="x")
    wrong = [HolePoint(p.kind, p.row, 5 - p.index, p.px) if p.kind == "code" and p.row == 3 else p for p in pts]
    with pytest.raises(ProfileFitError, match="not on an even grid"):
        fit_profile(wrong, name="x", hole_pitch_mm=9.0)
    no_keys = [p for p in pts if p.kind != "key"]
    with pytest.raises(ProfileFitError, match="no key holes given"):
        fit_profile(no_keys, name="x", hole_pitch_mm=9.0)
    with pytest.raises(ProfileFitError, match="kind"):
        HolePoint("peg", 1, 1, (0.0, 0.0))


def test_missing_parts_come_from_a_base_profile():
    shipped = load_profile("invicta-12x4")
    pts = [p for p in _points(shipped, np.diag([3.0, 3.0, 1.0])) if p.kind == "code"]
    fit = fit_profile(pts, name="x", hole_pitch_mm=9.0, base=shipped)
    _same_geometry(fit.profile, shipped, tol=0.05)
    assert fit.profile.palette == shipped.palette
    assert (fit.profile.peg_head_height_mm, fit.profile.peg_head_shape) == (shipped.peg_head_height_mm, shipped.peg_head_shape)


def test_wilort_photo_points_give_its_profile(caplog):
    index = PHOTOS / "index.json"
    prof = PHOTOS / "profiles" / "wilort-10x4.toml"
    if not index.is_file() or not prof.is_file():
        pytest.skip(f"the development photos are not at {PHOTOS}")
    entry = next(e for e in json.loads(index.read_text()) if "hole_points_mm_to_px" in e)
    pairs = entry["hole_points_mm_to_px"]["points"]
    wilort = load_profile(str(prof))
    # Label each measured point by the wilort hole it is, as an arbiter clicking them would.
    holes = {c: ("code", r, j) for r in range(1, wilort.rows + 1) for j, c in enumerate(wilort.hole_centres_mm(r), 1)}
    pts = [HolePoint(*holes[(x, y)], (u, v)) for x, y, u, v in pairs]
    # An oblique photo does not show one pitch from the other: it says so...
    with caplog.at_level(logging.WARNING, logger="pegwatch.vision.profile_fit"):
        fit_profile(pts, name="wilort-fit", row_pitch_mm=14.0, base=wilort)
    assert "oblique" in caplog.text
    # ...and with both (the board's own 14 and 10 mm) the grid is the profile's.
    fit = fit_profile(pts, name="wilort-fit", row_pitch_mm=14.0, hole_pitch_mm=10.0, base=wilort)
    _same_geometry(fit.profile, wilort, tol=1.0)
    # With the millimetres, the fit is the profile's own geometry.
    by_mm = fit_profile(
        pts, name="wilort-mm", base=wilort, mm_points=[((u, v), (x, y)) for x, y, u, v in pairs]
    )
    _same_geometry(by_mm.profile, wilort, tol=1.0)
    assert by_mm.residual_mm < 1.0
