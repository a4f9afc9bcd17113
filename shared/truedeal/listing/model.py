"""The factored listing of one spec: what counting and sampling read."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .layout import Layout
from .options import SuitOptions


@dataclass
class Listing:
    """The factored listing of one spec, ready for counting and sampling."""

    layout: Layout
    cells: np.ndarray  # (n_cells, n_patterned) pattern indices
    columns: list[tuple[int, ...]]  # distinct suit columns
    cell_cols: np.ndarray  # (n_cells, 4) column id of each suit
    options: list[SuitOptions]  # per column
    g: np.ndarray  # (n_cols, zsize) int64: option weight summed by feature vector
    pairs: list[tuple[int, int]]  # distinct (column, column) pairs
    pair_tables: np.ndarray  # (n_pairs, zsize) int64: T for a pair of suits
    cell_pairs: np.ndarray  # (n_cells, 2) pair id for (S,H) and (D,C)
    c_values: np.ndarray  # (n_C, n_exact) pool honour totals
    cell_sig: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # signature of each cell
    sig_boxes: list[list[tuple[tuple[int, ...], tuple[int, ...]]]] = field(default_factory=list)  # accepted boxes
    # level 0: one entry per (cell, C, z1) with positive weight
    e_cell: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    e_c: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    e_z1: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    e_weight: list[int] = field(default_factory=list)
    total: int = 0  # the side total T
    cell_index: np.ndarray | None = None  # a slice's cells in the whole listing
    #: Pavlicek's number of cases, once :func:`~truedeal.listing.cases.count_cases` has counted them
    #: (drawing never needs it)
    cases: int | None = None
    grid_points: int = 0  # the boxes its signatures tested (Compiled.grid_points): what its boxes cost

    @property
    def deals(self) -> int:
        return self.total * self.layout.free_ways()
