"""One table's match as the arbiter reads it: the view model of the page and the report.

:func:`detail_from_events` folds a table's journal events into a
:class:`TableDetail`: the players, per game its rows (the guess read hole by
hole, the marks, the verdict and why, both clocks when the row was
confirmed, whether an arbiter ruled on it, the frames kept as evidence), the
secret once it may be shown, the result, the penalties, the rulings, and the
event log. The events are mappings ``{"seq", "kind", "t_ms" (or "at_ns"),
"data" (or "payload")}``: the same whether they come from a table's journal
(``pegwatch report``) or from the hub's store of the events tables publish
(the page), so the page and the report show the same facts.

Two facts are not journaled as such, and are taken as follows:

* **Both clocks at a row.** The journal keeps the presses, not the time left.
  An event may carry ``"clock_ms": [seat 0, seat 1]``, each seat's remaining
  time just after it (``pegwatch report`` derives it by replaying the
  journal's presses, flags and rulings through the table's own clock:
  :mod:`pegwatch.device.table.report`). A row's clocks are those of the
  press that confirmed its marks (the codemaker's, seed 004 §3.5: the press
  confirms the move), its guess clocks those of the codebreaker's press.
  Events without ``clock_ms`` leave the clocks unknown (``None``), never
  guessed.
* **Which frame is a row's evidence.** The table keeps the JPEG of every
  camera answer keyed by the seq of its ``reading`` event; a row names the
  seq of its guess reading and of its marks reading (:class:`EvidenceRef`).

With ``mask_secret`` the secret of a game that is not over (no ``game``
verdict yet) is dropped everywhere: the code, the marks each row should have
had, and the log's words for them. The hub always masks; the report masks
when asked (the journal itself is the arbiter's record).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pegwatch.hub.detail_build import Builder, envelope
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

__all__ = [
    "Clocks",
    "DetailError",
    "EvidenceRef",
    "GameDetail",
    "GameOutcome",
    "HoleRead",
    "LogLine",
    "MatchOutcome",
    "PenaltyLine",
    "RowDetail",
    "Ruled",
    "RulingLine",
    "TableDetail",
    "Verdict",
    "detail_from_events",
]


def detail_from_events(
    events: Iterable[Mapping[str, Any]],
    *,
    table: str | None = None,
    mask_secret: bool = False,
    games: Sequence[int] | None = None,
    secrets: Mapping[int, Sequence[str]] | None = None,
) -> TableDetail:
    """A table's :class:`TableDetail` from its events (taken in ``seq`` order, once each).

    ``games`` keeps only those games (the log and rulings too). ``secrets``
    gives codes known from elsewhere by game (the hub's ``results``, where
    a table publishes the code once its game is over): they fill a game's
    code where its events do not carry it, and are masked like it. Raises
    :class:`DetailError` (a ``BadInput``: one line naming the event) for an
    event that is not a mapping with an int ``seq``, a str ``kind`` and a
    mapping of data; a payload field of an unexpected type is read as absent.
    """
    builder = Builder(mask_secret=mask_secret)
    # Checked first, then in seq order: a store may give them newest first.
    for env in sorted((envelope(e, i) for i, e in enumerate(events)), key=lambda env: env.seq):
        builder.add(env)
    for number, code in (secrets or {}).items():
        game = builder.game(number)
        if game.secret is None and code:
            game.secret, game.secret_source = tuple(str(c) for c in code), game.secret_source or "the table's result"
    return builder.detail(table=table, games=games)
