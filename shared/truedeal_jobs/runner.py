"""The job logic: submit, enumerate partitions, reduce, draw chunks, watchdog."""


from __future__ import annotations

import functools
import gc
import itertools
import json
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from truedeal.cuts import cut_listing, load_slice, merge_slices
from truedeal.dealnumber import encode_batch, limbs_to_bytes
from truedeal.engine import READYING_CHUNKS_TOGETHER, Plan, TooWide, check_count
from truedeal.formats.rotation import STANDARD, Rotation
from truedeal.listing import MAX_ENTRIES
from truedeal.listing.paired_slices import PairedCut, PairedSlice
from truedeal.listing.slices import Cut, Slice, stored_totals
from truedeal.odds import percent_text
from truedeal.randomness import CHUNK_DEALS, DEFAULT_STREAM
from truedeal.resources import resident_bytes
from truedeal.spec import Spec, load_spec
from truedeal.summary import CountSummary, ListingSizes

from . import routed
from .models import DRAWING, ENUMERATING, FAST_LANE, QUEUED, Dispatcher, Job, JobNotFound, Partial, chunk_runs, run_length
from .settings import JobSettings
from .store import JobStore

if TYPE_CHECKING:
    import numpy as np


class JobStopped(Exception):
    """Raised inside a worker loop when the job was cancelled or failed."""


# --------------------------------------------------------------------------- plans


class PlanCache:
    """Built :class:`~truedeal.engine.Plan` objects by canonical spec JSON,
    least recently used first out (one per worker process).

    Bounded by count (``maxsize``) and by memory: once the process holds more
    than ``max_rss`` bytes, every plan but the one just asked for is dropped,
    so a worker that built one huge plan (hundreds of MB) does not also keep
    older ones, and drops the huge one as soon as another spec comes."""

    def __init__(self, maxsize: int = 4, max_rss: int = 512 * 1024 * 1024) -> None:
        self.maxsize = maxsize
        self.max_rss = max_rss
        self._plans: OrderedDict[str, Plan] = OrderedDict()

    def get(self, spec_json: str, progress: Callable[[int, int], None] | None = None,
            build: Callable[[], Plan] | None = None) -> Plan:
        """The plan of ``spec_json``, made on first use by ``build`` (default:
        :meth:`Plan.build_to_count`: a job reports its count, cases included;
        TooWide propagates, and so does whatever ``progress`` raises; neither
        is cached)."""
        plan = self._plans.get(spec_json)
        if plan is not None:
            self._plans.move_to_end(spec_json)
            return plan
        if self._plans and resident_bytes() > self.max_rss:
            self._keep_only(None)  # make room before building
        plan = build() if build is not None else Plan.build_to_count(load_spec(spec_json), progress)
        self._plans[spec_json] = plan
        while len(self._plans) > self.maxsize:
            self._plans.popitem(last=False)
        if len(self._plans) > 1 and resident_bytes() > self.max_rss:
            self._keep_only(spec_json)
        return plan

    def _keep_only(self, spec_json: str | None) -> None:
        keep = self._plans.get(spec_json) if spec_json is not None else None
        self._plans.clear()
        if spec_json is not None and keep is not None:
            self._plans[spec_json] = keep
        gc.collect()  # listings hold reference cycles: give their memory back now

    def __len__(self) -> int:
        return len(self._plans)


# --------------------------------------------------------------------------- job logic


def submit(store: JobStore, dispatcher: Dispatcher, spec: Spec | dict | str, n: int, seed: str | None = None,
           fmt: str = "pbn", first_board: int = 1, lane: str = FAST_LANE, rotation: Rotation = STANDARD,
           stream: str = DEFAULT_STREAM) -> Job:
    """Create a job (see :meth:`JobStore.create` for validation) and queue its
    enumeration partitions on ``lane``.  If queueing fails the job is failed
    with the reason and the error propagates."""
    job = store.create(spec, n, seed, fmt, first_board, lane, rotation, stream)
    try:
        ids = dispatcher.enumerate_partitions(job.id, list(range(job.parts)), lane=job.lane)
    except Exception as exc:
        store.fail(job.id, f"could not queue the job: {type(exc).__name__}: {exc}")
        raise
    store.remember_tasks(job.id, {f"p:{k}": t for k, t in zip(range(job.parts), ids)})
    return store.get(job.id)


