"""``pegwatch judge FILE.json [--json]``: the arbiter's verdict on a record.

The record format is in ``docs/records.md``; the readings of the rules in
``docs/rules.md``. Bad input raises a :class:`~pegwatch.rules.errors.BadInput` naming the file
and the place, which ``pegwatch.device.cli.main`` prints as one line with exit
status 2: a malformed record, and a record using more distinct colours than
its preset has (:class:`~pegwatch.rules.legality.ColourCountError`). A verdict
on a game whose secret was not seen is provisional, and says so.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pegwatch.rules.bounded import RowJudgement
    from pegwatch.rules.codes import Feedback
    from pegwatch.rules.judge import GameVerdict, MatchVerdict
    from pegwatch.rules.record import GameRecord, MatchRecord, Row
    from pegwatch.rules.variants import Variant

logger = logging.getLogger(__name__)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser(
        "judge",
        help="judge a recorded game or match",
        description=(
            "Judge a recorded Mastermind game or match (JSON, see docs/records.md) "
            "and print the verdict: attempts, mis-marked rows, VP."
        ),
    )
    p.add_argument("file", metavar="FILE.json", help="game or match record ('-' for stdin)")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")
    p.add_argument(
        "--variants",
        metavar="FILE.toml",
        help="extra rules presets (same keys as rules/data/variants.toml)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Judge ``args.file``; print the verdict; return the exit status."""
    # Imported here so that `pegwatch --help` does not load numpy.
    from pegwatch.rules.judge import judge_game, judge_match
    from pegwatch.rules.penalty_verdict import penalise_game, penalise_match
    from pegwatch.rules.record import MAX_RECORD_BYTES, MatchRecord, RecordError, load_record
    from pegwatch.rules.textfile import read_stdin_text, read_text
    from pegwatch.rules.variants import get_variant, load_variants

    extra = load_variants(args.variants) if args.variants else None
    source = "<stdin>" if args.file == "-" else args.file
    if args.file == "-":
        text = read_stdin_text(limit=MAX_RECORD_BYTES, what="a JSON record", error=RecordError)
    else:
        text = read_text(args.file, limit=MAX_RECORD_BYTES, what="a JSON record", error=RecordError)
    record = load_record(text, source=source, variants=extra)
    variant = get_variant(record.rules, extra)
    if isinstance(record, MatchRecord):
        match_verdict = judge_match(record, variant, source=source)
        # The arbiter's penalties (the record's ``penalties``), applied to the VP.
        match_verdict = penalise_match(
            match_verdict, record.penalties, failure_attempts=variant.failure_attempts
        )
        if args.json:
            print(json.dumps(match_verdict.to_json(), indent=2, ensure_ascii=False))
        else:
            print(format_match(record, match_verdict, variant))
    else:
        verdict = penalise_game(judge_game(record, variant, source=source), record.penalties)
        if args.json:
            print(json.dumps(verdict.to_json(), indent=2, ensure_ascii=False))
        else:
            print(format_game(record, verdict, variant))
    return 0


def _marks(marks: Feedback | None, unread: str | None = None, row: Row | None = None) -> str:
    if row is not None and row.bounds is not None and marks is None and row.bounds.is_marked:
        return f"{row.bounds.black} black {row.bounds.white} white"
    if unread is not None:
        return f"marks {unread}"
    return "unmarked" if marks is None else f"{marks.black} black {marks.white} white"


def _guess(row: Row) -> str:
    """The guess, a doubtful hole as {a|b} and an unread one as its word."""
    if row.bounds is None:
        return " ".join(row.guess)
    return " ".join(peg if hole is None or len(hole) == 1 else "{" + "|".join(hole) + "}"
                    for peg, hole in zip(row.guess, row.bounds.holes, strict=True))


def _bounded_remark(judgement: RowJudgement) -> str:
    from pegwatch.rules.bounded import Judgement

    if judgement.verdict is Judgement.MISMARK:
        remark = "  MIS-MARKED for every reading of its doubtful pegs"
        if judgement.expected is not None:
            remark += f" (should be {_marks(judgement.expected)})"
    elif judgement.verdict is Judgement.CORRECT:
        remark = "  not fully read: every reading agrees with the marks"
    else:
        parts = [f"hole {h}" for h in judgement.deciding_holes]
        parts += [f"the {k} count" for k in judgement.deciding_keys]
        remark = f"  UNSURE: {', '.join(parts) or 'its doubtful pegs'} decide{'s' if len(parts) == 1 else ''}"
    if judgement.may_be_code:
        remark += "  (may be the code)"
    return remark


