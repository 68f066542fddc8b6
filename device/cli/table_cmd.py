"""Subcommands of the table program: ``run``, ``demo``, ``export`` and ``replay``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pegwatch.device.table.run import Desk


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this module's subcommands to ``sub``."""
    p = sub.add_parser(
        "run",
        help="run the table: clock, camera, display and journal (simulated off the Pi)",
        description="Run a whole MSO match at the table from the table configuration. "
        "Off the Pi the devices are simulated: keys a / l are the players' buttons, "
        "space the arbiter's short press (pause, resume, or confirm a row waiting for a check), "
        "m holds it (the arbiter menu: enter a row by hand, adjust a time), "
        "c confirms a row the camera could not read, q quits.",
    )
    p.add_argument("--config", metavar="FILE", help="table configuration (default: $PEGWATCH_CONFIG "
                   "or firmware_config/pegwatch.toml)")
    p.add_argument("--journal", metavar="FILE", help="journal file (default: from the configuration)")
    p.add_argument("--new", action="store_true",
                   help="start a new match: the journal in use is kept under a numbered name")
    p.add_argument("--script", metavar="FILE", help="read commands from FILE ('-' for stdin) "
                   "instead of the keyboard: 'press 0', 'arbiter resume', 'quit'; each is "
                   "acknowledged with 'ack SEQ' once journaled")
    p.set_defaults(func=_run)

    p = sub.add_parser(
        "demo",
        help="play a complete scripted MSO match at a simulated table (under a minute)",
        description="A scripted MSO match with real vision on rendered frames, the real rules "
        "and clock and a real journal, with time compressed: one mis-mark caught, one "
        "uncertain reading resolved by the arbiter, one timeout.",
    )
    p.add_argument("--gif", metavar="OUT.gif", default="pegwatch-demo.gif",
                   help="where to write the display frames (default: %(default)s)")
    p.add_argument("--journal", metavar="FILE", default="pegwatch-demo.sqlite",
                   help="where to write the journal (default: %(default)s; replaced if present)")
    p.add_argument("--fast", action="store_true", help="skip the GIF")
    p.add_argument("--hall", metavar="URL", help="publish the match to a tournament hall's broker "
                   "(mqtt://HOST:1883 or mqtts://HOST:8883), as a table with [hall] does")
    p.add_argument("--table", metavar="NAME", default="1", help="the table's id in the hall (default: %(default)s)")
    p.add_argument("--tournament", metavar="T", default="demo", help="the tournament's id (default: %(default)s)")
    p.add_argument("--username", metavar="USER", help="the broker user (default: table-NAME)")
    p.add_argument("--password-file", metavar="FILE", help="a file holding the broker password")
    p.add_argument("--ca-file", metavar="FILE", help="the CA of an mqtts:// broker's certificate")
    p.set_defaults(func=_demo)

    p = sub.add_parser(
        "export",
        help="write the game records of a journal's finished games (judge format)",
    )
    p.add_argument("journal", metavar="JOURNAL")
    p.add_argument("-o", "--output", metavar="DIR", default=".", help="directory (default: .)")
    p.add_argument("--evidence", action="store_true",
                   help="also write the frame (JPEG) and reading behind every confirmed row")
    p.set_defaults(func=_export)

    p = sub.add_parser(
        "replay",
        help="re-run a journal and check that it reaches the verdicts it recorded",
    )
    p.add_argument("journal", metavar="JOURNAL")
    p.add_argument("--json", action="store_true", help="print the verdicts as JSON")
    p.set_defaults(func=_replay)


def _demo(args: argparse.Namespace) -> int:
    from pegwatch.simulation.demo import run_demo

    hall = None
    if args.hall is not None:
        from pegwatch.device.table.hall.settings import HallSettings

        keys = {"broker": args.hall, "table": args.table, "tournament": args.tournament,
                "username": args.username, "password_file": args.password_file, "ca_file": args.ca_file}
        hall = HallSettings.from_mapping({k: v for k, v in keys.items() if v is not None},
                                         source="command line", base=Path.cwd())
    result = run_demo(journal=args.journal, gif=None if args.fast else args.gif, hall=hall)
    return 0 if result.result.get("phase") == "match_over" else 1


def _export(args: argparse.Namespace) -> int:
    from pegwatch.device.table.export import export_records

    written = export_records(args.journal, args.output, evidence=args.evidence)
    if not written:
        print(f"pegwatch export: {args.journal}: no finished game", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0


def _replay(args: argparse.Namespace) -> int:
    from pegwatch.device.table.program import replay_journal

    result = replay_journal(args.journal)
    if args.json:
        print(json.dumps({
            "events": result.events,
            "verdicts": [v.to_json() for v in result.verdicts],
            "mismatches": list(result.mismatches),
            "phase": result.flow.phase.value,
            "illegal_moves": result.flow.illegal_counts(),
        }, indent=2))
    else:
        flow = result.flow
        print(f"{args.journal}: {result.events} events, {len(result.verdicts)} verdicts; "
              f"phase: {flow.phase.value.replace('_', ' ')}")
        if flow.match_verdict is not None:
            mv = flow.match_verdict
            print("result: " + ", ".join(
                f"{p} {mv.vp[p]:g} VP ({mv.attempts[p]} attempts)" for p in flow.players))
        illegal = flow.illegal_counts()
        if any(illegal.values()):
            print("illegal moves: " + ", ".join(f"{p} {illegal[p]}" for p in flow.players))
    if result.mismatches:
        print(f"pegwatch replay: {args.journal}: {len(result.mismatches)} verdicts differ; "
              f"first: {result.mismatches[0]}", file=sys.stderr)
        return 1
    if not args.json:
        print("replay: every verdict reproduced")
    return 0


def _run(args: argparse.Namespace) -> int:
    from pegwatch.device.table.run import run_table

    return run_table(config=args.config, journal=args.journal, script=args.script, new=args.new,
                     desk=_simulated_desk)


def _simulated_desk() -> Desk:
    """The keyboard and the rendered board, for a table off the Pi (imported only then)."""
    from pegwatch.simulation.desk import SimulatedDesk

    return SimulatedDesk()
