"""The reader's measurements: every hole, key window and plastic cell of a board, sampled at once.

:class:`BoardSampler` precomputes, for one profile and scale, the board-mm
position of every sample point (inner discs and rings of the code and key
holes, a window around each key hole, cells of bare plastic), projects them
through the homography (cached while it does not change: the same samples
as a warp to ``px_per_mm``, without warping), gathers them from a frame in
one numpy index, and turns them into light-normalised
CIELAB :class:`Features` with the occlusion probes (see ``docs/vision.md``).
The calibration fits its colour models to these features and the reader
classifies them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import BadInput
from pegwatch.vision.cells import build_layout, fit_light, light_design, min_pitch
from pegwatch.vision.colour import linear_bgr_to_lab, srgb_to_linear
from pegwatch.vision.cover import PLASTIC_BRIGHTNESS_RANGE, CoverGraph, cell_flags
from pegwatch.vision.localise.base import Localisation
from pegwatch.vision.localise.warp import ImageWarp, fit_key, to_image
from pegwatch.vision.pixel_stats import (
    brightness,
    channel_means,
    channel_order,
    clipped_channels,
    dark_area,
    disc_offsets,
    local_matrix,
    local_mean,
    median_axis1,
    pixels_at,
    split_groups,
    square_offsets,
    trimmed_median,
)
from pegwatch.vision.profile import BoardProfile

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]

#: Sample the inner part of each hole: localisation may be off by a little
#: at the edges of the image (lens distortion), and the rim of a peg is shaded.
CODE_DISC_FRACTION = 0.5
KEY_DISC_FRACTION = 0.45
#: The window's radius (times the peg head radius) and what counts as dark
#: in it (times the plastic's brightness around it).
KEY_WINDOW_FRACTION = 1.3
DARK_FRACTION = 0.6
#: The ring (fractions of the peg-head radius) whose colour tells an
#: empty hole (bare plastic around a small dark hole) from a dark peg.
RING_FRACTIONS = (0.76, 0.94)
#: Rank window (by brightness) of the pixels kept in a disc: the top half
#: holds the glare on a round peg, the bottom 5 % noise and hole edges.
RANK_LOW = 0.05
RANK_HIGH = 0.50


@dataclass(frozen=True)
class Features:
    """Per-frame measurements, before classification.

    ``code``/``keys``: normalised features per hole, (n_code, 6) and
    (n_key, 7): CIELAB of the inner disc, CIELAB of the ring around it
    (bare plastic around an empty hole, the peg's own rim otherwise); key
    holes add the dark fraction of a window around them (a dark key peg's
    whole head, or only an empty hole's smaller opening, wherever in the
    window they sit). Code holes are ordered row by row (hole 1 first), then the
    secret holes. ``cell_ok``: per plastic probe cell, whether it still
    looks like bare plastic. ``signatures``: per row appearance summary.
    ``plastic_linear``: the plastic model's mean linear BGR (for the
    calibration reference). ``code_clipped``/``key_clipped``: per hole and
    channel, whether the sensor clipped it (its true value is only known
    to be at least the measured one) while some other channel is not
    clipped; ``code_linear``/``key_linear``: the normalised linear BGR of
    the inner discs, from which the reader explores clipped values.
    ``row_covered``: per row (then the secret row), whether a cover lies
    over it, from the cells alone (see :mod:`pegwatch.vision.cover`; the
    reader adds its unreadable holes). ``cell_odd``: cells that are not
    bare plastic (``cell_shaded``, ``cell_edge``, ``cell_faint``: of those,
    the kinds :class:`~pegwatch.vision.cover.CellFlags` names); ``cell_grey``/``cell_chroma``: each cell's brightness and
    chroma ratio to the light model; ``cell_linear``: its normalised linear
    BGR (bare plastic reads as the calibration's plastic colour).
    ``code_head`` ... ``key_head_linear``: the same as ``code`` ...
    ``key_linear``, sampled where a peg's head stands above its hole (None
    when the pegs are flat or the camera's pose is not known).
    ``code_plastic``: the plastic's linear BGR light at each code hole, as
    the light model and the cells beside it put it (not normalised).
    """

    code: FloatArray
    keys: FloatArray
    cell_ok: NDArray[np.bool_]
    signatures: FloatArray
    plastic_linear: FloatArray
    code_clipped: NDArray[np.bool_] | None = None
    key_clipped: NDArray[np.bool_] | None = None
    code_linear: FloatArray | None = None
    key_linear: FloatArray | None = None
    row_covered: NDArray[np.bool_] | None = None
    cell_odd: NDArray[np.bool_] | None = None
    cell_shaded: NDArray[np.bool_] | None = None
    cell_edge: NDArray[np.bool_] | None = None
    cell_faint: NDArray[np.bool_] | None = None
    cell_grey: FloatArray | None = None
    cell_chroma: FloatArray | None = None
    cell_linear: FloatArray | None = None
    code_head: FloatArray | None = None
    key_head: FloatArray | None = None
    code_head_clipped: NDArray[np.bool_] | None = None
    key_head_clipped: NDArray[np.bool_] | None = None
    code_head_linear: FloatArray | None = None
    key_head_linear: FloatArray | None = None
    code_plastic: FloatArray | None = None


class _Points:
    """Integer pixel centres and a sampling pattern around each."""

    def __init__(self, centres_mm: FloatArray, s: float, dy: IntArray, dx: IntArray) -> None:
        self.cx = np.rint(centres_mm[:, 0] * s).astype(np.intp)
        self.cy = np.rint(centres_mm[:, 1] * s).astype(np.intp)
        self.dy = dy
        self.dx = dx


class BoardSampler:
    """Precomputed sampling of one profile at one scale (``px_per_mm``).

    Build once per profile and scale; then :meth:`features_from_frame`
    measures a camera frame given its localisation, and :meth:`features` a
    rectified board image of that scale.
    """

    def __init__(self, profile: BoardProfile, px_per_mm: float) -> None:
        self.profile = profile
        self.px_per_mm = px_per_mm
        w_mm, h_mm = profile.size_mm
        self.width = round(w_mm * px_per_mm)
        self.height = round(h_mm * px_per_mm)
        s = px_per_mm

        code_centres: list[tuple[float, float]] = []
        for row in range(1, profile.rows + 1):
            code_centres.extend(profile.hole_centres_mm(row))
        code_centres.extend(profile.secret_centres_mm())
        key_centres: list[tuple[float, float]] = []
        for row in range(1, profile.rows + 1):
            key_centres.extend(profile.key_centres_mm(row))
        self.code_centres_mm = np.array(code_centres, dtype=np.float64)
        self.key_centres_mm = np.array(key_centres, dtype=np.float64)
        self.n_code = profile.rows * profile.holes
        self.n_secret = profile.holes
        self.n_keys = profile.key_holes

        code_head = profile.code_hole_diameter_mm / 2
        key_head = profile.key_hole_diameter_mm / 2 * 1.05
        self.code_disc = _Points(self.code_centres_mm, s, *disc_offsets(code_head * CODE_DISC_FRACTION * s))
        self.key_disc = _Points(self.key_centres_mm, s, *disc_offsets(key_head * KEY_DISC_FRACTION * s))
        lo, hi = RING_FRACTIONS
        self.code_ring = _Points(self.code_centres_mm, s, *disc_offsets(code_head * hi * s, code_head * lo * s))
        self.key_ring = _Points(self.key_centres_mm, s, *disc_offsets(key_head * hi * s, key_head * lo * s))
        # The key window: the peg head and some plastic around it, short of
        # the next key hole. Its dark area tells a dark key peg (the whole
        # head) from an empty key hole (the smaller hole only), wherever in
        # the window they sit.
        kpitch = min_pitch(self.key_centres_mm[: profile.key_holes])
        window = max(key_head * 1.1, min(key_head * KEY_WINDOW_FRACTION, kpitch - key_head - 0.3))
        self.key_window = _Points(self.key_centres_mm, s, *disc_offsets(window * s))
        wd2 = self.key_window.dx**2 + self.key_window.dy**2
        self._key_window_outer = wd2 >= (window * 0.88 * s) ** 2
        k = len(self.code_disc.dx)
        self._code_ranks = np.arange(int(k * RANK_LOW), max(int(k * RANK_HIGH), int(k * RANK_LOW) + 1))
        kk = len(self.key_disc.dx)
        self._key_ranks = np.arange(int(kk * RANK_LOW), max(int(kk * RANK_HIGH), int(kk * RANK_LOW) + 1))

        # Plastic probe cells (see pegwatch.vision.cover): the strips
        # half-way between rows, beside every hole, around and inside the
        # shield's area, the margin and the profile's plastic regions.
        self.layout = build_layout(profile)
        self.cover = CoverGraph(profile, self.layout)
        all_cells = self.layout.centres_mm
        self.cell_centres_mm = all_cells
        half = self.layout.half_mm
        stride = 2 if 2 * half * s > 12 else 1
        self.cells = _Points(all_cells, s, *square_offsets(half * s, stride))
        self.row_cells = self.layout.row_cells
        self.code_cells = self.layout.code_cells
        self.key_cells = self.layout.key_cells
        # The light model: never the shield's area (it may be the shield).
        self._fit_cells = self.layout.in_light_model
        # Design matrices of the log-linear light model, in units of 100 mm.
        self._design = light_design(all_cells)
        self._code_design = light_design(self.code_centres_mm)
        self._key_design = light_design(self.key_centres_mm)
        self._code_local = local_matrix(self.code_cells, len(code_centres), len(all_cells))
        self._cell_mid = len(self.cells.dx) // 2
        self._key_local = local_matrix(self.key_cells, len(key_centres), len(all_cells))
        # Every sample point of every group, in board mm, concatenated so
        # that one gather serves a whole read.
        groups = (
            self.code_disc,
            self.code_ring,
            self.key_disc,
            self.key_ring,
            self.cells,
            self.key_window,
        )
        self._shapes = tuple((len(g.cx), len(g.dx)) for g in groups)
        self._head_shapes = tuple(self._shapes[i] for i in (0, 1, 2, 3, 5))
        pts = [
            np.stack(
                [
                    (g.cx[:, None] + g.dx[None, :]) / s,
                    (g.cy[:, None] + g.dy[None, :]) / s,
                ],
                axis=-1,
            ).reshape(-1, 2)
            for g in groups
        ]
        self._group_points = pts
        self.sample_points_mm = np.concatenate(pts).astype(np.float64)
        px = np.rint(self.sample_points_mm * s).astype(np.intp)
        self._rect_idx = np.clip(px[:, 1], 0, self.height - 1) * self.width + np.clip(px[:, 0], 0, self.width - 1)
        self._frame_cache: tuple[bytes, tuple[int, int], IntArray] | None = None
        self._head_cache: tuple[bytes, int, tuple[int, int], IntArray] | None = None
        self._shifted_fit: tuple[bytes, tuple[int, int]] | None = None
        self._shifted_cache: dict[tuple[int, bytes], IntArray] = {}
        #: The code and key holes' light over the reference in the last frame measured.
        self._last_code_gain: FloatArray = np.ones((len(self.code_centres_mm), 3))
        self._last_key_gain: FloatArray = np.ones((len(self.key_centres_mm), 3))

    def frame_indices(
        self, image_to_board: NDArray[np.float64], shape: tuple[int, ...], warp: ImageWarp | None = None
    ) -> IntArray:
        """Flat pixel indices of every sample point in a frame of ``shape``.

        Cached for the last homography: the camera is fixed, so the
        localiser keeps returning the same one.
        """
        h_img, w_img = int(shape[0]), int(shape[1])
        key = fit_key(image_to_board, warp)
        cache = self._frame_cache
        if cache is not None and cache[0] == key and cache[1] == (h_img, w_img):
            return cache[2]
        idx = _board_pixels(self.sample_points_mm, image_to_board, (h_img, w_img), warp)
        self._frame_cache = (key, (h_img, w_img), idx)
        return idx

    def key_discs_shifted(
        self,
        frame: NDArray[np.uint8],
        image_to_board: NDArray[np.float64],
        shift_mm: FloatArray,
        warp: ImageWarp | None = None,
    ) -> FloatArray:
        """Every key hole's disc sampled ``shift_mm`` (per key hole, n×2) off
        its place on the board, normalised in the last frame's light as the
        key holes themselves are: linear BGR (n×3). Where a key peg's head
        stands, seen at a slant. Cached for the last homography and shift."""
        return self._discs_shifted(2, frame, image_to_board, shift_mm, warp)

    def code_discs_shifted(
        self,
        frame: NDArray[np.uint8],
        image_to_board: NDArray[np.float64],
        shift_mm: FloatArray,
        warp: ImageWarp | None = None,
        *,
        only: IntArray | None = None,
    ) -> FloatArray:
        """Every code hole's disc (rows, then the secret) sampled ``shift_mm`` off its place,
        as :meth:`key_discs_shifted` samples the key holes'; ``only`` those holes (their indices)."""
        return self._discs_shifted(0, frame, image_to_board, shift_mm, warp, only)

    def _discs_shifted(
        self,
        group: int,
        frame: NDArray[np.uint8],
        image_to_board: NDArray[np.float64],
        shift_mm: FloatArray,
        warp: ImageWarp | None,
        only: IntArray | None = None,
    ) -> FloatArray:
        fit = (fit_key(image_to_board, warp), (int(frame.shape[0]), int(frame.shape[1])))
        if fit != self._shifted_fit:  # every shift asked (the heads' places, the looks round them) is kept while the fit is
            self._shifted_fit, self._shifted_cache = fit, {}
        slot, (n, k) = (group, np.asarray(shift_mm).tobytes()), self._shapes[group]
        if slot not in self._shifted_cache:
            pts = (self._group_points[group].reshape(n, k, 2) + np.asarray(shift_mm, dtype=np.float64)[:, None, :]).reshape(-1, 2)
            self._shifted_cache[slot] = _board_pixels(pts, image_to_board, fit[1], warp)
        idx = self._shifted_cache[slot].reshape(n, k) if only is None else self._shifted_cache[slot].reshape(n, k)[only]
        px = pixels_at(frame, idx)
        ranks, gain = (self._key_ranks, self._last_key_gain) if group == 2 else (self._code_ranks, self._last_code_gain)
        out: FloatArray = srgb_to_linear(trimmed_median(px, ranks)) / (gain if only is None else gain[only])
        return out

    def features(self, rect: NDArray[np.uint8], plastic_ref: Sequence[float] | None) -> Features:
        """Measure a rectified board image (``height`` x ``width`` x 3, BGR).

        ``plastic_ref`` is the calibration's plastic colour (linear BGR);
        None measures without normalisation (the first calibration pass).
        """
        if rect.shape[:2] != (self.height, self.width):
            raise BadInput(f"rectified image is {rect.shape[:2]}, expected {(self.height, self.width)}")
        return self.measure(pixels_at(rect, self._rect_idx), plastic_ref)

    def features_from_frame(
        self,
        frame: NDArray[np.uint8],
        image_to_board: NDArray[np.float64],
        plastic_ref: Sequence[float] | None,
        *,
        localisation: Localisation | None = None,
        covers: bool = True,
        warp: ImageWarp | None = None,
    ) -> Features:
        """Measure a camera frame directly: no warp, only the sampled pixels.

        Equivalent to rectifying with ``image_to_board`` at ``px_per_mm``
        (nearest pixel) and calling :meth:`features`, at a fraction of the
        cost. With a ``localisation`` that knows the camera's pose, and a
        profile whose pegs stand up, every hole is also sampled where a
        peg's head would stand (:attr:`Features.code_head`): the board
        plane's homography places the hole, not the head above it.
        ``covers=False`` leaves :attr:`Features.row_covered` None (the
        reader finds the covers itself, with its reading of the holes).
        ``warp``: the lens's bend, when ``image_to_board`` maps ideal pixels
        (:attr:`Localisation.warp`).
        """
        samples, head = self.gather(frame, image_to_board, localisation=localisation, warp=warp)
        return self.measure(samples, plastic_ref, head, covers=covers)

    def gather(
        self, frame: NDArray[np.uint8], image_to_board: NDArray[np.float64], *,
        localisation: Localisation | None = None, warp: ImageWarp | None = None,
    ) -> tuple[NDArray[np.uint8], NDArray[np.uint8] | None]:
        """Every sample :meth:`measure` takes from a frame (see :meth:`features_from_frame`), flat:
        the groups of :attr:`group_shapes`, and those lifted to the peg heads (None: none)."""
        idx = self.frame_indices(image_to_board, frame.shape, warp)
        head_idx = self.head_indices(localisation, image_to_board, frame.shape)
        return pixels_at(frame, idx), None if head_idx is None else pixels_at(frame, head_idx)

    @property
    def group_shapes(self) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
        """(groups, samples) of each kind in :meth:`gather`'s samples (code discs, code rings, key
        discs, key rings, cells, key windows), and in its heads' (the same without the cells)."""
        return self._shapes, self._head_shapes

    def head_indices(
        self, loc: Localisation | None, image_to_board: NDArray[np.float64], shape: tuple[int, ...]
    ) -> IntArray | None:
        """Flat pixel indices of the hole samples lifted to the peg heads' height (None: flat pegs or no pose)."""
        p = self.profile
        code_h, key_h = p.code_head_centre_height_mm, p.key_head_centre_height_mm
        if loc is None or loc.pose is None or (code_h <= 0 and key_h <= 0):
            return None
        h_img, w_img = int(shape[0]), int(shape[1])
        key = fit_key(image_to_board, loc.warp)
        cache = self._head_cache
        if cache is not None and cache[0] == key and cache[1] == id(loc.pose) and cache[2] == (h_img, w_img):
            return cache[3]
        g = self._group_points  # code disc, code ring, key disc, key ring, cells, key window
        parts = [
            loc.to_image_at_height(g[0], code_h),
            loc.to_image_at_height(g[1], code_h),
            loc.to_image_at_height(g[2], key_h),
            loc.to_image_at_height(g[3], key_h),
            loc.to_image_at_height(g[5], key_h),
        ]
        q = np.concatenate(parts)
        idx = _flat_pixels(q, (h_img, w_img))
        self._head_cache = (key, id(loc.pose), (h_img, w_img), idx)
        return idx

    def sample_groups(
        self, frame: NDArray[np.uint8], image_to_board: NDArray[np.float64], warp: ImageWarp | None = None
    ) -> tuple[NDArray[np.uint8], ...]:
        """The raw samples: code discs, code rings, key discs, key rings, plastic cells, key windows.

        Each is (n, K, 3) BGR; code holes row by row then the secret.
        """
        idx = self.frame_indices(image_to_board, frame.shape, warp)
        return split_groups(pixels_at(frame, idx), self._shapes)

    def measure(
        self,
        samples: NDArray[np.uint8],
        plastic_ref: Sequence[float] | None,
        head: NDArray[np.uint8] | None = None,
        *,
        covers: bool = True,
    ) -> Features:
        """Measure the samples :meth:`gather` took (or those of a rectified image)."""
        code_px, code_ring, key_px, key_ring, cell_px, key_win = split_groups(samples, self._shapes)
        # The median, not the mean: a peg's side or shadow reaching into a
        # corner of a cell must not change what the cell says.
        cell_med = channel_order(cell_px)[:, :, self._cell_mid].astype(np.float64)
        cell_lin = np.maximum(srgb_to_linear(cell_med), 1e-4)

        # Robust log-linear light model of the plastic (never the shield's area).
        logc = np.log(cell_lin)
        fit = self._fit_cells
        light, good_fit = fit_light(self._design[fit], logc[fit], plastic_ref)
        good = np.zeros(len(logc), dtype=bool)
        good[fit] = good_fit
        ratio = np.exp(logc - self._design @ light)  # per cell, per channel
        grey = np.exp(np.mean(np.log(ratio), axis=1))
        # Shading-invariant: a shadow scales every channel alike.
        chroma = ratio.max(axis=1) / np.maximum(ratio.min(axis=1), 1e-6)
        lum = brightness(cell_px).astype(np.float32)
        spread = (lum.std(axis=1) / np.maximum(lum.mean(axis=1), 1.0)).astype(np.float64)
        flags = cell_flags(self.layout, chroma, grey, spread)
        cell_ok = flags.plastic
        row_covered = self.cover.find(flags.odd, flags.shaded, edge=flags.edge, faint=flags.faint).rows if covers else None

        # Local grey shading from the plastic-like cells beside each hole.
        lo, hi = PLASTIC_BRIGHTNESS_RANGE
        shade_log = np.where(cell_ok, np.log(np.clip(grey, lo, hi)), 0.0)
        code_shade = local_mean(self._code_local, shade_log, cell_ok)
        key_shade = local_mean(self._key_local, shade_log, cell_ok)
        code_light = np.exp(self._code_design @ light + code_shade[:, None])
        key_light = np.exp(self._key_design @ light + key_shade[:, None])
        mean_plastic = np.exp(np.mean(logc[good], axis=0)) if good.any() else np.exp(logc.mean(axis=0))
        ref = mean_plastic if plastic_ref is None else np.asarray(plastic_ref, dtype=np.float64)
        cell_norm = cell_lin * ref / np.exp(self._design @ light)
        self._last_code_gain, self._last_key_gain = code_light / ref, key_light / ref
        plane = self._hole_features(code_px, code_ring, key_px, key_ring, key_win, code_light / ref, key_light / ref)
        heads = None
        if head is not None:
            groups = split_groups(head, self._head_shapes)
            heads = self._hole_features(
                groups[0], groups[1], groups[2], groups[3], groups[4], code_light / ref, key_light / ref
            )

        # Per-row signature for motion detection: mean sRGB of each hole disc
        # (glare included: a moving hand changes it all).
        code_mean = channel_means(code_px[: self.n_code]).reshape(self.profile.rows, -1)
        key_mean = channel_means(key_px).reshape(self.profile.rows, -1)
        signatures = np.concatenate([code_mean, key_mean], axis=1)
        h = heads if heads is not None else (None,) * 6
        return Features(
            plane[0], plane[1], cell_ok, signatures, mean_plastic, plane[2], plane[3], plane[4], plane[5],
            row_covered=row_covered, cell_odd=flags.odd, cell_shaded=flags.shaded, cell_edge=flags.edge, cell_faint=flags.faint,
            cell_grey=grey, cell_chroma=chroma, cell_linear=cell_norm,
            code_head=h[0], key_head=h[1], code_head_clipped=h[2], key_head_clipped=h[3],
            code_head_linear=h[4], key_head_linear=h[5], code_plastic=code_light,
        )

    def _hole_features(
        self,
        code_px: NDArray[np.uint8],
        code_ring: NDArray[np.uint8],
        key_px: NDArray[np.uint8],
        key_ring: NDArray[np.uint8],
        key_win: NDArray[np.uint8],
        code_gain: FloatArray,
        key_gain: FloatArray,
    ) -> tuple[FloatArray, FloatArray, NDArray[np.bool_], NDArray[np.bool_], FloatArray, FloatArray]:
        """Light-normalised features of the holes from their samples: (code, keys, code clipped,
        key clipped, code linear, key linear); ``*_gain`` is the light over the reference per hole."""
        code_med = trimmed_median(code_px, self._code_ranks)
        key_med = trimmed_median(key_px, self._key_ranks)
        code_lin = srgb_to_linear(code_med) / code_gain
        key_lin = srgb_to_linear(key_med) / key_gain
        code_ring_lab = linear_bgr_to_lab(srgb_to_linear(median_axis1(code_ring)) / code_gain)
        key_ring_lab = linear_bgr_to_lab(srgb_to_linear(median_axis1(key_ring)) / key_gain)
        dark = dark_area(key_win, self._key_window_outer, DARK_FRACTION)[:, None]
        return (
            np.concatenate([linear_bgr_to_lab(code_lin), code_ring_lab], axis=1),
            np.concatenate([linear_bgr_to_lab(key_lin), key_ring_lab, dark], axis=1),
            clipped_channels(code_med, code_px),
            clipped_channels(key_med, key_px),
            code_lin,
            key_lin,
        )


def _board_pixels(
    pts_mm: FloatArray, image_to_board: NDArray[np.float64], shape: tuple[int, int], warp: ImageWarp | None
) -> IntArray:
    """Flat indices of the frame's pixels nearest board points (mm), through the fit and the lens's bend."""
    b2i = np.linalg.inv(np.asarray(image_to_board, dtype=np.float64))
    q = pts_mm @ b2i[:2, :2].T + b2i[:2, 2]
    return _flat_pixels(to_image(warp, q / (pts_mm @ b2i[2, :2] + b2i[2, 2])[:, None]), shape)


def _flat_pixels(q: FloatArray, shape: tuple[int, int]) -> IntArray:
    """Flat indices of the pixels nearest image points ``q`` (n×2), clamped to the frame."""
    x = np.clip(np.rint(q[:, 0]), 0, shape[1] - 1).astype(np.intp)
    y = np.clip(np.rint(q[:, 1]), 0, shape[0] - 1).astype(np.intp)
    out: IntArray = y * shape[1] + x
    return out