def format_game(record: GameRecord, verdict: GameVerdict, variant: Variant, indent: str = "") -> str:
    """The verdict on one game, for a person."""
    lines: list[str] = []
    secret = " ".join(record.secret) if record.secret else "not seen"
    lines.append(f"{indent}rules {variant.name}: {variant.colours} colours, "
                 f"{variant.holes} holes, {variant.rows} rows; secret: {secret}")
    width = max((len(_guess(r)) for r in record.rows), default=0)
    illegal = {r.row for r in verdict.illegal_rows}
    within = {b.row: b.judgement for b in verdict.bounded_rows}
    for number, row in enumerate(record.rows, start=1):
        remark = ""
        after_code = verdict.solved_row is not None and number > verdict.solved_row
        if number in within:
            remark = _bounded_remark(within[number])
        elif number in verdict.unread_rows:
            remark = "  not fully read: not judged" + (
                "  (counted within bounds)" if verdict.consistency is not None else "")
        elif after_code and verdict.consistent is not None:
            remark = "  after an all-black mark: kept as evidence"
        elif after_code and verdict.expected_marks is not None:
            remark = "  after the code: ignored"
        elif verdict.expected_marks is not None and row.marks is not None:
            want = verdict.expected_marks[number - 1]
            if row.marks != want:
                remark = f"  MIS-MARKED (should be {_marks(want)})"
        if number == verdict.mismarked_row and verdict.mismark_by_timeout:
            remark += "  codemaker's time ran out: counts as incorrectly marked"
        if number == verdict.solved_row:
            remark += "  the code"
        if number in illegal:
            remark += "  ILLEGAL"
        lines.append(
            f"{indent}  row {number:2d}  {_guess(row):<{width}}  {_marks(row.marks, row.marks_unread, row)}{remark}"
        )
    if record.timeout is not None:
        lines.append(f"{indent}  timeout: the {record.timeout.value}'s time ran out")
    states = [] if verdict.finished else ["game not finished: as it stands now"]
    if not verdict.final:
        states.append("PROVISIONAL until the secret is shown")
    state = f" ({'; '.join(states)})" if states else ""
    lines.append(f"{indent}verdict{state}: {_result(verdict, variant)}")
    changes = [k for k in verdict.reveal_can_change if k != "illegal_secret"]
    if not verdict.final and changes:
        lines.append(f"{indent}showing the secret can still change: {', '.join(changes)}")
    if verdict.consistent is not None:
        suspects = ", ".join(map(str, verdict.suspect_rows or ())) or "none"
        lines.append(
            f"{indent}secret not seen, so no row is judged mis-marked: "
            f"{verdict.consistent} codes agree with the marks; suspect rows: {suspects}"
        )
        if verdict.consistency is not None and verdict.consistency.value == "unsure":
            lines.append(f"{indent}whether any code fits depends on the doubtful pegs "
                         f"({verdict.consistent_at_least} codes fit whatever they hold)")
    if variant.scoring.value == "home":
        lines.append(
            f"{indent}home scoring: codemaker {verdict.codemaker_points} points, decoder bonus "
            f"{verdict.decoder_bonus_points}" + ("; REPLAY the game" if verdict.replay else "")
        )
    lines.extend(
        f"{indent}note: {n}"
        for n in verdict.notes
        if not n.startswith(("illegal", "provisional until the secret is shown"))
    )
    lines.extend(f"{indent}illegal: {r.reason}" for r in verdict.illegal_rows)
    lines.extend(f"{indent}penalty: {_penalty_text(p)}" for p in verdict.penalties)
    if verdict.illegal_secret:
        lines.append(f"{indent}illegal: {verdict.illegal_secret}")
    return "\n".join(lines)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _result(verdict: GameVerdict, variant: Variant) -> str:
    from pegwatch.rules.variants import Scoring

    k = verdict.mismarked_row
    if variant.scoring is Scoring.HOME:
        if verdict.replay:
            return f"indication error on row {k}: the game is replayed"
        if verdict.solved:
            return f"solved on row {verdict.solved_row}"
        return "not solved"
    result = _plural(verdict.attempts, "attempt")
    if k is not None:
        result += f"; row {k} incorrectly marked"
        if verdict.codemaker_penalty_vp:
            result += (
                f", and it was the code: codemaker penalised {verdict.codemaker_penalty_vp:g} VP"
            )
        else:
            result += f", so the codebreaker is credited with solving on row {verdict.attempts}"
    elif verdict.solved:
        result += f"; solved on row {verdict.solved_row}"
    else:
        result += "; not solved"
    return result


def format_match(record: MatchRecord, verdict: MatchVerdict, variant: Variant) -> str:
    """The verdict on a match, for a person."""
    lines: list[str] = [f"match {record.players[0]} v {record.players[1]} ({variant.name})"]
    for i, (game, gv) in enumerate(zip(record.games, verdict.games, strict=True)):
        maker = verdict.codemakers[i]
        breaker = record.players[1] if maker == record.players[0] else record.players[0]
        lines.append(f"game {i + 1}: {maker} makes the code, {breaker} breaks it")
        lines.append(format_game(game, gv, variant, indent="  "))
    if not verdict.complete:
        lines.append(
            f"match incomplete: fewer than {variant.games_per_match} games played; no VP yet"
        )
    if not verdict.final:
        lines.append(
            "match result PROVISIONAL until every secret is shown; showing them can still "
            f"change: {', '.join(verdict.reveal_can_change) or 'nothing but the game details'}"
        )
    for p in record.players:
        extra = ""
        if verdict.points is not None:
            extra += f", {verdict.points[p]} points"
        if verdict.penalties_vp[p]:
            extra += f" (after a {verdict.penalties_vp[p]:g} VP penalty)"
        if verdict.illegal_moves.get(p):
            extra += f", {verdict.illegal_moves[p]} illegal moves"
        if verdict.docked_vp.get(p):
            extra += f", {verdict.docked_vp[p]:g} VP docked by the arbiter"
        lines.append(f"{p}: {_plural(verdict.attempts[p], 'attempt')}, {verdict.vp[p]:g} VP{extra}")
    lines.extend(f"penalty: {_penalty_text(given)}" for given in verdict.penalties)
    for number, loser in sorted(verdict.games_lost.items()):
        lines.append(f"game {number} lost by {loser} by penalty: counted as their worst result in the VP")
    return "\n".join(lines)


def _penalty_text(data: Mapping[str, Any]) -> str:
    from pegwatch.rules.penalties import Penalty

    return Penalty.from_json(data).text
