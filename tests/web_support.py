"""Shared helpers for the web tests (tests/test_web.py, tests/test_web_e2e.py).

Real Redis at 127.0.0.1:6379, database 14, every key under a unique prefix
(deleted afterwards); a real Celery worker subprocess on a unique queue.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from worker_harness import Worker

REDIS_URL = os.environ.get("TRUEDEAL_TEST_REDIS_URL", "redis://127.0.0.1:6379/14")
PROBLEM_KEYS = {"type", "title", "status"}


def redis_client():
    import redis

    return redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2, socket_timeout=10)


def require_redis():
    try:
        redis_client().ping()
    except Exception as exc:  # pragma: no cover - environment problem
        pytest.skip(f"these tests need a Redis server at {REDIS_URL}: {exc}")


def delete_prefix(prefix: str) -> None:
    r = redis_client()
    keys = list(r.scan_iter(match=prefix + "*", count=1000))
    for i in range(0, len(keys), 1000):
        r.delete(*keys[i : i + 1000])


@dataclass
class Namespace:
    prefix: str
    queue: str

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRUEDEAL_")}
        env.update(TRUEDEAL_REDIS_URL=REDIS_URL, TRUEDEAL_KEY_PREFIX=self.prefix, TRUEDEAL_QUEUE=self.queue,
                   TRUEDEAL_WATCHDOG_INTERVAL="5")
        env.update(extra)
        return env


def new_namespace(tag: str) -> Namespace:
    u = uuid.uuid4().hex[:10]
    return Namespace(prefix=f"tdtest:{tag}:{u}:", queue=f"tdtest-{tag}-{u}")


def scoped_namespace(tag: str):
    """Generator body for a module fixture: a fresh key namespace, deleted afterwards."""
    require_redis()
    ns = new_namespace(tag)
    yield ns
    delete_prefix(ns.prefix)


def worker_available() -> bool:
    try:
        import truedeal_worker.app  # noqa: F401
    except Exception:
        return False
    return True


def start_worker(ns: Namespace, concurrency: int = 2, logdir: Path | None = None) -> Worker:
    """A real worker (:mod:`worker_harness`) on ``ns``, logging into ``logdir`` (default: a new temporary folder)."""
    return Worker(f"tdtest-{ns.queue}", ns.env(), logdir or Path(tempfile.mkdtemp(prefix="tdworker-")), concurrency)


def assert_problem(resp, status: int, kind: str | None = None) -> dict:
    """``resp`` (Flask test response or requests/urllib data) is an RFC 9457 problem with ``status``."""
    ctype = resp.headers.get("Content-Type", "")
    assert resp.status_code == status, (resp.status_code, resp.get_data(as_text=True)[:500])
    assert ctype.split(";")[0].strip() == "application/problem+json", ctype
    body = json.loads(resp.get_data(as_text=True))
    assert PROBLEM_KEYS <= set(body), body
    assert body["status"] == status
    assert isinstance(body["type"], str) and body["type"]
    assert isinstance(body["title"], str) and body["title"]
    if "detail" in body:
        assert isinstance(body["detail"], str) and "\n" not in body["detail"]
        assert "Traceback" not in body["detail"]
    if kind is not None:
        assert body["type"] == f"urn:truedeal:problem:{kind}", body
    return body


def wait_job(client, location: str, timeout: float = 90.0, headers: dict | None = None) -> dict:
    """Poll a job (Flask test client) until it ends; returns its last status."""
    deadline = time.monotonic() + timeout
    while True:
        r = client.get(location, headers=headers or {})
        assert r.status_code == 200, r.get_data(as_text=True)
        s = r.get_json()
        if s["state"] in ("done", "failed", "cancelled"):
            return s
        if time.monotonic() > deadline:
            raise AssertionError(f"job {location} still {s['state']} after {timeout} s: {s}")
        time.sleep(0.1)


class ServerThread:
    """Serve a WSGI app on a free localhost port in a daemon thread."""

    def __init__(self, app) -> None:
        from werkzeug.serving import make_server

        self.server = make_server("127.0.0.1", 0, app, threaded=True)
        self.port = self.server.server_port
        self.url = f"http://127.0.0.1:{self.port}"
        # a short poll interval: stop() waits up to one (0.5 s by default)
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), name="web-test-server", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(10)


def format_one_in(x: float) -> str:
    """Python mirror of the page's ``formatOneIn`` (static/app.js)."""
    import math

    if x >= 1e15:
        return f"{x:.3e}"
    if x >= 100:
        return f"{math.floor(x + 0.5):,}"
    v = math.floor(x * 100 + 0.5) / 100
    return str(int(v)) if v == int(v) else repr(v)


def web_app_factory(ns: Namespace, **defaults):
    """A generator body for a module fixture: ``make(**overrides)`` builds the
    real web app on ``ns`` (test mode); every app's count helpers are stopped after."""
    from truedeal_web import WebConfig, create_app

    apps = []

    def make(**overrides):
        base = dict(redis_url=REDIS_URL, key_prefix=ns.prefix, queue=ns.queue, api_keys=(), rate_limit=None,
                    count_timeout=20.0, **defaults)
        base.update(overrides)
        app = create_app(WebConfig.from_env({}, **base))
        app.config["TESTING"] = True
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.extensions["truedeal"].counter.close()
