"""``pegwatch hub``: the tournament hall's hub: the broker's tables in, the arbiter's page out.

``pegwatch hub --broker mqtt://HOST:1883 --db hall.sqlite --http 127.0.0.1:8080
[--config hub.toml] [--tournament ID] [--username hub --password-file F]
[--ca-file F]`` subscribes to every table of the tournament, stores what
they send in the SQLite file, and serves the arbiter's page, the
spectators' page (``/hall``) and the JSON API until Ctrl-C.

``pegwatch hub --hash-password`` reads a password (twice at a terminal, else
one line of standard input) and prints the ``[[accounts]]`` entry to paste
into hub.toml. docs/hall.md, "The hub", says the rest.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import logging
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from pegwatch.rules.errors import BadInput

if TYPE_CHECKING:
    from pegwatch.hub.config import Account
    from pegwatch.hub.model import Tournament

__all__ = ["HubInputError", "register"]

logger = logging.getLogger(__name__)


class HubInputError(BadInput):
    """A flag of ``pegwatch hub`` is wrong."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``hub``."""
    p = sub.add_parser(
        "hub",
        help="the tournament hall: every table live for the arbiter, results and standings (MQTT + a web page)",
        description="Subscribe to the tables of a tournament on an MQTT broker, store what they send, and "
        "serve the arbiter's page, the spectators' page (/hall) and the JSON API (/api/...).",
    )
    p.add_argument("--broker", metavar="URL", help="the broker: mqtt://HOST:1883 or mqtts://HOST:8883")
    p.add_argument("--db", metavar="FILE", help="the hub's SQLite store (made if missing), e.g. hall.sqlite")
    p.add_argument("--http", metavar="HOST:PORT", default="127.0.0.1:8080",
                   help="serve the page here (default 127.0.0.1:8080; 0.0.0.0:8080 for the hall's network)")
    p.add_argument("--config", metavar="FILE", help="hub.toml: the tournament, [hall] tournament id, [[accounts]]")
    p.add_argument("--tournament", metavar="ID", help="the topics' tournament id (default: hub.toml's [hall])")
    p.add_argument("--username", metavar="NAME", default="hub", help="the broker user (default hub)")
    p.add_argument("--password-file", metavar="FILE", help="a file holding the broker user's password")
    p.add_argument("--ca-file", metavar="FILE", help="the CA of the broker's certificate (mqtts)")
    p.add_argument("--https-only", action="store_true",
                   help="send the session cookie over HTTPS only (behind a TLS proxy)")
    p.add_argument("--hash-password", action="store_true",
                   help="read a password and print its [[accounts]] entry for hub.toml, then exit")
    p.set_defaults(func=_hub)


def _read_file(path: str, what: str) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise HubInputError(f"{what} {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise HubInputError(f"{what} {path}: not UTF-8 text") from None
    return text.rstrip("\r\n")


def _hash_password() -> int:
    from pegwatch.hub.web.auth import hash_password

    if sys.stdin.isatty():
        password = getpass.getpass("password: ")
        if getpass.getpass("again: ") != password:
            raise HubInputError("--hash-password: the two passwords differ")
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    print("[[accounts]]")
    print('login = "CHANGE-ME"')
    print(f'password_hash = "{hash_password(password)}"')
    return 0


def _hub(args: argparse.Namespace) -> int:
    if args.hash_password:
        return _hash_password()
    from pegwatch.device.preview.settings import parse_listen
    from pegwatch.device.table.hall.settings import parse_broker_url
    from pegwatch.hub.config import HallSettings, load_hall, load_hub
    from pegwatch.hub.model import Game, GameKind, Tournament
    from pegwatch.hub.wire import BadMessage, check_id

    if not args.broker:
        raise HubInputError("--broker: say where the broker is, e.g. --broker mqtt://127.0.0.1:1883")
    if not args.db:
        raise HubInputError("--db: say where the hub keeps what it receives, e.g. --db hall.sqlite")
    try:
        tls, host, port = parse_broker_url(args.broker)
    except ValueError as exc:
        raise HubInputError(f"--broker: {exc}") from None
    try:
        http_host, http_port = parse_listen(args.http)
    except ValueError as exc:
        raise HubInputError(f"--http: {exc}") from None
    if args.ca_file and not tls:
        raise HubInputError("--ca-file: a CA file needs an mqtts:// broker")
    if args.ca_file and not Path(args.ca_file).is_file():
        raise HubInputError(f"--ca-file {args.ca_file}: no such file")
    password = _read_file(args.password_file, "--password-file") if args.password_file else None
    if args.config:
        tournament = load_hub(args.config)
        settings = load_hall(args.config)
    else:
        tournament, settings = Tournament("hall", Game(GameKind.MASTERMIND, "mso")), HallSettings()
    try:
        tournament_id = check_id(args.tournament or settings.tournament, "--tournament")
    except BadMessage as exc:
        raise HubInputError(str(exc)) from None
    if not settings.accounts:
        print("pegwatch hub: no [[accounts]] in hub.toml: nobody can log in as an arbiter "
              "(make one with pegwatch hub --hash-password)", file=sys.stderr)
    return _serve(args, tournament, settings.accounts, tournament_id, (tls, host, port), password,
                  (http_host, http_port))


def _stoppable_server_class() -> type:
    import uvicorn

    class StoppableServer(uvicorn.Server):
        """uvicorn's server, but a Ctrl-C or a systemd stop ends ``pegwatch hub`` with status 0
        after its graceful shutdown, instead of raising the signal again once it is done."""

        on_exit: Callable[[], None] = staticmethod(lambda: None)

        def handle_exit(self, sig: int, frame: FrameType | None) -> None:
            self.on_exit()  # end the open live streams, or the graceful shutdown waits for them
            super().handle_exit(sig, frame)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            originals = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in originals.items():
                    signal.signal(sig, handler)

    return StoppableServer


def _check_free(host: str, port: int) -> None:
    """Say a taken port in one line now, not in uvicorn's log after the broker is joined."""
    try:
        with socket.create_server((host, port)):
            pass
    except OSError as exc:
        raise HubInputError(f"--http {host}:{port}: cannot listen there ({exc.strerror or exc})") from None


def _serve(args: argparse.Namespace, tournament: Tournament, accounts: tuple[Account, ...], tournament_id: str,
           broker: tuple[bool, str, int], password: str | None, http: tuple[str, int]) -> int:
    import uvicorn

    from pegwatch.hub.service import Hall, HallLink
    from pegwatch.hub.store import SqliteHallStore
    from pegwatch.hub.web import create_app

    tls, host, port = broker
    _check_free(*http)
    _StoppableServer = _stoppable_server_class()
    with SqliteHallStore(args.db) as store:
        hall = Hall(store, tournament, tournament_id=tournament_id)
        link = HallLink(hall, host, port, username=args.username or None, password=password,
                        ca_file=args.ca_file, tls=tls)
        app = create_app(hall, accounts, https_only=args.https_only)
        config = uvicorn.Config(app, host=http[0], port=http[1], log_level="warning", access_log=False,
                                timeout_graceful_shutdown=2)
        server = _StoppableServer(config)
        server.on_exit = app.state.broadcaster.close
        print(f"pegwatch hub: tournament {tournament_id}, broker {host}:{port}, "
              f"page http://{http[0]}:{http[1]}/ (spectators /hall), store {args.db}", flush=True)
        with link:
            server.run()
        counters = store.counters()
    if counters:
        print("pegwatch hub: " + ", ".join(f"{k} {v}" for k, v in counters.items()))
    return 0 if server.started else 2
