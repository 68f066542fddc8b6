"""Lens calibration with a ChArUco board, OpenCV's standard way (``pegwatch calibrate-lens``).

A ChArUco board is a chessboard whose white squares hold ArUco markers: the
markers say which chessboard corner is which, so a view that shows only
part of the board still counts, and the chessboard corners are found to a
fraction of a pixel. Photos of the board from a dozen directions give the
camera matrix and the lens distortion (``cv2.calibrateCamera``), returned
as a :class:`~pegwatch.vision.lens.Lens`.

The board is printed with ``pegwatch markers --charuco SHEET`` (A4
landscape, true size, with a 50 mm ruler). Its default dictionary,
DICT_5X5_100, shares no marker with the tables' DICT_4X4_50 markers.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.vision.lens import Lens, LensError
from pegwatch.vision.markers import (
    MM_PER_INCH,
    MarkerError,
    get_dictionary,
    printable_path,
    save_page,
)

logger = logging.getLogger(__name__)

#: Fewest views of the board a calibration is made from: each view gives
#: the pose (6 unknowns) and constrains the lens (9); a dozen is usual.
MIN_VIEWS = 5
#: Fewest chessboard corners a view must show to count (and not all on one line).
MIN_CORNERS = 6


@dataclass(frozen=True)
class CharucoSpec:
    """The printed ChArUco board: squares across and down, their sides and the dictionary."""

    squares: tuple[int, int] = (7, 5)
    square_mm: float = 30.0
    marker_mm: float = 22.0
    dictionary: str = "DICT_5X5_100"

    def __post_init__(self) -> None:
        sx, sy = self.squares
        if not (3 <= sx <= 30 and 3 <= sy <= 30):
            raise LensError(f"ChArUco board of {sx}x{sy} squares: each side needs 3..30")
        if not (3.0 <= self.square_mm <= 200.0):
            raise LensError(f"ChArUco square of {self.square_mm:g} mm is not in 3..200 mm")
        if not (0.3 * self.square_mm <= self.marker_mm <= 0.9 * self.square_mm):
            raise LensError(
                f"ChArUco marker of {self.marker_mm:g} mm must be 30..90 % of its {self.square_mm:g} mm square"
            )
        try:
            count = int(get_dictionary(self.dictionary).bytesList.shape[0])
        except MarkerError as exc:
            raise LensError(f"ChArUco board: {exc}") from None
        if count < (sx * sy) // 2:
            raise LensError(f"{self.dictionary} has {count} markers; a {sx}x{sy} ChArUco board needs {(sx * sy) // 2}")

    @classmethod
    def parse(cls, squares: str, square_mm: float, marker_mm: float, dictionary: str) -> CharucoSpec:
        """From the command line's ``7x5`` form."""
        a, sep, b = squares.lower().partition("x")
        if not sep or not a.strip().isdigit() or not b.strip().isdigit():
            raise LensError(f"--squares {squares!r} is not COLUMNSxROWS, e.g. 7x5")
        return cls((int(a), int(b)), float(square_mm), float(marker_mm), dictionary)

    def describe(self) -> str:
        sx, sy = self.squares
        return f"{sx}x{sy} squares of {self.square_mm:g} mm, {self.marker_mm:g} mm {self.dictionary} markers"


def _board(spec: CharucoSpec) -> Any:
    aruco = cv2.aruco
    if not hasattr(aruco, "CharucoDetector"):  # pragma: no cover - OpenCV < 4.7
        raise LensError(f"lens calibration needs OpenCV 4.7 or newer (this is {cv2.__version__})")
    return aruco.CharucoBoard(spec.squares, spec.square_mm, spec.marker_mm, get_dictionary(spec.dictionary))


