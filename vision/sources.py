"""Where frames come from: the Pi camera, a webcam or video file, or image files.

All sources look the same to the rest of the program (:class:`FrameSource`):
``read()`` returns the freshest :class:`Frame` (BGR uint8, stamped with
``time.monotonic_ns()`` when it arrived), ``close()`` lets go of the device,
and each is a context manager. A camera that goes away raises
:class:`CameraUnavailableError`; the caller may retry, and the source then
reopens its device. A file or folder that has run out raises
:class:`EndOfFrames`.

Heavy or Pi-only imports (picamera2) happen when a source is opened, never
at import time.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, Self

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.errors import BadInput, DeviceFault, PegwatchError

logger = logging.getLogger(__name__)

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")


class SourceError(BadInput):
    """A frame source was asked for with a bad spec, path or option."""


class CameraUnavailableError(DeviceFault):
    """The camera cannot be opened or has gone away; ``read()`` again to retry (it reopens)."""


class EndOfFrames(PegwatchError):
    """A video file, image list or folder has no more frames."""


@dataclass(frozen=True)
class Frame:
    """One picture: ``image`` is H×W×3 uint8 BGR, ``at_ns`` its ``time.monotonic_ns()`` stamp."""

    image: NDArray[np.uint8]
    at_ns: int
    index: int


class FrameSource(Protocol):
    """What every source offers."""

    def read(self) -> Frame:
        """The freshest frame (never a stale queued one)."""
        ...

    def close(self) -> None:
        """Let go of the device; safe to call twice."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


class SourceBase:
    """Frame numbering, closing and the context manager, shared by all sources."""

    def __init__(self) -> None:
        self._index = 0
        self.closed = False

    def _frame(self, image: NDArray[np.uint8], at_ns: int | None = None) -> Frame:
        if image.ndim == 2:
            image = np.asarray(cv2.cvtColor(image, cv2.COLOR_GRAY2BGR), dtype=np.uint8)
        elif image.shape[2] == 4:
            image = np.asarray(cv2.cvtColor(image, cv2.COLOR_BGRA2BGR), dtype=np.uint8)
        f = Frame(image, time.monotonic_ns() if at_ns is None else at_ns, self._index)
        self._index += 1
        return f

    def _check_open(self) -> None:
        if self.closed:
            raise SourceError(f"{type(self).__name__} is closed")

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


# --- Raspberry Pi camera --------------------------------------------------------