def _stopper(store: JobStore, job_id: str, every: float = 0.25) -> Callable[[int, int], None]:
    """A progress callback that raises JobStopped once the job is cancelled or
    failed (reads the flag at most every ``every`` seconds)."""
    last = [0.0]

    def check(_done: int = 0, _total: int = 0) -> None:
        now = time.monotonic()
        if now - last[0] >= every:
            last[0] = now
            if store.stop_requested(job_id):
                raise JobStopped()

    return check


def _limits_reason(job: Job, settings: JobSettings) -> str | None:
    try:
        check_count(job.n)
    except ValueError as exc:
        return str(exc)
    if job.n > settings.max_deals:
        return f"this worker takes at most {settings.max_deals:,} deals per job (TRUEDEAL_MAX_JOB_DEALS), the job asks for {job.n:,}"
    return None


def _plan_or_fail(store: JobStore, dispatcher: Dispatcher | None, job: Job, plans: PlanCache, stop) -> Plan | None:
    build = functools.partial(_merged_plan, store, job) if job.sliced else None
    try:
        plan = plans.get(job.spec_json, stop, build)
    except TooWide as exc:
        store.fail(job.id, f"spec too wide for exact enumeration: {exc}", dispatcher)
        return None
    except ValueError as exc:  # slices that do not merge into the counted listing
        if not job.sliced:
            raise
        store.fail(job.id, f"the job's slices are inconsistent: {exc}", dispatcher)
        return None
    if not plan.possible:
        store.fail(job.id, "no deal satisfies this spec (it counts 0 deals)", dispatcher)
        return None
    return plan


def run_partition(store: JobStore, dispatcher: Dispatcher, job_id: str, k: int, plans: PlanCache) -> str:
    """Enumerate partition ``k`` of the job and record its exact totals.

    Idempotent: a partition already recorded, or a job that ended, is
    skipped; a re-run overwrites its own entry.  The partition that completes
    the set queues :func:`run_reduce`.  Fails the job (readable reason) past
    ``max_attempts`` starts, for a count above this worker's limit, a spec
    too wide to list, or a spec no deal satisfies.  Returns an outcome word
    for logs: ok, duplicate, skipped, stopped, failed.
    """
    job = store.get(job_id)
    if job.final or store.stop_requested(job_id):
        return "skipped"
    if not 0 <= k < job.parts:
        return "skipped"
    if store.has_partial(job_id, k):
        if store.partial_count(job_id) >= job.parts and job.state == ENUMERATING:
            dispatcher.reduce(job_id, lane=job.lane)
        return "duplicate"
    store.transition(job_id, (QUEUED,), ENUMERATING, started=time.time())
    attempts = store.count_attempt(job_id, f"p:{k}")
    if attempts > store.settings.max_attempts:
        store.fail(job_id, f"enumeration partition {k} was started {attempts - 1} times without finishing "
                           "(its worker crashed, was killed or timed out each time)", dispatcher)
        return "failed"
    reason = _limits_reason(job, store.settings)
    if reason:
        store.fail(job_id, reason, dispatcher)
        return "failed"
    try:
        stop = _stopper(store, job_id)
        piece = routed.partition_totals(job, k, stop) if job.stream == "v3" else _slice_of(job, k, stop)
    except JobStopped:
        return "stopped"
    if piece is None:
        present = store.write_partial(job_id, k, Partial(whole=True))
    else:
        present = store.write_partial(job_id, k, Partial(piece.total, piece.cases, piece.entries), piece.to_bytes())
    if present < 0:
        return "stopped"
    if present >= job.parts:
        dispatcher.reduce(job_id, lane=job.lane)
    return "ok"


def _slice_of(job: Job, k: int, stop) -> Slice | PairedSlice | None:
    """Slice ``k`` of the job's listing, or None when its plan is not one
    listing that can be cut (the reduce then builds it whole)."""
    cut = _cut(job.spec_json, job.parts)
    try:
        return None if cut is None else cut.build(k, stop)
    except TooWide:
        return None


