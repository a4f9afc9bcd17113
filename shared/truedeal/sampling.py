"""Exact draws from a :class:`~truedeal.listing.Listing`, vectorised.

A draw descends the factored listing, each step an exact categorical choice
with integer weights (no floats anywhere):

0. a level-0 entry ``(cell, C, z1)`` with probability ``W / T`` -- one uniform
   integer below the side total ``T``, located in the cumulative totals;
1. the diamonds+clubs feature vector ``z2`` that completes ``z1``;
2. how ``z1`` splits into spades and hearts, and ``z2`` into diamonds and clubs;
3. each suit's option (the honours of the HCP seats, the free honours the
   shape-only seats take) given its feature vector;
4. the remaining cards, uniformly (:mod:`truedeal.fill`).

Each step's weights are exactly the number of deals below that choice, so the
deal that comes out is uniform over all deals that fit the spec.

Steps 0-4 have compiled forms (``truedeal._sampler``, used when
:func:`truedeal.kernel.sampler` returns it) that read the same random bytes in
the same order and make the same draws; the numpy code here is the reference
and the fallback (tests/test_kernel_sampler.py checks they agree byte for byte).
"""

from __future__ import annotations

import itertools
from itertools import accumulate
from math import prod
from typing import TYPE_CHECKING

import numpy as np

from .arrays import unique_inverse
from .errors import TooLargeToDeal
from .fill import _roles, fill_deals
from .kernel import sampler as _compiled
from .listing import Listing, prefix_sums
from .listing.tables import sig_box_arrays
from .patterns import PATTERNS
from .randomness import Rng

if TYPE_CHECKING:
    from .listing.layout import Layout
    from .listing.paired import VectorWeights

#: Largest key space given a dense table of where each key's run starts.
MAX_START_TABLE = 1 << 21
#: Fewest weights for which a level-0 draw searches a guide table first.
_GUIDED = 4096
#: The compiled level-1 search keeps a row's coordinates in fixed arrays:
#: at most this many box coordinates and exact ones (else the numpy path).
_LEVEL1_BOX, _LEVEL1_EXACT = 16, 7


def _starts(keys: np.ndarray, space: int) -> np.ndarray:
    """``searchsorted(keys, k)`` for every key k below ``space`` and for ``space``
    itself (so run k is ``[t[k], t[k + 1])``); empty when the space is too large."""
    if space > MAX_START_TABLE:
        return np.zeros(0, np.int64)
    return np.searchsorted(keys, np.arange(space + 1), side="left").astype(np.int64)


class WideCategorical:
    """Exact draws of an index with probability ``weights[i] / sum(weights)``,
    for big-integer weights: one uniform integer below the total, located in
    the cumulative totals (kept as high keys and low bits for numpy)."""

    def __init__(self, weights: list[int]) -> None:
        self.total = sum(weights)
        self.shift = max(0, self.total.bit_length() - 62)
        mask = (1 << self.shift) - 1
        cum = list(accumulate(weights))
        self.cum_hi = np.array([c >> self.shift for c in cum], dtype=np.int64)
        self.cum_lo = np.array([c & mask for c in cum], dtype=np.uint64)
        self.top = (self.total - 1) >> self.shift
        self.low_max = (self.total - 1) & mask
        # Where each run of high keys starts, per bucket of the top bits: the
        # compiled search then looks only inside one bucket (a cache miss or
        # two instead of one per halving of a long table).
        self.guide_shift = max(0, self.top.bit_length() - max(0, len(weights) - 1).bit_length() + 2)  # ~n/4 buckets
        buckets = (self.top >> self.guide_shift) + 2 if len(weights) >= _GUIDED else 0
        self.guide = np.searchsorted(self.cum_hi, np.arange(buckets, dtype=np.int64) << self.guide_shift, "left").astype(np.int64)

    def draw(self, n: int, rng: Rng) -> np.ndarray:
        k = _compiled()
        if k is not None and self.top + 1 < 1 << 63:
            out = np.empty(n, dtype=np.int64)
            k.wide_locate(rng.bits, self.top, self.low_max, self.shift, self.cum_hi, self.cum_lo, out,
                          self.guide, self.guide_shift)
            return out
        hi, lo = rng.below_wide(self.total, n, self.shift)
        right = np.searchsorted(self.cum_hi, hi, side="right")
        left = np.searchsorted(self.cum_hi, hi, side="left")
        out = right.copy()
        for r in np.nonzero(left < right)[0]:  # high keys tie: compare the low bits
            for i in range(left[r], right[r]):
                if lo[r] < self.cum_lo[i]:
                    out[r] = i
                    break
        return out


