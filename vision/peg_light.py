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

The same goes for the light's colour. Under a warm lamp and a cooler fill
the domed heads face the lamp while the flat plastic returns the fill:
against the plastic, every peg of the board looks warmer than in the
calibration's light, a white one by as much as a cream (issue 14's boards:
whites read as a confident orange). So the fit also tries a tint along the
blackbody locus (:data:`~pegwatch.vision.tint.TINT_DIRECTION`), one for
the whole board, and takes one only where the pegs show it together
(:data:`TINT_PRIOR`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.censored import censored_distances
from pegwatch.vision.colour import ColourModel, lab_to_linear_bgr, linear_bgr_to_lab
from pegwatch.vision.tint import TINT_DIRECTION

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
#: The tints tried (ln(R/B) of the pegs' light against the plastic's, as
#: :mod:`~pegwatch.vision.tint` measures it): up to about a daylight lamp
#: against a tungsten one, either way.
PEG_TINTS: FloatArray = np.linspace(-1.0, 1.0, 11)
#: Among tints that fit about equally well, prefer none: each unit of tint
#: costs this much of the fit (as ``GAIN_PRIOR``). A tint is a claim about
#: every peg on the board; a few pegs a tint would fit better (a hand's
#: shade, a peg mid-change) must not make it, many must.
TINT_PRIOR = 8.0


@dataclass(frozen=True)
class PegLight:
    """The fitted light on the pegs against the plastic's: a factor for the
    code pegs and one for the key pegs, each multiplying the normalised
    linear light, and the tint both share (see :func:`tint_factor`). ``bare``
    is the factor on a bare code hole's light (:mod:`~pegwatch.vision.bare_light`)."""

    code: float = 1.0
    keys: float = 1.0
    tint: float = 0.0
    bare: float = 1.0

    @property
    def is_calibrations(self) -> bool:
        """Whether this is the calibration's own light."""
        return self.code == 1.0 and self.keys == 1.0 and self.tint == 0.0 and self.bare == 1.0

    @property
    def pegs_in_calibrations(self) -> bool:
        """Whether the pegs stand in the calibration's own light (the bare holes may not)."""
        return self.code == 1.0 and self.keys == 1.0 and self.tint == 0.0

    @property
    def code_factor(self) -> FloatArray:
        """Per channel (B, G, R), what multiplies a code peg's normalised linear light."""
        return self.code * tint_factor(self.tint)

    @property
    def key_factor(self) -> FloatArray:
        """Per channel (B, G, R), what multiplies a key peg's normalised linear light."""
        return self.keys * tint_factor(self.tint)


def tint_factor(tint: float) -> FloatArray:
    """Per channel (B, G, R), what takes a light ``tint`` warmer (ln(R/B)) than the plastic's back to it."""
    out: FloatArray = np.exp(-tint * TINT_DIRECTION)
    return out


def scale_features(features: FloatArray, linear: FloatArray, gain: float | FloatArray) -> FloatArray:
    """Features (CIELAB of the disc, of the ring, then any others) as if the light were ``gain``
    times (a number, or one per channel, B, G, R)."""
    out = np.array(features, dtype=np.float64, copy=True)
    if np.all(np.asarray(gain) == 1.0):
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
    tint: float = 0.0,
    default: float = 1.0,
    plain: FloatArray | None = None,
) -> float:
    """The factor on the pegs' light (in a light ``tint`` warmer than the plastic's) under which
    the ``use`` holes best fit their nearest classes; see :func:`fit_peg_light`."""
    gain, _ = fit_peg_light(
        model, features, linear, use=use, peg_classes=peg_classes, allowed=allowed, gains=gains,
        tints=np.array([tint]), default=(default, tint), plain=plain,
    )
    return gain


