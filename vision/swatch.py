"""The swatch card: a printed mat that teaches a table its peg colours, one peg per labelled circle.

``pegwatch markers --swatch-card`` prints it: four ArUco markers of the
board's dictionary (ids the board does not use) at its corners, and a
labelled circle, the size of a peg head, for every palette colour and for
the two key colours. Each circle is outlined in the colour's nominal shade
(a guide for the eye only) around a small black dot. The arbiter puts one
peg of each colour on its circle and photographs the card lying beside the
board, with the table's own camera and light.

:func:`read_card` finds the card by its markers and the board by the
table's calibration (the board's plastic is the light reference every
reading is normalised to, so the card's samples are scaled by the same
gain), and samples each circle as the reader samples a hole: the inner
disc and the ring, trimmed of glare. A circle whose dot still shows has no
peg on it and teaches nothing; paper or ink is never learned as a peg.
The samples go to :func:`pegwatch.vision.calibrate.calibrate` as
``extra_code`` / ``extra_keys`` on top of an existing calibration.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import BadInput
from pegwatch.vision.calibration import Calibration
from pegwatch.vision.colour import linear_bgr_to_lab, srgb_to_linear
from pegwatch.vision.markers import (
    MM_PER_INCH,
    detect_markers,
    dictionary_info,
    marker_image,
    printable_path,
    save_page,
)
from pegwatch.vision.palette import nominal_bgr
from pegwatch.vision.profile import BoardProfile, Marker
from pegwatch.vision.sampler import (
    CODE_DISC_FRACTION,
    DARK_FRACTION,
    KEY_DISC_FRACTION,
    KEY_WINDOW_FRACTION,
    RANK_HIGH,
    RANK_LOW,
    RING_FRACTIONS,
    BoardSampler,
)

logger = logging.getLogger(__name__)

CARD_MM = (180.0, 120.0)
"""The card's size (it fits an A4 or Letter page)."""
CARD_MARKER_MM = 16.0
#: The black dot at each circle's centre (its radius, times the circle's): a peg on the circle hides it.
DOT_FRACTION = 0.25


class SwatchError(BadInput):
    """The swatch card cannot be made or read; the message says why."""


@dataclass(frozen=True)
class Swatch:
    """One circle of the card: the colour name, code or key, where (card mm) and how wide."""

    name: str
    kind: str
    centre_mm: tuple[float, float]
    diameter_mm: float


@dataclass(frozen=True)
class SwatchCard:
    """The card's layout for one board profile."""

    profile: str
    dictionary: str
    size_mm: tuple[float, float]
    markers: tuple[Marker, ...]
    swatches: tuple[Swatch, ...]


@dataclass(frozen=True)
class SwatchSamples:
    """What a photo of the card taught: normalised features by colour, and the circles left bare."""

    code: dict[str, NDArray[np.float64]] = field(default_factory=dict)
    keys: dict[str, NDArray[np.float64]] = field(default_factory=dict)
    bare: tuple[str, ...] = ()


