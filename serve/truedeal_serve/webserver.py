"""The HTTP server ``truedeal serve`` runs the web app under: werkzeug's
threaded WSGI server, made fit to face a browser on a network.

* **Connection timeout**: a client that opens a connection and then sends
  nothing (or trickles a request) is dropped after ``timeout`` seconds, so
  held-open connections cannot pile up.
* **Thread cap**: at most ``max_threads`` requests are served at once; further
  connections wait in the listen backlog instead of each getting a thread.
* **problem+json everywhere**: errors the HTTP layer answers before the app
  sees the request (a malformed request line, an over-long URL or header)
  are RFC 9457 documents like the app's own, not ``http.server``'s HTML.
* **Quiet access log**: successful ``GET``/``HEAD`` requests -- the page polls
  a job every 0.4 s -- are logged at debug level; other requests and every
  error at info, as werkzeug does.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from werkzeug.serving import ThreadedWSGIServer, WSGIRequestHandler

#: Seconds a connection may stay silent before it is closed.
DEFAULT_TIMEOUT = 30.0
#: Requests served at once.
DEFAULT_MAX_THREADS = 64

_access = logging.getLogger("werkzeug")


class RequestHandler(WSGIRequestHandler):
    """werkzeug's handler with a socket timeout, problem+json errors and a
    quiet log of successful reads (see the module doc)."""

    timeout = DEFAULT_TIMEOUT  # socketserver applies it to the connection

    def log_request(self, code: Any = "-", size: Any = "-") -> None:
        try:
            status = int(getattr(code, "value", code))
        except (TypeError, ValueError):
            status = 0
        if getattr(self, "command", None) in ("GET", "HEAD") and 0 < status < 400:
            if _access.isEnabledFor(logging.DEBUG):
                _access.debug("%s %s %s", self.command, getattr(self, "path", "?"), status)
            return
        super().log_request(code, size)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """An RFC 9457 problem instead of http.server's HTML page."""
        try:
            phrase = HTTPStatus(code).phrase
        except ValueError:
            phrase = "Error"
        detail = message or explain or phrase
        doc = {"type": "about:blank", "title": phrase, "status": code, "detail": " ".join(str(detail).split())}
        body = (json.dumps(doc) + "\n").encode()
        self.close_connection = True
        # A request line too broken to name its version leaves http.server
        # at HTTP/0.9, which has no headers: answer in HTTP/1.0 with them.
        if getattr(self, "request_version", "HTTP/0.9") == "HTTP/0.9":
            self.request_version = "HTTP/1.0"
        try:
            self.send_response(code, phrase)
            self.send_header("Content-Type", "application/problem+json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            if getattr(self, "command", None) != "HEAD" and code >= 200 and code not in (204, 304):
                self.wfile.write(body)
        except OSError:  # the client is gone
            pass


class BoundedWSGIServer(ThreadedWSGIServer):
    """A threaded WSGI server that serves at most ``max_threads`` requests at once."""

    def __init__(self, host: str, port: int, app: Callable, *, fd: int | None = None,
                 max_threads: int = DEFAULT_MAX_THREADS, timeout: float = DEFAULT_TIMEOUT) -> None:
        handler = type("BoundRequestHandler", (RequestHandler,), {"timeout": timeout})
        super().__init__(host, port, app, handler=handler, fd=fd)
        self.max_threads = max_threads
        self._slots = threading.BoundedSemaphore(max_threads)
        self._stopping = threading.Event()

    def process_request(self, request, client_address) -> None:
        # Wait for a free slot in the accept loop: meanwhile new connections
        # queue in the kernel's backlog rather than each holding a thread.
        while not self._slots.acquire(timeout=0.5):
            if self._stopping.is_set():
                self.shutdown_request(request)
                return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def shutdown(self) -> None:
        self._stopping.set()
        super().shutdown()


def make_web_server(host: str, port: int, app: Callable, *, fd: int | None = None,
                    max_threads: int = DEFAULT_MAX_THREADS, timeout: float = DEFAULT_TIMEOUT) -> BoundedWSGIServer:
    """The server ``truedeal serve`` runs (``fd``: an already bound socket)."""
    return BoundedWSGIServer(host, port, app, fd=fd, max_threads=max_threads, timeout=timeout)


__all__ = ["BoundedWSGIServer", "RequestHandler", "make_web_server", "DEFAULT_TIMEOUT", "DEFAULT_MAX_THREADS"]