class Picamera2Source(SourceBase):
    """The Pi camera (Camera Module 3, HQ camera) through picamera2, with exposure locked.

    On opening, auto exposure and auto white balance run until their
    metadata settles (or ``settle_timeout_s`` passes), then both are switched
    off and the settled ExposureTime, AnalogueGain and ColourGains are fixed,
    so that the colour model calibrated for the table stays valid. The main
    stream is RGB888, which is BGR in memory, as OpenCV wants. ``read``
    asks for a request that started after the call (``flush``) so a frame
    queued earlier is never returned.

    picamera2 comes from apt on Raspberry Pi OS (python3-picamera2).
    """

    def __init__(
        self,
        *,
        size: tuple[int, int] = (1280, 720),
        camera_num: int = 0,
        settle_frames: int = 8,
        settle_timeout_s: float = 4.0,
        settle_tolerance: float = 0.03,
        exposure_scale: float = 1.0,
    ) -> None:
        super().__init__()
        self.size = size
        self.camera_num = camera_num
        self.settle_frames = settle_frames
        self.settle_timeout_s = settle_timeout_s
        self.settle_tolerance = settle_tolerance
        self.exposure_scale = exposure_scale
        self.locked_controls: dict[str, Any] | None = None
        self._cam: Any = None
        self._flush_supported = True
        self._open()

    def _open(self) -> None:
        try:
            from picamera2 import Picamera2
        except ImportError:
            raise CameraUnavailableError(
                "picamera2 is not installed (on Raspberry Pi OS: sudo apt install python3-picamera2)"
            ) from None
        try:
            cam = Picamera2(self.camera_num)
            config = cam.create_video_configuration(
                main={"size": tuple(self.size), "format": "RGB888"}, buffer_count=2
            )
            cam.configure(config)
            cam.start()
        except (RuntimeError, OSError, IndexError) as exc:
            raise CameraUnavailableError(f"Pi camera {self.camera_num} cannot be opened: {exc}") from None
        self._cam = cam
        if self.locked_controls is None:
            self.locked_controls = self._settle()
        # Reopening after a failure keeps the first lock: the table's
        # calibration was made with it.
        cam.set_controls(self.locked_controls)
        logger.info("Pi camera exposure locked: %s", self.locked_controls)

    def _settle(self) -> dict[str, Any]:
        """Let AE/AWB converge, then return the controls that fix what they chose."""
        deadline = time.monotonic() + self.settle_timeout_s
        prev: tuple[float, float, float, float] | None = None
        stable = 0
        md: dict[str, Any] = {}
        seen = 0
        while time.monotonic() < deadline:
            md = dict(self._cam.capture_metadata())
            seen += 1
            gains = md.get("ColourGains") or (1.0, 1.0)
            cur = (float(md.get("ExposureTime", 0)), float(md.get("AnalogueGain", 1.0)), float(gains[0]), float(gains[1]))
            if prev is not None and all(
                abs(a - b) <= self.settle_tolerance * max(abs(b), 1e-6) for a, b in zip(cur, prev, strict=True)
            ):
                stable += 1
            else:
                stable = 0
            prev = cur
            if seen >= self.settle_frames and stable >= 3:
                break
        else:
            logger.warning("Pi camera exposure did not settle in %.1f s; locking what it has", self.settle_timeout_s)
        if prev is None:
            raise CameraUnavailableError("Pi camera gave no metadata while settling")
        exposure, gain, red, blue = prev
        return {
            "AeEnable": False,
            "AwbEnable": False,
            "ExposureTime": max(1, round(exposure * self.exposure_scale)),
            "AnalogueGain": gain,
            "ColourGains": (red, blue),
        }

    def read(self) -> Frame:
        """The next frame started after this call; reopens the camera if it had failed."""
        self._check_open()
        if self._cam is None:
            self._open()
        asked = time.monotonic_ns()
        try:
            for _attempt in range(4):
                if self._flush_supported:
                    try:
                        request = self._cam.capture_request(flush=True)
                    except TypeError:  # picamera2 before flush= was added
                        self._flush_supported = False
                        request = self._cam.capture_request()
                else:
                    request = self._cam.capture_request()
                try:
                    md = request.get_metadata()
                    stamp = md.get("SensorTimestamp")
                    # Without flush=, drop frames exposed before we asked.
                    # (SensorTimestamp is on the monotonic clock; a stamp far
                    # off means another clock, which cannot be compared.)
                    if (
                        not self._flush_supported
                        and stamp is not None
                        and abs(int(stamp) - asked) < 10_000_000_000
                        and int(stamp) < asked
                    ):
                        continue
                    image = np.asarray(request.make_array("main"), dtype=np.uint8)
                finally:
                    request.release()
                return self._frame(np.ascontiguousarray(image[:, :, :3]))
            raise CameraUnavailableError("Pi camera keeps returning stale frames")
        except (RuntimeError, OSError) as exc:
            self._drop()
            raise CameraUnavailableError(f"Pi camera failed: {exc}") from None

    def _drop(self) -> None:
        cam, self._cam = self._cam, None
        if cam is not None:
            with contextlib.suppress(Exception):
                cam.stop()
            with contextlib.suppress(Exception):
                cam.close()

    def close(self) -> None:
        """Stop and release the camera."""
        self._drop()
        super().close()


# --- OpenCV VideoCapture --------------------------------------------------------


