"""The job record in Redis: states, errors, settings, keys and atomic updates."""


from __future__ import annotations

import json
import math
import os
import re
import secrets
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable, Iterator, Mapping, Protocol, Sequence

import numpy as np
import redis

from truedeal.dealnumber import bytes_to_limbs, decode_batch, limbs_to_ints
from truedeal.engine import MAX_DEALS, TooWide, check_count, exact_source
from truedeal.enumeration import make_layout
from truedeal.formats import FORMATS
from truedeal.randomness import CHUNK_DEALS
from truedeal.spec import Spec, load_spec

# --------------------------------------------------------------------------- states

QUEUED = "queued"
ENUMERATING = "enumerating"
DRAWING = "drawing"
DONE = "done"
FAILED = "failed"
CANCELLED = "cancelled"
#: Every state, in life-cycle order.
STATES: tuple[str, ...] = (QUEUED, ENUMERATING, DRAWING, DONE, FAILED, CANCELLED)
#: States a job never leaves.
FINAL_STATES: frozenset[str] = frozenset({DONE, FAILED, CANCELLED})
#: States in which work is still to be done.
ACTIVE_STATES: tuple[str, ...] = (QUEUED, ENUMERATING, DRAWING)

#: Hard upper bound on enumeration partitions per job.
MAX_PARTITIONS = 64

_ID_RE = re.compile(r"^[0-9a-f]{32}$")


# --------------------------------------------------------------------------- errors


#: Largest first board number (board numbers must stay printable integers).
MAX_FIRST_BOARD = 1_000_000_000


class JobError(Exception):
    """A job-level problem with a one-line, user-readable message."""


class JobNotFound(JobError, KeyError):
    """No such job: the id never existed, or the job has expired."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else "unknown job"


class JobInputError(JobError, ValueError):
    """A submission the job system refuses (bad count, format or option)."""


class JobNotReady(JobError):
    """The job's deals are not (or no longer) available."""


class _Stopped(Exception):
    """Raised inside a worker loop when the job was cancelled or failed."""


# --------------------------------------------------------------------------- settings


def _env_int(env: Mapping[str, str], name: str, default: int, minimum: int = 0) -> int:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.replace("_", ""))
    except ValueError:
        raise JobInputError(f"{name} must be an integer, got {raw!r}") from None
    if value < minimum:
        raise JobInputError(f"{name} must be at least {minimum}, got {value}")
    return value


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
    ``requeue_batch`` most partitions or chunks re-queued per job and round,
                      lowest indices first (``TRUEDEAL_WATCHDOG_BATCH``, 64).
    ``plan_cache``    plans kept per process (``TRUEDEAL_PLAN_CACHE``, 4).
    ``plan_cache_mb`` a process holding more than this many MB keeps only the
                      plan in use (``TRUEDEAL_PLAN_CACHE_MB``, 512).
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

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "JobSettings":
        """Settings from ``env`` (default ``os.environ``); JobInputError on a bad value."""
        env = os.environ if env is None else env
        max_deals = _env_int(env, "TRUEDEAL_MAX_JOB_DEALS", cls.max_deals, 1)
        return cls(
            prefix=env.get("TRUEDEAL_KEY_PREFIX", cls.prefix),
            ttl=_env_int(env, "TRUEDEAL_JOB_TTL", cls.ttl, 1),
            max_deals=min(max_deals, MAX_DEALS),
            partitions=min(_env_int(env, "TRUEDEAL_PARTITIONS", cls.partitions, 1), MAX_PARTITIONS),
            max_attempts=_env_int(env, "TRUEDEAL_MAX_ATTEMPTS", cls.max_attempts, 1),
            stale_after=float(_env_int(env, "TRUEDEAL_WATCHDOG_STALE", int(cls.stale_after), 1)),
            max_requeues=_env_int(env, "TRUEDEAL_WATCHDOG_MAX_REQUEUES", cls.max_requeues, 1),
            requeue_batch=_env_int(env, "TRUEDEAL_WATCHDOG_BATCH", cls.requeue_batch, 1),
            plan_cache=_env_int(env, "TRUEDEAL_PLAN_CACHE", cls.plan_cache, 1),
            plan_cache_mb=_env_int(env, "TRUEDEAL_PLAN_CACHE_MB", cls.plan_cache_mb, 1),
        )


