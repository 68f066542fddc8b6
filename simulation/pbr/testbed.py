"""Rendered boards with their truth, tables of them, and the cache on disk.

:func:`render_board` renders one board with Mitsuba 3 and develops it into
a JPEG; its truth is the hard set's record (``pegwatch judge`` JSON, see
:func:`pegwatch.simulation.hardset.truth_record`) plus a ``"pbr"`` object:
which rows a hand, a sleeve or a lamp covers, whether the secret is
shielded or covered, the light's temperature, the blur, px/mm and the rest
of the conditions.

A :class:`PbrTable` is one board with one set of pegs, calibrated from easy
photos under neutral light with the camera of the table; its cases are hard
photos, odd ones carrying injected mis-marks. Everything follows from the
seed; the cache (``cal-N.jpg``/``case-N.jpg`` with ``.json`` beside) holds
the JPEG bytes exactly as developed.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pegwatch.simulation.hardset import boards_per_table, calibration_contents, truth_record
from pegwatch.simulation.pbr.camera import Camera
from pegwatch.simulation.pbr.conditions import PbrConditions, random_conditions
from pegwatch.simulation.pbr.scene import build_scene
from pegwatch.simulation.pbr.sensor import decode_jpeg, develop
from pegwatch.simulation.render.scene import BoardContents, random_contents
from pegwatch.vision.profile import BoardProfile, load_profile

logger = logging.getLogger(__name__)

#: Bumped whenever a change makes the same seed render a different board (the cache is then stale).
RENDERER_VERSION = 2
#: Bumped whenever what counts as covering a hole changes: a cached board's truth is then
#: worked out again from its scene, which needs no rendering (:func:`hard_case`).
#: 2: a lamp between the camera and a hole covers it, as a hand does.
COVER_TRUTH_VERSION = 2
#: What a covering object's shapes are named in the scene: hands, their sleeves and the lamps
#: (a lamp hung between the camera and the board hides it as a sleeve does).
COVERING_SHAPES = ("hand", "light_")
LIGHT_BANDS = ((2700, 3500), (3500, 4500), (4500, 5500), (5500, 6500))
#: A board counts as blurred from this defocus (Gaussian sigma, px) or camera-shake smear (px):
#: about what a 1/30 s exposure of a hand-steadied or vibrating camera gives.
BLUR_SIGMA_PX = 1.0
BLUR_MOTION_PX = 3.0
LOW_PX_PER_MM = 2.5


def light_band(kelvin: float) -> str:
    """The band a light temperature falls in, as in the benchmark's keys: "2700_3500k"."""
    for lo, hi in LIGHT_BANDS:
        if kelvin < hi:
            return f"{lo}_{hi}k"
    lo, hi = LIGHT_BANDS[-1]
    return f"{lo}_{hi}k"


@dataclass(frozen=True)
class PbrBoard:
    """One rendered photo: the decoded BGR frame, its JPEG bytes and its truth record."""

    image: NDArray[np.uint8]
    jpeg: bytes
    truth: dict[str, Any]
    seconds: float = 0.0

    @property
    def meta(self) -> dict[str, Any]:
        """The ``"pbr"`` part of the truth: conditions and what covers what."""
        out: dict[str, Any] = self.truth["pbr"]
        return out


def _mitsuba() -> Any:
    import mitsuba as mi

    if mi.variant() != "scalar_rgb":
        # The CPU variant that needs no LLVM: drjit's LLVM backend crashes on some libLLVM builds.
        mi.set_variant("scalar_rgb")
        # Mitsuba warns about the frames it builds for capsules itself; only errors matter here.
        mi.set_log_level(mi.LogLevel.Error)
    return mi


