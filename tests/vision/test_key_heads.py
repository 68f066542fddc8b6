"""A key hole read bare must look bare where a key peg's head would stand.

Seen at a slant (and smeared by a shaken camera) a small key peg's head
stands off its hole: the hole shows the peg's shadow and the plastic, and
reads bare. On the physically based set (seed 2, case 144) that made a
correct row look marked with one key peg fewer, and it was accused.

Nor may a key hole read as a key peg of one colour show a peg of the other
where the head would stand: under a warm lamp a white key peg's shaded side,
left at the hole, read as a red one (seed 3, table 500, case 18, rendered on
28 November 2026), and a correct row was accused of a right-place mark too many.

What the head's place shows surely also counts: a key hole read bare (or
read not at all) whose head's place shows surely a key peg that stands out
from the plastic, and whose block shows a peg standing, holds that peg (the
cached physically based board 4: 2,939 K, tilted 22 degrees, defocused; five
key pegs read not at all at their holes, their heads' places show them).

A code peg's shaded side, at its hole, reads a darker colour than its head
(a white peg as black, seed 3, table 501, case 43; an orange one as red, seed 2,
table 501, case 23): where the head's place shows surely another lit colour,
the hole may be either.
"""

from __future__ import annotations

import numpy as np
from vision_kit import mask

import pegwatch.vision.reader as reader_module
from pegwatch.vision.key_count import count_keys
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import ROW_OK, ROW_UNKNOWN, UNKNOWN


def _heads_replaced(reader, key_heads=None, code_heads=None):
    """``reader`` with what the head places show replaced (None: as it reads them)."""
    real = reader._head_classes

    def heads(frame, loc, light, *, keys, only=None):
        got = key_heads if keys else code_heads
        return real(frame, loc, light, keys=keys, only=only) if got is None else got

    reader._head_classes = heads


def test_the_key_discs_sampled_in_place_are_the_key_holes_own(invicta_table, invicta_cal):
    reader = BoardReader(invicta_table.profile, invicta_cal)
    frame = invicta_table.calibration[0].image
    reader.read(frame)
    loc = reader.last_localisation
    assert loc is not None and loc.image_to_board is not None
    f = reader.sampler.features_from_frame(frame, loc.image_to_board, invicta_cal.plastic_linear, covers=False, warp=loc.warp)
    n = len(reader.sampler.key_centres_mm)
    here = reader.sampler.key_discs_shifted(frame, loc.image_to_board, np.zeros((n, 2)), loc.warp)
    assert f.key_linear is not None
    assert np.allclose(here, f.key_linear)
    # Moved by a hole pitch, the disc lands somewhere else.
    away = reader.sampler.key_discs_shifted(frame, loc.image_to_board, np.full((n, 2), 8.0), loc.warp)
    assert not np.allclose(away, f.key_linear)


def test_a_bare_key_hole_whose_head_place_shows_a_peg_is_room_for_one(invicta_table, invicta_cal):
    reader, frame, row, heads, sure = _read_with_heads(invicta_table, invicta_cal, wanted=lambda r: r.keys.empty > 0)
    k = reader.profile.key_holes
    names = reader.key_model.names
    # Where the row's head places look bare, they show a peg instead (not surely).
    row_heads = heads[(row.row - 1) * k : row.row * k]
    row_heads[row_heads == names.index("empty")] = names.index(reader.profile.right_colour_key)
    _heads_replaced(reader, key_heads=(heads, np.zeros_like(sure)))
    doubted = reader.read(frame).row(row.row)
    assert doubted.status == ROW_UNKNOWN
    keys = doubted.keys
    assert keys.black_bounds is not None and keys.white_bounds is not None
    assert keys.black_bounds[0] == row.keys.black and keys.white_bounds[0] == row.keys.white
    room = row.keys.empty
    assert keys.black_bounds[1] == row.keys.black + room and keys.white_bounds[1] == row.keys.white + room


