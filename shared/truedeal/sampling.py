"""Exact draws from a :class:`~truedeal.enumeration.Listing`, vectorised.

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
"""

from __future__ import annotations

import itertools
from itertools import accumulate

import numpy as np

from .enumeration import Listing
from .fill import fill_deals
from .patterns import PATTERNS
from .randomness import Rng

_MAX_CELLS_PER_STEP = 2_000_000  # rows x candidates held in memory at once


def _categorical(weights: np.ndarray, rng: Rng) -> np.ndarray:
    """Row-wise exact draw: index i with probability weights[r, i] / sum(weights[r])."""
    cum = np.cumsum(weights, axis=1)
    r = rng.below(cum[:, -1])
    return (cum > r[:, None]).argmax(axis=1)


class Sampler:
    """Draws uniform deals from one listing.  Build once, draw many times."""

    def __init__(self, listing: Listing) -> None:
        if listing.total == 0:
            raise ValueError("no deal satisfies this spec")
        self.listing = listing
        lay = listing.layout
        self.layout = lay
        # Level 0: cumulative totals as (high key, low bits) so that numpy can search them.
        self.shift = max(0, listing.total.bit_length() - 62)
        mask = (1 << self.shift) - 1
        cum = list(accumulate(listing.e_weight))
        self.cum_hi = np.array([c >> self.shift for c in cum], dtype=np.int64)
        self.cum_lo = np.array([c & mask for c in cum], dtype=np.uint64)
        self.cum_exact = None  # built lazily for the rare ties
        # Level 1: candidate offsets inside the HCP box.
        widths = [h - l + 1 for l, h in zip(lay.hcp_lo, lay.hcp_hi)]
        offsets = list(itertools.product(*(range(w) for w in widths)))
        self.box_offsets = np.array(offsets, dtype=np.int64).reshape(len(offsets), lay.n_box)
        # Level 2: for each suit pair, every split z = va + vb with its weight,
        # sorted by (pair, z) so that a split is one search away.
        keys, va, w = [], [], []
        for p, (a, b) in enumerate(listing.pairs):
            ia, ib = np.nonzero(listing.g[a])[0], np.nonzero(listing.g[b])[0]
            z = lay.vectors(ia)[:, None, :] + lay.vectors(ib)[None, :, :]
            i, j = np.nonzero((z < np.array(lay.dims, dtype=np.int64)).all(axis=2))
            keys.append(p * lay.zsize + z[i, j] @ lay.strides)
            va.append(ia[i])
            w.append(listing.g[a, ia[i]] * listing.g[b, ib[j]])
        order = np.argsort(np.concatenate(keys), kind="stable")
        self.split_key = np.concatenate(keys)[order]
        self.split_va = np.concatenate(va)[order]
        self.split_cum = np.cumsum(np.concatenate(w)[order])
        # Level 3: every option of every column, keyed by (column, feature vector).
        opts = listing.options
        self.opt_key = np.concatenate([np.full(len(o.weight), k, np.int64) * lay.zsize + o.vflat for k, o in enumerate(opts)])
        self.opt_cum = np.cumsum(np.concatenate([o.weight for o in opts]))
        self.opt_masks = np.concatenate([o.masks for o in opts])
        self.opt_free = np.concatenate([o.free_to_shape for o in opts])
        # Suit lengths of the patterned seats, per cell: (n_cells, n_pat, 4).
        self.cell_lengths = PATTERNS[listing.cells] if lay.patterned else np.zeros((len(listing.cells), 0, 4), np.int64)

    # ------------------------------------------------------------------ steps

    def _level0(self, n: int, rng: Rng) -> np.ndarray:
        hi, lo = rng.below_wide(self.listing.total, n, self.shift)
        right = np.searchsorted(self.cum_hi, hi, side="right")
        left = np.searchsorted(self.cum_hi, hi, side="left")
        out = right.copy()
        for r in np.nonzero(left < right)[0]:  # high keys tie: compare the low bits
            for i in range(left[r], right[r]):
                if lo[r] < self.cum_lo[i]:
                    out[r] = i
                    break
        return out

    def _level1(self, entry: np.ndarray, rng: Rng) -> np.ndarray:
        """Diamonds+clubs feature vector (flat) for each drawn entry."""
        L, lay = self.listing, self.layout
        nb = lay.n_box
        cell = L.e_cell[entry]
        z1 = lay.vectors(L.e_z1[entry])
        pair = L.cell_pairs[cell, 1]
        exact = L.c_values[L.e_c[entry]] - z1[:, nb:]
        strides = lay.strides
        out = np.empty(len(entry), dtype=np.int64)
        step = max(1, _MAX_CELLS_PER_STEP // max(1, len(self.box_offsets)))
        for s in range(0, len(entry), step):
            sl = slice(s, s + step)
            lo2 = np.array(lay.hcp_lo, dtype=np.int64) - z1[sl, :nb]
            hi2 = np.array(lay.hcp_hi, dtype=np.int64) - z1[sl, :nb]
            box = lo2[:, None, :] + self.box_offsets[None, :, :]
            ok = ((box >= 0) & (box <= hi2[:, None, :]) & (box < np.array(lay.dims[:nb])) ).all(axis=2)
            flat = (np.where(ok[:, :, None], box, 0) * strides[:nb]).sum(axis=2) + (exact[sl] * strides[nb:]).sum(axis=1)[:, None]
            w = np.where(ok, L.pair_tables[pair[sl][:, None], flat], 0)
            out[sl] = flat[np.arange(len(flat)), _categorical(w, rng)]
        return out

    def _split(self, z: np.ndarray, pair: np.ndarray, rng: Rng) -> tuple[np.ndarray, np.ndarray]:
        """Split pair feature vectors ``z`` (flat) into the two suits' vectors."""
        lay = self.layout
        key = pair * lay.zsize + z
        start = np.searchsorted(self.split_key, key, side="left")
        base = np.where(start > 0, self.split_cum[np.maximum(start - 1, 0)], 0)
        total = self.listing.pair_tables[pair, z]
        va = self.split_va[np.searchsorted(self.split_cum, base + rng.below(total), side="right")]
        vb = (lay.vectors(z) - lay.vectors(va)) @ lay.strides
        return va, vb

    def _option(self, col: np.ndarray, v: np.ndarray, rng: Rng) -> np.ndarray:
        """Index into the global option arrays, weighted by F within (column, v)."""
        key = col * self.layout.zsize + v
        start = np.searchsorted(self.opt_key, key, side="left")
        base = np.where(start > 0, self.opt_cum[np.maximum(start - 1, 0)], 0)
        total = self.listing.g[col, v]
        return np.searchsorted(self.opt_cum, base + rng.below(total), side="right")

    # ------------------------------------------------------------------ public

    def draw(self, n: int, rng: Rng) -> np.ndarray:
        """``n`` uniform deals as an ``(n, 52)`` uint8 owners array."""
        L = self.listing
        entry = self._level0(n, rng)
        cell = L.e_cell[entry]
        z2 = self._level1(entry, rng)
        cols = L.cell_cols[cell]
        v = np.empty((n, 4), dtype=np.int64)
        v[:, 0], v[:, 1] = self._split(L.e_z1[entry], L.cell_pairs[cell, 0], rng)
        v[:, 2], v[:, 3] = self._split(z2, L.cell_pairs[cell, 1], rng)
        opt = np.stack([self._option(cols[:, s], v[:, s], rng) for s in range(4)], axis=1)
        return fill_deals(
            self.layout,
            lengths=self.cell_lengths[cell],
            masks=self.opt_masks[opt],  # (n, 4 suits, n_hcp)
            free_to_shape=self.opt_free[opt].astype(np.int64),  # (n, 4)
            rng=rng,
        )
