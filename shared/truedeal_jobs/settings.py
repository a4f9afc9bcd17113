"""The servers' settings, read from ``TRUEDEAL_*`` environment variables by
one reader (:class:`EnvReader`) with one syntax:

- integers may carry ``_`` or ``,`` as thousands separators (``100_000_000``);
- an empty or unset variable means the default;
- rates read ``N/second``, ``N/minute`` or ``N/hour`` (``s``, ``m``, ``h``);
- lists are comma separated;
- a bad value raises :class:`SettingsError`, one line naming the variable.

The job system's settings (:class:`JobSettings`) and where its work is queued
(:class:`DispatchSettings`) live here; the web app's and the worker's own
settings read their variables with the same reader.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from truedeal.choices import MAX_DEALS

#: Hard upper bound on enumeration partitions per job.
MAX_PARTITIONS = 64
DEFAULT_REDIS_URL = "redis://localhost:6379/0"
#: Seconds before an unacknowledged task is re-delivered (default).
VISIBILITY_TIMEOUT = 3600

_RATE_RE = re.compile(r"^\s*(\d+)\s*/\s*(second|minute|hour|s|m|h)\s*$", re.IGNORECASE)
_PERIODS = {"second": 1, "s": 1, "minute": 60, "m": 60, "hour": 3600, "h": 3600}


class SettingsError(ValueError):
    """A bad setting; the message is one line that names the variable."""


def parse_rate(text: str | None, name: str) -> tuple[int, int] | None:
    """``"60/minute"`` -> ``(60, 60)`` (requests, window seconds); None or "" -> None."""
    if text is None or not str(text).strip():
        return None
    m = _RATE_RE.match(str(text))
    if not m or int(m.group(1)) < 1:
        raise SettingsError(f"{name} must look like 60/minute (or /second, /hour), got {text!r}")
    return int(m.group(1)), _PERIODS[m.group(2).lower()]


@dataclass(frozen=True)
class EnvReader:
    """Typed reads of one environment mapping (default ``os.environ``)."""

    env: Mapping[str, str]

    @classmethod
    def of(cls, env: Mapping[str, str] | None = None) -> EnvReader:
        return cls(os.environ if env is None else env)

    def _raw(self, name: str) -> str:
        return (self.env.get(name) or "").strip()

    def text(self, name: str, default: str) -> str:
        """The value, or ``default`` when unset or empty."""
        return self._raw(name) or default

    def prefix(self, name: str, default: str) -> str:
        """The value as given (an empty prefix is a prefix), or ``default`` when unset."""
        return self.env.get(name, default)

    def integer(self, name: str, default: int, minimum: int = 1) -> int:
        raw = self._raw(name)
        if not raw:
            return default
        try:
            value = int(raw.replace("_", "").replace(",", ""))
        except ValueError:
            raise SettingsError(f"{name} must be an integer, got {raw!r}") from None
        if value < minimum:
            raise SettingsError(f"{name} must be at least {minimum}, got {value}")
        return value

    def number(self, name: str, default: float, minimum: float) -> float:
        raw = self._raw(name)
        if not raw:
            return default
        try:
            value = float(raw)
        except ValueError:
            raise SettingsError(f"{name} must be a number, got {raw!r}") from None
        if not value >= minimum:
            raise SettingsError(f"{name} must be at least {minimum}, got {raw}")
        return value

    def rate(self, name: str, default: tuple[int, int] | None = None) -> tuple[int, int] | None:
        return parse_rate(self._raw(name), name) or default

    def words(self, name: str) -> tuple[str, ...]:
        """A comma-separated list, blanks dropped."""
        return tuple(w.strip() for w in self._raw(name).split(",") if w.strip())


def redis_url(env: Mapping[str, str] | None = None) -> str:
    """``TRUEDEAL_REDIS_URL``, default ``redis://localhost:6379/0``."""
    return EnvReader.of(env).text("TRUEDEAL_REDIS_URL", DEFAULT_REDIS_URL)


