"""What the camera read off a board, with how sure it is.

A :class:`BoardReading` is the reader's answer for one frame (or, after the
temporal filter, the accepted answer). Every hole carries a confidence, and
"unknown" and "occluded" are proper answers: the table program never flags a
mis-mark on a row whose status is not ``"ok"``.

``to_record``/``from_record`` convert to and from the game-record JSON shape
of ``pegwatch judge`` (``{"rules", "secret", "rows": [{"guess", "black",
"white"}], "timeout"}``) plus extra keys: per-hole ``confidence``, the row
``status``, the key reading's confidence and status, and the board
``problem``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pegwatch.rules.codes import EMPTY as EMPTY
from pegwatch.rules.codes import OCCLUDED as OCCLUDED
from pegwatch.rules.codes import UNKNOWN as UNKNOWN
from pegwatch.rules.errors import BadInput
from pegwatch.vision.localise.base import MIN_PX_PER_MM as MIN_PX_PER_MM
from pegwatch.vision.localise.base import MIN_SHARPNESS as MIN_SHARPNESS

# The hole vocabulary (EMPTY, UNKNOWN, OCCLUDED) is the rules' own
# (pegwatch.rules.codes), re-exported here beside the row statuses.

ROW_OK = "ok"
ROW_UNKNOWN = "unknown"
ROW_OCCLUDED = "occluded"
ROW_EMPTY = "empty"
ROW_STATUSES = (ROW_OK, ROW_UNKNOWN, ROW_OCCLUDED, ROW_EMPTY)

# What a picture needs for small detail (a key peg) to be read,
# MIN_PX_PER_MM and MIN_SHARPNESS, are the localisation's own figures,
# re-exported here beside the readings that are checked against them.

TRUST_FULL = "full"
TRUST_LOW = "low"
TRUST_LEVELS = (TRUST_FULL, TRUST_LOW)


class ReadingRecordError(BadInput):
    """A reading or truth record (game-record JSON) is malformed."""


@dataclass(frozen=True)
class HoleReading:
    """One hole: a palette colour name, ``"empty"``, ``"unknown"`` or ``"occluded"``.

    ``confidence`` is in [0, 1]: for a colour or ``"empty"`` it is how sure the
    reader is of that answer; for ``"unknown"`` it is the confidence of the
    best (rejected) guess.
    """

    colour: str
    confidence: float
    candidates: tuple[tuple[str, float], ...] = ()
    """For an uncertain hole, the answers the reader could not rule out
    (colour names and ``"empty"``), each with its confidence, best first.
    Empty means "nothing ruled out" for ``"unknown"``/``"occluded"`` and "just
    ``colour``" for a certain hole, unless it is a peg read not quite surely:
    then ``colour`` and what it may still be (:mod:`~pegwatch.vision.could_be`)."""

    @property
    def possible(self) -> tuple[str, ...] | None:
        """The answers this hole may hold: ``(colour,)`` when sure, the
        candidates when some are named, None when it may hold anything."""
        if self.is_certain:
            return tuple(dict.fromkeys([self.colour, *(c for c, _ in self.candidates)]))
        return tuple(c for c, _ in self.candidates) or None

    @property
    def is_certain(self) -> bool:
        """True when the hole was read as a colour or as empty."""
        return self.colour not in (UNKNOWN, OCCLUDED)


@dataclass(frozen=True)
class KeyReading:
    """The key pegs of one row, counted whatever their positions.

    ``status`` is ``"ok"`` (every key hole read confidently), ``"unknown"``
    (at least one key hole is ambiguous: the counts are the reader's best
    guess and must not be judged), ``"occluded"`` or ``"empty"`` (no key peg).
    """

    black: int
    white: int
    empty: int
    confidence: float
    status: str
    black_bounds: tuple[int, int] | None = None
    """When ``status`` is ``"unknown"``: the counts the key holes may hold,
    lowest and highest (None: nothing known). Certain counts need none."""
    white_bounds: tuple[int, int] | None = None

    @property
    def is_certain(self) -> bool:
        """True when the counts can be judged."""
        return self.status in (ROW_OK, ROW_EMPTY)


@dataclass(frozen=True)
class RowReading:
    """One guess row: its code holes and its key pegs.

    ``status``: ``"ok"`` (a complete guess read confidently with its keys),
    ``"unknown"`` (something in the row is uncertain: ask the arbiter, never
    flag), ``"occluded"`` (something covers the row), ``"empty"`` (no peg at
    all).
    """

    row: int
    holes: tuple[HoleReading, ...]
    keys: KeyReading
    status: str

    @property
    def guess(self) -> tuple[str, ...]:
        """The colour names, one per hole (may contain unknown/occluded/empty)."""
        return tuple(h.colour for h in self.holes)


@dataclass(frozen=True)
class BoardReading:
    """The whole board as read from one frame (or as accepted over time).

    ``rows`` holds every row of the profile, row 1 first. ``secret`` is
    ``None`` when the shield hides the secret row. ``problem`` is set when
    the board could not be read at all (e.g. "board moved, recalibrate");
    then every row is unknown. ``at_ns`` is the frame's monotonic stamp.
    ``changed_rows`` is filled by the temporal filter: the rows whose
    accepted value changed with this update. ``row_signatures`` is a small
    per-row appearance summary the temporal filter uses to detect motion;
    it does not take part in equality.
    """

    profile: str
    rows: tuple[RowReading, ...]
    secret: tuple[HoleReading, ...] | None
    problem: str | None
    at_ns: int
    changed_rows: frozenset[int] = frozenset()
    trust: str = "full"
    """``"full"``, or ``"low"`` when the board was read without the
    calibration a verdict needs (best-effort location, colours not all
    learned, ...): a low-trust reading is shown, never used to accuse."""
    row_signatures: tuple[tuple[float, ...], ...] | None = field(
        default=None, compare=False, repr=False
    )
    trust_reasons: tuple[str, ...] = ()
    """Why ``trust`` is ``"low"``, one sentence each."""
    found_by: str | None = None
    """How the board was found: ``"markers"``, ``"corners"`` or
    ``"best-effort"``; None when it was not found (or not said)."""
    px_per_mm: float | None = None
    """Image pixels per board millimetre at the board's centre."""
    sharpness: float | None = None
    """How much of an edge's contrast survives the picture's blur (0..1)."""
    shield: str | None = None
    """What the shield's area showed: ``"open"``, ``"closed"`` or
    ``"covered"`` (None: not said)."""

    @property
    def picture_warnings(self) -> tuple[str, ...]:
        """What is wrong with the picture itself, one sentence each: too few
        pixels per millimetre or too blurred for small detail (a key peg) to
        be read. The colour model still refuses what it cannot tell apart;
        these say why so much may come back "unknown"."""
        out: list[str] = []
        if self.px_per_mm is not None and self.px_per_mm < MIN_PX_PER_MM:
            out.append(f"the board is imaged at {self.px_per_mm:.1f} px/mm, below the {MIN_PX_PER_MM:g} the reader needs")
        if self.sharpness is not None and self.sharpness < MIN_SHARPNESS:
            out.append(f"the picture's sharpness is {self.sharpness:.2f}, below the {MIN_SHARPNESS:g} the reader needs")
        return tuple(out)

    def row(self, number: int) -> RowReading:
        """The reading of row ``number`` (1-based)."""
        return self.rows[number - 1]

    @property
    def played_rows(self) -> tuple[RowReading, ...]:
        """The rows before the first one read as empty.

        Rows are played in order: after a row read as empty no row is
        played yet, whatever lies over it (a shield, a hand), so a row that
        looks covered further on never makes bare key holes before it count
        as a marking.
        """
        last = 0
        for r in self.rows:
            if r.status == ROW_EMPTY:
                break
            last = r.row
        return self.rows[:last]

    def to_record(self, *, rules: str = "mso") -> dict[str, Any]:
        """The game-record dict of ``pegwatch judge`` plus reading extras.

        Rows after the last non-empty row are left out, as in a game record.
        """
        rows: list[dict[str, Any]] = []
        played = self.played_rows
        for i, r in enumerate(played):
            black: int | str | None = r.keys.black
            white: int | str | None = r.keys.white
            if not r.keys.is_certain:
                # Never a count the camera is unsure of: the judge skips the row.
                black = white = OCCLUDED if r.keys.status == OCCLUDED else UNKNOWN
            elif i == len(played) - 1 and r.keys.black == r.keys.white == 0:
                # Bare key holes on the last row: most likely not marked yet,
                # and a photo cannot tell that from "no pegs". Unmarked is the
                # reading that can never accuse.
                black = white = None
            rows.append(
                {
                    "guess": [h.colour for h in r.holes],
                    "black": black,
                    "white": white,
                    "confidence": [round(h.confidence, 4) for h in r.holes],
                    "status": r.status,
                    "keys_status": r.keys.status,
                    "keys_confidence": round(r.keys.confidence, 4),
                    "key_empty": r.keys.empty,
                    "candidates": [_candidates_out(h) for h in r.holes],
                    "black_bounds": None if r.keys.black_bounds is None else list(r.keys.black_bounds),
                    "white_bounds": None if r.keys.white_bounds is None else list(r.keys.white_bounds),
                }
            )
        record: dict[str, Any] = {
            "rules": rules,
            "secret": None if self.secret is None else [h.colour for h in self.secret],
            "rows": rows,
            "timeout": None,
            "profile": self.profile,
            "board_rows": len(self.rows),
            "problem": self.problem,
        }
        if self.secret is not None:
            record["secret_confidence"] = [round(h.confidence, 4) for h in self.secret]
            record["secret_candidates"] = [_candidates_out(h) for h in self.secret]
        record.update(
            {
                "found": self.problem is None,
                "found_by": self.found_by,
                "px_per_mm": None if self.px_per_mm is None else round(self.px_per_mm, 3),
                "sharpness": None if self.sharpness is None else round(self.sharpness, 3),
                "trust": self.trust,
                "trust_reasons": list(self.trust_reasons),
                "shield": self.shield,
                "picture_warnings": list(self.picture_warnings),
            }
        )
        return record

    @classmethod
    def from_record(
        cls,
        record: Mapping[str, Any],
        *,
        holes: int | None = None,
        board_rows: int | None = None,
        keys_per_row: int | None = None,
        where: str = "record",
    ) -> BoardReading:
        """Parse a game record (a truth file or a saved reading).

        Missing confidences count as 1.0 (a truth record is certain). Rows
        not in the record are empty. ``holes``/``board_rows`` default to
        what the record itself says.
        """
        if not isinstance(record, Mapping):
            raise ReadingRecordError(f"{where}: expected a JSON object, got {type(record).__name__}")
        raw_rows = record.get("rows")
        if not isinstance(raw_rows, list):
            raise ReadingRecordError(f"{where}: 'rows' must be a list")
        n_rows = board_rows if board_rows is not None else record.get("board_rows", len(raw_rows))
        if not isinstance(n_rows, int) or n_rows < len(raw_rows):
            raise ReadingRecordError(
                f"{where}: {len(raw_rows)} rows given but the board has {n_rows}"
            )
        rows: list[RowReading] = []
        n_holes = holes
        for i, raw in enumerate(raw_rows, start=1):
            at = f"{where}: rows[{i - 1}]"
            if not isinstance(raw, Mapping):
                raise ReadingRecordError(f"{at}: expected an object")
            guess = _colour_list(raw.get("guess"), f"{at}.guess")
            if n_holes is None:
                n_holes = len(guess)
            if len(guess) != n_holes:
                raise ReadingRecordError(
                    f"{at}.guess: {len(guess)} colours, the board has {n_holes} holes"
                )
            conf = _confidences(raw.get("confidence"), len(guess), f"{at}.confidence")
            raw_black, raw_white = raw.get("black"), raw.get("white")
            # to_record's forms: null while unmarked (bare key holes), or
            # "unknown"/"occluded" when the counts were not read.
            unread_keys = raw_black if raw_black in (UNKNOWN, OCCLUDED) else None
            black = 0 if raw_black is None or unread_keys else _count(raw_black, f"{at}.black")
            white = 0 if raw_white is None or unread_keys else _count(raw_white, f"{at}.white")
            if keys_per_row is not None and black + white > keys_per_row:
                raise ReadingRecordError(
                    f"{at}: black {black} + white {white} exceeds the {keys_per_row} key holes"
                )
            n_keys = keys_per_row if keys_per_row is not None else len(guess)
            key_empty = raw.get("key_empty", max(n_keys - black - white, 0))
            key_status = raw.get("keys_status", unread_keys)
            if key_status is None:
                key_status = ROW_EMPTY if black + white == 0 else ROW_OK
            kconf = raw.get("keys_confidence", 1.0)
            status = raw.get("status")
            if status is None:
                status = ROW_EMPTY if all(c == EMPTY for c in guess) and black + white == 0 else ROW_OK
            if status not in ROW_STATUSES:
                raise ReadingRecordError(f"{at}.status: {status!r} is not one of {ROW_STATUSES}")
            cands = _candidates_in(raw.get("candidates"), len(guess), f"{at}.candidates")
            rows.append(
                RowReading(
                    row=i,
                    holes=tuple(HoleReading(c, p, k) for c, p, k in zip(guess, conf, cands, strict=True)),
                    keys=KeyReading(
                        black, white, int(key_empty), float(kconf), str(key_status),
                        black_bounds=_bounds_in(raw.get("black_bounds"), f"{at}.black_bounds"),
                        white_bounds=_bounds_in(raw.get("white_bounds"), f"{at}.white_bounds"),
                    ),
                    status=str(status),
                )
            )
        if n_holes is None:
            n_holes = 0
        n_keys_empty = keys_per_row if keys_per_row is not None else n_holes
        for i in range(len(raw_rows) + 1, n_rows + 1):
            rows.append(empty_row(i, n_holes, n_keys_empty))
        raw_secret = record.get("secret")
        secret: tuple[HoleReading, ...] | None = None
        if raw_secret is not None:
            colours = _colour_list(raw_secret, f"{where}.secret")
            if n_holes and len(colours) != n_holes:
                raise ReadingRecordError(
                    f"{where}.secret: {len(colours)} colours, the board has {n_holes} holes"
                )
            sconf = _confidences(record.get("secret_confidence"), len(colours), f"{where}.secret_confidence")
            scand = _candidates_in(record.get("secret_candidates"), len(colours), f"{where}.secret_candidates")
            secret = tuple(HoleReading(c, p, k) for c, p, k in zip(colours, sconf, scand, strict=True))
        profile = record.get("profile", "")
        problem = record.get("problem")
        trust = record.get("trust", TRUST_FULL)
        if trust not in TRUST_LEVELS:
            raise ReadingRecordError(f"{where}.trust: {trust!r} is not one of {TRUST_LEVELS}")
        reasons = record.get("trust_reasons", [])
        if not isinstance(reasons, list) or not all(isinstance(r, str) for r in reasons):
            raise ReadingRecordError(f"{where}.trust_reasons: expected a list of sentences")
        found_by = record.get("found_by")
        shield = record.get("shield")
        for key, value in (("found_by", found_by), ("shield", shield)):
            if value is not None and not isinstance(value, str):
                raise ReadingRecordError(f"{where}.{key}: expected a word or null, got {value!r}")
        return cls(
            profile=str(profile),
            rows=tuple(rows),
            secret=secret,
            problem=None if problem is None else str(problem),
            at_ns=int(record.get("at_ns", 0)),
            trust=str(trust),
            trust_reasons=tuple(reasons),
            found_by=found_by,
            px_per_mm=_optional_number(record.get("px_per_mm"), f"{where}.px_per_mm"),
            sharpness=_optional_number(record.get("sharpness"), f"{where}.sharpness"),
            shield=shield,
        )


