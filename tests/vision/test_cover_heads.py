"""A cell under a leaning peg's head shows that head, not a hand (the camera's pose places the heads)."""

import numpy as np
import pytest

from pegwatch.vision.cells import build_layout
from pegwatch.vision.cover import CoverGraph
from pegwatch.vision.profile import load_profile


@pytest.fixture(scope="module")
def graph():
    p = load_profile("invicta-12x4")
    return p, CoverGraph(p, build_layout(p))


def _one_odd_cell_beside_a_peg(p, g):
    """A cell beside hole 0 of row 1 (a peg there) and the vector from that hole to it (mm)."""
    pairs = np.flatnonzero(g._pair_hole == 0)
    k = int(pairs[0])
    return int(g._pair_cell[k]), g._pair_vec[k]


def _find(p, g, cell, lean):
    odd = np.zeros(g.n_cells, dtype=bool)
    odd[cell] = True
    pegs = np.zeros(g.n_code, dtype=bool)
    pegs[0] = True
    return g.find(
        odd, np.zeros(g.n_cells, dtype=bool), code_pegs=pegs, key_pegs=np.zeros(g.n_keys, dtype=bool),
        lean=lean, edge=np.zeros(g.n_cells, dtype=bool),
    )


def test_a_foreign_cell_where_the_peg_head_stands_is_explained(graph):
    p, g = graph
    cell, vec = _one_odd_cell_beside_a_peg(p, g)
    lean = np.zeros((g.n_code + g.n_keys, 2))
    lean[0] = vec * 0.6  # the head stands most of the way towards the cell
    cover = _find(p, g, cell, lean)
    assert cover.explained[cell]
    assert not cover.rows.any()


def test_the_same_cell_with_the_head_leaning_away_is_a_cover(graph):
    p, g = graph
    cell, vec = _one_odd_cell_beside_a_peg(p, g)
    lean = np.zeros((g.n_code + g.n_keys, 2))
    lean[0] = -vec * 0.6
    cover = _find(p, g, cell, lean)
    assert not cover.explained[cell]
    assert cover.rows[0]
    # Without a pose nothing places the head: a foreign cell is a cover.
    assert _find(p, g, cell, None).rows[0]


def _odd_cells(g, cells):
    odd = np.zeros(g.n_cells, dtype=bool)
    odd[list(cells)] = True
    return g.find(
        odd, np.zeros(g.n_cells, dtype=bool), code_pegs=np.zeros(g.n_code, dtype=bool),
        key_pegs=np.zeros(g.n_keys, dtype=bool), edge=np.zeros(g.n_cells, dtype=bool),
    )


def test_a_closed_shield_s_sides_over_the_cells_around_it_cover_the_secret_only(graph):
    """Seen at a slant, a raised shield lies over the cells around it: they
    speak for the secret row, never for the last guess row beside them."""
    p, g = graph
    around = np.flatnonzero(g.layout.shield_outer)
    centres = g.layout.centres_mm[around]
    sx = p.shield_mm[0]
    near_rows = around[centres[:, 0] < sx]  # the shield's side towards the guess rows
    assert len(near_rows) >= 2
    cover = _odd_cells(g, near_rows)
    assert cover.rows[p.rows]  # the secret row
    assert not cover.rows[: p.rows].any()
    assert not cover.code.any() and not cover.keys.any()
    # The same cells with a foreign cell beside the last guess row: a hand reaching over both.
    beside_last = [
        i for i in range(g.n_cells)
        if not g.layout.shield_outer[i] and not g.layout.shield_inner[i]
        and np.linalg.norm(g.layout.centres_mm[i] - np.array(p.hole_centres_mm(p.rows)[0])) < 9.0
    ]
    assert beside_last
    both = _odd_cells(g, [*near_rows, beside_last[0]])
    assert both.rows[p.rows - 1]