class VideoCaptureSource(SourceBase):
    """A USB webcam (``/dev/video0`` or an index) or a video file, through OpenCV.

    Webcams get a one-frame buffer and are drained before each read so the
    frame is fresh; files are read in order (``loop`` to start again at the
    end, else :class:`EndOfFrames`). A webcam that fails is released and
    reopened on the next ``read``.
    """

    def __init__(
        self,
        device: str | int,
        *,
        size: tuple[int, int] | None = None,
        live: bool | None = None,
        loop: bool = False,
        drain_max: int = 4,
    ) -> None:
        super().__init__()
        self.device: str | int = device
        if isinstance(device, str) and device.isdigit():
            self.device = int(device)
        self.live = (isinstance(self.device, int) or str(self.device).startswith("/dev/")) if live is None else live
        if not self.live and not Path(str(self.device)).is_file():
            raise SourceError(f"{device}: video file not found")
        self.size = size
        self.loop = loop
        self.drain_max = drain_max
        self._cap: Any = None
        self._open()

    def _open(self) -> None:
        cap = cv2.VideoCapture(self.device)
        if not cap.isOpened():
            cap.release()
            raise CameraUnavailableError(f"{self.device}: cannot open video source")
        if self.live:
            cap.set(cv2.CAP_PROP_BUFFERSIZE, 1)
            if self.size is not None:
                cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.size[0])
                cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.size[1])
        self._cap = cap

    def read(self) -> Frame:
        """The freshest frame (webcam) or the next one (file)."""
        self._check_open()
        if self._cap is None:
            self._open()
        cap = self._cap
        if self.live:
            # Drain: a grab that returns at once came from the queue, not the sensor.
            ok = cap.grab()
            for _ in range(self.drain_max):
                if not ok:
                    break
                t = time.monotonic()
                ok = cap.grab()
                if time.monotonic() - t > 0.004:
                    break
            got, image = cap.retrieve() if ok else (False, None)
            if not got or image is None:
                self._release()
                raise CameraUnavailableError(f"{self.device}: camera stopped delivering frames")
            return self._frame(np.asarray(image, dtype=np.uint8))
        got, image = cap.read()
        if not got or image is None:
            if not self.loop:
                raise EndOfFrames(f"{self.device}: end of video after {self._index} frames")
            cap.set(cv2.CAP_PROP_POS_FRAMES, 0)
            got, image = cap.read()
            if not got or image is None:
                raise EndOfFrames(f"{self.device}: video has no readable frames")
        return self._frame(np.asarray(image, dtype=np.uint8))

    def _release(self) -> None:
        cap, self._cap = self._cap, None
        if cap is not None:
            cap.release()

    def close(self) -> None:
        """Release the device or file."""
        self._release()
        super().close()


# --- image files ----------------------------------------------------------------------


#: An image file larger than this is refused before it is read.
MAX_IMAGE_BYTES = 64 * 1024 * 1024
#: An image with more pixels than this is refused before it is decoded (the
#: largest camera mode is 4608x3496, 16 megapixels).
MAX_IMAGE_PIXELS = 40_000_000
#: The formats :func:`read_image` decodes.
IMAGE_FORMATS = ("PNG", "JPEG", "BMP", "TIFF", "WEBP", "PPM")


def read_image(path: str | Path, *, name: str | None = None) -> NDArray[np.uint8]:
    """An image file as H×W×3 uint8 BGR; :class:`SourceError` naming it when it is not one.

    Missing, empty, oversized (:data:`MAX_IMAGE_BYTES`, :data:`MAX_IMAGE_PIXELS`),
    truncated or corrupt files, and files of another kind, are refused in one
    message. Pillow decodes (it reports damage as errors instead of printing
    decoder warnings); EXIF orientation is applied and 16-bit images are
    scaled to 8 bits, as OpenCV's ``imread`` does.
    """
    import io
    import warnings

    from PIL import Image, ImageOps, UnidentifiedImageError

    shown = str(path) if name is None else name
    p = Path(path)
    try:
        if not p.is_file():
            raise SourceError(f"{shown}: image file not found")
        with p.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_IMAGE_BYTES:
                raise SourceError(f"{shown}: {size} bytes is too large for an image; the limit is {MAX_IMAGE_BYTES // (1024 * 1024)} MiB")
            data = f.read(MAX_IMAGE_BYTES + 1)
    except OSError as exc:
        raise SourceError(f"{shown}: cannot read: {exc.strerror or exc}") from None
    if not data:
        raise SourceError(f"{shown}: empty file, not a readable image")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=IMAGE_FORMATS) as im:
                width, height = im.size
                if width * height > MAX_IMAGE_PIXELS:
                    raise SourceError(
                        f"{shown}: {width}x{height} pixels is too large for an image; "
                        f"the limit is {MAX_IMAGE_PIXELS // 1_000_000} megapixels"
                    )
                im.load()
                upright = ImageOps.exif_transpose(im)
                rgb = _to_rgb8(upright)
    except SourceError:
        raise
    except Image.DecompressionBombError:
        raise SourceError(
            f"{shown}: too large for an image; the limit is {MAX_IMAGE_PIXELS // 1_000_000} megapixels"
        ) from None
    except UnidentifiedImageError:
        raise SourceError(
            f"{shown}: not a readable image (not {', '.join(IMAGE_FORMATS)}, or damaged)"
        ) from None
    except Exception as exc:  # a decoder has many ways to fail; they are one answer here
        why = str(exc).splitlines()[0][:80] if str(exc) else type(exc).__name__
        raise SourceError(f"{shown}: not a readable image ({why})") from None
    bgr: NDArray[np.uint8] = np.ascontiguousarray(rgb[:, :, ::-1])
    return bgr


