"""The desktop's simulated table: a rendered board moved by keys, and the keyboard as buttons.

``pegwatch run`` off the Pi hands :class:`SimulatedDesk` to
:func:`pegwatch.device.table.run.run_table`, which asks it for what a Pi
would have in hardware: a camera (the renderer, showing a board the keys
change) and buttons (the keyboard driving gpiozero's mock pins).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from pegwatch.rules.codes import score
from pegwatch.simulation.keyboard import KeyboardPins

__all__ = ["DeskBoard", "SceneSource", "SimulatedDesk"]


class DeskBoard:
    """The rendered board of a desktop ``pegwatch run``, moved by keys.

    ``g`` the codebreaker places a random guess in the next row, ``k`` the
    codemaker marks it right, ``w`` marks it wrong, ``o`` opens or closes
    the shield, ``h`` puts a hand over the last row or takes it away, ``n``
    clears the board for the next game with a new random code.
    """

    KEYS = "g guess, k marks, w wrong marks, o shield, h hand, n new game"

    def __init__(self, scene: Any, *, seed: int = 0) -> None:
        self.scene = scene
        self.rng = random.Random(seed)
        self.new_game()

    def _code(self) -> tuple[str, ...]:
        palette = list(self.scene.profile.palette)
        return tuple(self.rng.choice(palette) for _ in range(self.scene.profile.holes))

    def _row(self) -> int:
        rows = [i for i, g in enumerate(self.scene.contents.guesses, start=1) if g is not None]
        return rows[-1] if rows else 0

    def new_game(self) -> None:
        self.secret = self._code()
        self.scene.new_game(self.secret)
        self.scene.hand_over(None)

    def guess(self) -> None:
        row = self._row() + 1
        if row <= self.scene.profile.rows:
            self.scene.place_guess(row, self._code())

    def marks(self, *, wrong: bool = False) -> None:
        row = self._row()
        if row:
            black, white = score(self.secret, self.scene.contents.guesses[row - 1])
            if wrong:
                black, white = (black + 1, max(0, white - 1)) if black < 3 else (black - 1, white + 1)
            self.scene.place_keys(row, black, white)

    def shield(self) -> None:
        self.scene.shield(open_=not self.scene.contents.shield_open)

    def hand(self) -> None:
        self.scene.hand_over(None if self.scene.conditions.hand else max(1, self._row()))

    def keys(self) -> dict[str, Any]:
        return {"g": self.guess, "k": self.marks, "w": lambda: self.marks(wrong=True),
                "o": self.shield, "h": self.hand, "n": self.new_game}


class SceneSource:
    """Frames rendered from a scene, paced at ``fps`` (the desktop's camera)."""

    def __init__(self, scene: Any, *, fps: float) -> None:
        self.scene = scene
        self.period = 1.0 / max(fps, 0.5)

    def read(self) -> tuple[Any, int]:
        time.sleep(self.period)
        image = self.scene.photo()
        return image, time.monotonic_ns()


class SimulatedDesk:
    """What :func:`~pegwatch.device.table.run.run_table` needs off the Pi (its ``Desk``)."""

    def __init__(self, *, seed: int = 0) -> None:
        self.seed = seed
        self.board: DeskBoard | None = None

    def open_source(self, spec: str, *, size: tuple[int, int] | None) -> Any:
        from pegwatch.simulation.camera import open_source

        return open_source(spec, size=size, seed=self.seed)

    def camera(self, board: str, *, fps: float) -> tuple[Any, Any]:
        from pegwatch.simulation.demo import Scene, calibrated_reader
        from pegwatch.simulation.render import BoardContents

        profile, reader, conditions = calibrated_reader(board)
        scene = Scene(profile, BoardContents.empty(profile), conditions)
        self.board = DeskBoard(scene, seed=self.seed)
        return reader, SceneSource(scene, fps=fps)

    def keyboard(self, hardware: Any, *, on_quit: Callable[[], None],
                 on_confirm: Callable[[], None]) -> KeyboardPins:
        extra = self.board.keys() if self.board is not None else None
        return KeyboardPins(hardware, on_quit=on_quit, on_confirm=on_confirm, extra=extra)

    def help_lines(self) -> list[str]:
        lines = ["keys: a / l player buttons, space arbiter (short), m arbiter held (menu), "
                 "c confirm a row, q quit"]
        if self.board is not None:
            lines.append(f"the rendered board: {DeskBoard.KEYS}")
        return lines
