"""``pegwatch markers``: print the profile's ArUco markers at true size."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``markers`` to ``sub``."""
    p = sub.add_parser(
        "markers",
        help="write a printable sheet of the board's ArUco markers at true size",
        description=(
            "Write the board profile's ArUco markers at true size, labelled with their ids and "
            "where they go, with a 50 mm ruler to check the print scale. Print at 100 %%."
        ),
    )
    p.add_argument("--profile", default="invicta-12x4", help="board profile name or .toml path (default: %(default)s)")
    p.add_argument("-o", "--output", metavar="SHEET", help="output file, .pdf or .png (needed unless --charuco is given)")
    p.add_argument("--dpi", type=int, default=300, help="resolution of the sheet (default: %(default)s)")
    p.add_argument(
        "--swatch-card", default=None, metavar="CARD",
        help="also write the swatch card (.pdf or .png): a circle per peg colour, to teach the table its colours",
    )
    p.add_argument(
        "--charuco", default=None, metavar="SHEET",
        help="write the ChArUco board for pegwatch calibrate-lens (.pdf or .png, A4 landscape, true size)",
    )
    p.add_argument("--squares", default="7x5", help="the ChArUco board's squares, COLUMNSxROWS (default: %(default)s)")
    p.add_argument("--square-mm", type=float, default=30.0, help="a ChArUco square's side (default: %(default)s)")
    p.add_argument("--marker-mm", type=float, default=22.0, help="a ChArUco marker's side (default: %(default)s)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the sheet; bad profiles, ids or paths become one line on stderr (exit 2)."""
    from pegwatch.vision.markers import MarkerError, write_sheet
    from pegwatch.vision.profile import load_profile

    if args.output is None and args.charuco is None:
        raise MarkerError("say where to write the sheet: -o SHEET (the board's markers) or --charuco SHEET")
    if args.charuco is not None:
        from pegwatch.vision.charuco import CharucoSpec, write_charuco_sheet

        spec = CharucoSpec.parse(args.squares, args.square_mm, args.marker_mm, "DICT_5X5_100")
        board = write_charuco_sheet(args.charuco, spec, dpi=args.dpi)
        print(f"wrote {board}: ChArUco board, {spec.describe()}, for pegwatch calibrate-lens")
        if args.output is None:
            return 0
    profile = load_profile(args.profile)
    out = write_sheet(profile, args.output, dpi=args.dpi)
    ids = ", ".join(str(m.id) for m in profile.markers)
    print(f"wrote {out}: {profile.aruco_dictionary} markers {ids} for {profile.name} at {args.dpi} dpi")
    if args.swatch_card:
        from pegwatch.vision.swatch import card_for, write_card

        card = write_card(profile, args.swatch_card, dpi=args.dpi)
        card_ids = ", ".join(str(m.id) for m in card_for(profile).markers)
        print(f"wrote {card}: swatch card for {profile.name} (markers {card_ids}); put one peg of each colour on its circle")
    return 0
