"""The hub's web application (Starlette): the arbiter's page, the spectators' page, the JSON API.

Paths (docs/hall.md, "The hub"):

* ``/`` the grid of every table (login), ``/tables/<table>`` a table's
  detail with the arbiter's commands (login), ``/results``, ``/standings``,
  ``/pairings?round=N`` (anyone; the arbiter's forms when logged in);
* ``/hall`` the spectators' page: the grid and the standings, no evidence,
  no actions, no login;
* ``/login``, ``/logout``; ``POST /tables/<table>/commands`` and
  ``POST /actions/<result|next-round|entry|withdraw|bye>`` need the session
  and its CSRF token;
* ``/api/tables``, ``/api/tables/<table>``, ``/api/results``,
  ``/api/standings``, ``/api/pairings?round=N``, ``/api/counters``;
  ``/api/stream`` (server-sent events for anyone) and ``/stream`` (the
  arbiter's, with the commands' progress).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import logging
import math
import secrets
from collections.abc import AsyncIterator, Sequence
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pegwatch.hub.config import Account
from pegwatch.hub.service import Hall
from pegwatch.hub.web import auth, views
from pegwatch.hub.web.actions import TOURNAMENT_ACTIONS, send_command, tournament_action
from pegwatch.hub.web.stream import Broadcaster
from pegwatch.hub.web.throttle import LoginThrottle
from pegwatch.rules.errors import BadInput

__all__ = ["create_app"]

logger = logging.getLogger(__name__)

SESSION_META = "session_key"
#: The newest events a table's detail reads (a match has a few hundred).
DETAIL_EVENTS = 5000
SESSION_HOURS = 12


def _session_key(hall: Hall) -> str:
    """The cookie's signing key, kept in the store so a restarted hub keeps its arbiters logged in."""
    key = hall.store.get_meta(SESSION_META)
    if key is None:
        key = secrets.token_urlsafe(48)
        hall.store.set_meta(SESSION_META, key)
    return key


def _fmt_clock(ms: int) -> str:
    sign = "-" if ms < 0 else ""
    total = abs(ms) // 1000
    return f"{sign}{total // 60}:{total % 60:02d}"


def _clock_now(table: dict[str, Any], side: str) -> int:
    clock = table["clocks"][side]
    age = table["age_ms"] or 0
    return int(clock["remaining_ms"] - (age if clock["running"] else 0))


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("pegwatch.hub.web", "templates"),
                      autoescape=select_autoescape(["html"]), trim_blocks=True, lstrip_blocks=True)
    _helpers(env)
    return env


def _helpers(env: Environment) -> None:
    """What the page's templates call, in either environment."""
    env.globals["fmt_clock"] = _fmt_clock
    env.globals["clock_now"] = _clock_now
    env.filters["csv"] = lambda values: ",".join(str(v) for v in values)
    env.filters["num"] = _num


def _num(value: object) -> str:
    """A figure as the page's script writes it (1.0 as "1"): a live refresh never changes its look."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@functools.cache
def detail_env() -> Environment:
    """The shared table-detail templates (hub/templates, strict) with the page's own before them."""
    from pegwatch.hub.render import environment

    env = environment(PackageLoader("pegwatch.hub.web", "templates"))
    _helpers(env)
    return env


#: Every answer: scripts only from the hub itself (no inline script can run), no framing by
#: another site (clickjacking of the arbiter's forms), no sniffing, no referrer outside.
SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                                 b"script-src 'self'; frame-ancestors 'none'; form-action 'self'"),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
]


