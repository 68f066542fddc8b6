"""The nominal colours of the peg colour names: one table for everything that draws pegs.

The synthetic renderer starts every peg from these (and varies them per
peg set and per peg, so that a reader must calibrate rather than assume);
the ``--debug`` overlay and the swatch card draw their swatches in them.
The board profiles own the colours of the board, tray and shield
(``[render]``); a real table's peg colours come from its calibration,
never from here.

Calibration uses them only as priors that can make a reading *less*
certain, never more: a guard for a colour not learned yet (where it is
expected, so that it reads "unknown" rather than as a learned neighbour),
and which of two key colours is the darker one.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.colour import linear_bgr_to_lab, srgb_to_linear

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

# Linear sRGB (as B, G, R columns) -> XYZ, D65 (as in pegwatch.vision.colour).
_BGR_TO_XYZ = np.array(
    [[0.1804375, 0.3575761, 0.4124564], [0.0721750, 0.7151522, 0.2126729], [0.9503041, 0.1191920, 0.0193339]]
)
_WHITE_D65 = np.array([0.95047, 1.0, 1.08883])


def nominal_bgr(name: str, default: tuple[int, int, int] = (128, 128, 128)) -> tuple[int, int, int]:
    """The nominal colour of ``name`` as an OpenCV BGR triple (``default`` for an unknown name)."""
    rgb = NOMINAL_RGB.get(name)
    if rgb is None:
        return default
    r, g, b = rgb
    return (b, g, r)


def nominal_linear_bgr(name: str) -> NDArray[np.float64] | None:
    """The nominal colour of ``name`` in linear-light BGR (None for a name without one)."""
    if name not in NOMINAL_RGB:
        return None
    out: NDArray[np.float64] = srgb_to_linear(np.array(nominal_bgr(name), dtype=np.uint8))
    return out


def nominal_lightness(name: str) -> float:
    """CIELAB L of the nominal colour of ``name`` (50 for a name without one)."""
    lin = nominal_linear_bgr(name)
    return 50.0 if lin is None else float(linear_bgr_to_lab(lin)[0])


def lab_to_linear_bgr(lab: NDArray[np.float64]) -> NDArray[np.float64]:
    """Inverse of :func:`pegwatch.vision.colour.linear_bgr_to_lab` for one colour (D65)."""
    lum, a, b = (float(v) for v in np.asarray(lab, dtype=np.float64)[:3])
    fy = (lum + 16) / 116
    f = np.array([fy + a / 500, fy, fy - b / 200])
    eps, kappa = 216 / 24389, 24389 / 27
    xyz = np.where(f**3 > eps, f**3, (116 * f - 16) / kappa) * _WHITE_D65
    out: NDArray[np.float64] = np.linalg.solve(_BGR_TO_XYZ, xyz)
    return out


def light_gain(seen_lab: dict[str, NDArray[np.float64]]) -> NDArray[np.float64]:
    """Per-channel linear gain that best maps nominal colours onto the CIELAB colours seen.

    ``seen_lab`` maps colour names to what the table showed (Lab). The
    median over the names with a nominal colour; 1 when fewer than two
    have one (nothing to tell the light from a peg set's own shade).
    """
    logs = []
    for name, lab in seen_lab.items():
        nominal = nominal_linear_bgr(name)
        if nominal is not None:
            seen = np.maximum(lab_to_linear_bgr(lab), 1e-4)
            logs.append(np.log(seen / np.maximum(nominal, 1e-4)))
    if len(logs) < 2:
        return np.ones(3)
    out: NDArray[np.float64] = np.exp(np.median(np.array(logs), axis=0))
    return out
