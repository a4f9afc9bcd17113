"""The job system's models: a job's states, its record, what a partition
found, the lanes, the errors, and the dispatcher contract that job logic
queues work through.  The API, the Lua scripts (:mod:`.lua`) and the store
all use these names."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from truedeal.formats.rotation import Rotation
from truedeal.randomness import CHUNK_DEALS, DEFAULT_STREAM
from truedeal.summary import CountSummary


class State(StrEnum):
    """A job's state, in life-cycle order (the values are what Redis holds)."""

    QUEUED = "queued"
    ENUMERATING = "enumerating"
    DRAWING = "drawing"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def final(self) -> bool:
        """A state the job never leaves."""
        return self in FINAL_STATES


QUEUED, ENUMERATING, DRAWING = State.QUEUED, State.ENUMERATING, State.DRAWING
DONE, FAILED, CANCELLED = State.DONE, State.FAILED, State.CANCELLED
#: Every state, in life-cycle order.
STATES: tuple[State, ...] = tuple(State)
#: States a job never leaves.
FINAL_STATES: frozenset[State] = frozenset({DONE, FAILED, CANCELLED})
#: States in which work is still to be done.
ACTIVE_STATES: tuple[State, ...] = (QUEUED, ENUMERATING, DRAWING)


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


#: Lanes: a job whose count took long (or did not finish) before it was queued
#: runs in the slow lane, on its own queue and worker processes, so that it never
#: holds up small jobs (``truedeal worker`` keeps processes for each lane).
FAST_LANE = "fast"
SLOW_LANE = "slow"
#: A build slower than this (seconds) puts a job in the slow lane.
SLOW_BUILD_SECONDS = 1.0


def lane_for(summary: CountSummary | None) -> str:
    """The lane of a job from its spec's count before queueing: the slow lane
    when the count did not finish in time (``None``) or took over
    :data:`SLOW_BUILD_SECONDS` (its workers would build it again)."""
    if summary is None or summary.sizes.build_seconds > SLOW_BUILD_SECONDS:
        return SLOW_LANE
    return FAST_LANE


#: Most chunks that one draw task draws (:func:`run_length`).  Between two
#: tasks a worker process waits ~2 ms for Celery (the ack, the next message)
#: and checks the job (~1 ms): 2.5-3% of a 64-chunk run of an exact plan,
#: under 1% of this one's (~0.5 s).
LONGEST_RUN = 256


def run_length(chunks: int, chunk_seconds: float = 0.0, budget: float = 450.0) -> int:
    """Chunks per draw task for a job of ``chunks`` chunks that take about
    ``chunk_seconds`` each (0: exact, a few ms).  A task costs a worker a few
    ms of Celery and Redis, about what a chunk costs to draw, so a long job's
    tasks draw up to :data:`LONGEST_RUN` chunks; few enough that the job still
    makes >= 32 tasks for the workers to share, and that a task's estimated
    draws stay within ``budget`` seconds (a script checked double dummy)."""
    by_time = int(budget // chunk_seconds) if chunk_seconds > 0 else LONGEST_RUN
    return max(1, min(LONGEST_RUN, chunks // 32, by_time))


def chunk_runs(indices: Sequence[int], longest: int | None = None) -> list[tuple[int, int]]:
    """``indices`` as runs ``(first, count)`` of consecutive chunks, one draw
    task each, of up to ``longest`` chunks (default: :func:`run_length` of
    ``len(indices)``), in ascending order; a few chunks go one by one."""
    longest = longest or run_length(len(indices))
    runs: list[tuple[int, int]] = []
    for i in sorted({int(i) for i in indices}):
        first, count = runs[-1] if runs else (-2, 0)
        if i == first + count and count < longest:
            runs[-1] = (first, count + 1)
        else:
            runs.append((i, 1))
    return runs


@dataclass
class Job:
    """One job record, as read from Redis (read-only snapshot)."""

    id: str
    state: State
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
    summary: CountSummary | None = None
    sliced: bool = False  # its listing is merged from the partitions' slices
    shard_totals: list[int] | None = None  # a routed job's (stream v3): every shard's side total, once reduced
    run: int | None = None  # chunks per draw task, once reduced (None: by the count of chunks sent)

    @property
    def routed(self) -> bool:
        """Whether its partitions draw their own shards' deals (stream v3, once reduced)."""
        return self.shard_totals is not None

    @property
    def final(self) -> bool:
        return self.state in FINAL_STATES

    @property
    def lane(self) -> str:
        """:data:`FAST_LANE` or :data:`SLOW_LANE`: the queue its tasks go to (see :func:`lane_for`)."""
        return str(self.options.get("lane", FAST_LANE))

    @property
    def stream(self) -> str:
        """The seeded stream its deals come from (:data:`truedeal.randomness.STREAMS`; v1 for jobs before v2)."""
        return str(self.options.get("stream", DEFAULT_STREAM))

    @property
    def rotation(self) -> Rotation:
        """The dealer and vulnerability of its boards (the standard cycle unless fixed at submission)."""
        return Rotation.from_words(self.options.get("dealer"), self.options.get("vulnerability"))

    def chunk_size(self, i: int) -> int:
        """Deals in chunk ``i`` (the last chunk may be short)."""
        if not 0 <= i < self.chunks:
            raise ValueError(f"chunk {i} out of range 0..{self.chunks - 1}")
        return min(CHUNK_DEALS, self.n - i * CHUNK_DEALS)

    @property
    def last_activity(self) -> float:
        return max(self.created, self.progress_at or 0.0, self.requeued_at or 0.0)


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
    def parse(cls, text: str) -> Partial:
        if text == "whole":
            return cls(whole=True)
        total, cases, entries = text.split(":")
        return cls(int(total), int(cases), int(entries))


class Dispatcher(Protocol):
    """How job logic queues work; the Celery adapter implements it.

    Each queueing method returns the task ids it queued (for revocation);
    queueing the same work twice must be harmless (every task is idempotent).
    """

    def enumerate_partitions(self, job_id: str, ks: Sequence[int], lane: str = FAST_LANE) -> list[str]:
        """Queue ``enumerate_partition(job_id, k)`` for each ``k`` on ``lane``'s queue."""

    def reduce(self, job_id: str, lane: str = FAST_LANE) -> str:
        """Queue ``reduce(job_id)`` on ``lane``'s queue."""

    def draw_chunks(self, job_id: str, indices: Sequence[int], lane: str = FAST_LANE, longest: int | None = None) -> list[str]:
        """Queue ``draw_chunk`` tasks that draw every chunk ``i`` of ``indices``
        on ``lane``'s queue (runs of consecutive chunks may share a task, up
        to ``longest`` of them when given)."""

    def revoke(self, task_ids: Sequence[str]) -> None:
        """Ask workers to discard these queued tasks (best effort)."""

    def backlog(self) -> int | None:
        """Messages waiting in the task queue, or None if unknown."""