def _to_rgb8(im: Any) -> NDArray[np.uint8]:
    """Pillow image to H×W×3 uint8 RGB (16-bit grey scaled down like OpenCV)."""
    if im.mode in ("I;16", "I;16B", "I;16L", "I;16N", "I"):
        grey = np.asarray(im, dtype=np.int64)
        scaled = np.clip(grey >> 8, 0, 255).astype(np.uint8)
        return np.repeat(scaled[:, :, None], 3, axis=2)
    out: NDArray[np.uint8] = np.asarray(im.convert("RGB"), dtype=np.uint8)
    return out


def _expand(paths: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(q for q in p.iterdir() if q.suffix.lower() in IMAGE_SUFFIXES)
            if not found:
                raise SourceError(f"{p}: folder holds no images ({', '.join(IMAGE_SUFFIXES)})")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise SourceError(f"{p}: no such image file or folder")
    if not out:
        raise SourceError("no images given")
    return out


class ImageFolderSource(SourceBase):
    """Still images from files and folders (folders in name order).

    Each image is given ``repeat`` times in a row (a still camera sees the
    same board several times), then the next; after the last comes
    :class:`EndOfFrames` unless ``loop``.
    """

    def __init__(self, paths: str | Path | Sequence[str | Path], *, repeat: int = 1, loop: bool = False) -> None:
        super().__init__()
        if isinstance(paths, str | Path):
            paths = [paths]
        if repeat < 1:
            raise SourceError(f"repeat must be at least 1, got {repeat}")
        self.paths = _expand(paths)
        self.repeat = repeat
        self.loop = loop
        self._pos = 0
        self._cache: tuple[int, NDArray[np.uint8]] | None = None

    @property
    def current_path(self) -> Path | None:
        """The file of the frame last read."""
        if self._pos == 0:
            return None
        return self.paths[((self._pos - 1) // self.repeat) % len(self.paths)]

    def read(self) -> Frame:
        """The next image."""
        self._check_open()
        total = len(self.paths) * self.repeat
        if self._pos >= total and not self.loop:
            raise EndOfFrames(f"no more images after {len(self.paths)} file(s)")
        k = (self._pos // self.repeat) % len(self.paths)
        self._pos += 1
        if self._cache is None or self._cache[0] != k:
            self._cache = (k, read_image(self.paths[k]))
        return self._frame(self._cache[1].copy())


# --- opening by spec -----------------------------------------------------------------------

SPECS = "picamera2[:N], video:DEVICE|FILE, images:PATH[,PATH...]"


def open_source(
    spec: str,
    *,
    size: tuple[int, int] | None = None,
    loop: bool = False,
) -> SourceBase:
    """Open a source from a spec such as ``"picamera2"``, ``"video:/dev/video0"``,
    ``"video:game.mp4"`` or ``"images:photos/"``.

    The renderer (``render``) is the simulation's:
    :func:`pegwatch.simulation.camera.open_source` adds it to these.
    """
    kind, _, arg = spec.partition(":")
    kind = kind.strip().lower()
    if kind == "picamera2":
        num = 0
        if arg:
            if not arg.isdigit():
                raise SourceError(f"camera spec {spec!r}: picamera2:N needs a camera number")
            num = int(arg)
        return Picamera2Source(camera_num=num, size=size or (1280, 720))
    if kind == "video":
        if not arg:
            raise SourceError(f"camera spec {spec!r}: video: needs a device (/dev/video0, 0) or a file")
        return VideoCaptureSource(arg, size=size, loop=loop)
    if kind == "images":
        if not arg:
            raise SourceError(f"camera spec {spec!r}: images: needs a file or folder")
        return ImageFolderSource([a for a in arg.split(",") if a], loop=loop)
    raise SourceError(f"camera spec {spec!r} is not one of {SPECS}")