def doubt_bare_keys(keys: KeyReading, *, proved: int = 0) -> KeyReading:
    """The key reading of a row the reader is unsure of: key holes read bare
    count as evidence of nothing.

    A bare key hole is the reader's commonest wrong answer (a black key peg
    in shade, or a white one under warm light, reads as an empty hole), and
    a row whose other holes are in doubt is where such a frame is most
    likely. So in such a row the counts are bounds: at least the pegs seen,
    at most those plus every hole read bare. A verdict within bounds then
    rests only on pegs the camera saw, never on pegs it failed to see.
    ``proved``: how many of the holes read bare were proved bare otherwise
    (their surroundings show no key peg): they stay evidence.
    """
    room = keys.empty - proved
    if room <= 0 or keys.status == ROW_OCCLUDED:
        return keys
    b_lo, b_hi = keys.black_bounds if keys.black_bounds is not None else (keys.black, keys.black)
    w_lo, w_hi = keys.white_bounds if keys.white_bounds is not None else (keys.white, keys.white)
    return KeyReading(
        keys.black, keys.white, keys.empty, keys.confidence, ROW_UNKNOWN,
        black_bounds=(b_lo, b_hi + room),
        white_bounds=(w_lo, w_hi + room),
    )


def empty_row(row: int, holes: int, key_holes: int, confidence: float = 1.0) -> RowReading:
    """A row with no peg at all."""
    return RowReading(
        row=row,
        holes=tuple(HoleReading(EMPTY, confidence) for _ in range(holes)),
        keys=KeyReading(0, 0, key_holes, confidence, ROW_EMPTY),
        status=ROW_EMPTY,
    )


