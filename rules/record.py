"""Game and match records: the JSON contract between the table, the vision
reader and ``pegwatch judge`` (documented in ``docs/records.md``).

Parsing checks the shape (types, code lengths, key-peg counts against the
variant's holes) and names the place of any fault with a JSON-path-like
location, e.g. ``game.json: games[1].rows[3].black: expected an integer
0..4, got "two"``. Whether a guess is *legal* (blanks, colour count) is a
question for :mod:`pegwatch.rules.legality` and the judge, not a parse error.
Unknown keys are kept, so records from the vision reader (per-hole
confidences and the like) round-trip unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from pegwatch.rules.bounded import (
    BoundedRow,
    CountRange,
    candidates_from_reading,
    counts_from_reading,
)
from pegwatch.rules.codes import UNKNOWN, UNREAD, Code, Feedback, is_read
from pegwatch.rules.errors import BadInput
from pegwatch.rules.penalties import Penalty, PenaltyError, parse_penalties
from pegwatch.rules.textfile import MIB, parse_json
from pegwatch.rules.variants import Scoring, UnknownVariantError, Variant, get_variant

__all__ = [
    "MAX_RECORD_BYTES",
    "GameRecord",
    "MatchRecord",
    "RecordError",
    "Role",
    "Row",
    "load_record",
    "parse_record",
]


#: Records larger than this are refused before they are parsed (a match is a few KiB).
MAX_RECORD_BYTES = 10 * MIB


class RecordError(BadInput):
    """A record is malformed; the message names the file and the location."""


class Role(Enum):
    """A player's role in one game."""

    CODEMAKER = "codemaker"
    CODEBREAKER = "codebreaker"


@dataclass(frozen=True)
class Row:
    """One confirmed guess and its key pegs.

    ``marks`` is None while the row is unmarked, or when the key pegs were
    there but could not be counted exactly: then ``marks_unread`` says why
    ("unknown" or "occluded", the camera's words). A hole the camera could
    not read holds one of those words in ``guess``. ``bounds`` keeps what is
    known all the same (the candidates of a doubtful hole, the range of a
    count) when the record gives it; :attr:`bounded` is the row as the
    bounded judge (:mod:`pegwatch.rules.bounded`) takes it.
    """

    guess: Code
    marks: Feedback | None
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    marks_unread: str | None = None
    bounds: BoundedRow | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain data in the record format."""
        out: dict[str, Any] = dict(self.extra)
        out["guess"] = list(self.guess)
        if self.bounds is not None:
            out["guess"] = [peg if hole is None else value for peg, hole, value in
                            zip(self.guess, self.bounds.holes, self.bounds.hole_json(), strict=True)]
        if self.marks is not None:
            out["black"], out["white"] = self.marks.black, self.marks.white
        elif self.bounds is not None and self.bounds.black is not None and self.bounds.white is not None:
            out["black"], out["white"] = self.bounds.black.to_json(), self.bounds.white.to_json()
        else:
            out["black"] = out["white"] = self.marks_unread
        return out

    @property
    def bounded(self) -> BoundedRow:
        """What is known of the row: "unknown" and "occluded" may hold anything."""
        if self.bounds is not None:
            return self.bounds
        holes = tuple(None if peg in UNREAD else (peg,) for peg in self.guess)
        if self.marks is not None:
            return BoundedRow(holes, CountRange.exact(self.marks.black), CountRange.exact(self.marks.white))
        if self.marks_unread is not None:
            return BoundedRow(holes, CountRange(0, len(self.guess)), CountRange(0, len(self.guess)))
        return BoundedRow(holes)

    @property
    def is_read(self) -> bool:
        """Whether both the guess and the marks (if any) were read."""
        return is_read(self.guess) and self.marks_unread is None


@dataclass(frozen=True)
class GameRecord:
    """One game: the preset, the secret (None if never seen), the rows, and
    who ran out of time, if anyone."""

    rules: str
    secret: Code | None
    rows: tuple[Row, ...]
    timeout: Role | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def to_json(self) -> dict[str, Any]:
        """Plain data in the record format."""
        out: dict[str, Any] = dict(self.extra)
        out["rules"] = self.rules
        out["secret"] = None if self.secret is None else list(self.secret)
        out["rows"] = [row.to_json() for row in self.rows]
        out["timeout"] = None if self.timeout is None else self.timeout.value
        return out

    @property
    def penalties(self) -> tuple[Penalty, ...]:
        """The arbiter's penalties in this game (the ``penalties`` key; checked when parsed)."""
        return parse_penalties(self.extra.get("penalties"))


