"""``pegwatch calibrate`` and ``pegwatch read``: the camera reader from the shell.

``pegwatch calibrate IMAGE... --truth TRUTH.json [--profile P]
[--corners x1,y1,...,x4,y4] -o CAL.json`` fits a table's calibration from
photos of known contents. Give ``--truth`` once (every image shows the same
board) or once per image, in the same order.

``pegwatch read IMAGE... --calibration CAL.json [--json] [--debug OUT.png]``
reads boards; with several images the temporal filter runs over them in
order and the accepted reading is printed. Besides the rows it says how
the board was found (markers, corners, best effort), its pixels per
millimetre and sharpness, the reading's trust and, with ``--json``, per
hole the candidates the reader could not rule out (see docs/vision.md). Exit status: 0, or 1 when the
board could not be read at all (no markers, board moved), or 2 for bad
input (one line on stderr).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pegwatch.rules.errors import BadInput, PegwatchError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from pegwatch.vision.reading import BoardReading, HoleReading

logger = logging.getLogger(__name__)


class VisionInputError(BadInput):
    """A file given to ``calibrate``/``read`` is missing or unreadable."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``calibrate`` and ``read``."""
    p = sub.add_parser(
        "calibrate",
        help="fit a table's colour calibration from photos of known boards",
        description="Fit the colour model (and the localisation) from images whose contents are known.",
    )
    p.add_argument("images", nargs="+", metavar="IMAGE", help="photos of the board (BGR/RGB image files)")
    p.add_argument(
        "--truth",
        action="append",
        required=True,
        metavar="TRUTH.json",
        help="game record of what the images show; once for all images, or once per image in order",
    )
    p.add_argument("--profile", default=None, help="board profile name or .toml path (default invicta-12x4)")
    p.add_argument(
        "--corners",
        default=None,
        metavar="x1,y1,...,x4,y4",
        help="board corners in image pixels (TL, TR, BR, BL) for tables without markers",
    )
    p.add_argument(
        "--base",
        default=None,
        metavar="CAL.json",
        help="add to this calibration (e.g. one made from the empty board): its geometry, plastic and lens "
        "are kept, and only the colours these images show are learned",
    )
    p.add_argument(
        "--strict",
        action="store_true",
        help="refuse a board the grid check rejects, instead of calibrating it in low trust",
    )
    p.add_argument("-o", "--output", required=True, metavar="CAL.json", help="calibration file to write")
    p.set_defaults(func=_calibrate)

    r = sub.add_parser(
        "read",
        help="read boards from photos with a table's calibration",
        description="Read boards; several images run through the temporal filter in order.",
    )
    r.add_argument("images", nargs="+", metavar="IMAGE", help="photos of the board, in time order")
    r.add_argument("--calibration", required=True, metavar="CAL.json", help="the table's calibration file")
    r.add_argument("--json", action="store_true", help="print the game-record JSON")
    r.add_argument("--debug", default=None, metavar="OUT.png", help="write the last image with the grid and reading drawn")
    r.add_argument("--rules", default="mso", help="rules name written into the JSON record (default mso)")
    r.set_defaults(func=_read)


def load_image(path: str) -> NDArray[np.uint8]:
    """Read an image file as BGR; a clear error naming it when it is missing or unreadable."""
    from pegwatch.vision.sources import read_image

    return read_image(path)


def _load_json(path: str) -> Any:
    from pegwatch.rules.record import MAX_RECORD_BYTES
    from pegwatch.rules.textfile import parse_json, read_text

    if not Path(path).is_file():
        raise VisionInputError(f"{path}: file not found")
    text = read_text(path, limit=MAX_RECORD_BYTES, what="a JSON truth record", error=VisionInputError)
    return parse_json(text, source=path, error=VisionInputError, syntax="not valid JSON")


def parse_corners(text: str) -> list[tuple[float, float]]:
    """``x1,y1,...,x4,y4`` to four points."""
    try:
        nums = [float(v) for v in text.replace(" ", "").split(",") if v != ""]
    except ValueError:
        raise VisionInputError(f"--corners: {text!r} is not eight comma-separated numbers") from None
    if len(nums) != 8:
        raise VisionInputError(f"--corners: needs 8 numbers (x1,y1,...,x4,y4), got {len(nums)}")
    return [(nums[i], nums[i + 1]) for i in range(0, 8, 2)]


