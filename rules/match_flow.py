"""Moved to :mod:`pegwatch.rules.flow`; kept only until every importer has moved."""

from pegwatch.rules.flow import *  # noqa: F403
from pegwatch.rules.flow import __all__  # noqa: F401
