"""The Flask app factory.

Production::

    gunicorn -w 4 -k gthread --threads 4 'truedeal_web:create_app()'

(threads, because the deals endpoint streams and ``/api/count`` may wait
seconds for a count; behind nginx set ``proxy_buffering off`` for
``/api/jobs/*/deals``).  Locally, ``truedeal serve`` runs it with workers and
an embedded Redis.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from flask import Flask

from truedeal.formats.html import CSP_STYLE_SOURCE

from . import problems
from .config import WebConfig
from .counting import Counter
from .security import ApiKeys, AuthFailureLimiter, RateLimiter

logger = logging.getLogger("truedeal.web")


class JobBackend:
    """The job store and the dispatcher (Celery) that queues job work."""

    def __init__(self, config: WebConfig) -> None:
        import truedeal_jobs as jobs

        self.config = config
        self.store = jobs.JobStore(jobs.connect(config.redis_url), config.jobs)
        self._dispatcher = None

    @property
    def dispatcher(self):
        """A :class:`truedeal_jobs.dispatch.CeleryDispatcher`: tasks sent by
        name, without the worker's code (created on first use)."""
        if self._dispatcher is None:
            from truedeal_jobs.dispatch import dispatcher_for

            self._dispatcher = dispatcher_for(self.config.dispatch)
        return self._dispatcher

    def dispatcher_or_none(self):
        """The dispatcher, or None when Celery is not installed (a cancel
        then still stops the job: workers check its flag)."""
        try:
            return self.dispatcher
        except ImportError:
            return None


class WebState:
    """Everything the request handlers share (``app.extensions["truedeal"]``)."""

    def __init__(self, config: WebConfig) -> None:
        self.config = config
        self.counter = Counter(config.count_timeout, config.count_processes, config.count_cache,
                               config.counts_per_client, config.count_memory_mb)
        self.api_keys = ApiKeys(config.api_keys)
        try:
            self.jobs: JobBackend | None = JobBackend(config)
        except ImportError as exc:  # the job system is not installed
            logger.warning("job endpoints disabled: %s", exc)
            self.jobs = None
        self.rate_limiter = None
        self.auth_failures: AuthFailureLimiter | None = None
        if config.rate_limit or self.api_keys.required:
            from truedeal_jobs import connect

            client = self.jobs.store.r if self.jobs else connect(config.redis_url)
            if config.rate_limit:
                self.rate_limiter = RateLimiter(client, config.key_prefix, *config.rate_limit)
            if self.api_keys.required:
                self.auth_failures = AuthFailureLimiter(client, config.key_prefix, *config.auth_failures)


def create_app(config: WebConfig | Mapping[str, Any] | None = None) -> Flask:
    """The truedeal web app.

    ``config`` is a :class:`WebConfig`, or a mapping of WebConfig field names
    applied on top of the environment (``create_app({"max_job_deals": 1000})``),
    or None for the environment alone (see :mod:`truedeal_web.config`).
    """
    if config is None:
        config = WebConfig.from_env()
    elif not isinstance(config, WebConfig):
        config = WebConfig.from_env(**dict(config))
    app = Flask(__name__)
    app.config.update(
        MAX_CONTENT_LENGTH=config.max_body,
        JSON_SORT_KEYS=False,
        TRUEDEAL=config,
    )
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions["truedeal"] = WebState(config)
    problems.install(app)

    from . import distribution_api, sets_api  # noqa: F401  (nested under the API blueprint on import)
    from .api import bp as api_bp
    from .pages import bp as pages_bp

    app.register_blueprint(api_bp)
    app.register_blueprint(pages_bp)

    @app.after_request
    def _headers(resp):
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        if resp.mimetype == "text/html":
            # the page loads only its own script and stylesheet: no inline code
            resp.headers.setdefault("Content-Security-Policy", _CSP)
            resp.headers.setdefault("Referrer-Policy", "same-origin")
        return resp

    return app


# The hand record's own style block is allowed by its hash: the set panel
# shows that file in a frame, which inherits this policy.
_CSP = (f"default-src 'self'; script-src 'self'; style-src 'self' {CSP_STYLE_SOURCE}; img-src 'self' data:; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
