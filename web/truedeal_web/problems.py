"""RFC 9457 problem details: every error the app returns is ``application/problem+json``.

A problem has the standard members ``type``, ``title``, ``status``,
``detail`` and ``instance`` (the request path), plus extension members where
they help (``errors`` for validation problems, ``max_count``, ``job_id`` ...).
``type`` is ``about:blank`` for plain HTTP errors (the title is then the
status phrase, as RFC 9457 section 4.2.1 asks) and ``urn:truedeal:problem:<slug>``
for truedeal's own problem kinds.  A 500 carries a fixed detail and never a
traceback; the exception is logged.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from flask import Flask, Response, json, request
from werkzeug.exceptions import HTTPException

logger = logging.getLogger("truedeal.web")

PROBLEM_JSON = "application/problem+json"
_URN = "urn:truedeal:problem:"


class Problem(Exception):
    """Raise anywhere in a request to answer with a problem document."""

    def __init__(
        self,
        status: int,
        detail: str | None = None,
        *,
        kind: str | None = None,
        title: str | None = None,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail or "")
        self.status = int(status)
        self.detail = detail
        self.kind = kind
        self.title = title
        self.headers = headers or {}
        self.extra = extra

    def body(self) -> dict[str, Any]:
        phrase = _phrase(self.status)
        out: dict[str, Any] = {
            "type": _URN + self.kind if self.kind else "about:blank",
            "title": self.title or phrase,
            "status": self.status,
        }
        if self.detail:
            out["detail"] = " ".join(str(self.detail).split())
        try:
            out["instance"] = request.path
        except RuntimeError:  # outside a request
            pass
        out.update(self.extra)
        return out

    def response(self) -> Response:
        resp = Response(json.dumps(self.body()), status=self.status, mimetype=PROBLEM_JSON)
        for k, v in self.headers.items():
            resp.headers[k] = v
        return resp


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def problem(status: int, detail: str | None = None, **kw: Any) -> Response:
    return Problem(status, detail, **kw).response()


def _from_http(exc: HTTPException) -> Response:
    status = exc.code or 500
    detail = exc.description
    if status == 404:
        detail = f"there is nothing at {request.path}"
    elif status == 405:
        allowed = exc.valid_methods if hasattr(exc, "valid_methods") else None
        detail = f"{request.method} is not allowed here" + (f" (allowed: {', '.join(allowed)})" if allowed else "")
    elif status == 413:
        limit = request.max_content_length
        detail = "the request body is too large" + (f" (at most {limit:,} bytes)" if limit else "")
    p = Problem(status, detail)
    resp = p.response()
    # keep headers such as Allow (405) or Retry-After
    for key, value in exc.get_headers():
        if key.lower() not in ("content-type", "content-length"):
            resp.headers[key] = value
    return resp


def install(app: Flask) -> None:
    """Make every error of ``app`` a problem document."""

    @app.errorhandler(Problem)
    def _problem(exc: Problem) -> Response:
        return exc.response()

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException) -> Response:
        if exc.code is None:  # a RequestRedirect and the like: let Werkzeug answer
            return exc  # type: ignore[return-value]
        if 300 <= exc.code < 400:
            return exc.get_response()  # type: ignore[return-value]
        return _from_http(exc)

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> Response:
        if isinstance(exc, HTTPException):
            return _http(exc)
        logger.exception("unhandled error on %s %s", request.method, request.path)
        return Problem(500, "an internal error occurred; it has been logged").response()
