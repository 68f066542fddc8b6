"""The nominal colours of the peg colour names: one table for everything that draws pegs.

The synthetic renderer starts every peg from these (and varies them per
peg set and per peg, so that a reader must calibrate rather than assume);
the ``--debug`` overlay draws its swatches in them. The board profiles own
the colours of the board, tray and shield (``[render]``); a real table's
peg colours come from its calibration, never from here.
"""

from __future__ import annotations

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


def nominal_bgr(name: str, default: tuple[int, int, int] = (128, 128, 128)) -> tuple[int, int, int]:
    """The nominal colour of ``name`` as an OpenCV BGR triple (``default`` for an unknown name)."""
    rgb = NOMINAL_RGB.get(name)
    if rgb is None:
        return default
    r, g, b = rgb
    return (b, g, r)
