"""Shared fixtures for the vision tests: simulated tables and their calibrations.

Rendering and calibrating take a moment, so tables are session-wide.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import cv2
import pytest

from pegwatch.simulation.hardset import Table, make_table
from pegwatch.simulation.pbr.testbed import PbrBoard, PbrTable, load_cached
from pegwatch.simulation.pbr.testbed import make_table as make_pbr_table
from pegwatch.vision.calibrate import calibrate, truth_from_record
from pegwatch.vision.calibration import Calibration
from pegwatch.vision.reader import BoardReader
from pegwatch.vision.reading import BoardReading


def _calibrate(table: Table, **kw) -> Calibration:
    p = table.profile
    truths = [truth_from_record(t, p, where="truth") for t in table.calibration_truths()]
    return calibrate([r.image for r in table.calibration], truths, p, **kw)


@pytest.fixture(autouse=True, scope="session")
def _one_core():
    cv2.setNumThreads(1)


@pytest.fixture(scope="session")
def invicta_table() -> Table:
    return make_table("invicta-12x4", peg_set=4242, seed=5)


@pytest.fixture(scope="session")
def invicta_cal(invicta_table) -> Calibration:
    return _calibrate(invicta_table)


@pytest.fixture(scope="session")
def super_table() -> Table:
    return make_table("super-12x5", peg_set=777, seed=5)


@pytest.fixture(scope="session")
def super_cal(super_table) -> Calibration:
    return _calibrate(super_table)


@pytest.fixture(scope="session")
def lego_table() -> Table:
    return make_table("lego-10x4", peg_set=99, seed=5)


@pytest.fixture(scope="session")
def lego_cal(lego_table) -> Calibration:
    return _calibrate(lego_table)


@pytest.fixture
def calibrate_table():
    return _calibrate


PBR_DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "pbr"


@pytest.fixture(scope="session")
def pbr() -> tuple[PbrTable, Calibration, list[PbrBoard]]:
    """The cached physically based table (tests/data/pbr): the table, its calibration, its hard boards."""
    table = make_pbr_table("invicta-12x4", peg_set=500, seed=0, cache=PBR_DATA)
    p = table.profile
    truths = [truth_from_record(b.truth, p, where="calibration truth") for b in table.calibration]
    folder = PBR_DATA / "invicta-12x4-s0-p500"
    cases = []
    for js in sorted(folder.glob("case-*.json"), key=lambda q: int(q.stem.split("-")[1])):
        board = load_cached(folder, js.stem, json.loads(js.read_text())["pbr"]["seed"])
        assert board is not None, f"{js} is stale: re-render the cache"
        cases.append(board)
    return table, calibrate([b.image for b in table.calibration], truths, p), cases


@pytest.fixture
def pbr_reads(pbr) -> Callable[[], Iterator[tuple[PbrBoard, BoardReading, BoardReading]]]:
    """Each cached physically based board read by a fresh reader, in order, with its truth:
    (board, reading, truth). Called when iterated, so a test's patches made before apply."""
    table, cal, cases = pbr
    p = table.profile

    def reads() -> Iterator[tuple[PbrBoard, BoardReading, BoardReading]]:
        for i, board in enumerate(cases):
            yield board, BoardReader(p, cal).read(board.image, at_ns=i), truth_from_record(board.truth, p, where="truth")

    return reads


@pytest.fixture
def pbr_case() -> Callable[[int, int, str], tuple[BoardReading, BoardReading]]:
    """One cached physically based board of another table (tests/data/pbr), read with that table's
    calibration by a fresh reader: ``pbr_case(seed, peg_set, stem)`` gives (truth, reading)."""

    def read(seed: int, peg_set: int, stem: str) -> tuple[BoardReading, BoardReading]:
        table = make_pbr_table("invicta-12x4", peg_set=peg_set, seed=seed, cache=PBR_DATA)
        p = table.profile
        truths = [truth_from_record(b.truth, p, where="calibration truth") for b in table.calibration]
        folder = PBR_DATA / f"invicta-12x4-s{seed}-p{peg_set}"
        board = load_cached(folder, stem, json.loads((folder / f"{stem}.json").read_text())["pbr"]["seed"])
        assert board is not None, f"{folder / stem} is stale: re-render it"
        reading = BoardReader(p, calibrate([b.image for b in table.calibration], truths, p)).read(board.image, at_ns=1)
        return truth_from_record(board.truth, p, where=stem), reading

    return read


def _no_hole_misread(truth: BoardReading, reading: BoardReading) -> None:
    for t, r in zip(truth.rows, reading.rows, strict=True):
        for i, (th, rh) in enumerate(zip(t.holes, r.holes, strict=True)):
            assert not rh.is_certain or rh.colour == th.colour, f"row {t.row} hole {i + 1}: {rh.colour} over {th.colour}"


@pytest.fixture
def no_hole_misread() -> Callable[[BoardReading, BoardReading], None]:
    """``no_hole_misread(truth, reading)`` asserts that every hole read surely is read as the truth has it."""
    return _no_hole_misread
