"""A listing aggregated by spades+hearts pair, for four patterned seats.

The factored listing (:mod:`truedeal.listing.build`) keeps one level-0 entry
per cell and spades+hearts feature vector ``z1``.  When every constrained
seat has both a shape and honours (four seats with HCP ranges and shapes),
that is hundreds of millions of entries.  Here level 0 has one entry per
**group** ``q``: a spades+hearts column pair ``p1`` and a cell signature.  The
cells of a group differ only in their diamonds+clubs pair ``p2``, and a box
sum is linear, so their D+C tables are added before it:

    V_q = sum of T2[p2] over the group's cells
    Y_q[z1] = sum of V_q[z2] over the z2 with z1 + z2 in an accepted box
    W_q = sum of T1[p1][z1] * Y_q[z1] over z1           (exact, 31-bit limbs)

Every table is kept over the feature vectors that a pair of suits can reach
(1,234 of the 33,660 of four HCP seats: the HCP of two suits add up to 20).
A draw descends: group, ``z1``, ``z2``, the cell (by ``T2[p2][z2]``), then each
suit as in the factored listing (:mod:`truedeal.paired_sampling`).

Forms are unclamped first (:func:`~truedeal.constraints.compile.unclamped`),
so a pair's vector minus one suit's is the other suit's.  Seats whose honours
count but whose shape does not (a pool) are the factored listing's job.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from ..arrays import unique_inverse, unique_rows
from ..constraints.compile import Compiled, unclamped
from . import rank_pool
from .cells import enumerate_cells, suit_columns
from .exact_ops import SparseRight, row_dots
from .folding import folded
from .layout import Layout, TooWide, make_layout, small_vectors
from .options import SuitOptions, suit_options

#: Most feature vectors a pair of suits may reach (the tables' width).
MAX_PAIR_STATES = 6_144
#: Most bytes of tables (the pair tables, and the distinct rows of V and Y in
#: int64) a build may hold: the 1.6 GB that 200M entries of 8 bytes took when
#: pair tables were int64 alone; they are uint32, half the bytes, when every
#: entry fits (:func:`table_dtype`).  four-pool.json (four.json with West on
#: HCP alone) holds 15,856 uint32 rows of 4,166 and 1,283 + 1,283 int64 ones,
#: 350 MB (614 MB with int64 pair tables), and counts in 0.6 GB (0.86 GB);
#: North 11-21 HCP with 5+ hearts, East 8-16 with 5+ spades, South 6-10 with
#: 3+ hearts, West 0-12 holds 47,382 + 480 + 480 rows of 4,341, 856 MB (1.68 GB
#: with int64 pair tables: past the limit, it was refused).
MAX_PAIRED_BYTES = 1_600_000_000
#: Most feature states a paired layout may span (VectorWeights.pos, 8 bytes each).
MAX_FEATURE_STATES = 1 << 25
#: Most feature states per pair of vectors for which the pairs' sums are
#: found through a table over the feature space (past it they are sorted).
_DENSE_SUMS = 4
#: Rows per block when products are carried as limbs (bounds the temporaries).
_BLOCK = 512
#: Most bytes of the int64 copy of narrow pair tables that a sum of them makes at once (:func:`_group_sums`).
_SUM_BYTES = 64 << 20


@dataclass(frozen=True)
class VectorWeights:
    """Each column's option weights (or case indicators) summed by feature
    vector, kept over the vectors some column reaches: a handful of a feature
    space that may hold millions (three patterned seats and a pool: 228 of
    1,912,500).  ``used`` are those vectors' flat indices, ascending; ``pos``
    the place of each flat index in ``used`` (-1: no column reaches it)."""

    used: np.ndarray  # (n_used,) flat feature vectors
    w: np.ndarray  # (n_cols, n_used) int64
    zsize: int

    @classmethod
    def of(cls, rows: list[tuple[np.ndarray, np.ndarray]], zsize: int) -> VectorWeights:
        """From each column's (flat vectors, weights), repeats added up; only
        the vectors with a nonzero sum in some column are kept."""
        every = np.unique(np.concatenate([v for v, _ in rows])) if rows else np.zeros(0, np.int64)
        w = np.zeros((len(rows), len(every)), np.int64)
        for k, (v, x) in enumerate(rows):
            np.add.at(w[k], np.searchsorted(every, v), x)
        keep = w.any(axis=0)
        return cls(every[keep], np.ascontiguousarray(w[:, keep]), zsize)

    @cached_property
    def pos(self) -> np.ndarray:
        """``(zsize,)``: the place of each flat index in ``used`` (-1: no
        column reaches it), as the compiled sampler reads it.  Made when
        first read: a plan makes a hundred of these over feature spaces of
        millions, and most never reach a sampler."""
        pos = np.full(self.zsize, -1, np.int64)
        pos[self.used] = np.arange(len(self.used))
        return pos

    def __getitem__(self, key: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """The weights at (columns, flat vectors), 0 where a vector is not kept."""
        col, flat = key
        if not len(self.used):
            return np.zeros(np.broadcast_shapes(np.shape(col), np.shape(flat)), np.int64)
        at = np.minimum(np.searchsorted(self.used, flat), len(self.used) - 1)
        return np.where(self.used[at] == flat, self.w[col, at], 0)

    def dense(self) -> np.ndarray:
        """``(n_cols, zsize)``, as the factored listing's case count reads it."""
        out = np.zeros((len(self.w), self.zsize), np.int64)
        out[:, self.used] = self.w
        return out

    def support(self, col: int) -> np.ndarray:
        """The flat vectors column ``col`` reaches, ascending."""
        return self.used[np.nonzero(self.w[col])[0]]


