"""The guided set-up of a table that has never been calibrated (issue 15 §1; docs/setup.md).

:mod:`~pegwatch.device.table.setup.machine` is the set-up as a pure state
machine (steps, buttons, what the display says);
:mod:`~pegwatch.device.table.setup.driver` runs it at the table (frames,
calibrations, the vision worker in low trust);
:mod:`~pegwatch.device.table.setup.layout` is the layout of pegs that
teaches every colour at once. :func:`guided_setup` is what ``pegwatch run``
calls.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pegwatch.device.table.program import TableProgram
    from pegwatch.device.table.setup.driver import GuidedSetup

logger = logging.getLogger(__name__)

__all__ = ["guided_setup", "setup_calibration_path"]


def setup_calibration_path(journal: Path) -> Path:
    """Where the set-up keeps the table's calibration: beside its journal."""
    from pegwatch.device.table.setup.driver import CALIBRATION_NAME

    return journal.parent / CALIBRATION_NAME


def guided_setup(
    cfg: Any,
    program: TableProgram,
    *,
    desk: Any,
    open_source: Callable[[], Any],
) -> GuidedSetup | None:
    """The set-up for a table with no ``[table] calibration``, or None when it needs none.

    The desktop's simulated desk calibrates its own rendered board, unless
    it asks for the set-up (``desk.guided_setup``, a fresh table's
    simulation). A calibration the set-up saved before (beside the journal)
    is carried on from. With ``[preview] enabled`` the camera page is served
    while the set-up runs. Call ``start()`` on the result, attach its
    ``buttons(arbiter)`` and draw its ``overlay`` on the display.
    """
    if cfg.calibration is not None:
        return None
    if cfg.camera == "render" and desk is not None and not getattr(desk, "guided_setup", False):
        return None
    from pegwatch.device.table.setup.driver import GuidedSetup
    from pegwatch.vision.calibration import Calibration
    from pegwatch.vision.profile import load_profile
    from pegwatch.vision.sources import PacedSource, ReopeningSource

    profile = load_profile(cfg.board)
    save_to = setup_calibration_path(Path(program.journal.path))
    base = None
    if save_to.is_file():
        try:
            base = Calibration.load(save_to)
            if base.profile != profile.name:
                logger.error("set-up: %s is for board %s, not %s; starting afresh", save_to, base.profile, profile.name)
                base = None
        except Exception as exc:  # a damaged file: set up again rather than stop
            logger.error("set-up: %s not loaded (%s); starting afresh", save_to, exc)
    if base is None:
        # The words the table's log has always had for this, then what happens now.
        logger.error("camera %s has no calibration ([table] calibration): the guided set-up runs on "
                     "the table's display and buttons (docs/setup.md)", cfg.camera)
    else:
        logger.warning("camera %s: carrying on from the guided set-up's calibration %s (trust %s)",
                       cfg.camera, save_to, base.trust)
    source: Any = PacedSource(ReopeningSource(open_source, name=f"camera {cfg.camera}"), fps=cfg.vision.fps)
    companions: list[Any] = []
    preview = getattr(cfg, "preview", None)
    if preview is not None and preview.enabled:
        # [preview] enabled: the page shows what the set-up's camera sees, for mounting it.
        from pegwatch.device.preview.capture import FrameTap, PreviewCamera
        from pegwatch.device.preview.page import PageServer, preview_app

        camera = PreviewCamera(None, profile, fps=preview.fps)
        source = FrameTap(source, camera)
        host, port = preview.address
        title = f"pegwatch camera: {getattr(cfg, 'table_name', 'table')}"
        companions = [camera, PageServer(preview_app(camera, title=title), host, port)]
    options = {
        "frames_to_accept": cfg.vision.frames_to_accept,
        "motion_threshold": cfg.vision.motion_threshold,
        "jpeg_quality": cfg.vision.jpeg_quality,
        "evidence": cfg.evidence,
    }
    return GuidedSetup(program, profile, source, save_to=save_to, worker_options=options, base=base,
                       companions=companions)