def _read_with_heads(table, cal, *, keys=True, wanted=lambda row: row.keys.black > 0):
    """A reader that has read the table's first calibration photo, the frame, the first row
    read ok that is ``wanted`` (by default, one holding a right-place key peg), and what
    each key hole's (``keys``) or code hole's head's place shows, and whether surely."""
    reader = BoardReader(table.profile, cal, keep_still=False)  # the same frame read again, in full
    frame = table.calibration[0].image
    plain = reader.read(frame)
    row = next(r for r in plain.rows if r.status == ROW_OK and wanted(r))
    loc = reader.last_localisation
    assert loc is not None
    got = reader._head_classes(frame, loc, reader.last_peg_light, keys=keys)
    assert got is not None
    return reader, frame, row, got[0].copy(), got[1].copy()


def test_a_key_peg_whose_head_place_shows_the_other_colour_may_be_either(invicta_table, invicta_cal):
    reader, frame, row, heads, _sure = _read_with_heads(invicta_table, invicta_cal)
    place, colour = reader.profile.right_place_key, reader.profile.right_colour_key
    # Where each of the row's key holes was read a right-place peg, its head's place shows the other colour.
    names = reader.key_model.names
    k = reader.profile.key_holes
    lo, hi = (row.row - 1) * k, row.row * k
    placed = [i for i in range(lo, hi) if names[heads[i]] == place]
    assert placed, "the head places of the row's right-place pegs show them"
    swapped = heads.copy()
    swapped[placed] = names.index(colour)
    _heads_replaced(reader, key_heads=(swapped, np.ones(len(swapped), dtype=bool)))
    doubted = reader.read(frame).row(row.row)
    assert doubted.status == ROW_UNKNOWN
    keys = doubted.keys
    assert keys.black_bounds is not None and keys.white_bounds is not None
    n = len(placed)
    assert keys.black_bounds == (row.keys.black - n, row.keys.black)
    assert keys.white_bounds == (row.keys.white, row.keys.white + n)


def test_a_black_key_peg_whose_head_place_looks_bare_still_counts(super_table, super_cal):
    # Black and a bare hole look alike: a head's place read bare says nothing against a black key peg.
    reader, frame, row, heads, _sure = _read_with_heads(super_table, super_cal)
    assert reader.profile.right_place_key == "black"
    names = reader.key_model.names
    k = reader.profile.key_holes
    heads[(row.row - 1) * k : row.row * k] = names.index("empty")
    _heads_replaced(reader, key_heads=(heads, np.ones(len(heads), dtype=bool)))
    again = reader.read(frame).row(row.row)
    keys = again.keys
    assert keys.black == row.keys.black
    assert keys.black_bounds is None or keys.black_bounds[0] == row.keys.black
    # A white one whose head's place looks bare may be anything.
    if row.keys.white:
        assert keys.white_bounds is not None and keys.white_bounds[0] == row.keys.white - 1


def _one_row(model, *classes):
    """A row of key holes read as ``classes``: best, accepted, confidence, occluded and distances."""
    best = np.array([model.names.index(c) for c in classes])
    d2 = model.distances2(model.means[best])
    n = len(classes)
    return best, np.ones(n, dtype=bool), np.ones(n), np.zeros(n, dtype=bool), d2


def test_a_key_hole_read_bare_whose_head_place_shows_a_peg_surely_holds_it(invicta_table, invicta_cal):
    p, model = invicta_table.profile, invicta_cal.key_model
    best, acc, conf, occ, d2 = _one_row(model, "empty", "empty", p.right_colour_key, "empty")
    white = model.names.index(p.right_colour_key)
    head_bare = np.array([True, False, False, True])  # hole 2's head place shows a peg
    room = count_keys(p, model, best, acc, conf, occ, d2, head_bare=head_bare)
    assert not room.is_certain and room.white_bounds == (1, 2)
    peg = np.array([-1, white, -1, -1])
    held = count_keys(p, model, best, acc, conf, occ, d2, head_bare=head_bare, head_peg=peg)
    assert held.is_certain and (held.black, held.white) == (0, 2)
    # A hole read not at all whose head's place shows the peg surely holds it too.
    unread = acc.copy()
    unread[1] = False
    held = count_keys(p, model, best, unread, conf, occ, d2, head_bare=np.ones(4, dtype=bool), head_peg=peg)
    assert held.is_certain and (held.black, held.white) == (0, 2)
    # Never a hole under a cover.
    covered = count_keys(p, model, best, unread, conf, mask(4, 1), d2, head_bare=head_bare, head_peg=peg)
    assert not covered.is_certain


