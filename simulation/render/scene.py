"""What a synthetic photo shows: the board's contents and the photo's conditions.

Everything on the board lives in :class:`BoardContents`; everything random
about a photo lives in :class:`Conditions` (see :mod:`.randomise` for
random ones).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from pegwatch.rules.codes import EMPTY, score
from pegwatch.rules.errors import BadInput
from pegwatch.vision.palette import NOMINAL_RGB
from pegwatch.vision.profile import BoardProfile

SKIN_RGB: tuple[tuple[int, int, int], ...] = ((224, 172, 140), (198, 140, 104), (141, 92, 64), (96, 62, 44))

Point = tuple[float, float]
Polygon = tuple[Point, ...]


class RenderError(BadInput):
    """The contents or conditions asked of the renderer are impossible."""


# --- what is on the board ---------------------------------------------------


@dataclass(frozen=True)
class BoardContents:
    """What is on the board: the truth a photo is rendered from.

    ``guesses[i]`` is row ``i + 1`` (None = no pegs in that row; a colour may
    be ``"empty"``); ``keys[i]`` is its (right place, right colour) key-peg
    count (None = not marked yet). ``secret`` is drawn only when
    ``shield_open``. ``mismarked_rows`` records rows deliberately marked wrong
    by :func:`random_contents` (for benchmarks).
    """

    guesses: tuple[tuple[str, ...] | None, ...]
    keys: tuple[tuple[int, int] | None, ...]
    secret: tuple[str, ...] | None = None
    shield_open: bool = False
    mismarked_rows: frozenset[int] = frozenset()

    @classmethod
    def empty(cls, profile: BoardProfile) -> BoardContents:
        """A board with no pegs at all and the shield closed."""
        return cls(guesses=(None,) * profile.rows, keys=(None,) * profile.rows)

    def check(self, profile: BoardProfile) -> None:
        """Raise :class:`RenderError` if these contents cannot sit on ``profile``'s board."""
        if len(self.guesses) != profile.rows or len(self.keys) != profile.rows:
            raise RenderError(
                f"contents have {len(self.guesses)} guess rows and {len(self.keys)} key rows; "
                f"board {profile.name} has {profile.rows}"
            )
        allowed = set(profile.palette) | {EMPTY}
        for i, g in enumerate(self.guesses, start=1):
            if g is None:
                continue
            if len(g) != profile.holes:
                raise RenderError(f"row {i}: {len(g)} pegs, board {profile.name} has {profile.holes} holes")
            for c in g:
                if c not in allowed and c not in NOMINAL_RGB:
                    raise RenderError(f"row {i}: unknown colour {c!r}")
        for i, k in enumerate(self.keys, start=1):
            if k is None:
                continue
            b, w = k
            if b < 0 or w < 0 or b + w > profile.key_holes:
                raise RenderError(f"row {i}: keys {k} do not fit {profile.key_holes} key holes")
        if self.secret is not None and len(self.secret) != profile.holes:
            raise RenderError(f"secret has {len(self.secret)} pegs, board has {profile.holes} holes")


def _wrong_marking(right: tuple[int, int], holes: int, rng: np.random.Generator) -> tuple[int, int]:
    """A plausible wrong marking: one key peg changed, added or left out."""
    b, w = right
    options: list[tuple[int, int]] = []
    for nb, nw in ((b + 1, w - 1), (b - 1, w + 1), (b, w + 1), (b, w - 1), (b + 1, w), (b - 1, w)):
        if nb >= 0 and nw >= 0 and nb + nw <= holes and (nb, nw) != (b, w) and (nb, nw) != (holes - 1, 1):
            options.append((nb, nw))
    return options[int(rng.integers(len(options)))]


def random_contents(
    profile: BoardProfile,
    rng: np.random.Generator,
    *,
    rows_played: int | None = None,
    mismark_rows: int = 0,
    shield_open: bool | None = None,
    last_row_marked: bool | None = None,
) -> BoardContents:
    """A random game in progress on ``profile``'s board.

    ``rows_played`` rows hold guesses (random in 1..rows when None); each is
    marked correctly except ``mismark_rows`` randomly chosen marked rows,
    which get a plausible wrong marking. The last row may be unmarked yet.
    """
    colours = list(profile.palette) + ([EMPTY] if profile.blanks else [])
    n = int(rng.integers(1, profile.rows + 1)) if rows_played is None else rows_played
    if not 0 <= n <= profile.rows:
        raise RenderError(f"rows_played {n} is not in 0..{profile.rows}")
    secret = tuple(colours[int(i)] for i in rng.integers(len(colours), size=profile.holes))
    guesses: list[tuple[str, ...] | None] = []
    keys: list[tuple[int, int] | None] = []
    for _ in range(n):
        while True:
            g = tuple(colours[int(i)] for i in rng.integers(len(colours), size=profile.holes))
            if g != secret:
                break
        guesses.append(g)
        fb = score(secret, g)
        keys.append((fb.black, fb.white))
    if last_row_marked is None:
        last_row_marked = bool(rng.random() < 0.7)
    if n and not last_row_marked:
        keys[-1] = None
    marked = [i for i, k in enumerate(keys) if k is not None]
    if mismark_rows > len(marked):
        raise RenderError(f"cannot mis-mark {mismark_rows} rows: only {len(marked)} rows are marked")
    wrong: set[int] = set()
    for i in rng.choice(marked, size=mismark_rows, replace=False) if mismark_rows else ():
        right = keys[int(i)]
        assert right is not None
        keys[int(i)] = _wrong_marking(right, profile.holes, rng)
        wrong.add(int(i) + 1)
    pad = profile.rows - n
    return BoardContents(
        guesses=tuple(guesses) + (None,) * pad,
        keys=tuple(keys) + (None,) * pad,
        secret=secret,
        shield_open=bool(rng.random() < 0.2) if shield_open is None else shield_open,
        mismarked_rows=frozenset(wrong),
    )


