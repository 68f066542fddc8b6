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
counts (first under the code-peg colours of the same names, or rows whose
key holes are all of one kind, or, when neither exists, by lightness: the
right-colour key is told from the right-place one by which is lighter in
their nominal colours), then under the key model itself. So the key colours
are learned on their own, from any marked row.

A calibration need not see everything. An empty board gives the geometry,
the plastic and the empty holes; colours can follow later
(``base=``, from more photos with their truths, or from a swatch card:
``extra_code``/``extra_keys``). A colour never seen gets a guard class
(see :class:`pegwatch.vision.calibration.GuardedColourModel`): it reads
"unknown", never as another colour, and the calibration is low-trust until
every colour is learned. A board the localisation check refuses is read
without the check, low-trust, instead of being refused
(``allow_low_trust``).

The result is a :class:`pegwatch.vision.calibration.Calibration` (the
calibration file).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.calibrate_keys import Fitted, fit_keys
from pegwatch.vision.calibration import (
    CODE_FLOOR,
    CODE_GLARE,
    CODE_MIX,
    GLARE_TOWARDS,
    RELATIVE_L_SIGMA,
    SHADING_SIGMA,
    SHIELD,
    UNSHADED,
    Calibration,
    CalibrationError,
    learned_classes,
)
from pegwatch.vision.colour import ColourModel, linear_bgr_to_lab
from pegwatch.vision.localise.warp import ImageWarp
from pegwatch.vision.palette import light_gain, nominal_linear_bgr
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.reading import EMPTY, UNKNOWN, BoardReading
from pegwatch.vision.sampler import BoardSampler

logger = logging.getLogger(__name__)


#: Where a colour not learned yet is expected, around its nominal colour
#: under the table's light: standard deviations of the code features (disc
#: Lab, ring Lab) and, for keys, the dark fraction. Peg sets of one name
#: differ by about this much, so a guard covers the colour it stands for.
GUARD_SIGMA = (10.0, 12.0, 12.0, 12.0, 14.0, 14.0, 0.35)