def card_for(profile: BoardProfile) -> SwatchCard:
    """The card of ``profile``: every palette colour, then the right-place and right-colour keys."""
    count = dictionary_info(profile.aruco_dictionary)[1]
    used = {m.id for m in profile.markers}
    free = [i for i in range(count - 1, -1, -1) if i not in used][:4]
    if len(free) < 4:
        raise SwatchError(f"{profile.aruco_dictionary} has no four marker ids the board does not use")
    w, h = CARD_MM
    c = 4.0 + CARD_MARKER_MM / 2
    corners = ((c, c), (w - c, c), (w - c, h - c), (c, h - c))
    markers = tuple(Marker(i, xy, CARD_MARKER_MM) for i, xy in zip(sorted(free), corners, strict=True))
    names: list[tuple[str, str, float]] = [(n, "code", profile.code_hole_diameter_mm) for n in profile.palette]
    names += [(n, "key", profile.key_hole_diameter_mm) for n in (profile.right_place_key, profile.right_colour_key)]
    pitch = max(22.0, 2.2 * profile.code_hole_diameter_mm)
    per_row = int((w - 2 * (c + CARD_MARKER_MM / 2)) // pitch)
    x0 = (w - (per_row - 1) * pitch) / 2
    rows = math.ceil(len(names) / per_row)
    y0 = h / 2 - (rows - 1) * pitch / 2
    swatches = tuple(
        Swatch(n, kind, (x0 + (i % per_row) * pitch, y0 + (i // per_row) * pitch), d)
        for i, (n, kind, d) in enumerate(names)
    )
    if y0 + (rows - 1) * pitch + pitch / 2 > h - 4:
        raise SwatchError(f"{profile.name}: {len(names)} colours do not fit on one swatch card")
    return SwatchCard(profile.name, profile.aruco_dictionary, CARD_MM, markers, swatches)


def render_card(profile: BoardProfile, *, dpi: int = 300) -> Any:
    """A Pillow RGB image of the card at true size."""
    from PIL import Image, ImageDraw, ImageFont

    if not 72 <= dpi <= 1200:
        raise SwatchError(f"--dpi {dpi} is not in 72..1200")
    card = card_for(profile)

    def px(mm: float) -> int:
        return round(mm / MM_PER_INCH * dpi)

    page = Image.new("RGB", (px(card.size_mm[0]), px(card.size_mm[1])), (255, 255, 255))
    draw = ImageDraw.Draw(page)
    try:
        font: Any = ImageFont.load_default(size=max(10, px(3.0)))
    except TypeError:  # pragma: no cover - Pillow < 10.1
        font = ImageFont.load_default()
    for m in card.markers:
        img = marker_image(card.dictionary, m.id, px(m.size_mm))
        x, y = m.corners_mm()[0]
        page.paste(Image.fromarray(img).convert("RGB"), (px(x), px(y)))
    draw.rectangle([0, 0, page.width - 1, page.height - 1], outline=(170, 170, 170), width=1)
    draw.text((px(28), px(5)), f"pegwatch swatch card for {profile.name}: one peg of each colour on its circle", fill=0, font=font)
    draw.text((px(28), px(10)), "then photograph the card beside the board with the table's camera", fill=0, font=font)
    for s in card.swatches:
        cx, cy = s.centre_mm
        r = s.diameter_mm / 2
        b, g, rr = nominal_bgr(s.name)
        draw.ellipse([px(cx - r), px(cy - r), px(cx + r), px(cy + r)], outline=(rr, g, b), width=max(2, px(0.8)))
        dot = DOT_FRACTION * r
        draw.ellipse([px(cx - dot), px(cy - dot), px(cx + dot), px(cy + dot)], fill=(0, 0, 0))
        label = s.name + (" key" if s.kind == "key" else "")
        draw.text((px(cx - r), px(cy + r + 1.5)), label, fill=0, font=font)
    page.info["dpi"] = (dpi, dpi)
    return page


def write_card(profile: BoardProfile, path: str | Path, *, dpi: int = 300) -> Path:
    """Write the card as PNG (with its DPI) or PDF, at true size."""
    out = printable_path(path, "the swatch card", SwatchError)
    page = render_card(profile, dpi=dpi)
    try:
        save_page(page, out, dpi=dpi)
    except OSError as exc:
        raise SwatchError(f"{out}: cannot write the swatch card ({exc})") from None
    return out


def locate_card(frame: NDArray[np.uint8], card: SwatchCard) -> NDArray[np.float64] | None:
    """Card mm -> image px from the card's markers (None when fewer than two are seen)."""
    by_id = {m.id: m for m in card.markers}
    img: list[NDArray[np.float32]] = []
    mm: list[tuple[float, float]] = []
    for f in detect_markers(frame, card.dictionary):
        m = by_id.get(f.id)
        if m is not None:
            img.append(f.corners)
            mm.extend(m.corners_mm())
    if len(img) < 2:
        return None
    h, _ = cv2.findHomography(np.array(mm, dtype=np.float64), np.concatenate(img).astype(np.float64), 0)
    return None if h is None else np.asarray(h, dtype=np.float64)


def read_card(frame: NDArray[np.uint8], profile: BoardProfile, calibration: Calibration, *, name: str = "the photo") -> SwatchSamples:
    """Sample every circle of the card in ``frame``, normalised like the board's holes."""
    card = card_for(profile)
    card_to_img = locate_card(frame, card)
    if card_to_img is None:
        raise SwatchError(f"{name}: the swatch card's markers ({', '.join(str(m.id) for m in card.markers)}) are not in view")
    loc = calibration.localiser(profile).locate(frame)
    if not loc.ok or loc.image_to_board is None:
        raise SwatchError(
            f"{name}: the board is not found ({loc.problem or 'no board'}); photograph the card beside the board: "
            "its plastic is the light reference"
        )
    seen = BoardSampler(profile, calibration.px_per_mm).features_from_frame(frame, loc.image_to_board, None, warp=loc.warp)
    gain = np.asarray(calibration.plastic_linear) / np.maximum(seen.plastic_linear, 1e-6)
    plastic_y = float(np.asarray(calibration.plastic_linear) @ (0.0722, 0.7152, 0.2126))
    ppm = _px_per_mm(card_to_img, card)
    code: dict[str, list[NDArray[np.float64]]] = {}
    keys: dict[str, list[NDArray[np.float64]]] = {}
    bare: list[str] = []
    for s in card.swatches:
        r = s.diameter_mm / 2
        disc_r = r * (KEY_DISC_FRACTION if s.kind == "key" else CODE_DISC_FRACTION)
        if not _covered(frame, card_to_img, s.centre_mm, DOT_FRACTION * r, disc_r, ppm):
            bare.append(s.name + (" key" if s.kind == "key" else ""))
            continue
        disc = _trimmed(frame, card_to_img, s.centre_mm, 0.0, disc_r, ppm) * gain
        ring = _trimmed(frame, card_to_img, s.centre_mm, RING_FRACTIONS[0] * r, RING_FRACTIONS[1] * r, ppm) * gain
        lab = np.concatenate([linear_bgr_to_lab(disc), linear_bgr_to_lab(ring)])
        if s.kind == "code":
            code.setdefault(s.name, []).append(lab)
        else:
            # A dark key head darkens its whole window on the board; a light one only the hole.
            dark = 1 / KEY_WINDOW_FRACTION**2 if float(disc @ (0.0722, 0.7152, 0.2126)) < DARK_FRACTION * plastic_y else 0.0
            keys.setdefault(s.name, []).append(np.append(lab, dark))
    if bare:
        logger.warning("%s: no peg on the swatch circle(s) of %s; those colours are not learned from it", name, ", ".join(bare))
    return SwatchSamples(
        {k: np.array(v) for k, v in code.items()}, {k: np.array(v) for k, v in keys.items()}, tuple(bare)
    )


def _px_per_mm(card_to_img: NDArray[np.float64], card: SwatchCard) -> float:
    pts = _project(card_to_img, np.array([[0.0, 0.0], [card.size_mm[0], 0.0], [0.0, card.size_mm[1]]]))
    return float(min(np.linalg.norm(pts[1] - pts[0]) / card.size_mm[0], np.linalg.norm(pts[2] - pts[0]) / card.size_mm[1]))


def _project(h: NDArray[np.float64], mm: NDArray[np.float64]) -> NDArray[np.float64]:
    q = np.c_[mm, np.ones(len(mm))] @ h.T
    out: NDArray[np.float64] = q[:, :2] / q[:, 2:]
    return out


def _pixels(frame: NDArray[np.uint8], h: NDArray[np.float64], centre: Sequence[float], r0: float, r1: float, ppm: float) -> NDArray[np.uint8]:
    """The frame's pixels between radii ``r0`` and ``r1`` (mm) around ``centre`` (card mm)."""
    step = 0.5 / max(ppm, 1e-3)  # two samples per pixel
    ax = np.arange(-r1, r1 + step, step)
    xx, yy = np.meshgrid(ax, ax)
    d = np.hypot(xx, yy)
    keep = (d >= r0) & (d <= r1)
    mm = np.c_[xx[keep] + centre[0], yy[keep] + centre[1]]
    px = np.rint(_project(h, mm)).astype(np.intp)
    hgt, wid = frame.shape[:2]
    inside = (px[:, 0] >= 0) & (px[:, 0] < wid) & (px[:, 1] >= 0) & (px[:, 1] < hgt)
    if not inside.any():
        raise SwatchError("a swatch circle lies outside the photo")
    out: NDArray[np.uint8] = frame[px[inside, 1], px[inside, 0]]
    return out


def _trimmed(frame: NDArray[np.uint8], h: NDArray[np.float64], centre: Sequence[float], r0: float, r1: float, ppm: float) -> NDArray[np.float64]:
    """Linear BGR of a disc or ring, glare and noise trimmed as the reader trims a hole."""
    px = _pixels(frame, h, centre, r0, r1, ppm)
    order = np.argsort(px.astype(np.int32).sum(axis=1))
    lo = int(len(order) * RANK_LOW)
    hi = max(int(len(order) * RANK_HIGH), lo + 1)
    kept = px[order[lo:hi]]
    out: NDArray[np.float64] = srgb_to_linear(np.median(kept, axis=0))
    return out


def _covered(
    frame: NDArray[np.uint8], h: NDArray[np.float64], centre: Sequence[float], dot_r: float, disc_r: float, ppm: float
) -> bool:
    """Whether a peg hides the circle's dot: the centre is not much darker than the disc around it."""
    dot = _pixels(frame, h, centre, 0.0, dot_r * 0.7, ppm).astype(np.float64).mean(axis=1)
    around = _pixels(frame, h, centre, dot_r * 1.5, max(disc_r, dot_r * 2.5), ppm).astype(np.float64).mean(axis=1)
    return bool(np.median(dot) > 0.5 * np.median(around))
