"""Board profiles: the geometry and palette of a physical Mastermind board.

A profile is data, kept in ``firmware_config/boards/<name>.toml``; see
``docs/boards.md`` for how to write one. Board coordinates are millimetres
with the origin at the board's top-left corner as the camera sees it, x to
the right and y down. Row 1 is the first guess row; holes are numbered from 1
along the row.

>>> p = load_profile("invicta-12x4")
>>> p.rows, p.holes, p.key_layout
(12, 4, '2x2')
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from pegwatch.rules.errors import BadInput
from pegwatch.rules.textfile import MIB, parse_toml, read_text

logger = logging.getLogger(__name__)

DEFAULT_PROFILE = "invicta-12x4"

#: A profile file larger than this is refused before it is parsed (the shipped ones are ~2 KiB).
MAX_PROFILE_BYTES = 1 * MIB
#: Every length in a profile (a coordinate, a size, an offset) is within this many mm of 0.
MAX_MM = 10_000.0

KEY_LAYOUTS: Mapping[str, int] = {"2x2": 4, "1x4": 4, "1x5": 5}
"""Allowed key-hole layouts and the number of key holes each has."""

HEAD_SHAPES = ("dome", "flat")
"""The shapes of a peg's head: a rounded cap, or a flat top (a cylinder)."""
#: A peg head stands at most this high above the board (tall pawns are not pegs).
MAX_HEAD_HEIGHT_MM = 40.0

Point = tuple[float, float]
Rect = tuple[float, float, float, float]


class ProfileError(BadInput):
    """A board profile is missing, malformed or inconsistent.

    The message names the file and the key, e.g.
    ``firmware_config/boards/mine.toml: key_layout: '3x3' is not one of 2x2, 1x4, 1x5``.
    """


@dataclass(frozen=True)
class Marker:
    """An ArUco marker printed on the board or its tray.

    ``centre_mm`` is in board coordinates (it may lie outside the board,
    on the tray) and ``size_mm`` is the side of the black square, not
    counting the white quiet zone around it. The marker is upright in board
    coordinates: its first corner is the top-left one.
    """

    id: int
    centre_mm: Point
    size_mm: float

    def corners_mm(self) -> tuple[Point, Point, Point, Point]:
        """The four corners in board mm, in ArUco order: TL, TR, BR, BL."""
        cx, cy = self.centre_mm
        h = self.size_mm / 2.0
        return ((cx - h, cy - h), (cx + h, cy - h), (cx + h, cy + h), (cx - h, cy + h))


@dataclass(frozen=True)
class RenderStyle:
    """How the synthetic renderer paints this board (not used by the reader)."""

    board_rgb: tuple[int, int, int] = (62, 62, 68)
    tray_rgb: tuple[int, int, int] = (214, 208, 192)
    tray_margin_mm: float = 32.0
    shield_rgb: tuple[int, int, int] = (40, 40, 46)


