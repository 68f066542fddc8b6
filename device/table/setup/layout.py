"""The set-up's layout: pegs laid out in the first rows so that one photo shows every colour.

Every colour of the board's palette is placed in rows 1, 2, ... in palette
order, four (a row's holes) at a time; the key holes of those rows hold
both key colours and some stay empty; the secret row, shield open, holds
the palette again from its middle. ``docs/setup.md`` prints it for each
board; the set-up calibrates the colours from a photo of it.
"""

from __future__ import annotations

import math
from typing import Any

from pegwatch.vision.profile import BoardProfile

__all__ = ["layout_lines", "layout_record"]

#: The key marks of the layout's rows in turn: both key colours, and empty holes.
_KEYS = ((2, 1), (1, 2), (0, 3), (3, 0))


def layout_record(profile: BoardProfile) -> dict[str, Any]:
    """The layout as a truth record (the game-record JSON :func:`pegwatch.vision.calibrate.calibrate` takes)."""
    palette = list(profile.palette)
    rows = max(2, math.ceil(len(palette) / profile.holes))
    out = []
    for r in range(rows):
        guess = [palette[(r * profile.holes + j) % len(palette)] for j in range(profile.holes)]
        black, white = _KEYS[r % len(_KEYS)]
        if black + white > profile.key_holes:
            black, white = min(black, profile.key_holes), 0
        out.append({"guess": guess, "black": black, "white": white})
    half = len(palette) // 2
    secret = [palette[(half + j) % len(palette)] for j in range(profile.holes)]
    return {"rules": "mso", "secret": secret, "rows": out}


def layout_lines(profile: BoardProfile) -> list[str]:
    """The layout in words, one line a row (for the docs, the log and the preview)."""
    record = layout_record(profile)
    lines = [
        f"row {i}: {' '.join(row['guess'])}; keys: {row['black']} {profile.right_place_key}, "
        f"{row['white']} {profile.right_colour_key}"
        for i, row in enumerate(record["rows"], start=1)
    ]
    lines.append(f"secret (shield open): {' '.join(record['secret'])}")
    return lines
