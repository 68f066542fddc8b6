"""Where frames come from: the Pi camera, a webcam or video file, or image files.

All sources look the same to the rest of the program (:class:`SourceBase`,
a :class:`FrameSource`): ``read()`` returns the freshest :class:`Frame` (BGR
uint8, stamped with ``time.monotonic_ns()`` when it arrived), ``close()``
lets go of the device, and each is a context manager. A camera that goes away raises
:class:`CameraUnavailableError`; the caller may retry, and the source then
reopens its device. A file or folder that has run out raises
:class:`EndOfFrames`.

Heavy or Pi-only imports (picamera2) happen when a source is opened, never
at import time.

Modules: ``base`` (:class:`Frame`, :class:`FrameSource`, :class:`SourceBase`,
the errors), ``pi_camera`` (:class:`Picamera2Source`), ``video``
(:class:`VideoCaptureSource`), ``images`` (:func:`read_image`,
:class:`ImageFolderSource`) and ``pacing`` (:class:`PacedSource`, at most
``fps`` reads a second; :class:`ReopeningSource`, opened again with backoff);
:func:`open_source` is here. Every public name
is importable from ``pegwatch.vision.sources``.
"""

from __future__ import annotations

from pegwatch.vision.sources.base import (
    CameraUnavailableError,
    EndOfFrames,
    Frame,
    FrameSource,
    SourceBase,
    SourceError,
)
from pegwatch.vision.sources.images import (
    IMAGE_FORMATS,
    IMAGE_SUFFIXES,
    MAX_IMAGE_BYTES,
    MAX_IMAGE_PIXELS,
    ImageFolderSource,
    read_image,
)
from pegwatch.vision.sources.pacing import PacedSource, ReopeningSource
from pegwatch.vision.sources.pi_camera import Picamera2Source
from pegwatch.vision.sources.video import VideoCaptureSource

__all__ = [
    "IMAGE_FORMATS",
    "IMAGE_SUFFIXES",
    "MAX_IMAGE_BYTES",
    "MAX_IMAGE_PIXELS",
    "SPECS",
    "CameraUnavailableError",
    "EndOfFrames",
    "Frame",
    "FrameSource",
    "ImageFolderSource",
    "PacedSource",
    "Picamera2Source",
    "ReopeningSource",
    "SourceBase",
    "SourceError",
    "VideoCaptureSource",
    "open_source",
    "read_image",
]

SPECS = "picamera2[:N], video:DEVICE|FILE, images:PATH[,PATH...]"


def open_source(
    spec: str,
    *,
    size: tuple[int, int] | None = None,
    loop: bool = False,
    fps: float = 10.0,
    focus: str = "distance",
    focus_cm: float = 36.0,
) -> SourceBase:
    """Open a source from a spec such as ``"picamera2"``, ``"video:/dev/video0"``,
    ``"video:game.mp4"`` or ``"images:photos/"``.

    The renderer (``render``) is the simulation's:
    :func:`pegwatch.simulation.camera.open_source` adds it to these.
    ``fps``, ``focus`` and ``focus_cm`` are the Pi camera's (``[camera]``).
    """
    kind, _, arg = spec.partition(":")
    kind = kind.strip().lower()
    if kind == "picamera2":
        num = 0
        if arg:
            if not arg.isdigit():
                raise SourceError(f"camera spec {spec!r}: picamera2:N needs a camera number")
            num = int(arg)
        return Picamera2Source(camera_num=num, size=size or (1280, 720), fps=fps, focus=focus,
                               focus_cm=focus_cm)
    if kind == "video":
        if not arg:
            raise SourceError(f"camera spec {spec!r}: video: needs a device (/dev/video0, 0) or a file")
        return VideoCaptureSource(arg, size=size, loop=loop)
    if kind == "images":
        if not arg:
            raise SourceError(f"camera spec {spec!r}: images: needs a file or folder")
        return ImageFolderSource([a for a in arg.split(",") if a], loop=loop)
    raise SourceError(f"camera spec {spec!r} is not one of {SPECS}")
