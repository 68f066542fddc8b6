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
    sx, sy, _, sh = p.shield_mm
    near_rows = around[centres[:, 0] < sx]  # the shield's side towards the guess rows
    below = around[centres[:, 1] > sy + sh]  # and the side towards the board's edge
    assert len(near_rows) >= 2 and len(below) >= 2
    cover = _odd_cells(g, [*near_rows, *below])
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
    both = _odd_cells(g, [*near_rows, *below, beside_last[0]])
    assert both.rows[p.rows - 1]


def test_an_open_shield_standing_on_its_hinge_covers_nothing(graph):
    """An open shield stands along one side of its outline: seen at a slant,
    it and its shadow lie over the cells on that side (out to the free
    plastic at the board's edge), and the secret holes stay in view. One
    side alone is the plate; the same cells with a secret hole's neighbour
    on another side are an object over the secret row."""
    p, g = graph
    sx, sy, sw, sh = p.shield_mm
    lay = g.layout
    far = np.flatnonzero(lay.around_shield & (lay.centres_mm[:, 0] > sx + sw))
    assert len(far) >= 4 and (~lay.shield_outer[far]).any()  # the ring's cells and the margin's beyond them
    plate = _odd_cells(g, far)
    assert not plate.rows.any() and not plate.code.any()
    assert plate.cells[far].all()  # still not bare plastic: nothing else is read from them
    other = np.flatnonzero(lay.shield_outer & (lay.centres_mm[:, 1] > sy + sh))
    assert other.size
    assert _odd_cells(g, [*far, other[0]]).rows[p.rows]


def test_the_plate_never_explains_a_guess_hole_in_its_object(graph):
    """Cells on the shield's one side joined to unreadable guess holes are an object, not the plate:
    they speak for the secret row."""
    p, g = graph
    sx = p.shield_mm[0]
    near = np.flatnonzero(g.layout.shield_outer & (g.layout.centres_mm[:, 0] < sx))
    odd = np.zeros(g.n_cells, dtype=bool)
    odd[near] = True
    unread = np.zeros(g.n_code, dtype=bool)
    last_row = (p.rows - 1) * p.holes
    unread[last_row : last_row + p.holes] = True
    cover = g.find(
        odd, np.zeros(g.n_cells, dtype=bool), code_pegs=unread, key_pegs=np.zeros(g.n_keys, dtype=bool),
        code_unread=unread, key_unread=np.zeros(g.n_keys, dtype=bool), edge=np.zeros(g.n_cells, dtype=bool),
    )
    assert cover.rows[p.rows]
    assert _odd_cells(g, near).rows[p.rows] == 0  # the same cells alone: the plate
