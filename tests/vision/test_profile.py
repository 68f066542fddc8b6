"""Board profiles: the shipped ones load and are consistent; bad files fail with one clear line."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pegwatch.rules.errors import PegwatchError
from pegwatch.vision.profile import (
    DEFAULT_PROFILE,
    KEY_LAYOUTS,
    BoardProfile,
    Marker,
    ProfileError,
    load_profile,
    profile_names,
)

SHIPPED = ("invicta-12x4", "lego-10x4", "super-12x5")


def test_shipped_profiles_are_listed():
    names = profile_names()
    for name in SHIPPED:
        assert name in names
    assert DEFAULT_PROFILE == "invicta-12x4"


@pytest.mark.parametrize(
    ("name", "rows", "holes", "layout", "place"),
    [
        ("invicta-12x4", 12, 4, "2x2", "red"),
        ("lego-10x4", 10, 4, "1x4", "black"),
        ("super-12x5", 12, 5, "1x5", "black"),
    ],
)
def test_shipped_profile_shapes(name, rows, holes, layout, place):
    p = load_profile(name)
    assert (p.rows, p.holes, p.key_layout, p.right_place_key) == (rows, holes, layout, place)
    assert p.key_holes == KEY_LAYOUTS[layout]
    assert p.right_colour_key == "white"
    assert len(p.markers) >= 4
    assert len(p.palette) >= 6


@pytest.mark.parametrize("name", SHIPPED)
def test_holes_do_not_overlap_and_lie_on_the_board(name):
    p = load_profile(name)
    w, h = p.size_mm
    code = [p.hole_centre_mm(r, k) for r in range(1, p.rows + 1) for k in range(1, p.holes + 1)]
    code += list(p.secret_centres_mm())
    keys = [c for r in range(1, p.rows + 1) for c in p.key_centres_mm(r)]
    for x, y in code + keys:
        assert 0 < x < w and 0 < y < h
    for i, a in enumerate(code):
        for b in code[i + 1 :]:
            assert math.dist(a, b) >= p.code_hole_diameter_mm
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            assert math.dist(a, b) >= p.key_hole_diameter_mm
        for b in code:
            assert math.dist(a, b) >= (p.key_hole_diameter_mm + p.code_hole_diameter_mm) / 2


@pytest.mark.parametrize("name", SHIPPED)
def test_row_boxes_contain_their_holes_and_not_the_neighbours(name):
    p = load_profile(name)
    for row in range(1, p.rows + 1):
        x, y, w, h = p.row_box_mm(row)
        for cx, cy in p.hole_centres_mm(row) + p.key_centres_mm(row):
            assert x < cx < x + w and y < cy < y + h
        for other in (row - 1, row + 1):
            if 1 <= other <= p.rows:
                for cx, cy in p.hole_centres_mm(other):
                    assert not (x < cx < x + w and y < cy < y + h)


@pytest.mark.parametrize("name", SHIPPED)
def test_markers_and_plastic_do_not_cover_holes(name):
    p = load_profile(name)
    w, h = p.size_mm
    for m in p.markers:
        # Markers sit on the tray, outside the board.
        (x0, y0), _, (x1, y1), _ = m.corners_mm()
        assert x1 < 0 or x0 > w or y1 < 0 or y0 > h
    for rx, ry, rw, rh in p.plastic_regions_mm:
        for cx, cy in p.all_hole_centres_mm():
            r = p.code_hole_diameter_mm / 2
            assert not (rx - r < cx < rx + rw + r and ry - r < cy < ry + rh + r)


def test_hole_numbering_and_bounds():
    p = load_profile("invicta-12x4")
    assert p.hole_centre_mm(1, 1) == p.hole_centres_mm(1)[0]
    # Rows advance along row_step_mm.
    a, b = p.hole_centre_mm(1, 1), p.hole_centre_mm(2, 1)
    assert (b[0] - a[0], b[1] - a[1]) == p.row_step_mm
    with pytest.raises(ProfileError, match="row 13"):
        p.hole_centre_mm(13, 1)
    with pytest.raises(ProfileError, match="hole 5"):
        p.hole_centre_mm(1, 5)
    assert issubclass(ProfileError, PegwatchError)


def test_marker_corners_are_in_aruco_order():
    m = Marker(3, (10.0, 20.0), 4.0)
    assert m.corners_mm() == ((8.0, 18.0), (12.0, 18.0), (12.0, 22.0), (8.0, 22.0))


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(ProfileError, match="invicta-12x4"):
        load_profile("no-such-board")


def _write(tmp_path: Path, text: str) -> Path:
    src = (Path(__file__).resolve().parents[2] / "firmware_config" / "boards" / "invicta-12x4.toml").read_text()
    f = tmp_path / "mine.toml"
    f.write_text(text(src) if callable(text) else text)
    return f


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s: s.replace('key_layout = "2x2"', 'key_layout = "3x3"'), r"mine\.toml: key_layout: '3x3' is not one of"),
        (lambda s: s.replace("holes = 4", "holes = 5"), r"geometry\.hole_offsets_mm: has 4 entries but holes = 5"),
        (lambda s: s.replace("rows = 12", "rows = 40"), r"rows: 40 is not an integer"),
        (lambda s: s.replace("rows = 12", 'rows = "twelve"'), r"rows: 'twelve'"),
        (lambda s: s.replace('right_place_key = "red"', 'right_place_key = "blue"'), r"right_place_key"),
        (lambda s: s.replace("size_mm = [260.0, 85.0]", "size_mm = [160.0, 85.0]"), r"outside the 160x85 mm board"),
        (lambda s: s.replace('"purple", ', '"empty", '), r"palette: 'empty' is reserved"),
        (lambda s: s.replace("id = 1\n", "id = 0\n"), r"marker ids repeat"),
        (lambda s: s + "\n[[[", r"not valid TOML"),
        (lambda s: s.replace("row_1_mm = [30.0, 0.0]", ""), r"geometry\.row_1_mm: missing"),
    ],
)
def test_bad_profiles_name_file_and_key(tmp_path, edit, message):
    f = _write(tmp_path, edit)
    with pytest.raises(ProfileError, match=message) as info:
        load_profile(str(f))
    assert "\n" not in str(info.value)
    assert str(f) in str(info.value)


def test_env_overrides_boards_dir(tmp_path, monkeypatch):
    f = _write(tmp_path, lambda s: s.replace('name = "invicta-12x4"', 'name = "mine"'))
    monkeypatch.setenv("PEGWATCH_BOARDS_DIR", str(tmp_path))
    assert profile_names() == ("mine",)
    p = load_profile("mine")
    assert isinstance(p, BoardProfile) and p.name == "mine" and p.source == str(f)


def test_the_worked_example_in_the_docs_loads_and_reads(tmp_path):
    """docs/boards.md's travel board is a real, working profile."""
    import re

    import numpy as np

    from pegwatch.simulation.render import Conditions, random_contents, render
    from pegwatch.vision.localise import MarkerLocaliser

    doc = (Path(__file__).resolve().parents[2] / "docs" / "boards.md").read_text()
    block = next(b for b in re.findall(r"```toml\n(.*?)```", doc, re.S) if 'name = "travel-10x4"' in b)
    f = tmp_path / "travel-10x4.toml"
    f.write_text(block)
    p = load_profile(str(f))
    assert (p.rows, p.holes, p.key_layout, p.size_mm) == (10, 4, "2x2", (180.0, 70.0))
    out = render(p, random_contents(p, np.random.default_rng(0)), Conditions.easy(), seed=0)
    loc = MarkerLocaliser(p).locate(out.image)
    assert loc.ok and loc.markers_seen == (12, 13, 14, 15)


