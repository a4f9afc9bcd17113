"""The job store: every Redis call of the job system (keys, the job record's
hash, atomic changes through :mod:`.lua`, deal chunks, worker heartbeats)."""


from __future__ import annotations

import json
import math
import re
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

import redis

from truedeal.formats.rotation import STANDARD, Rotation
from truedeal.randomness import CHUNK_DEALS, DEFAULT_STREAM
from truedeal.summary import CountSummary

from . import lua
from .models import (
    ACTIVE_STATES,
    CANCELLED,
    DONE,
    FAILED,
    FAST_LANE,
    QUEUED,
    Dispatcher,
    Job,
    JobInputError,
    JobNotFound,
    JobNotReady,
    Partial,
    State,
)
from .set_store import SetStore
from .settings import JobSettings, redis_url

# The spec's models and the engine (.submission) are imported by create(), the
# deal numbers' decoding by _iter_deals(): `truedeal status` needs neither.
if TYPE_CHECKING:
    import numpy as np

    from truedeal.spec import Spec

_ID_RE = re.compile(r"^[0-9a-f]{32}$")

def connect(url: str | None = None) -> redis.Redis:
    """A redis-py client (bytes replies) with finite timeouts, so that an
    unreachable server is an error within seconds rather than a hang."""
    return redis.Redis.from_url(
        url or redis_url(),
        socket_connect_timeout=5,
        socket_timeout=60,
        health_check_interval=30,
    )


def _f(raw: bytes | None) -> float | None:
    return None if raw is None or raw == b"" else float(raw)


def _s(raw: bytes | None) -> str | None:
    return None if raw is None else raw.decode()


def _job_from_hash(job_id: str, h: dict[bytes, bytes]) -> Job:
    return Job(
        id=job_id,
        state=State(h[b"state"].decode()),
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
        summary=CountSummary.from_json(json.loads(h[b"summary"])) if h.get(b"summary") else None,
        sliced=h.get(b"sliced") == b"1",
        shard_totals=[int(t) for t in json.loads(h[b"shard_totals"])] if h.get(b"shard_totals") else None,
        run=int(h[b"run"]) if h.get(b"run") else None,
    )


