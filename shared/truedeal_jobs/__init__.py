"""The job system: generation jobs and tournament sets stored in Redis.

It sits on the core (``truedeal``: spec, listing, sampling, formats), which
imports no Redis, and under the worker and the web app, which both use it
and never each other.  This package is the whole job logic (:mod:`.store`:
the record in Redis; :mod:`.runner`: what tasks do; :mod:`.sets`: tournament
sets); the Celery workers (``worker/``) are a thin adapter that calls
:func:`run_partition`, :func:`run_reduce`, :func:`run_chunk` and
:func:`watchdog_scan`, and that implements :class:`Dispatcher` to queue
those calls.  It uses redis-py only: neither Celery nor Flask.

Life cycle
    ``queued -> enumerating -> drawing -> done``, or ``failed`` /
    ``cancelled`` from any state before ``done``.  Every change of state is
    one atomic check-and-set (a Lua script), so concurrent and re-delivered
    tasks can never move a job backwards or out of a final state.

Enumeration
    The spec's listing is cut into ``parts`` slices of its cells, or of its
    groups when it is listed by spades+hearts pair (:func:`partition_count`,
    :mod:`truedeal.cuts`).  Partition ``k``
    builds only its slice and writes ``HSET <job>:partials k
    "<side total>:<cases>:<entries>"`` (decimal strings: Redis cannot add past
    64 bits) and the slice's compact form in ``<job>:slices``, in one atomic
    step; a re-delivered task overwrites its own entry, so nothing is counted
    twice.  A plan that is not one listing is marked ``whole``.  When every
    partition is present, :func:`run_reduce` checks each partial against its
    slice, adds them with Python ints (or builds a ``whole`` plan in one
    piece), stores the count and moves the job to ``drawing`` -- once,
    guarded by ``SET <job>:reduced NX`` inside the same atomic step.

Draws
    Chunk ``i`` is ``plan.chunk(i, seed)`` (cut short for the last chunk; a
    sliced job's plan is merged from its slices, the same plan),
    i.e. exactly the deals ``truedeal generate --seed`` prints, stored as
    12-byte deal numbers in ``<job>:chunk:<i>`` (``SET`` overwrites, so a
    re-run is harmless) and recorded in the set ``<job>:chunks``.  The chunk
    that completes the set moves the job to ``done``.

Keys (prefix ``P``, default ``td:``; ``{id}`` is a Redis Cluster hash tag)
    ``P job:{id}`` hash (the record), ``:partials`` and ``:slices`` hashes, ``:reduced``,
    ``:chunks`` set, ``:chunk:<i>`` strings, ``:cancel`` flag, ``:tasks`` hash
    (queued Celery task ids, for revocation), ``:attempts`` hash,
    ``:watchdog`` lock; ``P jobs:active`` set (jobs the watchdog looks at);
    ``P lock:<name>`` locks.  Every per-job key expires ``ttl`` seconds after
    its last write, and all of them are refreshed when the job ends.

Reliability
    Tasks are at-least-once: every step is idempotent, writes are refused
    once a job has ended, each (job, partition or chunk) counts its attempts
    and fails the job past ``max_attempts`` (a task that kills its worker
    every time cannot loop forever), and :func:`watchdog_scan` re-queues
    partitions or chunks of jobs that have made no progress for
    ``stale_after`` seconds.
"""

import importlib
import importlib.util
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from truedeal.randomness import CHUNK_DEALS

    from .models import (
        ACTIVE_STATES,
        CANCELLED,
        DONE,
        DRAWING,
        ENUMERATING,
        FAILED,
        FAST_LANE,
        FINAL_STATES,
        QUEUED,
        SLOW_LANE,
        STATES,
        Dispatcher,
        Job,
        JobError,
        JobInputError,
        JobNotFound,
        JobNotReady,
        State,
        lane_for,
    )
    from .runner import (
        PlanCache,
        WatchdogReport,
        draw_chunk_bytes,
        run_chunk,
        run_chunks,
        run_partition,
        run_reduce,
        submit,
        watchdog_scan,
    )
    from .settings import MAX_PARTITIONS, JobSettings, SettingsError, redis_url
    from .store import JobStore, connect
    from .submission import partition_count
    from .view import NO_WORKER_NOTE, public_status

__all__ = [
    "CHUNK_DEALS",
    "PlanCache",
    "WatchdogReport",
    "draw_chunk_bytes",
    "partition_count",
    "run_chunk",
    "run_chunks",
    "run_partition",
    "run_reduce",
    "submit",
    "watchdog_scan",
    "ACTIVE_STATES",
    "CANCELLED",
    "DONE",
    "DRAWING",
    "Dispatcher",
    "ENUMERATING",
    "FAILED",
    "FAST_LANE",
    "FINAL_STATES",
    "Job",
    "JobError",
    "JobInputError",
    "JobNotFound",
    "JobNotReady",
    "JobSettings",
    "JobStore",
    "MAX_PARTITIONS",
    "QUEUED",
    "SLOW_LANE",
    "STATES",
    "State",
    "SettingsError",
    "connect",
    "lane_for",
    "redis_url",
    "NO_WORKER_NOTE",
    "public_status",
]

#: The module of each name above.  A name's module is imported when the name is
#: first used, not with the package: the job commands' module imports the package,
#: and `truedeal status --help` needs neither the runner nor the store (numpy, the
#: engine, Redis: ~0.3 s).
_HOMES = {
    "truedeal.randomness": ("CHUNK_DEALS",),
    ".models": ("ACTIVE_STATES", "CANCELLED", "DONE", "DRAWING", "ENUMERATING", "FAILED", "FAST_LANE",
                "FINAL_STATES", "QUEUED", "SLOW_LANE", "STATES", "Dispatcher", "Job", "JobError", "JobInputError",
                "JobNotFound", "JobNotReady", "State", "lane_for"),
    ".runner": ("PlanCache", "WatchdogReport", "draw_chunk_bytes", "run_chunk", "run_chunks", "run_partition",
                "run_reduce", "submit", "watchdog_scan"),
    ".settings": ("MAX_PARTITIONS", "JobSettings", "SettingsError", "redis_url"),
    ".store": ("JobStore", "connect"),
    ".submission": ("partition_count",),
    ".view": ("NO_WORKER_NOTE", "public_status"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}


def require(*modules: str) -> None:
    """Raise ModuleNotFoundError, as importing it would, for the first of
    ``modules`` that is not installed; found without importing it (Redis
    and Celery take ~0.1 s to import)."""
    for module in modules:
        # one imported already is there (and kombu's module, which replaces itself, has no spec to find)
        if module not in sys.modules and importlib.util.find_spec(module) is None:
            raise ModuleNotFoundError(f"No module named {module!r}", name=module)


# The job system runs on Redis: without the server extra, importing it fails at
# once, as when the store was imported with the package, so that `truedeal`
# says which extra to install.
require("redis")

if not TYPE_CHECKING:  # a type checker sees the imports above, and no catch-all

    def __getattr__(name: str) -> Any:
        home = _HOME_OF.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, __name__), name)
        globals()[name] = value  # once: later uses find it here
        return value