@dataclass(frozen=True)
class JobSettings:
    """Tunables of the job system; :meth:`from_env` reads ``TRUEDEAL_*``.

    ``prefix``        key prefix (``TRUEDEAL_KEY_PREFIX``, default ``td:``).
    ``ttl``           seconds every job key lives after its last write
                      (``TRUEDEAL_JOB_TTL``, default 7 days).
    ``max_deals``     most deals per job (``TRUEDEAL_MAX_JOB_DEALS``, default
                      100,000,000; never above the engine's 1,000,000,000).
    ``partitions``    enumeration partitions wanted (``TRUEDEAL_PARTITIONS``,
                      default 8); a job uses ``min(cells, this, 64)``.
    ``max_attempts``  starts of one partition or chunk before the job fails
                      (``TRUEDEAL_MAX_ATTEMPTS``, default 5).
    ``stale_after``   seconds without progress before the watchdog re-queues
                      (``TRUEDEAL_WATCHDOG_STALE``, default 120).
    ``max_requeues``  consecutive watchdog rounds without progress (counted
                      only while the task queue is empty) before the job fails
                      (``TRUEDEAL_WATCHDOG_MAX_REQUEUES``, default 10).
    ``requeue_batch`` most tasks re-queued per job and round (a partition, or
                      a run of chunks as long as the job's draw tasks), lowest
                      indices first (``TRUEDEAL_WATCHDOG_BATCH``, 64).
    ``plan_cache``    plans kept per process (``TRUEDEAL_PLAN_CACHE``, 4).
    ``plan_cache_mb`` a process holding more than this many MB keeps only the
                      plan in use (``TRUEDEAL_PLAN_CACHE_MB``, 512).
    ``task_seconds``  a task's time limit: half the visibility timeout, at
                      least 60 (``TRUEDEAL_VISIBILITY_TIMEOUT``, default 3600),
                      so a task never runs when its message is re-delivered.
    """

    prefix: str = "td:"
    ttl: int = 7 * 24 * 3600
    max_deals: int = 100_000_000
    partitions: int = 8
    max_attempts: int = 5
    stale_after: float = 120.0
    max_requeues: int = 10
    requeue_batch: int = 64
    plan_cache: int = 4
    plan_cache_mb: int = 512
    task_seconds: int = 1800

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> JobSettings:
        """Settings from ``env`` (default ``os.environ``); SettingsError on a bad value."""
        read = EnvReader.of(env)
        return cls(
            prefix=read.prefix("TRUEDEAL_KEY_PREFIX", cls.prefix),
            ttl=read.integer("TRUEDEAL_JOB_TTL", cls.ttl),
            max_deals=min(read.integer("TRUEDEAL_MAX_JOB_DEALS", cls.max_deals), MAX_DEALS),
            partitions=min(read.integer("TRUEDEAL_PARTITIONS", cls.partitions), MAX_PARTITIONS),
            max_attempts=read.integer("TRUEDEAL_MAX_ATTEMPTS", cls.max_attempts),
            stale_after=read.number("TRUEDEAL_WATCHDOG_STALE", cls.stale_after, 1.0),
            max_requeues=read.integer("TRUEDEAL_WATCHDOG_MAX_REQUEUES", cls.max_requeues),
            requeue_batch=read.integer("TRUEDEAL_WATCHDOG_BATCH", cls.requeue_batch),
            plan_cache=read.integer("TRUEDEAL_PLAN_CACHE", cls.plan_cache),
            plan_cache_mb=read.integer("TRUEDEAL_PLAN_CACHE_MB", cls.plan_cache_mb),
            task_seconds=max(60, read.integer("TRUEDEAL_VISIBILITY_TIMEOUT", VISIBILITY_TIMEOUT) // 2),
        )


@dataclass(frozen=True)
class DispatchSettings:
    """Where job work is queued: ``TRUEDEAL_REDIS_URL`` (the broker),
    ``TRUEDEAL_KEY_PREFIX`` (the broker's keys get ``<prefix>celery:``),
    ``TRUEDEAL_QUEUE`` (default ``truedeal``; slow jobs use ``<queue>.slow``)
    and ``TRUEDEAL_VISIBILITY_TIMEOUT`` (seconds, default 3600)."""

    redis_url: str
    prefix: str
    queue: str
    visibility_timeout: int

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> DispatchSettings:
        read = EnvReader.of(env)
        return cls(redis_url(env), read.prefix("TRUEDEAL_KEY_PREFIX", JobSettings.prefix),
                   read.text("TRUEDEAL_QUEUE", "truedeal"), read.integer("TRUEDEAL_VISIBILITY_TIMEOUT", VISIBILITY_TIMEOUT))
