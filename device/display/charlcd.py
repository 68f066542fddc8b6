"""The display model as text for an HD44780 character LCD (16x2 or 20x4).

:func:`layout` is pure and returns exactly *rows* lines of exactly *cols*
characters, using only ASCII (the HD44780 ROM has no arrows). ``>`` marks
the player on move. :class:`CharLcd` sends those lines through RPLCD,
imported only when one is opened.
"""

from __future__ import annotations

from typing import Any

from pegwatch.device.display.model import (
    DisplayModel,
    EntryCell,
    EntryView,
    PlayerFace,
    role_label,
)
from pegwatch.rules.errors import BadInput
from pegwatch.rules.record import Role

SIZES = ((16, 2), (20, 4))


def _face(player: PlayerFace) -> str:
    return "FLAG" if player.flagged else player.face


def _role3(player: PlayerFace) -> str:
    if player.role is None:
        return ""
    return "BRK" if player.role is Role.CODEBREAKER else "MKR"


def _fit(text: str, cols: int) -> str:
    return text[:cols].ljust(cols)


def _status(model: DisplayModel) -> str:
    if model.banner:
        return model.banner
    parts = []
    if model.row is not None:
        parts.append(f"ROW {model.row}")
    if model.paused:
        parts.append("PAUSED")
    if model.on_move is not None:
        role = model.players[model.on_move].role
        if role is not None:
            parts.append(role_label(role))
    return " ".join(parts)


def _cell(model: DisplayModel, index: int, width: int) -> str:
    """``>NAME  7:59``: marker, name, right-aligned time, in *width*."""
    player = model.players[index]
    mark = ">" if index == model.on_move else " "
    face = _face(player)
    room = width - 1 - len(face) - 1
    name = player.name.upper()[: max(0, room)]
    return f"{mark}{name}".ljust(width - len(face)) + face


def _cells(cells: tuple[EntryCell, ...], cols: int) -> str:
    """Fields side by side, ``>`` before the current one, shortened to fit."""
    for size in (3, 2, 1):
        line = "".join((">" if c.current else " ") + c.text[:size] for c in cells)
        if len(line) <= cols:
            return line
    return line


def _entry(entry: EntryView, cols: int, rows: int) -> list[str]:
    head = f"{entry.title} " + _cells(entry.marks, cols).strip()
    lines = [head, _cells(entry.holes, cols)]
    if rows == 4:
        lines += [entry.hint, "ARB OK, HOLD CANCEL"]
    return [_fit(line, cols) for line in lines]


def layout(model: DisplayModel, cols: int = 16, rows: int = 2) -> list[str]:
    """The *rows* lines of *cols* characters that show *model*."""
    if (cols, rows) not in SIZES:
        raise BadInput(f"character LCD {cols}x{rows} is not supported; use 16x2 or 20x4")
    if model.entry is not None:
        return _entry(model.entry, cols, rows)
    message = model.message.text.upper() if model.message else ""
    count = len(model.players)
    half = cols // 2
    if rows == 2:
        if count == 2:
            first = _cell(model, 0, half) + _cell(model, 1, half)
        else:
            # Too many players for one line: the player on move, then the next.
            shown = model.on_move if model.on_move is not None else 0
            first = _cell(model, shown, half) + _cell(model, (shown + 1) % count, half)
        second = message or _status(model)
        return [_fit(first, cols), _fit(second, cols)]
    lines = []
    if count == 2:
        # Room for a line of names over a line of roles and times.
        names = "".join(
            f"{'>' if i == model.on_move else ' '}{model.players[i].name.upper()[: half - 2]}".ljust(half)
            for i in (0, 1)
        )
        times = "".join(
            f" {_role3(model.players[i])}".ljust(half - len(_face(model.players[i])) - 1)
            + _face(model.players[i]) + " "
            for i in (0, 1)
        )
        return [_fit(line, cols) for line in (names, times, _status(model), message)]
    for start in range(0, count, 2):
        line = "".join(_cell(model, i, half) for i in range(start, min(start + 2, count)))
        lines.append(line)
    lines.append(_status(model))
    lines.append(message)
    return [_fit(line, cols) for line in lines[:rows]] + [" " * cols] * (rows - len(lines))


class CharLcd:
    """An HD44780 on an I2C backpack (PCF8574), driven through RPLCD."""

    def __init__(
        self, *, cols: int = 16, rows: int = 2, i2c_port: int = 1, address: int = 0x27,
        expander: str = "PCF8574",
    ) -> None:
        if (cols, rows) not in SIZES:
            raise BadInput(f"character LCD {cols}x{rows} is not supported; use 16x2 or 20x4")
        from RPLCD.i2c import CharLCD

        self.cols, self.rows = cols, rows
        self._lcd: Any = CharLCD(expander, address, port=i2c_port, cols=cols, rows=rows,
                                 auto_linebreaks=False)
        self._lines: list[str] = []

    def show_model(self, model: DisplayModel) -> None:
        lines = layout(model, self.cols, self.rows)
        for row, line in enumerate(lines):
            # Rewrite only the lines that changed: the I2C bus is slow.
            if row < len(self._lines) and self._lines[row] == line:
                continue
            self._lcd.cursor_pos = (row, 0)
            self._lcd.write_string(line)
        self._lines = lines

    def cleanup(self) -> None:
        self._lcd.close(clear=True)
