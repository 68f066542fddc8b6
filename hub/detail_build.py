"""Folding a table's events into its detail, one event at a time (see :mod:`pegwatch.hub.detail`).

:class:`Builder` keeps mutable facts per game and row while the events come
in, and :meth:`Builder.detail` freezes them into the view model, choosing
the masked words where the secret must not show. Payload fields of an
unexpected type are read as absent: the page of a table that sent one odd
event still shows the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pegwatch.hub.detail_fields import bounds, holes, int_of, judged_holes, str_of, strs
from pegwatch.hub.detail_log import event_text, ruling_text
from pegwatch.hub.detail_model import (
    Clocks,
    DetailError,
    EvidenceRef,
    GameDetail,
    GameOutcome,
    HoleRead,
    LogLine,
    MatchOutcome,
    PenaltyLine,
    RowDetail,
    Ruled,
    RulingLine,
    TableDetail,
    Verdict,
)
from pegwatch.hub.detail_text import row_why
from pegwatch.hub.detail_verdicts import apply_verdict

__all__ = ["Builder", "Envelope", "GameFacts", "RowFacts", "envelope"]

_REASON_VERDICT: Final = {
    "ok": Verdict.OK, "cleared": Verdict.OK, "agreed": Verdict.OK, "mismark": Verdict.MISMARK, "proved": Verdict.MISMARK,
    "unsure": Verdict.UNSURE, "check": Verdict.UNSURE, "suspect": Verdict.UNSURE,
    "unread": Verdict.UNSURE,
}


@dataclass(frozen=True)
class Envelope:
    """An event's envelope, checked: its seq, kind, time (ms), data and clocks."""

    seq: int
    kind: str
    t_ms: int | None
    data: Mapping[str, Any]
    clocks: Clocks | None


def envelope(event: object, index: int) -> Envelope:
    """Check one event mapping; :class:`DetailError` names it when it is not one."""
    if not isinstance(event, Mapping):
        raise DetailError(f"event {index + 1}: expected a mapping, got {type(event).__name__}")
    seq = int_of(event.get("seq"))
    if seq is None or seq < 0:
        raise DetailError(f"event {index + 1}: seq must be an int >= 0, got {event.get('seq')!r}")
    kind = event.get("kind")
    if not isinstance(kind, str) or not kind:
        raise DetailError(f"event {seq}: kind must be a non-empty string, got {kind!r}")
    data = event.get("data", event.get("payload", {}))
    if not isinstance(data, Mapping):
        raise DetailError(f"event {seq} ({kind}): data must be a mapping, got {type(data).__name__}")
    t_ms = int_of(event.get("t_ms"))
    if t_ms is None and int_of(event.get("at_ns")) is not None:
        t_ms = int(event["at_ns"]) // 1_000_000
    # Derived by the table's side (ClockReplay): beside the data, or inside it as a publisher may send it.
    raw = event.get("clock_ms", data.get("clock_ms"))
    clocks = None
    if isinstance(raw, Sequence) and not isinstance(raw, str) and len(raw) == 2:
        a, b = int_of(raw[0]), int_of(raw[1])
        if a is not None and b is not None:
            clocks = Clocks((a, b))
    return Envelope(seq, kind, t_ms, data, clocks)


@dataclass
class RowFacts:
    row: int
    guess: tuple[HoleRead, ...] = ()
    black: int | None = None
    white: int | None = None
    black_bounds: tuple[int, int] | None = None
    white_bounds: tuple[int, int] | None = None
    reason: str = "in play"
    args: dict[str, Any] = field(default_factory=dict)
    expected: tuple[int, int] | None = None
    clocks: Clocks | None = None
    guess_clocks: Clocks | None = None
    ruled: Ruled | None = None
    illegal: str | None = None
    guess_evidence: EvidenceRef | None = None
    evidence: EvidenceRef | None = None
    trust: str | None = None

    def judged(self, reason: str, **args: Any) -> None:
        self.reason = reason
        self.args = {"black": self.black, "white": self.white, **args}


