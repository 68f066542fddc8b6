"""The camera preview for mounting the camera: the board's grid drawn on its view.

:mod:`~pegwatch.device.preview.look` says what one frame shows (markers,
pixels per millimetre, sharpness) and draws it;
:mod:`~pegwatch.device.preview.capture` keeps the latest annotated frame in
a thread of its own and writes it as a JPEG; :mod:`~pegwatch.device.preview.page`
serves it on the local network (Starlette and uvicorn, off by default:
:mod:`~pegwatch.device.preview.settings`). ``pegwatch preview`` is the command.

Only the settings are imported here: the table's configuration reads them
without loading OpenCV.
"""

from __future__ import annotations

from pegwatch.device.preview.settings import PreviewSettings, parse_listen

__all__ = ["PreviewSettings", "parse_listen"]