@dataclass(frozen=True)
class LoosePeg:
    """A peg lying on its side on the tray or table (board mm, may be off the board)."""

    centre_mm: Point
    angle_deg: float
    colour: str
    key: bool = False


@dataclass(frozen=True)
class Conditions:
    """Everything random about one photo of the board.

    Geometry: the camera looks down from ``distance_mm`` with focal length
    ``focal_px``; the tray (and its markers) is turned ``yaw_deg`` in the
    image and tilted by ``tilt_x_deg``/``tilt_y_deg``; its centre is
    ``offset_px`` from the image centre; ``k1`` is barrel (< 0) distortion in
    normalised coordinates. ``board_offset_mm`` (dx, dy, degrees) moves the
    board relative to the tray and markers (a nudged board).

    Light: ``exposure`` scales everything; the light falls off by
    ``light_ratio`` : 1 across the board along ``light_angle_deg``;
    ``colour_cast`` multiplies (R, G, B); ``vignette`` darkens the corners;
    ``shadow`` is (x_mm, y_mm, radius_mm, depth) of a soft shadow or None.
    The pegs are lit from ``light_azimuth_deg`` at ``light_elevation_deg``,
    with specular ``glare`` in 0..1. Each peg casts a shadow of depth
    ``peg_shadow``; with ``peg_height_mm`` > 0 the shadow is as long as a
    peg of that height casts under the light's elevation (a low light makes
    long shadows across the strips between rows), else a short one.
    ``light_band`` is (position mm along ``light_angle_deg``'s direction
    from the board's centre, width mm, depth, softness mm) of a band of
    shade across the board (the shadow of a lamp's arm), or None.
    ``shield_rgb`` paints the closed shield another colour than the
    profile's.

    Spoilers: ``noise_sigma`` (grey levels), ``blur_sigma`` (px),
    ``jpeg_quality`` (None = no JPEG), ``hand`` (polygons in board mm, skin
    ``skin_rgb``), ``loose_pegs``, ``markers`` (drawn or not) and
    ``covered_markers`` (ids partly covered by a scrap of paper).
    ``peg_set`` seeds the colour variation of this set of pegs.
    """

    width: int = 1280
    height: int = 720
    focal_px: float = 1000.0
    distance_mm: float = 330.0
    yaw_deg: float = 0.0
    tilt_x_deg: float = 0.0
    tilt_y_deg: float = 0.0
    offset_px: Point = (0.0, 0.0)
    k1: float = 0.0
    board_offset_mm: tuple[float, float, float] = (0.0, 0.0, 0.0)
    exposure: float = 1.0
    light_ratio: float = 1.0
    light_angle_deg: float = 0.0
    colour_cast: tuple[float, float, float] = (1.0, 1.0, 1.0)
    vignette: float = 0.0
    shadow: tuple[float, float, float, float] | None = None
    light_azimuth_deg: float = 225.0
    light_elevation_deg: float = 60.0
    glare: float = 0.3
    peg_shadow: float = 0.3
    peg_height_mm: float = 0.0
    light_band: tuple[float, float, float, float] | None = None
    shield_rgb: tuple[int, int, int] | None = None
    noise_sigma: float = 1.0
    blur_sigma: float = 0.0
    jpeg_quality: int | None = None
    hand: tuple[Polygon, ...] | None = None
    skin_rgb: tuple[int, int, int] = SKIN_RGB[0]
    loose_pegs: tuple[LoosePeg, ...] = ()
    markers: bool = True
    covered_markers: tuple[int, ...] = ()
    peg_set: int = 0
    supersample: float = 2.0

    @classmethod
    def easy(cls) -> Conditions:
        """A clean, square-on, evenly lit photo with markers: the easy case."""
        return cls()

    def with_(self, **changes: object) -> Conditions:
        """A copy with some fields changed."""
        return replace(self, **changes)  # type: ignore[arg-type]