@functools.lru_cache(maxsize=2)
def _cut(spec_json: str, parts: int) -> Cut | PairedCut | None:
    """The cells (or groups) of a job's listing and their slices (None: not
    one listing that can be cut), kept for the job's other slices on this worker."""
    return cut_listing(load_spec(spec_json), parts)


def _merged_plan(store: JobStore, job: Job) -> Plan:
    """The job's plan from its slices in Redis: the plan Plan.build makes."""
    spec = load_spec(job.spec_json)
    t0 = time.perf_counter()
    stored = store.slices(job.id)
    if len(stored) < job.parts:  # gone (expired, Redis restarted): the same plan, built here
        return Plan.build(spec)
    slices = [load_slice(b) for b in stored.values()]
    # A paired merge starts from the cut's prepared tables (this process's, or
    # built now: the merge needs them anyway); a factored one rebuilds its
    # tables from the cells, so its cut goes first (the merged listing is the peak).
    cut = _cut(job.spec_json, job.parts) if all(isinstance(s, PairedSlice) for s in slices) else None
    _cut.cache_clear()
    plan = Plan.from_listing(spec, merge_slices(spec, slices, cut), time.perf_counter() - t0)
    recorded = None if job.summary is None else job.summary.sizes.side_total
    if recorded is not None and plan.listing.total != recorded:
        raise ValueError(f"the merged slices give side total {plan.listing.total}, the reduce recorded {recorded}")
    return plan


def run_reduce(store: JobStore, dispatcher: Dispatcher, job_id: str, plans: PlanCache) -> str:
    """Merge the partitions' totals and start the draws (idempotent).

    A job listed in slices gets its count from the partials alone (Python
    ints, exact; the cumulative slice totals are stored as decimal strings)
    and draws from the merged slices; otherwise this task builds the plan in
    one piece, as ``truedeal generate`` does.  Only the call
    that wins the guard (``state == enumerating`` and ``SET :reduced NX``,
    atomically) stores the count -- ``summary`` JSON plus ``deals``,
    ``probability``, ``cases`` fields -- and queues every chunk.  Returns
    ok, waiting, skipped, stopped or failed.
    """
    job = store.get(job_id)
    if job.state != ENUMERATING:
        return "skipped"
    partials = store.partials(job_id)
    if len(partials) < job.parts:
        return "waiting"
    bad = _mismatched_slices(store, job, partials)
    if bad:
        store.fail(job_id, f"partition totals do not add up: partitions {bad} disagree with their stored slices", dispatcher)
        return "failed"
    try:
        fields = _routed_fields(store, job, partials) if job.stream == "v3" else _sliced_fields(job, partials)
        if fields is None:
            fields = _whole_fields(store, dispatcher, job, plans)
    except JobStopped:
        return "stopped"
    except ValueError as exc:  # a routed job's partitions that are not one complete set
        store.fail(job_id, f"the job's partitions are inconsistent: {exc}", dispatcher)
        return "failed"
    if fields is None:
        return "failed"
    if fields.get("deals") == "0":
        store.fail(job_id, "no deal satisfies this spec (it counts 0 deals)", dispatcher)
        return "failed"
    if not store.complete_enumeration(job_id, fields):
        return "skipped"
    job = store.get(job_id)
    for k in range(job.parts if job.routed else 1):
        for lo in range(0, job.chunks, 500):
            if store.stop_requested(job_id):
                return "stopped"
            idx = list(range(lo, min(job.chunks, lo + 500)))
            _queue_draws(store, dispatcher, job, routed.partition_items(job, k, idx) if job.routed else idx)
    return "ok"


def _queue_draws(store: JobStore, dispatcher: Dispatcher, job: Job, items: list[int]) -> list[str]:
    """Queue draw tasks for ``items`` (chunks, or a routed job's pieces, one
    partition's in long runs); returns their labels."""
    ids = dispatcher.draw_chunks(job.id, items, lane=job.lane, longest=routed.ROUTED_RUN if job.routed else job.run)
    store.remember_tasks(job.id, {f"c:{i}": t for i, t in zip(items, ids)})
    return [f"c:{i}" for i in items]


