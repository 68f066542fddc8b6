"""``pegwatch report``: a table's journal as one self-contained HTML file for an arbiter with no hub.

The journal is read into the same events the hall's hub stores
(:func:`journal_events`), folded into the view model the hub's page shows
(:func:`pegwatch.hub.detail.detail_from_events`) and rendered with the same
template (:func:`pegwatch.hub.render.render_detail`), with every evidence
frame drawn and inlined as a data URI.

Two facts the journal does not keep as such are derived here:

* **the clocks at each event** (``clock_ms``): the journal's presses, flags,
  arbiter actions and rulings are replayed through the table's own flow and
  clock (``FlowLog``, as ``pegwatch replay`` does), at their continuous
  times, and each seat's remaining time is read just after each event;
* **where the holes are on each evidence frame** (:func:`frame_grid`): the
  board is located again on the JPEG with the table's own localiser (its
  calibration, when one is found beside the journal or named by the
  configuration the journal kept; else the profile's ArUco markers), and
  the profile's hole centres are projected into the frame.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from pegwatch.device.table.clock_replay import ClockReplay, match_players
from pegwatch.device.table.journal import Evidence, Journal, JournalEvent, thaw
from pegwatch.hub.detail import TableDetail, detail_from_events
from pegwatch.hub.evidence import Grid, GridHole, data_uri, draw_grid
from pegwatch.rules.errors import BadInput
from pegwatch.rules.flow import FlowError

__all__ = ["ClockReplay", "ReportError", "frame_grid", "journal_events", "report_html", "write_report"]

logger = logging.getLogger(__name__)


class ReportError(BadInput):
    """A journal cannot be made into a report; the message names the file and why."""


@dataclass(frozen=True)
class JournalRead:
    """What a report needs of a journal: its events as the hub has them, its evidence, its meta."""

    events: tuple[dict[str, Any], ...]
    evidence: tuple[Evidence, ...]
    meta: Mapping[str, object]


def _header(events: Sequence[JournalEvent], where: Path) -> None:
    if not any(e.kind == "match" and match_players(e.payload) is not None for e in events):
        raise ReportError(f"{where}: no match event names the players; not a table journal")


def journal_events(path: str | Path) -> JournalRead:
    """The journal's events as ``{"seq", "kind", "t_ms", "data", "clock_ms"}`` mappings.

    ``t_ms`` is the continuous time (outages removed, ``docs/journal.md``);
    ``clock_ms`` is each seat's remaining time just after the event
    (:class:`ClockReplay`)."""
    p = Path(path)
    if not p.is_file():
        raise ReportError(f"{p}: no such journal")
    with Journal(p, create=False) as journal:
        events = list(journal.events())
        evidence = tuple(journal.all_evidence())
        meta = journal.meta
    _header(events, p)
    clocks = ClockReplay()
    out = []
    for event in events:
        try:
            t_ms, clock_ms = clocks.add(event)
        except (FlowError, BadInput) as exc:
            raise ReportError(f"{p}: event {event.seq} ({event.kind}): {exc}") from None
        out.append({"seq": event.seq, "kind": event.kind, "t_ms": t_ms, "data": thaw(event.payload),
                    "clock_ms": clock_ms})
    return JournalRead(tuple(out), evidence, meta)


def _localiser_and_profile(path: Path, meta: Mapping[str, object], board: str | None,
                           calibration: str | Path | None) -> tuple[Any, Any]:
    """The table's board profile and a factory of its localiser (see the module)."""
    from pegwatch.vision.calibration import Calibration
    from pegwatch.vision.localise import localiser_for
    from pegwatch.vision.profile import DEFAULT_PROFILE, load_profile

    config = meta.get("config")
    config = config if isinstance(config, Mapping) else {}
    cal_path: Path | None = Path(calibration) if calibration is not None else None
    if cal_path is None:
        named = config.get("calibration")
        for candidate in ((Path(named),) if isinstance(named, str) and named else ()) + (path.parent / "calibration.json",):
            if candidate.is_file():
                cal_path = candidate
                break
    cal = None
    if cal_path is not None:
        try:
            cal = Calibration.load(cal_path)
        except BadInput as exc:
            if calibration is not None:
                raise  # the one asked for: the arbiter must know it is bad
            # One found beside the journal: the markers still place the board.
            logger.warning("%s: not used to locate the board (%s); the markers are", cal_path, exc)
    name = board or (cal.profile if cal is not None else None) or config.get("board") or DEFAULT_PROFILE
    profile = load_profile(str(name))
    if cal is not None and cal.profile == profile.name:
        return profile, lambda: cal.localiser(profile)
    return profile, lambda: localiser_for(profile, "markers")


