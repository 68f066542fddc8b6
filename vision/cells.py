"""The plastic probe cells: where the reader looks at bare plastic on a board.

:func:`build_layout` places, once per profile, small square cells of bare
plastic: the strips half-way between rows, level with every hole; cells
beside the secret holes inside the shield's area (bare plastic only when the
shield is open); cells around the shield; cells along the board's margin;
and the profile's plastic regions. The light model is fitted to them, the
cover test (:mod:`pegwatch.vision.cover`) looks for what lies over them and
the shield test (:mod:`pegwatch.vision.secret`) looks inside the shield's
area. :func:`fit_light` is the light model over them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.pixel_stats import median_of
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.tint import TINT_DIRECTION

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

#: How far (mm, beyond a hole's radius) a peg's shadow or domed side may
#: reach on the plastic: a cell further than this from every hole is free.
PEG_REACH_MM = 5.0
#: How far (in ln units of a channel ratio) a cell may lie from the
#: calibration's plastic under some light and still start the light model:
#: half of what the cover test calls another colour (cover.PLASTIC_CHROMA_RATIO).
LOCUS_TOLERANCE = 0.15
#: The tints (ln(R/B)) a light may give the plastic against the calibration's:
#: a lamp anywhere from daylight to tungsten (about 1.1) seen through a white
#: balance anywhere in the same range (one fixed in another light, or an
#: automatic one misled by a view the board fills), either way: twice that.
TINT_RANGE = 2.2
#: Fewer plastic-like cells than this say nothing about the light.
MIN_PLASTIC_CELLS = 8
#: Spacing (mm) of the cells along the board's margin.
MARGIN_STEP_MM = 20.0
#: The sides of the shield's outline, as bits: towards smaller y, larger
#: y, smaller x and larger x on the board.
SHIELD_SIDES = (1, 2, 4, 8)
#: Cells around the shield keep this gap (mm) from its outline: a raised
#: shield seen at an angle covers a little more than its footprint.
SHIELD_GAP_MM = 3.0


@dataclass(frozen=True)
class CellLayout:
    """Where the plastic probe cells are, and which cells and holes neighbour which.

    ``centres_mm`` (n, 2) and ``half_mm`` (every cell a square of that
    half-size). ``row_cells[r]`` are the cells beside row ``r + 1``'s holes
    (the last entry: beside the secret row, shield area excluded).
    ``code_cells``/``key_cells``: per hole, the cells beside it (code holes
    row by row, then the secret). ``free``: cells no peg can shade.
    ``shield_inner``: cells beside the secret holes inside the shield's
    area (bare plastic only when the shield is open; kept out of the light
    model and out of the cover graph). ``shield_outer``: cells around the
    shield. ``shield_side``: which sides of the shield's outline each of
    those cells, and each free cell within the open shield's height of it,
    lies beyond or faces (SHIELD_SIDES bits: one for a cell beside a side,
    two beyond a corner; 0 for every other cell). ``in_light_model``: cells
    the light model is fitted to.
    """

    centres_mm: FloatArray
    half_mm: float
    row_cells: tuple[tuple[int, ...], ...]
    code_cells: tuple[tuple[int, ...], ...]
    key_cells: tuple[tuple[int, ...], ...]
    free: BoolArray
    shield_inner: BoolArray
    shield_outer: BoolArray
    shield_side: NDArray[np.intp]
    secret_inner: tuple[tuple[int, ...], ...]
    step_pairs: NDArray[np.intp]

    @property
    def around_shield(self) -> BoolArray:
        """Cells outside the shield that it (closed or standing open) or its shadow may reach."""
        out: BoolArray = (self.shield_side > 0) & ~self.shield_inner
        return out

    @property
    def in_light_model(self) -> BoolArray:
        out: BoolArray = ~self.shield_inner
        return out


def build_layout(profile: BoardProfile) -> CellLayout:
    """The probe cells of ``profile``'s board."""
    w_mm, h_mm = profile.size_mm
    step = np.array(profile.row_step_mm, dtype=np.float64)
    step_len = float(np.hypot(*step))
    unit = step / max(step_len, 1e-9)
    code_r = profile.code_hole_diameter_mm / 2
    key_r = profile.key_hole_diameter_mm / 2
    cell_mm = float(np.clip(step_len - profile.code_hole_diameter_mm - 2.0, 2.0, 5.0))
    half = min([cell_mm / 2] + [min(rw, rh) / 2 - 0.5 for _, _, rw, rh in profile.plastic_regions_mm])
    half = max(half, 1.0)
    shield = profile.shield_mm
    centres: list[tuple[float, float]] = []
    index: dict[tuple[int, int], int] = {}
    kind: list[str] = []
    side: dict[int, int] = {}

    def add(x: float, y: float, what: str) -> int | None:
        if not (half <= x <= w_mm - half and half <= y <= h_mm - half):
            return None
        key = (round(x * 4), round(y * 4))
        if key not in index:
            index[key] = len(centres)
            centres.append((x, y))
            kind.append(what)
        return index[key]

    def midlines(hx: float, hy: float, origin: FloatArray) -> list[tuple[float, float]]:
        # Half-way between this row and the next/previous one, level with
        # the hole (a 2x2 key block must not probe its own pegs).
        along = float(np.dot(np.array([hx, hy]) - origin, unit))
        base = np.array([hx, hy]) - along * unit
        return [(float(base[0] + sg * step[0]), float(base[1] + sg * step[1])) for sg in (-0.5, 0.5)]

    row_cells: list[list[int]] = [[] for _ in range(profile.rows + 1)]
    code_cells: list[list[int]] = []
    key_cells: list[list[int]] = []
    for row in range(1, profile.rows + 1):
        origin = np.array(profile.hole_centres_mm(row)[0]) - np.array(profile.hole_offsets_mm[0])
        for group, out in ((profile.hole_centres_mm(row), code_cells), (profile.key_centres_mm(row), key_cells)):
            for cx, cy in group:
                beside: list[int] = []
                for x, y in midlines(cx, cy, origin):
                    if shield is not None and inside(x, y, shield, half):
                        continue
                    c = add(x, y, "strip")
                    if c is not None:
                        beside.append(c)
                        row_cells[row - 1].append(c)
                out.append(beside)
    # The secret holes: cells beside them outside the shield join the
    # secret row's cover check; cells inside its area show bare plastic only
    # when the shield is open (the shield test uses them).
    secret_origin = np.array(profile.secret_mm)
    secret_inner: list[list[int]] = []
    for cx, cy in profile.secret_centres_mm():
        beside = []
        inner: list[int] = []
        for x, y in midlines(cx, cy, secret_origin):
            if shield is None or not inside(x, y, shield, half):
                c = add(x, y, "strip")
                if c is not None:
                    beside.append(c)
                    row_cells[profile.rows].append(c)
        if shield is not None:
            for sg in (-1.0, 1.0):
                room = _room_along(cx, cy, sg * unit, shield)
                if room - code_r >= 2 * 1.0 + 1.0:
                    d = (code_r + room) / 2
                    c = add(cx + sg * d * unit[0], cy + sg * d * unit[1], "inner")
                    if c is not None:
                        inner.append(c)
                        side.setdefault(c, _side_facing(sg * unit))
        code_cells.append(beside)
        secret_inner.append(inner)
    code_pts = [c for r in range(1, profile.rows + 1) for c in profile.hole_centres_mm(r)]
    code_pts += list(profile.secret_centres_mm())
    key_pts = [c for r in range(1, profile.rows + 1) for c in profile.key_centres_mm(r)]
    holes = np.array(code_pts + key_pts, dtype=np.float64)
    radii = np.array([code_r] * len(code_pts) + [key_r] * len(key_pts))

    def far_from_pegs(x: float, y: float) -> bool:
        d = np.hypot(holes[:, 0] - x, holes[:, 1] - y) - radii - half
        return bool(np.all(d >= PEG_REACH_MM))

    if shield is not None:
        sx, sy, sw, sh = shield
        gap = SHIELD_GAP_MM + half
        xs = np.linspace(sx, sx + sw, max(2, round(sw / 10) + 1))
        ys = np.linspace(sy, sy + sh, max(2, round(sh / 10) + 1))
        ring = [(float(x), sy - gap, _side_facing((0, -1))) for x in xs]
        ring += [(float(x), sy + sh + gap, _side_facing((0, 1))) for x in xs]
        ring += [(sx - gap, float(y), _side_facing((-1, 0))) for y in ys]
        ring += [(sx + sw + gap, float(y), _side_facing((1, 0))) for y in ys]
        edge = 3.0 + half  # clear of the board's rim, as the margin cells
        for x, y, s in ring:
            on_board = edge <= x <= w_mm - edge and edge <= y <= h_mm - edge
            if on_board and far_from_pegs(x, y) and not inside(x, y, shield, gap - 0.01):
                c = add(x, y, "outer")
                if c is not None:
                    side.setdefault(c, s)
    # The margin: where a hand or a sleeve crosses the board's edge.
    inset = 3.0 + half
    for x0, y0, x1, y1 in (
        (inset, inset, w_mm - inset, inset),
        (inset, h_mm - inset, w_mm - inset, h_mm - inset),
        (inset, inset, inset, h_mm - inset),
        (w_mm - inset, inset, w_mm - inset, h_mm - inset),
    ):
        # Every MARGIN_STEP_MM: a hand or a sleeve is wider than that.
        n = max(2, round(float(np.hypot(x1 - x0, y1 - y0)) / MARGIN_STEP_MM) + 1)
        for t in np.linspace(0.0, 1.0, n):
            x, y = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
            if far_from_pegs(x, y) and (shield is None or not inside(x, y, shield, SHIELD_GAP_MM + half)):
                add(x, y, "margin")
    for rx, ry, rw, rh in profile.plastic_regions_mm:
        nx = max(int(rw // 8), 1)
        ny = max(int(rh // 8), 1)
        for i in range(nx):
            for j in range(ny):
                add(rx + (i + 0.5) * rw / nx, ry + (j + 0.5) * rh / ny, "region")
    pts = np.array(centres, dtype=np.float64).reshape(-1, 2)
    kinds = np.array(kind)
    free = np.array([k in ("outer", "margin", "region") and far_from_pegs(*c) for k, c in zip(kind, centres, strict=True)])
    if shield is not None:
        # An open shield is a plate standing on its hinge, as tall as the
        # shield is wide: seen at a slant, it and its shadow reach the free
        # plastic that far beyond the side it stands on.
        sx, sy, sw, sh = shield
        for cell in (int(c) for c in np.flatnonzero(free)):
            x, y = (float(v) for v in pts[cell])
            dx = max(sx - x, x - (sx + sw), 0.0)
            dy = max(sy - y, y - (sy + sh), 0.0)
            if cell not in side and 0 < np.hypot(dx, dy) <= min(sw, sh):
                side[cell] = _sides_beyond(x, y, shield)
    # Neighbouring free cells must see light that changes smoothly.
    pa, pb = [], []
    near = max(step_len, 1.5 * min(min_pitch(holes[: profile.holes]), step_len)) + 0.5
    fidx = np.flatnonzero(free)
    for i, a in enumerate(fidx):
        for b in fidx[i + 1 :]:
            if float(np.hypot(*(pts[a] - pts[b]))) <= near:
                pa.append(a)
                pb.append(b)
    return CellLayout(
        centres_mm=pts,
        half_mm=float(half),
        row_cells=tuple(tuple(sorted(set(c))) for c in row_cells),
        code_cells=tuple(tuple(c) for c in code_cells),
        key_cells=tuple(tuple(c) for c in key_cells),
        free=free.astype(bool),
        shield_inner=kinds == "inner",
        shield_outer=kinds == "outer",
        shield_side=np.array([side.get(i, 0) for i in range(len(centres))], dtype=np.intp),
        secret_inner=tuple(tuple(c) for c in secret_inner),
        step_pairs=np.array([pa, pb], dtype=np.intp).reshape(2, -1),
    )


def _side_facing(direction: FloatArray | tuple[float, float]) -> int:
    """The side of an upright rectangle a direction points to, as a SHIELD_SIDES bit."""
    dx, dy = float(direction[0]), float(direction[1])
    if abs(dx) > abs(dy):
        return SHIELD_SIDES[3] if dx > 0 else SHIELD_SIDES[2]
    return SHIELD_SIDES[1] if dy > 0 else SHIELD_SIDES[0]


def _sides_beyond(x: float, y: float, rect: tuple[float, float, float, float]) -> int:
    """The SHIELD_SIDES bits of every side of ``rect`` that (x, y) lies beyond."""
    rx, ry, rw, rh = rect
    beyond = (y < ry, y > ry + rh, x < rx, x > rx + rw)
    return sum(bit for bit, b in zip(SHIELD_SIDES, beyond, strict=True) if b)


def _room_along(x: float, y: float, direction: FloatArray, rect: tuple[float, float, float, float]) -> float:
    """How far from (x, y) along ``direction`` the rectangle ``rect`` goes on."""
    rx, ry, rw, rh = rect
    ts: list[float] = []
    for pos, d, lo, hi in ((x, direction[0], rx, rx + rw), (y, direction[1], ry, ry + rh)):
        if abs(d) > 1e-9:
            ts.append(max((lo - pos) / d, (hi - pos) / d))
    return min(ts) if ts else 0.0


def min_pitch(points: FloatArray | Sequence[Sequence[float]]) -> float:
    pts = np.asarray(points, dtype=np.float64)
    if len(pts) < 2:
        return float("inf")
    d = np.linalg.norm(pts[:, None, :] - pts[None, :, :], axis=2)
    d[d == 0] = np.inf
    return float(d.min())


def inside(x: float, y: float, rect: tuple[float, float, float, float], pad: float) -> bool:
    rx, ry, rw, rh = rect
    return rx - pad <= x <= rx + rw + pad and ry - pad <= y <= ry + rh + pad


def light_design(points_mm: FloatArray) -> FloatArray:
    """Design matrix of the light model at ``points_mm``: 1, x and y in units of 100 mm."""
    return np.column_stack([np.ones(len(points_mm)), points_mm[:, 0] / 100.0, points_mm[:, 1] / 100.0])


def fit_light(
    design: FloatArray, values: FloatArray, reference: Sequence[float] | None = None
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """The light model over the cells: a plane per channel of the log of
    linear light (``light_design``), fitted to the cells that agree with it.

    Which cells are the plastic is not a vote: a sleeve can lie over more
    than half of them. With the calibration's plastic colour (``reference``,
    linear BGR) the fit starts from the cells that are that plastic under
    some light (:func:`plastic_like`); without it (or with too few such
    cells) from the median (a constant light), since a least-squares start
    leans towards a sleeve and the cells that agree with a leaning plane are
    not the plastic's. Each round keeps the cells within three robust
    deviations of the last fit, measured on the cells it kept (and never a
    cell that is no plastic under any light).
    """
    tint, candidates = _on_locus(values, reference) if reference is not None else (None, None)
    like = None if tint is None or candidates is None else _one_tint(tint, candidates)
    if like is not None and candidates is not None and like.sum() >= MIN_PLASTIC_CELLS:
        good = like
        coef, *_ = np.linalg.lstsq(design[good], values[good], rcond=None)
    else:
        candidates = good = np.ones(len(values), dtype=bool)
        coef = np.zeros((design.shape[1], values.shape[1]))
        coef[0] = np.median(values, axis=0)
    for _ in range(3):
        resid = np.abs(values - design @ coef).max(axis=1)
        mad = median_of(resid[good]) * 1.4826
        new_good = candidates & (resid <= max(3.0 * mad, 0.08))
        if new_good.sum() < 4:
            break
        settled = np.array_equal(new_good, good)
        good = new_good
        coef, *_ = np.linalg.lstsq(design[good], values[good], rcond=None)
        if settled:
            break
    return np.asarray(coef, dtype=np.float64), good


def plastic_like(values: FloatArray, reference: Sequence[float]) -> NDArray[np.bool_]:
    """Cells (log linear BGR, n×3) that are the ``reference`` plastic under one light.

    A light changes the plastic's colour by a grey factor (shade) and a
    tint along the blackbody locus, within a daylight-to-tungsten range
    (:data:`~pegwatch.vision.tint.TINT_DIRECTION`). A cell is plastic-like
    when what is left after both lies within :data:`LOCUS_TOLERANCE`, and
    its tint is the board's: the most common tint among such cells, within
    the same tolerance. A green or red sleeve leaves the locus; a navy or
    brown one needs a tint no lamp gives, or another tint than the plastic.
    """
    return _one_tint(*_on_locus(values, reference))


def on_locus(values: FloatArray, reference: Sequence[float]) -> NDArray[np.bool_]:
    """Per cell (log linear BGR, n×3): is it the ``reference`` plastic under some light
    (any tint in the lamps' range, unlike :func:`plastic_like`, which wants the board's)?"""
    return _on_locus(values, reference)[1]


def _on_locus(values: FloatArray, reference: Sequence[float]) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Per cell, its tint (ln(R/B)) against ``reference`` and whether it is that
    plastic under some light, whatever its tint (two lamps of different colours)."""
    d = np.asarray(values, dtype=np.float64) - np.log(np.maximum(np.asarray(reference, dtype=np.float64), 1e-6))
    chroma = d - d.mean(axis=1, keepdims=True)
    u = TINT_DIRECTION - TINT_DIRECTION.mean()
    tint: FloatArray = chroma @ u / float(u @ u)
    off = np.linalg.norm(chroma - tint[:, None] * u[None, :], axis=1)
    on: NDArray[np.bool_] = (off <= LOCUS_TOLERANCE) & (np.abs(tint) <= TINT_RANGE)
    return tint, on


def _one_tint(tint: FloatArray, on: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """Of the cells ``on`` the locus, those of the most common tint (within :data:`LOCUS_TOLERANCE`)."""
    if not on.any():
        return on
    near = np.abs(tint[:, None] - tint[None, on]) <= LOCUS_TOLERANCE
    mode = tint[int(np.argmax(np.where(on, near.sum(axis=1), -1)))]
    out: NDArray[np.bool_] = on & (np.abs(tint - mode) <= LOCUS_TOLERANCE)
    return out