def truth_from_record(record: Mapping[str, Any], profile: BoardProfile, *, where: str) -> BoardReading:
    """Parse and check a truth record against ``profile``.

    A hole may be ``"unknown"`` (and a row's ``black``/``white``
    ``"unknown"``): the calibration then learns nothing from it.
    """
    truth = BoardReading.from_record(
        record, holes=profile.holes, board_rows=profile.rows, keys_per_row=profile.key_holes, where=where
    )
    allowed = set(profile.palette) | {EMPTY, UNKNOWN}
    for row in truth.rows:
        for j, h in enumerate(row.holes):
            if h.colour not in allowed:
                raise CalibrationError(
                    f"{where}: rows[{row.row - 1}].guess[{j}]: {h.colour!r} is not in the "
                    f"{profile.name} palette ({', '.join(profile.palette)}), 'empty' or 'unknown'"
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
    allow_low_trust: bool = True,
    base: Calibration | None = None,
    extra_code: Mapping[str, NDArray[np.float64]] | None = None,
    extra_keys: Mapping[str, NDArray[np.float64]] | None = None,
) -> Calibration:
    """Fit a calibration from images of known contents (one truth per image).

    A truth is a :class:`BoardReading` or a game-record dict (checked with
    :func:`truth_from_record`). ``names`` label the images in error
    messages (file names).

    ``base``: an existing calibration to add to: its localisation and
    plastic are kept, and the colours these images show are learned (or
    learned again); ``images`` may then be empty when ``extra_code`` /
    ``extra_keys`` (normalised features by colour, e.g. from a swatch card)
    bring the colours. ``allow_low_trust``: a board the localisation check
    refuses is read without it and the calibration marked low-trust, rather
    than refused.
    """
    import pegwatch.vision.localise as localise

    if not images and base is None:
        raise CalibrationError("calibration needs at least one image")
    if len(truths) != len(images):
        raise CalibrationError(f"{len(images)} images but {len(truths)} truth records")
    if base is not None and base.profile != profile.name:
        raise CalibrationError(f"{base.source or 'the base calibration'}: is for board {base.profile!r}, not {profile.name!r}")
    labels = list(names) if names is not None else [f"image {i + 1}" for i in range(len(images))]
    parsed = [
        t if isinstance(t, BoardReading) else truth_from_record(t, profile, where=f"truth for {label}")
        for t, label in zip(truths, labels, strict=True)
    ]
    reasons: list[str] = []
    method: str
    reference: Any = None
    corners_px: tuple[tuple[float, float], ...] | None = None
    board_check = True
    if base is not None:
        ppm = base.px_per_mm
        method, corners_px, reference, board_check = base.method, base.corners_px, base.reference, base.board_check
        loc_obj: Any = base.localiser(profile)
        reasons.extend(r for r in base.trust_reasons if not r.startswith(_NOT_LEARNED))
    else:
        ppm = float(px_per_mm if px_per_mm is not None else localise.RECT_PX_PER_MM)
        if corners is not None:
            if len(corners) != 4:
                raise CalibrationError(f"--corners needs 4 points, got {len(corners)}")
            corners_px = tuple((float(x), float(y)) for x, y in corners)
            method = "corners"
            reference = localise.make_reference(profile, np.array(corners_px, dtype=np.float64), images[0])
            loc_obj = localise.FixedCornersLocaliser(profile, np.array(corners_px, dtype=np.float64), reference=reference)
        else:
            marker_loc = localise.MarkerLocaliser(profile)
            if marker_loc.locate(images[0]).ok:
                method, loc_obj = "markers", marker_loc
            else:
                logger.warning("markers not found in %s; using best-effort localisation (low trust)", labels[0])
                method, loc_obj = "best-effort", localise.BestEffortLocaliser(profile)
                reasons.append("the board is found by best effort (no markers seen, no --corners given)")

    homographies: list[NDArray[np.float64]] = []
    warps: list[ImageWarp | None] = []
    for img, label in zip(images, labels, strict=True):
        loc = loc_obj.locate(img)
        if not loc.ok and method == "corners" and allow_low_trust and corners_px is not None:
            # The picked corners place the board; only the check of the hole
            # pattern refused it. Read it, but never accuse from it.
            why = loc.problem or "localisation failed"
            logger.warning("%s: the board check refused it (%s); calibrating without it, low trust", label, why)
            reasons.append(f"{label}: the board check refused it ({why}); read without the board-moved check")
            board_check = False
            loc_obj = localise.FixedCornersLocaliser(profile, np.array(corners_px, dtype=np.float64), check=False)
            loc = loc_obj.locate(img)
        if not loc.ok:
            raise CalibrationError(f"{label}: board not found ({loc.problem or 'localisation failed'})")
        homographies.append(np.asarray(loc.image_to_board, dtype=np.float64))
        warps.append(loc.warp)
    h, w = images[0].shape[:2] if images else (0, 0)
    look = base.look if base is not None else localise.BoardLook.of(images[0], homographies[0], profile.size_mm)
    code_model, key_model, plastic = _models(
        images, homographies, parsed, profile, ppm, labels, base, extra_code or {}, extra_keys or {}, warps=warps
    )
    not_code = tuple(c for c in profile.palette if c not in learned_classes(code_model))
    key_classes = (profile.right_place_key, profile.right_colour_key, EMPTY)
    not_key = tuple(c for c in key_classes if c not in learned_classes(key_model))
    missing = [*not_code, *(f"{c} key" for c in not_key)]
    if missing:
        reasons.append(f"{_NOT_LEARNED}: {', '.join(missing)}")
    if not_code:
        logger.warning(
            "the calibration never saw %s: these read as unknown until learned "
            "(a photo with them and its truth, a swatch card, or confirmed rows)", ", ".join(not_code)
        )
    if not_key:
        logger.warning("the calibration never saw the %s key colour(s): key counts with them read as unknown", ", ".join(not_key))
    return Calibration(
        profile=profile.name,
        method=method,
        corners_px=corners_px,
        reference=reference,
        px_per_mm=ppm,
        plastic_linear=plastic,
        code_model=code_model,
        key_model=key_model,
        image_size=(int(w), int(h)) if images else (base.image_size if base is not None else None),
        trust="low" if reasons else "full",
        trust_reasons=tuple(dict.fromkeys(reasons)),
        not_learned=not_code,
        keys_not_learned=not_key,
        board_check=board_check,
        lens=None if base is None else base.lens,
        look=look,
    )


