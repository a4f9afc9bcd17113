"""A listing cut into slices of cells: built apart, stored compactly, merged.

Slice ``k`` of ``parts`` lists the cells that
:func:`truedeal.listing.cells.slice_of_cells` gives it (whole groups of cells
that share a (D,C) suit pair and a signature, so that each slice keeps the
build's vectorisation).  A cell's level-0 entries in its slice are exactly
the whole listing's entries of that cell, in the same order, so:

* the slices' side totals, cases and entries add up to the whole's;
* putting their level-0 entries back in cell order gives the whole
  listing's level-0 table, so the merged listing makes the draws that the
  whole listing makes: it deals the same bytes as a listing built in one
  process, whatever the number of slices.

A :class:`Slice` is the compact form a job keeps in Redis: only the level-0
entries (the rest of the listing is rebuilt from the cells, about a third of
a build, when a worker merges).  Python ints, not gmpy2, carry the weights:
``bench/bench_bigint.py`` measures Python's int faster for these sizes.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import numpy as np

from .build import list_cells, listing_tables
from .cases import count_cases
from .cells import checked_cells, slice_of_cells
from .layout import MAX_ENTRIES, Layout, TooWide
from .model import Listing

_FORMAT = "truedeal-slice/1"


class SliceTotals:
    """A slice's side total and entries, from its level-0 ``weights``."""

    weights: list[int]

    @property
    def total(self) -> int:
        return sum(self.weights)

    @property
    def entries(self) -> int:
        return len(self.weights)


@dataclass(frozen=True)
class Slice(SliceTotals):
    """The level-0 entries of one slice of a listing, and its exact totals."""

    index: int
    parts: int
    cases: int
    e_cell: np.ndarray  # int64, cell index in the whole listing
    e_c: np.ndarray
    e_z1: np.ndarray
    weights: list[int]

    def to_bytes(self) -> bytes:
        """The compact form (a numpy ``.npz``; weights as fixed-width little-endian bytes)."""
        return pack_slice(_FORMAT, self.index, self.parts, self.cases, self.weights, e_cell=self.e_cell.astype(np.int32),
                          e_c=self.e_c.astype(np.int32), e_z1=self.e_z1.astype(np.int64))

    @classmethod
    def from_bytes(cls, data: bytes) -> Slice:
        """Read :meth:`to_bytes`; ValueError on anything else."""
        (index, parts, cases), z, weights = unpack_slice(data, _FORMAT)
        return cls(index, parts, cases, z["e_cell"].astype(np.int64), z["e_c"].astype(np.int64), z["e_z1"], weights)


