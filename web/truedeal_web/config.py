"""Settings of the web app, read from the environment.

========================== ================================================ ===========
variable                   meaning                                          default
========================== ================================================ ===========
TRUEDEAL_REDIS_URL         job store and Celery broker                      redis://localhost:6379/0
TRUEDEAL_KEY_PREFIX        prefix of every Redis key truedeal writes        td:
TRUEDEAL_QUEUE             Celery queue the jobs go to                      truedeal
TRUEDEAL_MAX_JOB_DEALS     most deals one job may ask for                   100,000,000
TRUEDEAL_API_KEYS          comma-separated keys; when set, ``/api/*``       (none)
                           requires ``Authorization: Bearer <key>``
TRUEDEAL_RATE_LIMIT        ``N/second|minute|hour`` per API key (or client  (none)
                           address) on ``/api/*``, counted in Redis
TRUEDEAL_AUTH_FAILURES     wrong API keys allowed per client address, as    20/minute
                           ``N/second|minute|hour``; then 429
TRUEDEAL_MAX_BODY          largest request body, bytes                      65536
TRUEDEAL_COUNT_TIMEOUT     seconds one count may take before it is given up 20
TRUEDEAL_COUNT_PROCESSES   counts that may run at once (each in its own     2
                           process)
TRUEDEAL_COUNTS_PER_CLIENT counts one client (key or address) may have     1
                           being built at once; more answer 429
TRUEDEAL_COUNT_CACHE       count results kept (LRU, per web process)        256
TRUEDEAL_COUNT_MEMORY_MB   resident memory (MB) one count's helper process  2048
                           may use; past it the spec is too wide (0: none)
TRUEDEAL_PREVIEW_DEALS     deals the page shows as diagrams                 8
========================== ================================================ ===========
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from truedeal.engine import MAX_DEALS
from truedeal_jobs.settings import DispatchSettings, EnvReader, JobSettings, parse_rate


@dataclass(frozen=True)
class WebConfig:
    """Everything the web app reads from the environment (see the module doc).

    The job store's and the dispatcher's settings are the job system's own
    (:class:`~truedeal_jobs.settings.JobSettings`,
    :class:`~truedeal_jobs.settings.DispatchSettings`), read once by the same
    reader, so the web app and the workers cannot disagree on a key prefix or
    a queue."""

    jobs: JobSettings = field(default_factory=JobSettings)
    dispatch: DispatchSettings = field(default_factory=lambda: DispatchSettings.from_env({}))
    api_keys: tuple[str, ...] = ()
    rate_limit: tuple[int, int] | None = None
    auth_failures: tuple[int, int] = (20, 60)
    max_body: int = 64 * 1024
    count_timeout: float = 20.0
    count_processes: int = 2
    count_cache: int = 256
    count_memory_mb: int = 2048
    counts_per_client: int = 1
    preview_deals: int = 8

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> WebConfig:
        """Settings from ``env`` (default ``os.environ``), then ``overrides``
        (field names, or ``redis_url``, ``key_prefix``, ``queue``, ``max_job_deals``)."""
        read = EnvReader.of(env)
        config = cls(
            jobs=JobSettings.from_env(env),
            dispatch=DispatchSettings.from_env(env),
            api_keys=read.words("TRUEDEAL_API_KEYS"),
            rate_limit=read.rate("TRUEDEAL_RATE_LIMIT"),
            auth_failures=read.rate("TRUEDEAL_AUTH_FAILURES", cls.auth_failures) or cls.auth_failures,
            max_body=read.integer("TRUEDEAL_MAX_BODY", cls.max_body, 1024),
            count_timeout=read.number("TRUEDEAL_COUNT_TIMEOUT", cls.count_timeout, 0.1),
            count_processes=read.integer("TRUEDEAL_COUNT_PROCESSES", cls.count_processes),
            count_cache=read.integer("TRUEDEAL_COUNT_CACHE", cls.count_cache),
            count_memory_mb=read.integer("TRUEDEAL_COUNT_MEMORY_MB", cls.count_memory_mb, 0),
            counts_per_client=read.integer("TRUEDEAL_COUNTS_PER_CLIENT", cls.counts_per_client),
            preview_deals=read.integer("TRUEDEAL_PREVIEW_DEALS", cls.preview_deals),
        )
        return config.replace(**overrides) if overrides else config

    @property
    def redis_url(self) -> str:
        return self.dispatch.redis_url

    @property
    def key_prefix(self) -> str:
        return self.jobs.prefix

    @property
    def max_job_deals(self) -> int:
        return self.jobs.max_deals

    def replace(self, **changes: Any) -> WebConfig:
        """A copy with ``changes``: field names, or the job system's settings by
        their environment names (``key_prefix`` sets both the store's and the
        broker's prefix)."""
        jobs, dispatch = changes.pop("jobs", self.jobs), changes.pop("dispatch", self.dispatch)
        if "key_prefix" in changes:
            prefix = changes.pop("key_prefix")
            jobs, dispatch = dataclasses.replace(jobs, prefix=prefix), dataclasses.replace(dispatch, prefix=prefix)
        if "max_job_deals" in changes:
            jobs = dataclasses.replace(jobs, max_deals=min(int(changes.pop("max_job_deals")), MAX_DEALS))
        for name in ("redis_url", "queue"):
            if name in changes:
                dispatch = dataclasses.replace(dispatch, **{name: changes.pop(name)})
        if isinstance(changes.get("api_keys"), str):
            changes["api_keys"] = tuple(k.strip() for k in changes["api_keys"].split(",") if k.strip())
        if "rate_limit" in changes and (changes["rate_limit"] is None or isinstance(changes["rate_limit"], str)):
            changes["rate_limit"] = parse_rate(changes["rate_limit"], "TRUEDEAL_RATE_LIMIT")
        if isinstance(changes.get("auth_failures"), str):
            changes["auth_failures"] = parse_rate(changes["auth_failures"], "TRUEDEAL_AUTH_FAILURES")
        return dataclasses.replace(self, jobs=jobs, dispatch=dispatch, **changes)
