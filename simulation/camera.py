"""The simulated camera: frames of a rendered board, behind the same interface as a real one.

:class:`RenderedSource` is a :class:`~pegwatch.vision.sources.SourceBase`
like the Pi camera, so the vision worker, ``pegwatch read`` and the tests
cannot tell it from one. :func:`open_source` is
:func:`pegwatch.vision.sources.open_source` plus the ``render`` spec.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from pegwatch.vision import sources
from pegwatch.vision.profile import BoardProfile, load_profile
from pegwatch.vision.sources import Frame, SourceBase

__all__ = ["SPECS", "RenderedSource", "open_source"]

SPECS = f"{sources.SPECS}, render"


class RenderedSource(SourceBase):
    """Synthetic frames of a board whose contents ``contents_fn`` supplies (for the demo).

    The photo is rendered once per (contents, conditions) and cached, so a
    static board costs almost nothing per frame; each frame then gets fresh
    sensor noise (``frame_noise`` grey levels) so that frames differ as real
    ones do. ``last`` is the :class:`~pegwatch.simulation.render.Rendered` truth of the
    latest frame.
    """

    def __init__(
        self,
        profile: BoardProfile,
        contents_fn: Callable[[], Any],
        conditions: Any = None,
        *,
        seed: int = 0,
        frame_noise: float = 1.5,
        conditions_fn: Callable[[], Any] | None = None,
    ) -> None:
        super().__init__()
        from pegwatch.simulation.render import Conditions

        self.profile = profile
        self.contents_fn = contents_fn
        self.conditions = Conditions.easy() if conditions is None else conditions
        self.conditions_fn = conditions_fn
        self.seed = seed
        self.frame_noise = frame_noise
        self.renders = 0
        self.last: Any = None
        self._key: Any = None
        self._rng = np.random.default_rng(seed)

    def read(self) -> Frame:
        """A frame of the board as it is now."""
        from pegwatch.simulation.render import render

        self._check_open()
        contents = self.contents_fn()
        conditions = self.conditions_fn() if self.conditions_fn is not None else self.conditions
        key = (contents, conditions)
        if self.last is None or key != self._key:
            self.last = render(self.profile, contents, conditions, seed=self.seed + self.renders)
            self._key = key
            self.renders += 1
        image = self.last.image
        if self.frame_noise > 0:
            noise = self._rng.normal(0.0, self.frame_noise, size=(image.shape[0] // 4, image.shape[1] // 4, 3))
            # Coarse noise, scaled up: cheap, and enough to make frames differ.
            big = cv2.resize(noise.astype(np.float32), (image.shape[1], image.shape[0]), interpolation=cv2.INTER_NEAREST)
            image = np.clip(image.astype(np.float32) + big, 0, 255).astype(np.uint8)
        else:
            image = image.copy()
        return self._frame(image)


def open_source(
    spec: str,
    *,
    profile: BoardProfile | None = None,
    contents_fn: Callable[[], Any] | None = None,
    size: tuple[int, int] | None = None,
    loop: bool = False,
    seed: int = 0,
) -> SourceBase:
    """Open a real source by spec, or ``"render"``: a rendered board.

    ``render`` shows ``profile`` (default invicta-12x4) holding
    ``contents_fn()`` (default: a fixed game in progress).
    """
    kind = spec.partition(":")[0].strip().lower()
    if kind != "render":
        try:
            return sources.open_source(spec, size=size, loop=loop)
        except sources.SourceError as exc:
            raise sources.SourceError(str(exc).replace(sources.SPECS, SPECS)) from None
    from pegwatch.simulation.render import Conditions, random_contents

    p = profile or load_profile()
    if contents_fn is None:
        fixed = random_contents(p, np.random.default_rng(seed), rows_played=max(1, math.ceil(p.rows / 2)))

        def contents_fn() -> Any:
            return fixed

    cond = Conditions.easy()
    if size is not None:
        cond = cond.with_(width=size[0], height=size[1])
    return RenderedSource(p, contents_fn, cond, seed=seed)
