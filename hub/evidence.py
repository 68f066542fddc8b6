"""An evidence frame with its read grid drawn on it, for the arbiter to settle a dispute by looking.

The table keeps the JPEG of every camera answer. :func:`draw_grid` draws
on it where the board was found (its outline), every hole of the row in
question as a ring in the colour read, around the peg itself (a red ring
and ``?`` where the camera could not say), the row's key holes, the other holes
faintly, and, when asked, a solid box over the secret row's holes so that a
frame shown during the game gives nothing away. :func:`data_uri` makes a
JPEG an ``<img src>`` that needs no request.

The grid comes as plain points in the frame's pixels (:class:`Grid`): the
hub knows no board geometry. ``pegwatch report`` locates the board on the
frame (``pegwatch.device.table.report.frame_grid``); the hub's page reads
the ``evidence`` message's flat ``grid``, every code hole row by row, with
:func:`grid_from_points`.
"""

from __future__ import annotations

import base64
import itertools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import BadInput

__all__ = [
    "EvidenceImageError",
    "Grid",
    "GridHole",
    "data_uri",
    "draw_grid",
    "grid_from_points",
]

logger = logging.getLogger(__name__)

Point = tuple[float, float]

#: Colours of peg names a board may use (RGB); a name not here is drawn grey with its label.
PEG_RGB: Final[Mapping[str, tuple[int, int, int]]] = {
    "red": (210, 40, 40), "green": (40, 160, 60), "blue": (40, 80, 210), "yellow": (235, 210, 40),
    "white": (245, 245, 245), "black": (20, 20, 20), "orange": (240, 130, 30),
    "purple": (130, 60, 170), "pink": (240, 130, 180), "brown": (120, 75, 40),
    "cyan": (40, 190, 210), "grey": (128, 128, 128),
}
_OUTLINE_BGR: Final = (0, 220, 255)
_DOUBT_BGR: Final = (0, 0, 255)
_FAINT_BGR: Final = (200, 200, 200)
_MASK_BGR: Final = (0, 0, 0)
#: The longest side of a drawn frame: enough to see a peg, small enough for a page of 30 rows.
MAX_SIDE: Final = 960
#: Around the board's outline, this share of its size is kept when the frame is cropped to it.
CROP_MARGIN: Final = 0.08


class EvidenceImageError(BadInput):
    """An evidence image cannot be read or drawn; the message says which and why."""


@dataclass(frozen=True)
class GridHole:
    """One hole in frame pixels: its centre, radius and what was read there.

    ``colour`` is the peg name read (None: not read, or the camera could not
    say); ``label`` is the short text drawn beside it."""

    x: float
    y: float
    r: float
    colour: str | None = None
    label: str = ""


@dataclass(frozen=True)
class Grid:
    """Where the board and its holes are in one frame, in its pixels.

    ``outline``: the board's four corners; ``holes``: the code holes of the
    row the frame is evidence for, with their read colours; ``keys``: that
    row's key holes; ``others``: every other hole (drawn faintly);
    ``secret``: the secret row's holes (masked on request)."""

    outline: tuple[Point, ...]
    holes: tuple[GridHole, ...] = ()
    keys: tuple[GridHole, ...] = ()
    others: tuple[GridHole, ...] = ()
    secret: tuple[GridHole, ...] = ()
    note: str = field(default="", compare=False)

    def with_colours(self, colours: Sequence[str | None], labels: Sequence[str] = ()) -> Grid:
        """The same grid with the row's holes coloured as read (one per hole)."""
        holes = tuple(
            GridHole(h.x, h.y, h.r, colours[i] if i < len(colours) else None,
                     labels[i] if i < len(labels) else h.label)
            for i, h in enumerate(self.holes)
        )
        return Grid(self.outline, holes, self.keys, self.others, self.secret, self.note)


