"""Still images: :func:`read_image` (one file, safely) and :class:`ImageFolderSource`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pegwatch.rules.textfile import read_bytes
from pegwatch.vision.sources.base import EndOfFrames, Frame, SourceBase, SourceError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")


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
    if not Path(path).is_file():
        raise SourceError(f"{shown}: image file not found")
    data = read_bytes(path, limit=MAX_IMAGE_BYTES, what="an image", error=SourceError, name=shown)
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