def pack_slice(form: str, index: int, parts: int, cases: int, weights: list[int], entries: int | None = None,
               **arrays: np.ndarray) -> bytes:
    """A slice's compact form: ``form``, its numbers and ``arrays`` in an
    ``.npz``, the weights as fixed-width little-endian bytes; ``entries``:
    its level-0 entries (default: one per weight)."""
    width = max(1, (max(weights, default=0).bit_length() + 7) // 8)
    raw = b"".join(w.to_bytes(width, "little") for w in weights)
    meta = [form, index, parts, cases, width, sum(weights), len(weights) if entries is None else entries]
    buf = io.BytesIO()
    contents: dict[str, Any] = {"meta": np.array([str(x) for x in meta]), "weights": np.frombuffer(raw, np.uint8), **arrays}
    np.savez(buf, **contents)
    return buf.getvalue()


def unpack_slice(data: bytes, form: str) -> tuple[tuple[int, int, int], dict[str, np.ndarray], list[int]]:
    """(index, parts, cases), the arrays and the weights of :func:`pack_slice`'s
    output; ValueError when it is not a slice of form ``form``."""
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        meta = [str(x) for x in z["meta"]]
        if meta[0] != form:
            raise ValueError(f"not a truedeal slice of the form {form} ({meta[0]!r})")
        index, parts, cases, width = (int(x) for x in meta[1:5])
        raw = z["weights"].tobytes()
        arrays = {k: z[k] for k in z.files if k not in ("meta", "weights")}
    weights = [int.from_bytes(raw[i : i + width], "little") for i in range(0, len(raw), width)]
    return (index, parts, cases), arrays, weights


def slice_form(data: bytes) -> str:
    """The form a slice's compact bytes declare (e.g. ``truedeal-slice/1``)."""
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        return str(z["meta"][0])


def stored_totals(data: bytes) -> tuple[int, int, int]:
    """(side total, cases, entries) that a slice's compact form declares,
    read without parsing its entries (to check a job's partials cheaply)."""
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        meta = [str(x) for x in z["meta"]]
    if not meta[0].startswith("truedeal-"):
        raise ValueError(f"not a truedeal slice ({meta[0]!r})")
    return int(meta[5]), int(meta[3]), int(meta[6])


def check_complete(slices: list) -> list:
    """``slices`` sorted by index; ValueError unless they are all the slices of one listing."""
    slices = sorted(slices, key=lambda s: s.index)
    parts = slices[0].parts if slices else 0
    if [s.index for s in slices] != list(range(parts)) or any(s.parts != parts for s in slices):
        raise ValueError(f"slices {[s.index for s in slices]} are not all {parts} slices of one listing")
    return slices


@dataclass(frozen=True)
class Cut:
    """The whole listing's cells (width-checked) and the slice of each: what
    every slice of one listing needs first.  Keep it to build several slices."""

    layout: Layout
    cells: np.ndarray
    slice_of: np.ndarray
    parts: int

    @classmethod
    def of(cls, spec_like, parts: int) -> Cut:
        """Raises :class:`TooWide` when the whole listing fails a width limit."""
        layout, cells, columns, cell_cols = checked_cells(spec_like)
        return cls(layout, cells, slice_of_cells(layout, cells, cell_cols, len(columns), parts), parts)

    def build(self, index: int, progress=None) -> Slice:
        """List slice ``index`` alone (TooWide past the entry limit)."""
        if not 0 <= index < self.parts:
            raise ValueError(f"slice {index} out of range 0..{self.parts - 1}")
        part = list_cells(self.layout, self.cells, np.nonzero(self.slice_of == index)[0], progress)
        assert part.cell_index is not None  # list_cells sets it
        return Slice(index, self.parts, count_cases(part), part.cell_index[part.e_cell], part.e_c, part.e_z1, part.e_weight)


def build_slice(spec_like, index: int, parts: int, progress=None) -> Slice:
    """Slice ``index`` of ``parts`` of the listing of ``spec_like`` (see :class:`Cut`)."""
    return Cut.of(spec_like, parts).build(index, progress)


def merge(spec_like, slices: list[Slice]) -> Listing:
    """The whole listing from all its slices: the tables rebuilt from the
    cells, the level-0 entries put back in cell order.  Raises :class:`TooWide` when
    the slices' entries add up past the limit (the whole build would have
    refused), ValueError when the slices are not one complete set."""
    slices = check_complete(slices)
    if sum(s.entries for s in slices) > MAX_ENTRIES:
        raise TooWide(f"more than {MAX_ENTRIES:,} level-0 entries; narrow the constraints")
    layout, cells, columns, cell_cols = checked_cells(spec_like)
    listing = listing_tables(layout, cells, columns, cell_cols)
    # A cell's entries are all in one slice, in order: a stable sort by cell
    # gives the whole listing's order.
    order = np.argsort(np.concatenate([s.e_cell for s in slices]), kind="stable")
    listing.e_cell = np.concatenate([s.e_cell for s in slices])[order]
    listing.e_c = np.concatenate([s.e_c for s in slices])[order]
    listing.e_z1 = np.concatenate([s.e_z1 for s in slices])[order]
    weights = [w for s in slices for w in s.weights]
    listing.e_weight = [weights[i] for i in order.tolist()]
    listing.total = sum(s.total for s in slices)
    listing.cases = sum(s.cases for s in slices)
    return listing
