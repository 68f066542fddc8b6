"""The exception family every part of pegwatch raises for bad input.

Each specific error subclasses :class:`PegwatchError`, itself a
``ValueError`` (as python-chess does), so that the CLI and the table
program can turn any of them into one clear line and keep running.
"""

from __future__ import annotations


class PegwatchError(ValueError):
    """Bad input: the message names what is wrong and where."""
