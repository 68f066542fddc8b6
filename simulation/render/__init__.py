"""A renderer of realistic synthetic photos of a Mastermind board, with ground truth.

The tests, the benchmark and the demo use it. It draws the board, its pegs,
the tray with the fiducial markers and the table into a top-down texture in
board millimetres (supersampled), then views it through a pinhole camera
with perspective tilt and barrel distortion, and spoils the photo the way a
real one is spoiled: uneven and coloured light, glare on the domes of the
pegs, soft shadows and bands of shade, the long shadows of standing pegs
under a low light, a hand, an arm or a sleeve over some rows, loose pegs beside the
board, defocus blur, sensor noise and JPEG artefacts.

Everything random about a photo lives in :class:`Conditions`; everything on
the board lives in :class:`BoardContents`. ``render(profile, contents,
conditions, seed=...)`` is deterministic.

Colours of the pegs come from :data:`NOMINAL_RGB`, varied per peg set
(``Conditions.peg_set``) and per peg, so a reader must calibrate rather than
assume.

Modules: ``scene`` (:class:`BoardContents`, :class:`Conditions`,
:func:`random_contents`), ``randomise`` (:func:`random_conditions`),
``geometry`` (the camera and the lens), ``drawing`` (the board, pegs,
tray and table), ``hands``, ``lighting`` (light and noise) and ``photo``
(:func:`render`, :class:`Rendered`). Every public name is importable from
``pegwatch.simulation.render``.
"""

from __future__ import annotations

from pegwatch.simulation.render.hands import SLEEVE_RGB, sleeve_polygons
from pegwatch.simulation.render.photo import Rendered, render
from pegwatch.simulation.render.randomise import random_conditions
from pegwatch.simulation.render.scene import (
    SKIN_RGB,
    BoardContents,
    Conditions,
    LoosePeg,
    Point,
    Polygon,
    RenderError,
    random_contents,
)
from pegwatch.vision.palette import NOMINAL_RGB

__all__ = [
    "NOMINAL_RGB",
    "SKIN_RGB",
    "SLEEVE_RGB",
    "BoardContents",
    "Conditions",
    "LoosePeg",
    "Point",
    "Polygon",
    "RenderError",
    "Rendered",
    "random_conditions",
    "random_contents",
    "render",
    "sleeve_polygons",
]