@dataclass
class PairedListing:
    """What counting and :class:`~truedeal.paired_sampling.PairedSampler` read."""

    layout: Layout
    cells: np.ndarray  # (n_cells, n_patterned) pattern indices
    cell_cols: np.ndarray  # (n_cells, 4) column of each suit
    options: list[SuitOptions]  # per column
    g: VectorWeights  # option weight summed by column and feature vector
    z_flat: np.ndarray  # (n_z,) flat index of each vector a pair of suits reaches
    tables: np.ndarray  # (n_tables, n_z) one table per unordered pair of columns, uint32 if all fit (table_dtype)
    cell_table: np.ndarray  # (n_cells,) the table of each cell's D+C pair
    group_table: np.ndarray  # (n_q,) the table of each group's S+H pair
    group_sig: np.ndarray  # (n_q,) cell signature of each group
    accept: list[np.ndarray]  # per signature, (n_z, n_z): z1 + z2 in an accepted box (bool), or its pool's ways
    v: np.ndarray  # (n_v, n_z): the distinct rows of V
    y: np.ndarray  # (n_y, n_z): the distinct rows of Y
    v_of: np.ndarray  # (n_q,) each group's row of v
    y_of: np.ndarray  # (n_q,) each group's row of y
    cell_order: np.ndarray  # cells sorted by group
    group_start: np.ndarray  # (n_q + 1,) each group's run in cell_order
    e_weight: list[int]  # W per group: level 0
    total: int
    known_cases: int | None  # Pavlicek's cases, once counted (see :attr:`cases`)
    #: with a rank pool, each signature's accepted boxes over every form (the pool's draw reads them)
    sig_boxes: list | None = None
    #: what :attr:`cases` counts from, until it has
    prepared: Prepared | None = field(default=None, repr=False)

    @property
    def deals(self) -> int:
        return self.total * self.layout.free_ways()

    @property
    def cases(self) -> int:
        """Pavlicek's number of cases, counted on first use unless the build
        counted them (:func:`cases_first`): a pass as long as the weights'
        own, which drawing never needs (`generate` skips it)."""
        if self.known_cases is None:
            assert self.prepared is not None
            self.known_cases, self.prepared = self.prepared.cases(), None
        return self.known_cases

    def make_sampler(self):
        from ..paired_sampling import PairedSampler

        return PairedSampler(self)


def applicable(comp: Compiled) -> bool:
    """Exact specs with patterned seats and no pool, or a pool weighed by rank
    counts (:mod:`~truedeal.listing.rank_pool`)."""
    return comp.exact and bool(comp.patterned) and not comp.dead and (not comp.pooled or rank_pool.applicable(comp))


def view(comp: Compiled) -> Compiled | None:
    """What the paired listing lists for ``comp``: ``comp`` itself where it
    applies, else, with one patterned seat beside a pool, ``comp`` with a
    pool seat listed by pattern (:func:`~.rank_pool.promoted`); None when
    neither applies."""
    if applicable(comp):
        return comp
    other = rank_pool.promoted(comp) if comp.exact and not comp.dead else None
    return other if other is not None and applicable(other) else None


