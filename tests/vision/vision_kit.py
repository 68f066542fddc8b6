"""Small helpers shared by the vision tests."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


def mask(n: int, *idx: int) -> NDArray[np.bool_]:
    """A boolean mask of length ``n``, true at ``idx``."""
    out = np.zeros(n, dtype=bool)
    out[list(idx)] = True
    return out
