"""A renderer of realistic synthetic photos of a Mastermind board, with ground truth.

The tests, the benchmark and the demo use it. It draws the board, its pegs,
the tray with the fiducial markers and the table into a top-down texture in
board millimetres (supersampled), then views it through a pinhole camera
with perspective tilt and barrel distortion, and spoils the photo the way a
real one is spoiled: uneven and coloured light, glare on the domes of the
pegs, soft shadows, a hand or an arm over some rows, loose pegs beside the
board, defocus blur, sensor noise and JPEG artefacts.

Everything random about a photo lives in :class:`Conditions`; everything on
the board lives in :class:`BoardContents`. ``render(profile, contents,
conditions, seed=...)`` is deterministic.

Colours of the pegs come from :data:`NOMINAL_RGB`, varied per peg set
(``Conditions.peg_set``) and per peg, so a reader must calibrate rather than
assume.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import BadInput
from pegwatch.vision.markers import marker_image
from pegwatch.vision.profile import BoardProfile

logger = logging.getLogger(__name__)

EMPTY = "empty"

NOMINAL_RGB: dict[str, tuple[int, int, int]] = {
    "red": (196, 28, 36),
    "orange": (238, 118, 22),
    "yellow": (244, 206, 34),
    "green": (28, 146, 62),
    "blue": (24, 70, 186),
    "purple": (108, 42, 148),
    "pink": (238, 118, 168),
    "brown": (112, 64, 34),
    "cyan": (30, 176, 208),
    "white": (232, 232, 226),
    "black": (28, 28, 30),
}
"""Nominal sRGB of each peg colour name the renderer knows."""

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


def score(secret: Sequence[str], guess: Sequence[str]) -> tuple[int, int]:
    """(right place, right colour) of ``guess`` against ``secret``; "empty" counts as a colour."""
    black = sum(1 for s, g in zip(secret, guess, strict=True) if s == g)
    common = 0
    for c in set(guess):
        common += min(sum(1 for s in secret if s == c), sum(1 for g in guess if g == c))
    return black, common - black


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
        keys.append(score(secret, g))
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


# --- what is random about the photo ---------------------------------------


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
    with specular ``glare`` in 0..1.

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


def _ellipse(cx: float, cy: float, rx: float, ry: float, ang: float, n: int = 16) -> Polygon:
    ca, sa = math.cos(ang), math.sin(ang)
    return tuple(
        (cx + rx * math.cos(t) * ca - ry * math.sin(t) * sa, cy + rx * math.cos(t) * sa + ry * math.sin(t) * ca)
        for t in np.linspace(0, 2 * math.pi, n, endpoint=False)
    )


def _hand_polygons(
    profile: BoardProfile, rng: np.random.Generator, rows: tuple[int, int], reach: float
) -> tuple[Polygon, ...]:
    """A hand reaching over rows[0]..rows[1] from the near or far long edge, arm to outside the frame.

    Fingers (with gaps between them), palm, thumb and arm, in board mm. The
    fingertips get ``reach`` (0..1) of the way across the holes.
    """
    ys = [y for r in rows for _x, y in profile.hole_centres_mm(r) + profile.key_centres_mm(r)]
    y_lo, y_hi = min(ys) - 3.0, max(ys) + 3.0
    x0 = profile.row_box_mm(rows[0])[0]
    b1 = profile.row_box_mm(rows[1])
    x1 = b1[0] + b1[2]
    cx = (x0 + x1) / 2 + rng.uniform(-5, 5)
    from_below = bool(rng.random() < 0.6)
    d = 1.0 if from_below else -1.0  # direction from the fingertips to the wrist
    tip = y_hi - reach * (y_hi - y_lo) if from_below else y_lo + reach * (y_hi - y_lo)
    ang = math.radians(rng.uniform(-20, 20))
    ca, sa = math.cos(ang), math.sin(ang)

    def at(u: float, v: float) -> Point:
        # u across the hand, v from the fingertips towards the wrist.
        return (cx + u * ca - d * v * sa, tip + u * sa + d * v * ca)

    palm_w = max(40.0, min(90.0, x1 - x0)) * rng.uniform(0.9, 1.1)
    finger_len = rng.uniform(55, 75)
    polys: list[Polygon] = []
    # Four fingers, slightly spread, the middle ones longest.
    for k, (frac, length) in enumerate(((-0.375, 0.85), (-0.125, 1.0), (0.125, 0.95), (0.375, 0.78))):
        u = frac * palm_w + (k - 1.5) * rng.uniform(0.0, 2.0)
        fl = finger_len * length
        fx, fy = at(u, finger_len - fl / 2)
        polys.append(_ellipse(fx, fy, palm_w / 8.0, fl / 2 + 4, ang + rng.uniform(-0.06, 0.06)))
    px, py = at(0.0, finger_len + 40.0)
    polys.append(_ellipse(px, py, palm_w / 2, 48.0, ang, 20))
    tx, ty = at(-d * 0.62 * palm_w if rng.random() < 0.5 else d * 0.62 * palm_w, finger_len + 35.0)
    polys.append(_ellipse(tx, ty, palm_w / 7, 30.0, ang + d * 0.5, 12))
    # The arm: a band from the wrist to far outside the image.
    w0, w1 = at(-palm_w * 0.42, finger_len + 80.0), at(palm_w * 0.42, finger_len + 80.0)
    e0, e1 = at(-palm_w * 0.6, finger_len + 600.0), at(palm_w * 0.6, finger_len + 600.0)
    polys.append((w0, w1, e1, e0))
    return tuple(polys)


def random_conditions(
    rng: np.random.Generator,
    *,
    difficulty: str = "hard",
    profile: BoardProfile | None = None,
    hand_probability: float | None = None,
    peg_set: int | None = None,
) -> Conditions:
    """Random photo conditions. ``difficulty`` is "easy", "medium" or "hard".

    The hard set is what a real table throws at the camera: tilt up to 15°,
    barrel distortion, 2:1 light gradients, tungsten or daylight casts,
    exposure ±35 %, glare, soft shadows, noise, defocus, JPEG 40–90, a hand
    over some rows in a third of the photos, loose pegs and half-covered
    markers. ``profile`` (default invicta-12x4) sizes the hand and keeps the
    tray inside the frame.
    """
    from pegwatch.vision.profile import load_profile

    if difficulty not in ("easy", "medium", "hard"):
        raise RenderError(f"difficulty {difficulty!r} is not easy, medium or hard")
    p = profile or load_profile()
    hard = difficulty == "hard"
    med = difficulty == "medium"
    s = 1.0 if hard else 0.5 if med else 0.0

    def u(a: float, b: float) -> float:
        return float(rng.uniform(a, b))

    c = Conditions(
        focal_px=u(900, 1100),
        yaw_deg=u(-8, 8) * s,
        tilt_x_deg=u(-15, 15) * s,
        tilt_y_deg=u(-15, 15) * s,
        offset_px=(u(-60, 60) * s, u(-30, 30) * s),
        k1=u(-0.10, 0.0) * s,
        exposure=1.0 + u(-0.35, 0.3) * s,
        light_ratio=1.0 + u(0.0, 1.0) * s,
        light_angle_deg=u(0, 360),
        colour_cast=_random_cast(rng, s),
        vignette=u(0.0, 0.35) * s,
        shadow=(
            (u(0, p.size_mm[0]), u(0, p.size_mm[1]), u(30, 90), u(0.2, 0.45))
            if rng.random() < 0.4 * s
            else None
        ),
        light_azimuth_deg=u(0, 360),
        light_elevation_deg=u(40, 75),
        glare=u(0.15, 0.9) if hard else u(0.1, 0.4),
        peg_shadow=u(0.15, 0.5),
        noise_sigma=u(1.0, 5.0) if hard else u(0.5, 2.0),
        blur_sigma=u(0.0, 1.3) * s,
        jpeg_quality=int(rng.integers(40, 91)) if hard else (int(rng.integers(70, 96)) if med else None),
        skin_rgb=SKIN_RGB[int(rng.integers(len(SKIN_RGB)))],
        peg_set=int(rng.integers(0, 1 << 16)) if peg_set is None else peg_set,
    )
    hp = (0.33 if hard else 0.15 if med else 0.0) if hand_probability is None else hand_probability
    if rng.random() < hp:
        r0 = int(rng.integers(1, p.rows + 1))
        r1 = min(p.rows, r0 + int(rng.integers(0, 3)))
        c = replace(c, hand=_hand_polygons(p, rng, (r0, r1), reach=u(0.1, 1.0)))
    if hard or med:
        loose = []
        for _ in range(int(rng.integers(0, 5 if hard else 3))):
            side = int(rng.integers(4))
            w, h = p.size_mm
            m = p.render.tray_margin_mm
            pos = [
                (u(0, w), u(-m + 4, -4)),
                (u(0, w), u(h + 4, h + m - 4)),
                (u(-m + 4, -4), u(0, h)),
                (u(w + 4, w + m - 4), u(0, h)),
            ][side]
            colour = list(NOMINAL_RGB)[int(rng.integers(len(NOMINAL_RGB)))]
            loose.append(LoosePeg(pos, u(0, 360), colour, key=bool(rng.random() < 0.3)))
        covered: tuple[int, ...] = ()
        if hard and p.markers and rng.random() < 0.3:
            covered = (p.markers[int(rng.integers(len(p.markers)))].id,)
        c = replace(c, loose_pegs=tuple(loose), covered_markers=covered)
    return _fit_in_frame(p, c)


def _random_cast(rng: np.random.Generator, s: float) -> tuple[float, float, float]:
    kind = rng.random()
    if s == 0 or kind < 0.3:
        r, g, b = 1.0, 1.0, 1.0
    elif kind < 0.65:  # warm tungsten
        r, g, b = 1.0 + 0.2 * s * rng.random(), 1.0, 1.0 - 0.3 * s * rng.random()
    else:  # cool daylight / LED
        r, g, b = 1.0 - 0.15 * s * rng.random(), 1.0, 1.0 + 0.15 * s * rng.random()
    j = 0.03 * s
    return (r + float(rng.uniform(-j, j)), g, b + float(rng.uniform(-j, j)))


def _fit_in_frame(p: BoardProfile, c: Conditions) -> Conditions:
    """Move the camera back until the whole tray is in the frame."""
    m = p.render.tray_margin_mm
    w, h = p.size_mm
    tray = np.array([[-m, -m], [w + m, -m], [w + m, h + m], [-m, h + m]], dtype=np.float64)
    d = max(c.distance_mm, 1.04 * c.focal_px * max((w + 2 * m) / c.width, (h + 2 * m) / c.height))
    for _ in range(40):
        c = replace(c, distance_mm=d)
        pts = _distort(c, _apply_h(_tray_to_image(p, c), tray))
        if (
            pts[:, 0].min() >= 4
            and pts[:, 1].min() >= 4
            and pts[:, 0].max() <= c.width - 5
            and pts[:, 1].max() <= c.height - 5
        ):
            return c
        d *= 1.04
    return c


# --- camera geometry --------------------------------------------------------


def _rot(axis: str, deg: float) -> NDArray[np.float64]:
    a = math.radians(deg)
    ca, sa = math.cos(a), math.sin(a)
    if axis == "x":
        return np.array([[1, 0, 0], [0, ca, -sa], [0, sa, ca]], dtype=np.float64)
    if axis == "y":
        return np.array([[ca, 0, sa], [0, 1, 0], [-sa, 0, ca]], dtype=np.float64)
    return np.array([[ca, -sa, 0], [sa, ca, 0], [0, 0, 1]], dtype=np.float64)


def _tray_to_image(p: BoardProfile, c: Conditions) -> NDArray[np.float64]:
    """Homography from tray mm (= board mm of an un-nudged board) to undistorted image px."""
    w, h = p.size_mm
    cx, cy = c.width / 2.0, c.height / 2.0
    k = np.array([[c.focal_px, 0, cx], [0, c.focal_px, cy], [0, 0, 1]], dtype=np.float64)
    r = _rot("z", c.yaw_deg) @ _rot("x", c.tilt_x_deg) @ _rot("y", c.tilt_y_deg)
    t = np.array([c.offset_px[0] * c.distance_mm / c.focal_px, c.offset_px[1] * c.distance_mm / c.focal_px, c.distance_mm])
    m = np.column_stack([r[:, 0], r[:, 1], t])
    centre = np.array([[1, 0, -w / 2], [0, 1, -h / 2], [0, 0, 1]], dtype=np.float64)
    hm = k @ m @ centre
    out: NDArray[np.float64] = hm / hm[2, 2]
    return out


def _board_to_tray(p: BoardProfile, c: Conditions) -> NDArray[np.float64]:
    """The nudge of the board on its tray: rotation about the board centre, then shift."""
    dx, dy, deg = c.board_offset_mm
    w, h = p.size_mm
    a = math.radians(deg)
    ca, sa = math.cos(a), math.sin(a)
    to_c = np.array([[1, 0, -w / 2], [0, 1, -h / 2], [0, 0, 1]], dtype=np.float64)
    rot = np.array([[ca, -sa, 0], [sa, ca, 0], [0, 0, 1]], dtype=np.float64)
    back = np.array([[1, 0, w / 2 + dx], [0, 1, h / 2 + dy], [0, 0, 1]], dtype=np.float64)
    out: NDArray[np.float64] = back @ rot @ to_c
    return out


def _apply_h(hm: NDArray[np.float64], pts: NDArray[np.float64]) -> NDArray[np.float64]:
    pts = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    q = np.column_stack([pts, np.ones(len(pts))]) @ hm.T
    out: NDArray[np.float64] = q[:, :2] / q[:, 2:3]
    return out


def _distort(c: Conditions, px: NDArray[np.float64]) -> NDArray[np.float64]:
    """Apply barrel distortion (undistorted px -> distorted px)."""
    if c.k1 == 0.0:
        return px
    cx, cy = c.width / 2.0, c.height / 2.0
    x = (px[:, 0] - cx) / c.focal_px
    y = (px[:, 1] - cy) / c.focal_px
    f = 1.0 + c.k1 * (x * x + y * y)
    return np.column_stack([cx + x * f * c.focal_px, cy + y * f * c.focal_px])


# --- the result ---------------------------------------------------------------


@dataclass(frozen=True)
class Rendered:
    """A synthetic photo and its ground truth.

    ``board_to_image`` maps board mm to image px before lens distortion;
    :meth:`project` includes the distortion. ``key_positions[i]`` gives, for
    row ``i + 1``, the colour in each key hole (profile order) or "empty".
    """

    image: NDArray[np.uint8]
    board_to_image: NDArray[np.float64]
    tray_to_image: NDArray[np.float64]
    corners_px: NDArray[np.float64]
    occluded_rows: frozenset[int]
    occluded_secret: bool
    occluded_markers: frozenset[int]
    contents: BoardContents
    key_positions: tuple[tuple[str, ...], ...]
    conditions: Conditions
    profile: str
    hand_mask: NDArray[np.uint8] | None = field(default=None, repr=False)

    def project(self, points_mm: Sequence[Point] | NDArray[np.float64]) -> NDArray[np.float64]:
        """Board mm (N×2) to distorted image px (N×2), as the camera sees them."""
        return _distort(self.conditions, _apply_h(self.board_to_image, np.asarray(points_mm, dtype=np.float64)))


# --- drawing ------------------------------------------------------------------


def _peg_rgb(name: str, peg_set: int, jitter: float, rng: np.random.Generator) -> NDArray[np.float32]:
    """The sRGB of a peg: the nominal colour, varied per peg set and per peg."""
    base = np.array(NOMINAL_RGB.get(name, NOMINAL_RGB["white"]), dtype=np.float32)
    set_rng = np.random.default_rng([peg_set, sum(map(ord, name))])
    base = base * (1.0 + set_rng.uniform(-0.08, 0.08, 3).astype(np.float32)) + set_rng.uniform(-6, 6, 3).astype(np.float32)
    base = base * (1.0 + rng.uniform(-jitter, jitter, 3).astype(np.float32))
    out: NDArray[np.float32] = np.clip(base, 0, 255)
    return out


@lru_cache(maxsize=64)
def _dome_maps(
    radius_px: float, azimuth_deg: float, elevation_deg: float, shininess: float, shadow_px: float
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32], NDArray[np.float32], int]:
    """Alpha, diffuse shade, specular and cast-shadow maps of a lit dome (a peg head).

    The light comes from ``azimuth`` (degrees, board x towards y) at
    ``elevation``; the camera looks straight down, so the highlight sits
    towards the light and the shadow falls away from it.
    """
    half = math.ceil(radius_px * 1.25 + shadow_px + 2)
    yy, xx = np.mgrid[-half : half + 1, -half : half + 1].astype(np.float32)
    r = np.sqrt(xx * xx + yy * yy) / radius_px
    alpha = np.clip((1.0 - r) * radius_px + 0.5, 0, 1).astype(np.float32)
    nz = np.sqrt(np.clip(1 - r * r, 0, 1))
    az, el = math.radians(azimuth_deg), math.radians(elevation_deg)
    lx, ly, lz = math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)
    ndotl = np.clip((xx / radius_px) * lx + (yy / radius_px) * ly + nz * lz, 0, 1)
    shade = (0.32 + 0.78 * ndotl).astype(np.float32)
    # Rim darkening: the dome turns away from the camera at its edge.
    shade *= (0.55 + 0.45 * np.clip(nz * 1.6, 0, 1)).astype(np.float32)
    hx, hy, hz = lx, ly, lz + 1.0
    hn = math.sqrt(hx * hx + hy * hy + hz * hz)
    ndoth = np.clip(((xx / radius_px) * hx + (yy / radius_px) * hy + nz * hz) / hn, 0, 1)
    spec = (ndoth**shininess * (r < 1)).astype(np.float32)
    sx, sy = -math.cos(az) * shadow_px, -math.sin(az) * shadow_px
    rs = np.sqrt((xx - sx) ** 2 + (yy - sy) ** 2) / (radius_px * 1.05)
    shadow = np.clip(1.2 - rs, 0, 1).astype(np.float32) ** 1.5
    return alpha, shade, spec, shadow, half


@dataclass
class _Canvas:
    """The top-down texture in tray mm, with its scale and origin."""

    img: NDArray[np.uint8]
    ppm: float
    origin: Point  # tray mm at pixel (0, 0)

    def px(self, x: float, y: float) -> tuple[float, float]:
        return ((x - self.origin[0]) * self.ppm, (y - self.origin[1]) * self.ppm)

    def ipts(self, pts: NDArray[np.float64]) -> NDArray[np.int32]:
        """Tray mm to fixed-point (4 fractional bits) pixel coordinates for cv2 drawing."""
        q = (pts - np.array(self.origin)) * self.ppm * 16.0
        out: NDArray[np.int32] = np.round(q).astype(np.int32).reshape(-1, 1, 2)
        return out


_SHIFT = 4  # fractional bits for cv2 drawing


def _blend_dome(
    cv: _Canvas,
    centre_tray: Point,
    radius_mm: float,
    rgb: NDArray[np.float32],
    c: Conditions,
    *,
    ring: float = 0.0,
) -> None:
    """Draw one lit dome (a peg head) with its cast shadow and the dark ring of its hole."""
    rpx = radius_mm * cv.ppm
    shadow_px = 0.18 * rpx * (1.0 / math.tan(math.radians(max(c.light_elevation_deg, 20))))
    alpha, shade, spec, shadow, half = _dome_maps(
        round(rpx * 4) / 4, round(c.light_azimuth_deg / 5) * 5, round(c.light_elevation_deg / 5) * 5, 30.0,
        round(shadow_px * 2) / 2,
    )
    px, py = cv.px(*centre_tray)
    ix, iy = round(px), round(py)
    y0, x0 = iy - half, ix - half
    size = 2 * half + 1
    h, w = cv.img.shape[:2]
    if y0 < 0 or x0 < 0 or y0 + size > h or x0 + size > w:
        return
    region = cv.img[y0 : y0 + size, x0 : x0 + size].astype(np.float32)
    bgr = rgb[::-1]
    # The hole ring and cast shadow darken what is underneath.
    dark = 1.0 - c.peg_shadow * shadow
    if ring > 0:
        ring_alpha = _ring(half, rpx)
        dark = dark * (1.0 - ring * ring_alpha)
    region *= dark[:, :, None]
    peg = bgr[None, None, :] * shade[:, :, None] + (255.0 * 1.4 * c.glare) * spec[:, :, None]
    a = alpha[:, :, None]
    region = region * (1.0 - a) + peg * a
    cv.img[y0 : y0 + size, x0 : x0 + size] = np.clip(region, 0, 255).astype(np.uint8)


@lru_cache(maxsize=64)
def _ring(half: int, rpx: float) -> NDArray[np.float32]:
    yy, xx = np.mgrid[-half : half + 1, -half : half + 1].astype(np.float32)
    r = np.sqrt(xx * xx + yy * yy) / rpx
    out: NDArray[np.float32] = np.clip(1.0 - np.abs(r - 1.07) / 0.10, 0, 1).astype(np.float32)
    return out


def _hole(cv: _Canvas, centre_tray: Point, radius_mm: float, board_bgr: NDArray[np.float32]) -> None:
    """An empty hole: a dark circle with a dimly lit bottom."""
    x, y = cv.px(*centre_tray)
    s = 1 << _SHIFT
    outer = tuple(int(v) for v in (board_bgr * 0.22))
    inner = tuple(int(v) for v in (board_bgr * 0.45 + 10))
    cv2.circle(cv.img, (round(x * s), round(y * s)), round(radius_mm * cv.ppm * s), outer, -1, cv2.LINE_AA, _SHIFT)
    cv2.circle(
        cv.img,
        (round((x + 0.12 * radius_mm * cv.ppm) * s), round((y + 0.12 * radius_mm * cv.ppm) * s)),
        round(radius_mm * 0.5 * cv.ppm * s),
        inner,
        -1,
        cv2.LINE_AA,
        _SHIFT,
    )


def _loose_peg(cv: _Canvas, peg: LoosePeg, code_d: float, key_d: float, c: Conditions, rng: np.random.Generator) -> None:
    """A peg lying on its side: a stem and a head, seen from above."""
    d = key_d * 1.1 if peg.key else code_d
    rgb = _peg_rgb(peg.colour, c.peg_set, 0.03, rng)
    bgr = tuple(float(v) for v in rgb[::-1])
    dark = tuple(float(v) * 0.6 for v in rgb[::-1])
    a = math.radians(peg.angle_deg)
    ux, uy = math.cos(a), math.sin(a)
    cx, cy = peg.centre_mm
    stem_len, stem_w = d * 1.3, d * 0.45
    q = np.array(
        [
            (cx - uy * stem_w / 2, cy + ux * stem_w / 2),
            (cx + ux * stem_len - uy * stem_w / 2, cy + uy * stem_len + ux * stem_w / 2),
            (cx + ux * stem_len + uy * stem_w / 2, cy + uy * stem_len - ux * stem_w / 2),
            (cx + uy * stem_w / 2, cy - ux * stem_w / 2),
        ]
    )
    shadow_off = np.array([0.8, 0.8])
    cv2.fillConvexPoly(cv.img, cv.ipts(q + shadow_off), (40, 40, 40), cv2.LINE_AA, _SHIFT)
    cv2.fillConvexPoly(cv.img, cv.ipts(q), dark, cv2.LINE_AA, _SHIFT)
    # The head lies on its rim: an ellipse across the stem's end.
    x, y = cv.px(cx, cy)
    s = 1 << _SHIFT
    axes = (round(d * 0.25 * cv.ppm * s), round(d * 0.5 * cv.ppm * s))
    cv2.ellipse(cv.img, (round(x * s), round(y * s)), axes, peg.angle_deg, 0, 360, bgr, -1, cv2.LINE_AA, _SHIFT)
    hx, hy = cv.px(cx - ux * d * 0.05, cy - uy * d * 0.05)
    cv2.ellipse(
        cv.img,
        (round(hx * s), round(hy * s)),
        (max(1, axes[0] // 3), max(1, axes[1] // 3)),
        peg.angle_deg,
        0,
        360,
        tuple(min(255.0, v * 1.25 + 40) for v in bgr),
        -1,
        cv2.LINE_AA,
        _SHIFT,
    )


_WOOD_BGR = np.array([74, 104, 142], dtype=np.float32)


def _table_colour(y_mm: NDArray[np.float32], phase: float) -> NDArray[np.uint8]:
    """The wooden table's colour at texture row ``y_mm`` (mm from the texture top): grain along x."""
    grain = 1.0 + 0.10 * np.sin(y_mm / np.float32(2.3) + np.float32(phase)) + 0.05 * np.sin(y_mm / np.float32(0.7))
    out: NDArray[np.uint8] = np.clip(_WOOD_BGR[None, :] * grain[:, None], 0, 255).astype(np.uint8)
    return out