def frame_grid(frame: Any, profile: Any, localiser: Any, row: int) -> Grid | None:
    """Where the board and ``row``'s holes (0: the secret) are on ``frame`` (BGR), or None when not found."""
    loc = localiser.locate(frame)
    if not loc.ok or loc.image_to_board is None:
        return None

    def holes(centres: Sequence[tuple[float, float]], diameter: float) -> tuple[GridHole, ...]:
        pts = loc.to_image(np.array(centres, dtype=np.float64))
        edge = loc.to_image(np.array([(x + diameter / 2, y) for x, y in centres], dtype=np.float64))
        radii = np.hypot(*(edge - pts).T)
        return tuple(GridHole(float(x), float(y), float(r)) for (x, y), r in zip(pts, radii, strict=True))

    outline = tuple((float(x), float(y)) for x, y in loc.to_image(np.array(profile.corners_mm())))
    code_d, key_d = profile.code_hole_diameter_mm, profile.key_hole_diameter_mm
    secret = holes(profile.secret_centres_mm(), code_d)
    if row == 0:
        return Grid(outline, secret, secret=secret)
    others = [c for r in range(1, profile.rows + 1) if r != row for c in profile.hole_centres_mm(r)]
    return Grid(outline, holes(profile.hole_centres_mm(row), code_d), holes(profile.key_centres_mm(row), key_d),
                holes(others, code_d) if others else (), secret)


def _read_colours(reading: Mapping[str, object], row: int) -> tuple[list[str | None], list[str]]:
    """The colours the camera read on a frame (its own reading, kept with it) and their labels."""
    raw = reading.get("code" if row == 0 else "guess")
    words = [str(w) for w in raw] if isinstance(raw, tuple | list) else []
    return [None if w in ("unknown", "occluded", "empty") else w for w in words], words


def evidence_images(path: str | Path, read: JournalRead, detail: TableDetail, *, mask_secret: bool,
                    board: str | None = None, calibration: str | Path | None = None) -> dict[int, str]:
    """Every evidence frame the detail names, drawn and as a data URI, by the seq of its reading."""
    wanted = {named.seq: named for named in detail.evidence}
    if not wanted:
        return {}
    profile, make_localiser = _localiser_and_profile(Path(path), read.meta, board, calibration)
    over = {g.number: g.over for g in detail.games}
    images: dict[int, str] = {}
    for item in read.evidence:
        ref = wanted.get(item.event_seq)
        if ref is None or item.pruned:
            continue
        frame = cv2.imdecode(np.frombuffer(item.image, np.uint8), cv2.IMREAD_COLOR)
        if frame is None:
            logger.warning("%s: evidence of event %d is not a readable JPEG", path, item.event_seq)
            continue
        grid = frame_grid(frame, profile, make_localiser(), ref.row)
        mask = mask_secret and not over.get(ref.game, False)
        if grid is None and mask:
            continue  # the secret row cannot be placed, so the frame is not shown
        if grid is not None:
            cols, labels = _read_colours(item.reading, ref.row)
            if ref.row == 0 and mask:
                cols, labels = [], []
            grid = grid.with_colours(cols, labels)
        jpeg = draw_grid(item.image, grid, mask_secret=mask, what=f"{path}: evidence of event {item.event_seq}")
        images[item.event_seq] = data_uri(jpeg)
    return images


def report_html(path: str | Path, *, game: int | None = None, mask_secret: bool = False,
                board: str | None = None, calibration: str | Path | None = None) -> str:
    """The report of the journal at ``path`` as one HTML document (see the module)."""
    from pegwatch.hub.render import render_detail

    read = journal_events(path)
    table = read.meta.get("table")
    detail = detail_from_events(read.events, table=table if isinstance(table, str) else None,
                                mask_secret=mask_secret, games=None if game is None else (game,))
    if game is not None and not detail.games:
        known = sorted({g.number for g in detail_from_events(read.events).games})
        raise ReportError(f"{path}: no game {game} in this journal (games: {known})")
    images = evidence_images(path, read, detail, mask_secret=mask_secret, board=board, calibration=calibration)
    return render_detail(detail, standalone=True, images=images, source=Path(path).name)


def write_report(path: str | Path, out: str | Path, **options: Any) -> Path:
    """Write :func:`report_html` to ``out``; returns it."""
    html = report_html(path, **options)
    target = Path(out)
    try:
        target.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"{target}: cannot write the report: {exc.strerror or exc}") from None
    return target
