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

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.colour import ColourModel, chi2_quantile, linear_bgr_to_lab
from pegwatch.vision.localise import Localisation
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.reading import EMPTY, UNKNOWN, HoleReading
from pegwatch.vision.sampler import BoardSampler

FloatArray = NDArray[np.float64]

#: A head's place shows a class surely only inside the class's region of this
#: tail: a second look that overrides or doubts a hole's own must be typical
#: of what it names (the classes' rejection radius is wide, for one look in
#: another light than the calibration's).
TYPICAL_ALPHA = 0.01
#: On a fit whose lens bend was read from the board's edges alone, a hole may
#: lie up to a key peg's radius off where the fit puts it: its head's place
#: is looked at again this many times, evenly round a circle of that radius.
LOOKS_AROUND = 8


class HeadPlaces:
    """Where the pegs' heads stand on one profile's board, and what those places show.

    Per fit of the board (the camera's pose comes with it): the lean of
    every hole's head, cached while the fit is kept.
    """

    def __init__(self, profile: BoardProfile, sampler: BoardSampler) -> None:
        self.profile = profile
        self.sampler = sampler
        self._lean_cache: tuple[bytes, FloatArray] | None = None
        self._disc_models: dict[int, tuple[ColourModel, ColourModel]] = {}

    def lean(self, loc: Localisation | None) -> FloatArray | None:
        """Where the top of each peg's head appears on the board plane, relative to its hole (mm):
        code holes (rows, then the secret), then key holes. None without a pose or with flat pegs."""
        p = self.profile
        if loc is None or loc.pose is None or loc.image_to_board is None:
            return None
        if p.peg_head_height_mm <= 0 and p.key_head_height_mm <= 0:
            return None
        # The pose comes from the same fit as the homography: one key for both.
        key = loc.fit_key
        if self._lean_cache is not None and self._lean_cache[0] == key:
            return self._lean_cache[1]
        s = self.sampler
        out = np.concatenate([
            loc.to_board(loc.to_image_at_height(s.code_centres_mm, p.peg_head_height_mm)) - s.code_centres_mm,
            loc.to_board(loc.to_image_at_height(s.key_centres_mm, p.key_head_height_mm)) - s.key_centres_mm,
        ])
        self._lean_cache = (key, out)
        return out

    def disc_model(self, model: ColourModel) -> ColourModel:
        """``model`` over the disc's CIELAB alone (its first three features), made once per model."""
        got = self._disc_models.get(id(model))
        if got is None or got[0] is not model:
            got = (model, replace(model, means=model.means[:, :3], covariances=model.covariances[:, :3, :3]))
            self._disc_models[id(model)] = got
        return got[1]

    def shift(self, loc: Localisation | None, *, keys: bool) -> FloatArray | None:
        """Per key hole (``keys``) or code hole: from the hole to its head's centre on the board plane (mm)."""
        lean = self.lean(loc)
        p = self.profile
        height, centre = (p.key_head_height_mm, p.key_head_centre_height_mm) if keys else (p.peg_head_height_mm, p.code_head_centre_height_mm)
        if lean is None or height <= 0:
            return None
        n_code = len(self.sampler.code_centres_mm)
        out: FloatArray = (lean[n_code:] if keys else lean[:n_code]) * (centre / height)
        return out

    def classes(
        self, frame: NDArray[np.uint8], loc: Localisation | None, model: ColourModel, lit: NDArray[np.bool_],
        factor: FloatArray | None, *, keys: bool, only: NDArray[np.intp] | None = None,
    ) -> tuple[NDArray[np.intp], NDArray[np.bool_]] | None:
        """Per key hole (``keys``) or code hole (``only`` those, by index; the others show nothing
        surely): ``model``'s class nearest to what its head's place shows, and whether it shows it
        surely (:func:`seen`). None: no pose."""
        shift = self.shift(loc, keys=keys)
        if shift is None or loc is None or loc.image_to_board is None:
            return None
        if keys:
            lin = self.sampler.key_discs_shifted(frame, loc.image_to_board, shift, loc.warp)
        else:
            lin = self.sampler.code_discs_shifted(frame, loc.image_to_board, shift, loc.warp, only=only)
        nearest, sure = seen(self.disc_model(model), lin, lit, factor)
        if only is None:
            return nearest, sure
        n_code = len(self.sampler.code_centres_mm)
        all_nearest, all_sure = np.zeros(n_code, dtype=np.intp), np.zeros(n_code, dtype=bool)
        all_nearest[only], all_sure[only] = nearest, sure
        return all_nearest, all_sure

    def keys_clear_around(
        self, frame: NDArray[np.uint8], loc: Localisation | None, model: ColourModel, pegs: NDArray[np.bool_],
        lit: NDArray[np.bool_], factor: FloatArray | None,
    ) -> NDArray[np.bool_] | None:
        """Per key hole: whether no key peg shows anywhere its head may stand on a fit that may
        place it up to a key peg's radius off: :data:`LOOKS_AROUND` looks round its head's place,
        each nearer a class of ``model`` that is not one of its ``pegs`` than any that is.
        None: no pose, or a key peg class that is not ``lit`` (a black key peg's head looks like
        a recess, and like shaded plastic: no look proves it absent).

        A look a key peg's radius out lies on the hole's rim or the plastic, which no class
        describes well: what it is nearest, not what it is typical of, says whether a peg
        stands there."""
        shift = self.shift(loc, keys=True)
        if shift is None or loc is None or loc.image_to_board is None or (pegs & ~lit).any() or pegs.all():
            return None
        disc = self.disc_model(model)
        radius = self.profile.key_hole_diameter_mm / 2
        clear = np.ones(len(shift), dtype=bool)
        for a in np.arange(LOOKS_AROUND) * (2 * np.pi / LOOKS_AROUND):
            lin = self.sampler.key_discs_shifted(frame, loc.image_to_board, shift + radius * np.array([np.cos(a), np.sin(a)]), loc.warp)
            d2 = _distances(disc, lin, lit, factor)
            clear &= d2[:, pegs].min(axis=1) > d2[:, ~pegs].min(axis=1)
        return clear


def _distances(disc: ColourModel, linear: FloatArray, lit: NDArray[np.bool_], factor: FloatArray | None) -> FloatArray:
    """Squared distances of discs (normalised linear BGR) to ``disc``'s classes; the ``lit``
    classes' in the pegs' light (``factor``: against the calibration's; None, the same)."""
    if factor is None:
        out: FloatArray = disc.distances2(linear_bgr_to_lab(linear))
        return out
    # Each class measured once: the lit ones in the pegs' light, the others in the calibration's.
    d2 = np.empty((len(linear), len(lit)), dtype=np.float64)
    if not lit.all():
        d2[:, ~lit] = disc.distances2(linear_bgr_to_lab(linear), classes=~lit)
    if lit.any():
        d2[:, lit] = disc.distances2(linear_bgr_to_lab(linear * factor), classes=lit)
    return d2


def seen(
    disc: ColourModel, linear: FloatArray, lit: NDArray[np.bool_], factor: FloatArray | None = None
) -> tuple[NDArray[np.intp], NDArray[np.bool_]]:
    """Per head's place (``linear``: its disc's normalised linear BGR), the ``disc`` model's class
    nearest to it and whether it shows that class surely: accepted, and typical of the class.
    ``factor``: the pegs' light against the calibration's (None: the same), for the ``lit`` classes."""
    d2 = _distances(disc, linear, lit, factor)
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
