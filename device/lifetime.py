"""The context-manager half of every device-layer object that owns a resource.

gpiozero's devices, luma's devices and SQLite connections all follow the same
contract: ``close()`` releases the resource, is safe to call twice, and
``with`` calls it on the way out. Subclasses write ``close()``; this mixin
supplies the ``with``.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self


class Closeable:
    """Mixin: ``with obj:`` closes ``obj`` on the way out, even on error."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
