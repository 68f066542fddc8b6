"""From one camera frame to a :class:`~pegwatch.vision.reading.BoardReading`.

The pipeline, per frame (see ``docs/vision.md``):

1. Localise the board (markers, fixed corners or best effort, as the
   calibration says).
2. Gather, in one numpy index, the pixels of every hole's inner disc and
   ring, a window around each key hole, and cells of bare plastic (the
   profile's plastic regions and the strips between rows). The sample
   positions are precomputed in board mm and projected through the
   homography (cached while it does not change): the same samples as a
   warp to ``px_per_mm``, without warping.
3. Per hole, drop the brightest half of the pixels (glare on round pegs)
   and the darkest few, and take the per-channel median of the rest.
4. Normalise the light in linear RGB: a smooth (log-linear) model of the
   plastic's colour over the board, fitted robustly to the plastic cells,
   is compared with the calibration's plastic colour; the cells beside
   each hole add a local, grey shading factor (a soft shadow).
5. Convert to CIELAB and classify with the calibrated
   :class:`~pegwatch.vision.colour.ColourModel`: unknown when too far from every
   class or too close to two; a channel clipped by the sensor is tried at
   every value it may hide.
6. Occlusion: a plastic cell beside a row that no longer looks like plastic,
   a step in the light between neighbouring cells, or an edge across a cell
   means something lies over that row: the row is "occluded".

A row is "ok" only when every hole and key hole was read confidently.

The sampling itself is :class:`~pegwatch.vision.sampler.BoardSampler`.
"""

from __future__ import annotations

import logging
import time

import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import PegwatchError
from pegwatch.vision.calibration import SHIELD, Calibration, CalibrationError
from pegwatch.vision.colour import ColourModel, linear_bgr_to_lab
from pegwatch.vision.localise import Localisation, Localiser
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.reading import (
    EMPTY,
    OCCLUDED,
    ROW_EMPTY,
    ROW_OCCLUDED,
    ROW_OK,
    ROW_UNKNOWN,
    UNKNOWN,
    BoardReading,
    HoleReading,
    KeyReading,
    RowReading,
    unreadable_row,
)
from pegwatch.vision.sampler import BoardSampler, Features, FloatArray

__all__ = ["CLIP_FACTORS", "BoardReader", "BoardSampler", "Features"]

logger = logging.getLogger(__name__)

#: The linear-light factors a channel clipped by the sensor may hide (see
#: :data:`pegwatch.vision.sampler.CLIP_LEVEL`): a clipped hole is classified
#: by its best fit over them.
CLIP_FACTORS = (1.0, 1.15, 1.3, 1.5, 1.75, 2.0, 2.4, 3.0, 4.0)