def unreadable_row(row: int, holes: int, key_holes: int, status: str = ROW_UNKNOWN) -> RowReading:
    """A row that could not be read at all (``status`` unknown or occluded)."""
    colour = OCCLUDED if status == ROW_OCCLUDED else UNKNOWN
    return RowReading(
        row=row,
        holes=tuple(HoleReading(colour, 0.0) for _ in range(holes)),
        keys=KeyReading(0, 0, 0, 0.0, status),
        status=status,
    )


def _colour_list(value: object, where: str) -> list[str]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise ReadingRecordError(f"{where}: expected a list of colour names")
    out: list[str] = []
    for j, c in enumerate(value):
        if not isinstance(c, str) or not c:
            raise ReadingRecordError(f"{where}[{j}]: expected a colour name, got {c!r}")
        out.append(c.strip().lower())
    return out


def _confidences(value: object, n: int, where: str) -> list[float]:
    if value is None:
        return [1.0] * n
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != n:
        raise ReadingRecordError(f"{where}: expected a list of {n} numbers")
    out: list[float] = []
    for j, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, int | float) or not 0.0 <= v <= 1.0:
            raise ReadingRecordError(f"{where}[{j}]: expected a number in [0, 1], got {v!r}")
        out.append(float(v))
    return out


def _count(value: object, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ReadingRecordError(f"{where}: expected a count >= 0, got {value!r}")
    return value


def _candidates_out(hole: HoleReading) -> list[list[str | float]]:
    return [[c, round(p, 4)] for c, p in hole.candidates]


def _candidates_in(value: object, n: int, where: str) -> list[tuple[tuple[str, float], ...]]:
    """Per hole, ``[[colour, confidence], ...]`` (an absent key: none named)."""
    if value is None:
        return [()] * n
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != n:
        raise ReadingRecordError(f"{where}: expected a list of {n} candidate lists")
    out: list[tuple[tuple[str, float], ...]] = []
    for j, hole in enumerate(value):
        if not isinstance(hole, Sequence) or isinstance(hole, str):
            raise ReadingRecordError(f"{where}[{j}]: expected a list of [colour, confidence] pairs")
        pairs: list[tuple[str, float]] = []
        for pair in hole:
            ok = isinstance(pair, Sequence) and not isinstance(pair, str) and len(pair) == 2
            name, conf = (pair[0], pair[1]) if ok else (None, None)
            if not isinstance(name, str) or not name or isinstance(conf, bool) or not isinstance(conf, int | float) \
                    or not 0.0 <= conf <= 1.0:
                raise ReadingRecordError(f"{where}[{j}]: expected [colour, confidence in 0..1], got {pair!r}")
            pairs.append((name.strip().lower(), float(conf)))
        out.append(tuple(pairs))
    return out


def _bounds_in(value: object, where: str) -> tuple[int, int] | None:
    if value is None:
        return None
    if (
        not isinstance(value, Sequence) or isinstance(value, str) or len(value) != 2
        or any(isinstance(v, bool) or not isinstance(v, int) for v in value) or not 0 <= value[0] <= value[1]
    ):
        raise ReadingRecordError(f"{where}: expected [lowest, highest] counts, got {value!r}")
    return (int(value[0]), int(value[1]))


def _optional_number(value: object, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise ReadingRecordError(f"{where}: expected a number >= 0, got {value!r}")
    return float(value)