def render_board(
    profile: BoardProfile, contents: BoardContents, c: PbrConditions, *, seed: int, extra: dict[str, Any] | None = None
) -> PbrBoard:
    """Render ``contents`` on ``profile``'s board under ``c``; deterministic in ``seed``."""
    mi = _mitsuba()
    started = time.perf_counter()
    contents = replace(contents, shield_open=not c.shield_closed)
    cam = Camera.of(c)
    margin = cam.render_margin()
    scene = _load_scene(mi, profile, contents, c, cam, seed)
    light = np.array(mi.render(scene, seed=seed & 0x7FFFFFFF, spp=c.spp), dtype=np.float32)[:, :, :3]
    jpeg, frame = develop(np.ascontiguousarray(light), cam, c, margin, np.random.default_rng([seed, 5]))
    truth = truth_record(contents, profile)
    corners = cam.project(np.array([[x, y, 0.0] for x, y in profile.corners_mm()]))
    truth["pbr"] = {
        "renderer_version": RENDERER_VERSION,
        "profile": profile.name,
        "seed": seed,
        "secret": list(contents.secret) if contents.secret is not None else None,
        "shield_closed": c.shield_closed,
        **_cover_truth(mi, scene, profile, c, cam),
        "hands": [{"kind": h.kind, "over": h.target, "height_mm": round(h.height_mm, 1)} for h in c.hands],
        "mismarked_rows": sorted(contents.mismarked_rows),
        "light_kelvin": round(c.light_kelvin),
        "light_band": light_band(c.light_kelvin),
        "fill_kelvin": round(c.fill_kelvin),
        "fill_ratio": round(c.fill_ratio, 3),
        "wb_kelvin": round(c.wb_kelvin),
        "defocus_px": round(c.defocus_px, 3),
        "motion_px": round(c.motion_px, 3),
        "blurred": c.defocus_px >= BLUR_SIGMA_PX or c.motion_px >= BLUR_MOTION_PX,
        "px_per_mm": round(cam.px_per_mm(profile), 3),
        "tilt_deg": round(c.tilt_deg, 2),
        "distance_mm": round(c.distance_mm, 1),
        "k1": round(c.k1, 4),
        "k2": round(c.k2, 4),
        "board_lift_mm": round(c.board_lift_mm, 2),
        "exposure": round(c.exposure, 3),
        "photons": round(c.photons),
        "demosaic": c.demosaic,
        "jpeg_quality": c.jpeg_quality,
        "spp": c.spp,
        "size": [c.width, c.height],
        "board_corners_px": [[round(float(x), 2), round(float(y), 2)] for x, y in corners],
        **(extra or {}),
    }
    return PbrBoard(frame, jpeg, truth, time.perf_counter() - started)


def _load_scene(mi: Any, profile: BoardProfile, contents: BoardContents, c: PbrConditions, cam: Camera, seed: int) -> Any:
    """The Mitsuba scene of ``contents`` under ``c``, the shield as ``c`` has it: the one
    rendered, and the one the cover truth is ray cast in."""
    contents = replace(contents, shield_open=not c.shield_closed)
    return mi.load_dict(build_scene(profile, contents, c, cam, cam.render_margin(), seed=seed))


def _cover_truth(mi: Any, scene: Any, p: BoardProfile, c: PbrConditions, cam: Camera) -> dict[str, Any]:
    """The truth's keys that say what covers what, in ``scene`` as built for the board."""
    covered, secret_covered = _covered(mi, scene, p, c, cam)
    return {"covered_rows": covered, "secret_covered": secret_covered, "cover_truth": COVER_TRUTH_VERSION}


def with_cover_truth(board: PbrBoard, profile: BoardProfile, contents: BoardContents, c: PbrConditions, *, seed: int) -> PbrBoard:
    """``board`` (rendered from ``contents`` under ``c`` with ``seed``) with its cover truth worked out
    as :data:`COVER_TRUTH_VERSION` says: the scene is built again and ray cast, not rendered."""
    mi = _mitsuba()
    cam = Camera.of(c)
    scene = _load_scene(mi, profile, contents, c, cam, seed)
    truth = dict(board.truth)
    truth["pbr"] = {**board.meta, **_cover_truth(mi, scene, profile, c, cam)}
    return replace(board, truth=truth)


def _covered(mi: Any, scene: Any, p: BoardProfile, c: PbrConditions, cam: Camera) -> tuple[list[int], bool]:
    """Rows (and the secret) where a hand, a sleeve or a lamp stands between the camera and a hole or peg head."""
    top = c.peg_height_mm + 0.45 * p.code_hole_diameter_mm
    eye = cam.centre

    def hidden(points: Sequence[tuple[float, float]]) -> bool:
        for x, y in points:
            for z in (0.0, -top):
                target = np.array([x, y, z])
                d = target - eye
                dist = float(np.linalg.norm(d))
                ray = mi.Ray3f(mi.Point3f(*[float(v) for v in eye]), mi.Vector3f(*[float(v) for v in d / dist]))
                si = scene.ray_intersect(ray)
                if si.is_valid() and float(si.t) < dist - 0.3 and str(si.shape.id()).startswith(COVERING_SHAPES):
                    return True
        return False

    rows = [r for r in range(1, p.rows + 1) if hidden(p.hole_centres_mm(r) + p.key_centres_mm(r))]
    return rows, hidden(p.secret_centres_mm())


