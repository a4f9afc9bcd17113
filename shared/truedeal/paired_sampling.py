"""Exact draws from a :class:`~truedeal.listing.paired.PairedListing`.

A draw descends the listing, each step an exact categorical choice with
integer weights that count the deals below it:

0. a group ``q`` (a spades+hearts table and a cell signature): weight ``W_q``;
1. the spades+hearts feature vector ``z1``: weight ``T1[z1] * Y_q[z1]``, a
   product past int64, compared in base-2**k digits
   (:func:`~truedeal.listing.exact_ops.first_above`);
2. the diamonds+clubs vector ``z2`` that ``z1`` accepts: weight ``V_q[z2]``;
3. the cell among the group's: weight ``T2[its D+C pair][z2]``;
4. how each pair's vector splits into its two suits: ``g[a][va] * g[b][z - va]``;
5. each suit's option and the remaining cards, as in :mod:`truedeal.sampling`.

So every deal that fits is equally likely.  Steps 1-4 have compiled forms
(``truedeal._paired``, used when :func:`truedeal.kernel.paired` returns it)
that read the same bytes in the same order and make the same draws; the numpy
code here is the reference (tests/test_paired.py checks they agree).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from types import ModuleType
from typing import TYPE_CHECKING, cast

import numpy as np

from .fill import _roles
from .kernel import paired as _compiled
from .kernel import sampler as _compiled_sampler
from .listing.exact_ops import block_product_sums, first_above, first_above_digits
from .listing.layout import Layout
from .listing.paired import PairedListing
from .patterns import PATTERNS
from .randomness import Rng
from .sampling import OptionDraws, WideCategorical

if TYPE_CHECKING:
    from .listing.paired_classes import ClassedListing

#: Rows per block of the per-deal table scans (bounds their temporaries).
_BLOCK = 1024
#: The compiled z1 starts each scan from a guide slot: about one slot per
#: _GUIDE_Z vectors z1 for each group (a power of two), 16 bytes a slot, at
#: most _GUIDE_BYTES in all (four.json: 18 MB; four-pool.json: 47 MB).
_GUIDE_Z = 8
_GUIDE_BYTES = 64 << 20
#: The compiled split lists the splits of each (column, pair vector) it meets:
#: at most _SPLIT_ENTRIES entries of 4 bytes (then it scans unlisted ones as
#: before), and a word per (column, pair vector) if that is below _SPLIT_AT_BYTES.
#: Listing all of them takes 18 MB (four.json) to 25 MB (four-pool.json).
_SPLIT_ENTRIES = 1 << 23
_SPLIT_AT_BYTES = 128 << 20
#: The compiled cell step keeps, for the heaviest groups (most draws fall in
#: a few: on four.json 10% of the groups take 80% of them), the sums of their
#: cells' T2 in blocks (of the module's CELL_BLOCK cells) for every z2: at
#: most _CELL_BYTES in all.
_CELL_BYTES = 64 << 20
#: The compiled z2 passes a run of accepted z2 in one step with V's running
#: sums (as large as V: four-pool.json 40 MB), kept when at most this size.
_PREFIX_BYTES = 128 << 20


class PairedSampler:
    """Draws uniform deals from one paired listing.  Build once, draw many times."""

    def __init__(self, listing: PairedListing) -> None:
        if listing.total == 0:
            raise ValueError("no deal satisfies this spec")
        self.listing = listing
        lay = listing.layout
        self.groups = WideCategorical(listing.e_weight)
        self.options = OptionDraws(listing.options, lay.zsize)
        # with a rank pool, the fill deals the patterned seats alone (the pool then deals the rest)
        self.listed = replace(lay, free=(), fill_roles=None)
        self.zvec = lay.vectors(listing.z_flat)
        self._init_runs()
        # each column's feature vectors, padded with -1
        support = [listing.g.support(k) for k in range(len(listing.g.w))]
        self.support = np.full((len(support), max(len(x) for x in support)), -1, np.int64)
        for k, x in enumerate(support):
            self.support[k, : len(x)] = x
        # Vectors packed one coordinate per bit field with a guard bit on top:
        # z - va has no negative coordinate iff no field borrows from its guard.
        # Each field is as wide as its coordinate's values (a rank pool's card
        # classes add many narrow coordinates).
        fields = np.array([max(d - 1, 1).bit_length() + 1 for d in lay.dims], np.int64)
        if fields.sum() > 62:
            raise ValueError("too many feature coordinates to pack")
        shifts = np.cumsum(fields) - fields
        self.guard = int(sum(1 << (int(x) + int(f) - 1) for x, f in zip(shifts, fields)))
        self.z_packed = self.zvec @ (1 << shifts) | self.guard
        packed = lay.vectors(np.maximum(self.support, 0).reshape(-1)) @ (1 << shifts)
        self.support_packed = np.where(self.support >= 0, packed.reshape(self.support.shape), 0)
        self.block_sums: list[np.ndarray] | None = None  # the numpy z1's, made at its first draw
        # what the compiled steps read: W as two 64-bit halves; the accepted z2
        # of each (signature, z1), ascending, in compressed rows (a few percent are set)
        self.w_hi = np.array([w >> 64 for w in listing.e_weight], np.uint64)
        self.w_lo = np.array([w & (1 << 64) - 1 for w in listing.e_weight], np.uint64)
        accept = np.stack(listing.accept).reshape(-1, len(listing.z_flat))
        rows, cols = np.nonzero(accept)
        self.accept_idx = np.ascontiguousarray(cols, np.int64)
        self.accept_w = np.ascontiguousarray(accept[rows, cols], np.int64)  # 1s, or a rank pool's ways
        self.accept_ptr = np.searchsorted(rows, np.arange(len(listing.accept) * len(listing.z_flat) + 1)).astype(np.int64)
        # the accepted rows as runs of consecutive z2 (z0 | length << 32) for the compiled z2, where every weight is 1
        new_run = np.ones(len(self.accept_idx), bool)
        new_run[1:] = self.accept_idx[1:] != self.accept_idx[:-1] + 1
        new_run[self.accept_ptr[:-1][self.accept_ptr[:-1] < len(new_run)]] = True
        first = np.nonzero(new_run)[0]
        self.run_ptr = np.searchsorted(first, self.accept_ptr).astype(np.int64)
        lengths = np.diff(np.append(first, len(new_run))).astype(np.uint64)
        ones = bool((self.accept_w == 1).all())
        self.runs = self.accept_idx[first].astype(np.uint64) | lengths << np.uint64(32) if ones else np.zeros(0, np.uint64)
        # the compiled steps' caches (zeros, filled in by the draws that need them), made at their first draw
        self.guide: np.ndarray | None = None
        self.v_prefix: np.ndarray | None = None
        self.split_at: np.ndarray | None = None
        self.split_list: np.ndarray | None = None
        self.cell_at: np.ndarray | None = None
        self.cell_sums: np.ndarray | None = None
        self.option_arrays = self._option_arrays()

    def _init_runs(self) -> None:
        """What the cell step reads: each group's run of cells, their D+C
        tables side by side (``run_table``), the longest run, the cells'
        lengths.  A draw's cell is a cell of the listing."""
        L = self.listing
        self.cell_lengths = PATTERNS[L.cells]
        self.run_start, self.run_order = L.group_start, L.cell_order
        self.run_table = L.cell_table[L.cell_order].astype(np.int32)
        self.run_v_of = L.v_of  # the row of V that sums a run's tables at each z2
        self.run_weights = L.e_weight  # (the heaviest runs keep block sums)
        self.run = int(np.diff(self.run_start).max())

    def _run_of(self, q: np.ndarray) -> np.ndarray:
        """The run that the cell of a draw in group ``q`` is drawn from."""
        return q

    def _cell_rows(self, q: np.ndarray, cell: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The drawn cells' columns ``(n, 4)``, lengths ``(n, seats, 4)``
        (int8) and D+C tables ``(n,)``, each row one draw's."""
        L = self.listing
        return (np.ascontiguousarray(L.cell_cols[cell], np.int64), np.ascontiguousarray(self.cell_lengths[cell], np.int8),
                np.ascontiguousarray(L.cell_table[cell], np.int64))

    def _block_z1(self) -> list[np.ndarray]:
        """The numpy z1 is drawn in two steps, a block of about sqrt(n_z)
        vectors, then one inside it: per group, each block's sum of ``T1 * Y``
        as digits (kept; the compiled z1 reads its guide instead)."""
        L = self.listing
        n_z = len(L.z_flat)
        self.width = max(1, int(np.ceil(np.sqrt(n_z))))
        n_blocks = -(-n_z // self.width)
        n_q = len(L.group_table)
        sums = [np.zeros((n_q, n_blocks), np.int64) for _ in range(3)]
        for b in range(0, n_q, _BLOCK):
            block, self.k = block_product_sums(L.tables[L.group_table[b : b + _BLOCK]], L.y[L.y_of[b : b + _BLOCK]],
                                               self.width)
            for total, d in zip(sums, block):
                total[b : b + _BLOCK] = d
        self.block_sums = sums
        return sums

    def _option_arrays(self) -> tuple | None:
        """What the compiled level 3 and fill (``_sampler.options_fill``) read
        besides the drawn cells' columns and lengths: the options keyed by
        column * n_used + their vector's place in g, a key space small enough
        for a table of where each key's run starts (flat vectors span
        millions: the numpy path bisects all the keys).  None when some
        option's vector has no place in g."""
        L, o = self.listing, self.options
        col, flat = np.divmod(o.key, L.layout.zsize)
        place = L.g.pos[flat]
        key = col * L.g.w.shape[1] + place
        if (place < 0).any() or (np.diff(key) < 0).any():
            return None
        start = np.searchsorted(key, np.arange(L.g.w.size + 1)).astype(np.int64)
        return (np.ascontiguousarray(L.g.w, np.int64), key, o.cum, start, np.ascontiguousarray(o.free, np.int64),
                np.ascontiguousarray(o.masks, np.uint16))

    def draw(self, n: int, rng: Rng) -> np.ndarray:
        """``n`` uniform deals as an ``(n, 52)`` uint8 owners array."""
        q = self.groups.draw(n, rng)
        z1 = self._z1(q, rng)
        z2 = self._z2(q, z1, rng)
        return self._deal(q, z1, z2, self._cell(q, z2, rng), rng)

    def draw_chunks(self, parts: Sequence[tuple[int, Rng]]) -> np.ndarray:
        """The deals of several chunks, one after another: each ``(n, rng)``
        the deals of ``draw(n, rng)``, from the same bytes of its ``rng``.  The
        compiled z1, z2 and cell steps take every chunk's rows in one call
        (each chunk's draws from its own bits), so that their group-by-group
        scans read each group's lines once for all of them."""
        k = _compiled()
        if k is None or len(parts) < 2:
            return np.concatenate([self.draw(n, rng) for n, rng in parts])
        q = np.concatenate([self.groups.draw(n, rng) for n, rng in parts])
        bits = tuple((rng.bits, n) for n, rng in parts)
        z1 = self._z1_compiled(k, q, bits)
        z2 = self._z2_compiled(k, q, z1, bits)
        cell = self._cell_compiled(k, q, z2, bits)
        ends = np.cumsum([0] + [n for n, _ in parts])
        owners = np.empty((len(q), 52), np.uint8)
        filled = self._compiled_fill(q, z1, z2, cell, bits, owners) is not None
        for a, b, (_, rng) in zip(ends[:-1], ends[1:], parts):
            self._deal(q[a:b], z1[a:b], z2[a:b], cell[a:b], rng, owners[a:b], filled)
        return owners

    def _deal(self, q: np.ndarray, z1: np.ndarray, z2: np.ndarray, cell: np.ndarray, rng: Rng,
              out: np.ndarray | None = None, filled: bool = False) -> np.ndarray:
        """The deals of drawn groups, pair vectors and cells: the splits,
        options and fill (unless ``filled``: ``out`` holds them already),
        then the pool; into ``out`` (rows of 52) when given."""
        L = self.listing
        n = len(q)
        pool = L.layout.pool
        layout = self._fill_layout
        owners = out if filled and out is not None else self._compiled_fill(q, z1, z2, cell, rng.bits, out)
        if owners is None:
            cols, lengths, dc_table = self._cell_rows(q, cell)
            v = np.empty((n, 4), dtype=np.int64)
            v[:, 0], v[:, 1] = self._split(cols[:, 0], cols[:, 1], z1, L.tables[L.group_table[q], z1], rng)
            v[:, 2], v[:, 3] = self._split(cols[:, 2], cols[:, 3], z2, L.tables[dc_table, z2], rng)
            owners = self.options.fill(layout, lengths, cols, v, L.g, rng)
            if out is not None:
                out[:] = owners
                owners = out
        if pool is not None:
            z = self.zvec[z1] + self.zvec[z2]  # the forms are unclamped: vectors add
            pool.deal(owners, rng, L.layout, L.sig_boxes, L.group_sig[q], z)
        return owners

    @property
    def _fill_layout(self) -> Layout:  # with a pool, the fill deals the patterned seats alone
        return self.listing.layout if self.listing.layout.pool is None else self.listed

    def _compiled_fill(self, q: np.ndarray, z1: np.ndarray, z2: np.ndarray, cell: np.ndarray, bits: object,
                       out: np.ndarray | None = None) -> np.ndarray | None:
        """The splits, options and fill of :meth:`draw` compiled (the same
        draws), into ``out`` when given: the splits give each suit's place
        in g, which keys its options; None without the compiled steps.
        ``bits``: an rng's bits, or chunks' as :meth:`draw_chunks` gives
        them (each chunk's draws from its own bits, in its own order:
        splits, options, fill; its pool comes after)."""
        paired, sampler = _compiled(), _compiled_sampler()
        if paired is None or sampler is None or self.option_arrays is None:
            return None
        L, layout = self.listing, self._fill_layout
        places = np.empty((len(q), 4), np.int64)
        cols, lengths, dc_table = self._cell_rows(q, cell)
        rows = np.arange(len(q), dtype=np.int64)  # the steps below read the drawn cells' rows in order
        paired.splits(bits, q, rows, z1, z2, L.group_table, dc_table, cols, L.tables, self._split_arrays(), places)
        owners = np.empty((len(q), 52), np.uint8) if out is None else out
        sampler.options_fill(bits, _roles(layout), len(layout.patterned), owners, rows, places, L.g.w.shape[1],
                             (cols, *self.option_arrays, lengths))
        return owners

    def _z1(self, q: np.ndarray, rng: Rng) -> np.ndarray:
        L = self.listing
        if (k := _compiled()) is not None:
            return self._z1_compiled(k, q, rng.bits)
        r = [rng.below_int(L.e_weight[i]) for i in q.tolist()]
        sums = self.block_sums if self.block_sums is not None else self._block_z1()
        block, below = first_above_digits([d[q] for d in sums], self.k, r)
        cols = np.minimum(block[:, None] * self.width + np.arange(self.width)[None, :], len(L.z_flat) - 1)
        last = block[:, None] * self.width + np.arange(self.width)[None, :] < len(L.z_flat)
        a = np.where(last, L.tables[L.group_table[q][:, None], cols], 0)  # past the end: weight 0
        inside = first_above(a, L.y[L.y_of[q][:, None], cols], [x - y for x, y in zip(r, below)])
        return cols[np.arange(len(q)), inside]

    def _z1_compiled(self, k: ModuleType, q: np.ndarray, bits: object) -> np.ndarray:
        """The compiled z1; ``bits`` an rng's bits, or chunks' as :meth:`draw_chunks` gives them."""
        L = self.listing
        if self.guide is None:
            n_q, n_z = len(L.group_table), len(L.z_flat)
            slots = 1 << max(0, (n_z // _GUIDE_Z).bit_length() - 1)
            while slots > 1 and n_q * (2 + 2 * slots) * 8 > _GUIDE_BYTES:
                slots //= 2
            self.guide = np.zeros((n_q, 2 + 2 * slots), np.uint64)
        out = np.empty(len(q), np.int64)
        k.z1(bits, q, self.w_hi, self.w_lo, L.tables, L.group_table, L.y, L.y_of, len(L.z_flat), self.guide, out)
        return out

    def _z2(self, q: np.ndarray, z1: np.ndarray, rng: Rng) -> np.ndarray:
        L = self.listing
        if (k := _compiled()) is not None:
            return self._z2_compiled(k, q, z1, rng.bits)
        r = rng.below(L.y[L.y_of[q], z1])  # Y_q[z1] sums exactly the weights below
        out = np.empty(len(q), np.int64)
        for b in range(0, len(q), _BLOCK):
            rows, at = q[b : b + _BLOCK], z1[b : b + _BLOCK]
            w = L.v[L.v_of[rows]]
            for s, acc in enumerate(L.accept):
                here = L.group_sig[rows] == s
                w[here] *= acc[at[here]]
            out[b : b + _BLOCK] = (np.cumsum(w, axis=1) <= r[b : b + _BLOCK, None]).sum(axis=1)
        return out

    def _z2_compiled(self, k: ModuleType, q: np.ndarray, z1: np.ndarray, bits: object) -> np.ndarray:
        L = self.listing
        out = np.empty(len(q), np.int64)
        if self.v_prefix is None:
            kept = len(self.runs) and L.v.nbytes <= _PREFIX_BYTES
            self.v_prefix = _running_sums(L.v) if kept else np.zeros(0, np.uint64)
        k.z2(bits, q, z1, L.y, L.y_of, len(L.z_flat), L.v, L.v_of, self.accept_ptr, self.accept_idx, self.accept_w,
             L.group_sig, self.run_ptr, self.runs, self.v_prefix, out)
        return out

    def _cell(self, q: np.ndarray, z2: np.ndarray, rng: Rng) -> np.ndarray:
        L = self.listing
        if (k := _compiled()) is not None:
            return self._cell_compiled(k, q, z2, rng.bits)
        run = self._run_of(q)
        r = rng.below(L.v[self.run_v_of[run], z2])
        first, size = self.run_start[run], self.run_start[run + 1] - self.run_start[run]
        out = np.empty(len(q), np.int64)
        step = max(1, (1 << 22) // self.run)
        for b in range(0, len(q), step):
            at = np.where(np.arange(self.run)[None, :] < size[b : b + step, None],
                          first[b : b + step, None] + np.arange(self.run)[None, :], -1)
            w = np.where(at >= 0, L.tables[self.run_table[np.maximum(at, 0)], z2[b : b + step, None]], 0)
            k = (np.cumsum(w, axis=1, dtype=np.int64) <= r[b : b + step, None]).sum(axis=1)  # tables may be uint32
            out[b : b + step] = self.run_order[at[np.arange(len(k)), k]]
        return out

    def _cell_compiled(self, k: ModuleType, q: np.ndarray, z2: np.ndarray, bits: object) -> np.ndarray:
        L = self.listing
        if self.cell_at is None:
            blocks = -(-np.diff(self.run_start) // k.CELL_BLOCK)
            self.cell_at, self.cell_sums = self._heavy(np.where(blocks > 1, 1 + blocks * len(L.z_flat), 0), _CELL_BYTES,
                                                       self.run_weights)
        out = np.empty(len(q), np.int64)
        k.cell(bits, self._run_of(q), z2, L.v, self.run_v_of, len(L.z_flat), self.run_start, self.run_order,
               self.run_table, L.tables, self.cell_at, self.cell_sums, out)
        return out

    def _heavy(self, words: np.ndarray, budget: int, weights: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Block sums for the compiled steps: a segment of ``words[q]`` words
        (0: none) for each run, heaviest by ``weights`` first, while they fit
        in ``budget`` bytes.  Returns each run's offset (-1: none) and the
        zeroed segments."""
        at = np.full(len(words), -1, np.int64)
        used = 0
        for q in sorted(range(len(words)), key=lambda q: -weights[q]):
            if words[q] and (used + int(words[q])) * 8 <= budget:
                at[q] = used
                used += int(words[q])
        return at, np.zeros(used, np.int64)

    def _split_arrays(self) -> tuple:
        """What the compiled splits read, their lists made (zeros) at the first call."""
        L = self.listing
        if self.split_at is None:
            keys = len(self.support) * len(L.z_flat)
            listed = keys * 8 <= _SPLIT_AT_BYTES
            self.split_at = np.zeros(keys if listed else 0, np.uint64)
            room = min(_SPLIT_ENTRIES, keys * self.support.shape[1])  # list[0] counts the entries used
            self.split_list = np.zeros(1 + (room + 1) // 2 if listed else 0, np.uint64)  # two entries a word
        return (self.support, self.support_packed, self.z_packed, self.guard, L.z_flat, L.g.w, L.g.w.shape[1], L.g.pos,
                L.g.used, self.split_at, self.split_list)

    def _split(self, ca: np.ndarray, cb: np.ndarray, z: np.ndarray, total: np.ndarray, rng: Rng) -> tuple[np.ndarray, np.ndarray]:
        """Flat vectors ``(va, vb)`` of two suits whose sum is pair vector ``z``;
        ``total`` is the pair's table at ``z``, which sums the splits' weights
        (the compiled step reads it; the numpy one adds the weights up)."""
        L = self.listing
        if (k := _compiled()) is not None:
            va, vb = np.empty(len(z), np.int64), np.empty(len(z), np.int64)
            total = np.ascontiguousarray(total, np.int64)  # entries of tables that may be uint32
            k.split(rng.bits, np.ascontiguousarray(ca), np.ascontiguousarray(cb), z, total, self._split_arrays(), va, vb)
            return va, vb
        va = self.support[ca]
        ok = (va >= 0) & ((self.z_packed[z][:, None] - self.support_packed[ca]) & self.guard == self.guard)
        # with no coordinate negative (and none past its dim: z's are not), flat indices subtract
        vb_flat = np.where(ok, L.z_flat[z][:, None] - va, 0)
        w = np.where(ok, L.g[ca[:, None], np.maximum(va, 0)] * L.g[cb[:, None], vb_flat], 0)
        cum = np.cumsum(w, axis=1)
        k = (cum <= rng.below(cum[:, -1])[:, None]).sum(axis=1)
        rows = np.arange(len(z))
        return va[rows, k], vb_flat[rows, k]


class ClassedSampler(PairedSampler):
    """Draws from a :class:`~truedeal.listing.paired_classes.ClassedListing`:
    a draw's cell is its group's spades+hearts column pair and a
    diamonds+clubs pair of its key's run, drawn by ``T2[pair][z2]``."""

    @property
    def classed(self) -> ClassedListing:
        """The listing, as what it is (the steps it shares read it as a paired one)."""
        return cast("ClassedListing", self.listing)

    def _init_runs(self) -> None:
        L = self.classed
        n_keys = len(L.run_start) - 1
        self.run_start, self.run_order = L.run_start, np.arange(len(L.run_cols), dtype=np.int64)
        self.run_table = L.run_table.astype(np.int32)
        self.run_v_of = np.arange(n_keys, dtype=np.int64)  # a key's row of V
        weights = [0] * n_keys
        for q, key in enumerate(L.group_key.tolist()):
            weights[key] += L.e_weight[q]
        self.run_weights = weights
        self.run = int(np.diff(self.run_start).max())

    def _run_of(self, q: np.ndarray) -> np.ndarray:
        return self.classed.group_key[q]

    def _cell_rows(self, q: np.ndarray, cell: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        L = self.classed
        cols = np.ascontiguousarray(np.concatenate([L.group_cols[q], L.run_cols[cell]], axis=1), np.int64)
        lengths = np.ascontiguousarray(L.col_lengths[cols].transpose(0, 2, 1), np.int8)
        return cols, lengths, np.ascontiguousarray(L.run_table[cell], np.int64)


def _running_sums(v: np.ndarray) -> np.ndarray:
    """Each row of ``v`` (int64 >= 0) as its running sums from 0, one more
    column, modulo 2**64: a difference of two is exact wherever the true sum
    between them is below 2**64 (the accepted sums are below 2**63)."""
    out = np.zeros((v.shape[0], v.shape[1] + 1), np.uint64)
    np.cumsum(v.astype(np.uint64), axis=1, out=out[:, 1:])
    return out
