"""Real photos of physical boards (the development set in ../shared/photos): read, or refused with a reason.

The set is not part of the project (see its README); these tests skip when
it is absent. They run what ``benchmarks/photos.py`` runs and hold its hard
lines: no photo is accused falsely, and every photo is read or refused with
a reason a person can act on.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PHOTOS = Path(os.environ.get("PEGWATCH_PHOTOS", str(ROOT.parent / "shared" / "photos")))

pytestmark = pytest.mark.skipif(
    not (PHOTOS / "index.json").is_file(), reason=f"the real photo set is not here ({PHOTOS}/index.json)"
)


@pytest.fixture(scope="module")
def photos():
    from pegwatch.simulation.pbr.photos import run_photos

    return run_photos(PHOTOS)


def test_every_photo_is_read_or_refused_with_a_reason(photos):
    results, summary = photos
    index = json.loads((PHOTOS / "index.json").read_text(encoding="utf-8"))
    assert summary["photos"] == len([e for e in index if isinstance(e, dict) and "file" in e])
    for r in results:
        assert r.status in ("read", "refused"), r.file
        if r.status == "refused":
            assert len(r.reason.strip()) > 5, f"{r.file} refused without a reason"


def test_no_photo_is_accused_falsely(photos):
    results, summary = photos
    assert summary["false_accusations"] == 0, [(r.file, r.accused_rows) for r in results if r.false_accusation]


def test_the_photo_with_hole_points_is_read_as_its_truth_where_confident(photos):
    results, _ = photos
    with_points = [r for r in results if r.how == "corners"]
    for r in with_points:
        if r.status == "read":
            assert r.holes_compared + r.holes_uncertain > 0
            assert r.hole_errors <= max(1, r.holes_compared // 20), f"{r.file}: {r.hole_errors} of {r.holes_compared}"


def test_a_calibrated_board_photographed_otherwise_is_found_by_its_look(photos):
    """The same board from another camera, or the photo cut out and rescaled (``same_as`` a photo with
    hole points): best effort finds it by the calibration's picture of it, and reads it as its truth."""
    results, _ = photos
    index = {e["file"]: e for e in json.loads((PHOTOS / "index.json").read_text(encoding="utf-8"))}
    calibrated = {f for f, e in index.items() if isinstance(e.get("hole_points_mm_to_px"), dict)}
    others = [r for r in results if index[r.file].get("same_as") in calibrated]
    if not others:
        pytest.skip("no photo of a calibrated board taken otherwise in this set")
    for r in others:
        assert r.status == "read" and r.how == "best effort", f"{r.file}: {r.reason}"
        assert r.holes_compared > 0 and r.hole_errors <= max(1, r.holes_compared // 20), r.file


def test_the_benchmark_ends_with_one_json_line(photos, monkeypatch, capsys):
    """benchmarks/photos.py prints one line per photo and ends with its JSON (the reading itself is shared)."""
    spec = importlib.util.spec_from_file_location("photos_benchmark", ROOT / "benchmarks" / "photos.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    monkeypatch.setattr(bench, "run_photos", lambda folder: (photos[0], dict(photos[1])))
    log = logging.getLogger("pegwatch")
    level = log.level
    try:
        assert bench.main(["--photos", str(PHOTOS)]) == 0
    finally:
        log.setLevel(level)  # the script quiets pegwatch's logging; later tests read it
    lines = capsys.readouterr().out.strip().splitlines()
    data = json.loads(lines[-1])
    for key in ("photos", "photos_read", "photos_refused", "false_accusations", "hole_errors", "holes_compared"):
        assert key in data, key
    assert data["photos_read"] + data["photos_refused"] == data["photos"]
    assert len(lines) == data["photos"] + 2