def grid_from_points(points: Sequence[Sequence[float]], *, holes: int, row: int) -> Grid:
    """The grid of ``row`` from the ``evidence`` message's ``grid``: every code hole's centre in
    the frame, row by row (``holes`` per row), as the table sends it.

    The outline is then the hole pattern's (its corner holes), and a hole's
    radius a third of the distance between neighbouring holes. The secret
    row is not in it: the table masks it before the frame leaves."""
    pts = [(float(p[0]), float(p[1])) for p in points]
    if holes < 1 or not pts or len(pts) % holes:
        raise EvidenceImageError(f"evidence grid: {len(pts)} points are not rows of {holes} holes")
    rows = len(pts) // holes
    if not 1 <= row <= rows:
        raise EvidenceImageError(f"evidence grid: no row {row} in {rows} rows of {holes} holes")
    first = pts[(row - 1) * holes:row * holes]
    gaps = [float(np.hypot(a[0] - b[0], a[1] - b[1])) for a, b in itertools.pairwise(first)]
    r = (min(gaps) / 3.0) if gaps and min(gaps) > 0 else 6.0
    outline = (pts[0], pts[holes - 1], pts[-1], pts[-holes])
    others = pts[:(row - 1) * holes] + pts[row * holes:]
    return Grid(outline, tuple(GridHole(x, y, r) for x, y in first), others=tuple(GridHole(x, y, r) for x, y in others))


def _decode(jpeg: bytes, what: str) -> NDArray[np.uint8]:
    if not jpeg.startswith(b"\xff\xd8\xff"):
        raise EvidenceImageError(f"{what}: not a JPEG (it must start with FF D8 FF)")
    image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise EvidenceImageError(f"{what}: the JPEG cannot be decoded")
    return np.asarray(image, dtype=np.uint8)


def _bgr(colour: str | None) -> tuple[int, int, int] | None:
    rgb = PEG_RGB.get(colour) if colour is not None else None
    return None if rgb is None else (rgb[2], rgb[1], rgb[0])


def _text(img: NDArray[np.uint8], text: str, at: tuple[int, int], scale: float) -> None:
    font = cv2.FONT_HERSHEY_SIMPLEX
    cv2.putText(img, text, at, font, scale, (0, 0, 0), 3, cv2.LINE_AA)
    cv2.putText(img, text, at, font, scale, (255, 255, 255), 1, cv2.LINE_AA)


def _vertical(holes: Sequence[GridHole]) -> bool:
    """Whether a row's holes run down the frame rather than across it (labels go beside them)."""
    if len(holes) < 2:
        return False
    return abs(holes[-1].y - holes[0].y) > abs(holes[-1].x - holes[0].x)


def _scale(img: NDArray[np.uint8]) -> float:
    return max(0.4, 0.5 * float(img.shape[1]) / 960)


def _fit(img: NDArray[np.uint8]) -> tuple[NDArray[np.uint8], float]:
    """``img`` scaled so that its longest side is :data:`MAX_SIDE` (up at most 2x); the factor."""
    h, w = img.shape[:2]
    s = min(2.0, MAX_SIDE / max(h, w))
    if abs(s - 1.0) > 1e-3:
        how = cv2.INTER_AREA if s < 1.0 else cv2.INTER_CUBIC
        img = np.asarray(cv2.resize(img, (round(w * s), round(h * s)), interpolation=how), np.uint8)
    return img, s


def _crop(img: NDArray[np.uint8], outline: Sequence[Point]) -> tuple[NDArray[np.uint8], float, float]:
    """The board, not the room: ``img`` cropped to the outline with a margin; the crop's origin."""
    xs = [p[0] for p in outline]
    ys = [p[1] for p in outline]
    pad = CROP_MARGIN * max(max(xs) - min(xs), max(ys) - min(ys))
    h, w = img.shape[:2]
    x0, y0 = max(0, int(min(xs) - pad)), max(0, int(min(ys) - pad))
    x1, y1 = min(w, int(max(xs) + pad) + 1), min(h, int(max(ys) + pad) + 1)
    if x1 - x0 < 16 or y1 - y0 < 16:
        return img, 0.0, 0.0
    return np.ascontiguousarray(img[y0:y1, x0:x1]), float(x0), float(y0)


