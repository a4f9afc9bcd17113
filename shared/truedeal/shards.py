"""A listing in :data:`SHARDS` fixed shards: what stream v3 draws through.

The shards are the slices of :func:`truedeal.cuts.cut_listing` with
``parts = SHARDS``: whole cells (the factored listing) or whole groups (the
paired listing), fixed by the spec alone.  Each shard is a listing of its own
that draws exactly its own deals, so the shards' totals add up to the whole
listing's, and a process that holds some shards draws their deals without the
others (:mod:`truedeal.routing`).  A job's partition is a union of shards
(:func:`shards_of_part`), so its deals do not depend on the number of
partitions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from .constraints import ir
from .listing import Listing, TooWide, count_cases
from .listing.build import list_cells
from .listing.layout import MAX_ENTRIES, Layout
from .listing.paired import PairedListing, Prepared, VectorWeights
from .listing.paired_slices import PairedCut
from .listing.slices import Cut, pack_slice, stored_totals, unpack_slice
from .spec import Spec

#: Shards of a routed listing.  Changing it changes every v3 stream.
SHARDS = 16
#: The compact form of a partition's shard totals.
FORMAT = "truedeal-shards/1"


@dataclass
class ShardPart:
    """The shards of one listing built in this process.

    ``shards[k]`` is shard ``k``'s listing where it holds a deal; ``built``
    is every shard built here, empty ones included, and ``own`` their side
    totals."""

    layout: Layout
    cells: np.ndarray  # the whole listing's cells
    shards: dict[int, Listing | PairedListing] = field(repr=False)
    built: tuple[int, ...]
    _parts: dict[int, Prepared] = field(repr=False, default_factory=dict)  # paired: what each shard was weighed from

    @property
    def own(self) -> dict[int, int]:
        return {k: self.shards[k].total if k in self.shards else 0 for k in self.built}

    @property
    def entries(self) -> int:
        """Level-0 entries of the shards built here."""
        return sum(len(s.e_weight) for s in self.shards.values())

    def cases(self) -> int:
        """Pavlicek's cases of the shards built here (counted once asked: drawing does not need them)."""
        if self._parts:
            return sum(p.cases() for p in self._parts.values())
        return sum(count_cases(s) for s in self.shards.values() if isinstance(s, Listing))

    def routed(self, totals: list[int] | None = None) -> ShardedListing:
        """These shards with every shard's side total (``totals``; None when all were built here)."""
        own = self.own
        if totals is None:
            if len(own) != SHARDS:
                raise ValueError("give every shard's total when only some shards were built")
            totals = [own[k] for k in range(SHARDS)]
        if len(totals) != SHARDS or any(totals[k] != t for k, t in own.items()):
            raise ValueError("the shards' totals differ from the ones given")
        return ShardedListing(self, list(totals))


@dataclass
class ShardedListing:
    """A :class:`ShardPart` and every shard's side total: what the draws of
    stream v3 read (:class:`~truedeal.routing.RoutedSampler`)."""

    part: ShardPart
    totals: list[int]

    @property
    def layout(self) -> Layout:
        return self.part.layout

    @property
    def cells(self) -> np.ndarray:
        return self.part.cells

    @property
    def shards(self) -> dict[int, Listing | PairedListing]:
        return self.part.shards

    @property
    def total(self) -> int:
        return sum(self.totals)

    @property
    def deals(self) -> int:
        return self.total * self.layout.free_ways()

    @property
    def e_weight(self) -> list[int]:
        """The built shards' level-0 weights, shard after shard."""
        return [w for k in sorted(self.shards) for w in self.shards[k].e_weight]

    @property
    def cases(self) -> int:
        """Pavlicek's cases of the whole listing (every shard must be here)."""
        if len(self.part.built) != SHARDS:
            raise ValueError("the cases of a listing need all its shards")
        return self.part.cases()

    def make_sampler(self):
        from .routing import RoutedSampler

        return RoutedSampler(self)


def shard_cut(spec: Spec | ir.Program) -> Cut | PairedCut | None:
    """The cut of ``spec``'s listing into its shards (None: it cannot be cut);
    keep it to build several parts of one listing."""
    from .cuts import cut_listing  # cuts reads the engine, which reads this module lazily

    return cut_listing(spec, SHARDS)


