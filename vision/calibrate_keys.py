"""Learning the key colours from marked rows: part of :func:`pegwatch.vision.calibrate.calibrate`.

Key pegs sit in any order, so a truth gives only each row's counts. The
key holes of every row whose marks are known are assigned to the classes
(right place, right colour, empty) by the most likely arrangement with
those counts, starting from a first guess of each class's colour and then
under the key model itself, three times. The first guess needs no code
colour of the same name: see :func:`initial_key_means`.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.calibration import (
    GLARE_TOWARDS,
    KEY_FLOOR,
    KEY_GLARE,
    KEY_MIX,
    RELATIVE_L_SIGMA,
    SHADING_SIGMA,
    UNSHADED,
)
from pegwatch.vision.colour import ColourModel
from pegwatch.vision.palette import nominal_lightness
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.reading import EMPTY

#: Learned classes by name: (mean, covariance, sample count).
Fitted = dict[str, tuple[NDArray[np.float64], NDArray[np.float64], int]]


def fit_keys(
    key_rows: Sequence[tuple[NDArray[np.float64], int, int]],
    profile: BoardProfile,
    code: Fitted,
    towards: Sequence[float],
    extra: Mapping[str, NDArray[np.float64]],
) -> ColourModel | None:
    """The key model of the key classes seen (None when none was)."""
    place, colour = profile.right_place_key, profile.right_colour_key
    counts = {place: 0, colour: 0, EMPTY: 0}
    k = profile.key_holes
    for _, b, w in key_rows:
        counts[place] += b
        counts[colour] += w
        counts[EMPTY] += k - b - w
    known = {c: np.asarray(v, dtype=np.float64).reshape(-1, len(KEY_FLOOR)) for c, v in extra.items() if c in counts and len(v)}
    classes = tuple(c for c in counts if counts[c] > 0 or c in known)
    if not classes:
        return None
    means = initial_key_means(key_rows, profile, code, towards, known)
    model = ColourModel.fit({c: means[c][None, :6] for c in classes}, floor_sigma=(8.0,) * 6)
    samples: dict[str, list[NDArray[np.float64]]] = {}
    for _ in range(3):
        samples = {c: list(known.get(c, [])) for c in classes}
        for lab, b, w in key_rows:
            labels = _best_arrangement(model, lab[:, : model.dims], (place, colour, EMPTY), (b, w, k - b - w))
            for x, lbl in zip(lab, labels, strict=True):
                samples[lbl].append(x)
        model = ColourModel.fit(
            {c: np.array(v) for c, v in samples.items() if v},
            floor_sigma=KEY_FLOOR,
            relative_sigma=RELATIVE_L_SIGMA,
            mix_towards=towards,
            mix_fraction=KEY_MIX,
            glare_towards=GLARE_TOWARDS,
            glare_fraction=KEY_GLARE,
            shading_sigma=SHADING_SIGMA,
            shading_dims=(0, 3),
            unshaded=UNSHADED,
        )
    return model


def initial_key_means(
    key_rows: Sequence[tuple[NDArray[np.float64], int, int]],
    profile: BoardProfile,
    code: Fitted,
    towards: Sequence[float],
    known: Mapping[str, NDArray[np.float64]],
) -> dict[str, NDArray[np.float64]]:
    """A first guess of each key class's colour features (disc and ring Lab).

    In order of trust: samples known to be of the class (a swatch card), the
    code colour of the same name, rows whose key holes are all of one
    class; else each marked row is split by appearance: the holes most like
    an empty hole are the empty ones, and of the rest the darker are the
    key whose nominal colour is darker (a black key is darker than a white
    one, a red one too), which is all the truth's counts need.
    """
    place, colour = profile.right_place_key, profile.right_colour_key
    k = profile.key_holes
    means: dict[str, NDArray[np.float64]] = {}
    for c, v in known.items():
        means[c] = np.median(v[:, :6], axis=0)
    for c in (place, colour, EMPTY):
        if c not in means and c in code:
            means[c] = code[c][0][:6]
    for c in (place, colour, EMPTY):
        pure = [lab[:, :6] for lab, b, w in key_rows if (c == place and b == k) or (c == colour and w == k)
                or (c == EMPTY and b + w == 0)]
        if c not in means and pure:
            means[c] = np.median(np.concatenate(pure), axis=0)
    if EMPTY not in means:
        means[EMPTY] = np.array(towards[:6], dtype=np.float64)
    dark_first = nominal_lightness(place) <= nominal_lightness(colour)
    split: dict[str, list[NDArray[np.float64]]] = {place: [], colour: []}
    for lab, b, w in key_rows:
        if b + w == 0:
            continue
        far = np.argsort(np.linalg.norm(lab[:, :6] - means[EMPTY], axis=1))[k - b - w :]
        pegs = far[np.argsort(lab[far, 0])]
        first, second = (place, colour) if dark_first else (colour, place)
        n_first = b if dark_first else w
        split[first].extend(lab[pegs[:n_first], :6])
        split[second].extend(lab[pegs[n_first:], :6])
    for c, found in split.items():
        if c not in means and found:
            means[c] = np.median(np.array(found), axis=0)
    return means


def _best_arrangement(
    model: ColourModel, lab: NDArray[np.float64], classes: Sequence[str], counts: Sequence[int]
) -> tuple[str, ...]:
    d2 = model.distances2(lab)  # (k, classes)
    present = [c for c, n in zip(classes, counts, strict=True) if n > 0]
    col = {c: model.index(c) for c in present}
    pool = [c for c, n in zip(classes, counts, strict=True) for _ in range(n)]
    best: tuple[str, ...] | None = None
    best_cost = np.inf
    for perm in set(itertools.permutations(pool)):
        cost = sum(d2[i, col[c]] for i, c in enumerate(perm))
        if cost < best_cost:
            best, best_cost = perm, cost
    assert best is not None
    return best
