"""A row's evidence frame for the hall: the read grid in pixels, and the secret row masked while its game runs.

The frame is located afresh (a localiser of its own, not the vision
worker's, which is busy on its thread); the code holes of every row give
the grid the page draws. While the game runs, the secret row's band
(padded, and projected both on the board and at the height of the peg
heads) is painted over before the JPEG leaves the table. A frame whose
board cannot be located is not sent while its game runs: a mask that
might miss is no mask.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from pegwatch.hub.wire import MAX_EVIDENCE_BYTES
from pegwatch.rules.errors import BadInput

__all__ = ["EvidenceRefused", "FramedEvidence", "frame_evidence"]

#: Room around the secret holes' band, in mm: the shield and a peg leaning over.
MASK_PAD_MM: Final = 6.0
#: The largest JPEG whose base64 fits in an evidence message, with room for the rest.
MAX_JPEG_BYTES: Final = (MAX_EVIDENCE_BYTES - 16 * 1024) * 3 // 4


class EvidenceRefused(BadInput):
    """The evidence frame cannot be sent; the message says why."""


@dataclass(frozen=True)
class FramedEvidence:
    jpeg: bytes
    grid: tuple[tuple[float, float], ...]
    masked_secret: bool


def frame_evidence(jpeg: bytes, *, profile: Any, localiser: Any, mask_secret: bool,
                   quality: int = 85, max_jpeg_bytes: int = MAX_JPEG_BYTES) -> FramedEvidence:
    """The frame with its grid, masked when ``mask_secret`` (EvidenceRefused if it cannot be);
    made smaller, and its grid with it, until it fits in an evidence message."""
    framed = _frame(jpeg, profile=profile, localiser=localiser, mask_secret=mask_secret, quality=quality)
    return _fit(framed, max_jpeg_bytes)


def _fit(framed: FramedEvidence, max_jpeg_bytes: int) -> FramedEvidence:
    import cv2
    import numpy as np

    scale = 1.0
    out = framed
    while len(out.jpeg) > max_jpeg_bytes:
        scale *= 0.75
        frame = cv2.imdecode(np.frombuffer(framed.jpeg, dtype=np.uint8), cv2.IMREAD_COLOR)
        if frame is None or min(frame.shape[:2]) * scale < 64:
            raise EvidenceRefused(f"the frame does not fit in {max_jpeg_bytes} bytes")
        small = cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        ok, buf = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, 80])
        if not ok:
            raise EvidenceRefused("the frame could not be made smaller")
        grid = tuple((round(x * scale, 1), round(y * scale, 1)) for x, y in framed.grid)
        out = FramedEvidence(bytes(buf.tobytes()), grid, framed.masked_secret)
    return out


def _frame(jpeg: bytes, *, profile: Any, localiser: Any, mask_secret: bool, quality: int) -> FramedEvidence:
    import cv2
    import numpy as np

    if profile is None or localiser is None:
        if mask_secret:
            raise EvidenceRefused("no board profile to find the secret row with; sent after the game")
        return FramedEvidence(jpeg, (), False)
    frame = cv2.imdecode(np.frombuffer(jpeg, dtype=np.uint8), cv2.IMREAD_COLOR)
    if frame is None:
        raise EvidenceRefused("the stored frame is not a readable JPEG")
    loc = localiser.locate(frame)
    if not loc.ok:
        if mask_secret:
            raise EvidenceRefused(f"the board is not found in the frame ({loc.problem}); sent after the game")
        return FramedEvidence(jpeg, (), False)
    centres = [pt for row in range(1, profile.rows + 1) for pt in profile.hole_centres_mm(row)]
    grid = tuple((round(float(x), 1), round(float(y), 1)) for x, y in loc.to_image(centres))
    if not mask_secret:
        return FramedEvidence(jpeg, grid, False)
    x, y, w, h = profile.secret_box_mm()
    pad = MASK_PAD_MM
    corners = [(x - pad, y - pad), (x + w + pad, y - pad), (x + w + pad, y + h + pad), (x - pad, y + h + pad)]
    height = max(float(getattr(profile, "peg_head_height_mm", 0.0)), 20.0)
    points = np.vstack([loc.to_image(corners), loc.to_image_at_height(corners, height)])
    hull = cv2.convexHull(np.round(points).astype(np.int32))
    cv2.fillConvexPoly(frame, hull, (40, 40, 40))
    ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise EvidenceRefused("the masked frame could not be encoded")
    return FramedEvidence(bytes(buf.tobytes()), grid, True)