def _box(img: NDArray[np.uint8], pts: NDArray[np.int32], pad: int, colour: tuple[int, int, int],
         thickness: int) -> tuple[int, int, int, int]:
    x0, y0 = (int(v) for v in pts.min(axis=0) - pad)
    x1, y1 = (int(v) for v in pts.max(axis=0) + pad)
    cv2.rectangle(img, (x0, y0), (x1, y1), colour, thickness, cv2.LINE_AA)
    return x0, y0, x1, y1


def draw_grid(
    jpeg: bytes,
    grid: Grid | None,
    *,
    mask_secret: bool = False,
    quality: int = 85,
    what: str = "evidence",
) -> bytes:
    """``jpeg`` with ``grid`` drawn on it, the secret row masked if asked; a JPEG again.

    The frame is cropped to the board (with a margin) and scaled for a page.
    Without a grid (the board was not located on the frame) the whole frame
    is returned with one line saying so; it cannot be masked then, so
    ``mask_secret`` refuses it (:class:`EvidenceImageError`): a frame of a
    running game whose secret row cannot be placed is not shown."""
    img = _decode(jpeg, what)
    if grid is None or len(grid.outline) != 4:
        if mask_secret:
            raise EvidenceImageError(f"{what}: the board was not located, so its secret row cannot be masked")
        img, _ = _fit(img)
        _text(img, "board not located on this frame: no grid drawn", (12, 24), _scale(img))
        return _encode(img, quality, what)
    img, ox, oy = _crop(img, grid.outline)
    img, s = _fit(img)
    scale = _scale(img)

    def at(x: float, y: float) -> tuple[int, int]:
        return round((x - ox) * s), round((y - oy) * s)

    def pts(holes: Sequence[GridHole]) -> NDArray[np.int32]:
        return np.array([at(h.x, h.y) for h in holes], dtype=np.int32)

    cv2.polylines(img, [np.array([at(x, y) for x, y in grid.outline], dtype=np.int32)], True,
                  _OUTLINE_BGR, 2, cv2.LINE_AA)
    for hole in grid.others:
        cv2.circle(img, at(hole.x, hole.y), max(2, round(hole.r * s)), _FAINT_BGR, 1, cv2.LINE_AA)
    for hole in grid.keys:
        cv2.circle(img, at(hole.x, hole.y), max(2, round(hole.r * s)), _OUTLINE_BGR, 1, cv2.LINE_AA)
    if grid.holes and grid.keys:
        pad = max(round(max(h.r for h in grid.holes) * s * 2.2), 5)
        _box(img, pts((*grid.holes, *grid.keys)), pad, _OUTLINE_BGR, 1)
    # Rings, never fills: the peg itself stays visible inside the colour it was read as.
    vertical = _vertical(grid.holes)
    for i, hole in enumerate(grid.holes):
        c, r = at(hole.x, hole.y), max(3, round(hole.r * s))
        ring = _bgr(hole.colour)
        cv2.circle(img, c, r + 4, (0, 0, 0), 1, cv2.LINE_AA)
        cv2.circle(img, c, r + 2, ring if ring is not None else _DOUBT_BGR, 3, cv2.LINE_AA)
        label = str(i + 1) if ring is not None else f"{i + 1}?"
        (tw, th), _ = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
        where = (c[0] - r - 8 - tw, c[1] + th // 2) if vertical else (c[0] - tw // 2, c[1] - r - 8)
        _text(img, label, where, scale)
    if mask_secret and grid.secret:
        pad = max(round(max(h.r for h in grid.secret) * s * 1.6), 4)
        x0, _, _, y1 = _box(img, pts(grid.secret), pad, _MASK_BGR, -1)
        _text(img, "secret", (x0 + 2, y1 - 4), scale * 0.7)
    if grid.note:
        _text(img, grid.note, (12, 24), scale)
    return _encode(img, quality, what)


def _encode(img: NDArray[np.uint8], quality: int, what: str) -> bytes:
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise EvidenceImageError(f"{what}: the drawn frame cannot be encoded as a JPEG")
    return bytes(buf.tobytes())


def data_uri(jpeg: bytes) -> str:
    """A JPEG as a ``data:image/jpeg;base64,...`` URI: an image the page needs no request for."""
    return "data:image/jpeg;base64," + base64.b64encode(jpeg).decode("ascii")
