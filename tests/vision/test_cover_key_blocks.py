"""Key holes the colour model cannot read join a cover within their own row's block only: the
cells between two rows' blocks say whether an object spans the gap."""

import numpy as np
import pytest

from pegwatch.vision.cells import build_layout
from pegwatch.vision.cover import CoverGraph
from pegwatch.vision.profile import load_profile


@pytest.fixture(scope="module")
def graph():
    p = load_profile("invicta-12x4")
    return p, CoverGraph(p, build_layout(p))


def _cells_at_x(g, x_mm):
    """Key-strip cells (level with the key holes) on the strip at ``x_mm``."""
    c = g.layout.centres_mm
    key_y = min(y for _, y in g.profile.key_centres_mm(1)) - 1.0
    return np.flatnonzero((np.abs(c[:, 0] - x_mm) < 0.5) & (c[:, 1] >= key_y) & ~g.layout.shield_inner)


def _keys(p, row):
    return np.arange((row - 1) * p.key_holes, row * p.key_holes)


def _find(g, odd_cells, unread_rows):
    p = g.profile
    odd = np.zeros(g.n_cells, dtype=bool)
    odd[odd_cells] = True
    key_unread = np.zeros(g.n_keys, dtype=bool)
    for r in unread_rows:
        key_unread[_keys(p, r)] = True
    return g.find(
        odd, np.zeros(g.n_cells, dtype=bool),
        code_pegs=np.zeros(g.n_code, dtype=bool), key_pegs=key_unread.copy(), key_unread=key_unread,
        edge=np.zeros(g.n_cells, dtype=bool),
    )


def _strip_between(p, row):
    """The x of the strip between ``row`` and the next (rows step along x on this profile)."""
    (x0, _), (x1, _) = p.hole_centres_mm(row)[0], p.hole_centres_mm(row + 1)[0]
    return (x0 + x1) / 2


def test_unread_key_holes_of_the_next_row_do_not_join_a_cover_across_bare_plastic(graph):
    p, g = graph
    assert p.row_step_mm[1] == 0  # the test walks the rows along x
    hand = _cells_at_x(g, _strip_between(p, 4))  # over the plastic between rows 4 and 5
    assert len(hand) >= 2
    cover = _find(g, hand, unread_rows=[5, 6])
    assert cover.keys[_keys(p, 5)].all()  # the hand's reach, and its unread block
    # Row 6's block is a code pitch from row 5's, but the plastic between them is bare.
    assert not cover.keys[_keys(p, 6)].any()
    assert not cover.rows[5]


def test_a_cover_over_the_plastic_between_two_blocks_takes_both(graph):
    p, g = graph
    between = _cells_at_x(g, _strip_between(p, 5))
    cover = _find(g, between, unread_rows=[5, 6])
    assert cover.keys[_keys(p, 5)].all() and cover.keys[_keys(p, 6)].all()
    assert cover.rows[4] and cover.rows[5]


def test_unread_key_holes_of_one_block_still_join_each_other(graph):
    p, g = graph
    keys = _keys(p, 5)
    near = g._hole_next[np.ix_(g.n_code + keys, g.n_code + keys)]
    assert near[~np.eye(len(keys), dtype=bool)].any()
    other = g._hole_next[np.ix_(g.n_code + keys, g.n_code + _keys(p, 6))]
    assert not other.any()


def test_without_edge_flags_every_unexplained_odd_cell_counts(graph):
    p, g = graph
    hand = _cells_at_x(g, _strip_between(p, 4))
    odd = np.zeros(g.n_cells, dtype=bool)
    odd[hand] = True
    cover = g.find(odd)  # no flags: nothing is only an edge
    assert cover.cells[hand].all() and cover.keys[_keys(p, 5)].all()