#: The trust reason about colours not learned starts so (it is recomputed on every update).
_NOT_LEARNED = "colours not learned"


def _models(
    images: Sequence[NDArray[np.uint8]],
    homographies: Sequence[NDArray[np.float64]],
    truths: Sequence[BoardReading],
    profile: BoardProfile,
    ppm: float,
    labels: Sequence[str],
    base: Calibration | None,
    extra_code: Mapping[str, NDArray[np.float64]],
    extra_keys: Mapping[str, NDArray[np.float64]],
    *,
    warps: Sequence[ImageWarp | None] | None = None,
) -> tuple[ColourModel, ColourModel, tuple[float, float, float]]:
    """The colour models (learned classes, then guards) and the plastic reference."""
    if images:
        plastic, code_samples, key_rows = collect_samples(
            images, homographies, truths, profile, ppm, names=labels,
            plastic=None if base is None else base.plastic_linear, warps=warps,
        )
    else:
        assert base is not None
        plastic, code_samples, key_rows = base.plastic_linear, {}, []
    for c, v in extra_code.items():
        code_samples.setdefault(c, []).extend(np.asarray(v, dtype=np.float64).reshape(-1, len(CODE_FLOOR)))
    lab = linear_bgr_to_lab(np.asarray(plastic))
    towards = [*(float(v) for v in lab), *(float(v) for v in lab), 0.0]
    kept_code = _learned_part(base.code_model) if base is not None else {}
    if EMPTY not in code_samples and EMPTY not in kept_code:
        raise CalibrationError(
            "the calibration images never show an empty hole: the table cannot tell a peg from a hole; "
            "add a photo of the board with empty holes (an empty board is enough)"
        )
    code_model = None
    if code_samples:
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
    code_learned = {**kept_code, **_learned_part(code_model)}
    key_classes = (profile.right_place_key, profile.right_colour_key, EMPTY)
    new_keys = fit_keys(key_rows, profile, code_learned, towards, extra_keys)
    key_learned = {**(_learned_part(base.key_model) if base is not None else {}), **_learned_part(new_keys)}
    code_guards = [c for c in profile.palette if c not in code_learned]
    key_guards = [c for c in key_classes if c not in key_learned]
    code = _with_guards(code_learned, code_guards, towards[:6], code_learned)
    keys = _with_guards(key_learned, key_guards, towards, code_learned)
    return code, keys, (float(plastic[0]), float(plastic[1]), float(plastic[2]))


def _learned_part(model: ColourModel | None) -> Fitted:
    if model is None:
        return {}
    return {
        n: (model.means[i], model.covariances[i], c)
        for i, (n, c) in enumerate(zip(model.names, model.counts, strict=True))
        if c > 0
    }


def _with_guards(learned: Fitted, guards: Sequence[str], towards: Sequence[float], code: Fitted) -> ColourModel:
    """A model of the learned classes plus one guard (no samples) per colour in ``guards``.

    A guard sits at the colour's nominal value under the table's light (the
    gain that best maps the nominal colours of the learned ones onto what
    was seen); an empty key hole's guard at the bare plastic. A name with no
    nominal colour gets no guard: it is still "unknown" wherever it is far
    from every learned class, and the calibration says it was not learned.
    """
    d = len(towards)
    names = list(learned)
    means = [learned[n][0] for n in names]
    covs = [learned[n][1] for n in names]
    counts = [learned[n][2] for n in names]
    gain = light_gain({n: m[:3] for n, (m, _c, _k) in code.items()})
    sigma = np.array(GUARD_SIGMA[:6] + ((GUARD_SIGMA[6],) if d > 6 else ()))
    for g in guards:
        if g == EMPTY:
            mean = np.array(towards, dtype=np.float64)
        elif (nominal := nominal_linear_bgr(g)) is not None:
            lab = linear_bgr_to_lab(nominal * gain)
            mean = np.concatenate([lab, lab, [0.5] if d > 6 else []])
        else:
            continue
        names.append(g)
        means.append(mean[:d])
        covs.append(np.diag(np.square(sigma)))
        counts.append(0)
    return ColourModel(tuple(names), np.array(means), np.array(covs), tuple(counts))


