"""``[preview]`` in the table configuration: the camera page, off by default.

The page shows the camera's view to anyone on the table's network, so it
is served only when asked for: ``enabled = true`` here, or
``pegwatch preview --http HOST:PORT``.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields

from pegwatch.device.errors import ConfigError

__all__ = ["PreviewSettings", "parse_listen"]

_LISTEN_HINT = 'give HOST:PORT, e.g. "0.0.0.0:8000" (every network) or "127.0.0.1:8000" (this machine only)'


def parse_listen(value: str) -> tuple[str, int]:
    """``"HOST:PORT"`` to ``(host, port)``; ValueError saying what is wrong."""
    host, sep, port = value.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ValueError(f"{value!r} is not HOST:PORT with a port 1..65535; {_LISTEN_HINT}")
    if not host:
        raise ValueError(f"{value!r} names no host; {_LISTEN_HINT}")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?", host):
            raise ValueError(f"{value!r}: {host!r} is not a host name or address; {_LISTEN_HINT}") from None
    return host, int(port)


@dataclass(frozen=True)
class PreviewSettings:
    """The preview page: served or not, and where."""

    #: Serve the camera page while the table runs (and for ``pegwatch preview``).
    enabled: bool = False
    #: Where the page listens, ``HOST:PORT``.
    listen: str = "0.0.0.0:8000"
    #: Annotated frames a second (each costs a board localisation and a JPEG).
    fps: float = 4.0

    @property
    def address(self) -> tuple[str, int]:
        """``listen`` as ``(host, port)``."""
        return parse_listen(self.listen)

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], *, source: str) -> PreviewSettings:
        """Parse the ``[preview]`` table; :class:`ConfigError` names file and key."""
        allowed = [f.name for f in fields(cls)]
        for key in data:
            if key not in allowed:
                raise ConfigError(f"{source}: preview.{key}: unknown key; allowed: {', '.join(allowed)}")
        enabled = data.get("enabled", False)
        if not isinstance(enabled, bool):
            raise ConfigError(f"{source}: preview.enabled: {enabled!r} is not allowed; use true or false")
        listen = data.get("listen", cls.listen)
        if not isinstance(listen, str):
            raise ConfigError(f"{source}: preview.listen: {listen!r} is not a string; {_LISTEN_HINT}")
        try:
            parse_listen(listen)
        except ValueError as exc:
            raise ConfigError(f"{source}: preview.listen: {exc}") from None
        fps = data.get("fps", cls.fps)
        if isinstance(fps, bool) or not isinstance(fps, int | float) or not 0.2 <= fps <= 30:
            raise ConfigError(f"{source}: preview.fps: {fps!r} is not allowed; a number 0.2..30")
        return cls(enabled=enabled, listen=listen, fps=float(fps))
