"""Fitting a board profile to hole centres seen in a photo (``pegwatch profile``).

A new board needs a profile (``docs/boards.md``): where its code holes,
key holes and secret row are, in millimetres. Measuring a board with a
ruler is slow and error-prone; a photo and the centres of some holes are
enough. :func:`fit_profile` takes :class:`HolePoint` s (image pixels, each
labelled with what it is: code hole ``(row, hole)``, key hole ``(row,
key)`` or secret hole ``hole``; optionally its board millimetres) and fits

* the image-to-board homography: from four or more points whose
  millimetres are known, else from the code holes, which sit on an even
  grid (row pitch x hole pitch) whose scale one known length gives;
* the geometry, by least squares over every labelled point: the row step
  (a vector), the code-hole offsets, the key block's offsets and the
  secret row's origin;
* the board's outline (the holes plus a margin, or ``size_mm``), its
  corners in the photo (for ``pegwatch calibrate --corners``) and the key
  layout (``2x2``, ``1x4`` or ``1x5`` from the key offsets).

What the points do not show (palette, key colours, hole diameters, a
part with no point at all) comes from a ``base`` profile when one is given,
else from stated defaults. The result renders as the TOML that
:func:`pegwatch.vision.profile.load_profile` reads, and is checked by
loading it.
"""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import BadInput
from pegwatch.vision.profile import BoardProfile, ProfileError, profile_from_dict

logger = logging.getLogger(__name__)

KINDS = ("code", "key", "secret")
#: The palette a fitted profile gets when no base profile gives one (Invicta's).
DEFAULT_PALETTE = ("red", "orange", "yellow", "green", "blue", "purple", "white", "black")
#: The code holes must lie on an even grid within this fraction of a pitch.
GRID_TOLERANCE = 0.15


class ProfileFitError(BadInput):
    """The points cannot give a profile; the message says which and why."""


@dataclass(frozen=True)
class HolePoint:
    """One hole centre in the photo: what it is and where.

    ``kind`` is ``"code"``, ``"key"`` or ``"secret"``; ``row`` is 1-based
    (0 for the secret row); ``index`` is the hole (1..holes) or key hole
    (1..keys) number. ``mm`` is its board position when known.
    """

    kind: str
    row: int
    index: int
    px: tuple[float, float]
    mm: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ProfileFitError(f"point kind {self.kind!r} is not one of {', '.join(KINDS)}")
        if self.index < 1 or (self.kind != "secret" and self.row < 1):
            raise ProfileFitError(f"{self.kind} point: row {self.row} / index {self.index} must be 1 or more")
        if not all(math.isfinite(v) for v in (*self.px, *(self.mm or ()))):
            raise ProfileFitError(f"{self.kind} point {self.row}:{self.index}: coordinates must be finite numbers")


