"""The ``pegwatch`` command line.

Each group of subcommands lives in a module of its own that exposes
``register(subparsers)``; handlers take the parsed namespace and return an
exit status. Heavy imports (OpenCV, luma, gpiozero) happen inside the
handlers so that ``pegwatch --help`` stays instant.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Callable, Sequence

from pegwatch.rules.errors import DeviceFault, PegwatchError

_COMMAND_MODULES = (
    "pegwatch.device.cli.judge_cmd",
    "pegwatch.device.cli.markers_cmd",
    "pegwatch.device.cli.lens_cmd",
    "pegwatch.device.cli.profile_cmd",
    "pegwatch.device.cli.swatch_cmd",
    "pegwatch.device.cli.vision_cmd",
    "pegwatch.device.cli.table_cmd",
    "pegwatch.device.cli.preview_cmd",
    "pegwatch.device.cli.report_cmd",
    "pegwatch.device.cli.hub_cmd",
)

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pegwatch",
        description="Tournament-table companion for over-the-board Mastermind.",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug detail to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


#: An error line longer than this is cut (a value quoted from a file may be huge).
MAX_MESSAGE = 1000


def one_line(message: str) -> str:
    """``message`` as one printable line: control characters escaped, unpaired
    surrogates spelt out, cut at :data:`MAX_MESSAGE` characters."""
    text = "".join(
        ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape").decode("ascii")
        for ch in message
    )
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def _say(message: str) -> None:
    """Print one error line on standard error, whatever it holds."""
    line = one_line(message)
    try:
        print(line, file=sys.stderr)
    except UnicodeEncodeError:  # a terminal that cannot show it: plain ASCII then
        print(line.encode("ascii", "backslashreplace").decode("ascii"), file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    handler: Handler | None = getattr(args, "func", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        return handler(args)
    except DeviceFault as exc:
        # A part failed (camera, disk, ...): one line, and a status that is not "your input".
        _say(f"pegwatch {args.command}: {exc}")
        return 1
    except PegwatchError as exc:
        # Bad input gets one line naming what and where, never a traceback.
        _say(f"pegwatch {args.command}: {exc}")
        return 2
    except BrokenPipeError:
        # The reader went away (`pegwatch judge x.json | head`): not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        where = f" {exc.filename}" if exc.filename else ""
        _say(f"pegwatch {args.command}:{where}: {exc.strerror or exc}")
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