# --- tables, cases and the cache --------------------------------------------------


@dataclass(frozen=True)
class PbrTable:
    """One board with one set of pegs, and its calibration photos (the last with the shield closed)."""

    profile: BoardProfile
    peg_set: int
    seed: int
    calibration: tuple[PbrBoard, ...]


@dataclass(frozen=True)
class PbrCase:
    """Hard photo number ``index`` at ``table``."""

    table: PbrTable
    index: int
    board: PbrBoard


def table_conditions(profile: BoardProfile, peg_set: int, seed: int, *, spp: int) -> PbrConditions:
    """The installer's calibration conditions: the table's camera, neutral light, nothing in the way."""
    return random_conditions(np.random.default_rng([seed, peg_set, 31]), profile, hard=False, peg_set=peg_set, spp=spp)


def case_inputs(profile: BoardProfile, peg_set: int, seed: int, index: int, *, spp: int) -> tuple[BoardContents, PbrConditions, int]:
    """What hard case ``index`` shows, its conditions and its render seed (odd cases are mis-marked)."""
    rng = np.random.default_rng([seed, peg_set, 37, index])
    mismarked = index % 2 == 1
    played = int(rng.integers(2 if mismarked else 1, profile.rows + 1))
    contents = random_contents(
        profile,
        rng,
        rows_played=played,
        mismark_rows=int(rng.integers(1, 3)) if mismarked and played > 2 else int(mismarked),
        last_row_marked=True if mismarked else None,
    )
    cond = random_conditions(rng, profile, hard=True, peg_set=peg_set, spp=spp)
    return contents, cond, int(rng.integers(1 << 31))


def load_cached(folder: Path, stem: str, seed: int) -> PbrBoard | None:
    """The cached board ``stem`` of ``folder`` if it is there and was rendered from ``seed`` by this renderer."""
    jpg, js = folder / f"{stem}.jpg", folder / f"{stem}.json"
    if not (jpg.is_file() and js.is_file()):
        return None
    truth = json.loads(js.read_text(encoding="utf-8"))
    meta = truth.get("pbr", {})
    if meta.get("renderer_version") != RENDERER_VERSION or meta.get("seed") != seed:
        return None
    data = jpg.read_bytes()
    return PbrBoard(decode_jpeg(data), data, truth)


def _save(folder: Path, stem: str, board: PbrBoard) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}.jpg").write_bytes(board.jpeg)
    _save_truth(folder, stem, board)