@dataclass(frozen=True)
class BoardProfile:
    """The geometry, palette and markers of one kind of board.

    Hole positions are derived from ``row_1_mm`` (where row 1 sits),
    ``row_step_mm`` (the vector from one row to the next), and the offsets of
    the code holes and key holes from a row's origin. The secret row uses the
    code-hole offsets from ``secret_mm``.
    """

    name: str
    description: str
    rows: int
    holes: int
    key_layout: str
    size_mm: Point
    code_hole_diameter_mm: float
    key_hole_diameter_mm: float
    palette: tuple[str, ...]
    blanks: bool
    right_place_key: str
    right_colour_key: str
    markers: tuple[Marker, ...]
    aruco_dictionary: str
    plastic_regions_mm: tuple[Rect, ...]
    row_1_mm: Point
    row_step_mm: Point
    hole_offsets_mm: tuple[Point, ...]
    key_offsets_mm: tuple[Point, ...]
    secret_mm: Point
    shield_mm: Rect | None = None
    render: RenderStyle = field(default_factory=RenderStyle)
    source: str = ""
    #: Height of the top of a code peg's head above the board's surface
    #: (0: flush with it, the flat model of profiles that do not say).
    peg_head_height_mm: float = 0.0
    #: The same for a key peg.
    key_head_height_mm: float = 0.0
    #: "dome" (a rounded cap) or "flat" (a cylinder's flat top).
    peg_head_shape: str = "dome"

    def _head_centre(self, top: float, diameter: float) -> float:
        if self.peg_head_shape == "flat":
            return top
        # A dome's outline, seen from anywhere, is centred on its sphere's
        # centre, a radius below the top; its coloured cap sits half-way.
        return max(0.0, top - diameter / 4.0)

    @property
    def code_head_centre_height_mm(self) -> float:
        """How high above the board a code peg's head is centred: where the reader samples it."""
        return self._head_centre(self.peg_head_height_mm, self.code_hole_diameter_mm)

    @property
    def key_head_centre_height_mm(self) -> float:
        """How high above the board a key peg's head is centred."""
        return self._head_centre(self.key_head_height_mm, self.key_hole_diameter_mm)

    @property
    def key_holes(self) -> int:
        """How many key holes each row has."""
        return len(self.key_offsets_mm)

    def _row_origin(self, row: int) -> Point:
        if not 1 <= row <= self.rows:
            raise ProfileError(f"{self.name}: row {row} is not in 1..{self.rows}")
        k = row - 1
        return (self.row_1_mm[0] + k * self.row_step_mm[0], self.row_1_mm[1] + k * self.row_step_mm[1])

    def hole_centre_mm(self, row: int, hole: int) -> Point:
        """Centre of code hole ``hole`` (1..holes) of guess row ``row`` (1..rows)."""
        if not 1 <= hole <= self.holes:
            raise ProfileError(f"{self.name}: hole {hole} is not in 1..{self.holes}")
        ox, oy = self._row_origin(row)
        dx, dy = self.hole_offsets_mm[hole - 1]
        return (ox + dx, oy + dy)

    def hole_centres_mm(self, row: int) -> tuple[Point, ...]:
        """Centres of all code holes of ``row``, hole 1 first."""
        ox, oy = self._row_origin(row)
        return tuple((ox + dx, oy + dy) for dx, dy in self.hole_offsets_mm)

    def key_centres_mm(self, row: int) -> tuple[Point, ...]:
        """Centres of the key holes of ``row``; their order carries no meaning."""
        ox, oy = self._row_origin(row)
        return tuple((ox + dx, oy + dy) for dx, dy in self.key_offsets_mm)

    def secret_centres_mm(self) -> tuple[Point, ...]:
        """Centres of the secret-code holes, hole 1 first."""
        ox, oy = self.secret_mm
        return tuple((ox + dx, oy + dy) for dx, dy in self.hole_offsets_mm)

    def _box_around(self, points: tuple[Point, ...], radius: float) -> Rect:
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        x0, y0 = min(xs) - radius, min(ys) - radius
        return (x0, y0, max(xs) + radius - x0, max(ys) + radius - y0)

    def row_box_mm(self, row: int) -> Rect:
        """The band (x, y, w, h) that the code and key holes of ``row`` occupy."""
        pad = self.code_hole_diameter_mm / 2.0 + 1.0
        return self._box_around(self.hole_centres_mm(row) + self.key_centres_mm(row), pad)

    def secret_box_mm(self) -> Rect:
        """The band (x, y, w, h) that the secret holes occupy."""
        return self._box_around(self.secret_centres_mm(), self.code_hole_diameter_mm / 2.0 + 1.0)

    def all_hole_centres_mm(self) -> tuple[Point, ...]:
        """Every code and key hole of every guess row (not the secret row)."""
        out: list[Point] = []
        for row in range(1, self.rows + 1):
            out.extend(self.hole_centres_mm(row))
            out.extend(self.key_centres_mm(row))
        return tuple(out)

    def corners_mm(self) -> tuple[Point, Point, Point, Point]:
        """The board's corners TL, TR, BR, BL in board mm."""
        w, h = self.size_mm
        return ((0.0, 0.0), (w, 0.0), (w, h), (0.0, h))


