"""A hole a cover reaches but that shows a peg unlike the cover stays read; one showing the cover is covered."""

import numpy as np
import pytest

from pegwatch.vision.cells import build_layout
from pegwatch.vision.cover import SEEN_APART_GAP, CoverGraph
from pegwatch.vision.cover_colour import chroma_gap
from pegwatch.vision.profile import load_profile

SKIN = np.array([0.30, 0.45, 0.80])  # normalised linear BGR: a warm hand
BLUE = np.array([0.85, 0.35, 0.15])
PLASTIC = np.array([0.33, 0.33, 0.33])


@pytest.fixture(scope="module")
def graph():
    p = load_profile("invicta-12x4")
    return p, CoverGraph(p, build_layout(p))


def _hand_over_row(p, g, row):
    """Two foreign cells beside hole 1 of ``row``, on both sides of it (a hand covers both)."""
    hole = (row - 1) * p.holes + 1
    cells = sorted({int(c) for c in g.layout.code_cells[hole]})
    assert len(cells) >= 2
    return hole, cells


def _find(g, cells, hole_colours, *, seen_holes, trusted=True, cell_colour=SKIN):
    odd = np.zeros(g.n_cells, dtype=bool)
    odd[cells] = True
    cell_linear = np.tile(PLASTIC, (g.n_cells, 1))
    cell_linear[cells] = cell_colour
    hole_linear = np.tile(PLASTIC * 0.5, (g.n_code + g.n_keys, 1))
    seen = np.zeros(g.n_code + g.n_keys, dtype=bool)
    for h, colour in hole_colours.items():
        hole_linear[h] = colour
    seen[list(seen_holes)] = True
    zeros = np.zeros(g.n_cells, dtype=bool)
    return g.find(
        odd, zeros, code_pegs=np.zeros(g.n_code, dtype=bool), key_pegs=np.zeros(g.n_keys, dtype=bool),
        cell_linear=cell_linear, hole_linear=hole_linear, plastic=PLASTIC, edge=zeros, faint=zeros,
        fit_trusted=trusted, seen=seen,
    )


def test_a_peg_unlike_the_hand_beside_it_stays_read(graph):
    p, g = graph
    hole, cells = _hand_over_row(p, g, 5)
    before = _find(g, cells, {}, seen_holes=[])
    assert before.code[hole]  # the hand's reach takes the hole
    cover = _find(g, cells, {hole: BLUE}, seen_holes=[hole])
    assert not cover.code[hole] and cover.seen[hole]
    # The other holes the hand reaches, not read as a peg, stay covered.
    assert (cover.code & ~before.code).sum() == 0
    assert (before.code & ~cover.code).sum() == 1


def test_a_hole_showing_the_hand_s_own_colour_in_any_shade_stays_covered(graph):
    p, g = graph
    hole, cells = _hand_over_row(p, g, 5)
    for shade in (1.0, 0.4, 1.6):
        cover = _find(g, cells, {hole: SKIN * shade}, seen_holes=[hole])
        assert cover.code[hole] and not cover.seen[hole]
    # Within the gap: a colour a little off the hand's is still the hand.
    near = SKIN * np.exp(np.array([0.0, 0.0, 0.8 * SEEN_APART_GAP]))
    assert chroma_gap(near, SKIN[None, :]) < SEEN_APART_GAP
    assert _find(g, cells, {hole: near}, seen_holes=[hole]).code[hole]


def test_only_on_a_fit_trusted_to_accuse_from(graph):
    """On a doubted fit the hole's sample may lie on its neighbour's peg."""
    p, g = graph
    hole, cells = _hand_over_row(p, g, 5)
    cover = _find(g, cells, {hole: BLUE}, seen_holes=[hole], trusted=False)
    assert cover.code[hole] and not cover.seen.any()


def test_a_grey_sleeve_leaves_a_coloured_peg_in_view_and_covers_a_white_one(graph):
    """Grey and white differ in brightness alone, which says nothing under a shade."""
    p, g = graph
    hole, cells = _hand_over_row(p, g, 5)
    cover = _find(g, cells, {hole: BLUE}, seen_holes=[hole], cell_colour=PLASTIC * 0.2)
    assert not cover.code[hole] and cover.seen[hole]  # blue is unlike grey
    white = np.array([0.8, 0.8, 0.8])
    assert _find(g, cells, {hole: white}, seen_holes=[hole], cell_colour=PLASTIC * 0.2).code[hole]


def test_chroma_gap_ignores_shade_and_takes_the_nearest_cell():
    assert chroma_gap(SKIN * 0.3, SKIN[None, :]) == pytest.approx(0.0, abs=1e-9)
    assert chroma_gap(BLUE, np.stack([SKIN, BLUE * 2])) == pytest.approx(0.0, abs=1e-9)
    assert chroma_gap(BLUE, SKIN[None, :]) > SEEN_APART_GAP
    assert chroma_gap(BLUE, np.zeros((0, 3))) == float("inf")