def _draw_texture(
    p: BoardProfile,
    contents: BoardContents,
    c: Conditions,
    rng: np.random.Generator,
    ppm: float,
    table_phase: float,
) -> tuple[_Canvas, NDArray[np.float64], tuple[tuple[str, ...], ...]]:
    w, h = p.size_mm
    m = p.render.tray_margin_mm
    table = 16.0  # the rest of the table comes from reflecting the texture
    origin = (-m - table, -m - table)
    tw, th = round((w + 2 * (m + table)) * ppm), round((h + 2 * (m + table)) * ppm)
    tex = np.empty((th, tw, 3), dtype=np.uint8)
    # The table: wood with soft grain along x.
    column = _table_colour(np.arange(th, dtype=np.float32) / np.float32(ppm), table_phase)[:, None, :]
    tex[:] = cv2.resize(column, (tw, th), interpolation=cv2.INTER_NEAREST)
    cv = _Canvas(tex, ppm, origin)
    tray_bgr = tuple(float(v) for v in p.render.tray_rgb[::-1])
    tray_pts = np.array([[-m, -m], [w + m, -m], [w + m, h + m], [-m, h + m]], dtype=np.float64)
    cv2.fillConvexPoly(tex, cv.ipts(tray_pts), tray_bgr, cv2.LINE_AA, _SHIFT)

    if c.markers:
        for mk in p.markers:
            img = marker_image(p.aruco_dictionary, mk.id, max(8, round(mk.size_mm * ppm)), quiet_zone=True)
            x, y = cv.px(mk.centre_mm[0], mk.centre_mm[1])
            hh, ww = img.shape
            x0, y0 = round(x - ww / 2), round(y - hh / 2)
            if x0 < 0 or y0 < 0 or x0 + ww > tw or y0 + hh > th:
                continue
            # Printed paper is not pure white or black.
            tex[y0 : y0 + hh, x0 : x0 + ww] = (img[:, :, None].astype(np.float32) * (220 / 255) + 22).astype(np.uint8)
            if mk.id in c.covered_markers:
                cover_w = mk.size_mm * rng.uniform(0.3, 0.55)
                side = int(rng.integers(4))
                cx, cy, s2 = mk.centre_mm[0], mk.centre_mm[1], mk.size_mm / 2 + 3
                rect = [
                    (cx - s2 - 2, cy - s2 - 2, cx - s2 + cover_w, cy + s2 + 2),
                    (cx + s2 - cover_w, cy - s2 - 2, cx + s2 + 2, cy + s2 + 2),
                    (cx - s2 - 2, cy - s2 - 2, cx + s2 + 2, cy - s2 + cover_w),
                    (cx - s2 - 2, cy + s2 - cover_w, cx + s2 + 2, cy + s2 + 2),
                ][side]
                q = np.array([(rect[0], rect[1]), (rect[2], rect[1]), (rect[2], rect[3]), (rect[0], rect[3])])
                cv2.fillConvexPoly(tex, cv.ipts(q), (150, 170, 190), cv2.LINE_AA, _SHIFT)

    b2t = _board_to_tray(p, c)

    def T(pt: Point) -> Point:
        q = _apply_h(b2t, np.array([pt]))[0]
        return (float(q[0]), float(q[1]))

    board_bgr = np.array(p.render.board_rgb[::-1], dtype=np.float32)
    corners = _apply_h(b2t, np.array(p.corners_mm()))
    # A soft drop shadow under the board's edge, then the board.
    cv2.fillConvexPoly(tex, cv.ipts(corners + 1.2), tuple(float(v) * 0.55 for v in p.render.tray_rgb[::-1]), cv2.LINE_AA, _SHIFT)
    cv2.fillConvexPoly(tex, cv.ipts(corners), tuple(float(v) for v in board_bgr), cv2.LINE_AA, _SHIFT)
    # A raised rim just inside the edge catches the light.
    inset = np.array([[1.2, 1.2], [-1.2, 1.2], [-1.2, -1.2], [1.2, -1.2]])
    rim = _apply_h(b2t, np.array(p.corners_mm()) + inset)
    cv2.polylines(tex, [cv.ipts(rim)], True, tuple(float(v) * 1.25 + 8 for v in board_bgr), max(1, round(0.5 * ppm)), cv2.LINE_AA, _SHIFT)

    code_r = p.code_hole_diameter_mm / 2.0
    key_r = p.key_hole_diameter_mm / 2.0
    jitter_mm = 0.35
    key_positions: list[tuple[str, ...]] = []
    for row in range(1, p.rows + 1):
        guess = contents.guesses[row - 1]
        for i, centre in enumerate(p.hole_centres_mm(row)):
            colour = guess[i] if guess is not None else EMPTY
            tc = T(centre)
            if colour == EMPTY:
                _hole(cv, tc, code_r * 0.62, board_bgr)
            else:
                jx, jy = rng.uniform(-jitter_mm, jitter_mm, 2)
                _blend_dome(cv, (tc[0] + jx, tc[1] + jy), code_r, _peg_rgb(colour, c.peg_set, 0.025, rng), c, ring=0.55)
        k = contents.keys[row - 1]
        slots = [EMPTY] * p.key_holes
        if k is not None:
            pegs = [p.right_place_key] * k[0] + [p.right_colour_key] * k[1]
            for slot, colour in zip(rng.permutation(p.key_holes)[: len(pegs)], pegs, strict=True):
                slots[int(slot)] = colour
        key_positions.append(tuple(slots))
        for centre, colour in zip(p.key_centres_mm(row), slots, strict=True):
            tc = T(centre)
            if colour == EMPTY:
                _hole(cv, tc, key_r * 0.7, board_bgr)
            else:
                jx, jy = rng.uniform(-0.2, 0.2, 2)
                _blend_dome(cv, (tc[0] + jx, tc[1] + jy), key_r * 1.05, _peg_rgb(colour, c.peg_set, 0.03, rng), c, ring=0.45)

    if contents.secret is not None and contents.shield_open:
        for centre, colour in zip(p.secret_centres_mm(), contents.secret, strict=True):
            tc = T(centre)
            if colour == EMPTY:
                _hole(cv, tc, code_r * 0.62, board_bgr)
            else:
                _blend_dome(cv, tc, code_r, _peg_rgb(colour, c.peg_set, 0.025, rng), c, ring=0.55)
    else:
        for centre in p.secret_centres_mm():
            _hole(cv, T(centre), code_r * 0.62, board_bgr)
        if p.shield_mm is not None:
            x, y, sw, sh = p.shield_mm
            q = _apply_h(b2t, np.array([(x, y), (x + sw, y), (x + sw, y + sh), (x, y + sh)]))
            shield_bgr = np.array(p.render.shield_rgb[::-1], dtype=np.float32)
            cv2.fillConvexPoly(tex, cv.ipts(q + 1.5), tuple(float(v) * 0.5 for v in board_bgr), cv2.LINE_AA, _SHIFT)
            cv2.fillConvexPoly(tex, cv.ipts(q), tuple(float(v) for v in shield_bgr), cv2.LINE_AA, _SHIFT)
            ridge = _apply_h(b2t, np.array([(x + sw * 0.45, y + 2), (x + sw * 0.55, y + 2), (x + sw * 0.55, y + sh - 2), (x + sw * 0.45, y + sh - 2)]))
            cv2.fillConvexPoly(tex, cv.ipts(ridge), tuple(float(v) * 1.5 + 15 for v in shield_bgr), cv2.LINE_AA, _SHIFT)

    for peg in c.loose_pegs:
        _loose_peg(cv, peg, p.code_hole_diameter_mm, p.key_hole_diameter_mm, c, rng)
    return cv, b2t, tuple(key_positions)