class _RowVectors(dict):
    """Row ``a`` of a listing's ``g``: its nonzero columns, their feature
    vectors and weights, made once (pairs share rows: 26,166 pairs of one
    library script read a few hundred)."""

    def __init__(self, g: np.ndarray, layout: Layout) -> None:
        super().__init__()
        self.g, self.layout = g, layout

    def __missing__(self, a: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ia = np.nonzero(self.g[a])[0]
        self[a] = out = (ia, self.layout.vectors(ia), self.g[a, ia])
        return out


#: Most bytes of the (D,C) pair tables' summed-area tables a sampler may
#: hold.  The library's 1NT with a six-card minor opposite (a split by South's
#: patterns, counted exactly in 28 s and 1.8 GB) asked for 1,194 of them,
#: 9 MB each, and was killed by the kernel at 24 GB.
MAX_PREFIX_BYTES = 2_000_000_000
#: Most bytes of the tables a lazy sampler keeps between draws (each draw
#: makes the tables of its pairs once, whatever it keeps).
LAZY_KEPT_BYTES = 256_000_000


def _prefix_bytes(n_tables: int, lay: Layout) -> tuple[int, int]:
    """Entries of one summed-area table over ``lay``'s feature space (see
    :func:`~truedeal.listing.prefix_sums`, axes of one value unpadded), and
    the bytes of ``n_tables``."""
    entries = prod(d + (i < lay.n_box and d > 1) for i, d in enumerate(lay.dims))
    return entries, 8 * n_tables * entries


def _check_prefix_bytes(n_tables: int, lay: Layout) -> None:
    """Raise :class:`TooLargeToDeal` when ``n_tables`` summed-area tables over
    ``lay``'s feature space would pass :data:`MAX_PREFIX_BYTES`."""
    entries, size = _prefix_bytes(n_tables, lay)
    if size > MAX_PREFIX_BYTES:
        raise TooLargeToDeal(
            f"this plan counts exactly but cannot deal: {n_tables:,} tables of {entries:,} entries would take "
            f"{size / 1e9:.1f} GB (the bound is {MAX_PREFIX_BYTES / 1e9:.1f} GB); 'truedeal count' gives the exact count")


class _LazyPrefix:
    """The (D,C) pairs' summed-area tables of a sampler past
    :data:`MAX_PREFIX_BYTES` even unpadded, made when a draw needs one and
    kept, most recently used first, within :data:`LAZY_KEPT_BYTES`."""

    def __init__(self, listing: Listing, dc_pairs: np.ndarray) -> None:
        self.listing, self.dc_pairs = listing, dc_pairs
        entries, _ = _prefix_bytes(1, listing.layout)
        self.room = max(1, LAZY_KEPT_BYTES // (8 * entries))
        self.kept: dict[int, np.ndarray] = {}

    def table(self, which: int) -> np.ndarray:
        """Pair ``which``'s table, shaped as a stack of one."""
        t = self.kept.pop(which, None)
        if t is None:
            t = prefix_sums(self.listing.pair_tables[self.dc_pairs[which]], self.listing.layout, pad_single=False)[None]
            if len(self.kept) >= self.room:
                del self.kept[next(iter(self.kept))]  # the least recently used
        self.kept[which] = t
        return t


class Sampler:
    """Draws uniform deals from one listing.  Build once, draw many times."""

    def __init__(self, listing: Listing, lazy: bool = False) -> None:
        """The level-1 tables leave an axis of one value unpadded (no zero
        slice in front: 8 such axes made one library plan's tables 256 times
        larger, and each filter form is one); the compiled search and the
        numpy steps read them alike, with the draws padded tables gave.  Past
        :data:`MAX_PREFIX_BYTES` even so, ``lazy`` makes them as draws need
        them (:meth:`_level1`); without it, :class:`TooLargeToDeal`."""
        if listing.total == 0:
            raise ValueError("no deal satisfies this spec")
        self.listing = listing
        lay = listing.layout
        self.layout = lay
        self.entries = WideCategorical(listing.e_weight)  # level 0
        # Level 1: summed-area tables of the (D,C) pair tables, to choose the
        # diamonds+clubs features one HCP coordinate at a time.
        dc_pairs, dc_index = unique_inverse(listing.cell_pairs[:, 1])
        self.cell_dc = dc_index.reshape(-1)
        #: box axes of one value and no zero slice (their only index is 0)
        self.unpadded = tuple(d for d in range(lay.n_box) if lay.dims[d] == 1)
        self.lazy: _LazyPrefix | None = None
        if lazy and _prefix_bytes(len(dc_pairs), lay)[1] > MAX_PREFIX_BYTES:
            self.lazy = _LazyPrefix(listing, dc_pairs)
            self.dc_prefix = np.zeros((0,), np.int64)
        else:
            _check_prefix_bytes(len(dc_pairs), lay)
            self.dc_prefix = np.stack([prefix_sums(listing.pair_tables[p], lay, pad_single=False) for p in dc_pairs])
        # Accepted boxes of the form space, per cell signature.
        self.sig_boxes = sig_box_arrays(listing.sig_boxes, lay.n_box)
        # With one accepted box per signature (the usual case) each cell's box is fixed.
        self.cell_box = None
        if all(len(lo) == 1 for lo, _ in self.sig_boxes):
            self.cell_box = tuple(np.concatenate([b[k] for b in self.sig_boxes])[listing.cell_sig] for k in (0, 1))
        # Level 2: for each suit pair, every split z = va + vb with its weight,
        # sorted by (pair, z) so that a split is one search away: pair by pair
        # (the pairs come in order), each sorted on its own, stably.
        keys, va, vb, w = [], [], [], []
        rows = _RowVectors(listing.g, lay)
        zsize = lay.zsize
        for p, (a, b) in enumerate(listing.pairs):
            (ia, xa, ga), (ib, xb, gb) = rows[a], rows[b]
            z, fits = lay.add_flat(ia, xa, ib, xb)
            i, j = np.nonzero(fits)
            z = z[i, j]
            order = np.argsort(z.astype(np.int16) if zsize <= 1 << 15 else z, kind="stable")  # (int16: a radix sort)
            i, j = i[order], j[order]
            keys.append(p * zsize + z[order])
            va.append(ia[i])
            vb.append(ib[j])  # not z - va: clamped forms lose the difference
            w.append(ga[i] * gb[j])
        self.split_key = np.concatenate(keys)
        self.split_va = np.concatenate(va)
        self.split_vb = np.concatenate(vb)
        self.split_cum = np.concatenate(w)
        np.cumsum(self.split_cum, out=self.split_cum)
        self.options = OptionDraws(listing.options, lay.zsize)  # level 3
        # For the compiled search: where each key's run starts (a small dense table, when it is small).
        self.split_start = _starts(self.split_key, len(listing.pairs) * lay.zsize)
        # Suit lengths of the patterned seats, per cell: (n_cells, n_pat, 4).
        self.cell_lengths = PATTERNS[listing.cells] if lay.patterned else np.zeros((len(listing.cells), 0, 4), np.int64)
        self._one_call: tuple | None = None  # the compiled draw's arguments, once built (see draw)

    # ------------------------------------------------------------------ steps

    def _level1(self, entry: np.ndarray, rng: Rng) -> np.ndarray:
        """Diamonds+clubs feature vector (flat) for each drawn entry.

        Its HCP coordinates are drawn one at a time: coordinate d takes value
        x with weight = the sum of the (D,C) table over the rest of the box,
        read from the summed-area table in 2**n_box lookups; the cumulative
        weights are searched by bisection.  A lazy sampler draws the entries
        of one (D,C) pair after another, in the pairs' order, each table made
        once for them all (the same law; its own order of draws).
        """
        which = self.cell_dc[self.listing.e_cell[entry]]
        if self.lazy is None:
            return self._level1_on(entry, rng, self.dc_prefix, which)
        out = np.empty(len(entry), np.int64)
        for w in np.unique(which):
            rows = np.nonzero(which == w)[0]
            out[rows] = self._level1_on(entry[rows], rng, self.lazy.table(int(w)), np.zeros(len(rows), np.int64))
        return out

    def _level1_on(self, entry: np.ndarray, rng: Rng, prefix: np.ndarray, which: np.ndarray) -> np.ndarray:
        """:meth:`_level1` with the tables ``prefix`` (entry i reads table ``which[i]``)."""
        L, lay = self.listing, self.layout
        nb = lay.n_box
        z1 = lay.vectors(L.e_z1[entry])
        exact = L.c_values[L.e_c[entry]] - z1[:, nb:]
        box_lo, box_hi = self._boxes(entry, z1, prefix, which, exact, rng)
        lo = np.maximum(box_lo - z1[:, :nb], 0)
        hi = np.minimum(lay.open_top(box_hi) - z1[:, :nb], np.array(lay.dims[:nb], dtype=np.int64) - 1)
        z2 = lo.copy()
        k = _compiled()
        fits = 0 < nb <= _LEVEL1_BOX and exact.shape[1] <= _LEVEL1_EXACT
        if fits and k is not None and k.level1(rng.bits, prefix, np.array(prefix.shape, np.int64), nb,
                                             exact.shape[1], np.ascontiguousarray(which, np.int64), np.ascontiguousarray(lo, np.int64),
                                             np.ascontiguousarray(hi, np.int64), np.ascontiguousarray(exact, np.int64), z2):
            nb = 0  # the coordinates are drawn (the same draws as the loop below)
        for d in range(nb):
            qlo, qhi = lo.copy(), hi.copy()
            qlo[:, :d] = qhi[:, :d] = z2[:, :d]  # coordinates already chosen

            def cum(upto: np.ndarray, d: int = d, qlo: np.ndarray = qlo, qhi: np.ndarray = qhi) -> np.ndarray:
                """Table sum with coordinate d in [lo_d, upto] (the rest in the box)."""
                q = qhi.copy()
                q[:, d] = upto
                return self._box(prefix, which, qlo[:, None, :], q[:, None, :], exact)[:, 0]

            r = rng.below(cum(hi[:, d]))
            # binary search for the smallest x with cum(x) > r
            a, b = lo[:, d].copy(), hi[:, d].copy()
            while (a < b).any():
                m = (a + b) // 2
                above = cum(m) > r
                a = np.where(above, a, m + 1)
                b = np.where(above, m, b)
            z2[:, d] = a
        strides, nb = lay.strides, lay.n_box
        return z2 @ strides[:nb] + exact @ strides[nb:]

    def _boxes(self, entry: np.ndarray, z1: np.ndarray, prefix: np.ndarray, which: np.ndarray, exact: np.ndarray,
               rng: Rng):
        """The accepted box each draw lands in: the only one, or one drawn in
        proportion to the (D,C) weight it holds (no draw when every row has one box)."""
        if self.cell_box is not None:
            cell = self.listing.e_cell[entry]
            return self.cell_box[0][cell], self.cell_box[1][cell]
        lay, nb = self.layout, self.layout.n_box
        sig = self.listing.cell_sig[self.listing.e_cell[entry]]
        lo = np.zeros((len(entry), nb), np.int64)
        hi = np.zeros((len(entry), nb), np.int64)
        for s in np.unique(sig):
            rows = np.nonzero(sig == s)[0]
            blo, bhi = self.sig_boxes[s]
            pick = np.zeros(len(rows), np.int64)
            if len(blo) > 1:
                dims = np.array(lay.dims[:nb], dtype=np.int64)
                qlo = np.maximum(blo[None, :, :] - z1[rows, None, :nb], 0)
                qhi = np.minimum(lay.open_top(bhi)[None, :, :] - z1[rows, None, :nb], dims - 1)
                qhi = np.maximum(qhi, qlo - 1)  # an empty range sums to 0
                w = self._box(prefix, which[rows], qlo, qhi, exact[rows])
                cum = np.cumsum(w, axis=1)
                r = rng.below(cum[:, -1])
                pick = (cum <= r[:, None]).sum(axis=1)
            lo[rows], hi[rows] = blo[pick], bhi[pick]
        return lo, hi

    def _box(self, prefix: np.ndarray, which: np.ndarray, lo: np.ndarray, hi: np.ndarray, exact: np.ndarray) -> np.ndarray:
        """Sum of (D,C) table ``which[r]`` of ``prefix`` over the box [lo, hi] (per row r and
        column k of lo/hi, shape (n, k, n_box)) at the exact coordinates ``exact[r]``."""
        nb = self.layout.n_box
        t = (which[:, None],)
        ex = tuple(exact[:, None, e] for e in range(exact.shape[1]))
        acc = np.zeros(lo.shape[:2], dtype=np.int64)
        zero = (lo == 0).all(axis=(0, 1))  # the tables' front slice is 0: corners there add nothing
        for corner in itertools.product((0, 1), repeat=nb):
            if any(zero[d] and not c for d, c in enumerate(corner)):
                continue
            idx = tuple(hi[:, :, d] + (d not in self.unpadded) if c else lo[:, :, d] for d, c in enumerate(corner))
            term = prefix[t + idx + ex]
            acc += term if (nb - sum(corner)) % 2 == 0 else -term
        return acc

    def _split(self, z: np.ndarray, pair: np.ndarray, rng: Rng) -> tuple[np.ndarray, np.ndarray]:
        """Split pair feature vectors ``z`` (flat) into the two suits' vectors."""
        key = pair * self.layout.zsize + z
        at = _locate(rng, self.split_key, self.split_cum, self.split_start, key, self.listing.pair_tables[pair, z])
        return self.split_va[at], self.split_vb[at]

    # ------------------------------------------------------------------ public

    def draw(self, n: int, rng: Rng) -> np.ndarray:
        """``n`` uniform deals as an ``(n, 52)`` uint8 owners array: in one
        compiled call where the kernel takes this listing (the same draws
        from the same bytes as the steps below, without the Python between them)."""
        k = _compiled()
        if k is not None and (args := self.one_call_args()):
            owners = np.empty((n, 52), np.uint8)
            k.draw(rng.bits, *args, owners)
            return owners
        L = self.listing
        entry = self.entries.draw(n, rng)
        cell = L.e_cell[entry]
        z2 = self._level1(entry, rng)
        cols = L.cell_cols[cell]
        v = np.empty((n, 4), dtype=np.int64)
        v[:, 0], v[:, 1] = self._split(L.e_z1[entry], L.cell_pairs[cell, 0], rng)
        v[:, 2], v[:, 3] = self._split(z2, L.cell_pairs[cell, 1], rng)
        return self.options.fill(self.layout, self.cell_lengths[cell], cols, v, L.g, rng)


    def one_call_args(self) -> tuple:
        """The compiled one-call draw's arguments after ``bits``, built once;
        empty when it does not take this listing (a cell with several boxes,
        or a level 1 past the compiled search's limits)."""
        if self._one_call is None:
            self._one_call = self._one_call_arguments() or ()
        return self._one_call

    def _one_call_arguments(self) -> tuple | None:
        L, lay, e, o = self.listing, self.layout, self.entries, self.options
        nb, ne = lay.n_box, len(lay.dims) - lay.n_box
        if self.cell_box is None or self.lazy or nb > _LEVEL1_BOX or ne > _LEVEL1_EXACT or e.top + 1 >= 1 << 63:
            return None
        i64 = lambda a: np.ascontiguousarray(a, np.int64)  # noqa: E731
        arrays = (i64(e.cum_hi), np.ascontiguousarray(e.cum_lo, np.uint64), i64(e.guide), i64(L.e_cell), i64(L.e_z1),
                  i64(L.e_c), i64(L.c_values), i64(lay.dims), i64(lay.clamp), i64(self.cell_dc), i64(self.cell_box[0]),
                  i64(self.cell_box[1]), i64(self.dc_prefix), i64(self.dc_prefix.shape), i64(L.cell_cols),
                  i64(L.cell_pairs), i64(L.pair_tables), i64(self.split_key), i64(self.split_cum), i64(self.split_start),
                  i64(self.split_va), i64(self.split_vb), i64(L.g), i64(o.key), i64(o.cum), i64(o.start),
                  np.ascontiguousarray(o.masks, np.uint16), i64(o.free), np.ascontiguousarray(self.cell_lengths, np.int8))
        return (e.top, e.low_max, e.shift, e.guide_shift, nb, _roles(lay), len(lay.patterned), arrays)


class OptionDraws:
    """Level 3 and the fill: each suit's option given its column and feature
    vector (weighted by F), then the remaining cards."""

    def __init__(self, options: list, zsize: int) -> None:
        self.zsize = zsize
        # every option of every column, keyed by (column, feature vector)
        self.key = np.concatenate([np.full(len(o.weight), k, np.int64) * zsize + o.vflat for k, o in enumerate(options)])
        self.cum = np.cumsum(np.concatenate([o.weight for o in options]))
        self.masks = np.concatenate([o.masks for o in options])
        self.free = np.concatenate([o.free_to_shape for o in options])
        self.start = _starts(self.key, len(options) * zsize)

    def draw(self, col: np.ndarray, v: np.ndarray, g: np.ndarray | VectorWeights, rng: Rng) -> np.ndarray:
        """Index into the option arrays, weighted by F within (column, v); ``g`` sums F by (column, v)."""
        return _locate(rng, self.key, self.cum, self.start, col * self.zsize + v, g[col, v])

    def fill(self, layout, lengths: np.ndarray, cols: np.ndarray, v: np.ndarray, g: np.ndarray | VectorWeights,
             rng: Rng) -> np.ndarray:
        """Deals whose cells have suit ``cols`` and feature vectors ``v`` (n, 4)."""
        opt = np.stack([self.draw(cols[:, s], v[:, s], g, rng) for s in range(4)], axis=1)
        return fill_deals(layout, lengths=lengths, masks=self.masks[opt], free_to_shape=self.free[opt].astype(np.int64), rng=rng)


def _locate(rng: Rng, keys: np.ndarray, cum: np.ndarray, starts, key: np.ndarray, total: np.ndarray) -> np.ndarray:
    """For each query, an index within its key's run of ``keys``, drawn in
    proportion to the weights whose running sums are ``cum`` (``total`` = the
    run's weight); compiled when the sampler kernel is built."""
    k = _compiled()
    if k is not None:
        at = np.empty(len(key), dtype=np.int64)
        k.locate(rng.bits, keys, cum, np.ascontiguousarray(key, np.int64), np.ascontiguousarray(total, np.int64), at, starts)
        return at
    start = np.searchsorted(keys, key, side="left")
    base = np.where(start > 0, cum[np.maximum(start - 1, 0)], 0)
    return np.searchsorted(cum, base + rng.below(total), side="right")