def _mismatched_slices(store: JobStore, job: Job, partials: dict[int, Partial]) -> list[int]:
    """Partitions whose recorded totals differ from their stored slice's."""
    stored = store.slices(job.id)
    return [k for k, p in sorted(partials.items())
            if not p.whole and (k not in stored or stored_totals(stored[k]) != (p.total, p.cases, p.entries))]


def _sliced_fields(job: Job, partials: dict[int, Partial]) -> dict[str, str] | None:
    """The count of a job listed in slices, merged from their exact totals
    alone (Python ints; nothing is listed here); None when the job must be
    built whole (a partition said so, or the entries add up past the limit)."""
    found = [partials[k] for k in sorted(partials)]
    if any(p.whole for p in found) or sum(p.entries for p in found) > MAX_ENTRIES:
        return None
    cut = _cut(job.spec_json, job.parts)
    if cut is None:  # cannot happen when every partition listed a slice
        return None
    total, cases, free = sum(p.total for p in found), sum(p.cases for p in found), cut.layout.free_ways()
    sizes = ListingSizes(total, free, len(cut.cells), sum(p.entries for p in found), 0.0)
    summary = CountSummary.exact(total * free, cases, sizes, slices=len(found))
    cumulative = list(itertools.accumulate(p.total for p in found))
    return {**_count_fields(summary), "sliced": "1", "slice_totals": json.dumps([str(c) for c in cumulative]),
            "run": str(run_length(job.chunks))}


def _routed_fields(store: JobStore, job: Job, partials: dict[int, Partial]) -> dict[str, str] | None:
    """The count of a routed job and its shards' totals, from the partitions'
    stored totals alone; None when the job must be built whole (a partition
    said so, or the shards' entries add up past the limit, where
    ``truedeal generate --stream v3`` does not route the listing either)."""
    if any(p.whole for p in partials.values()) or sum(p.entries for p in partials.values()) > MAX_ENTRIES:
        return None
    summary, totals = routed.count(job, store.slices(job.id))
    return {**_count_fields(summary), "shard_totals": json.dumps([str(t) for t in totals])}


def _whole_fields(store: JobStore, dispatcher: Dispatcher, job: Job, plans: PlanCache) -> dict[str, str] | None:
    """The count of a job whose plan is built in one piece, here (None: failed)."""
    plan = _plan_or_fail(store, dispatcher, job, plans, _stopper(store, job.id))
    if plan is None:
        return None
    reason = _too_slow_reason(plan, job, store.settings)
    if reason:
        store.fail(job.id, reason, dispatcher)
        return None
    run = run_length(job.chunks, plan.rejection_seconds(CHUNK_DEALS), store.settings.task_seconds / 4)
    return {**_count_fields(plan.summary()), "run": str(run)}


def _too_slow_reason(plan: Plan, job: Job, settings: JobSettings) -> str | None:
    """Why the job's chunk tasks would pass the task time limit (None: they
    would not).  Only a script's double-dummy checks, or a rare plan's
    rejection, come near it; failing here says so at once, instead of after
    ``max_attempts`` killed tasks.
    Half the limit leaves room for the pilot's error and a loaded machine."""
    size, budget = min(job.n, CHUNK_DEALS), settings.task_seconds / 2
    seconds = plan.rejection_seconds(size)
    if seconds <= budget:
        return None
    fits = int(size * budget / seconds)
    return (f"a chunk of {size:,} deals would take about {seconds:,.0f} s: the plan keeps "
            f"{percent_text(plan.acceptance or 0.0)} of listed deals and draws and checks each in "
            f"{(plan.draw_seconds + plan.check_seconds) * 1000:.2g} ms, "
            f"and a task may take {settings.task_seconds:,} s (half of TRUEDEAL_VISIBILITY_TIMEOUT); "
            + (f"ask for at most {fits:,} deals" if fits else "nothing fits") + ", or use `truedeal generate`")


def _count_fields(summary: CountSummary) -> dict[str, str]:
    return {
        "summary": json.dumps(summary.to_json()),
        "side_total": str(summary.sizes.side_total),
        "cases": "" if summary.cases is None else str(summary.cases),
        "deals": "" if summary.deals is None else str(summary.deals),
        "probability": repr(summary.probability),
        "progress_at": repr(time.time()),
    }


