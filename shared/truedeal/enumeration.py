"""Pavlicek's listing of cases, organised by pattern tuple and factored by suit.

A *case* (Pavlicek 2008) fixes, for every constrained seat, its suit pattern
(when the seat constrains shape or suit lengths) and its A-K-Q-J holding
(when it constrains HCP).  Its weight is the number of ways to deal the
constrained seats' cards consistently; the unconstrained seats then take the
rest in ``multinomial(13u; 13, ..)`` ways.

Listing every case explicitly costs memory in proportion to their number
(62 million for his largest example).  Instead the listing here is factored:

* A **cell** is a tuple of patterns, one per patterned seat.
* Given a cell, each suit is independent apart from a small **feature
  vector** it contributes: each HCP seat's HCP in that suit and, when some
  seat is constrained by HCP alone (a *pooled* seat, whose spot cards come
  from a common pool as in Pavlicek's 36c12 formulas), the honour counts that
  decide the pool.  A suit **option** is one way to give honours to the HCP
  seats (and a count of free honours to the shape-only seats); its weight
  ``F`` counts the ways to deal that suit's cards to the patterned seats.
* Spades+hearts and diamonds+clubs are combined into dense tables ``T1`` and
  ``T2`` over the feature space (meet in the middle), and a **level-0 entry**
  ``(cell, C, z1)`` -- ``C`` the pool's honour counts, ``z1`` the
  spades+hearts features -- carries the exact weight
  ``G(C) * T1[z1] * sum(T2[z2] for z2 completing z1 within the constraints)``.

Exact integers throughout: int64 where a bound proves it cannot overflow,
Python ints above that.  Memory grows with cells x feature-space size, not
with the number of cases.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from math import comb, factorial, prod

import numpy as np

from .cards import N_CARDS
from .constraints import ir
from .constraints.compile import Compiled, compile_program, rules_program
from .patterns import PATTERN_BY_SHD, PATTERNS

#: Limits that keep a build within memory; exceeding one is a clear error.
MAX_CELLS = 2_000_000
MAX_FEATURE_CELLS = 6_000_000  # columns x feature-space size, and pairs x size
MAX_ENTRIES = 3_000_000

_FACT = np.array([factorial(i) for i in range(21)], dtype=object)
_FACT64 = np.array([factorial(i) for i in range(21)], dtype=np.int64)


class TooWide(ValueError):
    """The spec's exact listing would exceed the memory limits."""