@dataclass(frozen=True)
class MatchRecord:
    """A match: ``players[0]`` is the codemaker in game 1, and the roles
    alternate from game to game."""

    rules: str
    players: tuple[str, str]
    games: tuple[GameRecord, ...]
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def codemaker(self, game_index: int) -> str:
        """The codemaker of game ``game_index`` (0-based) when the roles simply
        alternate; a home series that replays a game keeps its roles for the
        replay (see ``MatchVerdict.codemakers``)."""
        return self.players[game_index % 2]

    def codebreaker(self, game_index: int) -> str:
        """The codebreaker of game ``game_index`` (0-based)."""
        return self.players[(game_index + 1) % 2]

    def to_json(self) -> dict[str, Any]:
        """Plain data in the record format."""
        out: dict[str, Any] = dict(self.extra)
        out["rules"] = self.rules
        out["players"] = list(self.players)
        out["games"] = [game.to_json() for game in self.games]
        return out

    @property
    def penalties(self) -> tuple[Penalty, ...]:
        """The arbiter's penalties in the match: its ``penalties`` key, else the games'."""
        if "penalties" in self.extra:
            return parse_penalties(self.extra.get("penalties"))
        return tuple(p for game in self.games for p in game.penalties)


def _show(value: object) -> str:
    # JSON spelling, so the arbiter sees what is in the file ("two", null).
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class _Parser:
    def __init__(self, source: str, variants: Mapping[str, Variant] | None) -> None:
        self.source = source
        self.variants = variants

    def fail(self, where: str, message: str) -> RecordError:
        place = ": ".join(p for p in (self.source, where) if p)
        return RecordError(f"{place}: {message}" if place else message)

    def obj(self, data: object, where: str) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise self.fail(where, f"expected an object, got {_show(data)}")
        return data

    def variant(self, data: dict[str, Any], where: str) -> tuple[str, Variant]:
        key = f"{where}.rules" if where else "rules"
        if "rules" not in data:
            raise self.fail(where, 'missing key "rules" (a preset name such as "mso")')
        name = data["rules"]
        if not isinstance(name, str):
            raise self.fail(key, f"expected a preset name, got {_show(name)}")
        try:
            return name, get_variant(name, self.variants)
        except UnknownVariantError as exc:
            raise self.fail(key, str(exc)) from None

    def code(self, data: object, where: str, variant: Variant) -> Code:
        if not isinstance(data, list):
            raise self.fail(where, f"expected a list of {variant.holes} colour names, got {_show(data)}")
        if len(data) != variant.holes:
            raise self.fail(
                where,
                f"expected {variant.holes} pegs for {variant.name}, got {len(data)}",
            )
        for i, peg in enumerate(data):
            if not isinstance(peg, str) or not peg.strip():
                raise self.fail(f"{where}[{i}]", f"expected a colour name, got {_show(peg)}")
        return tuple(peg.strip().lower() for peg in data)

    def guess(self, data: object, where: str, variant: Variant) -> tuple[Code, tuple[tuple[str, ...] | None, ...] | None]:
        """A guess whose holes may be lists of candidate colours: the code
        (``"unknown"`` where a hole has several) and the candidates, or None
        when every hole is a plain name."""
        if not isinstance(data, list) or not any(isinstance(peg, list) for peg in data):
            return self.code(data, where, variant), None
        if len(data) != variant.holes:
            raise self.fail(where, f"expected {variant.holes} pegs for {variant.name}, got {len(data)}")
        pegs: list[str] = []
        holes: list[tuple[str, ...] | None] = []
        for i, peg in enumerate(data):
            if not isinstance(peg, list):
                if not isinstance(peg, str) or not peg.strip():
                    raise self.fail(f"{where}[{i}]", f"expected a colour name or a list of candidates, got {_show(peg)}")
                pegs.append(peg.strip().lower())
                holes.append(None if pegs[-1] in UNREAD else (pegs[-1],))
                continue
            if not peg or not all(isinstance(c, str) and c.strip() for c in peg):
                raise self.fail(f"{where}[{i}]", f"expected a list of candidate colour names, got {_show(peg)}")
            names = tuple(dict.fromkeys(c.strip().lower() for c in peg))
            if set(names) & UNREAD:
                raise self.fail(f"{where}[{i}]", f'candidates are colour names, not "unknown" or "occluded": {_show(peg)}')
            holes.append(names)
            pegs.append(names[0] if len(names) == 1 else UNKNOWN)
        return tuple(pegs), tuple(holes)

    def count_range(self, value: object, where: str, holes: int) -> CountRange | None:
        """A count as an int, ``[lo, hi]``, or None for any other form."""
        if isinstance(value, list):
            if (len(value) != 2 or any(isinstance(v, bool) or not isinstance(v, int) for v in value)
                    or not 0 <= value[0] <= value[1] <= holes):
                raise self.fail(where, f"expected a range [lo, hi] within 0..{holes}, got {_show(value)}")
            return CountRange(value[0], value[1])
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= holes:
            return CountRange.exact(value)
        return None

    def count(self, data: dict[str, Any], key: str, where: str, holes: int) -> int:
        value = data[key]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= holes:
            raise self.fail(f"{where}.{key}", f"expected an integer 0..{holes}, got {_show(value)}")
        return value

    def row(self, data: object, where: str, variant: Variant, last: bool) -> Row:
        d = self.obj(data, where)
        if "guess" not in d:
            raise self.fail(where, 'missing key "guess"')
        guess, candidates = self.guess(d["guess"], f"{where}.guess", variant)
        extra = {k: v for k, v in d.items() if k not in ("guess", "black", "white")}
        if candidates is None:
            candidates = candidates_from_reading(guess, d.get("candidates"))
            if candidates is not None:
                guess = tuple(UNKNOWN if h is not None and len(h) > 1 else peg
                              for peg, h in zip(guess, candidates, strict=True))
            d = counts_from_reading(d, variant.holes)
        ranged = [isinstance(d.get(k), list) for k in ("black", "white")]
        if any(ranged):
            black_range = self.count_range(d.get("black"), f"{where}.black", variant.holes)
            white_range = self.count_range(d.get("white"), f"{where}.white", variant.holes)
            for key, rng in (("black", black_range), ("white", white_range)):
                if rng is None:
                    raise self.fail(f"{where}.{key}", "beside a range, expected an integer or a range "
                                    f"[lo, hi] within 0..{variant.holes}, got {_show(d.get(key))}")
            assert black_range is not None and white_range is not None
            if black_range.lo + white_range.lo > variant.holes:
                raise self.fail(where, f"black {black_range} + white {white_range} exceeds the "
                                f"{variant.holes} holes of {variant.name}")
            holes = candidates or tuple(None if p in UNREAD else (p,) for p in guess)
            ranged_row = BoundedRow(holes, black_range, white_range)
            if black_range.is_exact and white_range.is_exact:
                return Row(guess, Feedback(black_range.lo, white_range.lo), extra,
                           bounds=ranged_row if candidates else None)
            return Row(guess, None, extra, marks_unread=UNKNOWN, bounds=ranged_row)
        black_given = d.get("black") is not None
        white_given = d.get("white") is not None
        marks: Feedback | None = None
        # Only strings can be the camera's words; a list or an object here is
        # a shape error reported below, never a crash on hashing it.
        unread = {v for v in (d.get("black"), d.get("white")) if isinstance(v, str)} & UNREAD
        if unread:
            # The key pegs are there but the camera could not count them:
            # "unknown"/"occluded" in both places, never one count and one doubt.
            if d.get("black") != d.get("white"):
                raise self.fail(
                    where,
                    f'black {_show(d.get("black"))} and white {_show(d.get("white"))}: '
                    'an unread count is "unknown" or "occluded" in both',
                )
            why = unread.pop()
            bounds: BoundedRow | None = None
            if candidates is not None:
                full = CountRange(0, variant.holes)
                bounds = BoundedRow(candidates, full, full)
            return Row(guess, None, extra, marks_unread=why, bounds=bounds)
        if black_given or white_given:
            if not (black_given and white_given):
                missing = "white" if black_given else "black"
                raise self.fail(where, f'"{missing}" is missing; give both black and white, or neither while unmarked')
            black = self.count(d, "black", where, variant.holes)
            white = self.count(d, "white", where, variant.holes)
            if black + white > variant.holes:
                raise self.fail(
                    where,
                    f"black {black} + white {white} exceeds the {variant.holes} holes of {variant.name}",
                )
            marks = Feedback(black, white)
        elif not last:
            raise self.fail(where, "only the last row may be unmarked")
        if candidates is not None:
            if marks is None:
                return Row(guess, None, extra, bounds=BoundedRow(candidates))
            exact = BoundedRow(candidates, CountRange.exact(marks.black), CountRange.exact(marks.white))
            return Row(guess, marks, extra, bounds=exact)
        return Row(guess, marks, extra)

    def game(self, data: object, where: str, inherited: tuple[str, Variant] | None) -> GameRecord:
        d = self.obj(data, where)
        if inherited is not None and "rules" not in d:
            name, variant = inherited
        else:
            name, variant = self.variant(d, where)
            if inherited is not None and name != inherited[0]:
                raise self.fail(
                    f"{where}.rules",
                    f"{_show(name)} differs from the match's {_show(inherited[0])}",
                )
        prefix = f"{where}." if where else ""
        if "rows" not in d:
            raise self.fail(where, 'missing key "rows"')
        secret_raw = d.get("secret")
        secret = None if secret_raw is None else self.code(secret_raw, f"{prefix}secret", variant)
        rows_raw = d["rows"]
        if not isinstance(rows_raw, list):
            raise self.fail(f"{prefix}rows", f"expected a list of rows, got {_show(rows_raw)}")
        if len(rows_raw) > variant.rows:
            raise self.fail(
                f"{prefix}rows",
                f"{len(rows_raw)} rows, but the {variant.name} board has {variant.rows}",
            )
        rows = tuple(
            self.row(r, f"{prefix}rows[{i}]", variant, last=i == len(rows_raw) - 1)
            for i, r in enumerate(rows_raw)
        )
        timeout_raw = d.get("timeout")
        timeout: Role | None = None
        if timeout_raw is not None:
            try:
                timeout = Role(timeout_raw)
            except ValueError:
                raise self.fail(
                    f"{prefix}timeout",
                    f'expected null, "codebreaker" or "codemaker", got {_show(timeout_raw)}',
                ) from None
        if timeout is Role.CODEMAKER and not rows:
            raise self.fail(
                f"{prefix}timeout",
                "the codemaker's clock runs only while marking a row, and there are no rows",
            )
        extra = {k: v for k, v in d.items() if k not in ("rules", "secret", "rows", "timeout")}
        self.penalties(extra, f"{prefix}penalties")
        return GameRecord(name, secret, rows, timeout, extra)

    def penalties(self, extra: Mapping[str, Any], where: str) -> None:
        # Optional (records from before penalties have none); checked here so
        # that a bad one is refused with its place, like every other field.
        try:
            parse_penalties(extra.get("penalties"), where)
        except PenaltyError as exc:
            raise RecordError(": ".join(p for p in (self.source, str(exc)) if p)) from None

    def match(self, d: dict[str, Any]) -> MatchRecord:
        name, variant = self.variant(d, "")
        players_raw = d["players"]
        if (
            not isinstance(players_raw, list)
            or len(players_raw) != 2
            or not all(isinstance(p, str) and p.strip() for p in players_raw)
        ):
            raise self.fail("players", f"expected two player names, got {_show(players_raw)}")
        if players_raw[0].strip() == players_raw[1].strip():
            raise self.fail("players", f"the two players have the same name {_show(players_raw[0])}")
        players = (players_raw[0].strip(), players_raw[1].strip())
        if "games" not in d:
            raise self.fail("", 'missing key "games"')
        games_raw = d["games"]
        if not isinstance(games_raw, list) or not games_raw:
            raise self.fail("games", f"expected a list of games, got {_show(games_raw)}")
        # Home series replay a game after an indication error, so only the
        # tournament presets have a fixed number of games.
        if variant.scoring is Scoring.MSO and len(games_raw) > variant.games_per_match:
            raise self.fail(
                "games",
                f"{len(games_raw)} games, but a {variant.name} match has {variant.games_per_match}",
            )
        games = tuple(
            self.game(g, f"games[{i}]", (name, variant)) for i, g in enumerate(games_raw)
        )
        extra = {k: v for k, v in d.items() if k not in ("rules", "players", "games")}
        self.penalties(extra, "penalties")
        return MatchRecord(name, players, games, extra)