def draw_chunk_bytes(plan: Plan, seed: str, i: int, size: int, stream: str = DEFAULT_STREAM) -> bytes:
    """Chunk ``i`` of the seeded ``stream`` as 12-byte deal numbers: the same
    deals as ``plan.numbered_deals(n, seed, stream)`` yields for that chunk
    (by rejection, a short last chunk stops drawing once it has ``size``: a
    small job of a double-dummy script takes seconds, not the minutes of
    4,096 deals)."""
    return limbs_to_bytes(plan.numbered_chunk(i, seed, size, stream, cards=False)[1])


def run_chunk(store: JobStore, dispatcher: Dispatcher, job_id: str, i: int, plans: PlanCache) -> str:
    """Draw chunk ``i`` and store it; the chunk that completes the job moves
    it to ``done``.  Idempotent (a chunk already stored is skipped; a re-run
    writes the same bytes).  Returns ok, duplicate, skipped, stopped or failed.
    """
    return run_chunks(store, dispatcher, job_id, i, 1, plans)


def run_chunks(store: JobStore, dispatcher: Dispatcher, job_id: str, first: int, count: int, plans: PlanCache,
               encode_behind: bool = True) -> str:
    """:func:`run_chunk` for chunks ``first .. first + count - 1`` in turn (one
    task's run), the job checked and its plan fetched once, until a chunk does
    not end ``ok``; returns the last outcome (``duplicate`` when the whole
    run was stored already).  Each chunk is
    stored, counted and idempotent on its own.  ``encode_behind``: see
    :func:`_draw_and_store`."""
    job = store.get(job_id)
    if job.routed:
        return _run_pieces(store, dispatcher, job, first, count, plans)
    if job.state != DRAWING or not 0 <= first < job.chunks:
        return "skipped"
    run = range(first, min(first + max(count, 1), job.chunks))
    todo = [i for i, done in zip(run, store.chunks_done(job_id, run)) if not done]
    if not todo:  # a re-delivered run: no plan needed
        store.finish(job_id)
        return "duplicate"
    if store.stop_requested(job_id):
        return "stopped"
    try:
        plan = _plan_or_fail(store, dispatcher, job, plans, _stopper(store, job_id))
    except JobStopped:
        return "stopped"
    if plan is None:
        return "failed"
    return _draw_and_store(store, dispatcher, job, plan, todo, encode_behind)


def _run_pieces(store: JobStore, dispatcher: Dispatcher, job: Job, first: int, count: int, plans: PlanCache) -> str:
    """:func:`run_chunks` for a routed job: items ``first ..`` are partition
    ``k``'s pieces of a run of chunks (see :mod:`.routed`)."""
    if job.state != DRAWING or not 0 <= first < job.parts * job.chunks:
        return "skipped"
    k, lo = routed.item_of(job, first)
    run = list(range(lo, min(lo + max(count, 1), job.chunks)))  # a run never leaves its partition
    state = list(zip(run, store.chunks_done(job.id, run), store.pieces_present(job.id, run)))
    todo = [i for i, done, have in state if not done and k not in have]
    if not todo:
        for i, done, have in state:  # a re-delivered run: finish what its first delivery may have left
            if not done and len(have) >= job.parts:
                _assemble(store, job, i)
        store.finish(job.id)
        return "duplicate"
    if store.stop_requested(job.id):
        return "stopped"
    stop = _stopper(store, job.id)
    try:
        plan = plans.get(f"{job.spec_json}\0v3 {k}/{job.parts}", stop, functools.partial(routed.partition_plan, job, k, stop))
    except JobStopped:
        return "stopped"
    return _draw_pieces(store, dispatcher, job, plan, k, todo)


