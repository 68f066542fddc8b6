"""``pegwatch preview``: the camera's view with the board's grid, for mounting the camera.

``pegwatch preview [--config F] [--source SPEC] [--jpeg PATH] [--http HOST:PORT]
[--once] [--seconds N]`` reads the configured camera (or ``--source``),
finds the board, and shows the frame with the board's outline and holes
drawn on it and three verdicts: markers found, pixels per millimetre
against what the reader needs, sharpness.

* ``--jpeg PATH`` rewrites PATH with every new frame (atomically);
* ``--http HOST:PORT`` serves the page on the network (also when
  ``[preview] enabled = true``, at ``[preview] listen``);
* ``--once`` takes one frame, prints the verdicts and exits: 0 when the
  mount is right, 1 when something is wrong.

Without ``--once`` it runs until Ctrl-C (or ``--seconds``), printing the
verdicts whenever they change.
"""

from __future__ import annotations

import argparse
import sys
import threading
from typing import TYPE_CHECKING, Any

from pegwatch.rules.errors import BadInput

if TYPE_CHECKING:
    from pegwatch.device.preview.capture import PreviewCamera, Snapshot
    from pegwatch.device.table.config import TableConfig


class PreviewInputError(BadInput):
    """A flag of ``pegwatch preview`` is wrong."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``preview``."""
    p = sub.add_parser(
        "preview",
        help="show the camera's view with the board's grid (JPEG file or a page on the network)",
        description="For mounting the camera: the board's outline and holes drawn on the camera's "
        "view, whether the markers are found, the pixels per millimetre against what the reader "
        "needs, and whether the picture is sharp.",
    )
    p.add_argument("--config", metavar="FILE", help="table configuration (default: $PEGWATCH_CONFIG "
                   "or firmware_config/pegwatch.toml)")
    p.add_argument("--source", metavar="SPEC", help="camera instead of the configuration's "
                   "(picamera2, video:N, video:FILE, images:DIR, render)")
    p.add_argument("--jpeg", metavar="PATH", help="rewrite PATH with every new frame")
    p.add_argument("--http", metavar="HOST:PORT", help="serve the page here (e.g. 0.0.0.0:8000)")
    p.add_argument("--once", action="store_true", help="one frame: print what it says and exit "
                   "(0: the mount is right, 1: it is not)")
    p.add_argument("--seconds", type=float, metavar="N", help="stop after N seconds")
    p.set_defaults(func=_preview)


def _preview(args: argparse.Namespace) -> int:
    from pegwatch.device.preview import PreviewSettings, parse_listen
    from pegwatch.device.preview.capture import PreviewCamera, write_jpeg_atomic
    from pegwatch.device.table.config import load_config
    from pegwatch.vision.profile import load_profile

    cfg = load_config(args.config)
    settings: PreviewSettings = getattr(cfg, "preview", None) or PreviewSettings()
    listen: tuple[str, int] | None = None
    if args.http is not None:
        try:
            listen = parse_listen(args.http)
        except ValueError as exc:
            raise PreviewInputError(f"--http: {exc}") from None
    elif settings.enabled and not args.once:
        listen = settings.address
    if args.seconds is not None and not args.seconds > 0:
        raise PreviewInputError(f"--seconds: {args.seconds} is not a positive number of seconds")
    if listen is None and args.jpeg is None and not args.once:
        raise PreviewInputError("say where to show the preview: --jpeg PATH, --http HOST:PORT "
                                "(or [preview] enabled = true), or --once")
    profile = load_profile(cfg.board)
    source = _source(args.source or cfg.camera, cfg, profile)

    def write(snap: Snapshot) -> None:
        if args.jpeg is not None:
            write_jpeg_atomic(args.jpeg, snap.jpeg)

    camera = PreviewCamera(source, profile, localiser=_localiser(cfg, profile), fps=settings.fps,
                           on_snapshot=write)
    with camera:
        if args.once:
            snap = camera.step()
            for line in snap.look.lines():
                print(line)
            if args.jpeg is not None:
                print(f"wrote {args.jpeg}")
            return 0 if snap.look.good else 1
        camera.start()
        if listen is not None:
            return _serve(camera, listen, cfg, args.seconds)
        _follow(camera, args.seconds)
    return 0


def _source(spec: str, cfg: TableConfig, profile: Any) -> Any:
    """The frame source: the configuration's camera, the renderer included (this is the composition root)."""
    kind, _, arg = spec.partition(":")
    if kind == "render":
        from pegwatch.simulation.camera import open_source as open_rendered

        return open_rendered("render", profile=profile, size=cfg.vision.resolution)
    from pegwatch.vision.sources import open_source

    if kind == "webcam":
        spec = f"video:{arg or '0'}"
    return open_source(spec, size=cfg.vision.resolution)


def _localiser(cfg: TableConfig, profile: Any) -> Any:
    """A table calibrated with fixed corners (in ``[table] calibration``, or by
    its guided set-up, beside the journal) is previewed with them; else
    markers, then the board's outline."""
    from pegwatch.device.table.setup import setup_calibration_path
    from pegwatch.vision.calibration import Calibration

    path = cfg.calibration if cfg.calibration is not None else setup_calibration_path(cfg.journal)
    if not path.is_file():
        return None
    calibration = Calibration.load(path)
    if calibration.method == "markers" or calibration.profile != profile.name:
        return None
    return calibration.localiser(profile)


def _follow(camera: PreviewCamera, seconds: float | None) -> None:
    """Print the verdicts whenever they change, until Ctrl-C or ``seconds``."""
    import time

    end = None if seconds is None else time.monotonic() + seconds
    shown: list[str] = []
    index = 0
    while end is None or time.monotonic() < end:
        wait = 1.0 if end is None else max(0.0, min(1.0, end - time.monotonic()))
        snap = camera.wait_for_snapshot(index, timeout=wait)
        if snap is None:
            continue
        index = snap.index
        lines = snap.look.lines()
        if lines != shown:
            print("; ".join(lines), flush=True)
            shown = lines


def _serve(camera: PreviewCamera, listen: tuple[str, int], cfg: TableConfig, seconds: float | None) -> int:
    from pegwatch.device.preview.page import preview_app, serve

    host, port = listen
    server = serve(preview_app(camera, title=f"pegwatch camera: {cfg.table_name}"), host, port)
    if seconds is not None:
        timer = threading.Timer(seconds, lambda: setattr(server, "should_exit", True))
        timer.daemon = True
        timer.start()
    shown = "this machine's address" if host in ("0.0.0.0", "::") else host
    print(f"the camera page: http://{shown}:{port}/ (Ctrl-C stops)", file=sys.stderr, flush=True)
    server.run()
    return 0
