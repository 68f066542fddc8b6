"""From the rendered light to a JPEG: lens distortion, blur, exposure, noise, Bayer, demosaicing.

The order is the physical one: the lens distorts and defocuses the light,
the camera shakes during the exposure, the sensor counts photons (shot
noise) behind an RGGB colour filter and adds read noise, the image
processor white-balances, demosaics and applies the sRGB curve, and the
encoder compresses to JPEG.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
from numpy.typing import NDArray

from pegwatch.simulation.pbr.camera import Camera
from pegwatch.simulation.pbr.conditions import PbrConditions, blackbody_rgb
from pegwatch.vision.colour import srgb_to_linear

F32 = NDArray[np.float32]

#: OpenCV names Bayer patterns by the second row's first two pixels: an RGGB sensor is "BG".
_DEMOSAIC = {"bilinear": cv2.COLOR_BayerBG2RGB, "ea": cv2.COLOR_BayerBG2RGB_EA, "vng": cv2.COLOR_BayerBG2RGB_VNG}


def _motion_kernel(length: float, deg: float) -> F32:
    n = math.ceil(length) | 1
    k = np.zeros((n + 2, n + 2), dtype=np.float32)
    c = (n + 1) / 2.0
    dx, dy = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    for t in np.linspace(-length / 2, length / 2, 4 * n + 1):
        x, y = c + t * dx, c + t * dy
        x0, y0 = math.floor(x), math.floor(y)
        fx, fy = x - x0, y - y0
        k[y0, x0] += (1 - fx) * (1 - fy)
        k[y0, x0 + 1] += fx * (1 - fy)
        k[y0 + 1, x0] += (1 - fx) * fy
        k[y0 + 1, x0 + 1] += fx * fy
    out: F32 = k / k.sum()
    return out


def mosaic_rggb(rgb: F32) -> F32:
    """The RGGB colour filter array: one channel per pixel."""
    raw = np.empty(rgb.shape[:2], dtype=np.float32)
    raw[0::2, 0::2] = rgb[0::2, 0::2, 0]
    raw[0::2, 1::2] = rgb[0::2, 1::2, 1]
    raw[1::2, 0::2] = rgb[1::2, 0::2, 1]
    raw[1::2, 1::2] = rgb[1::2, 1::2, 2]
    return raw


def _srgb_curve(x: F32) -> F32:
    x = np.clip(x, 0.0, 1.0)
    out: F32 = np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1 / 2.4) - 0.055).astype(np.float32)
    return out


def develop(
    light: F32, cam: Camera, c: PbrConditions, margin: int, rng: np.random.Generator
) -> tuple[bytes, NDArray[np.uint8]]:
    """The rendered linear RGB (with ``margin``) -> (JPEG bytes, the decoded BGR frame)."""
    if margin or cam.dist.any():
        mx, my = cam.distortion_maps(margin)
        img = cv2.remap(light, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    else:
        img = light
    if c.defocus_px > 0.05:
        img = cv2.GaussianBlur(img, (0, 0), c.defocus_px)
    if c.motion_px > 0.5:
        img = cv2.filter2D(img, -1, _motion_kernel(c.motion_px, c.motion_deg))
    # Auto exposure on the bright end of the frame, then the sensor's white balance.
    lum = img @ np.array([0.2126, 0.7152, 0.0722], dtype=np.float32)
    img = img * np.float32(c.exposure / max(float(np.percentile(lum, 99.5)), 1e-6))
    raw = mosaic_rggb(img.astype(np.float32))
    raw = np.clip(raw, 0.0, None)
    sigma = np.sqrt(raw / c.photons + c.read_noise**2)
    raw = raw + rng.standard_normal(raw.shape).astype(np.float32) * sigma.astype(np.float32)
    raw = np.round(np.clip(raw, 0.0, 1.0) * 4095.0) / 4095.0  # a 12-bit converter
    wb = blackbody_rgb(c.wb_kelvin)
    gains = np.array([wb[1] / max(wb[0], 1e-6), 1.0, wb[1] / max(wb[2], 1e-6)], dtype=np.float32)
    gain_map = np.empty_like(raw)
    gain_map[0::2, 0::2] = gains[0]
    gain_map[0::2, 1::2] = gains[1]
    gain_map[1::2, 0::2] = gains[1]
    gain_map[1::2, 1::2] = gains[2]
    raw = np.clip(raw * gain_map, 0.0, 1.0)
    code = _DEMOSAIC.get(c.demosaic, _DEMOSAIC["ea"])
    if c.demosaic == "vng":  # OpenCV's VNG takes 8-bit data only: demosaic after the curve
        enc = np.round(_srgb_curve(raw) * 255.0).astype(np.uint8)
        rgb8 = cv2.cvtColor(enc, code)
    else:
        rgb16 = cv2.cvtColor(np.round(raw * 65535.0).astype(np.uint16), code)
        rgb8 = np.round(_srgb_curve(rgb16.astype(np.float32) / 65535.0) * 255.0).astype(np.uint8)
    bgr = np.ascontiguousarray(rgb8[:, :, ::-1])
    ok, buf = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, int(c.jpeg_quality)])
    if not ok:  # pragma: no cover - OpenCV always encodes a uint8 BGR image
        raise RuntimeError("JPEG encoding failed")
    data = buf.tobytes()
    return data, decode_jpeg(data)


def decode_jpeg(data: bytes) -> NDArray[np.uint8]:
    """JPEG bytes -> a BGR frame, as a camera source would hand it over."""
    frame = cv2.imdecode(np.frombuffer(data, dtype=np.uint8), cv2.IMREAD_COLOR)
    if frame is None:
        raise ValueError("not a JPEG image")
    return np.asarray(frame, dtype=np.uint8)


def recapture(frame: NDArray[np.uint8], c: PbrConditions, rng: np.random.Generator) -> NDArray[np.uint8]:
    """The next frame of a fixed camera over a still scene: ``frame`` with the sensor's noise
    and JPEG drawn again, as the reader gets it (see ``benchmarks/vision.py``'s steady read).

    Only the developed frame is kept, not the light it came from: its sRGB is
    taken back to linear light, and shot and read noise (``c``'s) are added
    with the variance of the difference of two captures (twice one
    capture's), so that the new frame differs from ``frame`` as a second
    capture would. The noise is the raw data's, scaled by the white
    balance's gain per channel as :func:`develop` scales it; then the curve
    and ``c``'s JPEG again. Demosaicing's correlation between neighbours
    is not modelled.
    """
    lin = srgb_to_linear(np.asarray(frame, dtype=np.uint8)).astype(np.float32)
    wb = blackbody_rgb(c.wb_kelvin)
    gain = np.array([wb[1] / max(wb[2], 1e-6), 1.0, wb[1] / max(wb[0], 1e-6)], dtype=np.float32)  # B, G, R
    variance = gain * lin / np.float32(c.photons) + (gain * np.float32(c.read_noise)) ** 2
    sigma = np.sqrt(2.0 * variance).astype(np.float32)
    noisy = lin + rng.standard_normal(lin.shape).astype(np.float32) * sigma
    bgr = np.ascontiguousarray(np.round(_srgb_curve(noisy) * 255.0).astype(np.uint8))
    ok, buf = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, int(c.jpeg_quality)])
    if not ok:  # pragma: no cover - OpenCV always encodes a uint8 BGR image
        raise RuntimeError("JPEG encoding failed")
    return decode_jpeg(buf.tobytes())
