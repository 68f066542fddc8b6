"""``pegwatch calibrate-lens``: the camera's lens from views of a ChArUco board."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``calibrate-lens`` to ``sub``."""
    p = sub.add_parser(
        "calibrate-lens",
        help="measure the camera's lens (focal length, distortion) from views of a ChArUco board",
        description=(
            "Measure the camera's lens from photos of the printed ChArUco board (pegwatch markers "
            "--charuco SHEET): a dozen views from different angles, the board filling much of the "
            "frame, taken at the camera mode the table reads at. Prints the RMS reprojection error; "
            "--calibration stores the lens in the table's calibration, used at every read."
        ),
    )
    p.add_argument("images", nargs="*", metavar="IMAGE", help="photos of the board, or folders of them")
    p.add_argument("--camera", metavar="SPEC", help="take the views from a camera or video instead: picamera2, video:DEVICE|FILE")
    p.add_argument("--frames", type=int, default=40, help="views to take from --camera (default: %(default)s)")
    p.add_argument("--every", type=int, default=15, help="use every Nth frame of --camera (default: %(default)s)")
    p.add_argument("--squares", default="7x5", help="the board's squares, COLUMNSxROWS (default: %(default)s)")
    p.add_argument("--square-mm", type=float, default=30.0, help="a square's side as printed (default: %(default)s)")
    p.add_argument("--marker-mm", type=float, default=22.0, help="a marker's side as printed (default: %(default)s)")
    p.add_argument("--dictionary", default="DICT_5X5_100", help="the markers' ArUco dictionary (default: %(default)s)")
    p.add_argument("--calibration", metavar="CAL.json", help="store the lens in this table calibration (rewritten)")
    p.add_argument("-o", "--output", metavar="LENS.json", help="also write the lens alone to this file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Calibrate; too few views, bad files or options are one line on stderr (exit 2)."""
    from dataclasses import replace

    from pegwatch.vision.calibration import Calibration
    from pegwatch.vision.charuco import CharucoSpec, calibrate_lens
    from pegwatch.vision.lens import LensError

    spec = CharucoSpec.parse(args.squares, args.square_mm, args.marker_mm, args.dictionary)
    if bool(args.images) == bool(args.camera):
        raise LensError("give the board's photos (IMAGE... or a folder) or --camera SPEC, one of the two")
    if args.frames < 1 or args.every < 1:
        raise LensError("--frames and --every must be at least 1")
    # Load the calibration first: a bad file is refused before the work.
    cal = Calibration.load(args.calibration) if args.calibration else None
    frames, names = _views(args)
    lens = calibrate_lens(frames, spec, names=names)
    k = lens.camera_matrix
    d = ", ".join(f"{v:+.4f}" for v in lens.distortion)
    print(
        f"lens at {lens.image_size[0]}x{lens.image_size[1]} px: fx {k[0, 0]:.1f}, fy {k[1, 1]:.1f}, "
        f"centre ({k[0, 2]:.1f}, {k[1, 2]:.1f}); distortion k1, k2, p1, p2, k3 = {d}"
    )
    print(f"RMS reprojection error {lens.rms_px:.3f} px over {lens.views} of {len(frames)} views")
    if args.output:
        doc = {"format": "pegwatch-lens", "version": 1, "lens": lens.to_dict()}
        Path(args.output).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.output}")
    if cal is not None:
        if cal.image_size is not None:
            lens.for_size(cal.image_size)  # the table reads at a size this lens can be scaled to
        replace(cal, lens=lens).save(args.calibration)
        print(f"stored the lens in {args.calibration}")
    return 0


def _views(args: argparse.Namespace) -> tuple[list[NDArray[np.uint8]], list[str]]:
    from pegwatch.vision.sources import EndOfFrames, ImageFolderSource, open_source

    frames: list[NDArray[np.uint8]] = []
    names: list[str] = []
    if args.images:
        with ImageFolderSource(args.images) as src:
            while True:
                try:
                    f = src.read()
                except EndOfFrames:
                    break
                frames.append(f.image)
                names.append(str(src.current_path or f"image {f.index + 1}"))
        return frames, names
    with open_source(args.camera) as source:
        cam: Any = source  # every source opened here reads Frames
        k = 0
        while len(frames) < args.frames:
            try:
                f = cam.read()
            except EndOfFrames:
                break
            if k % args.every == 0:
                frames.append(f.image)
                names.append(f"frame {f.index}")
            k += 1
    return frames, names