def collect_samples(
    frames: Sequence[NDArray[np.uint8]],
    image_to_board: Sequence[NDArray[np.float64]],
    truths: Sequence[BoardReading],
    profile: BoardProfile,
    px_per_mm: float,
    *,
    names: Sequence[str] | None = None,
    plastic: Sequence[float] | None = None,
    warps: Sequence[ImageWarp | None] | None = None,
) -> tuple[tuple[float, float, float], dict[str, list[NDArray[np.float64]]], list[tuple[NDArray[np.float64], int, int]]]:
    """The plastic reference and the normalised samples: code features by colour, key rows with their counts.

    ``plastic``: a reference already calibrated (else measured here).
    ``warps``: each frame's lens bend, when its homography maps ideal pixels.
    Covered rows, ``"unknown"`` holes and rows whose key counts are unknown
    teach nothing.
    """
    labels = list(names) if names is not None else [f"image {i + 1}" for i in range(len(frames))]
    sampler = BoardSampler(profile, px_per_mm)
    bends = list(warps) if warps is not None else [None] * len(frames)
    triples = list(zip(frames, image_to_board, bends, strict=True))
    if plastic is None:
        first = [sampler.features_from_frame(f, h, None, warp=b) for f, h, b in triples]
        ref = np.exp(np.mean([np.log(f.plastic_linear) for f in first], axis=0))
    else:
        ref = np.asarray(plastic, dtype=np.float64)
    feats = [sampler.features_from_frame(f, h, ref, warp=b) for f, h, b in triples]
    code_samples: dict[str, list[NDArray[np.float64]]] = {}
    key_rows: list[tuple[NDArray[np.float64], int, int]] = []
    for f, truth, label in zip(feats, truths, labels, strict=True):
        for row in truth.rows:
            r = row.row - 1
            if f.row_covered is not None and f.row_covered[r]:
                logger.warning("%s: row %d looks covered; not used for calibration", label, row.row)
                continue
            for j, h in enumerate(row.holes):
                if h.colour != UNKNOWN:
                    code_samples.setdefault(h.colour, []).append(f.code[r * profile.holes + j])
            if row.keys.is_certain:
                ks = slice(r * profile.key_holes, (r + 1) * profile.key_holes)
                key_rows.append((f.keys[ks], row.keys.black, row.keys.white))
        base = profile.rows * profile.holes
        if truth.secret is not None:
            for j, h in enumerate(truth.secret):
                if h.colour != UNKNOWN:
                    code_samples.setdefault(h.colour, []).append(f.code[base + j])
        elif profile.shield_mm is not None:
            for j in range(profile.holes):
                code_samples.setdefault(SHIELD, []).append(f.code[base + j])
    return (float(ref[0]), float(ref[1]), float(ref[2])), code_samples, key_rows


def fit_colours(
    frames: Sequence[NDArray[np.uint8]],
    image_to_board: Sequence[NDArray[np.float64]],
    truths: Sequence[BoardReading],
    profile: BoardProfile,
    px_per_mm: float,
    *,
    names: Sequence[str] | None = None,
) -> tuple[tuple[float, float, float], ColourModel, ColourModel]:
    """Fit the plastic reference and the code and key models (guards for what was not seen).

    ``image_to_board[i]`` locates the board in ``frames[i]`` (for an already
    rectified image it is ``diag(1/px_per_mm, 1/px_per_mm, 1)``).
    """
    labels = list(names) if names is not None else [f"image {i + 1}" for i in range(len(frames))]
    code, keys, plastic = _models(frames, image_to_board, truths, profile, px_per_mm, labels, None, {}, {})
    return plastic, code, keys
