"""``[hall]`` in the table configuration: where and as whom the table publishes.

No ``[hall]``: the table works alone, exactly as without the hall. With it,
every key is checked here, each mistake one :class:`ConfigError` line
naming the file and the key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from pegwatch.device.errors import ConfigError
from pegwatch.hub.wire import check_id

__all__ = ["HallSettings", "parse_broker_url"]

_URL_HINT = 'give "mqtt://HOST:1883" or "mqtts://HOST:8883"'
_KEYS = ("broker", "ca_file", "tournament", "table", "username", "password_file")


def parse_broker_url(url: str) -> tuple[bool, str, int]:
    """``mqtt://host[:port]`` or ``mqtts://...`` to ``(tls, host, port)``; ValueError saying why."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("mqtt", "mqtts"):
        raise ValueError(f"{url!r}: the scheme must be mqtt or mqtts; {_URL_HINT}")
    tls = parts.scheme == "mqtts"
    try:
        port = parts.port or (8883 if tls else 1883)
    except ValueError:
        raise ValueError(f"{url!r}: the port must be 1..65535; {_URL_HINT}") from None
    host = parts.hostname or ""
    if not host or not re.fullmatch(r"[A-Za-z0-9.:_-]{1,253}", host):
        raise ValueError(f"{url!r} names no host; {_URL_HINT}")
    if parts.path not in ("", "/") or parts.query or parts.username:
        raise ValueError(f"{url!r}: only a host and a port; the user and password are keys of their own")
    return tls, host, port


@dataclass(frozen=True)
class HallSettings:
    """The table as one table of a tournament hall (docs/hall.md, "Tables publish")."""

    #: ``mqtt://host:1883`` or ``mqtts://host:8883``.
    broker: str
    #: The tournament's id in the topics, and this table's.
    tournament: str
    table: str
    #: The broker user (``table-<table>`` by default, as the hall's broker config names it).
    username: str
    #: A file holding the password (one line); None: no password.
    password_file: Path | None = None
    #: The CA of the broker's certificate (mqtts); None: the system's CAs.
    ca_file: Path | None = None

    @property
    def tls(self) -> bool:
        return parse_broker_url(self.broker)[0]

    @property
    def address(self) -> tuple[str, int]:
        _, host, port = parse_broker_url(self.broker)
        return host, port

    def password(self) -> str | None:
        """The password, read when the table connects (a file only root reads)."""
        if self.password_file is None:
            return None
        try:
            text = self.password_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"hall.password_file: {self.password_file}: cannot be read ({exc})") from None
        lines = text.splitlines()
        return lines[0].strip() if lines else ""

    @classmethod
    def from_mapping(cls, data: Mapping[str, object], *, source: str, base: Path) -> HallSettings | None:
        """Parse ``[hall]`` (None when there is none); relative paths resolve from ``base``."""
        if not data:
            return None
        for key in data:
            if key not in _KEYS:
                raise ConfigError(f"{source}: hall.{key}: unknown key; allowed: {', '.join(_KEYS)}")

        def text(key: str, required: bool) -> str | None:
            value = data.get(key)
            if value is None and not required:
                return None
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"{source}: hall.{key}: {value!r} is not allowed; a non-empty string")
            return value.strip()

        broker = text("broker", True)
        assert broker is not None
        try:
            tls, _, _ = parse_broker_url(broker)
        except ValueError as exc:
            raise ConfigError(f"{source}: hall.broker: {exc}") from None
        ids = {}
        for key in ("tournament", "table"):
            try:
                ids[key] = check_id(text(key, True), key)
            except ValueError:
                raise ConfigError(f"{source}: hall.{key}: {data.get(key)!r} is not allowed; "
                                  "1 to 32 of A-Z a-z 0-9 _ -, e.g. \"12\"") from None
        paths: dict[str, Path | None] = {}
        for key in ("password_file", "ca_file"):
            raw = text(key, False)
            path = None if raw is None else (base / raw if not Path(raw).is_absolute() else Path(raw))
            if path is not None and not path.is_file():
                raise ConfigError(f"{source}: hall.{key}: {raw!r}: no such file ({path})")
            paths[key] = path
        if paths["ca_file"] is not None and not tls:
            raise ConfigError(f"{source}: hall.ca_file: a CA file needs an mqtts:// broker")
        return cls(broker=broker, tournament=ids["tournament"], table=ids["table"],
                   username=text("username", False) or f"table-{ids['table']}",
                   password_file=paths["password_file"], ca_file=paths["ca_file"])
