"""pegwatch.hub.web: the hub's page, the spectators' page and the JSON API (Starlette).

:func:`~pegwatch.hub.web.app.create_app` builds the application over a
:class:`~pegwatch.hub.service.Hall`; ``pegwatch hub`` serves it with uvicorn.
The templates and the one small script are package data: the hall has no
internet, so nothing comes from a CDN.
"""

from pegwatch.hub.web.app import create_app

__all__ = ["create_app"]
