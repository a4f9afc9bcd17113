"""A paired listing whose cells are never listed: seats read by length, by no shape.

North at most 7 losers, South and East at most 8: losers read each suit's
length, so the three seats are listed by pattern, and every pattern is
allowed.  Their cells (pattern tuples that fit in 13 cards a suit) number
37,478,624, and the paired listing (:mod:`truedeal.listing.paired`) keeps a
row for each.  But where no shape and no length atom tells cells apart
(:func:`seat_classes`), one cell signature holds for every cell, and
whether a cell fits is each seat's own pattern mask.
A seat's pattern is its spades+hearts lengths and its diamonds+clubs
lengths.  So the cells of one spades+hearts column pair ``p1`` (a **group**)
are every diamonds+clubs column pair ``p2`` whose lengths complete each
seat's to a pattern of its mask: a list fixed by the group's **key**, for
each seat the set of diamonds+clubs lengths that its spades+hearts lengths
allow.  The listing keeps one list per key (2,744 keys at most for three
seats), not one per group:

    V_K = sum of T2[p2] over the key's list
    Y_K = V_K A                          (one signature: one accept matrix)
    W_q = T1[p1] . Y_K                   (K the key of group q)

A draw descends as in the paired listing (:mod:`truedeal.paired_sampling`):
group, ``z1``, ``z2``, then ``p2`` in its key's list by ``T2[p2][z2]``, then
the splits, options and fill of the cell ``(p1, p2)``.  So every deal that
fits is equally likely, and memory grows with column pairs, not cells.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np

from ..arrays import unique_inverse
from ..constraints.compile import Compiled, unclamped
from ..patterns import PATTERN_BY_SHD, PATTERNS
from .layout import Layout, TooWide, make_layout
from .options import SuitOptions, suit_options, suit_profile
from .paired import (
    VectorWeights,
    _check_size,
    _distinct_accepts,
    _group_sums,
    _pair_tables,
    _probe_reach,
    _reachable,
    _SparseAccepts,
    _tables_dtype,
    _unordered,
    case_indicators,
    group_weights,
)

#: Bytes of tables that the classed listings being built may still take
#: (:func:`budget`; None: one paired listing's bound): a split's parts share the one bound.
_BUDGET: ContextVar[int | None] = ContextVar("classed_budget", default=None)


@contextmanager
def budget(left: int) -> Iterator[None]:
    """Within it, a classed listing whose tables and rows of V and Y would
    pass ``left`` bytes is TooWide: a split by patterns keeps every part's
    listing, and their tables together stay within one paired listing's
    (:data:`~.paired.MAX_PAIRED_BYTES`)."""
    token = _BUDGET.set(left)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def table_bytes(listing) -> int:
    """What :func:`budget` counts of a listing (a part of a split, of any
    kind): its pair tables and rows of V and Y, where it has them."""
    return sum(getattr(listing, name).nbytes for name in ("tables", "v", "y") if isinstance(getattr(listing, name, None), np.ndarray))


def applicable(comp: Compiled) -> bool:
    """Exact specs with patterned seats, no pool and no predealt card, whose
    cells all have one signature (:func:`seat_classes`)."""
    classes = seat_classes(comp)
    return classes is not None and all(len(c) == 1 for c in classes)


def seat_classes(comp: Compiled) -> list[list[np.ndarray]] | None:
    """Each patterned seat's allowed patterns split by what the cell signature
    reads of them, or None where a signature may read two seats at once (an
    atom reading lengths with a form, or two seats' lengths), or where the
    spec is not exact, has a pool, a predealt card or no cell.  Atoms and
    shapes then read one seat each, so varying one seat at a time (the others
    at their first pattern) finds every class; one class per seat is one
    signature for every cell (``spades(north) >= 5`` beside North's losers
    only restates North's mask)."""
    if not comp.exact or not comp.patterned or comp.pooled or comp.forced or comp.dead:
        return None
    for atom in comp.atoms:
        if atom.lengths and (atom.form is not None or len({seat for _, seat, _ in atom.lengths}) > 1):
            return None
    allowed = [np.nonzero(comp.pattern_masks[seat])[0] for seat in comp.patterned]
    if not all(len(a) for a in allowed):
        return None
    base = np.array([a[0] for a in allowed], np.int64)
    classes = []
    for i, a in enumerate(allowed):
        varied = np.repeat(base[None, :], len(a), axis=0)
        varied[:, i] = a
        _, which = unique_inverse(comp.cell_signatures(varied)[0])
        classes.append([a[which == k] for k in range(int(which.max()) + 1)])
    return classes


def signature_split(comp: Compiled, max_parts: int) -> tuple[int, list[np.ndarray]] | None:
    """``(seat, pattern sets)`` where one seat's classes (:func:`seat_classes`)
    are all that keeps the cells from one signature, at most ``max_parts``
    of them: "a five-card major" beside losers.  Listed one class at a time,
    each part has one signature.  None otherwise."""
    classes = seat_classes(comp)
    if classes is None:
        return None
    split = [i for i, c in enumerate(classes) if len(c) > 1]
    if len(split) != 1 or len(classes[split[0]]) > max_parts:
        return None
    return comp.patterned[split[0]], classes[split[0]]


@dataclass
class ClassedListing:
    """What counting and :class:`~truedeal.paired_sampling.ClassedSampler` read.
    A group is an ordered spades+hearts column pair; a run entry an ordered
    diamonds+clubs column pair of one key's list."""

    layout: Layout
    col_lengths: np.ndarray  # (n_cols, n_patterned) each column's lengths
    options: list[SuitOptions]  # per column
    g: VectorWeights
    z_flat: np.ndarray
    pairs: np.ndarray  # (n_tables,) the unordered column pair of each table (low * n_cols + high)
    tables: np.ndarray  # (n_tables, n_z): one per unordered column pair; its dtype holds the cases' tables too
    group_cols: np.ndarray  # (n_q, 2) the spades and hearts columns of each group
    group_table: np.ndarray  # (n_q,) the table of each group's pair
    group_key: np.ndarray  # (n_q,) each group's key: its row of v and y
    run_cols: np.ndarray  # (n_entries, 2) the diamonds and clubs columns of each entry
    run_table: np.ndarray  # (n_entries,) the table of each entry's pair
    run_start: np.ndarray  # (n_keys + 1,) each key's run of entries
    accept: list[np.ndarray]  # the one signature's accept matrix
    v: np.ndarray  # (n_keys, n_z)
    y: np.ndarray  # (n_keys, n_z)
    e_weight: list[int]  # W per group
    total: int
    n_cells: int  # the cells the groups and runs stand for
    #: what :attr:`cases` counts from, until it has
    _case_g: VectorWeights | None = field(default=None, repr=False)
    _cases: int | None = None

    @property
    def deals(self) -> int:
        return self.total * self.layout.free_ways()

    @property
    def group_sig(self) -> np.ndarray:
        return np.zeros(len(self.group_table), np.int64)

    @property
    def v_of(self) -> np.ndarray:
        return self.group_key

    @property
    def y_of(self) -> np.ndarray:
        return self.group_key

    @property
    def cases(self) -> int:
        """Pavlicek's number of cases, counted on first use (drawing never needs it)."""
        if self._cases is None:
            assert self._case_g is not None
            self._cases = sum(_weights(self, self._case_g, self.accept))
            self._case_g = None
        return self._cases

    def make_sampler(self):
        from ..paired_sampling import ClassedSampler

        return ClassedSampler(self)


def build_classed(comp: Compiled) -> ClassedListing:
    """The classed listing of ``comp`` (:func:`applicable`); TooWide past the
    paired listing's limits (:data:`~.paired.MAX_PAIR_STATES`, :data:`~.paired.MAX_PAIRED_BYTES`)."""
    if not applicable(comp):
        raise TooWide("a classed listing needs patterned seats read by no shape")
    layout = make_layout(unclamped(comp))
    columns, col_suits = _columns(comp, layout)
    col_lengths = np.array([c[1:] for c in columns], np.int64).reshape(len(columns), len(layout.patterned))
    options: list[SuitOptions] = []
    for probe in (32, 128, len(columns)):  # refuse a layout too wide before every column's options are made
        options += [suit_options(c, layout) for c in columns[len(options) : probe]]
        _probe_reach(options, layout)
    g = VectorWeights.of([(o.vflat, o.weight) for o in options], layout.zsize)
    z_flat = _reachable(g, layout)
    frame = _Frame.of(comp, layout, col_lengths, col_suits)
    pairs, group_table, run_table = frame.tables(len(columns))
    cases_g = case_indicators(options, layout)
    limit = _BUDGET.get()
    _check_size(len(z_flat), len(pairs), 2 * frame.n_keys, np.dtype(np.uint32), limit)
    dtype = np.result_type(*[_tables_dtype(x, pairs, len(columns), z_flat, layout) for x in (g, cases_g)])
    _check_size(len(z_flat), len(pairs), 2 * frame.n_keys, dtype, limit)
    accept = _one_accept(comp, layout, z_flat, frame.representative(col_lengths))
    tables = _pair_tables(g, pairs, len(columns), z_flat, layout, dtype)
    v, y = _v_and_y(tables, frame.run_start, run_table, accept)
    weights = group_weights(tables, y, group_table, frame.group_key)
    return ClassedListing(layout, col_lengths, options, g, z_flat, pairs, tables, frame.group_cols, group_table, frame.group_key,
                          frame.run_cols, run_table, frame.run_start, accept, v, y, weights, sum(weights), frame.n_cells,
                          cases_g)


def _columns(comp: Compiled, layout: Layout) -> tuple[list[tuple[int, ...]], dict[int, list[int]]]:
    """Every column ``(profile suit, lengths...)`` the seats' masks allow in
    some suit of its profile (named as :func:`~.cells.suit_columns` names
    them), and for each suit the columns it may take."""
    profiles = [suit_profile(layout, k) for k in range(4)]
    first = [profiles.index(p) for p in profiles]
    allowed = [PATTERNS[np.nonzero(comp.pattern_masks[seat])[0]] for seat in layout.patterned]
    full = len(layout.patterned) == 4  # no other seat takes the rest of a suit
    columns: list[tuple[int, ...]] = []
    of_suit: dict[int, list[int]] = {k: [] for k in range(4)}
    for f in sorted(set(first)):
        suits = [k for k in range(4) if first[k] == f]
        for ls in itertools.product(*[sorted(set(a[:, suits].reshape(-1).tolist())) for a in allowed]):
            takers = [k for k in suits if all(np.any(a[:, k] == n) for a, n in zip(allowed, ls))]
            if takers and (sum(ls) == 13 if full else sum(ls) <= 13):
                for k in takers:
                    of_suit[k].append(len(columns))
                columns.append((f, *ls))
    return columns, of_suit


@dataclass
class _Frame:
    """The groups (ordered spades+hearts column pairs), their keys, and each
    key's list of ordered diamonds+clubs column pairs."""

    group_cols: np.ndarray
    group_key: np.ndarray
    run_cols: np.ndarray
    run_start: np.ndarray
    n_cells: int

    @property
    def n_keys(self) -> int:
        return len(self.run_start) - 1

    @classmethod
    def of(cls, comp: Compiled, layout: Layout, col_lengths: np.ndarray, of_suit: dict[int, list[int]]) -> _Frame:
        sets = [_SeatSets.of(comp.pattern_masks[seat]) for seat in layout.patterned]
        p1 = _ordered_pairs(of_suit[0], of_suit[1], col_lengths)
        p2 = _ordered_pairs(of_suit[2], of_suit[3], col_lengths)
        ids = np.stack([s.ids[col_lengths[p1[:, 0], i], col_lengths[p1[:, 1], i]] for i, s in enumerate(sets)], axis=1)
        live = (ids >= 0).all(axis=1)
        p1, ids = p1[live], ids[live]
        _, group_key = unique_inverse(_key_codes(ids, sets))
        first = np.unique(group_key, return_index=True)[1]
        entries = _key_lists(ids[first], p1[first], p2, col_lengths, sets)
        # keys whose list is empty have no cell: their groups go
        sizes = np.array([len(e) for e in entries], np.int64)
        kept = np.nonzero(sizes)[0]
        live = np.isin(group_key, kept)
        run = np.concatenate([entries[k] for k in kept]) if len(kept) else np.zeros(0, np.int64)
        group_key = np.searchsorted(kept, group_key[live])
        starts = np.concatenate([[0], np.cumsum(sizes[kept])])
        return cls(p1[live], group_key, p2[run].reshape(-1, 2), starts, int(sizes[kept][group_key].sum()))

    def tables(self, n_cols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The unordered column pairs whose tables the listing reads, and the
        table of each group and of each run entry."""
        pairs, which = unique_inverse(np.concatenate([_unordered(self.group_cols, n_cols), _unordered(self.run_cols, n_cols)]))
        which = which.reshape(-1)
        return pairs, which[: len(self.group_cols)], which[len(self.group_cols) :]

    def representative(self, col_lengths: np.ndarray) -> np.ndarray | None:
        """One cell (pattern per seat) of the listing, None when it has none."""
        if not len(self.group_cols):
            return None
        a, b = self.group_cols[0]
        c, _ = self.run_cols[self.run_start[self.group_key[0]]]
        return PATTERN_BY_SHD[col_lengths[a], col_lengths[b], col_lengths[c]]


@dataclass(frozen=True)
class _SeatSets:
    """One seat's sets of diamonds+clubs lengths, by its spades+hearts lengths:
    ``ids[s, h]`` (-1: no pattern) and ``member[id, d, c]``."""

    ids: np.ndarray  # (14, 14)
    member: np.ndarray  # (n_ids, 14, 14) bool

    @classmethod
    def of(cls, mask: np.ndarray) -> _SeatSets:
        by_sh: dict[tuple[int, int], set[tuple[int, int]]] = {}
        for s, h, d, c in PATTERNS[np.nonzero(mask)[0]].tolist():
            by_sh.setdefault((s, h), set()).add((d, c))
        ids = np.full((14, 14), -1, np.int64)
        distinct: dict[frozenset, int] = {}
        for sh, dc in by_sh.items():
            ids[sh] = distinct.setdefault(frozenset(dc), len(distinct))
        member = np.zeros((max(len(distinct), 1), 14, 14), bool)
        for lengths, k in distinct.items():
            for d, c in lengths:
                member[k, d, c] = True
        return cls(ids, member)


def _key_lists(rows: np.ndarray, p1: np.ndarray, p2: np.ndarray, col_lengths: np.ndarray,
               sets: list[_SeatSets]) -> list[np.ndarray]:
    """Each key's list: the diamonds+clubs pairs ``p2`` (their indices) that
    complete, seat by seat, the spades+hearts lengths of ``p1`` (one group of
    the key, row by row) to a pattern of the key's sets ``rows``.  A key's
    list lies in one class of ``p2``: each seat's diamonds+clubs lengths add
    up to 13 less its spades+hearts, so each key tests its class alone."""
    need = _class_codes(13 - col_lengths[p1[:, 0]] - col_lengths[p1[:, 1]])
    have = _class_codes(col_lengths[p2[:, 0]] + col_lengths[p2[:, 1]])
    order = np.argsort(have, kind="stable")
    lo, hi = np.searchsorted(have[order], need), np.searchsorted(have[order], need, side="right")
    lists = []
    for row, a, b in zip(rows, lo, hi):
        at = order[a:b]
        fits = np.ones(len(at), bool)
        for i, s in enumerate(sets):
            fits &= s.member[row[i], col_lengths[p2[at, 0], i], col_lengths[p2[at, 1], i]]
        lists.append(at[fits])
    return lists


def _ordered_pairs(first: list[int], second: list[int], col_lengths: np.ndarray) -> np.ndarray:
    """(n, 2): the columns of two suits whose lengths fit in 13 cards for every seat."""
    grid = np.meshgrid(np.array(first, np.int64), np.array(second, np.int64), indexing="ij")
    a, b = grid[0].reshape(-1), grid[1].reshape(-1)
    fits = (col_lengths[a] + col_lengths[b] <= 13).all(axis=1)
    return np.stack([a[fits], b[fits]], axis=1)


def _class_codes(lengths: np.ndarray) -> np.ndarray:
    """One integer per row of per-seat lengths (0 to 13)."""
    return lengths @ (14 ** np.arange(lengths.shape[1], dtype=np.int64))


def _key_codes(ids: np.ndarray, sets: list[_SeatSets]) -> np.ndarray:
    """One integer per row of per-seat set ids."""
    code = np.zeros(len(ids), np.int64)
    for i, s in enumerate(sets):
        code = code * len(s.member) + ids[:, i]
    return code


def _one_accept(comp: Compiled, layout: Layout, z_flat: np.ndarray, cell: np.ndarray | None) -> list[np.ndarray]:
    """The accept matrix of the one cell signature (all False when no cell can fit)."""
    if cell is None or not comp.cell_possible(cell[None, :])[0]:
        return [np.zeros((len(z_flat), len(z_flat)), bool)]
    _, keys = comp.cell_signatures(cell[None, :])
    accept, _ = _distinct_accepts(layout, z_flat, keys)
    return accept


def _v_and_y(tables: np.ndarray, run_start: np.ndarray, run_table: np.ndarray,
             accept: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """V (each key's sum of its entries' tables) and Y = V A."""
    n_keys = len(run_start) - 1
    v = _group_sums(tables, np.repeat(np.arange(n_keys), np.diff(run_start)), run_table, n_keys)
    return v, np.ascontiguousarray(_SparseAccepts(accept)[0].times(v))  # (a transposed view: the sampler reads rows)


def _weights(listing: ClassedListing, g: VectorWeights, accept: list[np.ndarray]) -> list[int]:
    """W per group for the per-column tables ``g`` (the case indicators': Pavlicek's cases)."""
    tables = _pair_tables(g, listing.pairs, len(listing.col_lengths), listing.z_flat, listing.layout, listing.tables.dtype)
    _, y = _v_and_y(tables, listing.run_start, listing.run_table, accept)
    return group_weights(tables, y, listing.group_table, listing.group_key)
