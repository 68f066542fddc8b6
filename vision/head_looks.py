"""A second look at each hole, where a peg's head stands: what it shows surely, and what
a disagreement with the hole's own look leaves of the hole's reading.

Seen at a slant, a peg's head stands off its hole (``Localisation.pose``
and the profile's head heights give where): the hole's own sample then
shows the peg's shaded side, its shadow and the plastic. The reader
samples each disc again, moved to the head's place
(``BoardSampler.key_discs_shifted``, ``code_discs_shifted``), and compares
it with the classes' disc colours alone (see ``docs/vision.md``, Peg heads
where they stand).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.colour import ColourModel, chi2_quantile, linear_bgr_to_lab
from pegwatch.vision.reading import EMPTY, UNKNOWN, HoleReading

FloatArray = NDArray[np.float64]

#: A head's place shows a class surely only inside the class's region of this
#: tail: a second look that overrides or doubts a hole's own must be typical
#: of what it names (the classes' rejection radius is wide, for one look in
#: another light than the calibration's).
TYPICAL_ALPHA = 0.01


def seen(
    disc: ColourModel, linear: FloatArray, lit: NDArray[np.bool_], factor: FloatArray | None = None
) -> tuple[NDArray[np.intp], NDArray[np.bool_]]:
    """Per head's place (``linear``: its disc's normalised linear BGR), the ``disc`` model's class
    nearest to it and whether it shows that class surely: accepted, and typical of the class.
    ``factor``: the pegs' light against the calibration's (None: the same), for the ``lit`` classes."""
    d2 = disc.distances2(linear_bgr_to_lab(linear))
    if factor is not None:
        d2[:, lit] = disc.distances2(linear_bgr_to_lab(linear * factor))[:, lit]
    nearest: NDArray[np.intp] = np.argmin(d2, axis=1)
    got = disc.classify_distances(d2)
    typical = d2[np.arange(len(nearest)), nearest] <= chi2_quantile(TYPICAL_ALPHA, disc.dims)
    return nearest, got.accepted & (got.best == nearest) & typical


def other_doubted(
    holes: list[HoleReading],
    heads: tuple[NDArray[np.intp], NDArray[np.bool_]],
    d2: FloatArray,
    model: ColourModel,
    *,
    allowed: list[bool],
    lit: NDArray[np.bool_],
) -> list[HoleReading]:
    """Holes read surely as one peg whose head's place shows surely another, ``lit`` one: either.

    Two looks at one peg that disagree on its colour leave it among both
    (and whatever else the hole's own look, ``d2`` per hole against
    ``model``'s classes, cannot rule out). A code peg's shaded side reads
    darker than its head: a white peg as black, an orange one as red.
    """
    best, sure = heads
    other = sure & lit[best]
    out = list(holes)
    for i, h in enumerate(holes):
        named = model.names[int(best[i])]
        if not (other[i] and h.is_certain and h.colour != EMPTY and h.colour != named):
            continue
        (cands,) = model.candidates(d2[i][None, :], allowed=allowed)
        if cands and named not in {c for c, _ in cands}:
            cands = (*cands, (named, 0.0))
        out[i] = HoleReading(UNKNOWN, h.confidence, cands)
    return out