class BoardReader:
    """Reads boards of one profile with one table's calibration.

    ``read(frame)`` never raises on a bad frame: an unreadable board comes
    back with ``problem`` set and every row "unknown".
    """

    def __init__(self, profile: BoardProfile, calibration: Calibration) -> None:
        if calibration.profile != profile.name:
            raise CalibrationError(
                f"calibration is for board {calibration.profile!r}, not {profile.name!r}"
            )
        self.profile = profile
        self.calibration = calibration
        self.sampler = BoardSampler(profile, calibration.px_per_mm)
        self._localiser: Localiser | None = None
        self.code_model: ColourModel = calibration.code_model
        self.key_model: ColourModel = calibration.key_model
        names = self.code_model.names
        self._guess_allowed = [n != SHIELD for n in names]
        self._code_names = np.array(names, dtype=object)
        key_names = self.key_model.names
        self._key_is_place = np.array([n == profile.right_place_key for n in key_names])
        self._key_is_colour = np.array([n == profile.right_colour_key for n in key_names])
        self._key_is_empty = np.array([n == EMPTY for n in key_names])
        self.last_localisation: Localisation | None = None

    @property
    def localiser(self) -> Localiser:
        """The localiser the calibration asks for (made on first use)."""
        if self._localiser is None:
            made: Localiser = self.calibration.localiser(self.profile)
            self._localiser = made
        return self._localiser

    def read(self, frame: NDArray[np.uint8], *, at_ns: int | None = None) -> BoardReading:
        """Read one BGR frame; ``at_ns`` defaults to ``time.monotonic_ns()``.

        A frame that is not an 8-bit colour image gives a reading with
        ``problem`` set, like a frame without a board: the table keeps going.
        """
        stamp = time.monotonic_ns() if at_ns is None else at_ns
        self.last_localisation = None
        if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
            shape = getattr(frame, "shape", type(frame).__name__)
            dtype = getattr(frame, "dtype", "")
            return self.unreadable(f"not an 8-bit BGR frame ({shape} {dtype})".strip(), stamp)
        try:
            loc = self.localiser.locate(frame)
        except PegwatchError as exc:
            return self.unreadable(str(exc), stamp)
        self.last_localisation = loc
        if not loc.ok or loc.image_to_board is None:
            return self.unreadable(loc.problem or "no board found", stamp)
        f = self.sampler.features_from_frame(frame, loc.image_to_board, self.calibration.plastic_linear)
        return self._classify(f, stamp)

    def unreadable(self, problem: str, at_ns: int) -> BoardReading:
        """A reading that says the board could not be read, and why."""
        p = self.profile
        rows = tuple(unreadable_row(r, p.holes, p.key_holes) for r in range(1, p.rows + 1))
        return BoardReading(p.name, rows, None, problem, at_ns)

    def read_rectified(self, rect: NDArray[np.uint8], *, at_ns: int = 0) -> BoardReading:
        """Read an already rectified board image."""
        return self._classify(self.sampler.features(rect, self.calibration.plastic_linear), at_ns)

    def _classify(self, f: Features, at_ns: int) -> BoardReading:
        p = self.profile
        n_guess = p.rows * p.holes
        code_d2 = _censored_distances(self.code_model, f.code, f.code_linear, f.code_clipped)
        key_d2 = _censored_distances(self.key_model, f.keys, f.key_linear, f.key_clipped)
        cc = self.code_model.classify_distances(code_d2[:n_guess], allowed=self._guess_allowed)
        sc = self.code_model.classify_distances(code_d2[n_guess:])
        kc = self.key_model.classify_distances(key_d2)
        code_ok = cc.accepted
        secret_ok = sc.accepted
        key_ok = kc.accepted
        code_names = self._code_names[cc.best]
        rows: list[RowReading] = []
        n_k = p.key_holes
        for r in range(p.rows):
            occluded = bool(f.row_covered[r]) if f.row_covered is not None else False
            if occluded:
                rows.append(unreadable_row(r + 1, p.holes, n_k, ROW_OCCLUDED))
                continue
            sl = slice(r * p.holes, (r + 1) * p.holes)
            holes: list[HoleReading] = []
            for name, acc, conf in zip(code_names[sl], code_ok[sl], cc.confidence[sl], strict=True):
                holes.append(HoleReading(str(name) if acc else UNKNOWN, float(conf)))
            ks = slice(r * n_k, (r + 1) * n_k)
            kbest = kc.best[ks]
            kacc = key_ok[ks]
            black = int(self._key_is_place[kbest].sum())
            white = int(self._key_is_colour[kbest].sum())
            empty = int(self._key_is_empty[kbest].sum())
            kconf = float(kc.confidence[ks].min())
            if not kacc.all():
                kstatus = ROW_UNKNOWN
            elif black + white == 0:
                kstatus = ROW_EMPTY
            else:
                kstatus = ROW_OK
            keys = KeyReading(black, white, empty, kconf, kstatus)
            if any(not h.is_certain for h in holes) or kstatus == ROW_UNKNOWN:
                status = ROW_UNKNOWN
            elif all(h.colour == EMPTY for h in holes) and kstatus == ROW_EMPTY:
                status = ROW_EMPTY
            else:
                status = ROW_OK
            rows.append(RowReading(r + 1, tuple(holes), keys, status))
        if f.row_covered is not None and f.row_covered[p.rows]:
            secret: tuple[HoleReading, ...] | None = tuple(HoleReading(OCCLUDED, 0.0) for _ in range(p.holes))
        else:
            secret = self._read_secret(sc.best, secret_ok, sc.confidence)
        sigs = tuple(tuple(float(v) for v in s) for s in f.signatures)
        return BoardReading(p.name, tuple(rows), secret, None, at_ns, row_signatures=sigs, trust=self.calibration.trust)

    def _read_secret(
        self, best: NDArray[np.intp], ok: NDArray[np.bool_], conf: FloatArray
    ) -> tuple[HoleReading, ...] | None:
        p = self.profile
        names = self._code_names[best]
        if int(np.sum(names == SHIELD)) * 2 >= p.holes:
            return None  # the shield hides the secret
        holes = tuple(
            HoleReading(str(n) if a and n != SHIELD else UNKNOWN, float(c))
            for n, a, c in zip(names, ok, conf, strict=True)
        )
        if all(h.colour == EMPTY for h in holes):
            return None  # no secret set up (or not visible)
        if all(h.colour == UNKNOWN for h in holes):
            return None
        return holes


def _censored_distances(
    model: ColourModel,
    features: FloatArray,
    linear: FloatArray | None,
    clipped: NDArray[np.bool_] | None,
) -> FloatArray:
    """Squared distances (n, k); for clipped holes, the best over the values clipping hides.

    Each clipped channel is tried at every factor of ``CLIP_FACTORS``
    independently (two clipped channels: every pair), since clipping says
    nothing about how the hidden values compare.
    """
    d2 = model.distances2(features)
    if linear is None or clipped is None:
        return d2
    factors = np.asarray(CLIP_FACTORS, dtype=np.float64)
    for i in np.flatnonzero(clipped.any(axis=1)):
        chans = np.flatnonzero(clipped[i])
        grids = np.meshgrid(*([factors] * len(chans)), indexing="ij")
        scale = np.ones((grids[0].size, 3))
        for c, g in zip(chans, grids, strict=True):
            scale[:, c] = g.ravel()
        lab = linear_bgr_to_lab(linear[i][None, :] * scale)
        rest = np.broadcast_to(features[i, 3:], (len(scale), features.shape[1] - 3))
        d2[i] = model.distances2(np.concatenate([lab, rest], axis=1)).min(axis=0)
    return d2
