"""Game records out of a table journal, in the format ``pegwatch judge`` reads.

:func:`export_records` replays a journal (the same way ``pegwatch replay``
does) and writes one JSON file per finished game, plus the match when both
games are finished. The files carry the press stamps of each row as extra
keys (``guess_ns``, ``marks_ns``), which ``pegwatch judge`` keeps and ignores.
A game with illegal guesses carries them as ``illegal_moves`` (row, player,
reason, the player's count in the game, and ``settled``: accepted, corrected
or null), and the match record the table's count per player
(``illegal_moves``; the judge's own count covers only the rows still illegal).
Every record carries ``table``: the ``[table] name`` kept in the journal
(``null`` for a journal written before it was kept). The arbiter's penalties
(``ruling`` events; :mod:`pegwatch.rules.penalties`) are ``penalties``: a
game's in its file, all of them in the match's; the key is there only when
some were given, and ``pegwatch judge`` applies them.

The games written are recorded in the journal (meta ``exported``): under
``[journal] max_mb`` their evidence images are the first to be evicted.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from pathlib import Path

from pegwatch.device.table.journal import Journal, JournalError
from pegwatch.device.table.program import replay_journal

logger = logging.getLogger(__name__)

__all__ = ["export_records"]


def export_records(journal: str | Path, out_dir: str | Path, *, evidence: bool = False) -> list[Path]:
    """Write ``gameN.json`` for each finished game (and ``match.json`` when the
    match is complete) into ``out_dir``; with ``evidence``, also the frame and
    reading behind every confirmed row (``evidence/gameG-rowRR-seqS.jpg`` and
    ``.json``) for an arbiter settling a dispute. Returns the paths written."""
    result = replay_journal(journal)
    flow = result.flow
    table = _table_name(journal)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for game in flow.games:
        if not game.final:
            continue
        record = {**flow.game_record(game).to_json(), "table": table}
        given = [p.to_json() for p in result.penalties if p.game == game.number]
        if given:
            record["penalties"] = given
        path = out / f"game{game.number}.json"
        path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        written.append(path)
    if flow.match_verdict is not None:
        path = out / "match.json"
        record = {**flow.match_record().to_json(), "table": table}
        if result.penalties:
            record["penalties"] = [p.to_json() for p in result.penalties]
        path.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
        written.append(path)
    finished = [game.number for game in flow.games if game.final]
    with Journal(journal, create=False) as j:
        if evidence:
            written.extend(j.export_evidence(out / "evidence"))
        if finished:
            try:
                j.mark_exported(finished)
            except JournalError as exc:  # a read-only copy still exports
                logger.warning("export not recorded in %s: %s", journal, exc)
    return written


def _table_name(journal: str | Path) -> str | None:
    """The journal's ``[table] name``: meta ``table``, else the configuration snapshot's."""
    with Journal(journal, create=False) as j:
        meta = j.meta
    name = meta.get("table")
    if isinstance(name, str):
        return name
    config = meta.get("config")
    name = config.get("table_name") if isinstance(config, Mapping) else None
    return name if isinstance(name, str) else None
