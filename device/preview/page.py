"""The preview page a table serves while its camera is mounted.

Three routes, no framework on the page and nothing fetched from elsewhere:

* ``/``: plain HTML that works on a phone: the picture, and what it says
  (markers, pixels per millimetre, sharpness). A few lines of script
  refresh the picture and the words; without script the page reloads itself.
* ``/frame.jpg``: the latest annotated frame (503 until the first one).
* ``/status.json``: what the latest frame says, as JSON.

Every route answers from :attr:`PreviewCamera.latest` and never waits for
the camera (the capture thread keeps that up to date).
"""

from __future__ import annotations

import html
import logging
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from pegwatch.device.preview.capture import PreviewCamera

logger = logging.getLogger(__name__)

__all__ = ["PageServer", "page_html", "preview_app", "serve"]

_NO_CACHE = {"Cache-Control": "no-store"}

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<noscript><meta http-equiv="refresh" content="2"></noscript>
<style>
body {{ font-family: sans-serif; margin: 0.5em; background: #111; color: #eee; }}
img {{ width: 100%; height: auto; display: block; background: #333; }}
li {{ margin: 0.3em 0; font-size: 1.1em; }}
.ok {{ color: #7d7; }} .bad {{ color: #f77; }}
</style>
</head>
<body>
<h1>{title}</h1>
<img id="frame" src="frame.jpg" alt="the camera's view with the board's grid">
<ul id="lines">{lines}</ul>
<p id="age">{age}</p>
<script>
// The picture and the words are fetched again every {period_ms} ms.
const img = document.getElementById("frame");
function refresh() {{
  const next = new Image();
  next.onload = () => {{ img.src = next.src; }};
  next.src = "frame.jpg?t=" + Date.now();
  fetch("status.json", {{cache: "no-store"}}).then(r => r.json()).then(s => {{
    const ul = document.getElementById("lines");
    ul.replaceChildren(...s.lines.map((t, i) => {{
      const li = document.createElement("li");
      li.textContent = t;
      li.className = s.ok[i] ? "ok" : "bad";
      return li;
    }}));
    document.getElementById("age").textContent = s.age;
  }}).catch(() => {{ document.getElementById("age").textContent = "the table does not answer"; }});
}}
setInterval(refresh, {period_ms});
</script>
</body>
</html>
"""


def _status(camera: PreviewCamera) -> dict[str, Any]:
    snap = camera.latest
    if snap is None:
        why = camera.problem or "waiting for the first frame"
        return {"look": None, "lines": [f"no picture yet: {why}"], "ok": [False], "age": ""}
    look = snap.look
    age_s = max(0.0, (time.monotonic_ns() - snap.at_ns) / 1e9)
    age = f"frame {snap.index}, {age_s:.1f} s old"
    if camera.problem is not None:
        age += f"; the camera fails now: {camera.problem}"
    return {
        "look": look.to_json(),
        "lines": look.lines(),
        "ok": [look.found, bool(look.big_enough), bool(look.sharp)],
        "age": age,
    }


def page_html(camera: PreviewCamera, *, title: str = "pegwatch camera", period_ms: int = 500) -> str:
    """The page, with what the latest frame says already in it."""
    status = _status(camera)
    lines = "".join(
        f'<li class="{"ok" if ok else "bad"}">{html.escape(line)}</li>'
        for line, ok in zip(status["lines"], status["ok"], strict=True)
    )
    return _PAGE.format(title=html.escape(title), lines=lines, age=html.escape(status["age"]),
                        period_ms=int(period_ms))


def preview_app(camera: PreviewCamera, *, title: str = "pegwatch camera", period_ms: int = 500) -> Starlette:
    """The Starlette application of the page (see the module doc)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    async def index(request: Request) -> Response:
        return HTMLResponse(page_html(camera, title=title, period_ms=period_ms), headers=_NO_CACHE)

    async def frame(request: Request) -> Response:
        snap = camera.latest
        if snap is None:
            why = camera.problem or "no frame yet"
            return Response(f"no frame yet: {why}\n", status_code=503, media_type="text/plain",
                            headers={**_NO_CACHE, "Retry-After": "1"})
        return Response(snap.jpeg, media_type="image/jpeg", headers=_NO_CACHE)

    async def status(request: Request) -> Response:
        return JSONResponse(_status(camera), headers=_NO_CACHE)

    return Starlette(routes=[
        Route("/", index),
        Route("/frame.jpg", frame),
        Route("/status.json", status),
    ])


def serve(app: Starlette, host: str, port: int) -> Any:
    """A uvicorn server for ``app`` (call ``.run()``, or run it in a thread and set ``should_exit``)."""
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
    return uvicorn.Server(config)


class PageServer:
    """The page served by uvicorn in a daemon thread, for as long as the table runs.

    A port that cannot be had is logged, never fatal: the page is a help
    for mounting the camera, and the clock does not depend on it.
    """

    def __init__(self, app: Starlette, host: str, port: int) -> None:
        import threading

        self.address = (host, port)
        self.server = serve(app, host, port)
        self._thread = threading.Thread(target=self._run, name="pegwatch-preview-page", daemon=True)

    def _run(self) -> None:
        try:
            self.server.run()
        except BaseException as exc:  # uvicorn exits on a port in use: say so, the table goes on
            logger.error("preview page on %s:%d not served: %s", *self.address, exc)

    def start(self) -> PageServer:
        self._thread.start()
        logger.warning("the camera page: http://%s:%d/", *self.address)
        return self

    @property
    def started(self) -> bool:
        return bool(self.server.started)

    def close(self) -> None:
        self.server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(10)
