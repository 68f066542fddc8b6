"""The camera preview for mounting the camera: the board's grid drawn on its view.

:mod:`~pegwatch.device.preview.look` says what one frame shows (markers,
pixels per millimetre, sharpness) and draws it;
:mod:`~pegwatch.device.preview.capture` keeps the latest annotated frame in
a thread of its own and writes it as a JPEG; :mod:`~pegwatch.device.preview.page`
serves it on the local network (Starlette and uvicorn, off by default:
:mod:`~pegwatch.device.preview.settings`). ``pegwatch preview`` is the command.
"""

from __future__ import annotations

from pegwatch.device.preview.capture import PreviewCamera, Snapshot, annotate, write_jpeg_atomic
from pegwatch.device.preview.look import Look, PreviewLocaliser, draw_look, look_at
from pegwatch.device.preview.settings import PreviewSettings, parse_listen

__all__ = [
    "Look",
    "PreviewCamera",
    "PreviewLocaliser",
    "PreviewSettings",
    "Snapshot",
    "annotate",
    "draw_look",
    "look_at",
    "parse_listen",
    "write_jpeg_atomic",
]