# --- loading --------------------------------------------------------------


def boards_dir() -> Path:
    """Where profiles are looked up by name (``$PEGWATCH_BOARDS_DIR`` overrides)."""
    env = os.environ.get("PEGWATCH_BOARDS_DIR")
    if env:
        return Path(env)
    # Package data (pegwatch.firmware_config), so a plain wheel has the profiles too.
    return Path(str(resources.files("pegwatch.firmware_config") / "boards"))


def profile_names() -> tuple[str, ...]:
    """Names of the profiles in :func:`boards_dir`, sorted."""
    d = boards_dir()
    if not d.is_dir():
        return ()
    return tuple(sorted(p.stem for p in d.glob("*.toml")))


def load_profile(name_or_path: str = DEFAULT_PROFILE) -> BoardProfile:
    """Load a profile by name (file stem in :func:`boards_dir`) or by path."""
    path = Path(name_or_path)
    if path.suffix != ".toml" and os.sep not in name_or_path and "/" not in name_or_path:
        path = boards_dir() / f"{name_or_path}.toml"
        if not path.is_file():
            known = ", ".join(profile_names()) or "none"
            raise ProfileError(f"board profile {_short(name_or_path)} not found in {boards_dir()} (known: {known})")
    if not path.is_file():
        raise ProfileError(f"{path}: board profile file not found")
    text = read_text(path, limit=MAX_PROFILE_BYTES, what="a TOML board profile", error=ProfileError)
    data = parse_toml(text, source=str(path), error=ProfileError)
    return profile_from_dict(data, source=str(path), default_name=path.stem)