@dataclass
class Prepared:
    """What every part of a paired build starts from: the cells, their suit
    columns and options, and the frame (groups, pair keys, accepted sums)."""

    layout: Layout
    cells: np.ndarray
    columns: list
    cell_cols: np.ndarray
    options: list[SuitOptions]
    frame: _Frame

    @classmethod
    def of(cls, comp: Compiled) -> Prepared:
        """TooWide past the paired limits, as :func:`build_paired`.  A layout
        too wide with every form listed is tried again with the forms that
        others sum to folded out (:mod:`~truedeal.listing.folding`); the
        layouts that fit stay as they were, and so do their seeded deals.
        A rank pool's mixed forms are folded from the start (their patterned
        parts repeat a seat's own range, at every value the seat could take)."""
        layout = rank_pool.pool_layout(comp) if comp.pooled else make_layout(unclamped(comp))
        if layout.pool is not None and layout.pool.mixed_forms:
            return cls._of(folded(layout, _fold_sources(layout)))
        try:
            return cls._of(layout)
        except TooWide:
            narrow = folded(layout, _fold_sources(layout))
            if narrow is layout:
                raise
            return cls._of(narrow)

    @classmethod
    def _of(cls, layout: Layout) -> Prepared:
        cells = enumerate_cells(layout.comp, layout)
        columns, cell_cols = suit_columns(cells, layout)
        if layout.zsize > MAX_FEATURE_STATES:  # VectorWeights.pos
            raise TooWide(f"paired tables too large ({layout.zsize:,} feature states)")
        options: list[SuitOptions] = []
        for probe in itertools.chain(_probes(len(columns)), [len(columns)]):
            options += [suit_options(c, layout) for c in columns[len(options) : probe]]
            if probe < len(columns):
                _probe_reach(options, layout)
        # the case indicators are nonzero where the weights are: the same frame, sized for both tables
        weights = VectorWeights.of([(o.vflat, o.weight) for o in options], layout.zsize)
        frame = frame_of(layout, cells, cell_cols, case_indicators(options, layout), weights)
        return cls(layout, cells, columns, cell_cols, options, frame)

    def restricted(self, groups: np.ndarray) -> Prepared:
        """The part of ``groups`` (sorted indices) alone: its listing draws
        exactly those groups' deals, with their weights in the whole."""
        cells = np.isin(self.frame.cell_q, groups)
        return replace(self, cells=self.cells[cells], cell_cols=self.cell_cols[cells], frame=self.frame.restricted(groups))

    def cases(self) -> int:
        """Pavlicek's number of cases of this listing (a case-count build: no V or Y kept)."""
        return self.frame.total(case_indicators(self.options, self.layout))

    def weights_table(self) -> VectorWeights:
        """Each column's option weights summed by feature vector."""
        return VectorWeights.of([(o.vflat, o.weight) for o in self.options], self.layout.zsize)

    def listing(self, cases: int | None, g: VectorWeights | None = None) -> PairedListing:
        """The listing, weighed here, with ``cases`` counted elsewhere (None:
        counted here when first asked); ``g``: :meth:`weights_table`, when
        the caller keeps one for several parts."""
        g = self.weights_table() if g is None else g
        tables, v, y, rows, weights = self.frame.weigh(g)
        frame = self.frame
        order = np.argsort(frame.cell_q, kind="stable")
        start = np.searchsorted(frame.cell_q[order], np.arange(len(frame.group_table) + 1))
        pool = self.layout.pool
        sig_boxes = pool.source.boxes_of(frame.sig_keys) if pool is not None else None
        return PairedListing(self.layout, self.cells, self.cell_cols, self.options, g, frame.z_flat, tables,
                             frame.cell_dc, frame.group_table, frame.group_sig, frame.accept, v, y, rows.v_of,
                             rows.y_of, order, start, weights, sum(weights), cases, sig_boxes,
                             self if cases is None else None)


def _fold_sources(layout: Layout) -> list[int]:
    """The forms that the listing carries (a rank pool's own forms are read from its tables)."""
    pool = layout.pool
    # a filter's coordinate is 0, not its value: no fold may read it
    return [f for f in range(layout.n_box) if (pool is None or f not in pool.pool_forms) and f not in layout.comp.filters]


_CASES_FIRST: ContextVar[bool] = ContextVar("cases_first", default=False)


@contextmanager
def cases_first() -> Iterator[None]:
    """Within it, paired listings count their cases before their weights: what
    a count wants, at a lower peak (four-pool.json: 1.9 GB, against 2.5 GB when
    they are counted afterwards)."""
    token = _CASES_FIRST.set(True)
    try:
        yield
    finally:
        _CASES_FIRST.reset(token)


