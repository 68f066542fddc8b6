"""The hub's commands at the table: journaled first, applied through the arbiter's own paths, acknowledged.

A command (:class:`~pegwatch.hub.wire.Command`) arrives on the table's
``commands`` topic. :meth:`CommandDesk.handle` then, under the table
program's lock, so that no event slips between:

1. refuses a command id it has seen (``duplicate``, with the first
   answer's reason and journal seq; nothing is applied twice);
2. journals the command (kind ``hall_command``: id, kind, args, by);
3. applies it as the arbiter at the table would, through the table's
   journaled events: ``confirm_row`` and ``correct_row`` an ``arbiter
   confirm_row`` (by hand for a correction), ``adjust_clock`` an ``arbiter
   adjust``, ``enter_result`` an ``arbiter confirm_secret`` and
   ``add_penalty`` a ``ruling penalty``, each tagged ``hall_command: ID``;
   ``send_evidence`` publishes the row's frame (the secret masked while
   its game runs);
4. journals the answer (kind ``hall_ack``: command, status, reason, seq),
   which the outbox publishes on ``acks``.

A command journaled by a table that stopped before answering it is
answered when the table starts again: ``applied`` when its event is in the
journal, else ``refused`` (send it again). A malformed command is logged
and counted (:attr:`CommandDesk.bad`) and, when its id can be read,
answered ``refused``; it never stops the table.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from pegwatch.device.table.hall.evidence import EvidenceRefused, frame_evidence
from pegwatch.device.table.hall.messages import HALL_ACK, HALL_COMMAND
from pegwatch.device.table.journal import JournalEvent
from pegwatch.device.table.rulings import RULING
from pegwatch.hub.wire import (
    PLAYERS,
    Ack,
    AckStatus,
    BadMessage,
    Channel,
    Command,
    CommandKind,
    Evidence,
    format_ack,
    format_evidence,
    parse_command,
)

if TYPE_CHECKING:
    from pegwatch.device.table.program import TableProgram

__all__ = ["CommandDesk"]

logger = logging.getLogger(__name__)

#: The key that ties an applied event to the command it came from.
TAG: Final = "hall_command"
Publish = Callable[[Channel, bytes], None]


class CommandDesk:
    """Takes the hub's commands for ``table`` into ``program`` (see the module doc)."""

    def __init__(self, program: TableProgram, table: str, publish: Publish, *,
                 on_ack: Callable[[], None] | None = None) -> None:
        self.program = program
        self.table = table
        self.publish = publish
        self.on_ack = on_ack
        #: Malformed commands received (logged each).
        self.bad = 0
        #: Command id -> (status, reason, seq) of its first answer.
        self.answered: dict[str, tuple[str, str | None, int | None]] = {}
        self._recover()

    # -- a restart ----------------------------------------------------------------------

    def _recover(self) -> None:
        """Learn the answered ids from the journal; answer those a stop left unanswered."""
        journal = self.program.journal
        asked: dict[str, int] = {}
        for event in journal.events(kinds=(HALL_COMMAND, HALL_ACK)):
            p = event.payload
            if event.kind == HALL_COMMAND:
                asked[str(p.get("id"))] = event.seq
            else:
                seq = p.get("seq")
                reason = p.get("reason")
                self.answered[str(p.get("command"))] = (
                    str(p.get("status")), None if reason is None else str(reason),
                    seq if isinstance(seq, int) else None)
        open_ = {cid: seq for cid, seq in asked.items() if cid not in self.answered}
        if not open_:
            return
        applied = {str(e.payload.get(TAG)) for e in journal.events(since=min(open_.values()),
                                                                      kinds=("arbiter", RULING))
                   if e.payload.get(TAG) is not None}
        with self.program._lock:
            for cid, seq in open_.items():
                if cid in applied:
                    self._answer(cid, AckStatus.APPLIED, None, seq)
                else:
                    self._answer(cid, AckStatus.REFUSED, "the table stopped before applying it; send it again", seq)

    # -- a command ------------------------------------------------------------------------

    def handle(self, topic: str, payload: bytes) -> AckStatus | None:
        """Take one message from the ``commands`` topic; the answer given (None: unreadable)."""
        try:
            command = parse_command(payload, where=topic)
        except BadMessage as exc:
            self.bad += 1
            logger.warning("bad hall command: %s", exc)
            cid = _loose_id(payload)
            if cid is not None:
                self.publish(Channel.ACKS, format_ack(Ack(cid, self.table, AckStatus.REFUSED, str(exc)[:1000])))
            return None
        if command.table != self.table:
            self.bad += 1
            logger.warning("hall command %s is for table %s, not %s", command.id, command.table, self.table)
            self.publish(Channel.ACKS, format_ack(Ack(command.id, self.table, AckStatus.REFUSED,
                                                      f"for table {command.table}, this is table {self.table}")))
            return AckStatus.REFUSED
        program = self.program
        with program._lock:  # nothing else is journaled or applied in between
            first = self.answered.get(command.id)
            if first is not None:
                self.publish(Channel.ACKS, format_ack(Ack(command.id, self.table, AckStatus.DUPLICATE,
                                                          f"already {first[0]}", first[2])))
                return AckStatus.DUPLICATE
            record = {"id": command.id, "kind": command.kind.value, "args": dict(command.args), "by": command.by}
            event = program.writer.append(HALL_COMMAND, record, at_ns=program._stamp(program.now_ns()))
            seq = event.seq if isinstance(event, JournalEvent) else None
            try:
                status, reason = self._apply(command)
            except Exception as exc:  # a command must never stop the table
                logger.exception("hall command %s failed", command.id)
                status, reason = AckStatus.REFUSED, f"failed at the table: {exc}"
            self._answer(command.id, status, reason, seq)
        return status

    def _answer(self, cid: str, status: AckStatus, reason: str | None, seq: int | None) -> None:
        payload = {"command": cid, "status": status.value, "reason": reason, "seq": seq}
        self.program.writer.append(HALL_ACK, payload, at_ns=self.program._stamp(self.program.now_ns()))
        self.answered[cid] = (status.value, reason, seq)
        if self.on_ack is not None:
            self.on_ack()

    def _apply(self, command: Command) -> tuple[AckStatus, str | None]:
        a = command.args
        by = command.by
        kind = command.kind
        if kind is CommandKind.SEND_EVIDENCE:
            return self._evidence(command)
        if kind in (CommandKind.CONFIRM_ROW, CommandKind.CORRECT_ROW):
            event: dict[str, Any] = {"action": "confirm_row", "game": a["game"], "row": a["row"]}
            event.update({k: a[k] for k in ("guess", "black", "white") if a.get(k) is not None})
            if kind is CommandKind.CORRECT_ROW:
                event["hand"] = True
            return self._run("arbiter", {**event, "by": by, TAG: command.id})
        if kind is CommandKind.ADJUST_CLOCK:
            return self._run("arbiter", {"action": "adjust", "player": PLAYERS.index(a["player"]),
                                         "delta_ns": int(a["delta_ms"]) * 1_000_000, "by": by, TAG: command.id})
        if kind is CommandKind.ENTER_RESULT:
            return self._run("arbiter", {"action": "confirm_secret", "game": a["game"], "code": list(a["secret"]),
                                         "by": by, TAG: command.id})
        penalty: dict[str, Any] = {"action": "penalty", "player": PLAYERS.index(a["player"]),
                                   "penalty": a["penalty"], "by": by, "why": str(a.get("why") or "hall"),
                                   TAG: command.id}
        if a.get("time_ms") is not None:
            penalty["time_ns"] = int(a["time_ms"]) * 1_000_000
        if a.get("points") is not None:
            penalty["points"] = a["points"]
        return self._run(RULING, penalty)

    def _run(self, kind: str, payload: Mapping[str, Any]) -> tuple[AckStatus, str | None]:
        program = self.program
        said = len(program.transcript)
        outcome = program._journal_and_apply(kind, payload, program.now_ns())
        if outcome.ignored:
            return AckStatus.REFUSED, outcome.ignored
        if not outcome.lines and not outcome.verdicts:
            # The flow refused it (FlowError): the table said why in its transcript.
            lines = program.transcript[said:]
            return AckStatus.REFUSED, lines[-1] if lines else "refused by the table"
        return AckStatus.APPLIED, None

    def _evidence(self, command: Command) -> tuple[AckStatus, str | None]:
        game, row = int(command.args["game"]), int(command.args["row"])
        program = self.program
        flow = program.flow
        running = not (game < flow.game.number or flow.game.final)
        if row == 0 and running:
            return AckStatus.REFUSED, "the secret row's frame is sent after the game"
        stored = program.journal.evidence(game, row)
        if stored is None or stored.pruned or not stored.image:
            return AckStatus.REFUSED, f"no evidence frame kept for game {game} row {row}"
        reader = getattr(program.worker, "reader", None)
        profile = getattr(reader, "profile", None)
        calibration = getattr(reader, "calibration", None)
        try:
            localiser = calibration.localiser(profile) if calibration is not None and profile is not None else None
            framed = frame_evidence(stored.image, profile=profile, localiser=localiser, mask_secret=running)
        except EvidenceRefused as exc:
            return AckStatus.REFUSED, str(exc)
        self.publish(Channel.EVIDENCE, format_evidence(Evidence(
            command.id, self.table, game, row, framed.jpeg, framed.grid, framed.masked_secret)))
        return AckStatus.APPLIED, None


def _loose_id(payload: bytes) -> str | None:
    """The id of a command that did not parse, when there is a plausible one to answer."""
    try:
        data = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    cid = data.get("id") if isinstance(data, dict) else None
    if isinstance(cid, str) and 0 < len(cid) <= 64 and all(c.isalnum() or c in "_-" for c in cid):
        return cid
    return None
