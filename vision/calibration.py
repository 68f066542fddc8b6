"""The per-table calibration file: how to find the board, and what its colours look like.

:class:`Calibration` is what ``pegwatch calibrate`` writes and the reader
reads with: the localisation (method, corners, the board-moved reference),
the plastic's reference colour and the code and key colour models. It is
JSON (see :meth:`Calibration.to_dict`), checked in full when loaded
(:meth:`Calibration.from_dict`, :meth:`Calibration.load`).

The fitting that makes one from photos of known contents is
:func:`pegwatch.vision.calibrate.calibrate`. The colour models' floors and
spreads below are here because the file is checked against the feature
counts they fix; the fitting uses them all.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pegwatch.rules.errors import BadInput, PegwatchError
from pegwatch.rules.textfile import MIB, parse_json, read_text
from pegwatch.vision.colour import Classification, ColourModel, ColourModelError, FloatArray
from pegwatch.vision.lens import Lens, LensError, lens_from_dict
from pegwatch.vision.profile import BoardProfile, ProfileError, load_profile
from pegwatch.vision.reading import EMPTY

if TYPE_CHECKING:
    from pegwatch.vision.localise import BoardLook, Localiser

FORMAT_VERSION = 1
SHIELD = "shield"
METHODS = ("markers", "corners", "best-effort")
#: A calibration's trust: "full", or "low" when a board read with it must never accuse.
TRUST_LEVELS = ("full", "low")
#: A calibration file larger than this is refused before it is parsed (one is ~20 KiB, and its
#: board picture, ``localisation.look``, 30-120 KiB more).
MAX_CALIBRATION_BYTES = 1 * MIB
#: Pixel coordinates and image sizes in a calibration are within this.
_MAX_PX = 100_000

#: Floors of the colour models (see ColourModel.fit): standard deviations of
#: (L, a, b, ring L, ring a, ring b[, key window's dark fraction]); the lightness spread relative to L; the fraction of
#: mixing with the plastic around a peg. Key pegs are small, so more of
#: their pixels mix with the plastic.
CODE_FLOOR = (3.0, 2.5, 2.5, 4.0, 3.0, 3.0)
KEY_FLOOR = (4.0, 3.0, 3.0, 5.0, 3.5, 3.5, 0.06)
RELATIVE_L_SIGMA = 0.06
CODE_MIX = 0.15
KEY_MIX = 0.15
CODE_GLARE = 0.03
KEY_GLARE = 0.05
#: How much a peg's own shading may change relative to the plastic (log of
#: linear light): the light's elevation and direction move the shade on a
#: dome; a flat board does not show it. Pegs only: an empty hole and the
#: shield are flat.
SHADING_SIGMA = 0.35
UNSHADED = (EMPTY, SHIELD)
#: Glare moves the disc towards the light's white and leaves the ring and
#: the dark fraction be.
GLARE_TOWARDS = (100.0, 0.0, 0.0, float("nan"), float("nan"), float("nan"), float("nan"))


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class CalibrationError(BadInput):
    """A calibration cannot be made or loaded; the message says why and where."""


@dataclass(frozen=True, eq=False)
class GuardedColourModel(ColourModel):
    """A colour model in which the classes with no samples (``counts`` 0) are guards.

    A guard stands for a colour the table has not learned yet: a broad
    Gaussian where that colour is expected to lie. It takes its share of
    the posterior, so a hole that may be the unlearned colour is not
    accepted as a learned neighbour, and it is never accepted itself: a hole
    nearest a guard reads "unknown", never the guard's colour.
    """

    def classify_distances(self, d2: FloatArray, *, allowed: Sequence[bool] | None = None) -> Classification:
        """As :meth:`ColourModel.classify_distances`, with guards never accepted."""
        c = super().classify_distances(d2, allowed=allowed)
        guard = np.array([n == 0 for n in self.counts], dtype=bool)
        return replace(c, accepted=c.accepted & ~guard[c.best])


def guarded(model: ColourModel) -> ColourModel:
    """``model`` as a :class:`GuardedColourModel` when it has guard classes (else itself)."""
    if isinstance(model, GuardedColourModel) or all(c > 0 for c in model.counts):
        return model
    return GuardedColourModel(
        model.names, model.means, model.covariances, model.counts,
        reject_alpha=model.reject_alpha, min_posterior=model.min_posterior,
    )


def learned_classes(model: ColourModel) -> tuple[str, ...]:
    """The classes of ``model`` that calibration samples were seen for."""
    return tuple(n for n, c in zip(model.names, model.counts, strict=True) if c > 0)


@dataclass(frozen=True, eq=False)
class Calibration:
    """One table's calibration (JSON file; see :meth:`to_dict`)."""

    profile: str
    method: str
    corners_px: tuple[tuple[float, float], ...] | None
    reference: Any
    px_per_mm: float
    plastic_linear: tuple[float, float, float]
    code_model: ColourModel
    key_model: ColourModel
    image_size: tuple[int, int] | None = None
    #: The camera's lens from ``pegwatch calibrate-lens`` (None: not calibrated; files
    #: without the ``lens`` key load as before).
    lens: Lens | None = None
    #: The file it was loaded from ("" when made in code), for messages.
    source: str = ""
    #: "full", or "low": a board read with this calibration is shown, never
    #: used to accuse (the reader copies it into ``BoardReading.trust``).
    trust: str = "full"
    #: Why the trust is low, one human sentence each.
    trust_reasons: tuple[str, ...] = ()
    #: Palette colours that no calibration image showed: they read
    #: "unknown", never as another colour (see :class:`GuardedColourModel`).
    not_learned: tuple[str, ...] = ()
    #: Key colours (right place, right colour, empty) that were never seen.
    keys_not_learned: tuple[str, ...] = ()
    #: Whether every frame's hole pattern is checked against the corners
    #: reference (False: the check refused the calibration photo itself, and
    #: the board is read low-trust without it).
    board_check: bool = True
    #: The board as the calibration photo showed it, top-down: best effort
    #: finds the board again by it wherever the camera has moved (None: files
    #: without ``localisation.look``, and calibrations added to such a file).
    look: BoardLook | None = None

    def __post_init__(self) -> None:
        # Classes with no samples are guards (colours not learned yet): they
        # must never be accepted, whichever way the calibration was made.
        object.__setattr__(self, "code_model", guarded(self.code_model))
        object.__setattr__(self, "key_model", guarded(self.key_model))
        if self.trust not in TRUST_LEVELS:
            raise CalibrationError(f"trust: {self.trust!r} is not one of {', '.join(TRUST_LEVELS)}")

    @property
    def warnings(self) -> tuple[str, ...]:
        """What a person should know about this calibration, one sentence each."""
        out: list[str] = []
        if self.not_learned:
            out.append(
                f"colours not learned yet: {', '.join(self.not_learned)} (they read as unknown; "
                "add a photo with them, a swatch card or confirmed rows)"
            )
        if self.keys_not_learned:
            out.append(
                f"key colours not learned yet: {', '.join(self.keys_not_learned)} (key counts with them "
                "read as unknown; add a photo of marked rows or a swatch card)"
            )
        if self.trust == "low":
            out.append("low trust: boards read with it are shown, never used to accuse (" + "; ".join(self.trust_reasons) + ")")
        return tuple(out)

    def localiser(self, profile: BoardProfile) -> Localiser:
        """A fresh localiser of the calibrated kind for ``profile``."""
        from pegwatch.vision.localise import localiser_for

        if self.method == "markers":
            return localiser_for(profile, "markers", lens=self.lens)
        if self.method == "corners":
            if self.corners_px is None:
                raise CalibrationError("calibration uses corners but has none")
            if not self.board_check:
                from pegwatch.vision.localise import FixedCornersLocaliser

                # The check refused the calibration photo itself: the picked
                # corners alone place the board (and the trust is low).
                return FixedCornersLocaliser(profile, self.corners_px, check=False)
            return localiser_for(
                profile, "corners", corners_px=self.corners_px, reference=_reference_in(self.reference), lens=self.lens
            )
        return localiser_for(profile, "best-effort", lens=self.lens, look=self.look)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "format": "pegwatch-calibration",
            "version": FORMAT_VERSION,
            "profile": self.profile,
            "localisation": {
                "method": self.method,
                "corners_px": None if self.corners_px is None else [list(c) for c in self.corners_px],
                "reference": _reference_out(self.reference),
                "check": self.board_check,
                **({} if self.look is None else {"look": self.look.to_record()}),
            },
            "px_per_mm": self.px_per_mm,
            "plastic_linear_bgr": list(self.plastic_linear),
            "image_size": None if self.image_size is None else list(self.image_size),
            "code_model": self.code_model.to_dict(),
            "key_model": self.key_model.to_dict(),
            # Added keys (older files have none of them and load as "full" trust, all learned):
            "trust": self.trust,
            "trust_reasons": list(self.trust_reasons),
            "not_learned": {"code": list(self.not_learned), "key": list(self.keys_not_learned)},
            "warnings": list(self.warnings),
            **({} if self.lens is None else {"lens": self.lens.to_dict()}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "calibration") -> Calibration:
        """Parse :meth:`to_dict`'s form; errors name ``where`` and the key.

        Every value is checked here (finite numbers in range, the colour
        models' shapes against the reader's features, the corners
        reference), so a file that loads can be read with.
        """
        if not isinstance(data, Mapping) or data.get("format") != "pegwatch-calibration":
            raise CalibrationError(f"{where}: not a pegwatch calibration file (no \"format\": \"pegwatch-calibration\")")

        def bad(key: str, why: str) -> CalibrationError:
            return CalibrationError(f"{where}: {key}: {why}")

        def number(value: object, key: str, low: float, high: float) -> float:
            if value is None:
                raise bad(key, "missing")
            if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
                raise bad(key, f"{_short(value)} is not a number in {low:g}..{high:g}")
            return float(value)

        version = data.get("version")
        if version != FORMAT_VERSION or isinstance(version, bool):
            raise bad("version", f"{_short(version)} is not {FORMAT_VERSION}")
        profile = data.get("profile")
        if not isinstance(profile, str) or not profile.strip():
            raise bad("profile", f"{_short(profile)} is not a board profile name or path")
        loc = data.get("localisation")
        if loc is None:
            raise bad("localisation.method", "missing")
        if not isinstance(loc, Mapping):
            raise bad("localisation", f"{_short(loc)} is not an object")
        method = loc.get("method")
        if method is None:
            raise bad("localisation.method", "missing")
        if not isinstance(method, str) or method not in METHODS:
            raise bad("localisation.method", f"{_short(method)} is not one of {', '.join(METHODS)}")
        raw_corners = loc.get("corners_px")
        corners = None
        if raw_corners is not None:
            if not isinstance(raw_corners, list) or len(raw_corners) != 4:
                raise bad("localisation.corners_px", f"needs 4 corners [x, y], got {_short(raw_corners)}")
            points: list[tuple[float, float]] = []
            for i, c in enumerate(raw_corners):
                if not isinstance(c, list) or len(c) != 2:
                    raise bad(f"localisation.corners_px[{i}]", f"{_short(c)} is not a point [x, y]")
                key = f"localisation.corners_px[{i}]"
                points.append((number(c[0], key, -_MAX_PX, _MAX_PX), number(c[1], key, -_MAX_PX, _MAX_PX)))
            corners = tuple(points)
        if method == "corners" and corners is None:
            raise bad("localisation.corners_px", "the corners method needs 4 corners")
        reference = loc.get("reference")
        try:
            _reference_in(reference)
        except (PegwatchError, KeyError, TypeError, ValueError, OverflowError) as exc:
            raise bad("localisation.reference", f"malformed ({exc})") from None
        check = loc.get("check", True)
        if not isinstance(check, bool):
            raise bad("localisation.check", f"{_short(check)} is not true or false")
        look = None
        if loc.get("look") is not None:
            from pegwatch.vision.localise import BoardLook, LookError

            try:
                look = BoardLook.from_record(loc["look"], where=f"{where}: localisation.look")
            except LookError as exc:
                raise CalibrationError(str(exc)) from None
        ppm = number(data.get("px_per_mm"), "px_per_mm", 0.5, 20)
        pl_raw = data.get("plastic_linear_bgr")
        if not isinstance(pl_raw, list) or len(pl_raw) != 3:
            raise bad("plastic_linear_bgr", f"{_short(pl_raw)} is not three positive numbers")
        pl = tuple(number(v, f"plastic_linear_bgr[{i}]", 1e-6, 10.0) for i, v in enumerate(pl_raw))
        size = data.get("image_size")
        image_size = None
        if size is not None:
            if not isinstance(size, list) or len(size) != 2 or not all(
                isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= _MAX_PX for v in size
            ):
                raise bad("image_size", f"{_short(size)} is not [width, height] in pixels")
            image_size = (int(size[0]), int(size[1]))
        models: list[ColourModel] = []
        for key, dims in (("code_model", len(CODE_FLOOR)), ("key_model", len(KEY_FLOOR))):
            try:
                model = ColourModel.from_dict(data.get(key), where=f"{where}: {key}")  # type: ignore[arg-type]
            except ColourModelError as exc:
                raise CalibrationError(str(exc)) from None
            if model.dims != dims:
                raise bad(key, f"has {model.dims} features per class; the reader measures {dims}")
            models.append(model)
        trust = data.get("trust", "full")
        if not isinstance(trust, str) or trust not in TRUST_LEVELS:
            raise bad("trust", f"{_short(trust)} is not one of {', '.join(TRUST_LEVELS)}")
        reasons = _strings(data.get("trust_reasons", []), "trust_reasons", bad)
        nl = data.get("not_learned", {})
        if not isinstance(nl, Mapping):
            raise bad("not_learned", f"{_short(nl)} is not an object {{\"code\": [...], \"key\": [...]}}")
        not_code = _strings(nl.get("code", []), "not_learned.code", bad)
        not_key = _strings(nl.get("key", []), "not_learned.key", bad)
        try:
            lens = lens_from_dict(data.get("lens"), where=f"{where}: lens")
        except LensError as exc:
            raise CalibrationError(str(exc)) from None
        return cls(
            profile=profile,
            method=str(method),
            corners_px=corners,
            reference=reference,
            px_per_mm=ppm,
            plastic_linear=(pl[0], pl[1], pl[2]),
            code_model=models[0],
            key_model=models[1],
            image_size=image_size,
            lens=lens,
            source=where,
            trust=trust,
            trust_reasons=reasons,
            not_learned=not_code,
            keys_not_learned=not_key,
            board_check=check,
            look=look,
        )

    def save(self, path: str | Path) -> None:
        """Write the JSON file."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        """Read a calibration file; a bad file is a :class:`CalibrationError` naming it."""
        p = Path(path)
        if not p.exists():
            raise CalibrationError(f"{p}: calibration file not found")
        text = read_text(p, limit=MAX_CALIBRATION_BYTES, what="a JSON calibration file", error=CalibrationError)
        data = parse_json(text, source=str(p), error=CalibrationError, syntax="not valid JSON")
        return cls.from_dict(data, where=str(p))

    def load_profile(self) -> BoardProfile:
        """The board profile this calibration was made for; a fault names the calibration's file."""
        try:
            return load_profile(self.profile)
        except ProfileError as exc:
            if not self.source:
                raise
            raise CalibrationError(f"{self.source}: profile: {exc}") from None


def _strings(value: object, key: str, bad: Callable[[str, str], CalibrationError]) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > 64 or not all(isinstance(v, str) and 0 < len(v) <= 200 for v in value):
        raise bad(key, f"{_short(value)} is not a list of short strings")
    return tuple(value)


def _reference_out(ref: Any) -> Any:
    if ref is None:
        return None
    if hasattr(ref, "to_dict"):
        return ref.to_dict()
    if isinstance(ref, np.ndarray):
        return ref.tolist()
    return ref


def _reference_in(ref: Any) -> Any:
    from pegwatch.vision.localise import CornersReference, reference_from_dict

    # A calibration fresh from ``calibrate`` holds the object; a loaded one, its JSON.
    if ref is None or isinstance(ref, CornersReference):
        return ref
    return reference_from_dict(ref)
