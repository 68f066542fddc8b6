"""Faint cells: one alone is noise on the plastic, not a hand; one tinted by its peg or by a second lamp is shade, on a trusted fit."""

import numpy as np
import pytest

from pegwatch.vision.cells import build_layout
from pegwatch.vision.cover import (
    FAINT_CHROMA_RATIO,
    PLASTIC_CHROMA_RATIO,
    CoverGraph,
    cell_flags,
    lamp_shade,
)
from pegwatch.vision.profile import load_profile
from pegwatch.vision.tint import TINT_DIRECTION


@pytest.fixture(scope="module")
def graph():
    p = load_profile("invicta-12x4")
    return p, CoverGraph(p, build_layout(p))


def _cell_beside_row(g, row):
    """A cell beside ``row``'s holes, away from the shield, and a neighbour of it on the board."""
    lay = g.layout
    cell = next(c for c in lay.row_cells[row - 1] if not lay.around_shield[c] and not lay.shield_inner[c])
    neighbour = next(int(c) for c in np.flatnonzero(g.near[cell, : g.n_cells]) if not lay.around_shield[c])
    return cell, neighbour


def _flags(g, chroma_of, grey_of=None):
    n = g.n_cells
    chroma, grey, spread = np.ones(n), np.ones(n), np.full(n, 0.05)
    for c, v in chroma_of.items():
        chroma[c] = v
    for c, v in (grey_of or {}).items():
        grey[c] = v
    return cell_flags(g.layout, chroma, grey, spread)


def _cover(g, flags, code_unread=None):
    return g.find(
        flags.odd, flags.shaded, code_pegs=np.zeros(g.n_code, dtype=bool), key_pegs=np.zeros(g.n_keys, dtype=bool),
        code_unread=code_unread, edge=flags.edge, faint=flags.faint,
    )


def test_a_cell_is_faint_only_a_little_past_the_plastic_s_chroma_in_a_light_it_can_have(graph):
    _, g = graph
    cell, other = _cell_beside_row(g, 6)
    mid = float(np.sqrt(PLASTIC_CHROMA_RATIO * FAINT_CHROMA_RATIO))
    flags = _flags(g, {cell: mid, other: FAINT_CHROMA_RATIO * 1.2})
    assert flags.odd[cell] and flags.faint[cell]
    assert flags.odd[other] and not flags.faint[other]
    dark = _flags(g, {cell: mid}, {cell: 0.2})
    assert dark.odd[cell] and not dark.faint[cell]


def test_one_faint_cell_alone_covers_nothing(graph):
    _, g = graph
    cell, _ = _cell_beside_row(g, 6)
    cover = _cover(g, _flags(g, {cell: 1.5}))
    assert not cover.rows.any() and not cover.code.any() and not cover.keys.any()


def test_a_strongly_odd_cell_alone_is_a_cover(graph):
    _, g = graph
    cell, _ = _cell_beside_row(g, 6)
    cover = _cover(g, _flags(g, {cell: 3.0}))
    assert cover.cells[cell] and cover.rows.any()


def test_two_faint_cells_together_are_an_object(graph):
    _, g = graph
    cell, neighbour = _cell_beside_row(g, 6)
    cover = _cover(g, _flags(g, {cell: 1.5, neighbour: 1.5}))
    assert cover.cells[cell] and cover.cells[neighbour] and cover.rows.any()


def test_a_faint_cell_beside_an_unreadable_hole_is_an_object(graph):
    _, g = graph
    cell, _ = _cell_beside_row(g, 6)
    hole = next(i for i, beside in enumerate(g.layout.code_cells) if cell in beside)
    unread = np.zeros(g.n_code, dtype=bool)
    unread[hole] = True
    cover = _cover(g, _flags(g, {cell: 1.5}), code_unread=unread)
    assert cover.cells[cell] and cover.code[hole]


PLASTIC = np.array([0.10, 0.10, 0.10])


def _two_cells_beside_a_peg(g, *, peg, cell, chroma, grey, trusted):
    """Two faint odd cells of colour ``cell`` on both sides of row 1's first hole, a peg of colour
    ``peg`` there (normalised linear BGR), found on a fit ``trusted`` or not: (cells, cover)."""
    pairs = np.flatnonzero(g._pair_hole == 0)
    sides = {int(np.sign(np.dot(g._pair_vec[k], g.profile.row_step_mm))): int(g._pair_cell[k]) for k in pairs}
    cells = list(sides.values())
    assert len(cells) == 2
    flags = _flags(g, {c: chroma for c in cells}, {c: grey for c in cells})
    assert all(flags.faint[c] for c in cells)
    cell_linear = np.tile(PLASTIC, (g.n_cells, 1))
    cell_linear[cells] = cell
    hole_linear = np.tile(PLASTIC, (g.n_code + g.n_keys, 1))
    hole_linear[0] = peg
    pegs = np.zeros(g.n_code, dtype=bool)
    pegs[0] = True
    return cells, g.find(
        flags.odd, flags.shaded, code_pegs=pegs, key_pegs=np.zeros(g.n_keys, dtype=bool),
        cell_linear=cell_linear, hole_linear=hole_linear, plastic=PLASTIC,
        edge=flags.edge, faint=flags.faint, fit_trusted=trusted,
    )


@pytest.mark.parametrize("trusted", [True, False])
def test_faint_cells_tinted_by_the_peg_beside_them_are_explained_only_on_a_trusted_fit(graph, trusted):
    _, g = graph
    red = np.array([0.03, 0.04, 0.45])
    cells, cover = _two_cells_beside_a_peg(
        g, peg=red, cell=0.85 * PLASTIC + 0.15 * red, chroma=1.6, grey=1.0, trusted=trusted
    )
    # Tinted on both sides of the peg: no lean explains both; only the tint does.
    assert all(bool(cover.explained[c]) for c in cells) == trusted
    assert bool(cover.rows.any()) == (not trusted)


def test_a_lamp_s_shade_is_darker_plastic_moved_along_the_locus():
    warm_shadow = PLASTIC * 0.7 * np.exp(0.5 * TINT_DIRECTION)
    green_shadow = PLASTIC * 0.7 * np.array([0.8, 1.3, 0.8])
    warm_highlight = PLASTIC * 1.5 * np.exp(0.5 * TINT_DIRECTION)
    got = lamp_shade(np.array([warm_shadow, green_shadow, warm_highlight]), PLASTIC)
    assert got.tolist() == [True, False, False]


@pytest.mark.parametrize("trusted", [True, False])
def test_a_warm_shadow_beside_a_blue_peg_is_shade_only_on_a_trusted_fit(graph, trusted):
    """Darker and warmer than the plastic on both sides of a blue peg (the shadow the cool lamp
    casts, lit by the warm one): no mix of blue and grey, and no lean, explains such cells."""
    _, g = graph
    shadow = PLASTIC * 0.7 * np.exp(0.5 * TINT_DIRECTION)
    chroma = float(np.max(shadow / PLASTIC) / np.min(shadow / PLASTIC))
    cells, cover = _two_cells_beside_a_peg(
        g, peg=np.array([0.45, 0.05, 0.03]), cell=shadow, chroma=chroma, grey=0.7, trusted=trusted
    )
    assert all(bool(cover.explained[c]) for c in cells) == trusted
    assert bool(cover.rows.any()) == (not trusted)
