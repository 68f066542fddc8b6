"""The table-detail view in HTML: one Jinja2 template for the hub's page and ``pegwatch report``.

:func:`render_detail` renders ``table_detail.html`` (which extends
``base.html``) for a :class:`~pegwatch.hub.detail.TableDetail`. The report
passes ``standalone=True`` and every evidence frame as a data URI, so the
file makes no request; the hub's page passes ``standalone=False`` and the
images it has (URLs), and extends the template's blocks with its own
actions (:data:`BLOCKS`). :func:`environment` is the one Jinja2
environment, with the filters the templates use; the page may add loaders
of its own before it (``environment(extra)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, Final

import jinja2

from pegwatch.hub.detail_log import vp_text
from pegwatch.hub.detail_model import TableDetail, Verdict
from pegwatch.hub.detail_text import clock_text, code_text, duration_text, marks_text
from pegwatch.hub.evidence import PEG_RGB

__all__ = ["BASE_TEMPLATE", "BLOCKS", "DETAIL_TEMPLATE", "environment", "render_detail"]

BASE_TEMPLATE: Final = "base.html"
DETAIL_TEMPLATE: Final = "table_detail.html"
#: The blocks a page may override: in base.html, then in table_detail.html (``scoped``
#: ones see ``game``, ``row`` or ``ref``).
BLOCKS: Final = (
    "title", "style", "head", "header", "content", "footer", "scripts",
    "detail_header", "match_result", "game_header", "game_actions", "row_actions",
    "evidence_missing", "secret_evidence_missing", "game_footer", "event_log",
)

VERDICT_WORDS: Final = {
    Verdict.OK: "ok", Verdict.MISMARK: "MIS-MARK", Verdict.UNSURE: "unsure: the arbiter looks",
    Verdict.PENDING: "pending",
}


def _peg_css(colour: object) -> str:
    rgb = PEG_RGB.get(colour) if isinstance(colour, str) else None
    return "transparent" if rgb is None else f"rgb({rgb[0]},{rgb[1]},{rgb[2]})"


def _ink_css(colour: object) -> str:
    rgb = PEG_RGB.get(colour) if isinstance(colour, str) else None
    if rgb is None:
        return "inherit"
    return "#000" if (0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]) > 140 else "#fff"


def environment(extra: jinja2.BaseLoader | None = None) -> jinja2.Environment:
    """The templates' environment (autoescaped, strict); ``extra`` loaders are searched first."""
    if extra is None:
        return _default_environment()
    return _make(jinja2.ChoiceLoader([extra, jinja2.PackageLoader("pegwatch.hub", "templates")]))


@cache
def _default_environment() -> jinja2.Environment:
    return _make(jinja2.PackageLoader("pegwatch.hub", "templates"))


def _make(loader: jinja2.BaseLoader) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=loader, autoescape=jinja2.select_autoescape(("html",), default=True),
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
    )
    env.filters.update({
        "clock": clock_text, "duration": duration_text, "code": code_text, "peg_css": _peg_css,
        "ink_css": _ink_css, "vp": vp_text,
    })
    env.globals.update({"marks_text": marks_text, "verdict_words": VERDICT_WORDS})
    return env


def render_detail(
    detail: TableDetail,
    *,
    standalone: bool,
    images: Mapping[int, str] | None = None,
    source: str | None = None,
    env: jinja2.Environment | None = None,
    template: str = DETAIL_TEMPLATE,
    **context: Any,
) -> str:
    """The detail as an HTML document.

    ``images`` maps the seq of a ``reading`` event (:class:`EvidenceRef.seq`)
    to an ``<img src>``: a data URI (the report) or a URL (the page).
    ``standalone`` is the report: no link leaves the file. ``source`` names
    the journal in the report's footer. ``template`` and ``context`` let
    the page render its own child of ``table_detail.html``.
    """
    return (env or environment()).get_template(template).render(
        detail=detail, standalone=standalone, images=dict(images or {}), source=source, **context,
    )
