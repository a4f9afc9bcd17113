"""Routed jobs (stream v3): each partition draws its own shards' deals.

A routed job's partition ``k`` builds the shards
:func:`truedeal.shards.shards_of_part` gives it, and stores their side
totals (:class:`~truedeal.shards.ShardTotals`); the reduce adds them up and
stores all 16 (``shard_totals``).  Drawing goes by partition: a task draws
partition ``k``'s part of a run of chunks -- the deals of each chunk whose
shard is one of its own, which the chunk's stream and the totals alone
decide -- and stores it as piece ``(i, k)``.  The piece that completes chunk
``i`` puts the chunk together and stores it as any chunk is stored; so no
process ever holds the whole listing, and the deals are the ones
``truedeal generate --stream v3`` prints, whatever the number of partitions
or workers.

A draw task's items are ``k * chunks + i`` (partition ``k``, chunk ``i``): a
partition's items are consecutive, and are queued in runs of up to
:data:`ROUTED_RUN` chunks, so that a worker builds a partition's shards once
for many chunks.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

from truedeal.dealnumber import limbs_to_bytes
from truedeal.engine import Plan, TooWide
from truedeal.listing.paired_slices import PairedCut
from truedeal.listing.slices import Cut
from truedeal.routing import chunk_shards
from truedeal.shards import ShardPart, ShardTotals, all_totals, build_part, shard_cut, shards_of_part
from truedeal.spec import load_spec
from truedeal.summary import CountSummary, ListingSizes

from .models import Job

#: Most chunks of one partition that one draw task draws.
ROUTED_RUN = 256
#: Bytes of one deal number in a chunk.
RECORD = 12
#: Shard parts kept in this process from its enumeration for its draws (by spec, partition, partitions).
_KEPT = 1
_built: OrderedDict[tuple[str, int, int], ShardPart] = OrderedDict()


def partition_totals(job: Job, k: int, stop: Callable[[int, int], None] | None = None) -> ShardTotals | None:
    """Build partition ``k``'s shards (kept here for its draws) and return
    their totals; None when the job's plan cannot be routed (too wide, or
    not one listing that can be cut: the reduce then builds it whole).
    ``stop`` is called as the build goes (what it raises propagates)."""
    try:
        part = _part(job, k, stop=stop)
    except TooWide:
        return None
    return None if part is None else ShardTotals.of(part, k, job.parts)


def count(job: Job, stored: dict[int, bytes]) -> tuple[CountSummary, list[int]]:
    """The job's exact count and every shard's total, from its partitions'
    stored totals alone (ValueError when they are not one complete set)."""
    found = [ShardTotals.from_bytes(stored[k]) for k in sorted(stored)]
    totals = all_totals(found)
    total, free = sum(totals), found[0].free_ways
    sizes = ListingSizes(total, free, found[0].cells, sum(p.entries for p in found), 0.0)
    return CountSummary.exact(total * free, sum(p.cases for p in found), sizes, slices=len(found)), totals


def partition_items(job: Job, k: int, chunks: list[int] | None = None) -> list[int]:
    """The draw items of partition ``k`` (for ``chunks``, default all)."""
    return [k * job.chunks + i for i in (range(job.chunks) if chunks is None else chunks)]


def item_of(job: Job, item: int) -> tuple[int, int]:
    """(partition, chunk) of a draw item."""
    return divmod(item, job.chunks)


def partition_plan(job: Job, k: int, stop: Callable[[int, int], None] | None = None) -> Plan:
    """Partition ``k``'s plan: its shards (from this process's enumeration,
    or built now, calling ``stop`` as it goes) with every shard's total; it
    draws their parts of chunks."""
    part = _built.pop((job.spec_json, k, job.parts), None) or _part(job, k, False, stop)  # the plan keeps it now
    if part is None or job.shard_totals is None:
        raise ValueError("this job's plan is not routed")
    spec = load_spec(job.spec_json)
    return Plan.from_listing(spec, part.routed(job.shard_totals))  # type: ignore[arg-type]


def piece(plan: Plan, job: Job, k: int, i: int) -> bytes:
    """Partition ``k``'s piece of chunk ``i``: its deals' numbers, in row order."""
    return limbs_to_bytes(plan.numbered_part(i, job.seed, job.chunk_size(i), shards_of_part(k, job.parts))[1])


def assemble(job: Job, i: int, pieces: dict[int, bytes]) -> bytes:
    """Chunk ``i`` from all its pieces (ValueError when one does not fit its rows)."""
    assert job.shard_totals is not None
    out = np.zeros((job.chunk_size(i), RECORD), np.uint8)
    shard = chunk_shards(job.shard_totals, job.seed, i, job.chunk_size(i))
    for k in range(job.parts):
        rows = np.nonzero(np.isin(shard, shards_of_part(k, job.parts)))[0]
        data = np.frombuffer(pieces[k], np.uint8)
        if len(data) != RECORD * len(rows):
            raise ValueError(f"piece {k} of chunk {i} holds {len(data) // RECORD} deals, its rows {len(rows)}")
        out[rows] = data.reshape(-1, RECORD)
    return out.tobytes()


def _part(job: Job, k: int, keep: bool = True, stop: Callable[[int, int], None] | None = None) -> ShardPart | None:
    key = (job.spec_json, k, job.parts)
    if key in _built:
        _built.move_to_end(key)
        return _built[key]
    part = build_part(load_spec(job.spec_json), shards_of_part(k, job.parts), _cut(job.spec_json), stop)
    if part is not None and keep:
        _built[key] = part
        while len(_built) > _KEPT:
            _built.popitem(last=False)
    return part


@functools.lru_cache(maxsize=1)
def _cut(spec_json: str) -> Cut | PairedCut | None:
    """A job's shard cut, kept for its other partitions in this process (the
    cells, options and frame: seconds for a wide spec, the same for every partition)."""
    return shard_cut(load_spec(spec_json))
