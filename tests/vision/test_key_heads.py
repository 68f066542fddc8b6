"""A key hole read bare must look bare where a key peg's head would stand.

Seen at a slant (and smeared by a shaken camera) a small key peg's head
stands off its hole: the hole shows the peg's shadow and the plastic, and
reads bare. On the physically based set (seed 2, case 144) that made a
correct row look marked with one key peg fewer, and it was accused.

Nor may a key hole read as a key peg of one colour show a peg of the other
where the head would stand: under a warm lamp a white key peg's shaded side,
left at the hole, read as a red one (seed 3, table 500, case 18, rendered on
28 November 2026), and a correct row was accused of a right-place mark too many.
"""

from __future__ import annotations

import numpy as np

from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import ROW_OK, ROW_UNKNOWN


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
    reader = BoardReader(invicta_table.profile, invicta_cal)
    frame = invicta_table.calibration[0].image
    plain = reader.read(frame)
    row = next(r for r in plain.rows if r.status == ROW_OK and r.keys.empty > 0)
    k = reader.profile.key_holes

    loc = reader.last_localisation
    assert loc is not None
    heads = reader._key_head_classes(frame, loc, reader.last_peg_light)
    assert heads is not None
    names = reader.key_model.names
    # Where the row's head places look bare, they show a peg instead.
    row_heads = heads[(row.row - 1) * k : row.row * k]
    row_heads[row_heads == names.index("empty")] = names.index(reader.profile.right_colour_key)
    reader._key_head_classes = lambda image, loc, light: heads
    doubted = reader.read(frame).row(row.row)
    assert doubted.status == ROW_UNKNOWN
    keys = doubted.keys
    assert keys.black_bounds is not None and keys.white_bounds is not None
    assert keys.black_bounds[0] == row.keys.black and keys.white_bounds[0] == row.keys.white
    room = row.keys.empty
    assert keys.black_bounds[1] == row.keys.black + room and keys.white_bounds[1] == row.keys.white + room


def _read_with_heads(table, cal):
    """A reader that has read the table's first calibration photo, the frame, the first row
    holding a right-place key peg, and what each key hole's head's place shows."""
    reader = BoardReader(table.profile, cal)
    frame = table.calibration[0].image
    plain = reader.read(frame)
    row = next(r for r in plain.rows if r.status == ROW_OK and r.keys.black > 0)
    loc = reader.last_localisation
    assert loc is not None
    heads = reader._key_head_classes(frame, loc, reader.last_peg_light)
    assert heads is not None
    return reader, frame, row, heads


def test_a_key_peg_whose_head_place_shows_the_other_colour_may_be_either(invicta_table, invicta_cal):
    reader, frame, row, heads = _read_with_heads(invicta_table, invicta_cal)
    place, colour = reader.profile.right_place_key, reader.profile.right_colour_key
    # Where each of the row's key holes was read a right-place peg, its head's place shows the other colour.
    names = reader.key_model.names
    k = reader.profile.key_holes
    lo, hi = (row.row - 1) * k, row.row * k
    placed = [i for i in range(lo, hi) if names[heads[i]] == place]
    assert placed, "the head places of the row's right-place pegs show them"
    swapped = heads.copy()
    swapped[placed] = names.index(colour)
    reader._key_head_classes = lambda image, loc, light: swapped
    doubted = reader.read(frame).row(row.row)
    assert doubted.status == ROW_UNKNOWN
    keys = doubted.keys
    assert keys.black_bounds is not None and keys.white_bounds is not None
    n = len(placed)
    assert keys.black_bounds == (row.keys.black - n, row.keys.black)
    assert keys.white_bounds == (row.keys.white, row.keys.white + n)


def test_a_black_key_peg_whose_head_place_looks_bare_still_counts(super_table, super_cal):
    # Black and a bare hole look alike: a head's place read bare says nothing against a black key peg.
    reader, frame, row, heads = _read_with_heads(super_table, super_cal)
    assert reader.profile.right_place_key == "black"
    names = reader.key_model.names
    k = reader.profile.key_holes
    heads[(row.row - 1) * k : row.row * k] = names.index("empty")
    reader._key_head_classes = lambda image, loc, light: heads
    again = reader.read(frame).row(row.row)
    keys = again.keys
    assert keys.black == row.keys.black
    assert keys.black_bounds is None or keys.black_bounds[0] == row.keys.black
    # A white one whose head's place looks bare may be anything.
    if row.keys.white:
        assert keys.white_bounds is not None and keys.white_bounds[0] == row.keys.white - 1
