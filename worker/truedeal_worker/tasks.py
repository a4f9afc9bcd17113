"""Celery tasks: thin wrappers around :mod:`truedeal_jobs`.

Each task takes ids only (``job_id`` and a partition or chunk index), reads
the job from Redis, and returns a short outcome word for the log (results
are ignored; no deal ever passes through Celery).  Anything unexpected fails
the job with a readable reason instead of retrying forever; only Redis or
broker connection errors are retried (bounded, with backoff).
"""

from __future__ import annotations

import logging
import os
import random
import time
from collections.abc import Callable
from typing import Any

import redis
from kombu.exceptions import OperationalError

import truedeal_jobs as jobs
import truedeal_jobs.runner  # noqa: F401  (loaded before the pool forks, not at each child's first task)
from truedeal.errors import TooLargeToDeal
from truedeal_jobs import sets

from . import app as app_module  # its ENCODE_BEHIND is set at worker start
from .app import DRAW, ENUMERATE, REDUCE, WATCHDOG, CeleryDispatcher, app

logger = logging.getLogger("truedeal.worker")

#: Errors worth retrying: the store or the broker is (momentarily) unreachable.
RETRY_ON = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OperationalError)

_TASK_OPTIONS: dict[str, Any] = dict(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    autoretry_for=RETRY_ON,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=5,
)


class _Context:
    """Per-process store, dispatcher and plan cache (rebuilt after fork)."""

    def __init__(self) -> None:
        cfg = app.truedeal_config
        self.pid = os.getpid()
        self.store = jobs.JobStore(jobs.connect(cfg.redis_url), cfg.jobs)
        self.dispatcher = CeleryDispatcher(app, cfg.queue)
        self.plans = jobs.PlanCache(cfg.jobs.plan_cache, cfg.jobs.plan_cache_mb * 1024 * 1024)


_ctx: _Context | None = None


def context() -> _Context:
    """This process's :class:`_Context` (created on first use in each process)."""
    global _ctx
    if _ctx is None or _ctx.pid != os.getpid():
        _ctx = _Context()
    return _ctx


#: Waits (seconds) between in-process attempts while Redis is unreachable.
#: Redis is the broker too, so Celery's own retry (a new message) cannot be
#: published while it is down: the task waits here instead, ~1 minute in all,
#: then fails to Celery's autoretry and, past that, the watchdog.
REDIS_BACKOFF = (1.0, 2.0, 4.0, 8.0, 16.0, 30.0)


def _with_backoff(job_id: str, what: str, fn: Callable[[_Context], str], ctx: _Context) -> str:
    """``fn(ctx)``, tried again after each of :data:`REDIS_BACKOFF` (with
    jitter) while the store is unreachable; every step is idempotent."""
    for wait in (*REDIS_BACKOFF, None):
        try:
            return fn(ctx)
        except RETRY_ON as exc:
            if wait is None:
                raise
            wait *= random.uniform(0.75, 1.25)
            logger.warning("job %s %s: Redis unreachable (%s); retrying in %.1f s", job_id, what,
                           type(exc).__name__, wait)
            time.sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


def _guard(job_id: str, what: str, fn: Callable[[_Context], str]) -> str:
    ctx = context()
    try:
        outcome = _with_backoff(job_id, what, fn, ctx)
    except RETRY_ON:
        raise
    except jobs.JobNotFound:
        outcome = "missing"
    except MemoryError:
        ctx.store.fail(job_id, f"the worker ran out of memory in {what}; narrow the constraints", ctx.dispatcher)
        outcome = "failed"
    except TooLargeToDeal as exc:  # the user's spec, not the worker: its one line as it is
        ctx.store.fail(job_id, str(exc), ctx.dispatcher)
        outcome = "failed"
    except Exception as exc:
        logger.exception("%s of job %s failed", what, job_id)
        ctx.store.fail(job_id, f"worker error in {what}: {type(exc).__name__}: {exc}", ctx.dispatcher)
        outcome = "failed"
    logger.info("job %s %s: %s", job_id, what, outcome)
    return outcome


@app.task(name=ENUMERATE, **_TASK_OPTIONS)
def enumerate_partition(self, job_id: str, k: int) -> str:
    """List partition ``k`` of the job's cells and record its exact totals."""
    return _guard(job_id, f"enumeration partition {k}",
                  lambda c: jobs.run_partition(c.store, c.dispatcher, job_id, int(k), c.plans))


@app.task(name=REDUCE, **_TASK_OPTIONS)
def reduce(self, job_id: str) -> str:
    """Merge the partitions' totals, check them, and queue the draws."""
    return _guard(job_id, "reduce", lambda c: jobs.run_reduce(c.store, c.dispatcher, job_id, c.plans))


@app.task(name=DRAW, **_TASK_OPTIONS)
def draw_chunk(self, job_id: str, i: int, count: int = 1) -> str:
    """Draw chunks ``i .. i + count - 1`` of the job's seeded stream and store
    their deal numbers (``count`` defaults to 1, as messages had it before)."""
    what = f"draw chunk {i}" if int(count) == 1 else f"draw chunks {i}-{int(i) + int(count) - 1}"
    return _guard(job_id, what, lambda c: jobs.run_chunks(c.store, c.dispatcher, job_id, int(i), int(count), c.plans,
                                                          encode_behind=app_module.ENCODE_BEHIND))


@app.task(name=WATCHDOG, bind=True, acks_late=False, reject_on_worker_lost=False, ignore_result=True)
def watchdog(self, after_outage: bool = False) -> str:
    """One watchdog scan, unless another ran within the last interval; after
    a Redis outage, a scan of every active job at once."""
    ctx = context()
    interval = app.truedeal_config.watchdog_interval
    try:
        if not after_outage and not ctx.store.try_lock("watchdog", interval * 0.8):
            return "busy"
        report = jobs.watchdog_scan(ctx.store, ctx.dispatcher, after_outage=after_outage)
        st = ctx.store.settings
        resent = sets.watchdog_sets(ctx.store.set_store(), _send_by_name, 0.0 if after_outage else st.stale_after,
                                    st.max_requeues)
    except RETRY_ON as exc:  # the next kick tries again
        logger.warning("watchdog: store unreachable: %s", exc)
        return "unreachable"
    for job_id, items in report.requeued.items():
        shown = ", ".join(items[:10]) + (" ..." if len(items) > 10 else "")
        logger.warning("watchdog: job %s made no progress; re-queued %s", job_id, shown)
    for job_id in report.failed:
        logger.warning("watchdog: job %s failed (no progress)", job_id)
    for line in resent:
        logger.warning("watchdog: set %s", line)
    return "ok"


def _send_by_name(name: str, args: tuple) -> None:
    app.send_task(name, args=list(args), ignore_result=True)
