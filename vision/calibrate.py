"""Fitting a table's calibration: what ``pegwatch calibrate`` runs.

A table installer photographs the board once or a few times with known
contents (a truth file in the game-record JSON of ``pegwatch judge``) and
runs ``pegwatch calibrate``. :func:`calibrate` then

* picks the localisation: fixed corners when given (with the reference
  the board-moved check compares against), else ArUco markers, else best
  effort;
* measures the board's plastic (the light reference every later frame is
  normalised to);
* collects normalised CIELAB samples of every code hole (by the truth's
  colours, "empty" for empty holes, "shield" for a closed shield over the
  secret row) and every key hole, and fits the two colour models.

Key pegs sit in any order, so the truth only gives their counts; each row's
key holes are assigned to classes by the most likely arrangement with those
counts (first under the code-peg colours of the same names, then under the
key model itself).

The result is a :class:`pegwatch.vision.calibration.Calibration` (the
calibration file).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.calibration import (
    CODE_FLOOR,
    CODE_GLARE,
    CODE_MIX,
    GLARE_TOWARDS,
    KEY_FLOOR,
    KEY_GLARE,
    KEY_MIX,
    RELATIVE_L_SIGMA,
    SHADING_SIGMA,
    SHIELD,
    UNSHADED,
    Calibration,
    CalibrationError,
)
from pegwatch.vision.colour import ColourModel
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.reading import EMPTY, BoardReading
from pegwatch.vision.sampler import BoardSampler

logger = logging.getLogger(__name__)


def truth_from_record(record: Mapping[str, Any], profile: BoardProfile, *, where: str) -> BoardReading:
    """Parse and check a truth record against ``profile``."""
    truth = BoardReading.from_record(
        record, holes=profile.holes, board_rows=profile.rows, keys_per_row=profile.key_holes, where=where
    )
    allowed = set(profile.palette) | {EMPTY}
    for row in truth.rows:
        for j, h in enumerate(row.holes):
            if h.colour not in allowed:
                raise CalibrationError(
                    f"{where}: rows[{row.row - 1}].guess[{j}]: {h.colour!r} is not in the "
                    f"{profile.name} palette ({', '.join(profile.palette)}) or 'empty'"
                )
    if truth.secret is not None:
        for j, h in enumerate(truth.secret):
            if h.colour not in allowed:
                raise CalibrationError(f"{where}: secret[{j}]: {h.colour!r} is not in the palette")
    return truth


def calibrate(
    images: Sequence[NDArray[np.uint8]],
    truths: Sequence[BoardReading | Mapping[str, Any]],
    profile: BoardProfile,
    corners: Sequence[tuple[float, float]] | None = None,
    *,
    px_per_mm: float | None = None,
    names: Sequence[str] | None = None,
) -> Calibration:
    """Fit a calibration from images of known contents (one truth per image).

    A truth is a :class:`BoardReading` or a game-record dict (checked with
    :func:`truth_from_record`). ``names`` label the images in error
    messages (file names).
    """
    import pegwatch.vision.localise as localise

    if not images:
        raise CalibrationError("calibration needs at least one image")
    if len(truths) != len(images):
        raise CalibrationError(f"{len(images)} images but {len(truths)} truth records")
    labels = list(names) if names is not None else [f"image {i + 1}" for i in range(len(images))]
    parsed = [
        t if isinstance(t, BoardReading) else truth_from_record(t, profile, where=f"truth for {label}")
        for t, label in zip(truths, labels, strict=True)
    ]
    ppm = float(px_per_mm if px_per_mm is not None else localise.RECT_PX_PER_MM)

    method: str
    reference: Any = None
    corners_px: tuple[tuple[float, float], ...] | None = None
    if corners is not None:
        if len(corners) != 4:
            raise CalibrationError(f"--corners needs 4 points, got {len(corners)}")
        corners_px = tuple((float(x), float(y)) for x, y in corners)
        method = "corners"
        make_ref = getattr(localise, "make_reference", None)
        if make_ref is not None:
            reference = make_ref(profile, np.array(corners_px, dtype=np.float64), images[0])
        loc_obj: Any = localise.FixedCornersLocaliser(
            profile, np.array(corners_px, dtype=np.float64), reference=reference
        )
    else:
        marker_loc = localise.MarkerLocaliser(profile)
        if marker_loc.locate(images[0]).ok:
            method, loc_obj = "markers", marker_loc
        else:
            logger.warning("markers not found in %s; using best-effort localisation", labels[0])
            method, loc_obj = "best-effort", localise.BestEffortLocaliser(profile)

    homographies: list[NDArray[np.float64]] = []
    for img, label in zip(images, labels, strict=True):
        loc = loc_obj.locate(img)
        if not loc.ok:
            raise CalibrationError(f"{label}: board not found ({loc.problem or 'localisation failed'})")
        homographies.append(np.asarray(loc.image_to_board, dtype=np.float64))
    plastic, code_model, key_model = fit_colours(images, homographies, parsed, profile, ppm, names=labels)
    h, w = images[0].shape[:2]
    return Calibration(
        profile=profile.name,
        method=method,
        corners_px=corners_px,
        reference=reference,
        px_per_mm=ppm,
        plastic_linear=plastic,
        code_model=code_model,
        key_model=key_model,
        image_size=(int(w), int(h)),
    )


def fit_colours(
    frames: Sequence[NDArray[np.uint8]],
    image_to_board: Sequence[NDArray[np.float64]],
    truths: Sequence[BoardReading],
    profile: BoardProfile,
    px_per_mm: float,
    *,
    names: Sequence[str] | None = None,
) -> tuple[tuple[float, float, float], ColourModel, ColourModel]:
    """Fit the plastic reference and the code and key models.

    ``image_to_board[i]`` locates the board in ``frames[i]`` (for an already
    rectified image it is ``diag(1/px_per_mm, 1/px_per_mm, 1)``).
    """
    from pegwatch.vision.colour import linear_bgr_to_lab

    labels = list(names) if names is not None else [f"image {i + 1}" for i in range(len(frames))]
    sampler = BoardSampler(profile, px_per_mm)
    pairs = list(zip(frames, image_to_board, strict=True))
    first = [sampler.features_from_frame(f, h, None) for f, h in pairs]
    plastic = np.exp(np.mean([np.log(f.plastic_linear) for f in first], axis=0))
    feats = [sampler.features_from_frame(f, h, plastic) for f, h in pairs]

    code_samples: dict[str, list[NDArray[np.float64]]] = {}
    key_rows: list[tuple[NDArray[np.float64], int, int]] = []
    for f, truth, label in zip(feats, truths, labels, strict=True):
        for row in truth.rows:
            r = row.row - 1
            if f.row_covered is not None and f.row_covered[r]:
                logger.warning("%s: row %d looks covered; not used for calibration", label, row.row)
                continue
            for j, h in enumerate(row.holes):
                code_samples.setdefault(h.colour, []).append(f.code[r * profile.holes + j])
            ks = slice(r * profile.key_holes, (r + 1) * profile.key_holes)
            key_rows.append((f.keys[ks], row.keys.black, row.keys.white))
        base = profile.rows * profile.holes
        if truth.secret is not None:
            for j, h in enumerate(truth.secret):
                code_samples.setdefault(h.colour, []).append(f.code[base + j])
        elif profile.shield_mm is not None:
            for j in range(profile.holes):
                code_samples.setdefault(SHIELD, []).append(f.code[base + j])

    missing = [c for c in (*profile.palette, EMPTY) if c not in code_samples]
    if missing:
        raise CalibrationError(
            f"the calibration images never show {', '.join(missing)}: the table cannot read a "
            f"colour it never saw; add an image (with its truth) where each appears"
        )
    lab = linear_bgr_to_lab(plastic)
    # The plastic's features: its colour twice (disc and ring), no dark area.
    towards = [*(float(v) for v in lab), *(float(v) for v in lab), 0.0]
    code_model = ColourModel.fit(
        {k: np.array(v) for k, v in code_samples.items()},
        floor_sigma=CODE_FLOOR,
        relative_sigma=RELATIVE_L_SIGMA,
        mix_towards=towards[:6],
        mix_fraction=CODE_MIX,
        glare_towards=GLARE_TOWARDS[:6],
        glare_fraction=CODE_GLARE,
        shading_sigma=SHADING_SIGMA,
        shading_dims=(0, 3),
        unshaded=UNSHADED,
    )
    key_model = _fit_keys(key_rows, profile, code_model, towards)
    return (float(plastic[0]), float(plastic[1]), float(plastic[2])), code_model, key_model


def _fit_keys(
    key_rows: Sequence[tuple[NDArray[np.float64], int, int]],
    profile: BoardProfile,
    code_model: ColourModel,
    towards: Sequence[float],
) -> ColourModel:
    place, colour = profile.right_place_key, profile.right_colour_key
    classes = (place, colour, EMPTY)
    counts = {c: 0 for c in classes}
    for _, b, w in key_rows:
        counts[place] += b
        counts[colour] += w
        counts[EMPTY] += profile.key_holes - b - w
    missing = [c for c in classes if counts[c] == 0]
    if missing:
        what = {place: f"a {place} key peg", colour: f"a {colour} key peg", EMPTY: "an empty key hole"}
        raise CalibrationError(
            "the calibration images never show " + " or ".join(what[c] for c in missing)
            + "; add a row marked with it"
        )
    # Start from the code-peg colours of the same names where the palette
    # has them; else from rows whose key holes are all of one class.
    means: dict[str, NDArray[np.float64]] = {}
    for c in classes:
        if c in code_model.names:
            means[c] = code_model.means[code_model.index(c)]
    k = profile.key_holes
    for c in classes:
        if c in means:
            continue
        pure = [lab[:, :6] for lab, b, w in key_rows if (c == place and b == k) or (c == colour and w == k)
                or (c == EMPTY and b + w == 0)]
        if not pure:
            raise CalibrationError(
                f"cannot learn the {c} key colour: it is not a code colour of {profile.name}; "
                f"add a calibration row whose key holes all hold {c}"
            )
        means[c] = np.median(np.concatenate(pure), axis=0)
    # The first arrangement uses the colour features only (the code model
    # knows nothing of key windows); later ones the full key model.
    model = ColourModel.fit({c: means[c][None, :6] for c in classes}, floor_sigma=(8.0,) * 6)
    for _ in range(3):
        samples: dict[str, list[NDArray[np.float64]]] = {c: [] for c in classes}
        for lab, b, w in key_rows:
            labels = _best_arrangement(model, lab[:, : model.dims], classes, (b, w, k - b - w))
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


def _best_arrangement(
    model: ColourModel, lab: NDArray[np.float64], classes: Sequence[str], counts: Sequence[int]
) -> tuple[str, ...]:
    d2 = model.distances2(lab)  # (k, classes)
    col = [model.index(c) for c in classes]
    pool = [c for c, n in zip(range(len(classes)), counts, strict=True) for _ in range(n)]
    best: tuple[int, ...] | None = None
    best_cost = np.inf
    for perm in set(itertools.permutations(pool)):
        cost = sum(d2[i, col[c]] for i, c in enumerate(perm))
        if cost < best_cost:
            best, best_cost = perm, cost
    assert best is not None
    return tuple(classes[c] for c in best)