def test_peg_heads_have_a_height_and_old_profiles_stay_flat(tmp_path):
    from pegwatch.vision.profile import ProfileError, load_profile

    inv = load_profile("invicta-12x4")
    assert inv.peg_head_height_mm > 0 and inv.peg_head_shape == "dome"
    # A dome is sampled half a radius below its top; a flat head at its top.
    assert inv.code_head_centre_height_mm == pytest.approx(inv.peg_head_height_mm - inv.code_hole_diameter_mm / 4)
    lego = load_profile("lego-10x4")
    assert lego.peg_head_shape == "flat" and lego.key_head_centre_height_mm == lego.key_head_height_mm
    text = (Path(inv.source)).read_text(encoding="utf-8")
    old = "\n".join(line for line in text.splitlines() if "head_" not in line)
    (tmp_path / "old.toml").write_text(old, encoding="utf-8")
    flat = load_profile(str(tmp_path / "old.toml"))
    assert flat.peg_head_height_mm == flat.key_head_height_mm == flat.code_head_centre_height_mm == 0.0
    for bad, key in (("peg_head_height_mm = -1.0", "peg_head_height_mm"), ('peg_head_shape = "cone"', "peg_head_shape")):
        (tmp_path / "bad.toml").write_text(old.replace('name = "invicta-12x4"', f'name = "invicta-12x4"\n{bad}'), encoding="utf-8")
        with pytest.raises(ProfileError, match=f"bad.toml: {key}"):
            load_profile(str(tmp_path / "bad.toml"))
