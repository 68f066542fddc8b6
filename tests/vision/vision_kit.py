"""Small helpers shared by the vision tests."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray


def mask(n: int, *idx: int) -> NDArray[np.bool_]:
    """A boolean mask of length ``n``, true at ``idx``."""
    out = np.zeros(n, dtype=bool)
    out[list(idx)] = True
    return out


def hide_marker(image: NDArray[np.uint8], out: Any, marker: Any) -> NDArray[np.uint8]:
    """The frame with ``marker`` (and its quiet zone) painted over in the tray's colour
    (``out``: the render, for where the marker lies)."""
    import cv2

    cx, cy = marker.centre_mm
    r = marker.size_mm * 0.75
    quad = out.project(np.array([[cx - r, cy - r], [cx + r, cy - r], [cx + r, cy + r], [cx - r, cy + r]]))
    tray = np.median(image[5:15, 5:15].reshape(-1, 3), axis=0)
    hidden = image.copy()
    cv2.fillConvexPoly(hidden, np.round(quad).astype(np.int32), tuple(int(v) for v in tray))
    return hidden


def hole_errors_mm(profile: Any, loc: Any, out: Any) -> NDArray[np.float64]:
    """How far (mm) the localisation ``loc`` puts each hole from where the render ``out`` drew it."""
    holes = np.array(profile.all_hole_centres_mm())
    errors: NDArray[np.float64] = np.linalg.norm(loc.to_board(out.project(holes)) - holes, axis=1)
    return errors


def silence_pattern_rows(monkeypatch: Any, rows: slice) -> None:
    """The hole pattern, as the marker localiser measures it, with ``rows``
    (0-based) giving no answer (under a hand or a sleeve)."""
    from dataclasses import replace

    from pegwatch.vision.localise import grid, marker_localiser

    real = grid.measure_grid

    def silent(*args: Any, **kwargs: Any) -> Any:
        fit = real(*args, **kwargs)
        contrast = fit.row_contrast.copy()
        contrast[rows] = 0.0
        return replace(fit, row_contrast=contrast)

    monkeypatch.setattr(marker_localiser, "measure_grid", silent)