def test_a_key_peg_read_at_its_hole_keeps_the_doubt_of_a_head_place_showing_the_other_colour(invicta_table, invicta_cal):
    p, model = invicta_table.profile, invicta_cal.key_model
    best, acc, conf, occ, d2 = _one_row(model, p.right_place_key, "empty", "empty", "empty")
    white = model.names.index(p.right_colour_key)
    other = np.array([True, False, False, False])
    keys = count_keys(
        p, model, best, acc, conf, occ, d2, head_bare=~other, head_other=other, head_peg=np.array([white, -1, -1, -1])
    )
    assert not keys.is_certain and keys.black_bounds == (0, 1) and keys.white_bounds == (0, 1)


def test_a_code_peg_whose_head_place_shows_another_lit_colour_may_be_either(invicta_table, invicta_cal):
    reader, frame, row, heads, sure = _read_with_heads(
        invicta_table, invicta_cal, keys=False, wanted=lambda r: all(h.colour != "empty" for h in r.holes)
    )
    p = reader.profile
    names = reader.code_model.names
    i = (row.row - 1) * p.holes
    hole = row.holes[0]
    other = next(c for c in ("white", "yellow", "red") if c != hole.colour)
    heads[i], sure[i] = names.index(other), True
    _heads_replaced(reader, code_heads=(heads, sure))
    doubted = reader.read(frame).row(row.row)
    assert doubted.holes[0].colour == UNKNOWN and doubted.status == ROW_UNKNOWN
    possible = doubted.holes[0].possible
    assert possible is None or {hole.colour, other} <= set(possible)
    assert doubted.holes[1:] == row.holes[1:]
    # Not surely: the hole keeps its colour.
    sure[i] = False
    assert reader.read(frame).row(row.row).holes[0] == hole


def test_key_pegs_held_from_their_heads_places_are_there_on_the_physically_based_boards(pbr_reads, monkeypatch):
    held: list[int] = []
    real = reader_module.count_keys

    def spy(profile, model, best, accepted, *a, **k):
        peg = k.get("head_peg")
        if peg is not None:
            held.append(int(((peg >= 0) & (~accepted | (best == model.names.index("empty")))).sum()))
        return real(profile, model, best, accepted, *a, **k)

    monkeypatch.setattr(reader_module, "count_keys", spy)
    for board, reading, truth in pbr_reads():
        for got, t in zip(reading.rows, truth.rows, strict=True):
            k, where = got.keys, f"case {board.meta['index']} row {t.row}"
            if k.is_certain and got.status != "occluded":
                assert (k.black, k.white) == (t.keys.black, t.keys.white), where
            elif k.black_bounds is not None and k.white_bounds is not None:
                assert k.black_bounds[0] <= t.keys.black <= k.black_bounds[1], where
                assert k.white_bounds[0] <= t.keys.white <= k.white_bounds[1], where
    assert sum(held) >= 3


def test_a_secret_peg_whose_head_place_shows_another_lit_colour_may_be_either(invicta_table, invicta_cal):
    # Every row is judged against the secret: its holes are looked at again as the rows' are.
    reader, frame, _row, heads, sure = _read_with_heads(invicta_table, invicta_cal, keys=False, wanted=lambda r: True)
    plain = reader.read(frame)
    assert plain.secret is not None and all(h.is_certain for h in plain.secret)
    p = reader.profile
    i = p.rows * p.holes  # the secret's first hole
    hole = plain.secret[0]
    other = next(c for c in ("white", "yellow", "red") if c != hole.colour)
    heads[i], sure[i] = reader.code_model.names.index(other), True
    _heads_replaced(reader, code_heads=(heads, sure))
    secret = reader.read(frame).secret
    assert secret is not None and secret[0].colour == UNKNOWN and secret[1:] == plain.secret[1:]
    possible = secret[0].possible
    assert possible is None or {hole.colour, other} <= set(possible)
