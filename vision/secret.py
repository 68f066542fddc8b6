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
  surface), and no hole looks like the calibrated closed shield. Only then
  are the holes read, each with the same certainty rules as a guess row.
* **closed**: neither. A shield, one surface over the holes and the
  plastic around them, is what lies there; or the secret is not to be
  seen. Either way nothing is read.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.cells import CellLayout
from pegwatch.vision.cover import PLASTIC_BRIGHTNESS_RANGE, PLASTIC_CHROMA_RATIO
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
    *,
    rows: int,
    holes: int,
    covered: bool,
    best_names: Sequence[str],
    shield_name: str,
) -> SecretView:
    """Decide what the shield's area shows (see the module's doc).

    ``covered``: the cover test's answer for the secret row;
    ``best_names``: the colour model's best class per secret hole.
    """
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
    lo, hi = OPEN_SURFACE_RANGE
    chroma = f.cell_chroma[idx]
    grey = f.cell_grey[idx]
    if np.any(chroma > PLASTIC_CHROMA_RATIO) or np.any(grey < lo) or np.any(grey > hi):
        return SecretView.CLOSED
    plastic = np.exp(np.mean(np.log(np.maximum(f.cell_linear[idx], 1e-6)), axis=0))
    discs = f.code_linear[rows * holes : rows * holes + holes]
    if not np.all(_stands_out(discs, plastic)):
        return SecretView.CLOSED
    return SecretView.OPEN


def _stands_out(discs: NDArray[np.float64], plastic: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Per disc: not more of the plastic around it (another chroma, or far darker or brighter)."""
    ratio = np.maximum(discs, 1e-6) / np.maximum(plastic, 1e-6)[None, :]
    chroma = ratio.max(axis=1) / ratio.min(axis=1)
    grey = np.exp(np.mean(np.log(ratio), axis=1))
    lo, hi = PLASTIC_BRIGHTNESS_RANGE
    out: NDArray[np.bool_] = (chroma > PLASTIC_CHROMA_RATIO) | (grey < lo) | (grey > hi)
    return out