def redis_url(env: Mapping[str, str] | None = None) -> str:
    """``TRUEDEAL_REDIS_URL``, default ``redis://localhost:6379/0``."""
    env = os.environ if env is None else env
    return env.get("TRUEDEAL_REDIS_URL") or "redis://localhost:6379/0"


def connect(url: str | None = None) -> redis.Redis:
    """A redis-py client (bytes replies) with finite timeouts, so that an
    unreachable server is an error within seconds rather than a hang."""
    return redis.Redis.from_url(
        url or redis_url(),
        socket_connect_timeout=5,
        socket_timeout=60,
        health_check_interval=30,
    )


# --------------------------------------------------------------------------- the record


#: Lanes: a job whose count took long (or did not finish) before it was queued
#: runs in the slow lane, on its own queue and worker processes, so that it never
#: holds up small jobs (``truedeal worker`` keeps processes for each lane).
FAST_LANE = "fast"
SLOW_LANE = "slow"
#: A build slower than this (seconds) puts a job in the slow lane.
SLOW_BUILD_SECONDS = 1.0


def lane_for(summary: dict[str, Any] | None) -> str:
    """The lane of a job from its spec's count before queueing: the slow lane
    when the count did not finish in time (``None``) or took over
    :data:`SLOW_BUILD_SECONDS` (its workers would build it again)."""
    if summary is None or float(summary.get("build_seconds") or 0.0) > SLOW_BUILD_SECONDS:
        return SLOW_LANE
    return FAST_LANE


@dataclass
class Job:
    """One job record, as read from Redis (read-only snapshot)."""

    id: str
    state: str
    spec_json: str
    n: int
    seed: str
    seed_generated: bool
    options: dict[str, Any]
    parts: int
    chunks: int
    created: float
    updated: float
    started: float | None = None
    finished: float | None = None
    progress_at: float | None = None
    requeued_at: float | None = None
    requeues: int = 0
    error: str | None = None
    summary: dict[str, Any] | None = None
    sliced: bool = False  # its listing is merged from the partitions' slices

    @property
    def final(self) -> bool:
        return self.state in FINAL_STATES

    @property
    def lane(self) -> str:
        """:data:`FAST_LANE` or :data:`SLOW_LANE`: the queue its tasks go to (see :func:`lane_for`)."""
        return str(self.options.get("lane", FAST_LANE))

    def chunk_size(self, i: int) -> int:
        """Deals in chunk ``i`` (the last chunk may be short)."""
        if not 0 <= i < self.chunks:
            raise ValueError(f"chunk {i} out of range 0..{self.chunks - 1}")
        return min(CHUNK_DEALS, self.n - i * CHUNK_DEALS)

    @property
    def last_activity(self) -> float:
        return max(self.created, self.progress_at or 0.0, self.requeued_at or 0.0)


def _f(raw: bytes | None) -> float | None:
    return None if raw is None or raw == b"" else float(raw)