def fit_peg_light(
    model: ColourModel,
    features: FloatArray,
    linear: FloatArray,
    *,
    use: BoolArray,
    peg_classes: BoolArray,
    allowed: BoolArray | None = None,
    gains: FloatArray = PEG_GAINS,
    tints: FloatArray = PEG_TINTS,
    default: tuple[float, float] = (1.0, 0.0),
    plain: FloatArray | None = None,
) -> tuple[float, float]:
    """The factor and the tint of the pegs' light under which the ``use`` holes best fit their nearest classes.

    Non-peg classes are scored at the holes' own light; peg classes at
    factors of ``gains`` and tints of ``tints``: every factor with no tint
    (or ``tints``' only one), every tint near the best factor, then every
    factor at the best tint. Returns ``default`` (the calibration's light)
    when fewer than ``MIN_PEG_HOLES`` holes look like pegs under the best fit.
    ``plain``: the other classes' distances (n, k) in a light already fitted for them.
    """
    idx = np.flatnonzero(use)
    if len(idx) < MIN_PEG_HOLES:
        return default
    fit = _LightFit(model, features[idx], linear[idx], peg_classes, allowed, None if plain is None else plain[idx])
    tints = np.asarray(tints, dtype=np.float64)
    every = np.arange(len(gains))
    start = float(tints[np.argmin(np.abs(tints))])
    pairs = [(int(g), start) for g in every]
    if len(tints) > 1:
        g0 = pairs[fit.best(gains, pairs)][0]
        near = every[np.abs(every - g0) <= _TINT_SEARCH_GAINS]
        pairs = pairs + [(int(g), float(t)) for t in tints if t != start for g in near]
        t0 = pairs[fit.best(gains, pairs)][1]
        if t0 != start:
            pairs = pairs + [(int(g), t0) for g in every if abs(int(g) - g0) > _TINT_SEARCH_GAINS]
    k = fit.best(gains, pairs)
    gain, tint = float(gains[pairs[k][0]]), pairs[k][1]
    if fit.lit_holes(gain, tint) < MIN_PEG_HOLES:
        return default
    return gain, tint


#: Tints are tried at factors this many steps of ``PEG_GAINS`` either side of
#: the best untinted one (a tint moves the pegs' brightness a little too),
#: then every factor at the best tint.
_TINT_SEARCH_GAINS = 3


class _LightFit:
    """How well a set of holes fits the classes under a light on the ``lit`` classes (see :func:`fit_peg_light`).

    The other classes are scored at the holes' own light, or at their
    distances ``plain`` (n, k) when given (a light already fitted for them).
    """

    def __init__(
        self, model: ColourModel, feats: FloatArray, lin: FloatArray, lit: BoolArray, allowed: BoolArray | None,
        plain: FloatArray | None = None,
    ) -> None:
        self.model, self.feats, self.lin, self.lit, self.allowed = model, feats, lin, lit, allowed
        self.ring = lab_to_linear_bgr(feats[:, 3:6])
        self.plain = model.distances2(feats) if plain is None else plain
        self._costs: dict[tuple[int, float], float] = {}

    def d2(self, factors: FloatArray) -> FloatArray:
        """Squared distances (lights, holes, classes) under each per-channel factor (lights, 3)."""
        g = factors[:, None, :]
        m, n = len(factors), len(self.feats)
        scaled = np.repeat(self.feats[None, :, :], m, axis=0)
        scaled[:, :, 0:3] = linear_bgr_to_lab(self.lin[None, :, :] * g)
        scaled[:, :, 3:6] = linear_bgr_to_lab(self.ring[None, :, :] * g)
        d2 = self.model.distances2(scaled.reshape(m * n, -1)).reshape(m, n, -1)
        d2[:, :, ~self.lit] = self.plain[None, :, ~self.lit]
        if self.allowed is not None:
            d2[:, :, ~self.allowed] = np.inf
        return d2

    def best(self, gains: FloatArray, pairs: list[tuple[int, float]]) -> int:
        """The index in ``pairs`` (index into ``gains``, tint) of the light the holes fit best, priors counted."""
        todo = [pair for pair in dict.fromkeys(pairs) if pair not in self._costs]
        if todo:
            factors = np.array([gains[g] * tint_factor(t) for g, t in todo])
            reject = self.model.reject_distance2
            fit = np.minimum(self.d2(factors).min(axis=2), FIT_CAP * reject).sum(axis=1) / reject
            for (g, t), c in zip(todo, fit, strict=True):
                self._costs[(g, t)] = float(c) + GAIN_PRIOR * abs(float(np.log2(gains[g]))) + TINT_PRIOR * abs(t)
        return int(np.argmin([self._costs[pair] for pair in pairs]))

    def lit_holes(self, gain: float, tint: float) -> int:
        """How many holes read as one of the lit classes under this light."""
        d2 = self.d2((gain * tint_factor(tint))[None, :])[0]
        nearest = d2.argmin(axis=1)
        return int((self.lit[nearest] & (d2.min(axis=1) <= self.model.reject_distance2)).sum())