def build_paired(comp: Compiled) -> PairedListing:
    """The paired listing of ``comp`` (exact; TooWide past the limits).  Its
    cases are counted when first asked, so `generate` skips that pass
    (four-pool.json builds in 9 s instead of 16 s); within :func:`cases_first`
    they are counted first."""
    prepared = Prepared.of(comp)
    # the cases' tables go before the weights' tables, which are the peak
    return prepared.listing(prepared.cases() if _CASES_FIRST.get() else None)


def paired_cases(layout: Layout, cells: np.ndarray, cell_cols: np.ndarray, options: list[SuitOptions]) -> int:
    """Pavlicek's number of cases of the listing of ``cells`` (no pool), counted
    by the paired tables: far faster than level-0 entries when they are many."""
    indic = case_indicators(options, layout)  # nonzero where the weights are
    return frame_of(layout, cells, cell_cols, indic).total(indic)


def frame_of(layout: Layout, cells: np.ndarray, cell_cols: np.ndarray, g: VectorWeights,
             weights: VectorWeights | None = None) -> _Frame:
    """The groups, pair tables' keys and accepted sums of the listing of
    ``cells``, with the dtype that holds the pair tables of ``g`` and of
    ``weights`` (when given: the other tables the frame will weigh); TooWide
    when those tables and V and Y would pass :data:`MAX_PAIRED_BYTES`."""
    z_flat = _reachable(g, layout)
    # A pair's table does not depend on the order of its columns.
    n = len(g.w)
    sh, dc = _unordered(cell_cols[:, :2], n), _unordered(cell_cols[:, 2:], n)
    pairs, which = unique_inverse(np.concatenate([sh, dc]))
    cell_sh, cell_dc = which[: len(cells)], which[len(cells) :]
    sig, sig_keys = layout.comp.cell_signatures(cells)
    group_key, cell_q = unique_inverse(cell_sh * len(sig_keys) + sig)
    rows = _SharedRows.of(cell_q.reshape(-1), cell_dc, group_key % len(sig_keys), len(sig_keys))
    n_rows = len(rows.v_rep) + len(rows.y_v)
    _check_size(len(z_flat), len(pairs), n_rows, np.dtype(np.uint32))  # too large even narrow: no table is built
    dtype = np.result_type(*[_tables_dtype(x, pairs, n, z_flat, layout) for x in (g, weights) if x is not None])
    _check_size(len(z_flat), len(pairs), n_rows, dtype)
    group_sig = group_key % len(sig_keys)
    if layout.pool is not None:
        accept, accept_cases = layout.pool.accepts(layout, z_flat, sig_keys)
    else:
        accept, same = _distinct_accepts(layout, z_flat, sig_keys)
        accept_cases, group_sig = accept, same[group_sig]
        rows = _SharedRows.of(cell_q.reshape(-1), cell_dc, group_sig, len(accept))
    return _Frame(layout, z_flat, n, pairs, cell_dc, cell_q.reshape(-1), group_key // len(sig_keys),
                  group_sig, accept, accept_cases, sig_keys, dtype, rows)