def _s(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode()


def _job_from_hash(job_id: str, h: dict[bytes, bytes]) -> Job:
    return Job(
        id=job_id,
        state=h[b"state"].decode(),
        spec_json=h[b"spec"].decode(),
        n=int(h[b"n"]),
        seed=h[b"seed"].decode(),
        seed_generated=h.get(b"seed_generated") == b"1",
        options=json.loads(h.get(b"options", b"{}")),
        parts=int(h[b"parts"]),
        chunks=int(h[b"chunks"]),
        created=float(h[b"created"]),
        updated=float(h.get(b"updated", h[b"created"])),
        started=_f(h.get(b"started")),
        finished=_f(h.get(b"finished")),
        progress_at=_f(h.get(b"progress_at")),
        requeued_at=_f(h.get(b"requeued_at")),
        requeues=int(h.get(b"requeues", b"0")),
        error=_s(h.get(b"error")),
        summary=json.loads(h[b"summary"]) if h.get(b"summary") else None,
        sliced=h.get(b"sliced") == b"1",
    )


def _iso(t: float | None) -> str | None:
    if t is None:
        return None
    return datetime.fromtimestamp(t, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --------------------------------------------------------------------------- Lua

# Move KEYS[1] from one of the states in ARGV[1] (comma separated) to ARGV[2],
# setting the field/value pairs ARGV[4..].  Leaving for a final state drops the
# job ARGV[3] from the active set KEYS[2].  Returns 1 moved, 0 not allowed, -1 no job.
_TRANSITION = """
local s = redis.call('HGET', KEYS[1], 'state')
if not s then return -1 end
for a in string.gmatch(ARGV[1], '[^,]+') do
  if s == a then
    redis.call('HSET', KEYS[1], 'state', ARGV[2])
    for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
    if ARGV[2] == 'done' or ARGV[2] == 'failed' or ARGV[2] == 'cancelled' then
      redis.call('SREM', KEYS[2], ARGV[3])
    end
    return 1
  end
end
return 0
"""

# Partition ARGV[1] writes "total:cases:entries" (or "whole") ARGV[2] and its
# slice ARGV[5] (if any) while the job enumerates, both at once.
# Returns the number of partitions present, or -1 if the job no longer takes partials.
_WRITE_PARTIAL = """
local s = redis.call('HGET', KEYS[1], 'state')
if s ~= 'queued' and s ~= 'enumerating' then return -1 end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[3])
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[5])
  redis.call('EXPIRE', KEYS[3], ARGV[3])
end
redis.call('HSET', KEYS[1], 'progress_at', ARGV[4], 'updated', ARGV[4])
return redis.call('HLEN', KEYS[2])
"""

# The reduce step's guard: enumerating -> drawing once (SET NX on KEYS[2]),
# storing the field/value pairs ARGV[3..].  Returns 1 for the one winner.
_COMPLETE_ENUMERATION = """
if redis.call('HGET', KEYS[1], 'state') ~= 'enumerating' then return 0 end
if not redis.call('SET', KEYS[2], ARGV[2], 'NX', 'EX', ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'state', 'drawing')
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1
"""

# Chunk ARGV[2]'s bytes ARGV[1] are stored while the job draws.
# Returns the number of chunks done, or -1 if the job no longer takes chunks.
_WRITE_CHUNK = """
if redis.call('HGET', KEYS[1], 'state') ~= 'drawing' then return -1 end
redis.call('SET', KEYS[2], ARGV[1], 'EX', ARGV[3])
redis.call('SADD', KEYS[3], ARGV[2])
redis.call('EXPIRE', KEYS[3], ARGV[3])
redis.call('HSET', KEYS[1], 'progress_at', ARGV[4], 'updated', ARGV[4])
return redis.call('SCARD', KEYS[3])
"""

# drawing -> done when all ARGV[1] chunks are present.  Returns 1 for the one winner.
_FINISH = """
if redis.call('HGET', KEYS[1], 'state') ~= 'drawing' then return 0 end
if redis.call('SCARD', KEYS[2]) < tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'state', 'done', 'finished', ARGV[2], 'updated', ARGV[2])
redis.call('SREM', KEYS[3], ARGV[3])
return 1
"""


# --------------------------------------------------------------------------- dispatcher


class Dispatcher(Protocol):
    """How job logic queues work; the Celery adapter implements it.

    Each queueing method returns the task ids it queued (for revocation);
    queueing the same work twice must be harmless (every task is idempotent).
    """

    def enumerate_partitions(self, job_id: str, ks: Sequence[int], lane: str = FAST_LANE) -> list[str]:
        """Queue ``enumerate_partition(job_id, k)`` for each ``k`` on ``lane``'s queue."""

    def reduce(self, job_id: str, lane: str = FAST_LANE) -> str:
        """Queue ``reduce(job_id)`` on ``lane``'s queue."""

    def draw_chunks(self, job_id: str, indices: Sequence[int], lane: str = FAST_LANE) -> list[str]:
        """Queue ``draw_chunk(job_id, i)`` for each ``i`` on ``lane``'s queue."""

    def revoke(self, task_ids: Sequence[str]) -> None:
        """Ask workers to discard these queued tasks (best effort)."""

    def backlog(self) -> int | None:
        """Messages waiting in the task queue, or None if unknown."""


@dataclass(frozen=True)
class Partial:
    """What partition ``k`` found: its slice's exact side total, cases and
    level-0 entries, or ``whole``: the job's plan is not one listing that
    can be cut (an either/or across seats, rejection, too wide), so the
    reduce builds it in one piece."""

    total: int = 0
    cases: int = 0
    entries: int = 0
    whole: bool = False

    def text(self) -> str:
        return "whole" if self.whole else f"{self.total}:{self.cases}:{self.entries}"

    @classmethod
    def parse(cls, text: str) -> "Partial":
        if text == "whole":
            return cls(whole=True)
        total, cases, entries = text.split(":")
        return cls(int(total), int(cases), int(entries))


def partition_count(spec: Spec, wanted: int) -> int:
    """Partitions for ``spec``, decided without listing anything (this runs
    in the web request): ``min(wanted, 64)`` slices of the cells, or 1 when
    the plan is not one listing that can be cut (see
    :func:`truedeal.engine.exact_source`) or has a single cell (no seat
    whose shape is constrained).  Compiling the spec is cheap; a spec that
    does not compile gets ``wanted`` and the workers report why it fails.
    """
    try:
        source = exact_source(spec)
        if source is None or not make_layout(source).patterned:
            return 1
    except (TooWide, ValueError):
        pass
    return max(1, min(wanted, MAX_PARTITIONS))


# --------------------------------------------------------------------------- the store


class JobStore:
    """Job records and deal chunks in Redis.

    Contract: every method that takes a job id raises :class:`JobNotFound`
    for an id that does not exist (never existed or expired); Redis errors
    (``redis.exceptions.ConnectionError`` and friends) propagate unchanged.
    """

    def __init__(self, client: redis.Redis, settings: JobSettings | None = None) -> None:
        self.r = client
        self.settings = settings or JobSettings()
        self._transition = client.register_script(_TRANSITION)
        self._write_partial = client.register_script(_WRITE_PARTIAL)
        self._complete_enumeration = client.register_script(_COMPLETE_ENUMERATION)
        self._write_chunk = client.register_script(_WRITE_CHUNK)
        self._finish = client.register_script(_FINISH)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "JobStore":
        """Store on ``TRUEDEAL_REDIS_URL`` with :meth:`JobSettings.from_env`."""
        return cls(connect(redis_url(env)), JobSettings.from_env(env))

    def ping(self) -> None:
        """Raise redis' ConnectionError if the server cannot be reached."""
        self.r.ping()

    # ---------------------------------------------------------------- keys

    def key(self, job_id: str, part: str = "") -> str:
        """Key of job ``job_id`` (``part`` e.g. ``"partials"``, ``"chunk:3"``)."""
        base = f"{self.settings.prefix}job:{{{job_id}}}"
        return f"{base}:{part}" if part else base

    def chunk_key(self, job_id: str, i: int) -> str:
        return self.key(job_id, f"chunk:{i}")

    @property
    def active_key(self) -> str:
        return f"{self.settings.prefix}jobs:active"

    def _job_keys(self, job_id: str) -> list[str]:
        return [self.key(job_id, p) for p in ("", "partials", "slices", "reduced", "chunks", "cancel", "tasks", "attempts", "watchdog")]

    # ---------------------------------------------------------------- create / read

    def create(
        self,
        spec: Spec | dict | str,
        n: int,
        seed: str | None = None,
        fmt: str = "pbn",
        first_board: int = 1,
        lane: str = FAST_LANE,
    ) -> Job:
        """Validate and record a new ``queued`` job (nothing is queued yet; see
        :func:`submit`); ``lane`` is where its tasks will go (:func:`lane_for`).

        Raises :class:`~truedeal.spec.SpecError` for a bad spec and
        :class:`JobInputError` for a bad count (``check_count`` and at most
        ``settings.max_deals``), seed, format or first board.  Without a seed,
        one is generated with :mod:`secrets` and stored, so that re-runs of
        any chunk reproduce the same deals.
        """
        spec = load_spec(spec)
        try:
            check_count(n)
        except ValueError as exc:
            raise JobInputError(str(exc)) from None
        if n > self.settings.max_deals:
            raise JobInputError(f"at most {self.settings.max_deals:,} deals per job, got {n:,}")
        generated = seed is None
        if generated:
            seed = secrets.token_hex(16)
        if not isinstance(seed, str) or not seed or len(seed) > 1000:
            raise JobInputError("the seed must be a non-empty string of at most 1000 characters")
        try:
            seed.encode("utf-8")  # the stream is keyed by the seed's UTF-8 bytes
        except UnicodeEncodeError:
            raise JobInputError("the seed must be text (UTF-8); it contains bytes that are not") from None
        if fmt not in FORMATS:
            raise JobInputError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
        if isinstance(first_board, bool) or not isinstance(first_board, int) or not 1 <= first_board <= MAX_FIRST_BOARD:
            shown = repr(first_board) if len(repr(first_board)) <= 40 else repr(first_board)[:37] + "..."
            raise JobInputError(f"the first board must be an integer from 1 to {MAX_FIRST_BOARD:,}, got {shown}")
        parts = partition_count(spec, self.settings.partitions)
        job_id = uuid.uuid4().hex
        now = time.time()
        record = {
            "id": job_id,
            "state": QUEUED,
            "spec": spec.canonical_json(),
            "n": str(n),
            "seed": seed,
            "seed_generated": "1" if generated else "0",
            "options": json.dumps({"format": fmt, "first_board": first_board, "lane": lane}),
            "parts": str(parts),
            "chunks": str(math.ceil(n / CHUNK_DEALS)),
            "created": repr(now),
            "updated": repr(now),
            "requeues": "0",
        }
        pipe = self.r.pipeline(transaction=True)
        pipe.hset(self.key(job_id), mapping=record)
        pipe.expire(self.key(job_id), self.settings.ttl)
        pipe.sadd(self.active_key, job_id)
        pipe.execute()
        return self.get(job_id)

    def get(self, job_id: str) -> Job:
        """The current record of ``job_id``; :class:`JobNotFound` if none."""
        if not isinstance(job_id, str) or not _ID_RE.match(job_id):
            raise JobNotFound(f"unknown job id {str(job_id)[:80]!r} (job ids are 32 hex digits)")
        h = self.r.hgetall(self.key(job_id))
        if not h:
            raise JobNotFound(f"unknown job id {job_id!r} (it never existed or has expired)")
        return _job_from_hash(job_id, h)

    def partials(self, job_id: str) -> dict[int, Partial]:
        """Partition ``k`` -> its :class:`Partial`, as written so far."""
        raw = self.r.hgetall(self.key(job_id, "partials"))
        return {int(k): Partial.parse(v.decode()) for k, v in raw.items()}

    def slices(self, job_id: str) -> dict[int, bytes]:
        """Partition ``k`` -> its slice's compact form (:class:`truedeal.slices.Slice`)."""
        return {int(k): v for k, v in self.r.hgetall(self.key(job_id, "slices")).items()}

    def done_chunks(self, job_id: str) -> set[int]:
        return {int(x) for x in self.r.smembers(self.key(job_id, "chunks"))}

    def status(self, job_id: str) -> dict[str, Any]:
        """JSON-able status: state, progress of both phases, count once known,
        error, timestamps (ISO 8601 UTC), seed and options.

        ``progress.enumeration`` counts partitions; ``progress.drawing``
        counts chunks and deals.  ``count`` is ``plan.summary()`` (exact
        ``deals`` as an integer) once the enumeration is reduced, else None.
        """
        job = self.get(job_id)
        pipe = self.r.pipeline(transaction=False)
        pipe.hlen(self.key(job_id, "partials"))
        pipe.scard(self.key(job_id, "chunks"))
        pipe.sismember(self.key(job_id, "chunks"), job.chunks - 1)
        n_parts, n_chunks, last_done = pipe.execute()
        deals_done = min(n_chunks * CHUNK_DEALS, job.n)
        if last_done and n_chunks < job.chunks:
            deals_done -= CHUNK_DEALS - job.chunk_size(job.chunks - 1)
        if job.state == DONE:
            n_parts, n_chunks, deals_done = job.parts, job.chunks, job.n
        return {
            "id": job.id,
            "state": job.state,
            "n": job.n,
            "spec": json.loads(job.spec_json),
            "seed": job.seed,
            "seed_generated": job.seed_generated,
            "format": job.options.get("format"),
            "first_board": job.options.get("first_board"),
            "progress": {
                "enumeration": {"done": int(n_parts), "total": job.parts},
                "drawing": {"done": int(n_chunks), "total": job.chunks, "deals_done": int(deals_done), "deals_total": job.n},
            },
            "count": job.summary,
            "error": job.error,
            "created": _iso(job.created),
            "started": _iso(job.started),
            "updated": _iso(job.updated),
            "finished": _iso(job.finished),
            "requeues": job.requeues,
        }

    # ---------------------------------------------------------------- changes

    def transition(self, job_id: str, allowed: Iterable[str], new: str, **fields: Any) -> bool:
        """Atomically move the job from one of ``allowed`` to ``new`` and set
        ``fields``; False if it is in another state.  JobNotFound if none."""
        args: list[Any] = [",".join(allowed), new, job_id]
        fields.setdefault("updated", time.time())
        for k, v in fields.items():
            args += [k, repr(v) if isinstance(v, float) else str(v)]
        res = self._transition(keys=[self.key(job_id), self.active_key], args=args)
        if res == -1:
            raise JobNotFound(f"unknown job id {job_id!r} (it never existed or has expired)")
        return res == 1

    def stop_requested(self, job_id: str) -> bool:
        """True once the job was cancelled or failed (the flag loops check)."""
        return bool(self.r.exists(self.key(job_id, "cancel")))

    def count_attempt(self, job_id: str, item: str) -> int:
        """Record one more start of ``item`` (``"p:3"``, ``"c:12"``); returns the count."""
        pipe = self.r.pipeline(transaction=True)
        pipe.hincrby(self.key(job_id, "attempts"), item, 1)
        pipe.expire(self.key(job_id, "attempts"), self.settings.ttl)
        return int(pipe.execute()[0])

    def attempts(self, job_id: str) -> dict[str, int]:
        return {k.decode(): int(v) for k, v in self.r.hgetall(self.key(job_id, "attempts")).items()}

    def remember_tasks(self, job_id: str, items: Mapping[str, str]) -> None:
        """Remember queued task ids by item (for :meth:`cancel` to revoke)."""
        if not items:
            return
        pipe = self.r.pipeline(transaction=False)
        pipe.hset(self.key(job_id, "tasks"), mapping=dict(items))
        pipe.expire(self.key(job_id, "tasks"), self.settings.ttl)
        pipe.execute()

    def task_ids(self, job_id: str) -> list[str]:
        return [v.decode() for v in self.r.hvals(self.key(job_id, "tasks"))]

    def write_partial(self, job_id: str, k: int, partial: "Partial", data: bytes = b"") -> int:
        """Store partition ``k``'s exact totals and its slice ``data``
        (overwriting a previous run of the same partition, so a retry never
        counts twice); returns how many partitions are present, or -1 if the
        job no longer enumerates."""
        return int(self._write_partial(
            keys=[self.key(job_id), self.key(job_id, "partials"), self.key(job_id, "slices")],
            args=[k, partial.text(), self.settings.ttl, repr(time.time()), data],
        ))

    def complete_enumeration(self, job_id: str, fields: Mapping[str, Any]) -> bool:
        """The reduce guard: enumerating -> drawing exactly once; True for the winner."""
        args: list[Any] = [self.settings.ttl, uuid.uuid4().hex]
        for k, v in fields.items():
            args += [k, str(v)]
        return self._complete_enumeration(keys=[self.key(job_id), self.key(job_id, "reduced")], args=args) == 1

    def write_chunk(self, job_id: str, i: int, data: bytes) -> int:
        """Store chunk ``i``'s deal numbers (overwriting); returns the number
        of chunks done, or -1 if the job no longer draws."""
        return int(self._write_chunk(
            keys=[self.key(job_id), self.chunk_key(job_id, i), self.key(job_id, "chunks")],
            args=[data, i, self.settings.ttl, repr(time.time())],
        ))

    def finish(self, job_id: str) -> bool:
        """drawing -> done if every chunk is present (idempotent); True for the
        call that made the move, which also refreshes every key's expiry."""
        job = self.get(job_id)
        now = time.time()
        moved = self._finish(
            keys=[self.key(job_id), self.key(job_id, "chunks"), self.active_key],
            args=[job.chunks, repr(now), job_id],
        ) == 1
        if moved:
            self.r.delete(self.key(job_id, "slices"))
            self.touch(job_id, job.chunks)
        return moved

    def touch(self, job_id: str, chunks: int) -> None:
        """Restart the expiry of every key of the job (at its end)."""
        ttl = self.settings.ttl
        keys = self._job_keys(job_id)
        for lo in range(0, chunks, 2000):
            pipe = self.r.pipeline(transaction=False)
            for i in range(lo, min(chunks, lo + 2000)):
                pipe.expire(self.chunk_key(job_id, i), ttl)
            pipe.execute()
        pipe = self.r.pipeline(transaction=False)
        for k in keys:
            pipe.expire(k, ttl)
        pipe.execute()

    def _end(self, job_id: str, state: str, reason: str, dispatcher: Dispatcher | None) -> bool:
        now = time.time()
        moved = self.transition(job_id, ACTIVE_STATES, state, finished=now, error=reason)
        if not moved:
            return False
        self.r.set(self.key(job_id, "cancel"), state, ex=self.settings.ttl)
        job = self.get(job_id)
        if dispatcher is not None:
            ids = self.task_ids(job_id)
            if ids:
                try:
                    dispatcher.revoke(ids)
                except Exception:  # best effort: queued tasks also check the state
                    pass
        self.delete_chunks(job_id, job.chunks)
        self.r.delete(self.key(job_id, "slices"))
        self.touch(job_id, 0)
        return True

    def cancel(self, job_id: str, dispatcher: Dispatcher | None = None) -> Job:
        """Cancel the job if it has not ended (idempotent) and return it.

        Sets the cancel flag that worker loops check, moves the job to
        ``cancelled``, revokes its queued tasks through ``dispatcher`` and
        deletes the deals drawn so far.  A job that already ended is
        returned unchanged.
        """
        self._end(job_id, CANCELLED, "cancelled by request", dispatcher)
        return self.get(job_id)

    def fail(self, job_id: str, reason: str, dispatcher: Dispatcher | None = None) -> bool:
        """Fail the job with a one-line ``reason`` (shown in its status) if it
        has not ended; like :meth:`cancel` otherwise.  True if it failed now."""
        reason = " ".join(str(reason).split())[:2000] or "failed"
        return self._end(job_id, FAILED, reason, dispatcher)

    def delete_chunks(self, job_id: str, chunks: int) -> None:
        for lo in range(0, chunks, 2000):
            self.r.delete(*(self.chunk_key(job_id, i) for i in range(lo, min(chunks, lo + 2000))))

    def delete(self, job_id: str) -> None:
        """Remove every key of the job (for tests and administration)."""
        try:
            job = self.get(job_id)
            self.delete_chunks(job_id, job.chunks)
        except JobNotFound:
            pass
        self.r.delete(*self._job_keys(job_id))
        self.r.srem(self.active_key, job_id)

    # ---------------------------------------------------------------- workers

    @property
    def workers_key(self) -> str:
        return f"{self.settings.prefix}workers"

    def worker_heartbeat(self, name: str, ttl: float) -> None:
        """Record that worker ``name`` is alive for the next ``ttl`` seconds
        (a sorted set scored by expiry time; workers call this on a timer)."""
        now = time.time()
        pipe = self.r.pipeline(transaction=False)
        pipe.zadd(self.workers_key, {name: now + ttl})
        pipe.zremrangebyscore(self.workers_key, "-inf", now - 86400)  # forget workers gone for a day
        pipe.execute()

    def workers_alive(self) -> int:
        """How many workers have a heartbeat that has not expired."""
        return int(self.r.zcount(self.workers_key, f"({time.time()}", "+inf"))

    def try_lock(self, name: str, seconds: float) -> bool:
        """``SET <prefix>lock:<name> NX PX``: True if this caller holds it now."""
        return bool(self.r.set(f"{self.settings.prefix}lock:{name}", uuid.uuid4().hex, nx=True, px=max(1, int(seconds * 1000))))

    # ---------------------------------------------------------------- reading deals

    def iter_chunk_bytes(self, job_id: str) -> Iterator[bytes]:
        """The deal-number bytes of a ``done`` job, chunk by chunk (12 bytes a deal).

        Raises :class:`JobNotReady` if the job is not done or a chunk is gone.
        """
        job = self._ready(job_id)
        for i in range(job.chunks):
            yield self._chunk(job, i)

    def iter_deals(self, job_id: str, offset: int = 0, limit: int | None = None) -> Iterator[tuple[np.ndarray, list[int]]]:
        """Deals ``offset .. offset+limit`` of a ``done`` job in order, as the
        ``(owners (k, 52) uint8, deal numbers)`` batches that
        :data:`truedeal.formats.WRITERS` take, one chunk at a time (constant
        memory).  Raises :class:`JobNotReady` if the job is not done (checked
        before the first batch) and JobInputError for a bad offset/limit.
        """
        job = self._ready(job_id)
        for name, v in (("offset", offset), ("limit", limit)):
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise JobInputError(f"{name} must be an integer >= 0, got {v!r}")
        return self._iter_deals(job, offset, limit)

    def _iter_deals(self, job: Job, offset: int, limit: int | None) -> Iterator[tuple[np.ndarray, list[int]]]:
        end = job.n if limit is None else min(job.n, offset + limit)
        if offset >= end:
            return
        for i in range(offset // CHUNK_DEALS, math.ceil(end / CHUNK_DEALS)):
            limbs = bytes_to_limbs(self._chunk(job, i))
            lo = max(offset - i * CHUNK_DEALS, 0)
            hi = min(end - i * CHUNK_DEALS, len(limbs))
            limbs = limbs[lo:hi]
            yield decode_batch(limbs), limbs_to_ints(limbs)

    def _ready(self, job_id: str) -> Job:
        job = self.get(job_id)
        if job.state != DONE:
            why = f": {job.error}" if job.error else ""
            raise JobNotReady(f"job {job_id} is {job.state}{why}; deals can be fetched once it is done")
        return job

    def _chunk(self, job: Job, i: int) -> bytes:
        data = self.r.get(self.chunk_key(job.id, i))
        if data is None:
            raise JobNotReady(f"job {job.id}: chunk {i} of its deals is missing (expired?)")
        if len(data) != 12 * job.chunk_size(i):
            raise JobNotReady(f"job {job.id}: chunk {i} holds {len(data)} bytes, expected {12 * job.chunk_size(i)}")
        return data
