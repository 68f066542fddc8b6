"""Subcommands: filled in by the owning module's work."""

from __future__ import annotations

import argparse


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add this module's subcommands to ``sub``."""