@lru_cache(maxsize=8)
def _remap_maps(
    width: int,
    height: int,
    focal: float,
    k1: float,
    hm_bytes: bytes,
    origin: Point,
    ppm: float,
    tex_size: tuple[int, int],
) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.intp], NDArray[np.int64]]:
    """For each output (distorted) pixel, where to sample the texture.

    Also the flat indices of the pixels that fall outside the texture (more
    table) and the texture row each of them would be in. Cached: a static
    camera (the demo) computes this once.
    """
    hm = np.frombuffer(hm_bytes, dtype=np.float64).reshape(3, 3)
    inv = np.linalg.inv(hm).astype(np.float32)
    cx, cy = width / 2.0, height / 2.0
    # The map is smooth: compute it on a coarse grid and interpolate.
    # Node k sits at pixel k*step + (step - 1)/2, where cv2.resize's
    # INTER_LINEAR puts source sample k, so the up-scaled map needs no shift.
    step = 4
    half = (step - 1) / 2.0
    gw, gh = -(-width // step), -(-height // step)
    xs = (np.arange(gw, dtype=np.float32) * step + half - cx) / focal
    ys = (np.arange(gh, dtype=np.float32) * step + half - cy) / focal
    xd, yd = np.meshgrid(xs, ys)
    if k1 != 0.0:
        xu, yu = xd.copy(), yd.copy()
        for _ in range(3):  # invert x_d = x_u (1 + k1 r_u^2) by fixed point
            f = 1.0 + k1 * (xu * xu + yu * yu)
            xu, yu = xd / f, yd / f
    else:
        xu, yu = xd, yd
    u = xu * focal + cx
    v = yu * focal + cy
    den = inv[2, 0] * u + inv[2, 1] * v + inv[2, 2]
    bx = (inv[0, 0] * u + inv[0, 1] * v + inv[0, 2]) / den
    by = (inv[1, 0] * u + inv[1, 1] * v + inv[1, 2]) / den
    mx = ((bx - origin[0]) * ppm).astype(np.float32)
    my = ((by - origin[1]) * ppm).astype(np.float32)
    big = (gw * step, gh * step)
    mxb = np.ascontiguousarray(cv2.resize(mx, big, interpolation=cv2.INTER_LINEAR)[:height, :width])
    myb = np.ascontiguousarray(cv2.resize(my, big, interpolation=cv2.INTER_LINEAR)[:height, :width])
    tw, th = tex_size
    outside = np.flatnonzero((mxb < 0) | (myb < 0) | (mxb > tw - 1) | (myb > th - 1))
    rows = np.floor(myb.ravel()[outside]).astype(np.int64)
    return mxb, myb, outside, rows


def _light_field(p: BoardProfile, c: Conditions, t2i: NDArray[np.float64]) -> NDArray[np.float32]:
    """Multiplicative light per pixel and channel (BGR), computed coarse then scaled up."""
    sw, sh = max(2, c.width // 16), max(2, c.height // 16)
    ys, xs = np.mgrid[0:sh, 0:sw].astype(np.float32)
    u = (xs + 0.5) * (c.width / sw)
    v = (ys + 0.5) * (c.height / sh)
    # The gradient runs across the board: project image points to board mm.
    inv = np.linalg.inv(t2i)
    den = inv[2, 0] * u + inv[2, 1] * v + inv[2, 2]
    bx = (inv[0, 0] * u + inv[0, 1] * v + inv[0, 2]) / den
    by = (inv[1, 0] * u + inv[1, 1] * v + inv[1, 2]) / den
    w, h = p.size_mm
    a = math.radians(c.light_angle_deg)
    half_extent = 0.5 * (abs(math.cos(a)) * w + abs(math.sin(a)) * h)
    t = ((bx - w / 2) * math.cos(a) + (by - h / 2) * math.sin(a)) / max(half_extent, 1.0)
    t = np.clip(t, -1.5, 1.5)
    # ratio : 1 between the two ends of the board, geometric in between.
    light = np.power(np.float32(c.light_ratio), -0.5 * t).astype(np.float32)
    if c.vignette:
        rr = ((u - c.width / 2) ** 2 + (v - c.height / 2) ** 2) / ((c.width / 2) ** 2 + (c.height / 2) ** 2)
        light *= 1.0 - c.vignette * rr
    if c.shadow is not None:
        sx, sy, sr, depth = c.shadow
        d2 = ((bx - sx) ** 2 + (by - sy) ** 2) / (sr * sr)
        light *= 1.0 - depth * np.exp(-d2 * 1.5)
    light *= c.exposure
    r, g, b = c.colour_cast
    small = light.astype(np.float32)[:, :, None] * np.array([b, g, r], dtype=np.float32)[None, None, :]
    out: NDArray[np.float32] = cv2.resize(small, (c.width, c.height), interpolation=cv2.INTER_LINEAR)
    return out


def _draw_hand(
    img: NDArray[np.float32], c: Conditions, polys_px: list[NDArray[np.float64]], rng: np.random.Generator
) -> NDArray[np.uint8]:
    """Composite a skin-coloured hand and arm with its shading and soft shadow; return its mask."""
    mask = np.zeros((c.height, c.width), dtype=np.uint8)
    for q in polys_px:
        cv2.fillPoly(mask, [np.round(q * 16).astype(np.int32).reshape(-1, 1, 2)], 255, cv2.LINE_AA, 4)
    x, y, w, h = cv2.boundingRect(mask)
    if w == 0 or h == 0:
        return mask
    # Work only around the hand: the shadow reaches about 60 px beyond it.
    pad = 64
    x0, y0 = max(0, x - pad), max(0, y - pad)
    x1, y1 = min(c.width, x + w + pad), min(c.height, y + h + pad)
    roi = img[y0:y1, x0:x1]
    m = mask[y0:y1, x0:x1].astype(np.float32) / 255.0
    sw, sh = max(1, (x1 - x0) // 4), max(1, (y1 - y0) // 4)
    soft = cv2.GaussianBlur(cv2.resize(m, (sw, sh), interpolation=cv2.INTER_AREA), (0, 0), 4.0)
    shadow = np.zeros_like(soft)
    dy, dx = 6, 8
    shadow[dy:, dx:] = soft[: sh - dy, : sw - dx] if sh > dy and sw > dx else 0.0
    soft_big = cv2.resize(soft, (x1 - x0, y1 - y0), interpolation=cv2.INTER_LINEAR)
    shadow_big = cv2.resize(shadow, (x1 - x0, y1 - y0), interpolation=cv2.INTER_LINEAR)
    roi *= (1.0 - 0.45 * shadow_big)[:, :, None]
    skin = np.array(c.skin_rgb[::-1], dtype=np.float32) * np.float32(rng.uniform(0.92, 1.08))
    # Rounded limbs: darker towards the outline.
    shade = 0.55 + 0.5 * np.clip((soft_big - 0.45) * 2.2, 0, 1)
    a = m[:, :, None]
    roi *= 1.0 - a
    roi += skin[None, None, :] * (shade[:, :, None] * a)
    return mask


@lru_cache(maxsize=2)
def _noise_bank(height: int, width: int) -> NDArray[np.float32]:
    """Unit Gaussian noise a little larger than a frame; each render takes a shifted crop.

    Drawing 2.7 million normals per frame would cost more than the rest of
    the noise model is worth.
    """
    bank = np.empty((height + 64, width + 64, 3), dtype=np.float32)
    rng = np.random.default_rng(20260101)
    bank[:] = rng.standard_normal(bank.shape, dtype=np.float32)
    return bank


def render(profile: BoardProfile, contents: BoardContents, conditions: Conditions, *, seed: int) -> Rendered:
    """Render a photo of ``contents`` on ``profile``'s board under ``conditions``.

    Deterministic for a given ``seed``. Takes well under 150 ms at 1280×720.
    """
    contents.check(profile)
    c = conditions
    if not (64 <= c.width <= 4096 and 64 <= c.height <= 4096):
        raise RenderError(f"image size {c.width}x{c.height} is out of range")
    rng = np.random.default_rng(seed)
    t2i = _tray_to_image(profile, c)
    # Texture density: `supersample` texels per output pixel at the board centre.
    centre = np.array([[profile.size_mm[0] / 2, profile.size_mm[1] / 2], [profile.size_mm[0] / 2 + 1, profile.size_mm[1] / 2]])
    img_ppm = float(np.linalg.norm(np.diff(_apply_h(t2i, centre), axis=0)))
    factor = max(1, round(c.supersample))
    ss_ppm = max(2.0, img_ppm * 1.15 * factor)
    table_phase = float(rng.uniform(0, 6.3))
    cv, b2t, key_positions = _draw_texture(profile, contents, c, rng, ss_ppm, table_phase)
    # Box-filter the supersampled texture down to about one texel per pixel
    # (an integer factor keeps INTER_AREA on its fast path).
    th, tw = (cv.img.shape[0] // factor) * factor, (cv.img.shape[1] // factor) * factor
    tex = cv2.resize(cv.img[:th, :tw], (tw // factor, th // factor), interpolation=cv2.INTER_AREA)
    ppm_x = ppm_y = ss_ppm / factor
    mx, my, outside, rows = _remap_maps(
        c.width, c.height, c.focal_px, c.k1, t2i.tobytes(), cv.origin, ppm_x, (tex.shape[1], tex.shape[0])
    )
    out = cv2.remap(tex, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    # Beyond the texture lies more table: continue its grain in image space.
    if len(outside):
        # The grain depends on the texture row only: colour each row once.
        lo = int(rows.min())
        lut = _table_colour(np.arange(lo, int(rows.max()) + 1, dtype=np.float32) / np.float32(ppm_y), table_phase)
        out.reshape(-1, 3)[outside] = lut[rows - lo]

    b2i = t2i @ b2t
    b2i = b2i / b2i[2, 2]

    def proj(pts: NDArray[np.float64], h: NDArray[np.float64] = b2i) -> NDArray[np.float64]:
        return _distort(c, _apply_h(h, pts))

    f = out.astype(np.float32)
    hand_mask: NDArray[np.uint8] | None = None
    occluded: set[int] = set()
    occluded_secret = False
    occluded_markers: set[int] = set()
    if c.hand:
        polys = [proj(np.array(poly, dtype=np.float64), t2i) for poly in c.hand]
        hand_mask = _draw_hand(f, c, polys, rng)
        probe = cv2.dilate(hand_mask, np.ones((5, 5), np.uint8))

        def covered(centres: Sequence[Point], radius: float) -> bool:
            ang = np.linspace(0, 2 * math.pi, 8, endpoint=False)
            pts = [(x, y) for x, y in centres] + [
                (x + radius * math.cos(t), y + radius * math.sin(t)) for x, y in centres for t in ang
            ]
            q = np.round(proj(np.array(pts))).astype(int)
            ok = (q[:, 0] >= 0) & (q[:, 0] < c.width) & (q[:, 1] >= 0) & (q[:, 1] < c.height)
            return bool(np.any(probe[q[ok, 1], q[ok, 0]] > 0))

        for row in range(1, profile.rows + 1):
            if covered(profile.hole_centres_mm(row), profile.code_hole_diameter_mm / 2) or covered(
                profile.key_centres_mm(row), profile.key_hole_diameter_mm / 2
            ):
                occluded.add(row)
        occluded_secret = covered(profile.secret_centres_mm(), profile.code_hole_diameter_mm / 2)
        for mk in profile.markers:
            q = np.round(proj(np.array((*mk.corners_mm(), mk.centre_mm)), t2i)).astype(int)
            ok = (q[:, 0] >= 0) & (q[:, 0] < c.width) & (q[:, 1] >= 0) & (q[:, 1] < c.height)
            if np.any(probe[q[ok, 1], q[ok, 0]] > 0):
                occluded_markers.add(mk.id)
    occluded_markers.update(c.covered_markers)

    cv2.multiply(f, _light_field(profile, c, t2i), dst=f)
    if c.blur_sigma > 0.25:
        cv2.GaussianBlur(f, (0, 0), c.blur_sigma, dst=f)
    if c.noise_sigma > 0:
        bank = _noise_bank(c.height, c.width)
        oy, ox = (int(v) for v in rng.integers(0, 64, 2))
        cv2.scaleAdd(bank[oy : oy + c.height, ox : ox + c.width], float(c.noise_sigma), f, dst=f)
    np.clip(f, 0, 255, out=f)
    img: NDArray[np.uint8] = f.astype(np.uint8)
    if c.jpeg_quality is not None:
        encoded, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(c.jpeg_quality)])
        if encoded:
            img = np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR), dtype=np.uint8)

    return Rendered(
        image=img,
        board_to_image=b2i,
        tray_to_image=t2i,
        corners_px=proj(np.array(profile.corners_mm())),
        occluded_rows=frozenset(occluded),
        occluded_secret=occluded_secret,
        occluded_markers=frozenset(occluded_markers),
        contents=contents,
        key_positions=tuple(key_positions),
        conditions=c,
        profile=profile.name,
        hand_mask=hand_mask,
    )
