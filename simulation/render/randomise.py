"""Random photo conditions, easy to hard, as a real table throws them at the camera."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from pegwatch.simulation.render.geometry import fit_in_frame
from pegwatch.simulation.render.hands import hand_polygons
from pegwatch.simulation.render.scene import SKIN_RGB, Conditions, LoosePeg, RenderError
from pegwatch.vision.palette import NOMINAL_RGB
from pegwatch.vision.profile import BoardProfile


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
        c = replace(c, hand=hand_polygons(p, rng, (r0, r1), reach=u(0.1, 1.0)))
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
    return fit_in_frame(p, c)


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
