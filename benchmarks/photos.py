"""Read every real photo of the development set and compare with its truth.

    .venv/bin/python benchmarks/photos.py [--photos DIR] [-v]

DIR defaults to ``$PEGWATCH_PHOTOS`` or ``../shared/photos`` beside the
repository (``README.md``, ``index.json``, ``profiles/``). Each photo is read
(with the corners its hole points give, or by best effort) or refused with
a reason; see ``pegwatch.simulation.pbr.photos`` for the definitions. The
last line is one JSON object; with no photo folder it says so and the JSON
has ``"photos": 0`` and a ``"skipped"`` reason.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2

from pegwatch.simulation.pbr.photos import run_photos

ROOT = Path(__file__).resolve().parents[1]


def photos_dir() -> Path:
    """Where the development photos are looked for."""
    env = os.environ.get("PEGWATCH_PHOTOS")
    return Path(env) if env else ROOT.parent / "shared" / "photos"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--photos", type=Path, default=None, help="the photo folder (default: ../shared/photos)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    logging.getLogger("pegwatch").setLevel(logging.INFO if args.verbose else logging.ERROR)
    cv2.setNumThreads(1)
    folder = args.photos or photos_dir()
    if not (folder / "index.json").is_file():
        print(f"photos benchmark: no photo set at {folder} (index.json missing); nothing read")
        print(json.dumps({"photos": 0, "skipped": f"no photo set at {folder}"}, sort_keys=True))
        return 0
    started = time.perf_counter()
    results, summary = run_photos(folder)
    summary["elapsed_s"] = round(time.perf_counter() - started, 2)
    print(f"photos benchmark: {summary['photos']} photos in {folder}")
    for r in results:
        what = f"read ({r.how})" if r.status == "read" else "refused"
        detail = r.reason if r.status != "read" else (
            f"holes compared {r.holes_compared}, errors {r.hole_errors}, uncertain {r.holes_uncertain}"
            + (f", ACCUSED rows {r.accused_rows}" if r.accused_rows else "")
        )
        print(f"  {r.file:58s} {what:20s} {detail}")
    print(json.dumps(summary, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
