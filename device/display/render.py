"""Draw a :class:`~pegwatch.device.display.model.DisplayModel` with Pillow.

One drawing for every device: :func:`render` returns a 1-bit
``PIL.Image`` (white on black, as an OLED lights it); devices only show
images (:mod:`pegwatch.device.display.devices` converts the mode when a colour LCD
needs it). The layout is computed from the size, so a 128x64 OLED and a
320x240 LCD show the same picture at their own scale.

The fonts ship in ``device/fonts`` (DejaVu, see its licence file there) so
renders are identical on every machine; text is drawn without
anti-aliasing, which keeps digits crisp on a 1-bit panel.

Layout, 2 players (4 players use a 2x2 grid of smaller panels)::

    +--------------------------------+
    | ROW 3    Table 7     PAUSED    |  status line (or banner); the table's name
    |+--------------++--------------+|
    ||    7:59      ||     3:41     ||  big times; the player on move
    ||   BREAKER    ||    MAKER     ||  is drawn inverted (role, or name)
    |+--------------++--------------+|
    | MIS-MARK row 3                 |  message bar (inverted for alarms)
    +--------------------------------+

The arbiter entering a row by hand (``model.entry``) replaces the times
(the clock is paused while the menu is open)::

    +--------------------------------+
    |          ENTER ROW 5           |  banner
    | [RED]  GRE   BLU   YEL         |  holes; the current field inverted,
    | 2B  1W          ARBITER: OK    |  the others to fill underlined
    |                 HOLD: CANCEL   |
    |       P1 CHANGE  P2 NEXT       |  what the player buttons do
    +--------------------------------+
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from pegwatch.device.display.model import (
    DisplayModel,
    EntryCell,
    EntryView,
    PlayerFace,
    Severity,
    role_label,
)

# Package data, so a plain wheel draws the same faces as a checkout.
FONT_DIR = Path(str(resources.files("pegwatch.device") / "fonts"))
DIGITS_FONT = FONT_DIR / "DejaVuSansCondensed-Bold.ttf"
TEXT_FONT = FONT_DIR / "DejaVuSansMono-Bold.ttf"

BASE_SIZE = (128, 64)
WHITE = 1
BLACK = 0

Font = ImageFont.FreeTypeFont


@functools.lru_cache(maxsize=128)
def _font(path: Path, size: int) -> Font:
    return ImageFont.truetype(str(path), size)


@functools.lru_cache(maxsize=512)
def _fit(path: Path, text: str, max_w: int, max_h: int) -> Font:
    """The largest size of *path* that draws *text* inside max_w x max_h."""
    size = max(6, max_h + max_h // 2)
    while size > 6:
        font = _font(path, size)
        left, top, right, bottom = font.getbbox(text)
        if right - left <= max_w and bottom - top <= max_h:
            return font
        size -= 1
    return _font(path, 6)


def label_font(size: int) -> Font:
    """The font of the name/role labels: condensed, so a name fits beside a role."""
    return _font(DIGITS_FONT, size)


def text_font(size: int) -> Font:
    """The small-text font at *size* pixels."""
    return _font(TEXT_FONT, size)


def _centered(
    draw: ImageDraw.ImageDraw,
    box: tuple[int, int, int, int],
    text: str,
    font: Font,
    fill: int,
) -> None:
    """Draw *text* centred in *box* by its ink, not its advance box."""
    left, top, right, bottom = font.getbbox(text)
    x0, y0, x1, y1 = box
    x = x0 + (x1 - x0 - (right - left)) // 2 - left
    y = y0 + (y1 - y0 - (bottom - top)) // 2 - top
    draw.text((x, y), text, font=font, fill=fill)


def render(model: DisplayModel, size: tuple[int, int] = BASE_SIZE) -> Image.Image:
    """Draw *model* as a 1-bit image of *size* (width, height)."""
    width, height = size
    image = Image.new("1", size, BLACK)
    draw = ImageDraw.Draw(image)
    draw.fontmode = "1"  # no anti-aliasing: crisp on 1-bit panels
    scale = min(width / BASE_SIZE[0], height / BASE_SIZE[1])
    bar_h = max(9, round(10 * scale))
    small = text_font(max(8, round(9 * scale)))

    _status(draw, model, (0, 0, width, bar_h), small)
    top = bar_h + 1
    bottom = height - bar_h - 1
    if model.entry is not None:
        _entry(draw, model.entry, (0, top, width, bottom), small)
        _centered(draw, (0, bottom + 1, width, height), model.entry.hint.upper(), small, WHITE)
        return image
    _panels(draw, model, (0, top, width, bottom), small, scale)
    _message(draw, model, (0, bottom + 1, width, height), small)
    return image


def _entry(
    draw: ImageDraw.ImageDraw, entry: EntryView, box: tuple[int, int, int, int], small: Font
) -> None:
    """The holes on one line, the marks and the arbiter's keys on the next."""
    x0, y0, x1, y1 = box
    count = max(len(entry.holes), 4)
    cell_w = (x1 - x0) // count
    holes_h = (y1 - y0) * 11 // 20
    widest = max((c.text for c in (*entry.holes, *entry.marks)), key=len, default="M")
    font = _fit(TEXT_FONT, "M" * len(widest), cell_w - 4, holes_h - 5)
    for i, cell in enumerate(entry.holes):
        _entry_cell(draw, cell, (x0 + i * cell_w, y0 + 1, x0 + (i + 1) * cell_w, y0 + holes_h), font)
    marks_top = y0 + holes_h + 1
    for i, cell in enumerate(entry.marks):
        _entry_cell(draw, cell, (x0 + i * cell_w, marks_top, x0 + (i + 1) * cell_w, y1), font)
    keys_x = x0 + 2 * cell_w + 2
    mid = (marks_top + y1) // 2
    keys = _fit(DIGITS_FONT, "HOLD: CANCEL", x1 - keys_x - 3, min(int(small.size), (y1 - marks_top) // 2 - 1))
    for text, (top, bottom) in (("ARBITER: OK", (marks_top, mid)), ("HOLD: CANCEL", (mid, y1))):
        _centered(draw, (keys_x, top, x1, bottom), text, keys, WHITE)


def _entry_cell(
    draw: ImageDraw.ImageDraw, cell: EntryCell, box: tuple[int, int, int, int], font: Font
) -> None:
    x0, y0, x1, y1 = box
    if cell.current:
        draw.rectangle((x0 + 1, y0, x1 - 2, y1 - 1), fill=WHITE)
        _centered(draw, box, cell.text, font, BLACK)
        return
    _centered(draw, box, cell.text, font, WHITE)
    if cell.editable:
        # Underlined: a field still to check; fixed fields are plain.
        draw.line((x0 + 2, y1 - 1, x1 - 3, y1 - 1), fill=WHITE)


def _status(
    draw: ImageDraw.ImageDraw, model: DisplayModel, box: tuple[int, int, int, int], font: Font
) -> None:
    x0, y0, x1, y1 = box
    if model.banner:
        draw.rectangle((x0, y0, x1 - 1, y1 - 1), fill=WHITE)
        _centered(draw, box, model.banner, font, BLACK)
        return
    left = f"ROW {model.row}" if model.row is not None else ""
    if left:
        _text_left(draw, (x0 + 1, y0, x1, y1), left, font, WHITE)
    right = x1
    if model.paused:
        label = "PAUSED"
        w = _ink_width(font, label) + 4
        right = x1 - w
        draw.rectangle((x1 - w, y0, x1 - 1, y1 - 1), fill=WHITE)
        _centered(draw, (x1 - w, y0, x1, y1), label, font, BLACK)
    if model.table:
        # The table's name in the room between the row and PAUSED, cut to fit.
        start = x0 + 1 + (_ink_width(font, left) + 4 if left else 0)
        text = model.table.strip()
        while text and _ink_width(font, text) > right - start - 4:
            text = text[:-1].rstrip()
        if text:
            _centered(draw, (start, y0, right, y1), text, font, WHITE)


def _ink_width(font: Font, text: str) -> int:
    left, _, right, _ = font.getbbox(text)
    return int(right - left)


def _text_left(
    draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], text: str, font: Font, fill: int
) -> None:
    x0, y0, _, y1 = box
    left, top, _, bottom = font.getbbox("ROW 0")  # same baseline for every line
    draw.text((x0 - left, y0 + (y1 - y0 - (bottom - top)) // 2 - top), text, font=font, fill=fill)


def _panels(
    draw: ImageDraw.ImageDraw,
    model: DisplayModel,
    box: tuple[int, int, int, int],
    small: Font,
    scale: float,
) -> None:
    x0, y0, x1, y1 = box
    count = len(model.players)
    if count <= 2:
        cells = [(x0 + i * (x1 - x0) // count, y0, x0 + (i + 1) * (x1 - x0) // count, y1)
                 for i in range(count)]
    else:
        cols, rows = 2, (count + 1) // 2
        cw, ch = (x1 - x0) // cols, (y1 - y0) // rows
        cells = [(x0 + (i % cols) * cw, y0 + (i // cols) * ch,
                  x0 + (i % cols + 1) * cw, y0 + (i // cols + 1) * ch) for i in range(count)]
    compact = count > 2
    # All panels use one digit size (that of the widest face), so equal
    # times look equal and the faces do not jump as digits come and go.
    faces = [p.face for p in model.players]
    widest = max(faces, key=len)
    cw0, cy0, cw1, cy1 = cells[0]
    label_h = 0 if compact else int(small.size) + 1
    pad = max(1, round(2 * scale))
    name_w = 0
    if compact:
        name_w = _ink_width(small, "MMM") + 2 * pad
    # Inside the frame (1 px gap, 1 px line on each side) and the padding.
    digits = _fit(DIGITS_FONT, widest.replace("1", "0"),
                  cw1 - cw0 - 5 - 2 * pad - name_w, cy1 - cy0 - label_h - 2 * pad - 2)
    for index, (player, face, cell) in enumerate(zip(model.players, faces, cells, strict=True)):
        _panel(draw, player, face, cell, on_move=index == model.on_move, digits=digits,
               small=small, label_h=label_h, name_w=name_w, pad=pad)


def _panel(
    draw: ImageDraw.ImageDraw,
    player: PlayerFace,
    face: str,
    cell: tuple[int, int, int, int],
    *,
    on_move: bool,
    digits: Font,
    small: Font,
    label_h: int,
    name_w: int,
    pad: int,
) -> None:
    x0, y0, x1, y1 = cell
    fg, bg = (BLACK, WHITE) if on_move else (WHITE, BLACK)
    inner = (x0 + 1, y0, x1 - 2, y1 - 1)
    if on_move:
        draw.rectangle(inner, fill=WHITE)
    else:
        draw.rectangle(inner, outline=WHITE)
    del bg
    time_box = (x0 + 2 + name_w, y0 + pad, x1 - 3, y1 - label_h - pad)
    _centered(draw, time_box, face, digits, fg)
    if player.flagged:
        # Struck through: the flag must be seen at a glance.
        ty = (time_box[1] + time_box[3]) // 2
        draw.line((time_box[0] + pad, ty, time_box[2] - pad, ty), fill=fg, width=1)
    if name_w:
        name = player.name[:3].upper()
        _centered(draw, (x0 + 2, y0, x0 + name_w, y1), name, small, fg)
        return
    # With roles (Mastermind) the role is what matters on a 2-seat table;
    # the name would not fit beside it at a readable size.
    labels = label_font(int(small.size) + 1)
    if player.flagged:
        label = "FLAG"
    elif player.role is not None:
        label = role_label(player.role)
    else:
        label = player.name.upper()
        while label and _ink_width(labels, label) > x1 - x0 - 7:
            label = label[:-1]
    _centered(draw, (x0 + 1, y1 - label_h - 1, x1 - 2, y1 - 1), label, labels, fg)


def _message(
    draw: ImageDraw.ImageDraw, model: DisplayModel, box: tuple[int, int, int, int], font: Font
) -> None:
    message = model.message
    if message is None:
        return
    x0, y0, x1, y1 = box
    text = message.text.upper()
    while text and font.getlength(text) > x1 - x0 - 4:
        text = text[:-1]
    if message.severity is Severity.ALARM:
        draw.rectangle((x0, y0, x1 - 1, y1 - 1), fill=WHITE)
        _centered(draw, box, text, font, BLACK)
    elif message.severity is Severity.WARNING:
        draw.rectangle((x0, y0, x1 - 1, y1 - 1), outline=WHITE)
        _centered(draw, box, text, font, WHITE)
    else:
        _centered(draw, box, text, font, WHITE)
