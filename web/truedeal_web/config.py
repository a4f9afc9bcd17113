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
TRUEDEAL_PREVIEW_DEALS     deals the page shows as diagrams                 8
========================== ================================================ ===========
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from typing import Any, Mapping

from truedeal.engine import MAX_DEALS

_RATE_RE = re.compile(r"^\s*(\d+)\s*/\s*(second|minute|hour|s|m|h)\s*$", re.IGNORECASE)
_PERIODS = {"second": 1, "s": 1, "minute": 60, "m": 60, "hour": 3600, "h": 3600}


class ConfigError(ValueError):
    """A bad setting; the message names the variable."""


def _int(env: Mapping[str, str], name: str, default: int, minimum: int) -> int:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = int(raw.replace("_", "").replace(",", ""))
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise ConfigError(f"{name} must be at least {minimum}, got {value}")
    return value


def _float(env: Mapping[str, str], name: str, default: float, minimum: float) -> float:
    raw = (env.get(name) or "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None
    if not value >= minimum:
        raise ConfigError(f"{name} must be at least {minimum}, got {raw}")
    return value


def parse_rate(text: str | None, name: str = "TRUEDEAL_RATE_LIMIT") -> tuple[int, int] | None:
    """``"60/minute"`` -> ``(60, 60)`` (requests, window seconds); None/"" -> None."""
    if text is None or not str(text).strip():
        return None
    m = _RATE_RE.match(str(text))
    if not m or int(m.group(1)) < 1:
        raise ConfigError(f"{name} must look like 60/minute (or /second, /hour), got {text!r}")
    return int(m.group(1)), _PERIODS[m.group(2).lower()]


@dataclass(frozen=True)
class WebConfig:
    """Everything the web app reads from the environment (see the module doc)."""

    redis_url: str = "redis://localhost:6379/0"
    key_prefix: str = "td:"
    queue: str = "truedeal"
    max_job_deals: int = 100_000_000
    api_keys: tuple[str, ...] = ()
    rate_limit: tuple[int, int] | None = None
    auth_failures: tuple[int, int] = (20, 60)
    max_body: int = 64 * 1024
    count_timeout: float = 20.0
    count_processes: int = 2
    count_cache: int = 256
    counts_per_client: int = 1
    preview_deals: int = 8

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> "WebConfig":
        """Settings from ``env`` (default ``os.environ``), then ``overrides``."""
        env = os.environ if env is None else env
        keys = tuple(k.strip() for k in (env.get("TRUEDEAL_API_KEYS") or "").split(",") if k.strip())
        config = cls(
            redis_url=env.get("TRUEDEAL_REDIS_URL") or cls.redis_url,
            key_prefix=env.get("TRUEDEAL_KEY_PREFIX", cls.key_prefix),
            queue=env.get("TRUEDEAL_QUEUE") or cls.queue,
            max_job_deals=min(_int(env, "TRUEDEAL_MAX_JOB_DEALS", cls.max_job_deals, 1), MAX_DEALS),
            api_keys=keys,
            rate_limit=parse_rate(env.get("TRUEDEAL_RATE_LIMIT")),
            auth_failures=parse_rate(env.get("TRUEDEAL_AUTH_FAILURES"), "TRUEDEAL_AUTH_FAILURES") or (20, 60),
            max_body=_int(env, "TRUEDEAL_MAX_BODY", cls.max_body, 1024),
            count_timeout=_float(env, "TRUEDEAL_COUNT_TIMEOUT", cls.count_timeout, 0.1),
            count_processes=_int(env, "TRUEDEAL_COUNT_PROCESSES", cls.count_processes, 1),
            count_cache=_int(env, "TRUEDEAL_COUNT_CACHE", cls.count_cache, 1),
            counts_per_client=_int(env, "TRUEDEAL_COUNTS_PER_CLIENT", cls.counts_per_client, 1),
            preview_deals=_int(env, "TRUEDEAL_PREVIEW_DEALS", cls.preview_deals, 1),
        )
        return config.replace(**overrides) if overrides else config

    def replace(self, **changes: Any) -> "WebConfig":
        if "api_keys" in changes and isinstance(changes["api_keys"], str):
            changes["api_keys"] = tuple(k.strip() for k in changes["api_keys"].split(",") if k.strip())
        if "rate_limit" in changes and (changes["rate_limit"] is None or isinstance(changes["rate_limit"], str)):
            changes["rate_limit"] = parse_rate(changes["rate_limit"])
        if isinstance(changes.get("auth_failures"), str):
            changes["auth_failures"] = parse_rate(changes["auth_failures"], "TRUEDEAL_AUTH_FAILURES")
        if "max_job_deals" in changes:
            changes["max_job_deals"] = min(int(changes["max_job_deals"]), MAX_DEALS)
        return dataclasses.replace(self, **changes)

    def job_env(self) -> dict[str, str]:
        """The ``TRUEDEAL_*`` variables that make the job system (store and
        Celery app) agree with this config."""
        env = {k: v for k, v in os.environ.items() if k.startswith("TRUEDEAL_")}
        env.update(
            TRUEDEAL_REDIS_URL=self.redis_url,
            TRUEDEAL_KEY_PREFIX=self.key_prefix,
            TRUEDEAL_QUEUE=self.queue,
            TRUEDEAL_MAX_JOB_DEALS=str(self.max_job_deals),
        )
        return env
