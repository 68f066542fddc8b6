"""The secret row seen as an object: shield closed, shield open, or something over it.

A closed shield must never read as a secret, and a hand or a sleeve over
an open secret must never read as pegs. So the secret is not read hole by
hole. :func:`see_secret` looks at the shield's whole area first:

* **covered**: a cover (see :mod:`pegwatch.vision.cover`) reaches the secret
  holes or the plastic around the shield. Something is over it: the
  secret is occluded, whatever its holes look like.
* **open**: the plastic beside every secret hole, inside the shield's
  area, is bare plastic (the board's chroma, and no darker or brighter than
  light alone makes it: a shield is another surface), and every secret hole
  stands out from that plastic (a hole or a peg, not more of the same
  surface), and no hole looks like the calibrated closed shield. Cells a
  leaning secret peg hides, and the cells of one side in the shade of the
  open shield standing on its hinge, are allowed for when another side's
  are bare beside every hole (:func:`_bare_surface`). Only then are the
  holes read, each like a guess hole but surer (see ``BoardReader``).
* **closed**: neither. A shield, one surface over the holes and the
  plastic around them, is what lies there; or the secret is not to be
  seen. Either way nothing is read.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.cells import SHIELD_SIDES, CellLayout
from pegwatch.vision.cover import PLASTIC_BRIGHTNESS_RANGE, PLASTIC_CHROMA_RATIO
from pegwatch.vision.profile import BoardProfile
from pegwatch.vision.sampler import Features

#: With the shield open, the plastic beside the secret holes is the board's
#: own, lit like the rest of it: a brightness ratio to the light model
#: outside this range is another surface (a shield, even of the board's
#: colour, stands proud of the board and is lit differently) or a shadow;
#: either way the open row is not seen clearly enough to read a secret.
OPEN_SURFACE_RANGE = (1 / 1.6, 1.6)


class SecretView(enum.Enum):
    """What the shield's area shows."""

    OPEN = "open"
    CLOSED = "closed"
    COVERED = "covered"


def see_secret(
    layout: CellLayout,
    f: Features,
    profile: BoardProfile,
    *,
    covered: bool,
    best_names: Sequence[str],
    shield_name: str,
    lean: NDArray[np.float64] | None = None,
) -> SecretView:
    """Decide what the shield's area shows (see the module's doc).

    ``covered``: the cover test's answer for the secret row;
    ``best_names``: the colour model's best class per secret hole;
    ``lean``: where the top of each secret peg's head appears on the board
    plane relative to its hole (mm; None without a pose).
    """
    rows, holes = profile.rows, profile.holes
    if covered:
        return SecretView.COVERED
    if any(n == shield_name for n in best_names):
        return SecretView.CLOSED
    if f.cell_chroma is None or f.cell_grey is None or f.cell_linear is None or f.code_linear is None:
        return SecretView.CLOSED
    surface = [c for cs in layout.secret_inner for c in cs]
    if not surface:
        # No shield area: the strips beside the secret row are its plastic.
        surface = list(layout.row_cells[rows]) if rows < len(layout.row_cells) else []
    if not surface:
        return SecretView.CLOSED
    idx = np.array(surface, dtype=np.intp)
    heads = np.zeros(len(idx), dtype=bool)
    if lean is not None and len(lean) == holes:
        heads = _under_heads(layout.centres_mm[idx], np.array(profile.secret_centres_mm()), lean,
                             profile.code_hole_diameter_mm / 2 + layout.half_mm / 2)
    seen = _bare_surface(f.cell_chroma[idx], f.cell_grey[idx], layout.shield_side[idx], heads, holes)
    if seen is None:
        return SecretView.CLOSED
    plastic = np.exp(np.mean(np.log(np.maximum(f.cell_linear[idx[seen]], 1e-6)), axis=0))
    discs = f.code_linear[rows * holes : rows * holes + holes]
    if not np.all(_stands_out(discs, plastic)):
        return SecretView.CLOSED
    return SecretView.OPEN


def _under_heads(cells: NDArray[np.float64], holes: NDArray[np.float64], lean: NDArray[np.float64], reach: float) -> NDArray[np.bool_]:
    """Per cell: does a peg standing in one of ``holes`` hide it? Seen at a slant,
    a peg covers the board from its hole to where its head's top appears. A
    cell is read by its median: it shows the peg once the peg reaches
    ``reach`` of its centre (the peg's radius and a margin inside the cell)."""
    a = holes[None, :, :]
    d = lean[None, :, :]
    t = np.clip(np.sum((cells[:, None, :] - a) * d, axis=2) / np.maximum(np.sum(d * d, axis=2), 1e-9), 0.0, 1.0)
    gap = np.linalg.norm(cells[:, None, :] - (a + t[:, :, None] * d), axis=2)
    out: NDArray[np.bool_] = np.any(gap <= reach, axis=1)
    return out


def _bare_surface(
    chroma: NDArray[np.float64], grey: NDArray[np.float64], side: NDArray[np.intp], heads: NDArray[np.bool_], holes: int
) -> NDArray[np.bool_] | None:
    """Which plastic cells beside the secret holes show bare plastic lit as the board; None if too few.

    Every cell should, but for those a leaning peg's head hides (``heads``).
    And an open shield stands on its hinge beside the secret row: it shades
    the cells between it and the holes, often too darkly for their chroma to
    mean anything, and seen at a slant its dark face lies over part of them.
    So the cells of one side (see ``CellLayout.shield_side``) may be darker
    than light alone makes bare plastic, whatever their chroma, provided the
    cells of another side are bare plastic beside every hole: a closed
    shield is one surface over the holes and both sides.
    """
    lo, hi = OPEN_SURFACE_RANGE
    bare: NDArray[np.bool_] = (chroma <= PLASTIC_CHROMA_RATIO) & (grey >= lo) & (grey <= hi) & ~heads
    odd = ~bare & ~heads
    if not odd.any() and not heads.any():
        return bare
    one_side = int(np.bitwise_and.reduce(side[odd])) if odd.any() else 0
    if odd.any() and (np.any(grey[odd] >= 1.0) or one_side == 0):
        return None
    for s in SHIELD_SIDES:
        on = (side & s) != 0
        if s & one_side == 0 and int(np.sum(on)) >= holes and bool(bare[on].all()):
            return bare
    return None


def _stands_out(discs: NDArray[np.float64], plastic: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Per disc: not more of the plastic around it (another chroma, or far darker or brighter)."""
    ratio = np.maximum(discs, 1e-6) / np.maximum(plastic, 1e-6)[None, :]
    chroma = ratio.max(axis=1) / ratio.min(axis=1)
    grey = np.exp(np.mean(np.log(ratio), axis=1))
    lo, hi = PLASTIC_BRIGHTNESS_RANGE
    out: NDArray[np.bool_] = (chroma > PLASTIC_CHROMA_RATIO) | (grey < lo) | (grey > hi)
    return out