Holes = tuple[FloatArray, FloatArray, NDArray[np.bool_] | None]


def fit_board_light(
    models: tuple[ColourModel, ColourModel], code: Holes, keys: Holes, *, code_lit: BoolArray, key_lit: BoolArray
) -> PegLight:
    """The light on a frame's pegs: ``models``, the code and key models; ``code``
    and ``keys``, per hole its features, normalised linear light and which
    channels clipped; ``code_lit``/``key_lit``, the classes seen in the pegs' light."""
    fits = []
    for feats, _, clipped in (code, keys):
        # A clipped hole's light is not known: it says nothing about the light.
        fits.append(np.ones(len(feats), dtype=bool) if clipped is None else np.asarray(~clipped.any(axis=1), dtype=bool))
    gain, tint = fit_peg_light(models[0], code[0], code[1], use=fits[0], peg_classes=code_lit)
    # Key pegs are domes under the same lamp and camera: they share the code
    # pegs' tint, and with too few of them to say, their light.
    key_gain = fit_gain(models[1], keys[0], keys[1], use=fits[1], peg_classes=key_lit, tint=tint, default=gain)
    return PegLight(gain, key_gain, tint)


def diffuse_classes(model: ColourModel) -> NDArray[np.bool_]:
    """Classes whose look is their own colour: not dark and neutral (CIELAB L < 45, chroma < 12)."""
    lab = np.asarray(model.means, dtype=np.float64)[:, :3]
    dark_neutral = (lab[:, 0] < 45) & (np.hypot(lab[:, 1], lab[:, 2]) < 12)
    return np.asarray(~dark_neutral, dtype=bool)


def peg_distances(
    model: ColourModel,
    peg_classes: NDArray[np.bool_],
    gain: float | FloatArray,
    features: FloatArray,
    linear: FloatArray | None,
    clipped: NDArray[np.bool_] | None,
    head: FloatArray | None,
    head_linear: FloatArray | None,
    head_clipped: NDArray[np.bool_] | None,
) -> FloatArray:
    """Squared distances (n, k): peg classes where the peg's head stands (when sampled there) and
    in the pegs' own light (``gain``: a factor, or one per channel, see :class:`PegLight`),
    empty holes and the shield where the hole lies, as normalised."""
    lit = bool(np.any(np.asarray(gain) != 1.0))
    if head is None and not lit:
        return censored_distances(model, features, linear, clipped)
    # Each class is measured once: the others where the hole lies, the pegs where they stand.
    d2 = np.empty((len(features), len(peg_classes)), dtype=np.float64)
    if not peg_classes.all():
        d2[:, ~peg_classes] = censored_distances(model, features, linear, clipped, classes=~peg_classes)
    if head is not None:
        features, linear, clipped = head, head_linear, head_clipped
    if lit and linear is not None:
        features = scale_features(features, linear, gain)
        linear = linear * gain
    if peg_classes.any():
        d2[:, peg_classes] = censored_distances(model, features, linear, clipped, classes=peg_classes)
    return d2
