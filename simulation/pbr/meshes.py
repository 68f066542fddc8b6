"""Small triangle meshes written once per process as OBJ files for Mitsuba: pegs and ellipsoids.

A peg is a lathe: a cylindrical body standing in its hole with a domed
head, its vertices in world millimetres about its own axis (z negative is
up, out of the board). The rim between body and dome is split so that the
shading normals keep the edge.
"""

from __future__ import annotations

import math
import tempfile
from functools import lru_cache
from pathlib import Path

_SEGMENTS = 28


@lru_cache(maxsize=1)
def _folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="pegwatch-pbr-"))


def _lathe(profile: list[tuple[float, float, float, float]], name: str) -> str:
    """Write a surface of revolution; ``profile`` is (radius, z, normal_r, normal_z) from the bottom up.

    Faces wind counter-clockwise seen from outside, the way Mitsuba's
    one-sided materials expect.
    """
    lines: list[str] = []
    n = _SEGMENTS
    for r, z, nr, nz in profile:
        for i in range(n):
            a = 2 * math.pi * i / n
            ca, sa = math.cos(a), math.sin(a)
            lines.append(f"v {r * ca:.5f} {r * sa:.5f} {z:.5f}")
            lines.append(f"vn {nr * ca:.5f} {nr * sa:.5f} {nz:.5f}")
    for k in range(len(profile) - 1):
        if profile[k][:2] == profile[k + 1][:2]:
            continue  # a split (normals differ), not a band
        for i in range(n):
            j = (i + 1) % n
            a, b = k * n + i + 1, k * n + j + 1
            c, d = (k + 1) * n + j + 1, (k + 1) * n + i + 1
            lines.append(f"f {a}//{a} {c}//{c} {b}//{b}")
            lines.append(f"f {a}//{a} {d}//{d} {c}//{c}")
    path = _folder() / f"{name}.obj"
    path.write_text("\n".join(lines) + "\n", encoding="ascii")
    return str(path)


@lru_cache(maxsize=64)
def peg_obj(radius: float, body: float, dome: float) -> str:
    """A peg of ``radius`` whose body rises ``body`` mm and whose dome ``dome`` mm more."""
    prof: list[tuple[float, float, float, float]] = [(radius, 0.5, 1.0, 0.0), (radius, -body, 1.0, 0.0)]
    steps = 8
    for s in range(steps + 1):
        t = s / steps * (math.pi / 2)
        r = radius * math.cos(t)
        z = -body - dome * math.sin(t)
        # normal of the ellipse (r/a)^2 + (z/b)^2 = 1, pointing out and up
        nr, nz = math.cos(t) / radius, -math.sin(t) / max(dome, 1e-6)
        ln = math.hypot(nr, nz)
        prof.append((max(r, 1e-4), z, nr / ln, nz / ln))
    return _lathe(prof, f"peg_{radius:.3f}_{body:.3f}_{dome:.3f}")


@lru_cache(maxsize=1)
def sphere_obj() -> str:
    """A unit sphere (for ellipsoids: Mitsuba's own sphere takes no non-uniform scale)."""
    prof: list[tuple[float, float, float, float]] = []
    steps = 14
    for s in range(steps + 1):
        t = -math.pi / 2 + math.pi * s / steps
        # bottom (z = +1, into the table) to top (z = -1)
        r, z = math.cos(t), -math.sin(t)
        prof.append((max(r, 1e-4), z, r, z))
    return _lathe(prof, "sphere")