def build_part(spec: Spec | ir.Program, which: Iterable[int] | None = None, cut: Cut | PairedCut | None = None,
               progress: Callable[[int, int], None] | None = None) -> ShardPart | None:
    """Shards ``which`` (default: all) of ``spec``'s listing, from ``cut``
    (:func:`shard_cut`'s, made here when not given); None when its plan is
    not one listing that can be cut (it is then drawn as in v2).  Raises
    TooWide when their entries add up past the limit.  ``progress`` is called
    between shards (``(shards done, shards)``), and within a factored one;
    what it raises propagates (a job's cancellation)."""
    cut = shard_cut(spec) if cut is None else cut
    if cut is None:
        return None
    built = tuple(range(SHARDS)) if which is None else tuple(sorted(set(which)))
    shards: dict[int, Listing | PairedListing] = {}
    parts: dict[int, Prepared] = {}
    g = cut.prepared.weights_table() if isinstance(cut, PairedCut) else None  # one for all the shards
    for done, k in enumerate(built):
        if progress is not None:
            progress(done, len(built))
        listing, part = _shard(cut, k, g, progress)
        if part is not None and len(part.cells):
            parts[k] = part
        if listing is not None and listing.total:
            shards[k] = listing
    if sum(len(s.e_weight) for s in shards.values()) > MAX_ENTRIES:
        raise TooWide(f"more than {MAX_ENTRIES:,} level-0 entries; narrow the constraints")
    return ShardPart(cut.layout, cut.cells, shards, built, parts)


def build_shards(spec: Spec | ir.Program, which: Iterable[int] | None = None,
                 totals: list[int] | None = None) -> ShardedListing | None:
    """:func:`build_part` with every shard's total (``totals``, needed when
    ``which`` is not all of them): a listing that draws."""
    part = build_part(spec, which)
    return None if part is None else part.routed(totals)


@dataclass(frozen=True)
class ShardTotals:
    """What a job's partition stores of its shards: their side totals
    (``weights``, one per shard of ``shards``), cases and level-0 entries,
    and the whole listing's cells and free ways (for the count)."""

    index: int
    parts: int
    cases: int
    entries: int
    shards: tuple[int, ...]
    weights: list[int]
    cells: int
    free_ways: int

    @property
    def total(self) -> int:
        return sum(self.weights)

    @classmethod
    def of(cls, part: ShardPart, index: int, parts: int) -> ShardTotals:
        own = part.own
        return cls(index, parts, part.cases(), part.entries, part.built, [own[k] for k in part.built], len(part.cells),
                   part.layout.free_ways())

    def to_bytes(self) -> bytes:
        """The compact form (:func:`~truedeal.listing.slices.pack_slice`'s, form ``truedeal-shards/1``)."""
        return pack_slice(FORMAT, self.index, self.parts, self.cases, self.weights, self.entries,
                          shards=np.array(self.shards, np.int64), sizes=np.array([str(self.cells), str(self.free_ways)]))

    @classmethod
    def from_bytes(cls, data: bytes) -> ShardTotals:
        """Read :meth:`to_bytes`; ValueError on anything else."""
        (index, parts, cases), arrays, weights = unpack_slice(data, FORMAT)
        entries = stored_totals(data)[2]
        cells, free = (int(x) for x in arrays["sizes"])
        return cls(index, parts, cases, entries, tuple(int(k) for k in arrays["shards"]), weights, cells, free)


def all_totals(partitions: Iterable[ShardTotals]) -> list[int]:
    """Every shard's side total from all of a listing's partitions; ValueError
    unless they are one complete set of partitions of the same shards."""
    totals: dict[int, int] = {}
    for p in partitions:
        if set(p.shards) != set(shards_of_part(p.index, p.parts)) or totals.keys() & set(p.shards):
            raise ValueError(f"partition {p.index} of {p.parts} does not hold its shards")
        totals.update(zip(p.shards, p.weights))
    if sorted(totals) != list(range(SHARDS)):
        raise ValueError(f"the partitions hold shards {sorted(totals)}, not all {SHARDS}")
    return [totals[k] for k in range(SHARDS)]


def shards_of_part(part: int, parts: int) -> list[int]:
    """The shards of partition ``part`` of ``parts`` (at most :data:`SHARDS`)."""
    if not 1 <= parts <= SHARDS or not 0 <= part < parts:
        raise ValueError(f"partition {part} of {parts}: a routed listing has 1 to {SHARDS} partitions")
    return list(range(part, SHARDS, parts))


def _shard(cut: Cut | PairedCut, k: int, g: VectorWeights | None, progress) -> tuple[Listing | PairedListing | None, Prepared | None]:
    """Shard ``k``'s listing, None when it has no cell (and, paired, the part
    it is weighed from, with the weights table ``g``)."""
    if isinstance(cut, Cut):
        index = np.nonzero(cut.slice_of == k)[0]
        return (list_cells(cut.layout, cut.cells, index, progress) if len(index) else None), None
    part = cut.prepared.restricted(cut.groups_of(k))
    return (part.listing(0, g) if len(part.cells) else None), part  # cases: counted only when asked
