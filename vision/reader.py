"""From one camera frame to a :class:`~pegwatch.vision.reading.BoardReading`.

The pipeline, per frame (see ``docs/vision.md``):

1. Localise the board (markers, fixed corners or best effort, as the
   calibration says).
2. Gather, in one numpy index, the pixels of every hole's inner disc and
   ring, a window around each key hole, and cells of bare plastic (the
   profile's plastic regions and the strips between rows), projected from
   board mm through the homography (see the sampler).
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
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import PegwatchError
from pegwatch.vision import bare_light, dark_pegs, head_looks, row_order
from pegwatch.vision.bare_rows import bare_rows
from pegwatch.vision.calibration import SHIELD, Calibration, CalibrationError
from pegwatch.vision.censored import CLIP_FACTORS
from pegwatch.vision.colour import Classification, ColourModel
from pegwatch.vision.could_be import peg_reading, secret_posterior
from pegwatch.vision.cover import Cover
from pegwatch.vision.key_blocks import key_contrast, key_holes_seen
from pegwatch.vision.key_count import count_keys
from pegwatch.vision.localise import Localisation, Localiser
from pegwatch.vision.localise.outline import placement_unconfirmed
from pegwatch.vision.peg_light import PegLight, diffuse_classes, fit_board_light, peg_distances
from pegwatch.vision.pixel_stats import split_groups
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.reading import (
    EMPTY,
    OCCLUDED,
    ROW_EMPTY,
    ROW_OCCLUDED,
    ROW_OK,
    ROW_UNKNOWN,
    TRUST_FULL,
    TRUST_LOW,
    UNKNOWN,
    BoardReading,
    HoleReading,
    RowReading,
    doubt_bare_keys,
    unreadable_row,
)
from pegwatch.vision.recess import RecessShapes, RecessTest, doubt_flat
from pegwatch.vision.sampler import BoardSampler, Features, FloatArray
from pegwatch.vision.secret import SecretView, see_secret
from pegwatch.vision.still_board import AGREE_READS, StillBoard
from pegwatch.vision.tint import widened
from pegwatch.vision.tray import TrayWatch
from pegwatch.vision.trust import board_facts

__all__ = ["CLIP_FACTORS", "BoardReader", "BoardSampler", "Features"]

logger = logging.getLogger(__name__)

#: How long a fit of the pegs' light is kept (one second): a table's light
#: changes slowly, and a fixed camera's frames come many times a second.
PEG_LIGHT_REFIT_NS = 1_000_000_000
#: Rows whose mean sRGB (each hole's) moved by no more than this are the
#: same rows: sensor noise and JPEG, not a peg placed or a hand.
PEG_LIGHT_SAME_ROWS = 8.0


class BoardReader:
    """Reads boards of one profile with one table's calibration.

    ``read(frame)`` never raises on a bad frame: an unreadable board comes
    back with ``problem`` set and every row "unknown". With ``keep_still``
    (the default), a frame of a fixed camera that shows what the last frame
    read in full showed is given that reading, once ``keep_after`` frames
    in a row, each read in full, said the same of the board (give it the
    temporal filter's ``frames_to_accept``; see
    :mod:`~pegwatch.vision.still_board`); ``last_read_kept`` says whether
    the last read was.
    """

    def __init__(
        self, profile: BoardProfile, calibration: Calibration, *, keep_still: bool = True, keep_after: int = AGREE_READS
    ) -> None:
        if calibration.profile != profile.name:
            raise CalibrationError(
                f"calibration is for board {calibration.profile!r}, not {profile.name!r}"
            )
        self.profile = profile
        self.calibration = calibration
        self.sampler = BoardSampler(profile, calibration.px_per_mm)
        self.keep_still = keep_still
        self.last_read_kept = False
        self._still = StillBoard(agree=keep_after)
        self._localiser: Localiser | None = None
        self.code_model: ColourModel = calibration.code_model
        self.key_model: ColourModel = calibration.key_model
        #: The models a frame is read with: the calibration's in its light,
        #: else with the peg classes widened for the light's tint (made on first use).
        self._cm, self._km = self.code_model, self.key_model
        self._tinted: tuple[ColourModel, ColourModel] | None = None
        names = self.code_model.names
        self._guess_allowed = [n != SHIELD for n in names]
        self._code_names = np.array(names, dtype=object)
        key_names = self.key_model.names
        self._key_is_empty = np.array([n == EMPTY for n in key_names])
        self._code_is_peg = np.array([n not in (EMPTY, SHIELD) for n in names])
        self._code_is_bare = np.array([n == EMPTY for n in names])
        self._bare_model = bare_light.bare_model(self.code_model, self._code_is_bare)
        self._key_is_peg = ~self._key_is_empty
        # A dark neutral peg (black) shows the room's sheen more than its own colour:
        # it is not seen in the pegs' light (see pegwatch.vision.peg_light).
        self._code_lit = self._code_is_peg & diffuse_classes(self.code_model)
        self._tray = TrayWatch(profile)
        bare = self.code_model.means[list(names).index(EMPTY)] if EMPTY in names else None
        self._hole_step = row_order.least_hole_step(bare)
        bare_key = self.key_model.means[list(key_names).index(EMPTY)] if EMPTY in key_names else None
        self._key_hole_step = row_order.least_hole_step(bare_key)
        self._recess = RecessTest.of(self.code_model, self.key_model)
        self._shapes = RecessShapes(profile.code_hole_diameter_mm / 2)
        self._gap_rows = int(row_order.SLEEVE_GAP_MM // max(float(np.hypot(*profile.row_step_mm)), 1e-9))
        keys = (profile.right_place_key, profile.right_colour_key)
        self._key_contrast = key_contrast(self.key_model, calibration.plastic_linear, keys) if set(keys) <= set(key_names) else None
        #: What a dark cover reads as: a dark neutral peg, or a bare hole.
        self._dark_names = {str(n) for n in self._code_names[self._code_is_peg & ~self._code_lit]} | {EMPTY}
        self._key_lit = self._key_is_peg & diffuse_classes(self.key_model)
        lab = np.asarray(self.code_model.means, dtype=np.float64)[:, :3]
        chromatic = self._code_lit & (np.hypot(lab[:, 1], lab[:, 2]) >= 12.0)  # the rest of the lit are white
        weakest = dark_pegs.weakest_channels(self.code_model, calibration.plastic_linear)
        self._dark_kinds = dark_pegs.Kinds(
            frozenset(str(c) for c in self._code_names[chromatic]),
            frozenset(str(c) for c in self._code_names[self._code_lit & ~chromatic]),
            frozenset(self._dark_names),
            dark_pegs.dim_classes(weakest, (str(c) for c in self._code_names[self._code_lit] if c not in self._dark_names)),
            weakest,
        )
        self.last_localisation: Localisation | None = None
        self._heads = bool(getattr(calibration, "heads_sampled", False))
        #: What the cover test found in the last frame read (for the debug view).
        self.last_cover: Cover | None = None
        self._places = head_looks.HeadPlaces(profile, self.sampler)
        #: The pegs' light fitted in the last frame read.
        self.last_peg_light = PegLight()
        self._peg_light_fit: tuple[int, bytes, FloatArray, PegLight] | None = None

    @property
    def localiser(self) -> Localiser:
        """The localiser the calibration asks for (made on first use)."""
        if self._localiser is None:
            self._localiser = self.calibration.localiser(self.profile)
        return self._localiser

    def read(self, frame: NDArray[np.uint8], *, at_ns: int | None = None) -> BoardReading:
        """Read one BGR frame; ``at_ns`` defaults to ``time.monotonic_ns()``.

        A frame that is not an 8-bit colour image gives a reading with
        ``problem`` set, like a frame without a board: the table keeps going.
        """
        stamp = time.monotonic_ns() if at_ns is None else at_ns
        self.last_localisation = None
        self.last_read_kept = False
        if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
            what = f"{getattr(frame, 'shape', type(frame).__name__)} {getattr(frame, 'dtype', '')}".strip()
            return self._unread(f"not an 8-bit BGR frame ({what})", stamp)
        try:
            loc = self.localiser.locate(frame, at_ns=stamp)
        except PegwatchError as exc:
            return self._unread(str(exc), stamp)
        self.last_localisation = loc
        if not loc.ok or loc.image_to_board is None:
            return self._unread(loc.problem or "no board found", stamp)
        # Peg heads are sampled where they stand only when the calibration
        # learned the pegs' colours there too (Calibration.heads_sampled):
        # a model fitted at the holes' places must be read at the same places.
        samples, head = self.sampler.gather(frame, loc.image_to_board, localisation=loc if self._heads else None, warp=loc.warp)
        seen = self._still_samples(frame, loc, samples, head)
        # The fit, the frame's size and what the reading says of the fit (how the board was found, why trust is low).
        facts = board_facts(self.profile, self.calibration, loc)
        key = loc.fit_key + np.asarray(frame.shape, dtype=np.int64).tobytes() + repr((facts[0], facts[3])).encode()
        kept = self._still.reading(key, stamp, seen) if self.keep_still else None
        if kept is not None:
            self.last_read_kept = True
            return kept
        f = self.sampler.measure(samples, self.calibration.plastic_linear, head, covers=False)
        reading = self._classify(f, stamp, loc, frame, facts=facts)
        self._still.keep(key, stamp, seen, reading)
        return reading

    def _unread(self, problem: str, at_ns: int) -> BoardReading:
        self._still.forget()  # nothing read: the next board is read in full
        return self.unreadable(problem, at_ns)

    def _still_samples(
        self, frame: NDArray[np.uint8], loc: Localisation, samples: NDArray[np.uint8], head: NDArray[np.uint8] | None
    ) -> list[NDArray[np.uint8]]:
        """Everything a reading rests on, in groups (see :mod:`~pegwatch.vision.still_board`): the
        samples of every hole, cell and key window, those where peg heads stand, the tray's patches."""
        main, heads = self.sampler.group_shapes
        out = list(split_groups(samples, main))
        if head is not None:
            out += split_groups(head, heads)
        tray = None if loc.px_per_mm is None else self._tray.patches(frame, loc, loc.px_per_mm)
        if tray is not None:
            out.append(tray[0])
        return out

    def unreadable(self, problem: str, at_ns: int) -> BoardReading:
        """A reading that says the board could not be read, and why."""
        p = self.profile
        rows = tuple(unreadable_row(r, p.holes, p.key_holes) for r in range(1, p.rows + 1))
        return BoardReading(p.name, rows, None, problem, at_ns, trust=TRUST_LOW, trust_reasons=(problem,))

    def read_rectified(self, rect: NDArray[np.uint8], *, at_ns: int = 0) -> BoardReading:
        """Read an already rectified board image."""
        return self._classify(self.sampler.features(rect, self.calibration.plastic_linear), at_ns, None)

    def _classify(
        self, f: Features, at_ns: int, loc: Localisation | None, frame: NDArray[np.uint8] | None = None,
        *, facts: tuple[str | None, float | None, float | None, tuple[str, ...]] | None = None,
    ) -> BoardReading:
        p = self.profile
        n_guess = p.rows * p.holes
        light = self._peg_light(f, at_ns)
        self.last_peg_light = light
        self._cm, self._km = self._models_for(light)
        code_d2 = peg_distances(
            self._cm, self._code_lit, light.code_factor, f.code, f.code_linear, f.code_clipped,
            f.code_head, f.code_head_linear, f.code_head_clipped,
        )
        code_d2 = bare_light.bare_distances(self._bare_model, self._code_is_bare, light.bare, code_d2, f.code, f.code_linear, f.code_clipped)
        key_d2 = peg_distances(
            self._km, self._key_lit, light.key_factor, f.keys, f.key_linear, f.key_clipped,
            f.key_head, f.key_head_linear, f.key_head_clipped,
        )
        key_heads = None if frame is None or self._heads else self._head_classes(frame, loc, light, keys=True)
        heads, head_sure = (None, None) if key_heads is None else key_heads
        loose_fit = loc is not None and loc.bend_from_edges
        cc = self._cm.classify_distances(code_d2[:n_guess], allowed=self._guess_allowed)
        sc = self._cm.classify_distances(code_d2[n_guess:])
        kc = self._km.classify_distances(key_d2)
        odd = f.cell_odd if f.cell_odd is not None else np.zeros(len(self.sampler.cell_centres_mm), dtype=bool)
        key_bare = self._key_is_empty[kc.best]
        found_by, ppm, sharp, reasons = facts or board_facts(self.profile, self.calibration, loc)
        # A hole read surely bare that looks like none of the frame's bare holes does not make its row one no game has reached.
        read_bare = cc.accepted & (self._code_names[cc.best] == EMPTY)
        steps, key_steps = f.code[:n_guess, 3] - f.code[:n_guess, 0], f.keys[:, 3] - f.keys[:, 0]
        bare = bare_rows(
            p, read_bare, kc.accepted & key_bare, key_unmarked=key_bare,
            shapes=self._shapes, frame=frame, loc=loc, centres_mm=self.sampler.code_centres_mm[:n_guess], doubt=not reasons,
            nearest_bare=self._code_names[cc.best] == EMPTY, recess=steps >= self._hole_step,
        )
        unplayed, not_in_play, likeness = bare.unplayed, bare.not_in_play, bare.likeness
        code_unread = np.concatenate([~cc.accepted, ~sc.accepted])
        code_names_all = np.concatenate([self._code_names[cc.best], self._code_names[sc.best]])
        code_pegs = code_unread | np.concatenate([self._code_is_peg[cc.best], self._code_is_peg[sc.best]])
        in_play = np.asarray(~not_in_play[:n_guess].reshape(p.rows, p.holes).all(axis=1), dtype=bool)
        lean = self._places.lean(loc)
        unplaced = placement_unconfirmed(loc, self.profile)  # each hole may read its neighbour's peg: none is sure
        refs = np.delete(not_in_play, np.s_[n_guess : n_guess + p.holes])  # bare in rows not in play: how deep a hole looks
        seen_bare, rows_seen_bare = self._recess.seen_bare(
            steps, key_steps, read_bare, kc.accepted & key_bare, refs, likeness, holes=p.holes, key_holes=p.key_holes
        )
        cover = self.sampler.cover.find(
            odd, f.cell_shaded,
            code_pegs=code_pegs, key_pegs=~kc.accepted | self._key_is_peg[kc.best],
            code_unread=code_unread, key_unread=~kc.accepted,
            cell_linear=f.cell_linear, hole_linear=self._hole_linear(f),
            plastic=np.asarray(self.calibration.plastic_linear, dtype=np.float64),
            lean=lean, edge=f.cell_edge, faint=f.cell_faint, fit_trusted=not reasons,
            bare=unplayed | seen_bare,
            # Guess holes only: the secret is taken only with nothing over it, and key pegs are too grey to tell from a sleeve.
            seen=np.concatenate([cc.accepted & self._code_lit[cc.best], np.zeros(p.holes + len(kc.best), dtype=bool)]),
        )
        self.last_cover = cover
        # A hole read bare must show as a recess beside a found cover (its unseen part may lie flat over pegs),
        # and one read surely bare anywhere in play (a sleeve held above the board may go unfound).
        code_flat, key_flat = self._recess.flat(steps, key_steps, cover.rows[: p.rows], in_play, refs)
        key_seen = ~key_flat if heads is None else self._key_is_empty[heads] & ~key_flat
        # A hole read bare, or not at all, whose head's place shows surely a key peg that stands out may hold it.
        # Not on a fit bent from the board's edges: its blocks may lie a head's radius off, over a neighbour's peg.
        head_peg = np.full(len(kc.best), -1) if heads is None or head_sure is None or unplaced or loose_fit else np.where(
            head_sure & self._key_lit[heads] & (~kc.accepted | self._key_is_empty[kc.best]) & ~cover.keys, heads, -1
        )
        # Proved bare (or a peg standing) only on a fit trusted enough to accuse from: the blocks lie where the fit puts them.
        proved, standing = (np.zeros(len(kc.best), dtype=bool),) * 2 if frame is None or loc is None or reasons else key_holes_seen(
            p, frame, loc, self.sampler.key_centres_mm, np.asarray(self._km.names)[kc.best], kc.accepted & ~cover.keys, in_play,
            shows=key_steps >= self._key_hole_step, contrast=self._key_contrast, standing_asked=head_peg >= 0,
        )
        head_peg = np.where(standing, head_peg, -1)
        proved = proved & key_seen  # two tests: a peg either sees is room for one
        # Such a fit may place a hole a key peg's radius off: one read bare proves nothing unless no key peg shows round its head's place.
        clear = None if not loose_fit or frame is None else self._places.keys_clear_around(
            frame, loc, self._km, self._key_is_peg, self._key_lit, None if light.pegs_in_calibrations else light.key_factor
        )
        around = np.zeros(len(kc.best), dtype=bool) if clear is None else clear & kc.accepted & self._key_is_empty[kc.best] & key_seen & ~cover.keys
        names, acc, conf, occ, nip = (
            a.tolist() for a in (code_names_all[:n_guess], cc.accepted | bare.tail, cc.confidence, cover.code[:n_guess], not_in_play[:n_guess])
        )
        hole = self._hole
        guesses = [hole(names[i], acc[i] and not unplaced, conf[i], occ[i], code_d2[i], self._guess_allowed, unplayed=nip[i]) for i in range(n_guess)]
        if frame is not None and loc is not None and not reasons and f.code_plastic is not None:
            # Blocks against the frame's bare holes, on a fit trusted to accuse from: doubtful dark
            # holes narrowed (or read as the dark peg whose sheen shows), bare ones doubted where a peg shows.
            guesses = dark_pegs.narrow(
                guesses, frame, loc, self.sampler.code_centres_mm[:n_guess], f.code_plastic[:n_guess], per_row=p.holes,
                in_play=~not_in_play[:n_guess], sure=cc.accepted & ~cover.code[:n_guess] & ~cover.seen[:n_guess], kinds=self._dark_kinds,
            )
        # A hole read surely bare in a row in play is asked for its recess: its depth, and (on a trusted fit) its shape.
        guesses = doubt_flat(guesses, code_flat, surely_bare=self._recess.bare_flat(steps, in_play, refs) | (bare.unlike & np.repeat(in_play, p.holes)))
        # A hole read bare that looks like no hole, and is still in doubt, lies under something flat: no key hole of its row is proved bare.
        flat_over = bare.unlike & np.array([not h.is_certain for h in guesses])
        proved = proved & ~np.repeat(flat_over.reshape(p.rows, p.holes).any(axis=1), p.key_holes)
        # Only where a look may differ: holes read as pegs, and the secret's.
        pegs = np.r_[np.flatnonzero([h.is_certain and h.colour != EMPTY for h in guesses]), n_guess : n_guess + p.holes]
        code_heads = None if frame is None or self._heads or unplaced else self._head_classes(frame, loc, light, keys=False, only=pegs)
        if code_heads is not None:
            guesses = head_looks.other_doubted(guesses, code_heads, code_d2, self._cm, allowed=self._guess_allowed, lit=self._code_lit)
        rows: list[RowReading] = []
        n_k, unplayed_rows = p.key_holes, [u and not unplaced for u in np.asarray(unplayed[:n_guess].reshape(p.rows, p.holes).all(axis=1), dtype=bool).tolist()]
        for r in range(p.rows):
            holes = tuple(guesses[r * p.holes : (r + 1) * p.holes])
            ks = slice(r * n_k, (r + 1) * n_k)
            keys = count_keys(
                self.profile, self._km, kc.best[ks], kc.accepted[ks] & (not unplaced), kc.confidence[ks], cover.keys[ks], key_d2[ks],
                in_play=bool(in_play[r]), unplayed=unplayed_rows[r], head_bare=key_seen[ks], proved_bare=proved[ks],
                head_other=None if heads is None else (heads[ks] != kc.best[ks]) & (self._key_is_peg[heads[ks]] | self._key_lit[kc.best[ks]]),
                head_peg=head_peg[ks],
            )
            loose = loose_fit and bool(in_play[r])
            if loose:
                # A key peg's sample may sit on its rim: it is seen, and ruled out only by the looks
                # round its head's place (not by its block, which such a fit may place a head's radius off).
                keys = doubt_bare_keys(keys, proved=int(around[ks].sum()))
            if any(h.colour == OCCLUDED for h in holes) or keys.status == ROW_OCCLUDED:
                status = ROW_OCCLUDED
            elif any(not h.is_certain for h in holes) or keys.status == ROW_UNKNOWN:
                status = ROW_UNKNOWN
            elif all(h.colour == EMPTY for h in holes) and keys.status == ROW_EMPTY:
                status = ROW_EMPTY
            else:
                status = ROW_OK
            if status in (ROW_UNKNOWN, ROW_OCCLUDED) and not loose:
                keys = doubt_bare_keys(keys, proved=int(proved[ks].sum()) if status == ROW_UNKNOWN else 0)
            rows.append(RowReading(r + 1, holes, keys, status))
        if not p.blanks:
            rows = row_order.covered_before_played(rows, key_holes=p.key_holes, dark=self._dark_names)
        rows = row_order.covered_flat(rows, steps, key_holes=p.key_holes, least=self._hole_step)
        if frame is not None and loc is not None and loc.px_per_mm is not None:
            beside = self._tray.rows_beside_dark(frame, loc, loc.px_per_mm)
            rows = row_order.covered_beside_dark(rows, beside, key_holes=p.key_holes, seen_bare=rows_seen_bare)
        rows = row_order.bare_between_covers(rows, key_holes=p.key_holes, max_run=self._gap_rows)
        rows = row_order.bare_beside_cover(rows, in_play)
        rows = row_order.unplayed_read_bare(rows, steps, key_holes=p.key_holes, least=self._hole_step)
        view = see_secret(
            self.sampler.layout, f, p, covered=bool(cover.rows[p.rows]), shield_name=SHIELD,
            best_names=[str(n) for n in self._code_names[sc.best]], lean=None if lean is None else lean[n_guess : n_guess + p.holes],
        )
        secret: tuple[HoleReading, ...] | None = None
        if view is SecretView.COVERED:
            secret = tuple(HoleReading(OCCLUDED, 0.0) for _ in range(p.holes))
        elif view is SecretView.OPEN:
            secret = self._read_secret(sc, code_d2[n_guess:], doubted=unplaced)
            if secret is not None and code_heads is not None:
                heads_at = (code_heads[0][n_guess:], code_heads[1][n_guess:])
                secret = tuple(head_looks.other_doubted(list(secret), heads_at, code_d2[n_guess:], self._cm, allowed=self._guess_allowed, lit=self._code_lit))
        sigs = tuple(tuple(float(v) for v in s) for s in f.signatures)
        return BoardReading(
            p.name, tuple(rows), secret, None, at_ns,
            row_signatures=sigs,
            trust=TRUST_LOW if reasons else TRUST_FULL,
            trust_reasons=reasons,
            found_by=found_by,
            px_per_mm=ppm,
            sharpness=sharp,
            shield=view.value,
        )

    def _peg_light(self, f: Features, at_ns: int) -> PegLight:
        """How bright this frame's light shows the pegs, against the plastic (see :mod:`~pegwatch.vision.peg_light`).

        The light of a fixed camera's scene changes slowly: the fit is kept for
        up to ``PEG_LIGHT_REFIT_NS`` while the camera's fit of the board is kept
        and no row looks different (a peg placed, a hand: the fit depends on
        the pegs it sees).
        """
        if f.code_linear is None or f.key_linear is None:
            return PegLight()
        kept = self._peg_light_fit
        sig = np.asarray(f.signatures, dtype=np.float64)
        pose = b"" if self.last_localisation is None else self.last_localisation.fit_key
        if (
            kept is not None and 0 <= at_ns - kept[0] < PEG_LIGHT_REFIT_NS and kept[1] == pose
            and kept[2].shape == sig.shape and float(np.max(np.abs(kept[2] - sig), initial=0.0)) <= PEG_LIGHT_SAME_ROWS
        ):
            return kept[3]
        light = self._fit_peg_light(f)
        self._peg_light_fit = (at_ns, pose, sig, light)
        return light

    def _models_for(self, light: PegLight) -> tuple[ColourModel, ColourModel]:
        """The calibration's models in its own light; in another, with the peg classes widened
        along the light's tint (see :mod:`~pegwatch.vision.tint`)."""
        if light.pegs_in_calibrations:
            return self.code_model, self.key_model
        if self._tinted is None:
            self._tinted = (widened(self.code_model, self._code_is_peg), widened(self.key_model, self._key_is_peg))
        return self._tinted

    def _fit_peg_light(self, f: Features) -> PegLight:
        assert f.code_linear is not None and f.key_linear is not None
        light = fit_board_light(
            (self.code_model, self.key_model), (f.code, f.code_linear, f.code_clipped), (f.keys, f.key_linear, f.key_clipped),
            code_lit=self._code_lit, key_lit=self._key_lit,
        )
        (cm, km), p = self._models_for(light), self.profile  # the bare holes' light: pegwatch.vision.bare_light
        code_d2 = peg_distances(cm, self._code_lit, light.code_factor, f.code, f.code_linear, f.code_clipped, None, None, None)
        kc = km.classify_distances(peg_distances(km, self._key_lit, light.key_factor, f.keys, f.key_linear, f.key_clipped, None, None, None))
        cc = cm.classify_distances(code_d2[: p.rows * p.holes], allowed=self._guess_allowed)
        past = bare_light.past_the_game(cc.accepted & self._code_lit[cc.best], kc.accepted & self._key_is_peg[kc.best], rows=p.rows)
        holes, allowed = (f.code, f.code_linear, f.code_clipped), np.asarray(self._guess_allowed)
        return replace(light, bare=bare_light.fit_bare_gain(cm, holes, code_d2, use=past, bare_classes=self._code_is_bare, allowed=allowed))

    def _head_classes(
        self, frame: NDArray[np.uint8], loc: Localisation | None, light: PegLight, *, keys: bool, only: NDArray[np.intp] | None = None
    ) -> tuple[NDArray[np.intp], NDArray[np.bool_]] | None:
        """Per key hole (``keys``) or code hole (rows, then the secret; ``only`` those, by index, the
        others shown nothing surely): the class nearest to what the place where a peg's head would
        stand shows, and whether it shows it surely (typical of the class, and clearly nearer it than
        any other). None: no pose.

        Seen at a slant, and smeared by a shaken camera, a peg's head stands
        off its hole, which then shows the peg's shaded side, its shadow and
        the plastic: a small key peg reads bare, or (a white peg's shaded side
        under a warm lamp) as a key peg of the other colour; a code peg's
        shaded side as a darker colour (a white one as black, an orange one
        as red). The head's place is the hole's disc moved by the pose's lean
        at the head's centre; its colour is compared with the classes' disc
        colours alone (pegs in the pegs' light).
        """
        model, lit, factor = (self._km, self._key_lit, light.key_factor) if keys else (self._cm, self._code_lit, light.code_factor)
        return self._places.classes(frame, loc, model, lit, None if light.pegs_in_calibrations else factor, keys=keys, only=only)

    @staticmethod
    def _hole_linear(f: Features) -> FloatArray | None:
        """Normalised linear colour of every code then key hole: the peg's head where it stands."""
        code = f.code_head_linear if f.code_head_linear is not None else f.code_linear
        keys = f.key_head_linear if f.key_head_linear is not None else f.key_linear
        if code is None or keys is None:
            return None
        return np.concatenate([code, keys])

    def _hole(
        self, name: str, accepted: bool, conf: float, occluded: bool, d2: FloatArray, allowed: list[bool],
        *, unplayed: bool = False,
    ) -> HoleReading:
        if occluded:
            return HoleReading(OCCLUDED, 0.0)
        # In a light other than the calibration's, a bare hole and a black peg in shade are what
        # the calibration learned least: in a row in play a hole read bare then counts as bare only
        # when it lies outside every peg's class. Rows from the first wholly bare row on are not in play.
        if accepted and (
            name != EMPTY or unplayed or self.last_peg_light.is_calibrations
            or not (d2[self._code_is_peg] <= self._cm.reject_distance2).any()
        ):
            return peg_reading(name, conf, lambda: self._cm.candidates(d2[None, :], allowed=allowed)[0], blanks=self.profile.blanks)
        (cands,) = self._cm.candidates(d2[None, :], allowed=allowed)
        return HoleReading(UNKNOWN, conf, cands)

    def _read_secret(self, sc: Classification, d2: FloatArray, *, doubted: bool = False) -> tuple[HoleReading, ...] | None:
        """The secret holes of an open shield, each read like a guess hole, but surer
        (:func:`~pegwatch.vision.could_be.secret_posterior`)."""
        names = self._code_names[sc.best]
        sure = sc.accepted & (sc.posterior >= secret_posterior(self._cm.min_posterior, self.profile.rows)) & (not doubted)
        holes = tuple(
            self._hole(str(n), bool(a and n != SHIELD), float(c), False, d2[i], self._guess_allowed)
            for i, (n, a, c) in enumerate(zip(names, sure, sc.confidence, strict=True))
        )
        if all(h.colour == EMPTY for h in holes):
            return None  # no secret set up
        return holes