def _iso(t: float | None) -> str | None:
    if t is None:
        return None
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
        self._transition = client.register_script(lua.TRANSITION)
        self._write_partial = client.register_script(lua.WRITE_PARTIAL)
        self._complete_enumeration = client.register_script(lua.COMPLETE_ENUMERATION)
        self._write_chunks = client.register_script(lua.WRITE_CHUNKS)
        self._write_piece = client.register_script(lua.WRITE_PIECE)
        self._finish = client.register_script(lua.FINISH)
        self._sets = SetStore(client, self.settings.prefix)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> JobStore:
        """Store on ``TRUEDEAL_REDIS_URL`` with :meth:`JobSettings.from_env`."""
        return cls(connect(redis_url(env)), JobSettings.from_env(env))

    def set_store(self) -> SetStore:
        """The tournament sets' store on the same Redis and key prefix."""
        return self._sets

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

    def piece_key(self, job_id: str, i: int) -> str:
        return self.key(job_id, f"piece:{i}")

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
        rotation: Rotation = STANDARD,
        stream: str = DEFAULT_STREAM,
    ) -> Job:
        """Validate and record a new ``queued`` job (nothing is queued yet; see
        :func:`submit`); ``lane`` is where its tasks will go (:func:`lane_for`);
        ``rotation`` gives its boards' dealer and vulnerability in every format;
        ``stream`` the seeded stream its deals come from.

        Raises :class:`~truedeal.spec.SpecError` for a bad spec and
        :class:`JobInputError` for bad options
        (:func:`~.submission.check_submission`).
        """
        from truedeal.spec import load_spec

        from .submission import check_submission, partition_count

        spec = load_spec(spec)
        seed, generated = check_submission(n, seed, fmt, first_board, self.settings.max_deals, stream)
        parts = partition_count(spec, self.settings.partitions, stream)
        job_id = uuid.uuid4().hex
        now = time.time()
        record: dict[Any, str] = {  # Any: redis-py's mapping type is invariant in its keys
            "id": job_id,
            "state": QUEUED,
            "spec": spec.canonical_json(),
            "n": str(n),
            "seed": seed,
            "seed_generated": "1" if generated else "0",
            "options": json.dumps({"format": fmt, "first_board": first_board, "lane": lane, "stream": stream,
                                   **dict(zip(("dealer", "vulnerability"), rotation.words()))}),
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
        h = self._hash(self.key(job_id))
        if not h:
            raise JobNotFound(f"unknown job id {job_id!r} (it never existed or has expired)")
        return _job_from_hash(job_id, h)

    def partials(self, job_id: str) -> dict[int, Partial]:
        """Partition ``k`` -> its :class:`Partial`, as written so far."""
        raw = self._hash(self.key(job_id, "partials"))
        return {int(k): Partial.parse(v.decode()) for k, v in raw.items()}

    def has_partial(self, job_id: str, k: int) -> bool:
        return bool(self.r.hexists(self.key(job_id, "partials"), str(k)))

    def partial_count(self, job_id: str) -> int:
        return int(self.r.hlen(self.key(job_id, "partials")))

    def slices(self, job_id: str) -> dict[int, bytes]:
        """Partition ``k`` -> its slice's compact form (:class:`truedeal.listing.slices.Slice`)."""
        return {int(k): v for k, v in self._hash(self.key(job_id, "slices")).items()}

    def done_chunks(self, job_id: str) -> set[int]:
        return {int(x) for x in self.r.smembers(self.key(job_id, "chunks"))}

    def chunks_done(self, job_id: str, indices: Sequence[int]) -> list[bool]:
        """Whether each chunk of ``indices`` is stored, in one round trip."""
        pipe = self.r.pipeline(transaction=False)
        for i in indices:
            pipe.sismember(self.key(job_id, "chunks"), str(i))
        return [bool(x) for x in pipe.execute()]

    def active_jobs(self) -> list[str]:
        """Ids in the active set (jobs that have not ended, and stale entries)."""
        return sorted(raw.decode() for raw in cast(set[bytes], self.r.smembers(self.active_key)))

    def forget_active(self, job_id: str) -> None:
        self.r.srem(self.active_key, job_id)

    def claim(self, job_id: str, what: str, seconds: float) -> bool:
        """``SET <job key>:<what> NX PX``: True if this caller holds the job's ``what`` now."""
        return bool(self.r.set(self.key(job_id, what), "1", nx=True, px=max(1, int(seconds * 1000))))

    def record_requeue(self, job_id: str, rounds: int, now: float) -> None:
        fields: dict[Any, str] = {"requeues": str(rounds), "requeued_at": repr(now)}
        self.r.hset(self.key(job_id), mapping=fields)

    def _hash(self, key: str) -> dict[bytes, bytes]:
        # this client replies bytes (connect() sets no decode_responses); redis-py's types allow str too
        return cast(dict[bytes, bytes], self.r.hgetall(key))

    def status(self, job_id: str) -> dict[str, Any]:
        """JSON-able status: state, progress of both phases, count once known,
        error, timestamps (ISO 8601 UTC), seed and options.

        ``progress.enumeration`` counts partitions; ``progress.drawing``
        counts chunks and deals.  ``count`` is the JSON of the job's :class:`CountSummary` (exact
        ``deals`` as an integer) once the enumeration is reduced, else None.
        """
        job = self.get(job_id)
        pipe = self.r.pipeline(transaction=False)
        pipe.hlen(self.key(job_id, "partials"))
        pipe.scard(self.key(job_id, "chunks"))
        pipe.sismember(self.key(job_id, "chunks"), str(job.chunks - 1))
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
            "stream": job.stream,
            "format": job.options.get("format"),
            "first_board": job.options.get("first_board"),
            **dict(zip(("dealer", "vulnerability"), job.rotation.words())),
            "progress": {
                "enumeration": {"done": int(n_parts), "total": job.parts},
                "drawing": {"done": int(n_chunks), "total": job.chunks, "deals_done": int(deals_done), "deals_total": job.n},
            },
            "count": None if job.summary is None else job.summary.to_json(),
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
        return self.count_attempts(job_id, [item])[0]

    def count_attempts(self, job_id: str, items: list[str]) -> list[int]:
        """:meth:`count_attempt` for each of ``items``, in one round trip."""
        key = self.key(job_id, "attempts")
        pipe = self.r.pipeline(transaction=True)
        for item in items:
            pipe.hincrby(key, item, 1)
        pipe.expire(key, self.settings.ttl)
        return [int(x) for x in pipe.execute()[:-1]]

    def attempts(self, job_id: str) -> dict[str, int]:
        return {k.decode(): int(v) for k, v in self._hash(self.key(job_id, "attempts")).items()}

    def remember_tasks(self, job_id: str, items: Mapping[str, str]) -> None:
        """Remember queued task ids by item (for :meth:`cancel` to revoke)."""
        if not items:
            return
        pipe = self.r.pipeline(transaction=False)
        pipe.hset(self.key(job_id, "tasks"), mapping=dict[Any, str](items))
        pipe.expire(self.key(job_id, "tasks"), self.settings.ttl)
        pipe.execute()

    def task_ids(self, job_id: str) -> list[str]:
        return [v.decode() for v in cast(list[bytes], self.r.hvals(self.key(job_id, "tasks")))]

    def write_partial(self, job_id: str, k: int, partial: Partial, data: bytes = b"") -> int:
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
        return self.write_chunks(job_id, [(i, data)])

    def write_chunks(self, job_id: str, chunks: Sequence[tuple[int, bytes]]) -> int:
        """:meth:`write_chunk` of several chunks ``(i, data)`` at once, in
        one script run (one round trip, and one job check for them all)."""
        args: list[Any] = [self.settings.ttl, repr(time.time())]
        for i, data in chunks:
            args += [i, data]
        keys = [self.key(job_id), self.key(job_id, "chunks"), *(self.chunk_key(job_id, i) for i, _ in chunks)]
        return int(self._write_chunks(keys=keys, args=args))

    def write_piece(self, job_id: str, i: int, k: int, data: bytes) -> int:
        """Store partition ``k``'s piece of chunk ``i`` of a routed job
        (overwriting); returns the number of the chunk's pieces present, 0
        when the chunk is stored already, or -1 if the job no longer draws."""
        return int(self._write_piece(
            keys=[self.key(job_id), self.piece_key(job_id, i), self.key(job_id, "chunks")],
            args=[data, k, self.settings.ttl, repr(time.time()), i],
        ))

    def pieces(self, job_id: str, i: int) -> dict[int, bytes]:
        """Partition -> its stored piece of chunk ``i`` (a routed job)."""
        return {int(k): v for k, v in self._hash(self.piece_key(job_id, i)).items()}

    def pieces_present(self, job_id: str, indices: Sequence[int]) -> list[set[int]]:
        """The partitions whose pieces of each chunk of ``indices`` are stored, in one round trip."""
        pipe = self.r.pipeline(transaction=False)
        for i in indices:
            pipe.hkeys(self.piece_key(job_id, i))
        return [{int(k) for k in keys} for keys in pipe.execute()]

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

    def _end(self, job_id: str, state: State, reason: str, dispatcher: Dispatcher | None) -> bool:
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
        """Delete the chunks and the pieces of chunks (a routed job's) of the job."""
        for lo in range(0, chunks, 1000):
            self.r.delete(*(key for i in range(lo, min(chunks, lo + 1000))
                            for key in (self.chunk_key(job_id, i), self.piece_key(job_id, i))))

    def delete_pieces(self, job_id: str, i: int) -> None:
        self.r.delete(self.piece_key(job_id, i))

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
        from truedeal.dealnumber import bytes_to_limbs, decode_batch, limbs_to_ints

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
        data = cast(bytes | None, self.r.get(self.chunk_key(job.id, i)))
        if data is None:
            raise JobNotReady(f"job {job.id}: chunk {i} of its deals is missing (expired?)")
        if len(data) != 12 * job.chunk_size(i):
            raise JobNotReady(f"job {job.id}: chunk {i} holds {len(data)} bytes, expected {12 * job.chunk_size(i)}")
        return data