def _calibrate(args: argparse.Namespace) -> int:
    from pegwatch.vision.calibrate import calibrate, truth_from_record
    from pegwatch.vision.calibration import Calibration, learned_classes
    from pegwatch.vision.profile import DEFAULT_PROFILE, load_profile

    profile = load_profile(args.profile or DEFAULT_PROFILE)
    corners = parse_corners(args.corners) if args.corners else None
    truths_paths: list[str] = args.truth
    if len(truths_paths) not in (1, len(args.images)):
        raise VisionInputError(
            f"--truth given {len(truths_paths)} times for {len(args.images)} images; give it once or once per image"
        )
    truths = [truth_from_record(_load_json(t), profile, where=t) for t in truths_paths]
    if len(truths) == 1:
        truths = truths * len(args.images)
    images = [load_image(p) for p in args.images]
    base = Calibration.load(args.base) if args.base else None
    cal = calibrate(
        images, truths, profile, corners, names=args.images, base=base, allow_low_trust=not args.strict
    )
    cal.save(args.output)
    classes = ", ".join(learned_classes(cal.code_model))
    print(f"calibrated {profile.name} ({cal.method}) from {len(images)} image(s): {classes}; wrote {args.output}")
    print(f"trust: {cal.trust}")
    for why in cal.warnings:
        print(f"WARNING: {why}")
    return 0


def _read(args: argparse.Namespace) -> int:
    import cv2

    from pegwatch.vision.calibration import Calibration, CalibrationError
    from pegwatch.vision.reader import BoardReader
    from pegwatch.vision.temporal import StableBoard

    cv2.setNumThreads(1)
    cal = Calibration.load(args.calibration)
    profile = cal.load_profile()
    try:
        reader = BoardReader(profile, cal)
        reader.localiser  # noqa: B018 - made now, so that a bad calibration is bad input
    except CalibrationError as exc:
        message = str(exc)
        if not message.startswith(f"{args.calibration}:"):
            message = f"{args.calibration}: {message}"
        raise CalibrationError(message) from None
    except PegwatchError as exc:
        raise CalibrationError(f"{args.calibration}: localisation: {exc}") from None
    stable = StableBoard(frames_to_accept=min(3, len(args.images)))
    accepted = None
    frame = None
    for i, path in enumerate(args.images):
        frame = load_image(path)
        # Images have no camera stamp: space them one "frame" apart.
        reading = reader.read(frame, at_ns=i * 100_000_000)
        accepted = stable.update(reading)
    assert accepted is not None and frame is not None
    if args.debug:
        from pegwatch.vision.debug_view import draw_debug

        out = draw_debug(frame, profile, accepted, reader.last_localisation)
        if not cv2.imwrite(args.debug, out):
            raise VisionInputError(f"{args.debug}: cannot write the debug image")
    if args.json:
        json.dump(accepted.to_record(rules=args.rules), sys.stdout)
        print()
    else:
        print(format_reading(accepted, method=cal.method))
    return 0 if accepted.problem is None else 1


def format_reading(reading: BoardReading, *, method: str = "") -> str:
    """The human form: one line per played row, unknown/occluded in capitals."""
    lines = [f"board {reading.profile}" + (f" ({method})" if method else "")]
    if reading.problem:
        lines.append(f"PROBLEM: {reading.problem}")
    facts = []
    if reading.found_by:
        facts.append(f"found by {reading.found_by}")
    if reading.px_per_mm is not None:
        facts.append(f"{reading.px_per_mm:.1f} px/mm")
    if reading.sharpness is not None:
        facts.append(f"sharpness {reading.sharpness:.2f}")
    facts.append(f"trust {reading.trust}")
    lines.append("; ".join(facts))
    lines.extend(f"LOW TRUST: {why}" for why in reading.trust_reasons)
    lines.extend(f"WARNING: {why}" for why in reading.picture_warnings)
    width = max((len(h.colour) for r in reading.rows for h in r.holes), default=6)
    for row in reading.played_rows:
        cells = " ".join(_cell(h.colour).ljust(width) for h in row.holes)
        if row.keys.status in ("ok", "empty"):
            keys = f"{row.keys.black}B {row.keys.white}W"
        else:
            keys = f"{row.keys.status.upper()}"
        conf = " ".join(f"{h.confidence:.2f}" for h in row.holes)
        lines.append(f"row {row.row:2d}: {cells} | keys {keys:<9} | {row.status:<8} | conf {conf} keys {row.keys.confidence:.2f}")
        lines.extend(_doubts(row.holes))
    if not reading.played_rows:
        lines.append("(no pegs on the board)")
    if reading.secret is None:
        lines.append("secret: hidden" + (f" (shield {reading.shield})" if reading.shield else ""))
    else:
        lines.append("secret: " + " ".join(_cell(h.colour) for h in reading.secret))
    return "\n".join(lines)


def _doubts(holes: Sequence[HoleReading]) -> list[str]:
    """What the holes in doubt, and the pegs read not quite surely, may hold: the judge's bounds."""
    out = []
    for i, h in enumerate(holes, start=1):
        may = h.possible
        if may is not None and len(may) > 1:
            if h.is_certain:
                out.append(f"        hole {i}: read {h.colour}, not surely: may also be " + " or ".join(may[1:]))
            else:
                out.append(f"        hole {i}: may be " + " or ".join(may))
    return out


def _cell(colour: str) -> str:
    return colour.upper() if colour in ("unknown", "occluded") else colour
