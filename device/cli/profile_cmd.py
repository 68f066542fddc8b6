"""``pegwatch profile``: a board profile from a photo and the centres of its holes.

``pegwatch profile PHOTO -o NEW.toml --name NAME [--points FILE]... [--point SPEC]...
[--click] [--base PROFILE] [--hole-pitch-mm MM] [--row-pitch-mm MM] ...`` fits the
geometry (:mod:`pegwatch.vision.profile_fit`) and writes the TOML that
``--profile NEW.toml`` loads. The hole centres come

* from a file (``--points``): JSON, CSV or TOML, each point a code hole
  ``(row, hole)``, a key hole ``(row, key)`` or a secret hole ``hole`` with
  its pixel ``x, y`` (and optionally its board ``x_mm, y_mm``), or
  millimetre/pixel pairs ``[x_mm, y_mm, x_px, y_px]`` that only place the
  board (the ``hole_points_mm_to_px`` of the photo index);
* from the command line: ``--point code:ROW:HOLE=X,Y``, ``key:ROW:K=X,Y``,
  ``secret:HOLE=X,Y`` or ``mm:X_MM,Y_MM=X,Y``;
* or by clicking them in a window (``--click``, where there is a display):
  the four corner code holes, the key holes of row 1, then the secret row.

Exit status 0, or 2 for bad input (one line on stderr naming the file).
"""

from __future__ import annotations

import argparse
import csv
import io
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pegwatch.rules.errors import BadInput

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from pegwatch.vision.profile import BoardProfile
    from pegwatch.vision.profile_fit import HolePoint

logger = logging.getLogger(__name__)

#: A points file larger than this is refused before it is parsed.
MAX_POINTS_BYTES = 1 << 20
MmPair = tuple[tuple[float, float], tuple[float, float]]