def find_corners(image: NDArray[np.uint8], spec: CharucoSpec) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """The board's chessboard corners in one view: (board mm N×3, image px N×2), or None when too few."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    board = _board(spec)
    detector = cv2.aruco.CharucoDetector(board)
    corners, ids, _mc, _mi = detector.detectBoard(gray)
    if ids is None or corners is None or len(ids) < MIN_CORNERS:
        return None
    obj, img = board.matchImagePoints(corners, ids)
    if obj is None or len(obj) < MIN_CORNERS:
        return None
    obj = np.asarray(obj, dtype=np.float64).reshape(-1, 3)
    spread = np.linalg.svd(obj[:, :2] - obj[:, :2].mean(axis=0), compute_uv=False)
    if spread[-1] < 0.5 * spec.square_mm:  # corners on one line say nothing of the lens
        return None
    return obj, np.asarray(img, dtype=np.float64).reshape(-1, 2)


def calibrate_lens(
    frames: Iterable[NDArray[np.uint8]],
    spec: CharucoSpec = CharucoSpec(),
    *,
    names: Sequence[str] | None = None,
) -> Lens:
    """The lens from views of a ChArUco board; :class:`LensError` when too few views show it.

    Distortion is OpenCV's k1, k2, p1, p2 with k3 held at 0: a dozen views
    do not pin down a sixth-order term, and the table's lenses are not
    fisheyes.
    """
    obj_pts: list[NDArray[np.float32]] = []
    img_pts: list[NDArray[np.float32]] = []
    size: tuple[int, int] | None = None
    seen = 0
    for k, frame in enumerate(frames):
        seen += 1
        name = names[k] if names is not None and k < len(names) else f"view {k + 1}"
        here = (int(frame.shape[1]), int(frame.shape[0]))
        if size is None:
            size = here
        elif here != size:
            raise LensError(f"{name}: {here[0]}x{here[1]} px, but the first view is {size[0]}x{size[1]}: one camera mode only")
        got = find_corners(frame, spec)
        if got is None:
            logger.info("%s: the ChArUco board is not seen well enough (fewer than %d corners)", name, MIN_CORNERS)
            continue
        obj_pts.append(got[0].astype(np.float32))
        img_pts.append(got[1].astype(np.float32).reshape(-1, 1, 2))
    if size is None:
        raise LensError("no views of the ChArUco board were given")
    if len(obj_pts) < MIN_VIEWS:
        raise LensError(
            f"only {len(obj_pts)} of {seen} views show the ChArUco board ({spec.describe()}) with "
            f"{MIN_CORNERS} corners or more; at least {MIN_VIEWS} are needed: take more photos, "
            "the board filling much of the frame from different angles"
        )
    flags = cv2.CALIB_FIX_K3
    rms, k_raw, dist, _rv, _tv = cv2.calibrateCamera(
        obj_pts, img_pts, size, np.eye(3), np.zeros(5), flags=flags  # the starting values are ignored without a guess flag
    )
    km = np.asarray(k_raw, dtype=np.float64)
    km[1, 0] = km[2, 0] = km[2, 1] = 0.0
    km[2, 2] = 1.0
    d = np.asarray(dist, dtype=np.float64).ravel()[:5]
    if not np.all(np.isfinite(km)) or not np.all(np.isfinite(d)) or km[0, 0] <= 0 or km[1, 1] <= 0:
        raise LensError("the lens calibration did not converge; take views from more varied angles")
    return Lens(km, d, size, float(rms), len(obj_pts))


# --- the printable board -------------------------------------------------------

A4_LANDSCAPE_MM = (297.0, 210.0)


def render_charuco_sheet(spec: CharucoSpec = CharucoSpec(), *, dpi: int = 300) -> Any:
    """A Pillow image of the ChArUco board at true size on A4 landscape, with a 50 mm ruler."""
    from PIL import Image, ImageDraw, ImageFont

    if not 72 <= dpi <= 1200:
        raise LensError(f"--dpi {dpi} is not in 72..1200")

    def px(mm: float) -> int:
        return round(mm / MM_PER_INCH * dpi)

    sx, sy = spec.squares
    w_mm, h_mm = sx * spec.square_mm, sy * spec.square_mm
    page_w, page_h = A4_LANDSCAPE_MM
    margin = 12.0
    if w_mm > page_w - 2 * margin or h_mm > page_h - 2 * margin - 16.0:
        raise LensError(f"a ChArUco board of {w_mm:g}x{h_mm:g} mm does not fit on an A4 page; use smaller squares")
    page = Image.new("L", (px(page_w), px(page_h)), 255)
    board = np.asarray(_board(spec).generateImage((px(w_mm), px(h_mm)), marginSize=0, borderBits=1), dtype=np.uint8)
    page.paste(Image.fromarray(board), (px(margin), px(margin)))
    draw = ImageDraw.Draw(page)
    try:
        font: Any = ImageFont.load_default(size=max(10, px(3.5)))
    except TypeError:  # pragma: no cover - Pillow < 10.1
        font = ImageFont.load_default()
    y = margin + h_mm + 3.0
    draw.text((px(margin), px(y)), f"pegwatch ChArUco board: {spec.describe()}. Print at 100 %, glue flat.", fill=0, font=font)
    ry = page_h - margin - 6.0
    draw.rectangle([px(margin), px(ry), px(margin + 50.0), px(ry + 0.6)], fill=0)
    for k in range(6):
        tx = margin + 10.0 * k
        draw.rectangle([px(tx), px(ry - 3.0), px(tx + 0.3), px(ry + 0.6)], fill=0)
    draw.text((px(margin + 55.0), px(ry - 3.0)), "50 mm: measure to check the print scale", fill=0, font=font)
    page.info["dpi"] = (dpi, dpi)
    return page


def write_charuco_sheet(path: str | Path, spec: CharucoSpec = CharucoSpec(), *, dpi: int = 300) -> Path:
    """Write the ChArUco board as PNG (with its DPI) or PDF, at true size."""
    out = printable_path(path, "the ChArUco sheet", LensError)
    save_page(render_charuco_sheet(spec, dpi=dpi), out, dpi=dpi)
    logger.info("wrote ChArUco sheet %s at %d dpi", out, dpi)
    return out