def _draw_pieces(store: JobStore, dispatcher: Dispatcher, job: Job, plan: Plan, k: int, todo: list[int]) -> str:
    """Partition ``k``'s pieces of the chunks ``todo``; the piece that
    completes a chunk puts it together (:func:`_assemble`)."""
    items = routed.partition_items(job, k, todo)
    over = [(i, a) for i, a in zip(items, store.count_attempts(job.id, [f"c:{i}" for i in items]))
            if a > store.settings.max_attempts]
    if over:
        store.fail(job.id, f"partition {k}'s draw of chunk {routed.item_of(job, over[0][0])[1]} started "
                           f"{over[0][1] - 1} times without finishing (its worker crashed, was killed or timed out "
                           "each time)", dispatcher)
        return "failed"
    for i in todo:
        present = store.write_piece(job.id, i, k, routed.piece(plan, job, k, i))
        if present < 0:
            return "stopped"
        if present >= job.parts and (outcome := _assemble(store, job, i)) != "ok":
            return outcome
    return "ok"


def _assemble(store: JobStore, job: Job, i: int) -> str:
    """Chunk ``i`` of a routed job from all its pieces, stored as any chunk
    (idempotent: two pieces that both see the set complete store the same bytes)."""
    pieces = store.pieces(job.id, i)
    if len(pieces) < job.parts:
        return "ok"  # put together already (and its pieces deleted)
    outcome = _stored(store, job, store.write_chunk(job.id, i, routed.assemble(job, i, pieces)))
    store.delete_pieces(job.id, i)
    return outcome


#: Chunk writes a run may have queued before it waits for the oldest: a
#: little slack for when the writer thread or Redis waits for a core (on a
#: busy 2-core machine, the draws waited 1.0-1.4% of the time with 4, 1.7-3.1% with 2).
WRITES_IN_FLIGHT = 4
#: Chunks of a run drawn in one call (:meth:`~truedeal.engine.Plan.numbered_chunks`)
#: by a plan that draws them together (four.json's job run: 0.95 -> 1.13M deals/s).
DRAWN_TOGETHER = 32
#: Chunks stored in one write (one Redis round trip and script run): a write
#: costs the writer thread ~0.2-0.4 ms of Python whatever its size, against
#: ~3 ms to draw a chunk (Redis CPU per 20M deals: 1.4-1.65 -> 1.2-1.3 s).
WRITTEN_TOGETHER = 4


def _groups(todo: list, size: int) -> list[list]:
    """``todo`` in groups of ``size`` (the last one may be shorter)."""
    return [todo[k : k + size] for k in range(0, len(todo), size)]


def _write_chunks(store: JobStore, job_id: str, drawn: list[tuple[int, np.ndarray]], cards: bool) -> int:
    """:meth:`JobStore.write_chunks` of the chunks ``(i, drawn)``, encoded
    here (in the writer thread, off the drawing thread: the kernel lets the GIL go)."""
    return store.write_chunks(job_id, _encoded(drawn, cards))


def _encoded(drawn: list[tuple[int, np.ndarray]], cards: bool) -> list[tuple[int, bytes]]:
    """The chunks ``(i, drawn)`` as ``(i, their deal numbers' bytes)``:
    ``drawn`` their deals (``cards``), numbered here, or their numbers' limbs."""
    return [(i, limbs_to_bytes(encode_batch(x) if cards else x)) for i, x in drawn]


