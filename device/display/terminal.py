"""A display for a desktop with no display: the picture in the terminal.

Each pair of pixel rows becomes one line of Unicode half blocks, so a
128x64 picture is 128 columns by 32 lines. On a TTY the picture is redrawn
in place; into a file or pipe each frame is appended.
"""

from __future__ import annotations

import sys
from typing import TextIO

from PIL import Image

_BLOCKS = {(False, False): " ", (True, False): "▀", (False, True): "▄", (True, True): "█"}


def to_half_blocks(image: Image.Image) -> list[str]:
    """The lines of *image* (any mode; lit = non-black) as half blocks."""
    mono = image.convert("1")
    width, height = mono.size
    pixels = mono.load()
    assert pixels is not None
    lines = []
    for y in range(0, height, 2):
        row = []
        for x in range(width):
            top = bool(pixels[x, y])
            bottom = bool(pixels[x, y + 1]) if y + 1 < height else False
            row.append(_BLOCKS[(top, bottom)])
        lines.append("".join(row).rstrip())
    return lines


class TerminalDisplay:
    """A luma-like device (``size``, ``mode``, ``display``) drawing to a text stream."""

    mode = "1"

    def __init__(
        self,
        width: int = 128,
        height: int = 64,
        *,
        stream: TextIO | None = None,
        in_place: bool | None = None,
    ) -> None:
        self.size = (width, height)
        self.width, self.height = width, height
        self._stream = stream if stream is not None else sys.stdout
        self._in_place = self._stream.isatty() if in_place is None else in_place
        self._shown = 0

    def display(self, image: Image.Image) -> None:
        lines = to_half_blocks(image)
        border = "+" + "-" * self.width + "+"
        out = [border, *(f"|{line.ljust(self.width)}|" for line in lines), border]
        prefix = ""
        if self._in_place and self._shown:
            # Move the cursor back up over the previous frame and redraw.
            prefix = f"\x1b[{len(out)}F"
        self._stream.write(prefix + "\n".join(out) + "\n")
        self._stream.flush()
        self._shown += 1

    def cleanup(self) -> None:
        self._stream.flush()
