"""A key hole read bare must look bare where a key peg's head would stand.

Seen at a slant (and smeared by a shaken camera) a small key peg's head
stands off its hole: the hole shows the peg's shadow and the plastic, and
reads bare. On the physically based set (seed 2, case 144) that made a
correct row look marked with one key peg fewer, and it was accused.
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

    def head_shows_a_peg(self, image, loc, light):
        out = np.ones(len(self.sampler.key_centres_mm), dtype=bool)
        out[(row.row - 1) * k : row.row * k] = False
        return out

    reader._key_heads_bare = head_shows_a_peg.__get__(reader)
    doubted = reader.read(frame).row(row.row)
    assert doubted.status == ROW_UNKNOWN
    keys = doubted.keys
    assert keys.black_bounds is not None and keys.white_bounds is not None
    assert keys.black_bounds[0] == row.keys.black and keys.white_bounds[0] == row.keys.white
    room = row.keys.empty
    assert keys.black_bounds[1] == row.keys.black + room and keys.white_bounds[1] == row.keys.white + room
