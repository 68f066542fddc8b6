"""A physically based test bed: boards rendered with Mitsuba 3, with their ground truth.

Shares nothing with the reader but the board profile: pegs are solids with
height and domed heads standing in recessed holes, hands and sleeves are
solids that cast real shadows, the shield is a box (closed) or a standing
plate (open), the light is a rectangular area lamp of a blackbody
temperature from 2700 to 6500 K, often mixed with a second lamp of another
colour, under the room's ambient light. The undistorted render then goes
through a lens (radial distortion with OpenCV, so the truth projection is
exact), defocus and camera shake, an RGGB sensor with shot and read noise,
white balance, demosaicing and JPEG.

Modules: ``conditions`` (what is random about a photo, drawn from a seed),
``camera`` (OpenCV's pinhole and the same pose for Mitsuba), ``meshes``
(peg and ellipsoid meshes), ``scene`` (the Mitsuba scene dict), ``sensor``
(from light to JPEG), ``testbed`` (:func:`render_board`, tables, cases and
the cache) and ``yardstick`` (the figures of issue 14's table). Mitsuba is a
development dependency, imported only when a board is rendered.
"""

from __future__ import annotations

from pegwatch.simulation.pbr.conditions import Hand, PbrConditions, blackbody_rgb, random_conditions
from pegwatch.simulation.pbr.testbed import (
    PbrBoard,
    PbrCase,
    PbrTable,
    hard_case,
    make_table,
    pbr_set,
    render_board,
)

__all__ = [
    "Hand",
    "PbrBoard",
    "PbrCase",
    "PbrConditions",
    "PbrTable",
    "blackbody_rgb",
    "hard_case",
    "make_table",
    "pbr_set",
    "random_conditions",
    "render_board",
]
