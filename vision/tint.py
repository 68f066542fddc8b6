"""A light whose colour on the pegs is not the plastic's: peg classes widened along the light's tint.

The reader takes the light's colour out with the board's plastic
(:mod:`pegwatch.vision.sampler`), and its brightness on the pegs with one
factor (:mod:`pegwatch.vision.peg_light`). Neither says what colour of
light the pegs themselves get. A domed head faces the lamp, while a flat,
glossy plastic returns the room more than the lamp; under a warm lamp and
a cooler fill (or a white balance set for another light) the pegs are lit
warmer or cooler than the plastic, and a white peg then looks cream. Read
against classes learned under the calibration's light, that cream is a
confident yellow: a wrong reading that does not say it is unsure.

So in a light other than the calibration's, each peg class is widened
along the direction its colour moves when the light's tint moves along the
blackbody locus, by :data:`TINT_SIGMA`: a white that has moved towards
yellow by as much as a tint can move it is no longer a sure yellow; it is
"white or yellow", and the row that holds it is judged within bounds.
Empty holes and the shield lie in the plastic's plane, normalised with
it, and keep their classes.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.colour import ColourModel, lab_to_linear_bgr, linear_bgr_to_lab

FloatArray = NDArray[np.float64]

#: How the log of linear (B, G, R) moves with the light's warmth, per unit
#: of ln(R/B): along the blackbody locus from daylight (6500 K) to a
#: tungsten lamp (2700 K), blue falls about twice as far as red rises
#: against green (sRGB primaries), and ln(R/B) grows by about 1.1.
TINT_DIRECTION: FloatArray = np.array([-0.71, 0.0, 0.37]) / 1.08
#: How far (in ln(R/B)) the light on the pegs may differ in tint from the
#: light on the plastic: a quarter of the way from daylight to tungsten.
TINT_SIGMA = 0.25
_STEP = 0.05


def tint_jacobian(means: FloatArray) -> FloatArray:
    """Per class mean (k, d): how its features move per unit of tint (k, d).

    The first three features are the disc's CIELAB and the next three the
    ring's (a peg's own rim); anything after them does not move.
    """
    means = np.asarray(means, dtype=np.float64)
    out = np.zeros_like(means)
    up, down = np.exp(_STEP * TINT_DIRECTION), np.exp(-_STEP * TINT_DIRECTION)
    for lo in (0, 3):
        if means.shape[1] < lo + 3:
            break
        lin = lab_to_linear_bgr(means[:, lo : lo + 3])
        out[:, lo : lo + 3] = (linear_bgr_to_lab(lin * up) - linear_bgr_to_lab(lin * down)) / (2 * _STEP)
    return out


def widened(model: ColourModel, classes: NDArray[np.bool_], sigma: float = TINT_SIGMA) -> ColourModel:
    """``model`` with each of ``classes`` widened along its tint direction by ``sigma``."""
    j = tint_jacobian(model.means)
    extra = sigma**2 * j[:, :, None] * j[:, None, :]
    extra[~np.asarray(classes, dtype=bool)] = 0.0
    return replace(model, covariances=np.asarray(model.covariances, dtype=np.float64) + extra)
