"""``pegwatch swatch``: teach a calibrated table its peg colours from photos of the swatch card.

``pegwatch swatch PHOTO... --calibration CAL.json -o NEW.json`` reads the
card (printed by ``pegwatch markers --swatch-card``, one peg on each
circle, photographed beside the board by the table's camera), and writes
the calibration with those colours learned on top: geometry, plastic and
every colour the card does not show are kept. Exit status 0, or 2 for bad
input (one line on stderr naming the file).
"""

from __future__ import annotations

import argparse
import logging

logger = logging.getLogger(__name__)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``swatch`` to ``sub``."""
    p = sub.add_parser(
        "swatch",
        help="learn peg colours from photos of the swatch card into a calibration",
        description="Read the swatch card (pegwatch markers --swatch-card) and add its colours to a calibration.",
    )
    p.add_argument("images", nargs="+", metavar="PHOTO", help="photos of the card beside the board")
    p.add_argument("--calibration", required=True, metavar="CAL.json", help="the table's calibration to add to")
    p.add_argument("-o", "--output", required=True, metavar="NEW.json", help="calibration file to write")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Read every photo's card and write the calibration with the colours learned."""
    import numpy as np

    from pegwatch.vision.calibrate import calibrate
    from pegwatch.vision.calibration import Calibration
    from pegwatch.vision.sources import read_image
    from pegwatch.vision.swatch import read_card

    cal = Calibration.load(args.calibration)
    profile = cal.load_profile()
    code: dict[str, list[np.ndarray]] = {}
    keys: dict[str, list[np.ndarray]] = {}
    for path in args.images:
        samples = read_card(read_image(path), profile, cal, name=path)
        for name, v in samples.code.items():
            code.setdefault(name, []).append(v)
        for name, v in samples.keys.items():
            keys.setdefault(name, []).append(v)
    new = calibrate(
        [], [], profile, base=cal,
        extra_code={k: np.concatenate(v) for k, v in code.items()},
        extra_keys={k: np.concatenate(v) for k, v in keys.items()},
    )
    new.save(args.output)
    learned = ", ".join([*code, *(f"{k} key" for k in keys)]) or "nothing"
    print(f"learned {learned} from {len(args.images)} photo(s); trust {new.trust}; wrote {args.output}")
    for w in new.warnings:
        logger.warning("%s", w)
    return 0