def _save_truth(folder: Path, stem: str, board: PbrBoard) -> None:
    (folder / f"{stem}.json").write_text(json.dumps(board.truth, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def _cached(folder: Path | None, stem: str, seed: int, make: Any) -> PbrBoard:
    if folder is not None:
        hit = load_cached(folder, stem, seed)
        if hit is not None:
            return hit
    board: PbrBoard = make()
    if folder is not None:
        _save(folder, stem, board)
    return board


def table_folder(cache: Path, profile: BoardProfile, peg_set: int, seed: int) -> Path:
    """Where one table's photos are cached."""
    return cache / f"{profile.name}-s{seed}-p{peg_set}"


def make_table(
    profile: BoardProfile | str, *, peg_set: int, seed: int = 0, images: int = 2, spp: int = 16, cache: Path | None = None
) -> PbrTable:
    """A table and its ``images`` calibration photos, rendered or read from ``cache``."""
    p = load_profile(profile) if isinstance(profile, str) else profile
    folder = table_folder(cache, p, peg_set, seed) if cache is not None else None
    cond = table_conditions(p, peg_set, seed, spp=spp)
    shots: list[PbrBoard] = []
    for i in range(images):
        rseed = int(np.random.default_rng([seed, peg_set, 41, i]).integers(1 << 31))
        contents = calibration_contents(p, i, shield_open=(i < images - 1 or images == 1))
        c = cond.with_(shield_closed=not contents.shield_open and p.shield_mm is not None)
        shots.append(_cached(folder, f"cal-{i}", rseed, lambda c=c, contents=contents, rseed=rseed: render_board(p, contents, c, seed=rseed)))
    return PbrTable(p, peg_set, seed, tuple(shots))


def hard_case(table: PbrTable, index: int, *, spp: int = 8, cache: Path | None = None) -> PbrCase:
    """Hard photo ``index`` at ``table``, rendered or read from ``cache``."""
    p = table.profile
    folder = table_folder(cache, p, table.peg_set, table.seed) if cache is not None else None
    contents, cond, rseed = case_inputs(p, table.peg_set, table.seed, index, spp=spp)
    stem = f"case-{index}"
    board = _cached(folder, stem, rseed, lambda: render_board(p, contents, cond, seed=rseed, extra={"index": index}))
    if board.meta.get("cover_truth") != COVER_TRUTH_VERSION:
        board = with_cover_truth(board, p, contents, cond, seed=rseed)
        if folder is not None:
            _save_truth(folder, stem, board)
    return PbrCase(table, index, board)


def pbr_set(
    *,
    boards_per_profile: int,
    profiles: Sequence[str] = ("invicta-12x4",),
    tables_per_profile: int = 2,
    seed: int = 0,
    spp: int = 8,
    cache: Path | None = None,
    cases: Sequence[int] | None = None,
    cached_only: bool = False,
) -> Iterator[tuple[PbrTable, Iterator[PbrCase]]]:
    """The physically rendered hard set: tables, each with its lazily rendered cases.

    Each table has cases 0..n-1 (the boards split evenly over the tables),
    or the case numbers ``cases``, or with ``cached_only`` the cases its
    ``cache`` folder holds, of ``cases`` if given (nothing is rendered but a
    missing calibration).
    """
    for pi, name in enumerate(profiles):
        p = load_profile(name)
        for t, n in enumerate(boards_per_table(boards_per_profile, tables_per_profile)):
            peg_set = 500 + 10 * pi + t
            if cached_only:
                if cache is None:
                    raise ValueError("cached_only needs a cache folder")
                folder = table_folder(cache, p, peg_set, seed)
                numbers = sorted(int(f.stem.split("-")[1]) for f in folder.glob("case-*.json"))
                if cases is not None:
                    numbers = [i for i in numbers if i in set(cases)]
            else:
                numbers = list(cases) if cases is not None else list(range(n))
            if not numbers:
                continue
            table = make_table(p, peg_set=peg_set, seed=seed, spp=max(spp, 16), cache=cache)
            yield table, (hard_case(table, i, spp=spp, cache=cache) for i in numbers)


def parse_cases(text: str) -> list[int]:
    """Case numbers from "0-9,16,18" (ranges inclusive)."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def truth_secret(board: PbrBoard) -> tuple[str, ...]:
    """The whole secret, shielded or not (what the arbiter reveals at the end)."""
    s = board.meta.get("secret")
    return tuple(s) if s else ()


def is_low_ppm(board: PbrBoard) -> bool:
    """True when the board is below :data:`LOW_PX_PER_MM` in the photo."""
    return float(board.meta["px_per_mm"]) < LOW_PX_PER_MM or math.isnan(float(board.meta["px_per_mm"]))


def main(argv: Sequence[str] | None = None) -> int:
    """Render a cached set: ``python -m pegwatch.simulation.pbr OUT --boards N``."""
    import argparse

    ap = argparse.ArgumentParser(description="render a cached physically based hard set")
    ap.add_argument("out", type=Path)
    ap.add_argument("--boards", type=int, default=12)
    ap.add_argument("--tables", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--profiles", default="invicta-12x4")
    ap.add_argument("--cases", default=None, help='case numbers per table, e.g. "0-9,16,18" (default: --boards split over --tables)')
    args = ap.parse_args(argv)
    for table, cases in pbr_set(
        boards_per_profile=args.boards,
        profiles=tuple(args.profiles.split(",")),
        tables_per_profile=args.tables,
        seed=args.seed,
        cache=args.out,
        cases=parse_cases(args.cases) if args.cases else None,
    ):
        for case in cases:
            print(f"{table.profile.name} peg set {table.peg_set} case {case.index}: {case.board.seconds:.1f} s", flush=True)
    return 0