def _distinct_accepts(layout: Layout, z_flat: np.ndarray, sig_keys: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """The distinct accept matrices of the cell signatures ``sig_keys``, and
    which one each signature has.  Hundreds of signatures often share a few
    (a calm opponent's plan: 264 signatures, 8 matrices), and groups that
    share one share their rows of Y; the draws read the same values."""
    box_sets: dict[tuple, int] = {}
    of_set = np.array([box_sets.setdefault(tuple(boxes), len(box_sets)) for boxes in layout.comp.boxes_of(sig_keys)], np.int64)
    if len(box_sets) * len(z_flat) ** 2 > rank_pool.MAX_ACCEPT_BYTES:  # one byte each
        raise TooWide(f"accept matrices too large ({len(box_sets):,} box sets x {len(z_flat):,}**2 feature vectors)")
    mats: dict[bytes, int] = {}
    distinct: list[np.ndarray] = []
    of_mat = []
    for a in _accepts(layout, z_flat, [list(b) for b in box_sets]):
        of_mat.append(mats.setdefault(np.packbits(a).tobytes(), len(mats)))
        if len(distinct) < len(mats):
            distinct.append(a)
    return distinct, np.array(of_mat, np.int64)[of_set]


def _unordered(cols: np.ndarray, n: int) -> np.ndarray:
    """Key of the unordered pair of columns in each row of ``cols`` (n, 2)."""
    return cols.min(axis=1) * n + cols.max(axis=1)


@dataclass
class _Frame:
    """The shape of a paired listing, shared by its weights and its case count."""

    layout: Layout
    z_flat: np.ndarray
    n_cols: int
    pairs: np.ndarray  # unordered pair keys (low column * n_cols + high)
    cell_dc: np.ndarray  # each cell's D+C table
    cell_q: np.ndarray  # each cell's group
    group_table: np.ndarray  # each group's S+H table
    group_sig: np.ndarray
    accept: list[np.ndarray]  # per signature, A[z1, z2]: 0/1, or the rank pool's ways
    accept_cases: list[np.ndarray]  # the same, counting the pool's holdings
    sig_keys: np.ndarray  # each signature's row (Compiled.cell_signatures)
    table_dtype: np.dtype  # of the pair tables: uint32 when those of every g the frame weighs fit, else int64
    rows: _SharedRows  # which groups share a row of V and of Y

    def weigh(self, g: VectorWeights):
        """Pair tables, the distinct rows of V and Y, which group reads
        which (:class:`_SharedRows`), and W for the per-column tables ``g``
        (the frame's, or others whose pair tables fit its ``table_dtype``)."""
        tables = _pair_tables(g, self.pairs, self.n_cols, self.z_flat, self.layout, self.table_dtype)
        v, y = self._v_and_y(tables, self.rows, self.accept)
        return tables, v, y, self.rows, self._group_weights(tables, y, self.rows)

    def total(self, g: VectorWeights) -> int:
        """The sum of :meth:`weigh`'s weights (the case count's: V and Y are
        not kept)."""
        tables = _pair_tables(g, self.pairs, self.n_cols, self.z_flat, self.layout, self.table_dtype)
        return sum(self._group_weights(tables, self._v_and_y(tables, self.rows, self.accept_cases)[1], self.rows))

    def _v_and_y(self, tables: np.ndarray, rows: _SharedRows, accept: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The distinct rows of V (sums of D+C tables) and of Y (V times a signature's accept matrix)."""
        v = _group_sums(tables, self.cell_q, self.cell_dc, rows.v_rep)
        y = np.empty((len(rows.y_v), len(self.z_flat)), np.int64)
        sparse = _SparseAccepts(accept)
        for b in range(0, len(y), _BLOCK):
            y[b : b + _BLOCK] = self._box_sums(v[rows.y_v[b : b + _BLOCK]], rows.y_sig[b : b + _BLOCK], sparse)
        return v, y

    def _group_weights(self, tables: np.ndarray, y: np.ndarray, rows: _SharedRows) -> list[int]:
        return group_weights(tables, y, self.group_table, rows.y_of)

    def restricted(self, groups: np.ndarray) -> _Frame:
        """The frame of ``groups`` (sorted indices) alone, with only the pair
        tables they read: its weights and cases are theirs in the whole."""
        cells = np.isin(self.cell_q, groups)
        need = np.unique(np.concatenate([self.group_table[groups], self.cell_dc[cells]]))
        cell_q, cell_dc = np.searchsorted(groups, self.cell_q[cells]), np.searchsorted(need, self.cell_dc[cells])
        group_sig = self.group_sig[groups]
        return replace(self, pairs=self.pairs[need], cell_dc=cell_dc, cell_q=cell_q,
                       group_table=np.searchsorted(need, self.group_table[groups]), group_sig=group_sig,
                       rows=_SharedRows.of(cell_q, cell_dc, group_sig, len(self.accept)))

    def _box_sums(self, v: np.ndarray, sig: np.ndarray, sparse: _SparseAccepts) -> np.ndarray:
        """Y = V A for rows of V whose cell signatures are ``sig`` (A from ``sparse``)."""
        y = np.empty_like(v)
        for s in np.unique(sig):
            here = sig == s
            y[here] = sparse[int(s)].times(v[here])
        return y


@dataclass(frozen=True)
class _SharedRows:
    """Which groups share a row of V (their cells have the same D+C tables,
    repeats included) and of Y (that, and the same cell signature): many S+H
    column pairs meet the same D+C pairs, so four-pool's 11,513 groups have
    1,283 distinct rows of each, and the listing keeps those alone."""

    v_rep: np.ndarray  # (n_v,) the first group of each row of V, ascending
    v_of: np.ndarray  # (n_q,) each group's row of V
    y_v: np.ndarray  # (n_y,) the row of V of each row of Y
    y_sig: np.ndarray  # (n_y,) the signature of each row of Y
    y_of: np.ndarray  # (n_q,) each group's row of Y

    @classmethod
    def of(cls, cell_q: np.ndarray, cell_dc: np.ndarray, group_sig: np.ndarray, n_sig: int) -> _SharedRows:
        n_q = len(group_sig)
        order = np.lexsort((cell_dc, cell_q))
        dc, start = cell_dc[order], np.searchsorted(cell_q[order], np.arange(n_q + 1)).tolist()
        seen: dict[bytes, int] = {}
        v_of = np.array([seen.setdefault(dc[a:b].tobytes(), len(seen)) for a, b in zip(start[:-1], start[1:])], np.int64)
        v_rep = np.unique(v_of, return_index=True)[1].astype(np.int64)
        keys, y_of = unique_inverse(v_of * n_sig + group_sig)
        return cls(v_rep, v_of, keys // n_sig, keys % n_sig, y_of.reshape(-1).astype(np.int64))


class _SparseAccepts:
    """Each signature's accept matrix as a :class:`SparseRight`, made at first
    use and kept: a few percent of its entries are set, so the products with
    V run over those alone (heavy.dlr's 4,492**2 matrix: 0.8%, 100x fewer
    operations than the dense float64 product, and no float64 copy of it).
    Its ``reach`` is the bound the dense product used (the matrix's size
    when it is 0/1), so the same listings fit."""

    def __init__(self, accept: list[np.ndarray]) -> None:
        self.accept = accept
        self.made: dict[int, SparseRight] = {}

    def __getitem__(self, s: int) -> SparseRight:
        if s not in self.made:
            a = self.accept[s]
            reach = len(a) if a.dtype == bool else int(a.sum(axis=0, dtype=np.float64).max(initial=0))
            self.made[s] = SparseRight.dense(a, reach)
        return self.made[s]


def case_indicators(options: list[SuitOptions], layout: Layout) -> VectorWeights:
    """1 per distinct (feature vector, holdings) of each column: Pavlicek's cases."""
    # with a rank pool, shape-only seats are listed by holding too; their holdings make no case
    seats = layout.pool.case_seats if layout.pool is not None else layout.rank_seats
    cols = [layout.rank_seats.index(s) for s in seats]
    rows = []
    for opt in options:
        full = np.concatenate([opt.vflat[:, None], opt.masks[:, cols].astype(np.int64)], axis=1)
        v = full[unique_rows(full)[1], 0]  # np.unique(axis=0) sorted rows as numbers: a plan's minute
        rows.append((v, np.ones(len(v), np.int64)))
    return VectorWeights.of(rows, layout.zsize)


#: Columns whose options are made first, to refuse a layout too wide before the others are made.
_FIRST_PROBE = 32


def _probes(n: int) -> Iterator[int]:
    """After how many columns' options the reach is probed: 32, 64, 128... below ``n``."""
    k = _FIRST_PROBE
    while k < n:
        yield k
        k *= 2


def _probe_reach(options: list[SuitOptions], layout: Layout) -> None:
    """TooWide when the vectors that two suits of these columns reach are
    already too many: the whole listing's reach those and more (a library
    script made the options of every column, 3 s, to learn it is too wide)."""
    reach = _reachable(VectorWeights.of([(o.vflat, o.weight) for o in options], layout.zsize), layout)
    if len(reach) > MAX_PAIR_STATES:
        raise TooWide(f"a pair of suits reaches more than {MAX_PAIR_STATES:,} feature vectors ({len(reach):,} "
                      f"from its first {len(options)} suit columns)")


def _reachable(g: VectorWeights, layout: Layout) -> np.ndarray:
    """Flat indices of every vector that two suits' options can sum to."""
    one = layout.vectors(g.used)
    if len(one) > MAX_PAIR_STATES // 2:
        raise TooWide(f"one suit reaches {len(one):,} feature vectors (at most {MAX_PAIR_STATES // 2:,} paired)")
    z, fits = layout.add_flat(g.used, one, g.used, one)
    return np.unique(z[fits])


def group_weights(tables: np.ndarray, y: np.ndarray, group_table: np.ndarray, y_of: np.ndarray) -> list[int]:
    """W_q = T1 . Y_q of every group q (its table ``group_table[q]``, its row
    ``y_of[q]`` of Y), exactly, a block of groups at a time (the rows gathered
    whole would be as large as the tables, many times over)."""
    weights: list[int] = []
    for b in range(0, len(group_table), _BLOCK):
        weights += row_dots(tables[group_table[b : b + _BLOCK]], y[y_of[b : b + _BLOCK]])
    return weights


def _check_size(n_z: int, n_tables: int, n_rows: int, dtype: np.dtype, limit: int | None = None) -> None:
    """TooWide past :data:`MAX_PAIR_STATES`, or when ``n_tables`` pair tables
    of ``dtype`` and ``n_rows`` rows of V and Y (int64), all ``n_z`` wide,
    would pass ``limit`` bytes (default :data:`MAX_PAIRED_BYTES`)."""
    if n_z > MAX_PAIR_STATES:
        raise TooWide(f"a pair of suits reaches {n_z:,} feature vectors (at most {MAX_PAIR_STATES:,} listed)")
    if n_z * (n_tables * dtype.itemsize + n_rows * 8) > (MAX_PAIRED_BYTES if limit is None else limit):
        raise TooWide(f"paired tables too large ({n_tables:,} {dtype} pair tables and {n_rows:,} rows "
                      f"x {n_z:,} feature vectors)")


def table_dtype(top: int) -> np.dtype:
    """The dtype of pair tables whose largest entry is ``top`` (they are
    non-negative): uint32 when it holds them, in half the bytes, else int64."""
    return np.dtype(np.uint32) if top <= np.iinfo(np.uint32).max else np.dtype(np.int64)


def _tables_dtype(g: VectorWeights, keys: np.ndarray, n_cols: int, z_flat: np.ndarray, layout: Layout) -> np.dtype:
    """:func:`table_dtype` of the pair tables of ``g`` (:func:`_pair_tables`),
    without building them all.  Pair (a, b)'s entries are at most S_a M_b,
    M_a S_b and (Cauchy-Schwarz) sqrt(Q_a Q_b), S, M and Q a column's sum,
    largest weight and sum of squares: a suit's ways are below 4**13, so
    these are exact in int64 and Q in float64.  The bounds clear most pairs
    (four-pool.json: all but 262 of 15,856); the tables of the others are
    built, by first column, until one has an entry past uint32."""
    narrow, top = np.dtype(np.uint32), np.iinfo(np.uint32).max
    col_sum, col_max = g.w.sum(axis=1), g.w.max(axis=1, initial=0)
    squares = (g.w * g.w).sum(axis=1).astype(np.float64)
    a, b = keys // n_cols, keys % n_cols
    # a float product below 2**64 is an exact one below it (rounding is monotone, 2**64 a float)
    sure = (np.minimum(col_sum[a] * col_max[b], col_max[a] * col_sum[b]) <= top) | (squares[a] * squares[b] < 2.0**64)
    unsure = np.nonzero(~sure)[0]
    if not len(unsure):
        return narrow
    for _, block in _pair_blocks(g, keys, n_cols, z_flat, layout, unsure):
        if table_dtype(int(block.max(initial=0))) != narrow:
            return np.dtype(np.int64)
    return narrow


def _pair_tables(g: VectorWeights, keys: np.ndarray, n_cols: int, z_flat: np.ndarray, layout: Layout,
                 dtype: np.dtype) -> np.ndarray:
    """T[pair][z] = sum over va + vb = z of g[a][va] * g[b][vb], over the
    reachable z, as ``dtype`` (:func:`_tables_dtype`'s: ValueError when an
    entry does not fit it).  Each first column's rows are made in int64 and
    stored at once, so a narrow build never holds the whole in int64."""
    out = np.zeros((len(keys), len(z_flat)), dtype)
    for rows, block in _pair_blocks(g, keys, n_cols, z_flat, layout):
        if table_dtype(int(block.max(initial=0))).itemsize > out.itemsize:
            raise ValueError(f"pair tables past {dtype}")
        out[rows] = block
    return out


def _pair_blocks(g: VectorWeights, keys: np.ndarray, n_cols: int, z_flat: np.ndarray, layout: Layout,
                 which: np.ndarray | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The tables of the pairs ``keys[which]`` (default: all), in int64, as
    (their indices in ``keys``, their rows), one first column at a time.

    For each first column a: M_a[u, z] = g[a][z - u], so the tables of every
    pair (a, b) are one exact product ``g[b, U] @ M_a``.  M_a is sparse (each
    u reaches only the z = u + va of a's vectors va: 2% of heavy.dlr's), and
    runs as a :class:`SparseRight` (int64, its stored entries alone)."""
    used, g_used, n_z = g.used, g.w, len(z_flat)
    at = _sum_index(layout, used, z_flat)
    which = np.arange(len(keys)) if which is None else which
    first, second = keys[which] // n_cols, keys[which] % n_cols
    for a in np.unique(first):
        rows = which[first == a]
        va = np.nonzero(g_used[a])[0]
        i, j = np.nonzero(at[va] >= 0)
        # repeats (clamped forms may merge sums) add up, as np.add.at would
        m_a = SparseRight.of(j, at[va[i], j], g_used[a, va[i]], (len(used), n_z))
        yield rows, m_a.times(g_used[second[first == a]])


def _sum_index(layout: Layout, used: np.ndarray, z_flat: np.ndarray) -> np.ndarray:
    """[u, v] = the position in ``z_flat`` of ``used[u] + used[v]``, -1 where the sum does not fit."""
    index = np.full(layout.zsize, -1, np.int64)
    index[z_flat] = np.arange(len(z_flat))
    vec = layout.vectors(used)
    z, fits = layout.add_flat(used, vec, used, vec)
    at = np.full(fits.shape, -1, np.int64)
    at[fits] = index[z[fits]]
    return at


def _group_sums(tables: np.ndarray, cell_q: np.ndarray, cell_dc: np.ndarray, groups) -> np.ndarray:
    """Per group (``groups``: their count, or the indices of some), the sum of
    its cells' D+C tables, in int64: a sparse product in integers (two cells
    with the same table, their S and H columns swapped, add up as they
    should).  scipy multiplies an int64 matrix by an int64 copy of its dense
    factor, so uint32 tables go a block of columns at a time: the copy stays
    within :data:`_SUM_BYTES`, not the size of the tables in int64."""
    from scipy.sparse import csr_matrix

    rows = np.arange(groups) if isinstance(groups, int) else np.asarray(groups)
    pick = np.isin(cell_q, rows)
    at = np.searchsorted(rows, cell_q[pick])
    ones = np.ones(len(at), np.int64)
    cells = csr_matrix((ones, (at, cell_dc[pick])), shape=(len(rows), len(tables)))
    if tables.dtype == np.int64:
        return np.asarray(cells @ tables)
    out = np.empty((len(rows), tables.shape[1]), np.int64)
    step = max(1, _SUM_BYTES // (8 * max(len(tables), 1)))
    for c in range(0, tables.shape[1], step):
        out[:, c : c + step] = cells @ tables[:, c : c + step].astype(np.int64)
    return out


def _accepts(layout: Layout, z_flat: np.ndarray, box_sets: list[list]) -> list[np.ndarray]:
    """Per set of boxes, A[z1, z2] = 1 when z1 + z2 fits and lies in one of
    its boxes.  The pairs' sums are found once for every set: a set then tests
    each distinct sum and gathers, instead of testing every pair (a plan with
    hundreds of cell signatures spent 40 s here)."""
    sums, at = _pair_sums(layout, z_flat)
    values = layout.form_values(layout.vectors(sums))
    out = []
    for boxes in box_sets:
        inside = np.zeros(len(sums) + 1, bool)  # the last: sums that do not fit
        for lo, hi in boxes:
            inside[:-1] |= ((values >= np.array(lo)) & (values <= np.array(hi))).all(axis=-1)
        out.append(inside[at])
    return out


def _pair_sums(layout: Layout, z_flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The flat sums z1 + z2 (clamped) that fit, ascending, and for each pair
    of ``z_flat`` the place of its sum there (``len(sums)`` where it does not
    fit): one matrix, int32 where the feature space allows, mapped in place."""
    zv = small_vectors(layout, z_flat)
    size = int(np.prod(layout.dims, dtype=np.int64))
    dtype = np.int32 if size < 1 << 31 else np.int64
    at = np.empty((len(z_flat), len(z_flat)), dtype)
    for b in range(0, len(z_flat), 256):
        z, fits = layout.add_flat(z_flat[b : b + 256], zv[b : b + 256], z_flat, zv)
        at[b : b + 256] = np.where(fits, z, size)
    if size > _DENSE_SUMS * at.size:  # a feature space far larger than the pairs: sort their sums instead
        sums, inverse = np.unique(at, return_inverse=True)  # ``size`` (does not fit) sorts last
        return sums[sums < size], inverse.reshape(at.shape).astype(dtype)
    present = np.zeros(size + 1, bool)
    present[at.reshape(-1)] = True
    sums = np.flatnonzero(present[:size])
    place = np.full(size + 1, len(sums), dtype)
    place[sums] = np.arange(len(sums), dtype=dtype)
    for b in range(0, len(z_flat), 256):
        at[b : b + 256] = place[at[b : b + 256]]
    return sums, at
