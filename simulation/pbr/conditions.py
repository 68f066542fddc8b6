"""Everything random about one physically rendered photo, and how it is drawn from a seed.

The numbers are physical where they can be: light colour as a blackbody
temperature in kelvin, lens distortion as OpenCV's k1/k2, blur in pixels,
sensor noise as photons at full scale and read noise, heights in mm. None of
them was chosen by looking at what the reader gets wrong.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from pegwatch.vision.profile import BoardProfile

Vec3 = tuple[float, float, float]

#: Skin albedos (linear RGB), light to dark, and cloth of sleeves (navy, grey, black, red, green).
SKIN = ((0.62, 0.42, 0.32), (0.50, 0.32, 0.22), (0.28, 0.16, 0.10), (0.14, 0.08, 0.05))
CLOTH = ((0.018, 0.022, 0.060), (0.20, 0.20, 0.21), (0.015, 0.015, 0.017), (0.30, 0.03, 0.03), (0.04, 0.12, 0.06))


@dataclass(frozen=True)
class Hand:
    """A hand (with its sleeve) or a bare sleeve over the board, as solids.

    ``over_mm`` is the board point the hand is over; it hovers ``height_mm``
    above the board; the arm comes from ``azimuth_deg`` (0 = +x, 90 = +y, the
    near long edge) and rises towards the player at ``rise_deg``. ``kind`` is
    "hand" (palm, fingers and a sleeve) or "sleeve" (a forearm in cloth lying
    across the board). ``target`` says what it was put over: "row N" or "secret".
    """

    kind: str
    over_mm: tuple[float, float]
    height_mm: float
    azimuth_deg: float
    rise_deg: float
    size: float
    skin: Vec3
    cloth: Vec3
    target: str


@dataclass(frozen=True)
class PbrConditions:
    """One photo: camera, lens, light, people in the way and the sensor.

    The camera (OpenCV's pinhole model) looks from ``distance_mm`` at the
    board point ``look_at_mm``, tilted ``tilt_deg`` from vertical towards
    ``tilt_azimuth_deg`` and rolled ``roll_deg`` about its axis. The board's
    top sits ``board_lift_mm`` above the tray that carries the markers.

    Light: a rectangular area light of ``light_kelvin`` (blackbody colour)
    ``light_size_mm`` wide at ``light_pos_mm``, a second, weaker one of
    ``fill_kelvin`` (mixed light) scaled by ``fill_ratio``, and an ambient
    room of ``ambient`` times the key light's colour temperature ``fill_kelvin``.
    The camera's white balance assumes ``wb_kelvin``.

    Sensor: ``exposure`` (1 = the brightest white just at full scale),
    ``photons`` at full scale (shot noise), ``read_noise`` (of full scale),
    Bayer RGGB demosaiced with ``demosaic`` ("bilinear", "ea" or "vng"), then
    JPEG at ``jpeg_quality``. Blur: Gaussian defocus ``defocus_px`` (sigma)
    and a linear motion smear of ``motion_px`` at ``motion_deg``.
    """

    width: int = 1280
    height: int = 720
    focal_px: float = 1000.0
    distance_mm: float = 380.0
    look_at_mm: tuple[float, float] = (130.0, 42.5)
    tilt_deg: float = 0.0
    tilt_azimuth_deg: float = 0.0
    roll_deg: float = 0.0
    k1: float = 0.0
    k2: float = 0.0
    board_lift_mm: float = 0.0
    light_kelvin: float = 4500.0
    light_pos_mm: Vec3 = (130.0, -60.0, -600.0)
    light_size_mm: float = 250.0
    fill_kelvin: float = 4500.0
    fill_ratio: float = 0.0
    fill_pos_mm: Vec3 = (130.0, 200.0, -500.0)
    ambient: float = 0.15
    wb_kelvin: float = 4500.0
    exposure: float = 0.9
    photons: float = 6000.0
    read_noise: float = 0.002
    demosaic: str = "ea"
    jpeg_quality: int = 92
    defocus_px: float = 0.0
    motion_px: float = 0.0
    motion_deg: float = 0.0
    hands: tuple[Hand, ...] = ()
    shield_closed: bool = False
    peg_set: int = 0
    peg_height_mm: float = 4.0
    peg_gloss: float = 0.15
    table_rgb: Vec3 = (0.25, 0.14, 0.07)
    spp: int = 8

    def with_(self, **changes: object) -> PbrConditions:
        """A copy with some fields changed."""
        return replace(self, **changes)  # type: ignore[arg-type]


def blackbody_rgb(kelvin: float) -> Vec3:
    """Linear sRGB of a blackbody at ``kelvin`` (1667..25000 K), luminance 1.

    The chromaticity is Kim et al.'s cubic fit of the Planckian locus in CIE
    xy; XYZ with Y = 1 is taken to linear sRGB (D65 primaries).
    """
    t = float(min(max(kelvin, 1667.0), 25000.0))
    if t <= 4000:
        x = -0.2661239e9 / t**3 - 0.2343589e6 / t**2 + 0.8776956e3 / t + 0.179910
    else:
        x = -3.0258469e9 / t**3 + 2.1070379e6 / t**2 + 0.2226347e3 / t + 0.240390
    if t <= 2222:
        y = -1.1063814 * x**3 - 1.34811020 * x**2 + 2.18555832 * x - 0.20219683
    elif t <= 4000:
        y = -0.9549476 * x**3 - 1.37418593 * x**2 + 2.09137015 * x - 0.16748867
    else:
        y = 3.0817580 * x**3 - 5.87338670 * x**2 + 3.75112997 * x - 0.37001483
    big_x, big_y, big_z = x / y, 1.0, (1.0 - x - y) / y
    r = 3.2406 * big_x - 1.5372 * big_y - 0.4986 * big_z
    g = -0.9689 * big_x + 1.8758 * big_y + 0.0415 * big_z
    b = 0.0557 * big_x - 0.2040 * big_y + 1.0570 * big_z
    return (max(r, 0.0), max(g, 0.0), max(b, 0.0))


def random_conditions(
    rng: np.random.Generator,
    profile: BoardProfile,
    *,
    hard: bool = True,
    peg_set: int = 0,
    spp: int = 8,
) -> PbrConditions:
    """Random conditions for ``profile``: a hard game photo, or an easy calibration photo.

    Hard: a camera 2-25° off vertical; one board in five farther away
    (below 2.5 px/mm); barrel distortion; a key light of 2700-6500 K, often
    mixed with a second light of another colour; white balance set for
    another light in a third of the photos; defocus and camera shake; a hand
    or a sleeve in 30 % of the photos, a quarter of them over the secret;
    JPEG 55-95. Easy: near vertical, neutral light, no hands, sharp.
    """

    def u(a: float, b: float) -> float:
        return float(rng.uniform(a, b))

    w, h = profile.size_mm
    f = u(900, 1150)
    c = PbrConditions(
        focal_px=f,
        look_at_mm=(w / 2 + u(-10, 10), h / 2 + u(-6, 6)),
        peg_set=peg_set,
        spp=spp,
        table_rgb=(u(0.05, 0.5), u(0.04, 0.3), u(0.02, 0.2)),
        peg_height_mm=u(3.0, 5.0),
        peg_gloss=u(0.06, 0.3),
    )
    if not hard:
        t = u(4300, 5200)
        return fit_distance(
            profile,
            c.with_(
                tilt_deg=u(0, 5),
                tilt_azimuth_deg=u(0, 360),
                roll_deg=u(-3, 3),
                light_kelvin=t,
                wb_kelvin=t + u(-200, 200),
                fill_kelvin=t,
                light_pos_mm=(w / 2 + u(-60, 60), h / 2 + u(-120, 120), -u(550, 800)),
                light_size_mm=u(250, 400),
                ambient=u(0.15, 0.3),
                exposure=u(0.8, 0.95),
                photons=u(8000, 15000),
                read_noise=u(0.001, 0.002),
                jpeg_quality=int(rng.integers(90, 97)),
            ),
            ppm=u(3.4, 4.2),
        )
    key_k = u(2700, 6500)
    mixed = rng.random() < 0.5
    fill_k = u(2700, 6500) if mixed else key_k
    wb = key_k * u(0.9, 1.1) if rng.random() < 0.67 else u(4000, 6000)
    az = u(0, 360)
    elev = u(35, 80)
    dist = u(400, 900)
    lx = w / 2 + dist * math.cos(math.radians(elev)) * math.cos(math.radians(az))
    ly = h / 2 + dist * math.cos(math.radians(elev)) * math.sin(math.radians(az))
    faz = az + u(90, 270)
    c = c.with_(
        tilt_deg=u(2, 25),
        tilt_azimuth_deg=u(0, 360),
        roll_deg=u(-10, 10),
        k1=u(-0.18, 0.0),
        k2=u(-0.02, 0.05),
        board_lift_mm=u(0.0, 1.5),
        light_kelvin=key_k,
        light_pos_mm=(lx, ly, -dist * math.sin(math.radians(elev))),
        light_size_mm=u(60, 400),
        fill_kelvin=fill_k,
        fill_ratio=u(0.2, 0.8) if mixed else 0.0,
        fill_pos_mm=(w / 2 + 600 * math.cos(math.radians(faz)), h / 2 + 600 * math.sin(math.radians(faz)), -u(300, 700)),
        ambient=u(0.03, 0.3),
        wb_kelvin=wb,
        exposure=u(0.55, 1.15),
        photons=u(1500, 12000),
        read_noise=u(0.001, 0.006),
        demosaic=("bilinear", "ea", "vng")[int(rng.integers(3))],
        jpeg_quality=int(rng.integers(55, 96)),
        defocus_px=u(0.0, 0.8) if rng.random() < 0.7 else u(0.8, 2.2),
        motion_px=u(1.0, 7.0) if rng.random() < 0.25 else 0.0,
        motion_deg=u(0, 180),
        shield_closed=bool(rng.random() < 0.5) and profile.shield_mm is not None,
    )
    hands: list[Hand] = []
    n_hands = 0 if rng.random() >= 0.3 else (2 if rng.random() < 0.1 else 1)
    for _ in range(n_hands):
        hands.append(_random_hand(rng, profile))
    far = rng.random() < 0.2
    return fit_distance(profile, c.with_(hands=tuple(hands)), ppm=u(1.8, 2.5) if far else u(2.6, 4.4))


def _random_hand(rng: np.random.Generator, p: BoardProfile) -> Hand:
    over_secret = rng.random() < 0.25
    if over_secret:
        xs = [x for x, _ in p.secret_centres_mm()]
        ys = [y for _, y in p.secret_centres_mm()]
        target = "secret"
    else:
        row = int(rng.integers(1, p.rows + 1))
        xs = [x for x, _ in p.hole_centres_mm(row)]
        ys = [y for _, y in p.hole_centres_mm(row) + p.key_centres_mm(row)]
        target = f"row {row}"
    x = float(np.mean(xs)) + float(rng.uniform(-4, 4))
    y = float(rng.uniform(min(ys) - 10, max(ys) + 10))
    kind = "sleeve" if rng.random() < 0.25 else "hand"
    near = rng.random() < 0.7  # the players sit at the long edges
    return Hand(
        kind=kind,
        over_mm=(x, y),
        height_mm=float(rng.uniform(8, 60)),
        azimuth_deg=float((90.0 if near else 270.0) + rng.uniform(-35, 35)),
        rise_deg=float(rng.uniform(5, 30)),
        size=float(rng.uniform(0.85, 1.15)),
        skin=SKIN[int(rng.integers(len(SKIN)))],
        cloth=CLOTH[int(rng.integers(len(CLOTH)))],
        target=target,
    )


def fit_distance(profile: BoardProfile, c: PbrConditions, *, ppm: float) -> PbrConditions:
    """Place the camera for about ``ppm`` px/mm, moving it back until the tray and markers fit."""
    from pegwatch.simulation.pbr.camera import Camera, tray_corners_mm

    d = c.focal_px / ppm
    corners = tray_corners_mm(profile, c.board_lift_mm)
    for _ in range(60):
        c = c.with_(distance_mm=d)
        px = Camera.of(c).project(corners)
        if (
            px[:, 0].min() >= 6
            and px[:, 1].min() >= 6
            and px[:, 0].max() <= c.width - 7
            and px[:, 1].max() <= c.height - 7
        ):
            return c
        d *= 1.03
    return c