def _draw_and_store(store: JobStore, dispatcher: Dispatcher, job: Job, plan: Plan, todo: list[int],
                    encode_behind: bool = True) -> str:
    """The chunks ``todo`` of :func:`run_chunks`, not stored when the run was
    checked.  Their starts are counted first, in one round trip (a run that
    kills its worker counts a start for each of its chunks).  They are drawn
    in groups (a paired listing draws a group's chunks together) and handed,
    :data:`WRITTEN_TOGETHER` at a time, to a helper thread that stores them
    while the next ones are drawn: the draw does not wait for Redis (a job on
    one worker: 0.79x the engine's rate when each write was waited for).
    With ``encode_behind`` the helper also numbers and encodes them: right
    when the process has a core to spare, not when every core draws (the two
    threads then take turns at the GIL; two workers on 2 cores, 20M deals of
    strong-nt: 3.26-3.44M deals/s encoding behind, 3.41-3.49M encoding here;
    one worker on one core: 2.01M/s storing behind, 1.90M/s storing in turn).
    (Should another worker store a chunk meanwhile, this one writes the same
    bytes again: harmless.)"""
    attempts = store.count_attempts(job.id, [f"c:{i}" for i in todo])
    over = [(i, a) for i, a in zip(todo, attempts) if a > store.settings.max_attempts]
    if over:
        where = f"chunk {todo[0]}" if len(todo) == 1 else f"chunks {todo[0]}-{todo[-1]}"
        store.fail(job.id, f"draw {where} started {over[0][1] - 1} times without finishing (its worker "
                           "crashed, was killed or timed out each time)", dispatcher)
        return "failed"
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="chunk-writer") as writer:
        pending: deque[Future[int]] = deque()
        cards = plan.deals_chunks(job.stream)
        together = DRAWN_TOGETHER if plan.draws_together else WRITTEN_TOGETHER
        for group in _groups(todo, READYING_CHUNKS_TOGETHER if plan.readies_again else together):
            wanted = [(i, job.chunk_size(i)) for i in group]
            drawn = list(zip(group, plan.chunks(wanted, job.seed) if cards else [
                limbs for _, limbs in plan.numbered_chunks(wanted, job.seed, job.stream, cards=False)]))
            while len(pending) >= WRITES_IN_FLIGHT:  # the last groups' writes, done while this one was drawn
                if (outcome := _stored(store, job, pending.popleft().result())) != "ok":
                    return outcome
            pending.extend(writer.submit(_write_chunks, store, job.id, part, cards) if encode_behind
                           else writer.submit(store.write_chunks, job.id, _encoded(part, cards))
                           for part in _groups(drawn, WRITTEN_TOGETHER))
        while pending:
            if (outcome := _stored(store, job, pending.popleft().result())) != "ok":
                return outcome
        return "ok"


def _stored(store: JobStore, job: Job, done: int) -> str:
    """What a chunk's write says: the job ended (stopped), or ok; the write
    that completes the set moves the job to done."""
    if done < 0:
        return "stopped"
    if done >= job.chunks:
        store.finish(job.id)
    return "ok"


@dataclass
class WatchdogReport:
    """What one :func:`watchdog_scan` did (for logs and tests)."""

    scanned: int = 0
    requeued: dict[str, list[str]] = field(default_factory=dict)  # job id -> items
    failed: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # gone or ended, left the active set


#: One re-queue per job per this many seconds after an outage, however many workers saw Redis come back.
OUTAGE_LOCK_SECONDS = 10.0


def watchdog_scan(store: JobStore, dispatcher: Dispatcher, now: float | None = None,
                  after_outage: bool = False) -> WatchdogReport:
    """Re-queue the missing work of active jobs with no progress for
    ``settings.stale_after`` seconds -- or, ``after_outage`` (the workers
    just saw Redis come back), of every active job at once: a message that
    was delivered, or a retry that was to be published, while Redis was down
    may be lost, and the job must not wait ``stale_after`` for it.

    For such a job (at most once per ``stale_after``, under the lock
    ``job:{id}:watchdog``): ``requeue_batch`` tasks' worth of its lowest
    missing work -- partitions (or the reduce step, when none is missing)
    while enumerating; runs of the job's run length of chunks, or of
    :data:`routed.ROUTED_RUN` pieces (or the final move to done) while drawing.  Consecutive
    rounds without progress are counted while the task queue is empty; past
    ``max_requeues`` the job fails with a reason.  Safe to run concurrently
    and repeatedly: queued work is idempotent.
    """
    now = time.time() if now is None else now
    st = store.settings
    report = WatchdogReport()
    backlog: int | None | bool = False  # not asked yet
    for job_id in store.active_jobs():
        report.scanned += 1
        try:
            job = store.get(job_id)
        except JobNotFound:
            store.forget_active(job_id)
            report.dropped.append(job_id)
            continue
        if job.final:
            store.forget_active(job_id)
            report.dropped.append(job_id)
            continue
        if not after_outage and now - job.last_activity < st.stale_after:
            continue
        lock, hold = ("outage", OUTAGE_LOCK_SECONDS) if after_outage else ("watchdog", st.stale_after)
        if not store.claim(job_id, lock, hold):
            continue
        if not after_outage:  # an outage's re-queue is not a round without progress
            if backlog is False:
                try:
                    backlog = dispatcher.backlog()
                except Exception:
                    backlog = None
            progressed = job.requeued_at is None or (job.progress_at or 0.0) > job.requeued_at
            rounds = 1 if progressed else job.requeues + (0 if backlog else 1)
            if rounds > st.max_requeues:
                quiet = now - max(job.progress_at or job.created, job.created)
                store.fail(job_id, f"no progress for {quiet:.0f} s although its missing work was re-queued {rounds - 1} times "
                                   "(no worker running, or workers keep failing)", dispatcher)
                report.failed.append(job_id)
                continue
            store.record_requeue(job_id, rounds, now)
        items: list[str] = []
        if job.state in (QUEUED, ENUMERATING):
            items = _requeue(store, job_id, "p", job.parts, set(store.partials(job_id)), st.requeue_batch, 1,
                             functools.partial(dispatcher.enumerate_partitions, lane=job.lane))
            if not items:  # every partition is in: the reduce went missing
                dispatcher.reduce(job_id, lane=job.lane)
                items = ["reduce"]
        elif job.state == DRAWING and job.routed:
            items = _requeue_pieces(store, dispatcher, job, st.requeue_batch)
            if not items:  # every chunk is in: finishing went missing
                store.finish(job_id)
                items = ["finish"]
        elif job.state == DRAWING:
            run = job.run or 1
            items = _requeue(store, job_id, "c", job.chunks, store.done_chunks(job_id), st.requeue_batch, run,
                             functools.partial(dispatcher.draw_chunks, lane=job.lane, longest=run))
            if not items:  # every chunk is in: finishing went missing
                store.finish(job_id)
                items = ["finish"]
        report.requeued[job_id] = items
    return report


