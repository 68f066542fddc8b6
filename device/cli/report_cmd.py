"""``pegwatch report``: a table's journal as one self-contained HTML file (the hub's table view)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add this module's subcommand to ``sub``."""
    p = sub.add_parser(
        "report",
        help="write a journal's games as one HTML file: every row, its verdict, clocks and frames",
        description="The table-detail view of the hall's page, for an arbiter with no hub: every "
        "row with its guess, marks, verdict, both clocks when it was confirmed, any ruling, and "
        "its evidence frames with the read grid drawn on them. One file: CSS and images inside, "
        "no request leaves it.",
    )
    p.add_argument("journal", metavar="JOURNAL")
    p.add_argument("-o", "--output", metavar="OUT.html", default="game.html",
                   help="where to write the report (default: %(default)s)")
    p.add_argument("--game", metavar="N", type=int, help="only game N (default: every game)")
    p.add_argument("--mask-secret", action="store_true",
                   help="leave out the secret of a game not over: its code, the marks it gives, "
                   "and a solid box over the secret row on every frame")
    p.add_argument("--board", metavar="PROFILE",
                   help="the board profile, when the journal does not say (default: the table's, "
                   "else invicta-12x4)")
    p.add_argument("--calibration", metavar="CAL.json",
                   help="the table's calibration, for locating the board on its frames (default: "
                   "calibration.json beside the journal, or the one its configuration named)")
    p.set_defaults(func=_report)


def _report(args: argparse.Namespace) -> int:
    from pegwatch.device.table.report import write_report

    path = write_report(args.journal, args.output, game=args.game, mask_secret=args.mask_secret,
                        board=args.board, calibration=args.calibration)
    print(path)
    return 0