class SecurityHeaders:
    """A pure ASGI middleware (it leaves the live streams' bodies alone)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


def _safe_next(target: str | None) -> str:
    """Only a path of this site (never ``//elsewhere``)."""
    if target and target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"


def create_app(hall: Hall, accounts: Sequence[Account], *, https_only: bool = False,
               broadcaster: Broadcaster | None = None, login_throttle: LoginThrottle | None = None) -> Starlette:
    """The page and the API of ``hall``; ``accounts`` may log in as arbiters."""
    env = _environment()
    live = broadcaster or Broadcaster(hall)
    accounts = tuple(accounts)
    throttle = login_throttle or LoginThrottle()

    def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        context.update(
            request=request, login=auth.logged_in(request), csrf=auth.csrf_token(request),
            tournament=hall.tournament, tournament_id=hall.tournament_id,
        )
        return HTMLResponse(env.get_template(name).render(**context), status_code=status)

    def refuse(request: Request, status: int, message: str) -> Response:
        if request.url.path.startswith("/api/") or "application/json" in request.headers.get("accept", ""):
            return JSONResponse({"error": message}, status_code=status)
        return page(request, "error.html", status, message=message)

    def need_login(request: Request) -> Response | None:
        if auth.logged_in(request) is None:
            return RedirectResponse(f"/login?next={request.url.path}", status_code=303)
        return None

    async def checked_form(request: Request) -> tuple[dict[str, str], Response | None]:
        """The form of an arbiter's POST, or the refusal: no session, a bad CSRF token, a bad body."""
        try:
            form = await auth.read_form(request)
        except auth.FormError as exc:
            return {}, refuse(request, 400, str(exc))
        if auth.logged_in(request) is None:
            return form, refuse(request, 403, "log in as an arbiter first")
        if not auth.check_csrf(request, form):
            return form, refuse(request, 403, "the form's CSRF token is missing or wrong; reload the page")
        return form, None

    # -- pages -------------------------------------------------------------------

    async def grid(request: Request) -> Response:
        if (redirect := need_login(request)) is not None:
            return redirect
        sort = request.query_params.get("sort", "table")
        return page(request, "grid.html", tables=views.tables_json(hall, sort=sort), sort=sort,
                    stream="/stream", public=False)

    async def spectators(request: Request) -> Response:
        return page(request, "hall.html", tables=views.tables_json(hall), standings=views.standings_json(
            hall.tournament), stream="/api/stream", public=True)

    def table_detail(request: Request) -> Response:
        if (redirect := need_login(request)) is not None:
            return redirect
        name = request.path_params["table"]
        table = hall.table(name)
        if table is None:
            return refuse(request, 404, f"no table {name!r}")
        events = [m.payload for m in hall.store.messages("event", name, limit=DETAIL_EVENTS)]
        evidence = [{"id": m.id, "row": m.payload.get("row"), "game": m.payload.get("game"),
                     "masked_secret": m.payload.get("masked_secret")}
                    for m in hall.store.messages("evidence", name, limit=50)]
        context: dict[str, Any] = dict(
            table=views.table_json(hall, table, hall.now_ns(), rows=True), events=events, evidence=evidence,
            commands=[views.command_json(c) for c in reversed(hall.store.commands(name))][:50],
        )
        if events:
            html = detail_page(request, name, events, evidence, context)
            if html is not None:
                return HTMLResponse(html)
        return page(request, "table.html", 200, stream="/stream", public=False, **context)

    def detail_page(request: Request, name: str, events: list[Any], evidence: list[dict[str, Any]],
                    context: dict[str, Any]) -> str | None:
        """The table's detail as ``pegwatch report`` shows it (hub/templates), with the arbiter's
        forms; None (the plain page) when its events cannot be read as a match."""
        from pegwatch.hub.detail import DetailError, detail_from_events
        from pegwatch.hub.render import render_detail

        # A finished game's code reaches the hub only in its result message.
        match = events[-1].get("match") if events else None
        secrets = {
            int(r.payload["game"]): tuple(r.payload["secret"])
            for r in hall.store.messages("result", name, limit=200)
            if r.payload.get("match") == match and r.payload.get("secret") and int(r.payload.get("game", 0)) > 0
        }
        try:
            detail = detail_from_events(events, table=name, mask_secret=True, secrets=secrets)
        except DetailError as exc:
            logger.warning("table %s: the detail view cannot read its events: %s", name, exc)
            return None
        shown = {(e["game"], e["row"]): f"/tables/{name}/evidence/{e['id']}" for e in evidence}
        images = {ref.seq: shown[(ref.game, ref.row)] for ref in detail.evidence if (ref.game, ref.row) in shown}
        return render_detail(detail, standalone=False, images=images, env=detail_env(),
                             template="table_page.html", login=auth.logged_in(request),
                             csrf=auth.csrf_token(request), tournament=hall.tournament, **context)

    def evidence_image(request: Request) -> Response:
        if auth.logged_in(request) is None:
            return refuse(request, 403, "log in as an arbiter first")
        name, wanted = request.path_params["table"], request.path_params["id"]
        for m in hall.store.messages("evidence", name, limit=200):
            if m.id == wanted:
                return Response(base64.b64decode(m.payload["jpeg_b64"]), media_type="image/jpeg")
        return refuse(request, 404, f"no evidence {wanted!r} of table {name!r}")

    def results_page(request: Request) -> Response:
        return page(request, "results.html", results=views.results_json(hall), public=True, stream="/api/stream")

    def standings_page(request: Request) -> Response:
        return page(request, "standings.html", standings=views.standings_json(hall.tournament), public=True,
                    stream="/api/stream")

    def pairings_page(request: Request) -> Response:
        try:
            data = views.pairings_json(hall.tournament, _round(request))
        except (LookupError, ValueError) as exc:
            return refuse(request, 404 if isinstance(exc, LookupError) else 400, str(exc))
        return page(request, "pairings.html", pairings=data, public=True, stream="/api/stream")

    # -- login -----------------------------------------------------------------

    async def login_page(request: Request) -> Response:
        return page(request, "login.html", next=_safe_next(request.query_params.get("next")), failed=False)

    async def login(request: Request) -> Response:
        try:
            form = await auth.read_form(request)
        except auth.FormError as exc:
            return refuse(request, 400, str(exc))
        target = _safe_next(form.get("next"))
        if not auth.check_csrf(request, form):
            return refuse(request, 403, "the form's CSRF token is missing or wrong; reload the page")
        address = request.client.host if request.client else "unknown"
        keys = (f"ip:{address}",)
        wait = throttle.wait_s(keys)
        if wait > 0:
            seconds = math.ceil(wait)
            locked = page(request, "login.html", 429, next=target, failed=False, locked_s=seconds)
            locked.headers["Retry-After"] = str(seconds)
            return locked
        # scrypt takes tens of milliseconds: off the event loop, which feeds every page's live stream.
        who = await run_in_threadpool(auth.authenticate, accounts, form.get("login", ""), form.get("password", ""))
        if who is None:
            throttle.failed(keys)
            wait = throttle.wait_s(keys)
            if wait > 0:
                logger.warning("login: %d wrong passwords from %s; it waits %.0f s before the next try",
                               throttle.max_failures, address, wait)
            return page(request, "login.html", 401, next=target, failed=True)
        throttle.succeeded(keys)
        request.session.clear()
        request.session["login"] = who
        request.session["csrf"] = secrets.token_urlsafe(24)  # a new token with the new session
        return RedirectResponse(target, status_code=303)

    async def logout(request: Request) -> Response:
        _form, refused = await checked_form(request)
        if refused is not None:
            return refused
        request.session.clear()
        return RedirectResponse("/login", status_code=303)

    # -- actions ---------------------------------------------------------------

    async def command(request: Request) -> Response:
        form, refused = await checked_form(request)
        if refused is not None:
            return refused
        name = request.path_params["table"]
        try:
            sent = send_command(hall, name, form, auth.logged_in(request) or "")
        except BadInput as exc:
            return refuse(request, 400, str(exc))
        if "application/json" in request.headers.get("accept", ""):
            return JSONResponse({"id": sent.id, "status": sent.status}, status_code=202)
        return RedirectResponse(f"/tables/{name}#command-{sent.id}", status_code=303)

    async def action(request: Request) -> Response:
        form, refused = await checked_form(request)
        if refused is not None:
            return refused
        name = request.path_params["name"]
        try:
            tournament_action(hall, name, form)
        except BadInput as exc:
            return refuse(request, 400, str(exc))
        back = {"result": "/results", "next-round": "/pairings", "setup": "/pairings"}.get(name, "/standings")
        return RedirectResponse(_safe_next(form.get("next")) if form.get("next") else back, status_code=303)

    # -- the API ---------------------------------------------------------------

    def api_tables(request: Request) -> Response:
        sort = request.query_params.get("sort", "table")
        return JSONResponse({"tournament": hall.tournament_id, "tables": views.tables_json(hall, sort=sort)})

    def api_table(request: Request) -> Response:
        name = request.path_params["table"]
        table = hall.table(name)
        if table is None:
            return refuse(request, 404, f"no table {name!r}")
        out = views.table_json(hall, table, hall.now_ns(), rows=True)
        out["events"] = [dict(m.payload) for m in hall.store.messages("event", name, limit=200)]
        if auth.logged_in(request) is not None:
            out["commands"] = [views.command_json(c) for c in hall.store.commands(name)]
        return JSONResponse(out)

    def api_results(request: Request) -> Response:
        return JSONResponse(views.results_json(hall))

    def api_standings(request: Request) -> Response:
        return JSONResponse(views.standings_json(hall.tournament))

    def api_pairings(request: Request) -> Response:
        try:
            return JSONResponse(views.pairings_json(hall.tournament, _round(request)))
        except LookupError as exc:
            return refuse(request, 404, str(exc))
        except ValueError as exc:
            return refuse(request, 400, str(exc))

    def api_counters(request: Request) -> Response:
        return JSONResponse({"counters": hall.store.counters()})

    def stream_response(public: bool) -> StreamingResponse:
        return StreamingResponse(live.events(public=public), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def public_stream(request: Request) -> Response:
        return stream_response(True)

    async def arbiter_stream(request: Request) -> Response:
        if auth.logged_in(request) is None:
            return refuse(request, 403, "log in as an arbiter first")
        return stream_response(False)

    routes = [
        Route("/", grid),
        Route("/hall", spectators),
        Route("/tables/{table}", table_detail),
        Route("/tables/{table}/evidence/{id}", evidence_image),
        Route("/tables/{table}/commands", command, methods=["POST"]),
        Route("/results", results_page),
        Route("/standings", standings_page),
        Route("/pairings", pairings_page),
        Route("/login", login_page),
        Route("/login", login, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/actions/{name}", action, methods=["POST"]),
        Route("/api/tables", api_tables),
        Route("/api/tables/{table}", api_table),
        Route("/api/results", api_results),
        Route("/api/standings", api_standings),
        Route("/api/pairings", api_pairings),
        Route("/api/counters", api_counters),
        Route("/api/stream", public_stream),
        Route("/stream", arbiter_stream),
        Route("/favicon.ico", lambda request: Response(status_code=204)),  # no icon, and no 404 in the log
        Mount("/static", StaticFiles(packages=[("pegwatch.hub.web", "static")]), name="static"),
    ]
    middleware = [Middleware(SecurityHeaders), Middleware(SessionMiddleware, secret_key=_session_key(hall), session_cookie="pegwatch_hub",
                             max_age=SESSION_HOURS * 3600, same_site="strict", https_only=https_only)]
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        live.close()  # the open streams end, so the server can stop

    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.hall = hall
    app.state.broadcaster = live
    assert set(TOURNAMENT_ACTIONS)  # the names the forms post to
    return app


def _round(request: Request) -> int | None:
    text = request.query_params.get("round")
    if text is None or text == "":
        return None
    if not text.isdigit():
        raise ValueError(f"round: expected a round number, got {text[:20]!r}")
    return int(text)