def _is_length(v: object) -> bool:
    """A finite number of millimetres within ±:data:`MAX_MM` (never converts a huge int)."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return False
    return -MAX_MM <= v <= MAX_MM  # False for NaN, inf and huge ints alike


def _short(v: object) -> str:
    text = repr(v)
    return text if len(text) <= 60 else text[:57] + "..."


class _Reader:
    """Typed access to a TOML table that names the file and key on error."""

    def __init__(self, data: Mapping[str, Any], source: str, prefix: str = "") -> None:
        self.data = data
        self.source = source
        self.prefix = prefix

    def fail(self, key: str, why: str) -> ProfileError:
        return ProfileError(f"{self.source}: {self.prefix}{key}: {why}")

    def get(self, key: str, default: Any = ...) -> Any:
        if key not in self.data:
            if default is ...:
                raise self.fail(key, "missing")
            return default
        return self.data[key]

    def str_(self, key: str, default: Any = ...) -> str:
        v = self.get(key, default)
        if not isinstance(v, str) or not v:
            raise self.fail(key, f"{_short(v)} is not a non-empty string")
        return v

    def int_(self, key: str, lo: int, hi: int) -> int:
        v = self.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise self.fail(key, f"{_short(v)} is not an integer in {lo}..{hi}")
        return v

    def float_(self, key: str, default: Any = ..., *, positive: bool = True) -> float:
        v = self.get(key, default)
        if not _is_length(v):
            raise self.fail(key, f"{_short(v)} is not a number of mm within ±{MAX_MM:g}")
        if positive and v <= 0:
            raise self.fail(key, f"{v!r} must be > 0")
        return float(v)

    def point(self, key: str, default: Any = ..., value: Any = ...) -> Point:
        v = self.get(key, default) if value is ... else value
        if not isinstance(v, list | tuple) or len(v) != 2 or not all(_is_length(c) for c in v):
            raise self.fail(key, f"{_short(v)} is not a pair of numbers [x, y] (mm within ±{MAX_MM:g})")
        return (float(v[0]), float(v[1]))

    def points(self, key: str) -> tuple[Point, ...]:
        v = self.get(key)
        if not isinstance(v, list) or not v:
            raise self.fail(key, f"{_short(v)} is not a list of [x, y] pairs")
        return tuple(self.point(f"{key}[{i}]", value=p) for i, p in enumerate(v))

    def rect(self, key: str, value: Any) -> Rect:
        if (
            not isinstance(value, list | tuple)
            or len(value) != 4
            or not all(_is_length(c) for c in value)
            or value[2] <= 0
            or value[3] <= 0
        ):
            raise self.fail(key, f"{_short(value)} is not a rectangle [x, y, w, h] with w, h > 0 (mm)")
        return (float(value[0]), float(value[1]), float(value[2]), float(value[3]))

    def rgb(self, key: str, default: tuple[int, int, int]) -> tuple[int, int, int]:
        v = self.get(key, list(default))
        if (
            not isinstance(v, list | tuple)
            or len(v) != 3
            or not all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 255 for c in v)
        ):
            raise self.fail(key, f"{_short(v)} is not an sRGB triple [r, g, b] of 0..255")
        return (int(v[0]), int(v[1]), int(v[2]))


def profile_from_dict(data: Mapping[str, Any], *, source: str = "<profile>", default_name: str = "") -> BoardProfile:
    """Build and check a profile from parsed TOML; errors name ``source`` and the key."""
    r = _Reader(data, source)
    name = r.str_("name", default_name or ...)
    description = r.str_("description", name)
    rows = r.int_("rows", 1, 30)
    holes = r.int_("holes", 2, 8)
    key_layout = r.str_("key_layout")
    if key_layout not in KEY_LAYOUTS:
        raise r.fail("key_layout", f"{_short(key_layout)} is not one of {', '.join(KEY_LAYOUTS)}")
    size = r.point("size_mm")
    if size[0] <= 0 or size[1] <= 0:
        raise r.fail("size_mm", f"{list(size)} must be positive")
    code_d = r.float_("code_hole_diameter_mm")
    key_d = r.float_("key_hole_diameter_mm")
    heights: list[float] = []
    for key in ("peg_head_height_mm", "key_head_height_mm"):
        v = r.float_(key, 0.0, positive=False)
        if not 0.0 <= v <= MAX_HEAD_HEIGHT_MM:
            raise r.fail(key, f"{v:g} is not a height in 0..{MAX_HEAD_HEIGHT_MM:g} mm above the board")
        heights.append(v)
    head_shape = r.str_("peg_head_shape", "dome").lower()
    if head_shape not in HEAD_SHAPES:
        raise r.fail("peg_head_shape", f"{_short(head_shape)} is not one of {', '.join(HEAD_SHAPES)}")
    palette_raw = r.get("palette")
    if (
        not isinstance(palette_raw, list)
        or len(palette_raw) < 2
        or not all(isinstance(c, str) and c for c in palette_raw)
    ):
        raise r.fail("palette", f"{_short(palette_raw)} is not a list of at least two colour names")
    palette = tuple(c.strip().lower() for c in palette_raw)
    if len(set(palette)) != len(palette):
        raise r.fail("palette", "colour names repeat")
    for reserved in ("empty", "unknown", "occluded"):
        if reserved in palette:
            raise r.fail("palette", f"{reserved!r} is reserved and cannot be a colour")
    blanks = r.get("blanks", False)
    if not isinstance(blanks, bool):
        raise r.fail("blanks", f"{_short(blanks)} is not true or false")
    right_place = r.str_("right_place_key", "black").lower()
    if right_place not in ("black", "red"):
        raise r.fail("right_place_key", f"{_short(right_place)} is not 'black' or 'red'")
    right_colour = r.str_("right_colour_key", "white").lower()
    if right_colour == right_place:
        raise r.fail("right_colour_key", "must differ from right_place_key")
    dictionary = r.str_("aruco_dictionary", "DICT_4X4_50")
    if not dictionary.startswith("DICT_"):
        raise r.fail("aruco_dictionary", f"{_short(dictionary)} is not an OpenCV ArUco dictionary name like DICT_4X4_50")

    g = _Reader(r.get("geometry"), source, "geometry.")
    if not isinstance(g.data, Mapping):
        raise r.fail("geometry", "is not a table [geometry]")
    row_1 = g.point("row_1_mm")
    row_step = g.point("row_step_mm")
    if math.hypot(*row_step) < code_d:
        raise g.fail("row_step_mm", f"{list(row_step)} is shorter than a code hole ({code_d} mm)")
    hole_offsets = g.points("hole_offsets_mm")
    if len(hole_offsets) != holes:
        raise g.fail("hole_offsets_mm", f"has {len(hole_offsets)} entries but holes = {holes}")
    key_offsets = g.points("key_offsets_mm")
    if len(key_offsets) != KEY_LAYOUTS[key_layout]:
        raise g.fail(
            "key_offsets_mm",
            f"has {len(key_offsets)} entries but key_layout {key_layout} needs {KEY_LAYOUTS[key_layout]}",
        )
    if len(key_offsets) < holes:
        raise g.fail("key_offsets_mm", f"has {len(key_offsets)} key holes, fewer than the {holes} code holes")
    secret = g.point("secret_mm")
    shield_raw = g.get("shield_mm", None)
    shield = None if shield_raw is None else g.rect("shield_mm", shield_raw)

    markers_raw = r.get("markers", [])
    if not isinstance(markers_raw, list):
        raise r.fail("markers", "is not a list of [[markers]] tables")
    markers: list[Marker] = []
    for i, m in enumerate(markers_raw):
        if not isinstance(m, Mapping):
            raise r.fail(f"markers[{i}]", "is not a table")
        mr = _Reader(m, source, f"markers[{i}].")
        mid = mr.int_("id", 0, 999)
        markers.append(Marker(mid, mr.point("centre_mm"), mr.float_("size_mm")))
    ids = [m.id for m in markers]
    if len(set(ids)) != len(ids):
        raise r.fail("markers", f"marker ids repeat: {ids}")

    plastic_raw = r.get("plastic_regions_mm", [])
    if not isinstance(plastic_raw, list):
        raise r.fail("plastic_regions_mm", "is not a list of [x, y, w, h]")
    plastic = tuple(r.rect(f"plastic_regions_mm[{i}]", v) for i, v in enumerate(plastic_raw))

    style_raw = r.get("render", {})
    if not isinstance(style_raw, Mapping):
        raise r.fail("render", "is not a table [render]")
    s = _Reader(style_raw, source, "render.")
    base = RenderStyle()
    style = RenderStyle(
        board_rgb=s.rgb("board_rgb", base.board_rgb),
        tray_rgb=s.rgb("tray_rgb", base.tray_rgb),
        tray_margin_mm=s.float_("tray_margin_mm", base.tray_margin_mm),
        shield_rgb=s.rgb("shield_rgb", base.shield_rgb),
    )

    profile = BoardProfile(
        name=name,
        description=description,
        rows=rows,
        holes=holes,
        key_layout=key_layout,
        size_mm=size,
        code_hole_diameter_mm=code_d,
        key_hole_diameter_mm=key_d,
        palette=palette,
        blanks=blanks,
        right_place_key=right_place,
        right_colour_key=right_colour,
        markers=tuple(markers),
        aruco_dictionary=dictionary,
        plastic_regions_mm=plastic,
        row_1_mm=row_1,
        row_step_mm=row_step,
        hole_offsets_mm=hole_offsets,
        key_offsets_mm=key_offsets,
        secret_mm=secret,
        shield_mm=shield,
        render=style,
        source=source,
        peg_head_height_mm=heights[0],
        key_head_height_mm=heights[1],
        peg_head_shape=head_shape,
    )
    _check_inside(profile, r)
    return profile


def _check_inside(p: BoardProfile, r: _Reader) -> None:
    """Every hole must lie on the board, else the geometry has a typo."""
    w, h = p.size_mm
    for row in range(1, p.rows + 1):
        for x, y in p.hole_centres_mm(row) + p.key_centres_mm(row):
            if not (0 <= x <= w and 0 <= y <= h):
                raise r.fail("geometry", f"row {row} has a hole at ({x:g}, {y:g}) mm, outside the {w:g}x{h:g} mm board")
    for x, y in p.secret_centres_mm():
        if not (0 <= x <= w and 0 <= y <= h):
            raise r.fail("geometry.secret_mm", f"a secret hole at ({x:g}, {y:g}) mm is outside the board")
