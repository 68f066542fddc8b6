"""How bright the pegs stand in this frame's light, relative to the plastic.

The reader normalises every hole by the light on the board's plastic
(:mod:`pegwatch.vision.sampler`). That is right for what lies in the
board's plane (an empty hole, the plastic around it) but not for a peg:
a peg's domed head stands up and faces every way, while the plastic is
flat. A low lamp lights the flat plastic at a grazing angle
(irradiance ~ sin(elevation)) but still lights the side of each head
facing it; the board's gloss returns the lamp to the camera in one frame
and not in the next. So the ratio of a peg's brightness to the plastic's
changes with the light's height and the camera's angle, by a factor of two
or more between a calibration photo and a photo of a game, while the
pegs' chroma against the plastic does not.

That ratio is the same for every peg of a board (one lamp, one camera,
pegs of one shape), so it is fitted per frame from the pegs themselves:
one factor for the code pegs and one for the key pegs, the factor under
which the holes sit closest to their nearest calibrated classes. Empty
holes, the shield and the plastic stay where the calibration put them.
Too few holes that look like pegs leave the factor at 1 (the
calibration's own light).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.censored import censored_distances
from pegwatch.vision.colour import ColourModel, lab_to_linear_bgr, linear_bgr_to_lab

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

#: The factors tried: a peg may look from about eight times brighter to
#: twice as dark, against the plastic, as in the calibration's light.
PEG_GAINS: FloatArray = np.geomspace(1 / 8, 2.0, 33)

#: Holes fitting no class closer than this many times the rejection
#: distance weigh no more than that (a hand, a hole mid-change).
FIT_CAP = 4.0
#: At least this many holes must look like pegs under a factor for it to
#: be used; fewer say nothing reliable about the light.
MIN_PEG_HOLES = 6
#: Among factors that fit about equally well, prefer the calibration's
#: light: each doubling away from 1 costs this much of the fit (in units
#: of the rejection distance, over the whole board).
GAIN_PRIOR = 0.5


@dataclass(frozen=True)
class PegLight:
    """The fitted factors: code pegs and key pegs, each multiplying the normalised linear light."""

    code: float = 1.0
    keys: float = 1.0


def scale_features(features: FloatArray, linear: FloatArray, gain: float) -> FloatArray:
    """Features (CIELAB of the disc, of the ring, then any others) as if the light were ``gain`` times."""
    out = np.array(features, dtype=np.float64, copy=True)
    if gain == 1.0:
        return out
    out[:, 0:3] = linear_bgr_to_lab(linear * gain)
    out[:, 3:6] = linear_bgr_to_lab(lab_to_linear_bgr(features[:, 3:6]) * gain)
    return out


def fit_gain(
    model: ColourModel,
    features: FloatArray,
    linear: FloatArray,
    *,
    use: BoolArray,
    peg_classes: BoolArray,
    allowed: BoolArray | None = None,
    gains: FloatArray = PEG_GAINS,
    default: float = 1.0,
) -> float:
    """The factor on the pegs' light under which the ``use`` holes best fit their nearest classes.

    Non-peg classes are scored at the holes' own light; peg classes at
    each factor of ``gains``. Returns ``default`` (1.0: the calibration's
    light) when fewer than ``MIN_PEG_HOLES`` holes look like pegs under the
    best factor.
    """
    idx = np.flatnonzero(use)
    if len(idx) < MIN_PEG_HOLES:
        return default
    feats = features[idx]
    lin = linear[idx]
    ring = lab_to_linear_bgr(feats[:, 3:6])
    g = gains[:, None, None]
    n, m = len(idx), len(gains)
    scaled = np.repeat(feats[None, :, :], m, axis=0)
    scaled[:, :, 0:3] = linear_bgr_to_lab(lin[None, :, :] * g)
    scaled[:, :, 3:6] = linear_bgr_to_lab(ring[None, :, :] * g)
    d2 = model.distances2(scaled.reshape(m * n, -1)).reshape(m, n, -1)
    plain = model.distances2(feats)
    d2[:, :, ~peg_classes] = plain[None, :, ~peg_classes]
    if allowed is not None:
        d2[:, :, ~allowed] = np.inf
    reject = model.reject_distance2
    best = d2.min(axis=2)
    cost = np.minimum(best, FIT_CAP * reject).sum(axis=1) / reject
    cost = cost + GAIN_PRIOR * np.abs(np.log2(gains))
    k = int(np.argmin(cost))
    nearest = d2[k].argmin(axis=1)
    pegs = peg_classes[nearest] & (best[k] <= reject)
    if int(pegs.sum()) < MIN_PEG_HOLES:
        return default
    return float(gains[k])


def diffuse_classes(model: ColourModel) -> NDArray[np.bool_]:
    """Classes whose look is their own colour: not dark and neutral (CIELAB L < 45, chroma < 12)."""
    lab = np.asarray(model.means, dtype=np.float64)[:, :3]
    dark_neutral = (lab[:, 0] < 45) & (np.hypot(lab[:, 1], lab[:, 2]) < 12)
    return np.asarray(~dark_neutral, dtype=bool)


def peg_distances(
    model: ColourModel,
    peg_classes: NDArray[np.bool_],
    gain: float,
    features: FloatArray,
    linear: FloatArray | None,
    clipped: NDArray[np.bool_] | None,
    head: FloatArray | None,
    head_linear: FloatArray | None,
    head_clipped: NDArray[np.bool_] | None,
) -> FloatArray:
    """Squared distances (n, k): peg classes where the peg's head stands (when sampled there) and
    in the pegs' own light (``gain``), empty holes and the shield where the hole lies, as normalised."""
    d2 = censored_distances(model, features, linear, clipped)
    if head is not None:
        features, linear, clipped = head, head_linear, head_clipped
    lit = gain != 1.0
    if lit and linear is not None:
        features = scale_features(features, linear, gain)
        linear = linear * gain
    if head is not None or lit:
        pegs = censored_distances(model, features, linear, clipped)
        d2[:, peg_classes] = pegs[:, peg_classes]
    return d2