def _requeue(store: JobStore, job_id: str, tag: str, total: int, have: set[int], batch: int, run: int,
             send: Callable[[str, list[int]], list[str]]) -> list[str]:
    """Re-queue the first ``batch`` tasks' worth of items 0..total-1 missing
    from ``have`` (partitions ``p:k``, or chunks ``c:i`` in runs of up to
    ``run``); returns their labels ([] if none)."""
    missing = _run_items(_first_runs((i for i in range(total) if i not in have), run, batch))
    if not missing:
        return []
    ids = send(job_id, missing)
    store.remember_tasks(job_id, {f"{tag}:{i}": t for i, t in zip(missing, ids)})
    return [f"{tag}:{i}" for i in missing]


def _first_runs(items: Iterable[int], run: int, most: int) -> list[tuple[int, int]]:
    """The first ``most`` runs ``(first, count)`` of up to ``run`` consecutive ascending ``items``.

    The watchdog counts its re-sends in tasks, not items: a dead worker loses
    whole runs, and re-sending them a few items a round would cost a stale
    period per few items."""
    return chunk_runs(list(itertools.islice(items, most * run)), run)[:most]


def _run_items(runs: list[tuple[int, int]]) -> list[int]:
    return [i for first, count in runs for i in range(first, first + count)]


def _requeue_pieces(store: JobStore, dispatcher: Dispatcher, job: Job, batch: int) -> list[str]:
    """Re-queue the first ``batch`` runs of missing pieces of a routed job's
    chunks (a chunk whose pieces are all in is put together here); returns their labels."""
    done = store.done_chunks(job.id)
    missing: dict[int, list[int]] = {}
    for lo in range(0, job.chunks, 1000):
        todo = [i for i in range(lo, min(job.chunks, lo + 1000)) if i not in done]
        for i, have in zip(todo, store.pieces_present(job.id, todo)):
            if len(have) >= job.parts:
                _assemble(store, job, i)
            for k in sorted(set(range(job.parts)) - have):
                missing.setdefault(k, []).append(i)
        if sum(map(len, missing.values())) >= batch * routed.ROUTED_RUN:
            break
    labels: list[str] = []
    for k in sorted(missing):
        runs = _first_runs(missing[k], routed.ROUTED_RUN, batch)
        batch -= len(runs)
        if runs:
            labels += _queue_draws(store, dispatcher, job, routed.partition_items(job, k, _run_items(runs)))
    return labels
