"""The hard benchmark set: rendered boards with ground truth, deterministic by seed.

A *table* is one board profile with one set of pegs (the renderer varies the
peg colours per set) and a few easy calibration photos of known contents,
as an installer would take them. Its *cases* are hard photos of games in
progress at that table: tilt, lens distortion, light gradients and casts,
exposure changes, glare, shadows, noise, blur, JPEG, hands over rows, loose
pegs, half-covered markers. Half the boards are marked correctly and half
carry one or two injected mis-marks.

Everything is a pure function of the seed, so the benchmark, the tests and
anyone re-running them see the same boards.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pegwatch.simulation.render import (
    BoardContents,
    Conditions,
    Rendered,
    random_conditions,
    random_contents,
    render,
)
from pegwatch.vision.profile import BoardProfile, load_profile
from pegwatch.vision.reading import EMPTY, BoardReading

logger = logging.getLogger(__name__)

PROFILES = ("invicta-12x4", "lego-10x4", "super-12x5")

#: Key markings cycled through the calibration rows so that every key class
#: (right place, right colour, empty) is seen several times.
_CAL_KEYS = ((1, 1), (2, 0), (0, 2), (0, 0), (1, 2), (3, 0), (0, 1), (2, 2), (1, 0), (0, 3))


@dataclass(frozen=True)
class Table:
    """One simulated table: a board profile, its pegs and its calibration photos."""

    profile: BoardProfile
    peg_set: int
    calibration: tuple[Rendered, ...]

    def calibration_truths(self) -> list[dict[str, Any]]:
        """The truth records of the calibration photos."""
        return [truth_record(r.contents, self.profile) for r in self.calibration]


@dataclass(frozen=True)
class Case:
    """One hard photo with its truth."""

    table: Table
    index: int
    rendered: Rendered

    @property
    def mismarked_rows(self) -> frozenset[int]:
        """Rows marked wrongly on purpose (empty for a correctly marked board)."""
        return self.rendered.contents.mismarked_rows


def truth_record(contents: BoardContents, profile: BoardProfile) -> dict[str, Any]:
    """The game-record JSON of what is on the board (the calibration truth format).

    Rows up to the last played one are listed; a row with pegs but no key
    pegs yet has black = white = 0. The secret is listed only when the
    shield is open.
    """
    rows: list[dict[str, Any]] = []
    last = max((i for i, g in enumerate(contents.guesses) if g is not None), default=-1)
    for i in range(last + 1):
        g = contents.guesses[i]
        k = contents.keys[i] or (0, 0)
        rows.append(
            {
                "guess": list(g) if g is not None else [EMPTY] * profile.holes,
                "black": int(k[0]),
                "white": int(k[1]),
            }
        )
    secret = list(contents.secret) if contents.secret is not None and contents.shield_open else None
    return {"rules": "mso", "secret": secret, "rows": rows, "timeout": None}


def truth_reading(contents: BoardContents, profile: BoardProfile) -> BoardReading:
    """The truth as a :class:`BoardReading` (all confidences 1)."""
    return BoardReading.from_record(
        truth_record(contents, profile),
        holes=profile.holes,
        board_rows=profile.rows,
        keys_per_row=profile.key_holes,
        where=f"truth ({profile.name})",
    )


def calibration_contents(profile: BoardProfile, variant: int, *, shield_open: bool) -> BoardContents:
    """A board that shows every palette colour, empty holes and every key class.

    All rows but the last two hold pegs, the colours rotating through the
    palette (shifted by ``variant``); the key markings cycle through a fixed
    list (a calibration truth need not be a legal game, only what is there).
    """
    pal = list(profile.palette)
    played = profile.rows - 2
    guesses: list[tuple[str, ...] | None] = []
    keys: list[tuple[int, int] | None] = []
    for r in range(played):
        guesses.append(tuple(pal[(r * profile.holes + j + variant) % len(pal)] for j in range(profile.holes)))
        b, w = _CAL_KEYS[(r + variant) % len(_CAL_KEYS)]
        if b + w > profile.key_holes:
            b, w = min(b, profile.key_holes), 0
        keys.append((b, w))
    pad = profile.rows - played
    secret = tuple(pal[(j + 3 + variant) % len(pal)] for j in range(profile.holes))
    return BoardContents(
        guesses=tuple(guesses) + (None,) * pad,
        keys=tuple(keys) + (None,) * pad,
        secret=secret,
        shield_open=shield_open,
    )


def make_table(profile: BoardProfile | str, *, peg_set: int, images: int = 3, seed: int = 0) -> Table:
    """A table with ``images`` easy calibration photos (the last one with the shield closed).

    The photos share one camera pose, as at a real table, and differ in
    what is on the board and in sensor noise.
    """
    p = load_profile(profile) if isinstance(profile, str) else profile
    shots: list[Rendered] = []
    # The installer's camera is fixed: one pose for every calibration photo.
    cond = random_conditions(np.random.default_rng([seed, peg_set, 7]), difficulty="easy", profile=p, peg_set=peg_set)
    for i in range(images):
        rng = np.random.default_rng([seed, peg_set, 7, i])
        contents = calibration_contents(p, i, shield_open=(i < images - 1 or images == 1))
        shots.append(render(p, contents, cond, seed=int(rng.integers(1 << 31))))
    return Table(p, peg_set, tuple(shots))


def hard_case(table: Table, index: int, *, seed: int = 0, conditions: Conditions | None = None) -> Case:
    """Hard photo number ``index`` at ``table``: odd indices carry injected mis-marks."""
    p = table.profile
    rng = np.random.default_rng([seed, table.peg_set, 11, index])
    mismarked = index % 2 == 1
    rows_played = int(rng.integers(2 if mismarked else 1, p.rows + 1))
    contents = random_contents(
        p,
        rng,
        rows_played=rows_played,
        mismark_rows=int(rng.integers(1, 3)) if mismarked and rows_played > 2 else int(mismarked),
        last_row_marked=True if mismarked else None,
    )
    cond = conditions or random_conditions(rng, difficulty="hard", profile=p, peg_set=table.peg_set)
    return Case(table, index, render(p, contents, cond, seed=int(rng.integers(1 << 31))))


def boards_per_table(boards: int, tables: int) -> list[int]:
    """``boards`` split as evenly as can be over ``tables``, the first tables taking one more."""
    per = [boards // tables] * tables
    for t in range(boards % tables):
        per[t] += 1
    return per


def hard_set(
    *,
    boards_per_profile: int = 100,
    tables_per_profile: int = 2,
    profiles: Sequence[str] = PROFILES,
    seed: int = 0,
) -> Iterator[tuple[Table, Iterator[Case]]]:
    """The benchmark's tables, each with its lazily rendered hard cases."""
    for pi, name in enumerate(profiles):
        p = load_profile(name)
        for t, n in enumerate(boards_per_table(boards_per_profile, tables_per_profile)):
            table = make_table(p, peg_set=1000 * (seed + 1) + 10 * pi + t, seed=seed)
            yield table, _cases(table, n, seed)


def _cases(table: Table, n: int, seed: int) -> Iterator[Case]:
    for i in range(n):
        yield hard_case(table, i, seed=seed)