@dataclass
class Layout:
    """Which seat plays which role, and the feature space they span.

    The first ``n_box`` dims are the forms of :mod:`truedeal.constraints.compile`
    (range-queried; ``clamp[d]``: the last value means "that or more"), the rest
    the pool's honour counts (matched exactly)."""

    comp: Compiled
    patterned: tuple[int, ...]  # seats with a pattern set, seat order
    rank_seats: tuple[int, ...]  # seats whose tracked cards are dealt explicitly
    pooled: tuple[int, ...]  # rank seats with no pattern set
    shape_only: tuple[int, ...]  # pattern set but no tracked cards
    free: tuple[int, ...]  # unconstrained seats
    dims: tuple[int, ...]  # feature sizes: form dims, then exact dims
    n_box: int  # the first n_box dims are forms (range dims)
    clamp: tuple[bool, ...] = ()
    #: the roles as the compiled fill reads them (built once by :mod:`truedeal.fill`)
    fill_roles: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def zsize(self) -> int:
        return prod(self.dims)

    @property
    def strides(self) -> np.ndarray:
        return _strides(self.dims)

    @property
    def n_tracked(self) -> int:
        return self.comp.n_tracked

    def forced(self, seat: int, suit: int | None = None) -> int:
        """Cards predealt to ``seat`` (in ``suit``): its pool coordinate counts
        only the tracked cards beyond them, which keeps that coordinate short."""
        return sum(1 for (k, _), s in self.comp.forced.items() if s == seat and suit in (None, k))

    def forced_patterned(self, suit: int | None = None) -> int:
        """Cards predealt to patterned seats (in ``suit``), likewise left out of the last coordinate."""
        return sum(self.forced(s, suit) for s in self.patterned)

    def vectors(self, flat: np.ndarray) -> np.ndarray:
        """Feature vectors ``(n, ndims)`` of flat indices."""
        flat = np.asarray(flat, dtype=np.int64)
        if not self.dims:
            return np.zeros((len(flat), 0), dtype=np.int64)
        return np.stack(np.unravel_index(flat, self.dims), axis=1).astype(np.int64)

    def add(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``a + b`` for feature vectors (clamping clamped forms), and which sums fit."""
        z = a + b
        if any(self.clamp):
            cap = np.array([d - 1 if c else 10**9 for d, c in zip(self.dims, self.clamp)] + [10**9] * (len(self.dims) - self.n_box))
            z = np.minimum(z, cap)
        return z, (z < np.array(self.dims, dtype=np.int64)).all(axis=-1)

    def open_top(self, hi: np.ndarray) -> np.ndarray:
        """Box upper bounds with clamped tops opened ("that or more")."""
        top = np.array([d - 1 if c else -1 for d, c in zip(self.dims[: self.n_box], self.clamp)], dtype=np.int64)
        return np.where(hi == top, 10**9, hi)

    @property
    def has_pool(self) -> bool:
        return bool(self.pooled)

    def pool_factor(self, c_pooled: tuple[int, ...], c_pat: int) -> int:
        """G: ways to give the pooled seats their spot cards, or 0 if impossible."""
        n_pat = len(self.patterned)
        c_pat += self.forced_patterned()
        s_rem = N_CARDS - self.n_tracked - 13 * n_pat + c_pat
        c_pooled = tuple(c + self.forced(s) for c, s in zip(c_pooled, self.pooled))
        t = [13 - c for c in c_pooled]
        u = s_rem - sum(t)
        c_free = self.n_tracked - c_pat - sum(c_pooled)
        if min(t, default=0) < 0 or u < 0 or c_free < 0 or s_rem < 0:
            return 0
        out = factorial(s_rem) // factorial(u)
        for x in t:
            out //= factorial(x)
        return out

    def free_ways(self) -> int:
        """Ways to split the unconstrained seats' cards among them."""
        n = len(self.free)
        return factorial(13 * n) // factorial(13) ** n


def as_compiled(spec_like) -> Compiled:
    """A :class:`Compiled` from itself, a Program, or a list of seat rules."""
    if isinstance(spec_like, Compiled):
        return spec_like
    if isinstance(spec_like, ir.Program):
        return compile_program(spec_like)
    return compile_program(rules_program(spec_like))


def make_layout(spec_like) -> Layout:
    comp = as_compiled(spec_like)
    dims = [f.dim for f in comp.forms]
    if comp.pooled:
        dims += [max(0, comp.pool_bounds[s] - sum(1 for v in comp.forced.values() if v == s)) + 1 for s in comp.pooled]
        # tracked cards held by patterned seats, beyond their predealt ones
        forced_pat = sum(1 for v in comp.forced.values() if v in comp.patterned)
        dims.append(min(comp.n_tracked, 13 * len(comp.patterned)) - forced_pat + 1 if comp.patterned else 1)
    return Layout(
        comp=comp,
        patterned=comp.patterned,
        rank_seats=comp.rank_seats,
        pooled=comp.pooled,
        shape_only=comp.shape_only,
        free=comp.free,
        dims=tuple(dims),
        n_box=len(comp.forms),
        clamp=tuple(f.clamp for f in comp.forms),
    )


# --------------------------------------------------------------------------- cells


def enumerate_cells(spec_like, layout: Layout) -> np.ndarray:
    """All pattern tuples (one pattern index per patterned seat) whose suit
    lengths fit in 13 cards per suit and for which the condition can hold.
    Shape ``(n_cells, n_patterned)``."""
    masks = layout.comp.pattern_masks
    cells = np.zeros((1, 0), dtype=np.int64)
    sums = np.zeros((1, 4), dtype=np.int64)
    for seat in layout.patterned:
        if len(layout.patterned) == 4 and seat == layout.patterned[-1]:
            return _complete_cells(layout, cells, sums)
        choices = np.nonzero(masks[seat])[0]
        if len(cells) * len(choices) > 50 * MAX_CELLS:
            raise TooWide(f"too many pattern combinations ({len(cells) * len(choices):,}) to list exactly")
        new_sums = sums[:, None, :] + PATTERNS[choices][None, :, :]
        ok = (new_sums <= 13).all(axis=2)
        i, j = np.nonzero(ok)
        cells = np.concatenate([cells[i], choices[j][:, None]], axis=1)
        sums = new_sums[i, j]
        if len(cells) > MAX_CELLS:
            raise TooWide(f"too many pattern combinations ({len(cells):,}) to list exactly")
    return cells[layout.comp.cell_possible(PATTERNS[cells])]


def _complete_cells(layout: Layout, cells: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """Cells of four patterned seats from the first three's: the last seat
    holds the rest of each suit, so its pattern is forced (no cross product)."""
    rest = 13 - sums
    last = PATTERN_BY_SHD[rest[:, 0], rest[:, 1], rest[:, 2]]
    ok = layout.comp.pattern_masks[layout.patterned[-1]][last]
    cells = np.concatenate([cells[ok], last[ok][:, None]], axis=1)
    return cells[layout.comp.cell_possible(PATTERNS[cells])]


# ------------------------------------------------------------------ suit options


@dataclass
class SuitOptions:
    """Every way one suit can go, for one column of patterned-seat lengths."""

    masks: np.ndarray  # (n, n_rank) honour masks of the rank seats (bit j: j-th tracked rank)
    free_to_shape: np.ndarray  # (n,) free tracked cards the shape-only seats take; -1: any (no pool)
    weight: np.ndarray  # (n,) int64, F
    v: np.ndarray  # (n, ndims) feature vector
    vflat: np.ndarray  # (n,) flat index of v


def suit_profile(comp: Compiled, suit: int) -> tuple:
    """What distinguishes one suit from another for the options: its tracked
    ranks, its predealt cards and which form terms read it.  Suits with equal
    profiles share their option tables."""
    forced = tuple(sorted((r, s) for (k, r), s in comp.forced.items() if k == suit))
    reads = tuple(suit in t.suits for f in comp.forms for t in f.terms)
    return (comp.tracked[suit], forced, reads)


def _assignments(layout: Layout, suit: int):
    """Every way to send the suit's tracked cards to a rank seat or to 'free'
    (predealt cards go to their seat only)."""
    n_rank = len(layout.rank_seats)
    tracked = layout.comp.tracked[suit]
    choices = []
    for r in tracked:
        seat = layout.comp.forced.get((suit, r))
        choices.append([layout.rank_seats.index(seat)] if seat is not None else range(n_rank + 1))
    combos = list(itertools.product(*choices))
    dest = np.array(combos, dtype=np.int64).reshape(len(combos), len(tracked))
    bits = 1 << np.arange(len(tracked), dtype=np.int64)
    masks = np.stack([((dest == i) * bits).sum(axis=1) for i in range(n_rank)], axis=1) if n_rank else np.zeros((len(dest), 0), np.int64)
    pcs = np.stack([(dest == i).sum(axis=1) for i in range(n_rank)], axis=1) if n_rank else np.zeros((len(dest), 0), np.int64)
    free = (dest == n_rank).sum(axis=1)
    return masks, pcs, free


def _form_values(layout: Layout, suit: int, lengths: dict[int, int], masks: np.ndarray) -> np.ndarray:
    """Each option's contribution to each form, ``(n, n_forms)``."""
    tracked = layout.comp.tracked[suit]
    held = [frozenset(tracked[j] for j in range(len(tracked)) if m >> j & 1) for m in range(1 << len(tracked))]
    out = np.zeros((len(masks), layout.n_box), dtype=np.int64)
    for f, form in enumerate(layout.comp.forms):
        for t in form.terms:
            if suit not in t.suits:
                continue
            length = lengths.get(t.seat, 0)
            lut = np.array([t.value(suit, length, h) for h in held], dtype=np.int64)
            out[:, f] += lut[masks[:, layout.rank_seats.index(t.seat)]]
    return out


def suit_options(column: tuple[int, ...], layout: Layout) -> SuitOptions:
    """Options for one suit; ``column`` is (a suit with this profile, then the
    patterned seats' lengths)."""
    suit, lengths = column[0], column[1:]
    masks, pcs, free = _assignments(layout, suit)
    n_spots = 13 - len(layout.comp.tracked[suit])
    length_of = dict(zip(layout.patterned, lengths))
    forms = _form_values(layout, suit, length_of, masks)
    ok = np.ones(len(masks), dtype=bool)
    for f in range(layout.n_box):
        if layout.clamp[f]:
            forms[:, f] = np.minimum(forms[:, f], layout.dims[f] - 1)
        else:
            ok &= forms[:, f] < layout.dims[f]
    spots = np.zeros((len(masks), 0), dtype=np.int64)
    ph_cols = []
    for i, seat in enumerate(layout.rank_seats):
        if seat in length_of:
            a = length_of[seat] - pcs[:, i]
            ok &= a >= 0
            spots = np.concatenate([spots, a[:, None]], axis=1)
            ph_cols.append(i)
    free_spots = n_spots - spots.sum(axis=1)
    ok &= free_spots >= 0
    shape_lengths = [length_of[s] for s in layout.shape_only]
    total_shape = sum(shape_lengths)
    shape_split = factorial(total_shape) // prod(factorial(x) for x in shape_lengths)
    spot_ways = np.zeros(len(masks), dtype=np.int64)
    a_fact = _FACT64[np.clip(spots, 0, 20)].prod(axis=1) if spots.shape[1] else np.ones(len(masks), np.int64)
    fs = np.clip(free_spots, 0, 20)
    spot_ways[ok] = _FACT64[n_spots] // (a_fact[ok] * _FACT64[fs[ok]])
    pc_ph = pcs[:, ph_cols].sum(axis=1) if ph_cols else np.zeros(len(masks), np.int64)
    parts = []
    # Without a pool, how many free tracked cards the shape-only seats take
    # changes no feature, so options sum over it (Vandermonde): free_to_shape = -1.
    hs = range(0, min(len(layout.comp.tracked[suit]), total_shape) + 1) if layout.has_pool else [-1]
    for h in hs:
        if h < 0:
            okh = ok & (free + free_spots >= total_shape)
        else:
            okh = ok & (free >= h) & (free_spots >= total_shape - h)
        if not okh.any():
            continue
        idx = np.nonzero(okh)[0]
        if h < 0:
            w = spot_ways[idx] * np.array([comb(int(f), total_shape) for f in free[idx] + free_spots[idx]], dtype=np.int64)
        else:
            w = spot_ways[idx] * np.array([comb(int(f), h) for f in free[idx]], dtype=np.int64)
            w *= np.array([comb(int(f), total_shape - h) for f in free_spots[idx]], dtype=np.int64)
        w *= shape_split
        feats = [forms[idx]]
        if layout.has_pool:
            pool_cols = [layout.rank_seats.index(s) for s in layout.pooled]
            forced = np.array([layout.forced(s, suit) for s in layout.pooled], dtype=np.int64)
            feats.append(pcs[idx][:, pool_cols] - forced)
            patterned = (pc_ph[idx] + h - layout.forced_patterned(suit))[:, None] if layout.patterned else None
            feats.append(np.zeros((len(idx), 1), np.int64) if patterned is None else patterned)
        v = np.concatenate(feats, axis=1) if feats else np.zeros((len(idx), 0), np.int64)
        inside = (v < np.array(layout.dims)).all(axis=1) if v.shape[1] else np.ones(len(idx), bool)
        idx, w, v = idx[inside], w[inside], v[inside]
        parts.append((masks[idx].astype(np.uint16), np.full(len(idx), h, np.int8), w, v))
    if not parts:
        ndim = len(layout.dims)
        n_rank = len(layout.rank_seats)
        return SuitOptions(np.zeros((0, n_rank), np.uint16), np.zeros(0, np.int8), np.zeros(0, np.int64),
                           np.zeros((0, ndim), np.int64), np.zeros(0, np.int64))
    all_masks, all_feats, all_weights, all_vecs = (np.concatenate(x) for x in zip(*parts))
    order = np.argsort(all_vecs @ layout.strides, kind="stable")
    all_vecs = all_vecs[order]
    return SuitOptions(all_masks[order], all_feats[order], all_weights[order], all_vecs, all_vecs @ layout.strides)


# --------------------------------------------------------------------- the listing


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
    _cases: int | None = None

    @property
    def cases(self) -> int:
        """Pavlicek's number of cases, counted on first use (drawing never needs it)."""
        if self._cases is None:
            from .cases import count_cases  # cases.py builds on this module's tables

            self._cases = count_cases(self)
        return self._cases

    @property
    def deals(self) -> int:
        return self.total * self.layout.free_ways()


def _columns(cells: np.ndarray, layout: Layout):
    """Distinct suit columns ``(profile suit, patterned lengths...)`` and each
    cell's column per suit.  Suits of one profile (:func:`suit_profile`) share
    columns, named by the first suit of that profile."""
    n = len(cells)
    if n == 0:
        return [], np.zeros((0, 4), np.int64)
    profiles = [suit_profile(layout.comp, k) for k in range(4)]
    first = np.array([profiles.index(p) for p in profiles], dtype=np.int64)
    lengths = PATTERNS[cells] if layout.patterned else np.zeros((n, 0, 4), np.int64)  # (n, n_pat, 4)
    cols = np.transpose(lengths, (0, 2, 1)).reshape(n * 4, -1)  # (cell, suit) -> lengths
    cols = np.concatenate([np.tile(first, n)[:, None], cols], axis=1)
    # Rows of values below 16 as base-16 keys: the same sorted order as
    # np.unique(axis=0), which sorts rows far more slowly.
    keys = cols @ (16 ** np.arange(cols.shape[1] - 1, -1, -1, dtype=np.int64))
    uniq, first_at, inv = np.unique(keys, return_index=True, return_inverse=True)
    return [tuple(int(x) for x in cols[i]) for i in first_at], inv.reshape(n, 4)


def pair_table(ga: np.ndarray, gb: np.ndarray, layout: Layout) -> np.ndarray:
    """T[z] = sum over va + vb = z of ga[va] * gb[vb] (dense, int64)."""
    out = np.zeros(layout.zsize, dtype=np.int64)
    ia, ib = np.nonzero(ga)[0], np.nonzero(gb)[0]
    if not len(ia) or not len(ib):
        return out
    va, vb = layout.vectors(ia), layout.vectors(ib)
    z, ok = layout.add(va[:, None, :], vb[None, :, :])
    i, j = np.nonzero(ok)
    np.add.at(out, z[i, j] @ layout.strides, ga[ia[i]] * gb[ib[j]])
    return out


def prefix_sums(table: np.ndarray, layout: Layout) -> np.ndarray:
    """Summed-area table of a flat dense table along its range (HCP) axes,
    with a zero slice in front of each, for :func:`box_sums`."""
    t = table.reshape(layout.dims)
    for d in range(layout.n_box):
        t = np.concatenate([np.zeros_like(np.take(t, [0], axis=d)), np.cumsum(t, axis=d)], axis=d)
    return t


def box_sums(prefix: np.ndarray, layout: Layout, z1: np.ndarray, lo: np.ndarray, hi: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """For each row r: the sum of ``table[z2]`` over the z2 that complete ``z1[r]``:
    each range coordinate d has ``lo[r, d] <= z1[r, d] + z2[d] <= hi[r, d]`` and each
    other coordinate e has ``z1[r, e] + z2[e] == exact[r, e']``.

    ``prefix`` is :func:`prefix_sums` of the table.  Exact in int64 provided
    the table's total fits, which callers ensure.
    """
    nb = layout.n_box
    dims = layout.dims
    n = len(z1)
    out = np.zeros(n, dtype=prefix.dtype)
    lo2 = np.maximum(lo - z1[:, :nb], 0)
    hi2 = np.minimum(layout.open_top(hi) - z1[:, :nb], np.array(dims[:nb], dtype=np.int64) - 1)
    ex = exact - z1[:, nb:]
    valid = (lo2 <= hi2).all(axis=1) & (ex >= 0).all(axis=1) & (ex < np.array(dims[nb:], dtype=np.int64)).all(axis=1)
    if not valid.any():
        return out
    lo2, hi2, ex = lo2[valid], hi2[valid], ex[valid]
    acc = np.zeros(len(lo2), dtype=prefix.dtype)
    exact_idx = tuple(ex[:, e] for e in range(ex.shape[1]))
    for corner in itertools.product((0, 1), repeat=nb):
        idx = tuple(hi2[:, d] + 1 if c else lo2[:, d] for d, c in enumerate(corner))
        if (nb - sum(corner)) % 2:
            acc -= prefix[idx + exact_idx]
        else:
            acc += prefix[idx + exact_idx]
    out[valid] = acc
    return out


def _c_values(layout: Layout) -> np.ndarray:
    """Every vector of pool honour totals (the exact dims), in flat order."""
    exact_dims = layout.dims[layout.n_box :]
    vals = list(itertools.product(*(range(d) for d in exact_dims)))
    return np.array(vals, dtype=np.int64).reshape(len(vals), len(exact_dims))


def pool_factors(layout: Layout, c_values: np.ndarray) -> list[int]:
    """G for each row of :func:`_c_values` (1 everywhere without a pool)."""
    if not layout.has_pool:
        return [1] * len(c_values)
    return [layout.pool_factor(tuple(int(x) for x in c[:-1]), int(c[-1])) for c in c_values]


def completions(t1s: np.ndarray, t2: np.ndarray, layout: Layout, n_exact: int):
    """Pair every nonzero ``z1`` of each table in ``t1s`` (2-D: one table per
    row) with every exact-coordinate slice present in ``t2`` (the last
    ``n_exact`` dims).  Returns, one row per pair: the t1 row, z1 flat index,
    z1 vector, and the pair's exact totals."""
    which, nz = np.nonzero(t1s)
    z1 = layout.vectors(nz)
    if not n_exact:
        return which, nz, z1, np.zeros((len(nz), 0), np.int64)
    k = len(layout.dims) - n_exact
    present = np.unique(layout.vectors(np.nonzero(t2)[0])[:, k:], axis=0)
    i = np.repeat(np.arange(len(nz)), len(present))
    totals = z1[i, k:] + np.tile(present, (len(nz), 1))
    ok = (totals < np.array(layout.dims[k:])).all(axis=1)
    i = i[ok]
    return which[i], nz[i], z1[i], totals[ok]


def level0_rows(t1s: np.ndarray, t2: np.ndarray, layout: Layout, g_of_c: list[int], boxes: list):
    """Level-0 rows of several (S,H) tables (rows of ``t1s``) against one (D,C)
    table: t1 row, z1 flat, pool totals (flat) and U, for every completion with
    a positive pool factor and U.  U sums the (D,C) table over the accepted
    ``boxes`` of the form space (disjoint)."""
    n_exact = len(layout.dims) - layout.n_box
    which, nz, z1, totals = completions(t1s, t2, layout, n_exact)
    c_flat = totals @ _strides(layout.dims[layout.n_box :])
    if n_exact:
        keep = (np.array(g_of_c, dtype=object) > 0).astype(bool)[c_flat]
        which, nz, z1, totals, c_flat = which[keep], nz[keep], z1[keep], totals[keep], c_flat[keep]
    prefix = prefix_sums(t2, layout)
    u = np.zeros(len(nz), dtype=np.int64)
    for lo, hi in box_arrays(boxes, len(nz)):
        u += box_sums(prefix, layout, z1, lo, hi, totals)
    hit = u > 0
    return which[hit], nz[hit], c_flat[hit], u[hit]


def _strides(dims: tuple[int, ...]) -> np.ndarray:
    s = np.ones(len(dims), dtype=np.int64)
    for d in range(len(dims) - 2, -1, -1):
        s[d] = s[d + 1] * dims[d + 1]
    return s


def build_listing(spec_like, progress=None) -> Listing:
    """Build the factored listing (exact; raises :class:`TooWide`) of a
    :class:`~truedeal.constraints.compile.Compiled`, a Program or seat rules."""
    layout, cells, columns, cell_cols = checked_cells(spec_like)
    listing = listing_tables(layout, cells, columns, cell_cols)
    _fill_level0(listing, progress)
    return listing


def checked_cells(spec_like) -> tuple[Layout, np.ndarray, list, np.ndarray]:
    """The layout, the cells, their suit columns and each cell's column per
    suit, once the whole listing passes the width limits (else TooWide)."""
    layout = make_layout(spec_like)
    cells = enumerate_cells(layout.comp, layout)
    columns, cell_cols = _columns(cells, layout)
    _check_width(layout, len(columns), cell_cols)
    return layout, cells, columns, cell_cols


def list_cells(layout: Layout, cells: np.ndarray, index: np.ndarray, progress=None) -> Listing:
    """The listing of the cells ``cells[index]`` alone (a slice; see
    :mod:`truedeal.slices`), ``cell_index`` mapping them to ``cells``.  A
    cell's level-0 entries are those the whole listing has for it, in the
    same order, so slices' totals, cases and entries add up to the whole's."""
    sub = cells[index]
    listing = listing_tables(layout, sub, *_columns(sub, layout))
    listing.cell_index = index
    _fill_level0(listing, progress)
    return listing


def _pair_keys(cell_cols: np.ndarray, n_columns: int) -> np.ndarray:
    """Each cell's (S,H) and (D,C) column pairs as one key, (2, n_cells)."""
    return np.stack([cell_cols[:, 0] * n_columns + cell_cols[:, 1], cell_cols[:, 2] * n_columns + cell_cols[:, 3]])


def _check_width(layout: Layout, n_columns: int, cell_cols: np.ndarray) -> None:
    """Refuse, before any option is built, tables past :data:`MAX_FEATURE_CELLS`."""
    if n_columns * layout.zsize > MAX_FEATURE_CELLS:
        raise TooWide(f"feature tables too large ({n_columns:,} suit columns x {layout.zsize:,} feature states)")
    n_pairs = len(np.unique(_pair_keys(cell_cols, n_columns)))
    if n_pairs * layout.zsize > MAX_FEATURE_CELLS:
        raise TooWide(f"suit-pair tables too large ({n_pairs:,} pairs x {layout.zsize:,} feature states)")


def listing_tables(layout: Layout, cells: np.ndarray, columns: list, cell_cols: np.ndarray) -> Listing:
    """Everything of the listing of ``cells`` but its level-0 entries: suit
    options, feature tables, pair tables and cell signatures."""
    options = [suit_options(col, layout) for col in columns]
    g = np.zeros((len(columns), layout.zsize), dtype=np.int64)
    for k, opt in enumerate(options):
        np.add.at(g[k], opt.vflat, opt.weight)
    if not len(cells) or not len(columns):  # no pattern tuple fits: nothing to list
        empty = np.zeros((0, layout.zsize), np.int64)
        return Listing(layout, cells, columns, cell_cols, options, g, [], empty, np.zeros((0, 2), np.int64), _c_values(layout))
    pair_keys, pair_inv = np.unique(_pair_keys(cell_cols, len(columns)).reshape(-1), return_inverse=True)
    pairs = [(int(k) // len(columns), int(k) % len(columns)) for k in pair_keys]
    pair_tables = np.stack([pair_table(g[a], g[b], layout) for a, b in pairs]) if pairs else np.zeros((0, layout.zsize), np.int64)
    cell_pairs = pair_inv.reshape(2, len(cells)).T
    listing = Listing(layout, cells, columns, cell_cols, options, g, pairs, pair_tables, cell_pairs, _c_values(layout))
    sig, sig_keys = layout.comp.cell_signatures(PATTERNS[cells])
    listing.cell_sig = sig
    listing.sig_boxes = [layout.comp.boxes(key) for key in sig_keys]
    return listing


def slice_of_cells(layout: Layout, cells: np.ndarray, cell_cols: np.ndarray, n_columns: int, parts: int) -> np.ndarray:
    """The slice (0 to ``parts - 1``) of each cell.

    The level-0 fill makes one vectorised pass per (D,C) suit pair and cell
    signature, so a slice takes whole groups of cells that share both
    (contiguous cell ranges would split every group and cost twice as much):
    groups in key order, cut where the running cell count crosses each
    ``n * j / parts``.
    """
    if parts < 1:
        raise ValueError(f"at least one slice, got {parts}")
    if not len(cells):
        return np.zeros(0, np.int64)
    sig, _ = layout.comp.cell_signatures(PATTERNS[cells])
    dc = _pair_keys(cell_cols, n_columns)[1]
    _, group = np.unique(dc * (int(sig.max()) + 1) + sig, return_inverse=True)
    group = group.reshape(-1)
    sizes = np.bincount(group)
    before = np.cumsum(sizes) - sizes
    return (before * parts // len(cells))[group]


def box_arrays(boxes: list, n: int):
    """Each box as (lo, hi) arrays of shape (n, n_box), one row per query."""
    for lo, hi in boxes:
        yield (np.broadcast_to(np.array(lo, dtype=np.int64).reshape(1, -1), (n, len(lo))),
               np.broadcast_to(np.array(hi, dtype=np.int64).reshape(1, -1), (n, len(hi))))


def _fill_level0(listing: Listing, progress=None) -> None:
    layout = listing.layout
    g_of_c = pool_factors(layout, listing.c_values)
    # Cells sharing a (S,H) pair, a (D,C) pair and a signature share every level-0 weight.
    keys, inv = np.unique(np.concatenate([listing.cell_pairs, listing.cell_sig[:, None]], axis=1), axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    cells_per_key = np.bincount(inv, minlength=len(keys))
    # One pass per (D,C) table, over every (S,H) table paired with it.
    key_of: dict[tuple[int, int], list] = {}
    for k, (p1, p2, sig) in enumerate(keys):
        key_of.setdefault((int(p2), int(sig)), []).append((k, int(p1)))
    rows_key: list[np.ndarray] = []
    rows_c: list[np.ndarray] = []
    rows_z: list[np.ndarray] = []
    row_w: list[int] = []
    n_entries = 0
    for done, ((p2, sig), members) in enumerate(key_of.items()):
        ks = np.array([k for k, _ in members])
        t1s = listing.pair_tables[[p1 for _, p1 in members]]
        which, z1, c_flat, u = level0_rows(t1s, listing.pair_tables[p2], layout, g_of_c, listing.sig_boxes[sig])
        # T1 < 2**42 and U < 2**50: the products need Python ints.
        a = t1s[which, z1]
        row_w.extend(g_of_c[c] * x * y for c, x, y in zip(c_flat.tolist(), a.tolist(), u.tolist()))
        rows_key.append(ks[which])
        rows_c.append(c_flat)
        rows_z.append(z1)
        n_entries += int(cells_per_key[ks[which]].sum())
        # A running count is a lower bound of the final one, so this refuses
        # exactly the listings (and slices) past the limit, in any order.
        if n_entries > MAX_ENTRIES:
            raise TooWide(f"more than {MAX_ENTRIES:,} level-0 entries; narrow the constraints")
        if progress:
            progress(done + 1, len(key_of))
    # Group rows by key, keeping each key's rows in z1 order.
    row_key = np.concatenate(rows_key) if rows_key else np.zeros(0, np.int64)
    order = np.lexsort((np.concatenate(rows_c) if rows_c else row_key, np.concatenate(rows_z) if rows_z else row_key, row_key))
    c_all = np.concatenate(rows_c)[order] if rows_c else np.zeros(0, np.int64)
    z_all = np.concatenate(rows_z)[order] if rows_z else np.zeros(0, np.int64)
    weights = [row_w[i] for i in order.tolist()]
    lens = np.bincount(row_key, minlength=len(keys)).astype(np.int64)
    # Expand key entries to cell entries, in cell order.
    starts = np.cumsum(lens) - lens
    per_cell = lens[inv]
    total = int(per_cell.sum())
    within = np.arange(total) - np.repeat(np.cumsum(per_cell) - per_cell, per_cell)
    idx = np.repeat(starts[inv], per_cell) + within
    listing.e_cell = np.repeat(np.arange(len(listing.cells)), per_cell)
    listing.e_c = c_all[idx]
    listing.e_z1 = z_all[idx]
    listing.e_weight = [weights[i] for i in idx.tolist()]
    listing.total = sum(listing.e_weight)
