"""How dark a bare hole stands in this frame's light, against the plastic.

A bare hole is a recess. Under a low lamp its floor and rim lie in the
shade of its own wall, while the flat plastic the reader normalises by
(:mod:`pegwatch.vision.sampler`) is lit at a grazing angle; under a high
one the floor is lit as well as the plastic. So against the plastic a bare
hole looks darker or lighter than in the calibration's light. Issue 14's
boards showed bare holes at L* 33 with their rims at 46, against the
calibration's 49 and 53: as dark as the calibration's black peg, so every
hole past the game read "unknown", and with no row read wholly bare the
reader could not tell where the game ends.

That shade is the same for every bare hole of a board (one lamp, holes of
one shape), so it is fitted per frame like the pegs' light
(:mod:`~pegwatch.vision.peg_light`): a factor on the hole's linear light
under which the bare holes sit closest to the calibration's bare class.

It is fitted only from holes that cannot hold a peg, never from the whole
board: a black peg under a bright lamp looks like a bare hole in a lighter
shade, so over a board of twelve played rows such a fit made its black
pegs bare. The game fills rows in order, so the holes with no peg are the
board's trailing rows: those from the far end that show no key peg and no
peg of a light colour read surely (:func:`past_the_game`). A black
peg is not of a light colour, and a guess of dark pegs scored with no key
peg can end that run; its holes are then a few among the bare ones, and a
fit needs :data:`~pegwatch.vision.peg_light.MIN_PEG_HOLES` holes at least.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.censored import censored_distances
from pegwatch.vision.colour import ColourModel
from pegwatch.vision.peg_light import Holes, fit_gain, scale_features

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

#: The factors tried: a bare hole may look from about four times darker to
#: twice as light, against the plastic, as in the calibration's light.
BARE_GAINS: FloatArray = np.geomspace(1 / 2, 4.0, 25)


def past_the_game(sure_light_peg: BoolArray, sure_key_peg: BoolArray, *, rows: int) -> BoolArray:
    """Per guess hole, whether it lies in the board's trailing rows that show no peg read surely.

    ``sure_light_peg``: per guess hole (rows in order), whether it reads
    surely as a peg of a light colour (not a dark neutral one, see
    :func:`~pegwatch.vision.peg_light.diffuse_classes`); ``sure_key_peg``:
    per key hole, whether it reads surely as a key peg.
    """
    light = np.asarray(sure_light_peg, dtype=bool).reshape(rows, -1)
    shows = np.flatnonzero(light.any(axis=1) | np.asarray(sure_key_peg, dtype=bool).reshape(rows, -1).any(axis=1))
    first = int(shows[-1]) + 1 if len(shows) else 0
    out: BoolArray = np.repeat(np.arange(rows) >= first, light.shape[1])
    return out


def fit_bare_gain(
    model: ColourModel,
    holes: Holes,
    others: FloatArray,
    *,
    use: BoolArray,
    bare_classes: BoolArray,
    allowed: BoolArray | None = None,
    gains: FloatArray = BARE_GAINS,
) -> float:
    """The factor on the light of the first ``len(use)`` of ``holes`` (features, normalised
    linear light, clipped channels), those in ``use``, under which they best fit the bare
    classes, or their nearest other class at its distance in ``others`` (n, k); 1 when fewer
    than :data:`~pegwatch.vision.peg_light.MIN_PEG_HOLES` of them read bare under it.
    A clipped hole's light is not known: it is left out."""
    features, linear, clipped = holes
    ok = np.asarray(use, dtype=bool).copy()
    if clipped is not None:
        ok &= ~np.asarray(clipped, dtype=bool)[: len(ok)].any(axis=1)
    n = len(ok)
    return fit_gain(
        model, features[:n], linear[:n], use=ok, peg_classes=bare_classes, allowed=allowed, gains=gains, plain=others[:n]
    )


def bare_model(model: ColourModel, bare_classes: BoolArray) -> ColourModel:
    """``model`` with only its bare classes. A tint widens only the peg classes
    (:func:`~pegwatch.vision.tint.widened`), so one serves the reader in every light."""
    idx = np.flatnonzero(bare_classes)
    return replace(
        model, names=tuple(model.names[i] for i in idx), means=model.means[idx],
        covariances=model.covariances[idx], counts=tuple(model.counts[i] for i in idx),
    )


def bare_distances(
    bare: ColourModel,
    bare_classes: BoolArray,
    gain: float,
    d2: FloatArray,
    features: FloatArray,
    linear: FloatArray | None,
    clipped: NDArray[np.bool_] | None,
) -> FloatArray:
    """``d2`` (n, k) with the ``bare_classes`` columns taken in the bare holes' light (``gain``);
    ``bare`` is the model of those classes alone (:func:`bare_model`)."""
    if gain == 1.0 or linear is None:
        return d2
    out = np.array(d2, copy=True)
    # Every frame of a fixed camera pays for this: only the bare classes are scored.
    out[:, bare_classes] = censored_distances(bare, scale_features(features, linear, gain), linear * gain, clipped)
    return out