class ProfileInputError(BadInput):
    """A points file, a ``--point`` or the photo given to ``pegwatch profile`` is wrong."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``profile`` to ``sub``."""
    p = sub.add_parser(
        "profile",
        help="make a board profile from a photo and the centres of its holes",
        description=(
            "Fit a board profile (rows, pitches, key block, secret row) to hole centres in a photo, "
            "listed (--points, --point) or clicked (--click), and write its TOML."
        ),
    )
    p.add_argument("image", metavar="PHOTO", help="the photo the hole centres are in")
    p.add_argument("-o", "--output", required=True, metavar="NEW.toml", help="profile file to write")
    p.add_argument("--name", default=None, help="the profile's name (default: the output file's stem)")
    p.add_argument("--points", action="append", default=[], metavar="FILE", help="hole centres: .json, .csv or .toml")
    p.add_argument(
        "--point", action="append", default=[], metavar="SPEC",
        help="one hole: code:ROW:HOLE=X,Y, key:ROW:K=X,Y, secret:HOLE=X,Y or mm:X_MM,Y_MM=X,Y",
    )
    p.add_argument("--click", action="store_true", help="click the holes in a window (needs a display)")
    p.add_argument("--base", default=None, metavar="PROFILE", help="take what the points do not show from this profile")
    p.add_argument("--rows", type=int, default=None, help="guess rows on the board (default: the base's, or the highest row given)")
    p.add_argument("--holes", type=int, default=None, help="code holes per row (default: the base's, or the highest given)")
    p.add_argument("--keys", type=int, default=None, help="key holes per row, for --click (default: the base's, or 4)")
    p.add_argument("--hole-pitch-mm", type=float, default=None, help="distance between holes of a row, in mm")
    p.add_argument("--row-pitch-mm", type=float, default=None, help="distance between rows, in mm")
    p.add_argument("--size-mm", default=None, metavar="W,H", help="the board's size in mm (default: the holes plus a margin)")
    p.add_argument("--margin-mm", type=float, default=None, help="board edge beyond the outer holes (default: a hole's diameter)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Fit and write the profile."""
    from pegwatch.vision.profile import load_profile
    from pegwatch.vision.profile_fit import ProfileFitError, fit_profile
    from pegwatch.vision.sources import read_image

    image = read_image(args.image)
    base = load_profile(args.base) if args.base else None
    points: list[HolePoint] = []
    pairs: list[MmPair] = []
    for path in args.points:
        got, got_pairs = load_points(path, photo=args.image)
        points += got
        pairs += got_pairs
    for spec in args.point:
        got, got_pairs = parse_point(spec)
        points += got
        pairs += got_pairs
    if args.click:
        clicked = click_points(image, base, rows=args.rows, holes=args.holes, keys=args.keys)
        if clicked is None:
            return 2
        points += clicked
    if not points and not (pairs and base is not None):
        raise ProfileInputError("no hole centres: give --points FILE, --point SPEC or --click (millimetre pairs need --base)")
    h, w = image.shape[:2]
    for pt in points:
        if not (0 <= pt.px[0] < w and 0 <= pt.px[1] < h):
            raise ProfileInputError(f"{args.image}: the {pt.kind} point {pt.row}:{pt.index} at {pt.px} is outside the {w}x{h} photo")
    name = args.name or Path(args.output).stem
    where = ", ".join(args.points) or "the points"
    try:
        fit = fit_profile(
            points,
            name=name,
            rows=args.rows,
            holes=args.holes,
            hole_pitch_mm=_positive(args.hole_pitch_mm, "--hole-pitch-mm"),
            row_pitch_mm=_positive(args.row_pitch_mm, "--row-pitch-mm"),
            size_mm=_size(args.size_mm),
            margin_mm=args.margin_mm,
            base=base,
            mm_points=pairs,
        )
    except ProfileFitError as exc:
        raise ProfileFitError(f"{where}: {exc}") from None
    text = fit.to_toml()
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ProfileInputError(f"{args.output}: cannot write the profile ({exc.strerror or exc})") from None
    prof = fit.profile
    corners = ",".join(f"{x:.0f},{y:.0f}" for x, y in fit.corners_px)
    print(
        f"wrote {args.output}: {prof.name}, {prof.rows} rows x {prof.holes} holes, keys {prof.key_layout}, "
        f"rms {fit.residual_mm:.2f} mm; in this photo: --corners {corners}"
    )
    return 0


def _positive(value: float | None, flag: str) -> float | None:
    if value is not None and not 0 < value < 1000:
        raise ProfileInputError(f"{flag}: {value} is not a length in mm (0..1000)")
    return value


def _size(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    try:
        w, h = (float(v) for v in text.split(","))
    except ValueError:
        raise ProfileInputError(f"--size-mm: {text!r} is not W,H in mm") from None
    if not (0 < w < 10_000 and 0 < h < 10_000):
        raise ProfileInputError(f"--size-mm: {text!r} must be two positive lengths in mm")
    return (w, h)


# --- reading points -------------------------------------------------------------


def load_points(path: str, *, photo: str = "") -> tuple[list[HolePoint], list[MmPair]]:
    """The labelled points and millimetre pairs of a .json, .csv or .toml file."""
    from pegwatch.rules.textfile import parse_json, parse_toml, read_text

    p = Path(path)
    if not p.is_file():
        raise ProfileInputError(f"{path}: points file not found")
    text = read_text(p, limit=MAX_POINTS_BYTES, what="a points file", error=ProfileInputError)
    suffix = p.suffix.lower()
    data: Any
    if suffix == ".json":
        data = parse_json(text, source=path, error=ProfileInputError, syntax="not valid JSON")
    elif suffix == ".toml":
        data = parse_toml(text, source=path, error=ProfileInputError)
    elif suffix == ".csv":
        data = _csv_rows(text, path)
    else:
        raise ProfileInputError(f"{path}: a points file is .json, .csv or .toml")
    return points_from_data(data, where=path, photo=photo)


def _csv_rows(text: str, where: str) -> list[dict[str, str]]:
    reader = csv.DictReader(io.StringIO(text))
    fields = set(reader.fieldnames or ())
    if not ({"kind", "row", "index", "x", "y"} <= fields or {"x_mm", "y_mm", "x_px", "y_px"} <= fields):
        raise ProfileInputError(f"{where}: the header must name kind,row,index,x,y (and x_mm,y_mm) or x_mm,y_mm,x_px,y_px")
    return [dict(r) for r in reader]


def points_from_data(data: Any, *, where: str, photo: str = "") -> tuple[list[HolePoint], list[MmPair]]:
    """Points from parsed JSON/TOML/CSV: a list, or an object with ``points`` (or ``hole_points_mm_to_px``)."""
    from pegwatch.vision.profile_fit import HolePoint, ProfileFitError

    if isinstance(data, list) and data and all(isinstance(e, Mapping) and "file" in e for e in data):
        # A photo index (../shared/photos/index.json): the entry of this photo.
        data = next((e for e in data if photo and str(photo).endswith(str(e["file"]))), None)
        if data is None:
            raise ProfileInputError(f"{where}: a photo index with no entry for {photo}")
    if isinstance(data, Mapping):
        if isinstance(data.get("hole_points_mm_to_px"), Mapping):
            data = data["hole_points_mm_to_px"]
        data = data.get("points")
    if not isinstance(data, list) or not data or len(data) > 10_000:
        raise ProfileInputError(f"{where}: expected a list of 1..10000 points (or an object with \"points\")")
    points: list[HolePoint] = []
    pairs: list[MmPair] = []
    for i, item in enumerate(data):
        at = f"{where}: points[{i}]"
        if isinstance(item, list):
            nums = [_number(v, at) for v in item]
            if len(nums) != 4:
                raise ProfileInputError(f"{at}: a list point is [x_mm, y_mm, x_px, y_px]")
            pairs.append(((nums[2], nums[3]), (nums[0], nums[1])))
            continue
        if not isinstance(item, Mapping):
            raise ProfileInputError(f"{at}: expected an object or [x_mm, y_mm, x_px, y_px]")
        if "kind" not in item and {"x_mm", "y_mm", "x_px", "y_px"} <= set(item):
            pairs.append(((_number(item["x_px"], at), _number(item["y_px"], at)), (_number(item["x_mm"], at), _number(item["y_mm"], at))))
            continue
        kind = item.get("kind")
        if kind not in ("code", "key", "secret"):
            raise ProfileInputError(f"{at}.kind: {kind!r} is not code, key or secret")
        index = item.get("index", item.get("hole", item.get("key")))
        row = 0 if kind == "secret" else _integer(item.get("row"), f"{at}.row")
        mm = None
        if item.get("x_mm") not in (None, "") or item.get("y_mm") not in (None, ""):
            mm = (_number(item.get("x_mm"), f"{at}.x_mm"), _number(item.get("y_mm"), f"{at}.y_mm"))
        try:
            points.append(HolePoint(str(kind), row, _integer(index, f"{at}.index"), (_number(item.get("x"), f"{at}.x"), _number(item.get("y"), f"{at}.y")), mm))
        except ProfileFitError as exc:
            raise ProfileInputError(f"{at}: {exc}") from None
    return points, pairs


def _number(v: object, at: str) -> float:
    if isinstance(v, str):
        try:
            v = float(v)
        except ValueError:
            raise ProfileInputError(f"{at}: {v!r} is not a number") from None
    if isinstance(v, bool) or not isinstance(v, int | float) or not -1e6 < v < 1e6:
        raise ProfileInputError(f"{at}: {v!r} is not a number"[:200])
    return float(v)


def _integer(v: object, at: str) -> int:
    if isinstance(v, str) and v.strip().isdigit():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int) or not 0 < v <= 100:
        raise ProfileInputError(f"{at}: {v!r} is not a number 1..100"[:200])
    return v


def parse_point(spec: str) -> tuple[list[HolePoint], list[MmPair]]:
    """One ``--point``: ``code:ROW:HOLE=X,Y``, ``key:ROW:K=X,Y``, ``secret:HOLE=X,Y`` or ``mm:X_MM,Y_MM=X,Y``."""
    from pegwatch.vision.profile_fit import HolePoint, ProfileFitError

    bad = ProfileInputError(f"--point {spec!r}: expected code:ROW:HOLE=X,Y, key:ROW:K=X,Y, secret:HOLE=X,Y or mm:X_MM,Y_MM=X,Y")
    label, sep, where = spec.partition("=")
    try:
        x, y = (float(v) for v in where.split(","))
        kind, _, rest = label.partition(":")
        if kind == "mm":
            xm, ym = (float(v) for v in rest.split(","))
            return [], [((x, y), (xm, ym))]
        parts = [int(v) for v in rest.split(":")]
    except ValueError:
        raise bad from None
    if not sep or kind not in ("code", "key", "secret") or len(parts) != (1 if kind == "secret" else 2):
        raise bad
    row, index = (0, parts[0]) if kind == "secret" else (parts[0], parts[1])
    try:
        return [HolePoint(kind, row, index, (x, y))], []
    except ProfileFitError as exc:
        raise ProfileInputError(f"--point {spec!r}: {exc}") from None


# --- clicking -------------------------------------------------------------------


def has_display() -> bool:
    """Whether a window can be shown (an X or Wayland display on Linux; assumed elsewhere)."""
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def click_plan(rows: int, holes: int, keys: int) -> list[tuple[str, int, int]]:
    """What to click, in order: the four corner code holes, row 1's key holes, the secret row."""
    corners = [("code", 1, 1), ("code", 1, holes), ("code", rows, 1), ("code", rows, holes)]
    return corners + [("key", 1, k) for k in range(1, keys + 1)] + [("secret", 0, j) for j in range(1, holes + 1)]


def click_points(
    image: NDArray[np.uint8], base: BoardProfile | None, *, rows: int | None, holes: int | None, keys: int | None
) -> list[HolePoint] | None:
    """Ask for the holes in an OpenCV window; None (with one line on stderr) when there is no display."""
    import cv2

    from pegwatch.vision.profile_fit import HolePoint

    n_rows = rows or (base.rows if base else None)
    n_holes = holes or (base.holes if base else None)
    n_keys = keys or (base.key_holes if base else 4)
    if n_rows is None or n_holes is None:
        raise ProfileInputError("--click needs --rows and --holes (or --base PROFILE)")
    if not has_display():
        print("pegwatch profile: no display to click on (DISPLAY is not set); list the holes with --points or --point", file=sys.stderr)
        return None
    plan = click_plan(n_rows, n_holes, n_keys)
    scale = min(1.0, 1400.0 / max(image.shape[:2]))
    shown = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    clicks: list[tuple[float, float]] = []

    def on_mouse(event: int, x: int, y: int, _flags: int, _param: object) -> None:
        if event == cv2.EVENT_LBUTTONDOWN and len(clicks) < len(plan):
            clicks.append((x / scale, y / scale))

    title = "pegwatch profile"
    try:
        cv2.namedWindow(title, cv2.WINDOW_AUTOSIZE)
        cv2.setMouseCallback(title, on_mouse)
    except cv2.error:
        print("pegwatch profile: this OpenCV cannot open a window (a headless build); list the holes with --points or --point", file=sys.stderr)
        return None
    try:
        while len(clicks) < len(plan):
            kind, row, index = plan[len(clicks)]
            what = f"secret hole {index}" if kind == "secret" else f"row {row} {'hole' if kind == 'code' else 'key hole'} {index}"
            frame = shown.copy()
            for cx, cy in clicks:
                cv2.circle(frame, (round(cx * scale), round(cy * scale)), 5, (0, 0, 255), 2)
            cv2.putText(frame, f"click the centre of {what}  (u: undo, s: skip the rest, q: quit)", (10, 24),
                        cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 255, 255), 2)
            cv2.imshow(title, frame)
            key = cv2.waitKey(30) & 0xFF
            if key == ord("u") and clicks:
                clicks.pop()
            elif key == ord("s") and len(clicks) >= 4:
                break
            elif key in (ord("q"), 27):
                raise ProfileInputError("clicking abandoned: no profile written")
    finally:
        cv2.destroyWindow(title)
    return [HolePoint(kind, row, index, xy) for (kind, row, index), xy in zip(plan, clicks, strict=False)]
