"""What lies over the board: a hand or a sleeve, told from shadows and the sides of pegs.

The reader probes cells of bare plastic all over the board (see
:class:`CellLayout`): the strips half-way between rows, level with every
hole; cells beside the secret holes (inside the shield's area) and around
the shield; cells along the board's margin and in the profile's plastic
regions. Each cell is tested against the plastic's light model with
shading-invariant measures (:func:`cell_flags`): its channel ratios (a
shadow scales every channel alike, a hand or a sleeve does not), how far
its brightness is from what light alone can do, and whether an edge
crosses it.

A cell that fails is not yet a cover. Pegs stand up: their shadows and,
in perspective, their domed sides fall on the strips beside their holes, so
a row full of pegs makes a line of odd cells beside it. Two things tell
those from a hand or a sleeve (:class:`CoverGraph`):

* one light casts every peg's shadow the same way, and one camera leans
  every peg the same way: an odd cell beside a peg, on the side where the
  board's other odd cells beside pegs lie, that looks like shade on the
  plastic or like a shaded mix of the plastic and that peg, is explained
  by the peg. A hand covers both sides of the holes under it;
* shape and extent: odd cells and unreadable holes are joined into
  connected objects (explained cells only along their strip, anything
  else in two dimensions), and an object is a cover when it holds at least
  one odd cell no peg explains. A hand or a sleeve is an object wider than
  the probes' spacing; one cell alone that is only faintly odd (see
  :class:`CellFlags`) is sensor noise on a dark plastic, or a shadow lit by
  a second lamp of another colour, not a cover.

A row is covered only where something is over it: the holes within reach
of a cover are occluded, the rest of the row keeps its reading.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.cells import PEG_REACH_MM, CellLayout, min_pitch
from pegwatch.vision.cover_colour import chroma_gap, lamp_shade, mixes
from pegwatch.vision.pixel_stats import median_of
from pegwatch.vision.profile import BoardProfile

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

#: A plastic cell whose channel ratios to the plastic model differ by more
#: than this factor is not bare plastic (a hand, a sleeve, a loose peg):
#: shading (a shadow, a light band) scales every channel alike.
PLASTIC_CHROMA_RATIO = 1.35
#: Brightness ratio to the plastic model outside which a cell is not a
#: plausible soft shadow or highlight on bare plastic.
PLASTIC_BRIGHTNESS_RANGE = (0.45, 2.0)
#: Light on the board changes smoothly; an object over it makes a step.
#: Neighbouring free cells whose light differs by more than this ratio mean
#: something lies over one of them.
PLASTIC_STEP_RATIO = 1.3
#: A cell whose brightness spread (coefficient of variation) exceeds this
#: many times the board's typical cell spread in the same frame straddles
#: an edge.
PLASTIC_EDGE_SPREAD = 3.0
#: A hole within a cover's reach that reads surely as a lit peg shows that
#: peg, not the cover, when its colour lies further from every foreign cell of
#: the cover than this (:func:`~pegwatch.vision.cover_colour.chroma_gap`):
#: three times the line past which a cell is not the plastic. A hand or a
#: sleeve over a hole shows its own colour there, whatever the shade: the
#: holes under hands on issue 14's physically based boards read within 0.55
#: of the hand's cells, the pegs beside them from 0.85 on.
SEEN_APART_GAP = 3 * float(np.log(PLASTIC_CHROMA_RATIO))
#: Peg shadows and the sides of standing pegs fall on one side of the pegs,
#: the same for the whole board: at least this many odd cells beside pegs,
#: and this many times more on one side than on the other, establish it.
MIN_SHADOW_PAIRS = 3
SHADOW_SIDE_RATIO = 3.0
#: A cell is faintly odd when its channel ratios differ by less than this
#: factor (the square of PLASTIC_CHROMA_RATIO: no further past the line
#: than the line lies from the plastic) and its brightness is one light
#: can give. The cell's median takes the colour of whatever covers most of
#: it, so an object over it is seldom faint.
FAINT_CHROMA_RATIO = PLASTIC_CHROMA_RATIO**2


@dataclass(frozen=True)
class CellFlags:
    """Per cell: ``odd`` (not bare plastic: another colour, far too dark or
    bright, or an edge across it), ``shaded`` (odd, but with the plastic's
    own chroma: a shadow or an edge of one), ``edge`` (odd only for an edge
    across it or a step to its neighbour: the plastic's chroma and a
    brightness light can give it), ``plastic`` (bare plastic, possibly
    in a soft shadow: used for local shading) and ``faint`` (odd, with a
    chroma under FAINT_CHROMA_RATIO and a brightness light can give)."""

    odd: BoolArray
    shaded: BoolArray
    edge: BoolArray
    plastic: BoolArray
    faint: BoolArray


def cell_flags(
    layout: CellLayout, chroma: FloatArray, grey: FloatArray, spread: FloatArray
) -> CellFlags:
    """Test every cell against the plastic's light model.

    ``chroma``: the ratio of the cell's largest to smallest channel ratio
    to the model (1 for bare plastic in any shade); ``grey``: its
    brightness relative to the model; ``spread``: the coefficient of
    variation of its pixels' brightness.
    """
    lo, hi = PLASTIC_BRIGHTNESS_RANGE
    typical = median_of(spread[layout.in_light_model]) + 0.01
    odd = (chroma > PLASTIC_CHROMA_RATIO) | (grey < lo) | (grey > hi) | (spread > PLASTIC_EDGE_SPREAD * typical)
    if layout.step_pairs.shape[1]:
        a, b = layout.step_pairs
        log_grey = np.log(np.maximum(grey, 1e-6))
        step = np.abs(log_grey[a] - log_grey[b]) > np.log(PLASTIC_STEP_RATIO)
        # The odd one of a step is the one further from the board's light.
        darker_a = np.abs(log_grey[a]) >= np.abs(log_grey[b])
        odd[a[step & darker_a]] = True
        odd[b[step & ~darker_a]] = True
    odd &= ~layout.shield_inner
    shaded = odd & (chroma <= PLASTIC_CHROMA_RATIO) & (grey <= hi)
    lit = (grey >= lo) & (grey <= hi)
    edge = odd & (chroma <= PLASTIC_CHROMA_RATIO) & lit
    faint = odd & (chroma <= FAINT_CHROMA_RATIO) & lit
    return CellFlags(odd=odd, shaded=shaded, edge=edge, plastic=~odd & ~layout.shield_inner, faint=faint)


class CoverGraph:
    """Which cells and holes touch which, precomputed for one layout.

    Nodes are the cells, then the code holes (row by row, then the secret),
    then the key holes. An odd cell that a peg beside it explains (see
    :meth:`find`) touches only the cells of its own strip and the holes it
    lies beside: a row of peg shadows is a line along a strip. Any other
    odd cell touches every node within a row step, and unreadable holes
    touch their neighbours in the row.
    """

    def __init__(self, profile: BoardProfile, layout: CellLayout) -> None:
        self.profile = profile
        self.layout = layout
        cells = layout.centres_mm
        code = np.array(
            [c for r in range(1, profile.rows + 1) for c in profile.hole_centres_mm(r)] + list(profile.secret_centres_mm()),
            dtype=np.float64,
        )
        keys = np.array([c for r in range(1, profile.rows + 1) for c in profile.key_centres_mm(r)], dtype=np.float64)
        self.n_cells, self.n_code, self.n_keys = len(cells), len(code), len(keys)
        pts = np.concatenate([cells, code, keys.reshape(-1, 2)])
        n = len(pts)
        step = np.array(profile.row_step_mm, dtype=np.float64)
        step_len = float(np.hypot(*step))
        unit = step / max(step_len, 1e-9)
        pitch = min(min_pitch(code[: profile.holes]), step_len)
        near = max(step_len, 1.5 * pitch) + 0.5
        dist = np.linalg.norm(pts[:, None, :] - pts[None, :, :], axis=2)
        along = pts @ unit
        nc = self.n_cells
        inner = layout.shield_inner
        # Anything within a row step: for odd cells no peg explains.
        self.near = (dist <= near) & ~np.eye(n, dtype=bool)
        # Along a strip, and a cell to the holes it lies beside.
        local = np.zeros((n, n), dtype=bool)
        same_strip = np.abs(along[:nc, None] - along[None, :nc]) < 0.5
        local[:nc, :nc] = same_strip & (dist[:nc, :nc] <= near)
        for i, beside in enumerate(layout.code_cells + layout.key_cells):
            for c in beside:
                local[c, nc + i] = True
        self.code_row = np.array([i // profile.holes for i in range(self.n_code)], dtype=np.intp)
        self.key_row = np.array([i // max(profile.key_holes, 1) for i in range(self.n_keys)], dtype=np.intp)
        # Neighbouring rows' key blocks lie closer than a code pitch, with the
        # cells of the strip between them probing the gap: an object over both
        # shows there. So a key hole touches the holes of its own row only.
        hole_row = np.concatenate([self.code_row, self.key_row])
        is_key = np.arange(self.n_code + self.n_keys) >= self.n_code
        other_block = (is_key[:, None] | is_key[None, :]) & (hole_row[:, None] != hole_row[None, :])
        local[nc:, nc:] = (dist[nc:, nc:] <= min(near, 1.6 * pitch)) & ~other_block
        local = (local | local.T) & ~np.eye(n, dtype=bool)
        self.local = local
        for m in (self.near, self.local):
            m[np.flatnonzero(inner), :] = False
            m[:, np.flatnonzero(inner)] = False
        # Each cell beside a hole, and on which side of it (along the row
        # step): a peg's shadow and its side seen in perspective fall on one
        # side of it, the same side for every peg on the board.
        pc, ph, ps = [], [], []
        for i, beside in enumerate(layout.code_cells + layout.key_cells):
            for c in beside:
                pc.append(c)
                ph.append(i)
                ps.append(1 if float(np.dot(cells[c] - pts[nc + i], unit)) > 0 else -1)
        self._pair_cell = np.array(pc, dtype=np.intp)
        self._pair_hole = np.array(ph, dtype=np.intp)
        self._pair_side = np.array(ps, dtype=np.intp)
        self._pair_vec = cells[self._pair_cell] - pts[nc + self._pair_hole] if pc else np.zeros((0, 2))
        # The cells a peg's shade may reach.
        code_r = profile.code_hole_diameter_mm / 2
        key_r = profile.key_hole_diameter_mm / 2
        radii = np.array([code_r] * self.n_code + [key_r] * self.n_keys)
        self._pair_reach = radii[self._pair_hole] + layout.half_mm * np.sqrt(2.0)
        # A cell touches a peg's head when its centre lies within the head's
        # radius plus the cell's half-diagonal of the head's centre.
        self._head_reach = self._pair_reach
        self.shaded_by = (dist[:nc, nc:] - radii[None, :] - layout.half_mm) <= PEG_REACH_MM
        # Holes beside an unreadable hole under a cover: the object's edge
        # may lie on them.
        self._hole_next = (dist[nc:, nc:] <= 1.6 * pitch) & ~other_block
        np.fill_diagonal(self._hole_next, False)
        # A hole is occluded when a cover lies within reach of it. A
        # fingertip may cover a hole and stop short of the cells beside it
        # (they are a row step apart): so the reach is the diagonal to the
        # cells beside the next hole along the row.
        reach = float(np.hypot(step_len / 2, pitch)) + 1.0
        self.reach = dist[nc:, :nc] <= reach
        self.reach[:, inner] = False

    def find(
        self,
        odd: BoolArray,
        shaded: BoolArray | None = None,
        *,
        code_pegs: BoolArray | None = None,
        key_pegs: BoolArray | None = None,
        code_unread: BoolArray | None = None,
        key_unread: BoolArray | None = None,
        cell_linear: FloatArray | None = None,
        hole_linear: FloatArray | None = None,
        plastic: FloatArray | None = None,
        lean: FloatArray | None = None,
        edge: BoolArray | None = None,
        bare: BoolArray | None = None,
        faint: BoolArray | None = None,
        fit_trusted: bool = False,
        seen: BoolArray | None = None,
    ) -> Cover:
        """The covers among ``odd`` cells and unreadable holes.

        An odd cell is explained when it is ``shaded`` (the plastic's
        chroma, only darker, or an edge across it) within a peg's reach of a
        hole that holds a peg (``code_pegs``/``key_pegs``: read as a peg, or
        unreadable), or around the shield: shadows, and the light a solid
        keeps from the plastic around it. A cell beside a peg that is a
        shaded mix of the plastic and that peg's colour (``cell_linear``,
        ``hole_linear``, ``plastic``: normalised linear BGR) is the peg's
        side seen in perspective, and is explained when it lies on the side
        where the board's pegs lean: at least MIN_SHADOW_PAIRS such cells,
        nearly all on one side of their pegs (a hand covers both sides of
        the holes under it). When the camera's pose is known, ``lean`` says
        it outright: per hole (code then key holes), where the top of a
        peg's head appears on the board plane relative to the hole (mm); a
        mix cell is then explained when it lies that way, within the head's
        reach. A ``faint`` mix cell is explained on either side, on a fit
        the reader trusts to accuse from (``fit_trusted``): mostly plastic,
        tinted by the peg beside it (the light the peg throws, its side
        under the fill lamp). On a doubted fit such a cell may be a peg the
        grid misses by a hole, and it must stay a cover. On such a fit too,
        a faint cell darker than the plastic whose colour is the plastic's
        under another lamp (:func:`lamp_shade`) counts as ``shaded``: a
        peg's shadow from one lamp, lit by the other.

        An object is a cover when it holds at least one odd cell no peg
        explains and that is not only an ``edge`` (a shadow's edge crossing a
        cell, a step in the light): a row of peg shadows alone is not one,
        the same shadows beside a sleeve are part of it. Nor is one ``faint``
        cell with nothing odd or unreadable beside it.

        The holes within reach of a cover are occluded, except those the
        reader says are seen bare (``bare``, code then key holes; see
        ``BoardReader``: where no game has reached yet, and the rows whose
        every hole shows its recess), and, on a
        trusted fit, those ``seen`` (code then key holes: read surely as a
        lit peg) whose colour is unlike every foreign cell of the covers
        that reach them (:data:`SEEN_APART_GAP`): a hand's shadow or the
        edge of a sleeve beside a peg leaves the peg in view.
        """
        nc = self.n_cells
        if fit_trusted and shaded is not None and faint is not None and cell_linear is not None and plastic is not None:
            tinted = np.flatnonzero(faint & odd)  # few: every frame pays for this
            shaded = shaded.copy()
            shaded[tinted] |= lamp_shade(cell_linear[tinted], plastic)
        zeros_c = np.zeros(self.n_code, dtype=bool)
        zeros_k = np.zeros(self.n_keys, dtype=bool)
        code_u = zeros_c if code_unread is None else code_unread
        key_u = zeros_k if key_unread is None else key_unread
        pegs = np.concatenate([zeros_c if code_pegs is None else code_pegs, zeros_k if key_pegs is None else key_pegs])
        explained = self._explained(
            odd, shaded, pegs, cell_linear, hole_linear, plastic, lean, faint if fit_trusted else None
        )
        active = np.concatenate([odd, code_u, key_u])
        covered = np.zeros(len(active), dtype=bool)
        shield_only = np.zeros(len(active), dtype=bool)
        standing = np.zeros(len(active), dtype=bool)
        label = np.full(len(active), -1, dtype=np.intp)  # which object each covered node is part of
        sides = -1  # the sides every object standing open lies beyond
        # An edge alone (a shadow's, a peg's) starts no cover; it may carry one.
        foreign = odd & ~explained if edge is None else odd & ~explained & ~edge
        if foreign.any():
            ids = np.flatnonzero(active)
            cell_ids = ids[ids < nc]  # the cells come first among the nodes

            def per_node(cell_mask: BoolArray | None) -> BoolArray:
                out = np.zeros(len(ids), dtype=bool)
                if cell_mask is not None:
                    out[: len(cell_ids)] = cell_mask[cell_ids]
                return out

            sub_foreign = per_node(foreign)
            near = self.near[np.ix_(ids, ids)]
            adj = self.local[np.ix_(ids, ids)] | (near & (sub_foreign[:, None] | sub_foreign[None, :]))
            around_shield = per_node(self.layout.around_shield)
            lone_faint = per_node(faint)
            for comp in _components(adj):
                if not sub_foreign[comp].any() or (len(comp) == 1 and lone_faint[comp[0]]):
                    continue
                # A closed shield stands up: seen at a slant, its sides and
                # top lie over the cells around it. Those cells alone speak
                # for the secret row only, never for a guess row's holes.
                if around_shield[comp][sub_foreign[comp]].all():
                    if self._stands_open(ids[comp], sub_foreign[comp]):
                        standing[ids[comp]] = True
                        sides &= int(np.bitwise_and.reduce(self.layout.shield_side[ids[comp][sub_foreign[comp]]]))
                    comp = comp[around_shield[comp]]
                    shield_only[ids[comp]] = True
                covered[ids[comp]] = True
                label[ids[comp]] = ids[comp[0]]
        if sides == 0:
            standing[:] = False  # the plate stands on one side: objects on two are not all it
        cov_cells = covered[:nc]
        spreading = cov_cells & ~shield_only[:nc]
        near_cover = (
            self.reach[:, spreading].any(axis=1) if spreading.any() else np.zeros(len(self.reach), dtype=bool)
        )
        if covered[nc:].any():
            near_cover = near_cover | self._hole_next[:, covered[nc:]].any(axis=1)
        if bare is not None:
            near_cover = near_cover & ~bare
        holes = covered[nc:] | near_cover
        apart = np.zeros(len(holes), dtype=bool)
        if fit_trusted and seen is not None and cell_linear is not None and hole_linear is not None:
            apart = self._seen_apart(holes & seen, label, covered, foreign & covered[:nc], spreading, cell_linear, hole_linear)
            holes &= ~apart
        code = holes[: self.n_code]
        keys = holes[self.n_code :]
        rows = np.zeros(self.profile.rows + 1, dtype=bool)
        rows[self.code_row[code]] = True
        rows[self.key_row[keys]] = True
        rows[self.profile.rows] |= bool((cov_cells & self.layout.around_shield & ~standing[:nc]).any())
        return Cover(cells=cov_cells, code=code, keys=keys, rows=rows, explained=explained, seen=apart[: self.n_code])

    def _seen_apart(
        self, candidates: BoolArray, label: NDArray[np.intp], covered: BoolArray, foreign: BoolArray,
        spreading: BoolArray, cell_linear: FloatArray, hole_linear: FloatArray,
    ) -> BoolArray:
        """The ``candidates`` (holes within a cover's reach, read as a lit peg) whose colour lies
        further than SEEN_APART_GAP from every ``foreign`` cell of the objects that reach them
        (``label``: per node, the object it is part of). With no foreign cell to compare with,
        nothing says what the cover's colour is: the hole stays covered."""
        nc = self.n_cells
        out = np.zeros(len(candidates), dtype=bool)
        for h in np.flatnonzero(candidates):
            objects = np.union1d(label[:nc][self.reach[h] & spreading], label[nc:][self._hole_next[h] & covered[nc:]])
            cells = foreign & np.isin(label[:nc], objects[objects >= 0])
            out[h] = bool(cells.any()) and chroma_gap(hole_linear[h], cell_linear[cells]) > SEEN_APART_GAP
        return out

    def _stands_open(self, comp: NDArray[np.intp], foreign: BoolArray) -> bool:
        """Is this object around the shield its open plate, standing on its hinge?

        An open hinged shield stands up along one side of its outline: seen
        at a slant, it hides the cells on that side, and no others. Those
        cells say nothing about the secret holes, which stay in view: the
        shield test still wants bare plastic beside each of them, and a hole
        the colour model cannot read (in the plate's shade) is read unknown,
        never a colour. Anything else (a guess or key hole, cells on two
        sides) is an object over the board.
        """
        holes = comp[comp >= self.n_cells] - self.n_cells
        first_secret = self.profile.rows * self.profile.holes
        if np.any((holes < first_secret) | (holes >= self.n_code)):
            return False
        sides = self.layout.shield_side[comp[foreign]]
        return bool(sides.size) and int(np.bitwise_and.reduce(sides)) != 0

    def _explained(
        self,
        odd: BoolArray,
        shaded: BoolArray | None,
        pegs: BoolArray,
        cell_linear: FloatArray | None,
        hole_linear: FloatArray | None,
        plastic: FloatArray | None,
        lean: FloatArray | None = None,
        faint: BoolArray | None = None,
    ) -> BoolArray:
        """Odd cells that the pegs beside them (or the shield) explain (see :meth:`find`)."""
        out = np.zeros(len(odd), dtype=bool)
        if shaded is not None:
            # Shade: a peg's cast shadow, and the light its body keeps from
            # the plastic around it, fall on every side under soft light; the
            # shield, a solid too, shades the plastic around it.
            near_peg = self.shaded_by[:, pegs].any(axis=1) if pegs.any() else np.zeros(len(odd), dtype=bool)
            out |= odd & shaded & (near_peg | self.layout.around_shield)
        cand = odd[self._pair_cell] & pegs[self._pair_hole] & ~out[self._pair_cell]
        if lean is not None and cand.any():
            # The camera's pose says where each peg's head stands in the
            # picture: a cell under the head of a peg beside it shows that
            # head, whatever its colour and its glare.
            off = np.linalg.norm(self._pair_vec - lean[self._pair_hole], axis=1)
            on_head = cand & (off <= self._head_reach)
            out[self._pair_cell[on_head]] = True
            cand &= ~on_head
        if not cand.any() or cell_linear is None or hole_linear is None or plastic is None:
            return out
        # A peg's side, seen in perspective: its colour mixed with the
        # plastic's, on the side where every peg leans.
        idx = np.flatnonzero(cand)
        looks = np.zeros(len(cand), dtype=bool)
        looks[idx] = mixes(cell_linear[self._pair_cell[idx]], hole_linear[self._pair_hole[idx]], plastic)
        cand &= looks
        if faint is not None:
            out[self._pair_cell[cand & faint[self._pair_cell]]] = True
        if lean is not None:
            toward = lean[self._pair_hole]
            along = np.sum(self._pair_vec * toward, axis=1)
            dist = np.linalg.norm(self._pair_vec, axis=1)
            out[self._pair_cell[cand & (along > 0) & (dist <= self._pair_reach + np.linalg.norm(toward, axis=1))]] = True
            return out
        plus = int(np.sum(cand & (self._pair_side > 0)))
        minus = int(np.sum(cand & (self._pair_side < 0)))
        side = 1 if plus >= minus else -1
        lead, other = max(plus, minus), min(plus, minus)
        if lead >= MIN_SHADOW_PAIRS and lead >= SHADOW_SIDE_RATIO * other:
            out[self._pair_cell[cand & (self._pair_side == side)]] = True
        return out


def _components(adj: BoolArray) -> list[NDArray[np.intp]]:
    """Connected components of a small symmetric adjacency matrix."""
    n = len(adj)
    seen = np.zeros(n, dtype=bool)
    out: list[NDArray[np.intp]] = []
    for start in range(n):
        if seen[start]:
            continue
        comp = [start]
        seen[start] = True
        k = 0
        while k < len(comp):
            nxt = np.flatnonzero(adj[comp[k]] & ~seen)
            seen[nxt] = True
            comp.extend(int(v) for v in nxt)
            k += 1
        out.append(np.array(comp, dtype=np.intp))
    return out


@dataclass(frozen=True)
class Cover:
    """What is covered: cells, code holes (row by row, then the secret), key
    holes, and per row (then the secret row) whether anything of it is; which
    cells the pegs beside them explain, and which code holes a cover reaches
    but shows a peg unlike it."""

    cells: BoolArray
    code: BoolArray
    keys: BoolArray
    rows: BoolArray
    explained: BoolArray
    #: Code holes within a cover's reach left read: they show a peg unlike the cover.
    seen: BoolArray
