"""The paired listing cut into slices of groups: built apart, merged back.

A group's S+H pair and its cells' D+C pairs have complementary lengths:
seat by seat, S+H plus D+C is 13.  So the pair tables fall into classes, a
class being a vector of per-seat S+H lengths together with its complement,
and the groups of one class read only that class's tables.  Slice ``k``
takes whole classes (largest first, to the lightest slice), so the slices
share no table: together they do the whole build's work once.

A :class:`PairedSlice` holds its groups' level-0 weights and cases: they add
up to the whole listing's.  :func:`merge_paired` rebuilds the tables and the
group sums (everything but the case count, about half a build) and checks
every weight against the slices'.  The draws are the whole listing's.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from ..constraints.compile import Compiled
from .paired import PairedListing, Prepared
from .slices import SliceTotals, check_complete, pack_slice, unpack_slice

FORMAT = "truedeal-paired-slice/1"


@dataclass(frozen=True)
class PairedSlice(SliceTotals):
    """The level-0 weights of one slice of a paired listing (its groups)."""

    index: int
    parts: int
    cases: int
    groups: np.ndarray  # int64, sorted group indices in the whole listing
    weights: list[int]

    def to_bytes(self) -> bytes:
        """The compact form (a numpy ``.npz``, as :class:`~.slices.Slice`'s)."""
        return pack_slice(FORMAT, self.index, self.parts, self.cases, self.weights, groups=self.groups.astype(np.int64))

    @classmethod
    def from_bytes(cls, data: bytes) -> PairedSlice:
        """Read :meth:`to_bytes`; ValueError on anything else."""
        (index, parts, cases), arrays, weights = unpack_slice(data, FORMAT)
        return cls(index, parts, cases, arrays["groups"], weights)


@dataclass(frozen=True)
class PairedCut:
    """A paired listing's frame and the slice of each group; keep it to
    build several slices of one listing."""

    prepared: Prepared
    group_slice: np.ndarray
    parts: int

    @property
    def layout(self):
        return self.prepared.layout

    @property
    def cells(self) -> np.ndarray:
        return self.prepared.cells

    @classmethod
    def of(cls, comp: Compiled, parts: int) -> PairedCut:
        """TooWide past the paired limits, as :func:`~.paired.build_paired`."""
        if parts < 1:
            raise ValueError(f"at least one slice, got {parts}")
        prepared = Prepared.of(comp)
        return cls(prepared, _slice_of_groups(prepared, parts), parts)

    def build(self, index: int, progress=None) -> PairedSlice:
        """List slice ``index`` alone: its groups' weights and cases."""
        groups = self.groups_of(index)
        part = self.prepared.restricted(groups)
        weights = part.frame.weigh(part.weights_table())[4] if len(groups) else []
        return PairedSlice(index, self.parts, part.cases(), groups, weights)

    def groups_of(self, index: int) -> np.ndarray:
        """The groups (sorted indices in the whole listing) of slice ``index``."""
        if not 0 <= index < self.parts:
            raise ValueError(f"slice {index} out of range 0..{self.parts - 1}")
        return np.nonzero(self.group_slice == index)[0]


def merge_paired(comp: Compiled, slices: list[PairedSlice], prepared: Prepared | None = None) -> PairedListing:
    """The whole paired listing from all its slices: weighed again, its
    cases added up; ValueError when the slices are not one complete set or a
    weight differs from the one its slice stored.  ``prepared``: the cut's
    (:attr:`PairedCut.prepared`) when this process built slices of it, which
    spares the merge, the serial step of a job, a quarter of its work."""
    slices = check_complete(slices)
    listing = (prepared or Prepared.of(comp)).listing(sum(s.cases for s in slices))
    stored = np.zeros(len(listing.e_weight), object)
    for s in slices:
        stored[s.groups] = s.weights
    if stored.tolist() != listing.e_weight:
        raise ValueError("the slices' weights differ from the listing's")
    return listing


def _slice_of_groups(prepared: Prepared, parts: int) -> np.ndarray:
    """The slice of each group: classes of complementary lengths, heaviest
    first, each to the slice with the least work so far (rows of tables)."""
    frame = prepared.frame
    lengths = np.array([c[1:] for c in prepared.columns], np.int64).reshape(len(prepared.columns), -1)
    low, high = frame.pairs // frame.n_cols, frame.pairs % frame.n_cols
    sums = lengths[low] + lengths[high]
    _, pair_class = np.unique(_canonical(sums), axis=0, return_inverse=True)
    pair_class = pair_class.reshape(-1)
    group_class = pair_class[frame.group_table]
    work = np.bincount(pair_class) + 2 * np.bincount(group_class, minlength=pair_class.max() + 1)
    slice_of_class = np.zeros(len(work), np.int64)
    load = [(0, k) for k in range(parts)]
    for c in np.argsort(-work, kind="stable"):
        done, k = heapq.heappop(load)
        slice_of_class[c] = k
        heapq.heappush(load, (done + int(work[c]), k))
    return slice_of_class[group_class]


def _canonical(sums: np.ndarray) -> np.ndarray:
    """Each row or its complement (13 minus it), whichever is smaller in
    lexicographic order: one key for a class and its complement."""
    other = 13 - sums
    diff = sums - other
    first = np.argmax(diff != 0, axis=1)
    take_other = diff[np.arange(len(sums)), first] > 0
    return np.where(take_other[:, None], other, sums)
