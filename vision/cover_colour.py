"""The colour tests the cover graph makes on cells and holes (normalised linear BGR).

Shading scales every channel alike, so these compare colours by their
channel ratios, never by brightness alone: a shadow cast by one lamp and lit
by another (:func:`lamp_shade`), a peg's side seen beside its hole
(:func:`mixes`), and how far a hole's colour lies from a cover's
(:func:`chroma_gap`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.cells import on_locus

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

#: A cell is a shaded mix of a peg's colour and the plastic's when the
#: least-squares mix leaves less than this fraction of it unexplained.
MIX_RESIDUAL = 0.08


def lamp_shade(cells: FloatArray, plastic: FloatArray) -> BoolArray:
    """Per cell (normalised linear BGR): darker than the ``plastic``, and its colour under
    some lamp (:func:`~pegwatch.vision.cells.on_locus`).

    Under two lamps of different colours the light model is their mix; in
    the shadow one lamp casts, the other lights the plastic alone, and the
    shadow's colour moves along the blackbody locus, not only down in
    brightness.
    """
    logs = np.log(np.maximum(np.asarray(cells, dtype=np.float64), 1e-6))
    ref = np.maximum(np.asarray(plastic, dtype=np.float64), 1e-6)
    darker = np.mean(logs - np.log(ref)[None, :], axis=1) < 0.0
    out: BoolArray = darker & on_locus(logs, [float(v) for v in ref])
    return out


def mixes(cells: FloatArray, pegs: FloatArray, plastic: FloatArray) -> BoolArray:
    """Per row: is the cell's colour a shaded mix of the peg's and the plastic's?

    Under one light every mix of two pigments lies in the plane their
    colours span (linear light). The peg's colour here is its hole's
    sample, itself a mix when the head leans off the hole, so the cell may
    hold more of the peg than the hole does: the plastic's weight may be
    negative, the peg's may not. The cell is a mix when the least-squares
    fit leaves less than MIX_RESIDUAL of it unexplained.
    """
    base = np.broadcast_to(np.asarray(plastic, dtype=np.float64), cells.shape)
    a11 = np.sum(pegs * pegs, axis=1)
    a22 = np.sum(base * base, axis=1)
    a12 = np.sum(pegs * base, axis=1)
    b1 = np.sum(pegs * cells, axis=1)
    b2 = np.sum(base * cells, axis=1)
    det = a11 * a22 - a12 * a12
    safe = np.abs(det) > 1e-12
    w1 = np.where(safe, (a22 * b1 - a12 * b2) / np.where(safe, det, 1.0), 0.0)
    w2 = np.where(safe, (a11 * b2 - a12 * b1) / np.where(safe, det, 1.0), 0.0)
    pred = w1[:, None] * pegs + w2[:, None] * base
    resid = np.linalg.norm(cells - pred, axis=1) / np.maximum(np.linalg.norm(cells, axis=1), 1e-6)
    out: BoolArray = safe & (w1 > 0) & (resid <= MIX_RESIDUAL)
    return out


def chroma_gap(hole: FloatArray, cells: FloatArray) -> float:
    """How far ``hole``'s colour lies from the nearest of ``cells`` (one row each), shading aside.

    The log of the largest channel ratio over the smallest, the measure the
    plastic's cells are tested with (:func:`~pegwatch.vision.cover.cell_flags`):
    0 for the same material in any light or shade.
    """
    logs = np.log(np.maximum(np.asarray(hole, dtype=np.float64), 1e-4))[None, :] - np.log(
        np.maximum(np.asarray(cells, dtype=np.float64), 1e-4)
    )
    return float(np.min(logs.max(axis=1) - logs.min(axis=1))) if len(logs) else float("inf")