@dataclass(frozen=True)
class ProfileFit:
    """A fitted profile: its TOML table, where the board is in the photo, and how well it fits."""

    data: dict[str, Any]
    image_to_board: NDArray[np.float64]
    corners_px: tuple[tuple[float, float], ...]
    residual_mm: float
    notes: tuple[str, ...] = field(default=())

    @property
    def profile(self) -> BoardProfile:
        """The profile itself (as :func:`load_profile` would build it)."""
        return profile_from_dict(self.data, source=f"fitted profile {self.data['name']}")

    def to_toml(self) -> str:
        """The profile file, with comments saying how it was made."""
        lines = [f"# {n}" for n in self.notes]
        corners = ",".join(f"{x:.1f},{y:.1f}" for x, y in self.corners_px)
        lines.append(f"# In the photo it was fitted to, the board's corners are --corners {corners}")
        lines.append(f"# Fit residual: {self.residual_mm:.2f} mm (rms over the given holes).")
        tables: list[tuple[str, dict[str, Any]]] = []
        for key, value in self.data.items():
            if isinstance(value, dict):
                tables.append((key, value))
            elif key != "markers":
                lines.append(f"{key} = {_toml_value(value)}")
        for key, table in tables:
            lines.append(f"\n[{key}]")
            lines.extend(f"{k} = {_toml_value(v)}" for k, v in table.items())
        for marker in self.data.get("markers", []):
            lines.append("\n[[markers]]")
            lines.extend(f"{k} = {_toml_value(v)}" for k, v in marker.items())
        return "\n".join(lines) + "\n"


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, float):
        return repr(round(v, 3))
    if isinstance(v, int):
        return str(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def fit_profile(
    points: Sequence[HolePoint],
    *,
    name: str,
    rows: int | None = None,
    holes: int | None = None,
    hole_pitch_mm: float | None = None,
    row_pitch_mm: float | None = None,
    size_mm: tuple[float, float] | None = None,
    margin_mm: float | None = None,
    base: BoardProfile | None = None,
    mm_points: Sequence[tuple[tuple[float, float], tuple[float, float]]] = (),
) -> ProfileFit:
    """Fit a profile to labelled hole centres (see the module's docstring).

    ``mm_points``: extra (px, mm) pairs that only place the board (they
    need no label), e.g. ``hole_points_mm_to_px`` measured for a base
    profile. ``rows``/``holes`` default to the base's, else to the largest
    row and hole numbers given.
    """
    if base is not None and mm_points:
        points = [*points, *_labelled_by(base, mm_points)]
    code = [p for p in points if p.kind == "code"]
    pairs = [(p.px, p.mm) for p in points if p.mm is not None] + [(a, b) for a, b in mm_points]
    notes: list[str] = []
    if len(pairs) >= 4:
        h = _homography([a for a, _ in pairs], [b for _, b in pairs], "the points with millimetres")
        notes.append(f"Placed by {len(pairs)} points whose board millimetres were given.")
    else:
        h = _upright(_grid_homography(code, hole_pitch_mm, row_pitch_mm, notes), [p.px for p in code])
    if not points:
        raise ProfileFitError("no labelled hole points: give code, key and secret holes (kind, row, index, x, y)")
    mm = {p: _apply(h, p.px) for p in points}
    n_rows = rows or (base.rows if base else max((p.row for p in points if p.kind != "secret"), default=0))
    n_holes = holes or (base.holes if base else max((p.index for p in points if p.kind != "key"), default=0))
    for p in points:
        top = n_holes if p.kind != "key" else 8
        if p.index > top or (p.kind != "secret" and p.row > n_rows):
            raise ProfileFitError(f"{p.kind} point {p.row}:{p.index} is outside a board of {n_rows} rows x {n_holes} holes")
    geometry, resid = _fit_geometry(points, mm, n_holes, base)
    if len({p.row for p in code}) < 2 and "row_step_mm" not in geometry:
        raise ProfileFitError("the code holes of at least two rows are needed to fit the row pitch")
    data = _profile_table(name, n_rows, n_holes, geometry, base, size_mm, margin_mm, h_from_mm=len(pairs) >= 4)
    shift = np.array(data.pop("_shift"))
    h = np.array([[1, 0, shift[0]], [0, 1, shift[1]], [0, 0, 1]]) @ h
    w, hh = data["size_mm"]
    inv = np.linalg.inv(h)
    corners = tuple(_apply(inv, c) for c in ((0.0, 0.0), (w, 0.0), (w, hh), (0.0, hh)))
    fit = ProfileFit(data, h / h[2, 2], corners, resid, tuple([*notes, f"Fitted by pegwatch profile from {len(points)} hole centres."]))
    try:
        fit.profile  # noqa: B018 - the TOML must load as it will be loaded
    except ProfileError as exc:
        raise ProfileFitError(f"the fitted profile does not hold together: {exc}") from None
    return fit


def _labelled_by(
    base: BoardProfile, mm_points: Sequence[tuple[tuple[float, float], tuple[float, float]]]
) -> list[HolePoint]:
    """Millimetre/pixel pairs labelled by the base profile's hole at those millimetres.

    A pair further than a third of the closest hole spacing from every hole
    of the base labels nothing (it still places the board).
    """
    holes: list[tuple[str, int, int, tuple[float, float]]] = []
    for r in range(1, base.rows + 1):
        holes += [("code", r, j, c) for j, c in enumerate(base.hole_centres_mm(r), 1)]
        holes += [("key", r, k, c) for k, c in enumerate(base.key_centres_mm(r), 1)]
    holes += [("secret", 0, j, c) for j, c in enumerate(base.secret_centres_mm(), 1)]
    centres = np.array([h[3] for h in holes])
    gaps = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    reach = float(np.min(gaps[gaps > 0])) / 3
    out: list[HolePoint] = []
    for px, mm in mm_points:
        d = np.linalg.norm(centres - np.asarray(mm), axis=1)
        i = int(np.argmin(d))
        if d[i] <= reach:
            kind, row, index, _ = holes[i]
            out.append(HolePoint(kind, row, index, (float(px[0]), float(px[1])), (float(mm[0]), float(mm[1]))))
    return out


def _apply(h: NDArray[Any], p: Sequence[float] | NDArray[Any]) -> tuple[float, float]:
    v = h @ np.array([p[0], p[1], 1.0])
    return (float(v[0] / v[2]), float(v[1] / v[2]))


def _homography(src: Sequence[Sequence[float]], dst: Sequence[Sequence[float]], what: str) -> NDArray[np.float64]:
    a = np.asarray(src, dtype=np.float64)
    b = np.asarray(dst, dtype=np.float64)
    centred = b - b.mean(axis=0)
    if len(a) < 4 or np.linalg.matrix_rank(centred, tol=1e-6 * (1 + np.abs(b).max())) < 2:
        raise ProfileFitError(f"{what}: need four or more points, not all on one line")
    h, _ = cv2.findHomography(a, b, 0)
    if h is None:
        raise ProfileFitError(f"{what}: no homography fits them (are two points the same?)")
    out: NDArray[np.float64] = np.asarray(h, dtype=np.float64)
    out = out / out[2, 2]
    return out


def _upright(h: NDArray[np.float64], px: Sequence[tuple[float, float]]) -> NDArray[np.float64]:
    """``h`` turned by a multiple of 90 degrees so that the board's x runs most nearly along the image's x.

    A profile's coordinates are the board as the camera sees it (origin at
    its top-left); the grid's own frame may be the board turned over.
    """
    centre = np.mean(np.asarray(px, dtype=np.float64), axis=0)
    inv = np.linalg.inv(h)
    a = np.asarray(_apply(h, centre))
    x_dir = np.subtract(_apply(inv, a + np.array([1.0, 0.0])), centre)
    y_dir = np.subtract(_apply(inv, a + np.array([0.0, 1.0])), centre)
    # Image directions of the board's +x, +y, -x, -y: pick the one nearest image +x as the new +x.
    turns = [x_dir, y_dir, -x_dir, -y_dir]
    k = int(np.argmax([t[0] / np.linalg.norm(t) for t in turns]))
    # New (x, y) = old turned: +x <- turns[k].
    rot = {0: [[1, 0], [0, 1]], 1: [[0, 1], [-1, 0]], 2: [[-1, 0], [0, -1]], 3: [[0, -1], [1, 0]]}[k]
    r = np.eye(3)
    r[:2, :2] = rot
    out: NDArray[np.float64] = r @ h
    return out


def _grid_homography(
    code: Sequence[HolePoint], hole_pitch: float | None, row_pitch: float | None, notes: list[str]
) -> NDArray[np.float64]:
    """Image -> board mm from the code holes' even grid (x along the rows, y along the holes)."""
    if hole_pitch is None and row_pitch is None:
        raise ProfileFitError(
            "the photo does not show the board's scale: give --hole-pitch-mm or --row-pitch-mm "
            "(or four points with their millimetres)"
        )
    grid = [(p.row - 1.0, p.index - 1.0) for p in code]
    h = _homography([p.px for p in code], grid, "the code holes (at least two rows of two)")
    back = np.array([_apply(h, p.px) for p in code]) - np.array(grid)
    worst = float(np.max(np.abs(back)))
    if worst > GRID_TOLERANCE:
        raise ProfileFitError(
            f"the code holes are not on an even grid (a point is {worst:.2f} pitches off): "
            "check the row and hole numbers, or give millimetres"
        )
    inv = np.linalg.inv(h)
    centre = np.mean(grid, axis=0)
    d_row = np.subtract(_apply(inv, centre + np.array([1.0, 0.0])), _apply(inv, centre))
    d_hole = np.subtract(_apply(inv, centre + np.array([0.0, 1.0])), _apply(inv, centre))
    cos = abs(float(d_row @ d_hole)) / (np.linalg.norm(d_row) * np.linalg.norm(d_hole))
    if row_pitch is None or hole_pitch is None:
        ratio = float(np.linalg.norm(d_row) / np.linalg.norm(d_hole))
        if row_pitch is None:
            assert hole_pitch is not None
            row_pitch = hole_pitch * ratio
        else:
            hole_pitch = row_pitch / ratio
        notes.append(f"Row pitch {row_pitch:.2f} mm and hole pitch {hole_pitch:.2f} mm (one given, one from the photo).")
        if cos > 0.1:
            logger.warning(
                "the photo is oblique (rows and holes meet at %.0f degrees in it): the pitch not given is "
                "only approximate; give both --row-pitch-mm and --hole-pitch-mm", math.degrees(math.acos(cos))
            )
    # Keep the board as the camera sees it (no mirror): flip y when the grid runs the other way.
    mirror = float(d_row[0] * d_hole[1] - d_row[1] * d_hole[0]) < 0
    scale = np.diag([row_pitch, -hole_pitch if mirror else hole_pitch, 1.0])
    return scale @ h


def _fit_geometry(
    points: Sequence[HolePoint],
    mm: dict[HolePoint, tuple[float, float]],
    n_holes: int,
    base: BoardProfile | None,
) -> tuple[dict[str, Any], float]:
    """Least squares: code(r, j) = O + (r-1) S + h_j (h_1 = 0), key(r, k) = O + (r-1) S + q_k, secret(j) = T + h_j."""
    keys = sorted({p.index for p in points if p.kind == "key"})
    # Unknowns (x and y alike): O, S, h_2..h_n, q_k..., T.
    col = {"O": 0, "S": 1}
    for j in range(2, n_holes + 1):
        col[f"h{j}"] = len(col)
    for k in keys:
        col[f"q{k}"] = len(col)
    has_secret = any(p.kind == "secret" for p in points)
    if has_secret:
        col["T"] = len(col)
    rows_a: list[NDArray[np.float64]] = []
    rhs: list[tuple[float, float]] = []
    for p in points:
        a = np.zeros(len(col))
        if p.kind == "secret":
            a[col["T"]] = 1
        else:
            a[col["O"]] = 1
            a[col["S"]] = p.row - 1
        if p.kind != "key" and p.index > 1:
            a[col[f"h{p.index}"]] = 1
        if p.kind == "key":
            a[col[f"q{p.index}"]] = 1
        rows_a.append(a)
        rhs.append(mm[p])
    design = np.array(rows_a)
    target = np.array(rhs)
    seen = np.abs(design).sum(axis=0) > 0
    fixed = {n for n, c in col.items() if not seen[c]}
    solvable = [c for c in range(len(col)) if seen[c]]
    sol_part, *_ = np.linalg.lstsq(design[:, solvable], target, rcond=None)
    if np.linalg.matrix_rank(design[:, solvable]) < len(solvable):
        raise ProfileFitError("the points do not pin the geometry down: give the code holes of at least two rows, hole 1 among them")
    sol = np.full((len(col), 2), np.nan)
    sol[solvable] = sol_part
    resid = float(np.sqrt(np.mean(np.sum((design[:, solvable] @ sol_part - target) ** 2, axis=1))))
    origin, step = sol[col["O"]], sol[col["S"]]
    offsets = [np.zeros(2)] + [sol[col[f"h{j}"]] for j in range(2, n_holes + 1)]
    missing = [f"hole {j}" for j in range(2, n_holes + 1) if f"h{j}" in fixed]
    if missing:
        raise ProfileFitError(f"no point of code {', '.join(missing)} in any row: every hole number must appear once")
    geometry: dict[str, Any] = {"row_1_mm": origin, "row_step_mm": step, "hole_offsets_mm": offsets}
    if keys:
        geometry["key_offsets_mm"] = [sol[col[f"q{k}"]] for k in keys]
    elif base is not None:
        geometry["key_offsets_mm"] = _from_base(base, base.key_centres_mm(1), step, offsets)
    else:
        raise ProfileFitError("no key holes given: give the key holes of one row (or --base PROFILE)")
    if has_secret:
        geometry["secret_mm"] = sol[col["T"]]
    elif base is not None:
        geometry["secret_mm"] = origin + _from_base(base, base.secret_centres_mm()[:1], step, offsets)[0]
    else:
        raise ProfileFitError("no secret holes given: give the secret row's holes (or --base PROFILE)")
    return geometry, resid


def _from_base(
    base: BoardProfile, where: Sequence[tuple[float, float]], step: NDArray[np.float64], offsets: Sequence[NDArray[np.float64]]
) -> list[NDArray[np.float64]]:
    """Positions of the base profile relative to its row 1 hole 1, turned into this fit's frame.

    Each is split into its parts along the base's rows and along its
    holes, and rebuilt from this fit's row and hole directions (the two
    frames may be turned or mirrored against each other).
    """
    hole1 = np.array(base.hole_centre_mm(1, 1))

    def axes(row_dir: NDArray[np.float64], hole_dir: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.column_stack([row_dir / np.linalg.norm(row_dir), hole_dir / np.linalg.norm(hole_dir)])

    base_axes = axes(np.array(base.row_step_mm), np.subtract(base.hole_offsets_mm[-1], base.hole_offsets_mm[0]))
    fit_axes = axes(step, np.asarray(offsets[-1]) - np.asarray(offsets[0]))
    return [fit_axes @ np.linalg.solve(base_axes, np.subtract(w, hole1)) for w in where]


def _profile_table(
    name: str,
    n_rows: int,
    n_holes: int,
    g: dict[str, Any],
    base: BoardProfile | None,
    size_mm: tuple[float, float] | None,
    margin_mm: float | None,
    *,
    h_from_mm: bool,
) -> dict[str, Any]:
    origin = np.asarray(g["row_1_mm"])
    step = np.asarray(g["row_step_mm"])
    hole_off = [np.asarray(o) for o in g["hole_offsets_mm"]]
    key_off = [np.asarray(o) for o in g["key_offsets_mm"]]
    secret = np.asarray(g["secret_mm"])
    pitch_h = min((float(np.linalg.norm(b - a)) for a, b in itertools.pairwise(hole_off)), default=10.0)
    pitch_r = float(np.linalg.norm(step))
    code_d = base.code_hole_diameter_mm if base else round(0.72 * min(pitch_h, pitch_r), 1)
    key_spacing = min(
        (float(np.linalg.norm(a - b)) for i, a in enumerate(key_off) for b in key_off[i + 1 :]), default=code_d
    )
    key_d = base.key_hole_diameter_mm if base else round(min(0.55 * key_spacing, 0.6 * code_d), 1)
    holes_all = [origin + r * step + o for r in range(n_rows) for o in (*hole_off, *key_off)]
    holes_all += [secret + o for o in hole_off]
    pts = np.array(holes_all)
    margin = margin_mm if margin_mm is not None else code_d
    if h_from_mm and base is not None and size_mm is None:
        shift = np.zeros(2)
        size = np.array(base.size_mm, dtype=np.float64)
    else:
        lo, hi = pts.min(axis=0) - margin, pts.max(axis=0) + margin
        size = hi - lo if size_mm is None else np.array(size_mm, dtype=np.float64)
        shift = -(lo + hi) / 2 + size / 2
    layout = _key_layout(key_off)

    def pt(v: NDArray[np.float64]) -> list[float]:
        return [round(float(v[0]), 3), round(float(v[1]), 3)]

    data: dict[str, Any] = {
        "name": name,
        "description": f"{name}: fitted from a photo by pegwatch profile",
        "rows": n_rows,
        "holes": n_holes,
        "key_layout": layout,
        "size_mm": pt(size),
        "code_hole_diameter_mm": code_d,
        "key_hole_diameter_mm": key_d,
        "palette": list(base.palette if base else DEFAULT_PALETTE),
        "blanks": base.blanks if base else False,
        "right_place_key": base.right_place_key if base else "black",
        "right_colour_key": base.right_colour_key if base else "white",
        "aruco_dictionary": base.aruco_dictionary if base else "DICT_4X4_50",
        "plastic_regions_mm": [list(r) for r in base.plastic_regions_mm] if base and h_from_mm else [],
        "geometry": {
            "row_1_mm": pt(origin + shift),
            "row_step_mm": pt(step),
            "hole_offsets_mm": [pt(o) for o in hole_off],
            "key_offsets_mm": [pt(o) for o in key_off],
            "secret_mm": pt(secret + shift),
        },
        "_shift": [float(shift[0]), float(shift[1])],
    }
    if base is not None:
        # The peg heads stand as on the base board (profiles that know it).
        for key in ("peg_head_height_mm", "key_head_height_mm", "peg_head_shape"):
            value = getattr(base, key, None)
            if value is not None:
                data[key] = value
    if base is not None and h_from_mm and base.markers:
        data["markers"] = [{"id": m.id, "centre_mm": list(m.centre_mm), "size_mm": m.size_mm} for m in base.markers]
    return data


def _key_layout(key_off: Sequence[NDArray[np.float64]]) -> str:
    n = len(key_off)
    if n == 5:
        return "1x5"
    if n != 4:
        raise ProfileFitError(f"{n} key holes per row: a profile has 4 (2x2 or 1x4) or 5 (1x5)")
    k = np.array(key_off)
    spread = np.ptp(k, axis=0)
    long_axis = int(np.argmax(spread))
    along = np.sort(k[:, long_axis])
    # A 2x2 block has two pairs along each axis; a 1x4 line, four distinct steps.
    gaps = np.diff(along)
    return "2x2" if gaps[1] > 2 * max(gaps[0], gaps[2], 1e-6) else "1x4"