def parse_record(
    data: object,
    *,
    source: str = "",
    variants: Mapping[str, Variant] | None = None,
) -> GameRecord | MatchRecord:
    """Turn decoded JSON into a :class:`GameRecord` or :class:`MatchRecord`.

    An object with ``players`` is a match; otherwise a game. ``variants``
    adds an arbiter's own presets. Raises :class:`RecordError` naming
    ``source`` and the location of the fault.
    """
    parser = _Parser(source, variants)
    d = parser.obj(data, "")
    if "players" in d or "games" in d:
        return parser.match(d) if "players" in d else _missing_players(parser)
    return parser.game(d, "", None)


def _missing_players(parser: _Parser) -> MatchRecord:
    raise parser.fail("", 'a match needs "players": ["first codemaker", "first codebreaker"]')


def load_record(
    text: str,
    *,
    source: str,
    variants: Mapping[str, Variant] | None = None,
) -> GameRecord | MatchRecord:
    """Parse record JSON text; malformed JSON is reported with line:column.

    Too deep nesting, integers beyond 64 bits, ``NaN`` and the like are
    refused too (see :mod:`pegwatch.rules.textfile`), naming ``source``.
    """
    data = parse_json(text, source=source, error=RecordError)
    return parse_record(data, source=source, variants=variants)
