"""The web side of ``truedeal serve``: the web app, or a health-only stand-in
when the web package is missing, behind a switch that answers 503 until
the app is plugged in."""

from __future__ import annotations

import json
from collections.abc import Callable


class Switch:
    """A WSGI app that answers 503 until the real app is plugged in (the port
    is bound first, so that a busy port fails before anything starts)."""

    def __init__(self) -> None:
        self.app: Callable | None = None

    def __call__(self, environ, start_response):
        if self.app is None:
            body = b'{"status": "starting"}\n'
            start_response("503 Service Unavailable", [("Content-Type", "application/json"),
                                                       ("Content-Length", str(len(body))), ("Retry-After", "1")])
            return [body]
        return self.app(environ, start_response)


def health_app(redis_url: str, why: str) -> Callable:
    """The stand-in web app when ``truedeal_web`` is missing: ``GET /healthz``
    pings Redis and says why there is no web app; anything else is 404."""
    import truedeal_jobs as jobs

    client = jobs.connect(redis_url)

    def app(environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path not in ("/healthz", "/health"):
            status, info = "404 Not Found", {"error": "not found: the web app is not installed", "web": why}
        else:
            try:
                client.ping()
                status, info = "200 OK", {"status": "ok", "redis": "ok", "web": why}
            except Exception as exc:
                status, info = "503 Service Unavailable", {"status": "error", "redis": f"{type(exc).__name__}: {exc}", "web": why}
        body = (json.dumps(info) + "\n").encode()
        start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]

    return app


def load_web_app(redis_url: str) -> tuple[Callable, str | None]:
    """(WSGI app, None), or (health app, why) when ``truedeal_web`` is not importable."""
    try:
        from truedeal_web import create_app
    except ImportError as exc:
        why = f"truedeal_web is not importable ({exc})"
        return health_app(redis_url, why), why
    return create_app(), None
