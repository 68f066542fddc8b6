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
