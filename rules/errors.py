"""The exception family of pegwatch, split by who can fix what went wrong.

* :class:`BadInput`: a file, a record, a setting or an action is wrong, and
  the person who gave it can fix it. The message names what is wrong and
  where; the CLI prints it as one line and exits with status 2, and the table
  shows it and goes on. It is also a ``ValueError`` (as python-chess's
  errors are), so ``except ValueError`` still catches it.
* :class:`DeviceFault`: a part of the table failed (camera, display, disk,
  GPIO). Nobody typed anything wrong; the table keeps the clock running and
  shows an alarm (docs/table.md lists what each fault does), and the CLI
  exits with status 1.

Every specific error subclasses one of the two; nothing in pegwatch raises
a bare ``ValueError``.
"""

from __future__ import annotations

__all__ = ["BadInput", "DeviceFault", "PegwatchError"]


class PegwatchError(Exception):
    """The root of every error pegwatch raises on purpose."""


class BadInput(PegwatchError, ValueError):
    """Input a user can fix: the message names what is wrong and where."""


class DeviceFault(PegwatchError):
    """A part of the table failed: camera, display, disk or GPIO."""
