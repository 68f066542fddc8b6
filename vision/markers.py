"""ArUco fiducial markers: drawing, detecting, and the printable sheet.

OpenCV changed the ArUco API in 4.7 (``ArucoDetector``,
``generateImageMarker``); Raspberry Pi OS Bookworm ships 4.6 with the older
functional API (``Dictionary_get``, ``detectMarkers``, ``drawMarker``). Both
are supported by feature detection, never by version parsing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import BadInput
from pegwatch.vision.profile import BoardProfile, Marker

logger = logging.getLogger(__name__)

MM_PER_INCH = 25.4
QUIET_ZONE_MODULES = 1
"""White border around each marker, in marker modules (bits)."""


class MarkerError(BadInput):
    """A marker dictionary, id or sheet request is invalid."""


@dataclass(frozen=True)
class DetectedMarker:
    """One marker found in an image: its id and four corners in image px (TL, TR, BR, BL).

    ``sure`` is False for a candidate: read with every correctable bit
    corrected, or module by module from a rejected outline."""

    id: int
    corners: NDArray[np.float32]
    sure: bool = True


def _aruco() -> Any:
    aruco = getattr(cv2, "aruco", None)
    if aruco is None:  # pragma: no cover - every supported build has it
        raise MarkerError("this OpenCV build has no cv2.aruco module")
    return aruco


@lru_cache(maxsize=16)
def get_dictionary(name: str) -> Any:
    """The OpenCV ArUco dictionary called ``name`` (e.g. ``"DICT_4X4_50"``)."""
    aruco = _aruco()
    code = getattr(aruco, name, None)
    if not name.startswith("DICT_") or not isinstance(code, int):
        raise MarkerError(f"unknown ArUco dictionary {name!r} (e.g. DICT_4X4_50)")
    if hasattr(aruco, "getPredefinedDictionary"):
        return aruco.getPredefinedDictionary(code)
    return aruco.Dictionary_get(code)  # pragma: no cover - OpenCV < 4.7


def dictionary_info(name: str) -> tuple[int, int]:
    """(bits per side, number of markers) of dictionary ``name``."""
    d = get_dictionary(name)
    return int(d.markerSize), int(d.bytesList.shape[0])


@lru_cache(maxsize=128)
def _marker_bits(name: str, marker_id: int) -> NDArray[np.uint8]:
    bits, count = dictionary_info(name)
    if not 0 <= marker_id < count:
        raise MarkerError(f"marker id {marker_id} is not in 0..{count - 1} of {name}")
    d = get_dictionary(name)
    side = bits + 2  # the black border is one module on each side
    aruco = _aruco()
    if hasattr(aruco, "generateImageMarker"):
        img = aruco.generateImageMarker(d, marker_id, side)
    else:  # pragma: no cover - OpenCV < 4.7
        img = aruco.drawMarker(d, marker_id, side)
    out: NDArray[np.uint8] = np.asarray(img, dtype=np.uint8)
    return out


def marker_image(name: str, marker_id: int, side_px: int, *, quiet_zone: bool = False) -> NDArray[np.uint8]:
    """A crisp grey image of the marker, ``side_px`` wide for the black square.

    With ``quiet_zone`` a white border of :data:`QUIET_ZONE_MODULES` modules is
    added around it (the image is then larger than ``side_px``).
    """
    bits = _marker_bits(name, marker_id)
    img = cv2.resize(bits, (side_px, side_px), interpolation=cv2.INTER_NEAREST)
    if quiet_zone:
        pad = max(1, round(side_px * QUIET_ZONE_MODULES / bits.shape[0]))
        img = cv2.copyMakeBorder(img, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=255)
    return np.asarray(img, dtype=np.uint8)


#: Detector settings: "steady" is the every-frame pass, "retry" the pass a
#: frame gets when the first one found too few markers (see
#: :class:`~pegwatch.vision.localise.MarkerLocaliser`).
DETECTOR_KINDS = ("steady", "retry", "lenient", "soft")


#: The steady detector's largest adaptive-threshold window (px): a marker
#: needs this much of its surroundings in view to be thresholded as it is.
STEADY_THRESHOLD_WINDOW_PX = 17


@lru_cache(maxsize=16)
def _detector(name: str, kind: str = "steady") -> Any:
    aruco = _aruco()
    d = get_dictionary(name)
    modern = hasattr(aruco, "ArucoDetector")
    params = aruco.DetectorParameters() if modern else aruco.DetectorParameters_create()
    params.cornerRefinementMethod = aruco.CORNER_REFINE_SUBPIX
    if kind == "steady":
        # Two threshold windows instead of three: markers here are 20-60 px
        # wide; on rendered hard photos this finds every visible marker in
        # three quarters of the time.
        params.adaptiveThreshWinSizeMin = 7
        params.adaptiveThreshWinSizeMax = STEADY_THRESHOLD_WINDOW_PX
        params.adaptiveThreshWinSizeStep = STEADY_THRESHOLD_WINDOW_PX - 7
    elif kind == "retry":
        # Every window from 3 to 23 px in steps of 4: a small or blurred
        # marker's border survives only some of them. A blurred corner is
        # round, so its outline is allowed to stray further from a square
        # (7 % of the perimeter instead of 3 %). The error correction stays
        # OpenCV's: more of it makes ids up out of the table's grain.
        params.adaptiveThreshWinSizeMin = 3
        params.adaptiveThreshWinSizeMax = 23
        params.adaptiveThreshWinSizeStep = 4
        params.polygonalApproxAccuracyRate = 0.07
        params.cornerRefinementWinSize = 3
    elif kind == "lenient":
        # The last pass, for a marker blur or JPEG has cost a few bits: every
        # correctable bit is corrected. Such an id is only a candidate; the
        # localiser keeps it only where the markers it found surely say a
        # marker of that id stands (see pegwatch.vision.localise.marker_plane.confirmed_by).
        params.errorCorrectionRate = 1.0
    else:
        raise MarkerError(f"detector kind {kind!r} is not one of {', '.join(DETECTOR_KINDS)}")
    if modern:
        return aruco.ArucoDetector(d, params)
    return (d, params)  # pragma: no cover - OpenCV < 4.7


def equalise(gray: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """Local contrast equalisation (CLAHE): a marker in shade or under glare
    gets its black and white apart again before thresholding."""
    clahe = cv2.createCLAHE(clipLimit=3.0, tileGridSize=(8, 8))
    return np.asarray(clahe.apply(gray), dtype=np.uint8)


def sharpen(gray: NDArray[np.uint8], *, sigma_px: float = 3.0, amount: float = 2.0) -> NDArray[np.uint8]:
    """Unsharp masking: a marker blurred by defocus or a shaking camera gets its
    edges and bits steep again (a blur of a few pixels leaves every bit
    there, only too soft for the detector's thresholds)."""
    soft = cv2.GaussianBlur(gray, (0, 0), sigma_px).astype(np.float32)
    out = gray.astype(np.float32) * (1.0 + amount) - amount * soft
    return np.asarray(np.clip(out, 0, 255), dtype=np.uint8)


def sharpen_fine(gray: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """:func:`sharpen` at 1.5 px: the bits of a marker under 1.5-2 px of
    defocus, which the coarser mask blurs over, come back."""
    return sharpen(gray, sigma_px=1.5, amount=3.0)


def detect_markers(image: NDArray[np.uint8], dictionary: str, *, kind: str = "steady") -> list[DetectedMarker]:
    """Find markers of ``dictionary`` in a BGR or grey image, with sub-pixel corners.

    ``kind`` picks the detector's settings (:data:`DETECTOR_KINDS`)."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    # "soft" reads the retry's rejected candidates again (:func:`_decode_soft`).
    det = _detector(dictionary, "retry" if kind == "soft" else kind)
    if isinstance(det, tuple):  # pragma: no cover - OpenCV < 4.7
        corners, ids, rejected = _aruco().detectMarkers(gray, det[0], parameters=det[1])
    else:
        corners, ids, rejected = det.detectMarkers(gray)
    if kind == "soft":
        return _decode_soft(np.asarray(gray, dtype=np.uint8), rejected, dictionary)
    if ids is None:
        return []
    found = [
        DetectedMarker(int(i), np.asarray(c, dtype=np.float32).reshape(4, 2), sure=kind != "lenient")
        for i, c in zip(ids.ravel(), corners, strict=True)
    ]
    return found


#: Pixels per module when a candidate is read again by :func:`_decode_soft`.
_SOFT_CELL_PX = 8


def _decode_soft(gray: NDArray[np.uint8], quads: Any, dictionary: str) -> list[DetectedMarker]:
    """The detector's rejected quadrilaterals read again, module by module.

    A blurred marker keeps every bit, only soft: OpenCV's decoding (Otsu
    over each cell's whole area) loses it, while each module's centre still
    says black or white against the midpoint of the marker's own darkest and
    brightest modules. Only an exact code counts (every border module dark,
    every bit matching one id); such an id is still only a candidate, which
    the localiser keeps only where the markers it surely found put it.
    """
    bits, count = dictionary_info(dictionary)
    side = bits + 2
    cell = _SOFT_CELL_PX
    codes = np.stack([(_marker_bits(dictionary, m)[1:-1, 1:-1] > 127) for m in range(count)])
    dst = np.array([[0, 0], [side * cell, 0], [side * cell, side * cell], [0, side * cell]], dtype=np.float32)
    found: list[DetectedMarker] = []
    for q in () if quads is None else quads:
        quad = np.asarray(q, dtype=np.float32).reshape(4, 2)
        if float(np.min(np.linalg.norm(np.roll(quad, 1, axis=0) - quad, axis=1))) < 2 * side:
            continue  # under two pixels a module: nothing to read
        warp = cv2.getPerspectiveTransform(quad, dst)
        top = cv2.warpPerspective(gray, warp, (side * cell, side * cell), flags=cv2.INTER_LINEAR)
        c = cell // 4
        modules = top.reshape(side, cell, side, cell)[:, c : cell - c, :, c : cell - c].mean(axis=(1, 3))
        lo, hi = float(np.percentile(modules, 10)), float(np.percentile(modules, 90))
        if hi - lo < 20:
            continue
        white = modules > (lo + hi) / 2
        if white[0].any() or white[-1].any() or white[:, 0].any() or white[:, -1].any():
            continue
        inner = white[1:-1, 1:-1]
        for turn in range(4):
            match = np.flatnonzero((codes == np.rot90(inner, -turn)[None]).all(axis=(1, 2)))
            if len(match) == 1:
                found.append(DetectedMarker(int(match[0]), np.roll(quad, turn, axis=0), sure=False))
                break
    return found


def profile_marker_points(
    profile: BoardProfile, found: list[DetectedMarker]
) -> tuple[NDArray[np.float64], NDArray[np.float64], tuple[int, ...]]:
    """Match detected markers to the profile's: (image px N×2, board mm N×2, ids used).

    A marker id that appears twice is ambiguous (a stray printout on the
    table) and is dropped rather than guessed at.
    """
    by_id: dict[int, Marker] = {m.id: m for m in profile.markers}
    counts: dict[int, int] = {}
    for f in found:
        counts[f.id] = counts.get(f.id, 0) + 1
    img: list[NDArray[np.float32]] = []
    board: list[tuple[float, float]] = []
    used: list[int] = []
    # In id order, points and ids alike: the caller pairs the k-th marker's
    # four corners with the k-th id.
    for f in sorted(found, key=lambda d: d.id):
        m = by_id.get(f.id)
        if m is None or counts[f.id] != 1:
            continue
        img.append(f.corners)
        board.extend(m.corners_mm())
        used.append(f.id)
    if not img:
        return np.zeros((0, 2)), np.zeros((0, 2)), ()
    return (
        np.concatenate(img).astype(np.float64),
        np.asarray(board, dtype=np.float64),
        tuple(used),
    )


# --- the printable sheet ---------------------------------------------------

A4_MM = (210.0, 297.0)


def render_sheet(profile: BoardProfile, *, dpi: int = 300, page_mm: tuple[float, float] = A4_MM) -> Any:
    """A Pillow image of the profile's markers at true size, with a 50 mm check ruler.

    The markers are laid out in a grid on the page (cut them out and stick
    them where the profile's ``centre_mm`` says); each is labelled with its id
    and where it goes.
    """
    from PIL import Image, ImageDraw, ImageFont

    if not 72 <= dpi <= 1200:
        raise MarkerError(f"--dpi {dpi} is not in 72..1200")

    def px(mm: float) -> int:
        return round(mm / MM_PER_INCH * dpi)

    # Faults of the profile name its file (or its name when made in code) and key.
    where = profile.source or profile.name
    if not profile.markers:
        raise MarkerError(f"{where}: markers: board profile {profile.name} has no markers")
    try:
        get_dictionary(profile.aruco_dictionary)
    except MarkerError as exc:
        raise MarkerError(f"{where}: aruco_dictionary: {exc}") from None
    for i, m in enumerate(profile.markers):
        try:
            _marker_bits(profile.aruco_dictionary, m.id)
        except MarkerError as exc:
            raise MarkerError(f"{where}: markers[{i}].id: {exc}") from None
        if px(m.size_mm) < 8:
            raise MarkerError(
                f"{where}: markers[{i}].size_mm: {m.size_mm:g} mm is too small to print at {dpi} dpi"
            )

    page = Image.new("L", (px(page_mm[0]), px(page_mm[1])), 255)
    draw = ImageDraw.Draw(page)
    try:
        font: Any = ImageFont.load_default(size=max(10, px(3.5)))
    except TypeError:  # pragma: no cover - Pillow < 10.1
        font = ImageFont.load_default()

    margin = 15.0
    x, y = margin, margin + 12.0
    draw.text((px(margin), px(margin)), f"pegwatch markers for {profile.name} ({profile.aruco_dictionary})", fill=0, font=font)
    draw.text(
        (px(margin), px(margin + 5)),
        "Print at 100 % (no 'fit to page'); check the ruler measures 50 mm.",
        fill=0,
        font=font,
    )
    row_h = 0.0
    for m in profile.markers:
        bits = _marker_bits(profile.aruco_dictionary, m.id).shape[0]
        quiet = m.size_mm * QUIET_ZONE_MODULES / bits
        cell = m.size_mm + 2 * quiet
        if x + cell > page_mm[0] - margin:
            x = margin
            y += row_h + 16.0
            row_h = 0.0
        if y + cell + 10 > page_mm[1] - margin - 20:
            raise MarkerError(f"{where}: markers: the markers of {profile.name} do not fit on one page")
        img = marker_image(profile.aruco_dictionary, m.id, px(m.size_mm))
        page.paste(Image.fromarray(img), (px(x + quiet), px(y + quiet)))
        # A thin cutting outline around the quiet zone.
        draw.rectangle([px(x), px(y), px(x + cell), px(y + cell)], outline=160, width=1)
        draw.text((px(x), px(y + cell + 1.5)), f"id {m.id}, {m.size_mm:g} mm, {_where(profile, m)}", fill=0, font=font)
        draw.text(
            (px(x), px(y + cell + 6.0)), f"centre at ({m.centre_mm[0]:g}, {m.centre_mm[1]:g}) mm", fill=0, font=font
        )
        x += max(cell, 45.0) + 12.0
        row_h = max(row_h, cell)

    # The 50 mm check ruler, with a tick every 10 mm.
    rx, ry = margin, page_mm[1] - margin - 10.0
    draw.rectangle([px(rx), px(ry), px(rx + 50.0), px(ry + 0.6)], fill=0)
    for k in range(6):
        tx = rx + 10.0 * k
        draw.rectangle([px(tx), px(ry - 3.0), px(tx + 0.3), px(ry + 0.6)], fill=0)
    draw.text((px(rx), px(ry + 2.0)), "50 mm: measure to check the print scale", fill=0, font=font)
    page.info["dpi"] = (dpi, dpi)
    return page


def _where(profile: BoardProfile, m: Marker) -> str:
    """Which corner or side of the board a marker sits by, in words."""
    w, h = profile.size_mm
    x, y = m.centre_mm
    horiz = "left" if x < w / 3 else "right" if x > 2 * w / 3 else ""
    vert = "top" if y < h / 3 else "bottom" if y > 2 * h / 3 else ""
    return f"{vert} {horiz}".strip() or "middle"


def printable_path(path: str | Path, what: str, error: type[BadInput]) -> Path:
    """``path`` for a printed page (``what``, e.g. "the sheet"): a .png or .pdf
    file, refused with ``error`` before the page is drawn."""
    out = Path(path)
    if out.suffix.lower() not in (".png", ".pdf"):
        raise error(f"{out}: {what} must be a .png or .pdf file")
    return out


def save_page(page: Any, out: Path, *, dpi: int) -> None:
    """Save a Pillow page at true size: a PDF at ``dpi``, or a PNG carrying its DPI."""
    if out.suffix.lower() == ".pdf":
        page.convert("RGB").save(out, "PDF", resolution=float(dpi))
    else:
        page.save(out, "PNG", dpi=(dpi, dpi))


def write_sheet(profile: BoardProfile, path: str | Path, *, dpi: int = 300) -> Path:
    """Write the marker sheet as PNG (with DPI metadata) or PDF, at true size."""
    out = printable_path(path, "the sheet", MarkerError)
    save_page(render_sheet(profile, dpi=dpi), out, dpi=dpi)
    logger.info("wrote marker sheet %s at %d dpi", out, dpi)
    return out