@dataclass
class GameFacts:
    number: int
    codemaker: str | None = None
    codebreaker: str | None = None
    rows: dict[int, RowFacts] = field(default_factory=dict)
    over: bool = False
    secret: tuple[str, ...] | None = None
    secret_source: str | None = None
    secret_evidence: list[EvidenceRef] = field(default_factory=list)
    outcome: GameOutcome | None = None
    flag: str | None = None
    alarms: list[str] = field(default_factory=list)
    final_clocks: Clocks | None = None
    #: The row the table announced as mis-marked (the first wrong one).
    mismark_row: int | None = None

    def row(self, number: int) -> RowFacts:
        return self.rows.setdefault(number, RowFacts(number))


@dataclass(frozen=True)
class _Logged:
    line: LogLine
    masked: str | None
    """The line's words while the secret is masked (None: the same)."""


class Builder:
    """Takes events in seq order (:meth:`add`) and gives the detail (:meth:`detail`)."""

    def __init__(self, *, mask_secret: bool = False) -> None:
        self.mask = mask_secret
        self.players: tuple[str, str] | None = None
        self.rules: str | None = None
        self.clock: str | None = None
        self.games: dict[int, GameFacts] = {}
        self.current = 1
        self.t0: int | None = None
        self._raw_ms: int | None = None
        self._offset_ms = 0
        self._cont_ms = 0
        self.last_seq = 0
        self.index = 0
        #: Per seat, the clocks just after their last press.
        self.pressed: dict[int, Clocks | None] = {}
        self.log: list[_Logged] = []
        self.penalties: list[PenaltyLine] = []
        self.rulings: list[RulingLine] = []
        self.pruned: set[int] = set()
        self.match: MatchOutcome | None = None

    # -- helpers ---------------------------------------------------------------------

    def name(self, seat: object) -> str:
        s = int_of(seat)
        if self.players is not None and s in (0, 1):
            return self.players[s]
        return f"seat {s}" if s is not None else "?"

    def seat(self, name: str | None) -> int | None:
        if self.players is None or name not in self.players:
            return None
        return self.players.index(name)

    def press_clocks(self, name: str | None) -> Clocks | None:
        """The clocks just after the last press of player ``name`` (None: not known)."""
        seat = self.seat(name)
        return None if seat is None else self.pressed.get(seat)

    def game(self, number: object = None) -> GameFacts:
        n = int_of(number)
        n = self.current if n is None or n < 1 else n
        return self.games.setdefault(n, GameFacts(n))

    # -- events ----------------------------------------------------------------------

    def add(self, env: Envelope) -> None:
        """Take one checked event; events must come in seq order (a seq seen already is skipped)."""
        self.index += 1
        if env.seq <= self.last_seq and self.index > 1:
            return  # a duplicate: the hub stores by id, once
        self.last_seq = env.seq
        env = self._continuous(env)
        if env.kind == "tick":
            self._clocks(env)
            return
        if self.t0 is None and env.t_ms is not None:
            self.t0 = env.t_ms
        handler = _HANDLERS.get(env.kind)
        game = handler(self, env) if handler is not None else None
        if env.kind == "verdict" and env.data.get("what") == "start" and self.log \
                and self.log[-1].line.kind == "press":
            # The codemaker's press that started this game, logged before the game was known.
            last = self.log[-1]
            self.log[-1] = _Logged(LogLine(last.line.seq, last.line.t_ms, "press", last.line.text, game),
                                   last.masked)
        self._clocks(env)
        text, masked = event_text(env.kind, env.data, self.name)
        t = None if env.t_ms is None or self.t0 is None else env.t_ms - self.t0
        self.log.append(_Logged(LogLine(env.seq, t, env.kind, text, game), masked))

    def _continuous(self, env: Envelope) -> Envelope:
        """``t_ms`` on one timeline across restarts (docs/journal.md's rule): a ``boot``, or a
        stamp that goes back, starts a segment at the last event's time; the outage is removed."""
        if env.t_ms is None:
            return env
        if self._raw_ms is not None and (env.kind == "boot" or env.t_ms < self._raw_ms):
            self._offset_ms = self._cont_ms - env.t_ms
        self._raw_ms = env.t_ms
        self._cont_ms = env.t_ms + self._offset_ms
        return Envelope(env.seq, env.kind, self._cont_ms, env.data, env.clocks)

    def _clocks(self, env: Envelope) -> None:
        g = self.games.get(self.current)
        if env.clocks is not None and g is not None and not g.over:
            g.final_clocks = env.clocks

    def _on_match(self, env: Envelope) -> int | None:
        players = strs(env.data.get("players"))
        if players is not None and len(players) == 2:
            self.players = (players[0], players[1])
        self.rules = str_of(env.data.get("rules")) or self.rules
        self.clock = str_of(env.data.get("clock")) or self.clock
        return None

    def _on_press(self, env: Envelope) -> int | None:
        seat = int_of(env.data.get("player"))
        if seat is not None:
            self.pressed[seat] = env.clocks
        return self.current

    def _on_flag(self, env: Envelope) -> int | None:
        return self.current

    def _on_reading(self, env: Envelope) -> int | None:
        d = env.data
        g = self.game(d.get("game"))
        row = int_of(d.get("row")) or 0
        phase = str_of(d.get("phase")) or ""
        if row == 0 or phase == "secret":
            shield = str_of(d.get("shield"))
            g.secret_evidence.append(EvidenceRef(env.seq, g.number, 0, "secret", shield=shield))
            code = strs(d.get("code"))
            if (d.get("status") == "ok" and code and g.secret is None and shield == "closed" \
                    and d.get("trust", "full") == "full") or (d.get("status") == "ok" and code and shield == "open" and g.secret is None):
                g.secret, g.secret_source = code, "camera"
            return g.number
        r = g.row(row)
        r.trust = str_of(d.get("trust")) or r.trust
        ref = EvidenceRef(env.seq, g.number, row, phase)
        read = holes(d)
        if phase == "guess":
            r.guess_evidence = ref
            r.guess = read or r.guess
            if r.guess_clocks is None:
                r.guess_clocks = self.press_clocks(g.codebreaker)
            if r.reason == "in play":
                r.judged("guess")
        elif phase == "marks":
            r.evidence = ref
            if not r.guess or all(h.colour is None for h in r.guess):
                r.guess = read or r.guess
            if r.clocks is None:
                r.clocks = self.press_clocks(g.codemaker)
            if d.get("keys_status") in ("ok", "empty") or d.get("status") == "ok":
                r.black, r.white = int_of(d.get("black")), int_of(d.get("white"))
            r.black_bounds = bounds(d.get("black_bounds"))
            r.white_bounds = bounds(d.get("white_bounds"))
        return g.number

    def _ruling(self, env: Envelope, action: str, *, game: int | None, row: int | None = None) -> None:
        by = str_of(env.data.get("by")) or "arbiter"
        t = None if env.t_ms is None or self.t0 is None else env.t_ms - self.t0
        text = ruling_text(action, env.data, self.name)
        self.rulings.append(RulingLine(env.seq, t, game, action, by, text, row))

    def _on_arbiter(self, env: Envelope) -> int | None:
        d = env.data
        action = str_of(d.get("action")) or "?"
        if action == "confirm_row":
            g = self.game(d.get("game"))
            row = int_of(d.get("row")) or 0
            r = g.row(row)
            hand = bool(d.get("hand"))
            r.ruled = Ruled(str_of(d.get("by")) or "arbiter", "entered by hand" if hand else "confirmed", env.seq)
            guess = strs(d.get("guess"))
            if guess:
                r.guess = judged_holes(guess, r.guess)
            if int_of(d.get("black")) is not None:
                r.black, r.white = int_of(d.get("black")), int_of(d.get("white"))
                r.black_bounds = r.white_bounds = None
            if r.clocks is None:
                r.clocks = self.press_clocks(g.codemaker)
            self._ruling(env, action, game=g.number, row=row)
            return g.number
        if action == "confirm_secret":
            g = self.game(d.get("game"))
            code = strs(d.get("code"))
            if code:
                g.secret, g.secret_source = code, str_of(d.get("by")) or "arbiter"
            self._ruling(env, action, game=g.number, row=0)
            return g.number
        self._ruling(env, action, game=self.current)
        return self.current

    def _on_ruling(self, env: Envelope) -> int | None:
        d = env.data
        action = str_of(d.get("action")) or "?"
        if action == "penalty":
            time_ns = int_of(d.get("time_ns"))
            points = d.get("points")
            self.penalties.append(PenaltyLine(
                env.seq, self.current, self.name(d.get("player")), str_of(d.get("penalty")) or "?",
                str_of(d.get("by")) or "arbiter", str_of(d.get("why")) or "",
                None if time_ns is None else time_ns // 1_000_000,
                float(points) if isinstance(points, int | float) and not isinstance(points, bool) else None,
            ))
        self._ruling(env, action, game=self.current)
        return self.current

    def _on_evidence_pruned(self, env: Envelope) -> int | None:
        items = env.data.get("evidence")
        if isinstance(items, Sequence) and not isinstance(items, str):
            for item in items:
                if isinstance(item, Mapping) and int_of(item.get("event_seq")) is not None:
                    self.pruned.add(int(item["event_seq"]))
        return None

    def _on_verdict(self, env: Envelope) -> int | None:
        return apply_verdict(self, env)

    # -- the frozen detail -------------------------------------------------------------

    def _ref(self, ref: EvidenceRef | None) -> EvidenceRef | None:
        if ref is None or ref.seq not in self.pruned:
            return ref
        return EvidenceRef(ref.seq, ref.game, ref.row, ref.phase, True, ref.shield)

    def _row(self, r: RowFacts, show: bool) -> RowDetail:
        verdict = _REASON_VERDICT.get(r.reason, Verdict.PENDING)
        return RowDetail(
            r.row, r.guess, r.black, r.white, verdict,
            row_why(r.reason, r.args, show_expected=show),
            r.expected if show else None, r.black_bounds, r.white_bounds, r.clocks, r.guess_clocks,
            r.ruled, r.illegal, self._ref(r.guess_evidence), self._ref(r.evidence), r.trust,
        )

    def detail(self, *, table: str | None = None, games: Sequence[int] | None = None) -> TableDetail:
        wanted = None if games is None else set(games)
        out = []
        hidden: set[int] = set()
        for n in sorted(self.games):
            g = self.games[n]
            show = g.over or not self.mask
            if not show:
                hidden.add(n)
            if wanted is not None and n not in wanted:
                continue
            out.append(GameDetail(
                n, g.codemaker, g.codebreaker,
                tuple(self._row(g.rows[k], show) for k in sorted(g.rows)),
                g.over, g.secret if show else None, g.secret_source,
                tuple(ref for e in g.secret_evidence if (ref := self._ref(e)) is not None),
                g.outcome, g.flag, tuple(g.alarms),
                tuple(p for p in self.penalties if p.game == n),
                tuple(r for r in self.rulings if r.game == n), g.final_clocks,
            ))
        log = []
        for item in self.log:
            line = item.line
            if wanted is not None and line.game is not None and line.game not in wanted:
                continue
            if item.masked is not None and line.game in hidden:
                line = LogLine(line.seq, line.t_ms, line.kind, item.masked, line.game)
            log.append(line)
        players = self.players or ("seat 0", "seat 1")

        def keep(game: int | None) -> bool:
            return wanted is None or game is None or game in wanted

        return TableDetail(
            players, tuple(out), tuple(log), self.rules, self.clock, table, self.match,
            tuple(p for p in self.penalties if keep(p.game)),
            tuple(r for r in self.rulings if keep(r.game)), self.last_seq, self.mask,
        )


_HANDLERS: Final = {
    "match": Builder._on_match, "press": Builder._on_press, "flag": Builder._on_flag,
    "reading": Builder._on_reading, "arbiter": Builder._on_arbiter, "ruling": Builder._on_ruling,
    "evidence_pruned": Builder._on_evidence_pruned, "verdict": Builder._on_verdict,
}
