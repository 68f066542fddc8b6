"""One sample model per display state: the goldens, the docs and demos.

Each sample shows what a real device shows: the match table's texts and
severities (``device/table/program.py`` ``TableProgram._message`` and
``_banner``). One sample, the Mensa four-player face, is no table program's
(the table runs Mastermind matches only): it shows the display's layout for
four players.

``python -m pegwatch.device.display.samples DIR`` writes ``display-<name>.png`` for
each state into *DIR* (4x, white on a dark blue-black, like an OLED), which
is how ``docs/img`` is made. ``--golden DIR`` writes the test goldens
instead (:func:`golden_images`: each state at 128x64, and the running state on
a 320x240 LCD), after a deliberate change of the drawing; look at them
before committing. The tests only compare with them, never write them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PIL import Image, ImageOps

from pegwatch.device.display.model import (
    DisplayModel,
    EntryCell,
    EntryView,
    Message,
    PlayerFace,
    Severity,
)
from pegwatch.device.display.render import render
from pegwatch.rules.record import Role

S = 1_000_000_000

_MSO = (
    PlayerFace("Alice", 3 * 60 * S + 41 * S, Role.CODEMAKER),
    PlayerFace("Bob", 7 * 60 * S + 59 * S + 400_000_000, Role.CODEBREAKER),
)


def _mso(alice_ns: int | None = None, bob_ns: int | None = None, **kw: object) -> DisplayModel:
    alice, bob = _MSO
    if alice_ns is not None:
        alice = PlayerFace(alice.name, alice_ns, alice.role, flagged=alice_ns == 0)
    if bob_ns is not None:
        bob = PlayerFace(bob.name, bob_ns, bob.role, flagged=bob_ns == 0)
    options: dict[str, object] = {"on_move": 1, "row": 3}
    options.update(kw)
    return DisplayModel(players=(alice, bob), **options)  # type: ignore[arg-type]


SAMPLES: dict[str, DisplayModel] = {
    # The match table (device/table.py) at game 1: Alice codemaker, Bob codebreaker.
    "ready": _mso(4 * 60 * S, 8 * 60 * S, on_move=None, row=None, banner="G1: SET THE CODE"),
    "running": _mso(),
    "low-time": _mso(bob_ns=12 * S + 370_000_000, row=9),
    # Paused at the match table: nobody on move (every LED off), PAUSED on top.
    "paused": _mso(on_move=None, paused=True),
    # A flag or a mis-mark ends the game at once: the clock stops and the
    # codemaker is asked to open the shield.
    "timeout": _mso(bob_ns=0, on_move=None, row=9, banner="OPEN THE SHIELD",
                    message=Message("FLAG Bob", Severity.ALARM)),
    "mis-mark": _mso(on_move=None, row=3, banner="OPEN THE SHIELD",
                     message=Message("MIS-MARK ROW 3", Severity.ALARM)),
    # Bob confirmed row 4 with an empty hole; Alice's time runs while it stands.
    "illegal-guess": _mso(on_move=0, row=4, message=Message("ILLEGAL ROW 4", Severity.WARNING)),
    "illegal-twice": _mso(on_move=0, row=6,
                          message=Message("ARBITER: ILLEGAL x2", Severity.ALARM)),
    "camera": _mso(message=Message("CAMERA LOST", Severity.ALARM)),
    "check-row": _mso(on_move=0, row=5, message=Message("CHECK ROW 5", Severity.WARNING)),
    # A real camera with no calibration: the clock works, the board is not read.
    "set-up": _mso(4 * 60 * S, 8 * 60 * S, on_move=None, row=None, banner="G1: SET THE CODE",
                   message=Message("SET-UP: NO CAMERA CAL", Severity.WARNING)),
    # The buttons' GPIO chip could not be opened: tried again, the clock goes on.
    "no-buttons": _mso(message=Message("NO BUTTONS", Severity.ALARM)),
    # The service was stopped (systemctl stop): the last picture, times frozen.
    "stopped": _mso(on_move=None, banner="STOPPED"),
    "result": _mso(bob_ns=5 * 60 * S + 12 * S + 300_000_000, on_move=None, row=6,
                   banner="G1: 6 ATTEMPTS"),
    # The arbiter menu (a bare clock or the match table): ADJUST, +10 s chosen.
    "menu": _mso(on_move=None, paused=True, banner="ADJUST +10s"),
    "enter-row": _mso(
        on_move=None, row=5, paused=True, banner="ENTER ROW 5",
        entry=EntryView(
            "ROW 5",
            holes=(EntryCell("RED"), EntryCell("GRE", current=True), EntryCell("BLU"),
                   EntryCell("YEL")),
            marks=(EntryCell("2B"), EntryCell("1W")),
        ),
    ),
    "mensa-4": DisplayModel(
        players=(
            PlayerFace("Ann", 14 * 60 * S + 3 * S),
            PlayerFace("Ben", 11 * 60 * S + 47 * S),
            PlayerFace("Cy", 0, flagged=True),
            PlayerFace("Dee", 16 * S + 800_000_000),
        ),
        on_move=3,
        message=Message("TIMEOUT Cy", Severity.ALARM),
    ),
}


def doc_image(model: DisplayModel, scale: int = 4) -> Image.Image:
    """*model* drawn large, lit pixels white on an OLED's blue-black."""
    image = render(model).convert("L").resize(
        (128 * scale, 64 * scale), Image.Resampling.NEAREST
    )
    return ImageOps.colorize(image, black="#0b0f1a", white="#f2f6ff")


def golden_images() -> dict[str, Image.Image]:
    """The renders the golden tests compare: every sample at 128x64, and one LCD layout."""
    images = {name: render(model) for name, model in SAMPLES.items()}
    images["lcd-320x240-running"] = render(SAMPLES["running"], (320, 240))
    return images


def main(argv: list[str]) -> int:
    if argv[:1] == ["--golden"]:
        golden = Path(argv[1] if len(argv) > 1 else "tests/device/golden")
        golden.mkdir(parents=True, exist_ok=True)
        for name, image in golden_images().items():
            image.save(golden / f"{name}.png")
        print(f"wrote {len(SAMPLES) + 1} goldens to {golden}; look at them before committing")
        return 0
    out = Path(argv[0] if argv else "docs/img")
    out.mkdir(parents=True, exist_ok=True)
    for name, model in SAMPLES.items():
        doc_image(model).save(out / f"display-{name}.png", optimize=True)
    print(f"wrote {len(SAMPLES)} images to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
