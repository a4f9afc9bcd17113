"""Pavlicek's case count for a listing: distinct (patterns, holdings) with weight.

The same factored tables as the weights (:mod:`truedeal.listing.tables`), with
each suit option replaced by 1 per distinct holding of the HCP seats.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from .exact_ops import row_dots
from .layout import Layout, TooWide
from .model import Listing
from .tables import (
    BoxSlots,
    box_arrays,
    box_sums,
    completions,
    level0_rows,
    pair_table,
    pair_tables,
    pass_kinds,
    pool_factors,
    prefix_sums,
    sig_box_arrays,
)


def count_cases(listing: Listing) -> int:
    """Number of distinct cases (patterns of patterned seats, holdings of HCP
    seats) that at least one deal fits, counted once and kept on the listing.

    The same tables as the weights, with each option replaced by 1 per
    distinct holding.  Options that differ only in how many free honours the
    shape-only seats take are one case; with a pool too, that count moves the
    pool's honour total, so it is carried as an interval [lo, hi] of
    achievable totals (:func:`_count_cases_interval`).
    """
    if listing.cases is None:
        listing.cases = _count(listing)
    return listing.cases


def _count(listing: Listing) -> int:
    from .paired import paired_cases  # (here: a command that counts nothing need not import it)

    layout = listing.layout
    if layout.patterned and not layout.has_pool and len(listing.cells):
        try:
            return paired_cases(layout, listing.cells, listing.cell_cols, listing.options)
        except TooWide:
            pass  # tables too wide to pair: count by the level-0 groups
    return _count_by_groups(listing)


def _count_by_groups(listing: Listing) -> int:
    """The count with the level-0 tables, one (D,C) table and signature at a time."""
    layout = listing.layout
    if layout.has_pool and layout.shape_only and not layout.pat_from_pool:
        # a shape-only seat's honours make no case, and its share of the free tracked cards (not
        # fixed by the holdings, unless the pooled seats' counts fix it) lies in an interval
        return _count_cases_interval(listing)
    from .paired import case_indicators

    indic = case_indicators(listing.options, layout).dense()
    g_of_c = [int(g > 0) for g in pool_factors(layout, listing.c_values)]
    tables: dict[tuple[int, int], np.ndarray] = {}

    def pair(a: int, b: int) -> np.ndarray:
        if (a, b) not in tables:
            tables[(a, b)] = pair_table(indic[a], indic[b], layout)
        return tables[(a, b)]

    # One pass per (D,C) table and kind of signature, over every (S,H) table paired with it.
    sig_arrays = sig_box_arrays(listing.sig_boxes, layout.n_box)
    total = 0
    per_pass = max(1, _INTERVAL_PASS_BYTES // (8 * layout.zsize))
    for (c, d, _), members in _groups(listing, sig_arrays).items():
        for at in range(0, len(members), per_pass):  # a few (S,H) tables at a time
            part = members[at : at + per_pass]
            t1s = np.stack([pair(a, b) for a, b, _, _ in part])
            mult = np.array([m for _, _, _, m in part], dtype=object)
            boxes = BoxSlots(sig_arrays, np.array([sig for _, _, sig, _ in part]))
            which, z1, _, u = level0_rows(t1s, pair(c, d), layout, g_of_c, boxes)
            total += int((mult[which] * t1s[which, z1].astype(object) * u.astype(object)).sum())
    return total


def _groups(listing: Listing, sig_arrays: list) -> dict[tuple[int, int, int], list[tuple[int, int, int, int]]]:
    """The distinct pairs grouped by their (D,C) columns and their
    signature's :func:`~.tables.pass_kinds` kind: ``(c, d, kind) -> [(a, b,
    signature, cells)]``, (S,H) columns ``a, b`` (one pass per signature
    took the library's We Overcall 1N then Gerber 287,632 passes)."""
    kinds = pass_kinds(sig_arrays)
    groups: dict[tuple[int, int, int], list[tuple[int, int, int, int]]] = {}
    for cols, sig, mult in _column_groups(listing):
        key = (int(cols[2]), int(cols[3]), int(kinds[sig]))
        groups.setdefault(key, []).append((int(cols[0]), int(cols[1]), sig, mult))
    return groups


def _column_groups(listing: Listing):
    """(suit columns, signature, number of cells) for each distinct pair."""
    rows = np.concatenate([listing.cell_cols, listing.cell_sig[:, None]], axis=1)
    keys, counts = np.unique(rows, axis=0, return_counts=True)
    for key, mult in zip(keys, counts):
        yield key[:4], int(key[4]), int(mult)


#: Bytes of (S,H) tables one pass of a case count holds.
_INTERVAL_PASS_BYTES = 64 << 20


def _count_cases_interval(listing: Listing) -> int:
    """:func:`count_cases` when shape-only seats and pooled seats coexist."""
    layout = listing.layout
    nb, n_tr = layout.n_box, layout.n_tracked
    # Dims: HCP, then c_pat lo and hi (ranges), then pooled honour counts (exact).
    cdims = tuple(layout.dims[:nb]) + (n_tr + 1, n_tr + 1) + tuple(layout.dims[nb:-1])
    cl = replace(layout, dims=cdims, n_box=nb + 2, clamp=layout.clamp + (False, False))
    indic = _interval_indicators(listing, cl)
    # As _count_by_groups: one pass per (D,C) pair and kind of signature, whose table and sums are
    # made once, over the (S,H) tables that meet it, a few at a time (each is cl.zsize entries).
    sig_arrays = sig_box_arrays(listing.sig_boxes, nb)
    total, summed = 0, None
    per_pass = max(1, _INTERVAL_PASS_BYTES // (8 * cl.zsize))
    groups = sorted(_groups(listing, sig_arrays).items())
    sh_tables = _SHTables(indic, cl, groups)
    for (c, d, _), members in groups:
        if summed is None or summed[0] != (c, d):
            t2 = pair_table(indic[c], indic[d], cl)
            summed = ((c, d), t2, prefix_sums(t2, cl, pad_single=False))
        for at in range(0, len(members), per_pass):
            part = members[at : at + per_pass]
            t1s = sh_tables([(a, b) for a, b, _, _ in part])
            mults = [m for _, _, _, m in part]
            boxes = BoxSlots(sig_arrays, np.array([sig for _, _, sig, _ in part]))
            if int(t1s.max(initial=0)) * max(mults) < 2**63:  # each table counts its cells, within int64
                t1s *= np.array(mults, dtype=np.int64)[:, None]
                total += _interval_pass(layout, cl, t1s, summed[1], summed[2], boxes)
            else:  # one table at a time, its cells counted in Python ints
                total += sum(m * _interval_pass(layout, cl, t1s[k : k + 1], summed[1], summed[2],
                                                BoxSlots(sig_arrays, np.array([part[k][2]])))
                             for k, m in enumerate(mults))
    return total


#: Bytes of (S,H) tables a case count may keep for all its passes.
_KEPT_TABLES_BYTES = 256 << 20


class _SHTables:
    """The (S,H) tables of a case count's passes: made once for all of them
    where they fit in :data:`_KEPT_TABLES_BYTES` (each pair meets many (D,C)
    tables: the library's We Overcall 1N then Gerber made 63,732 calls for
    them, 30 s), else per pass."""

    def __init__(self, indic: np.ndarray, cl: Layout, groups: list) -> None:
        self.indic, self.cl = indic, cl
        pairs = sorted({(a, b) for _, members in groups for a, b, _, _ in members})
        self.at: dict[tuple[int, int], int] | None = None
        if len(pairs) * cl.zsize * 8 <= _KEPT_TABLES_BYTES:
            self.at = {p: k for k, p in enumerate(pairs)}
            self.kept = pair_tables(indic, pairs, cl)

    def __call__(self, pairs: list[tuple[int, int]]) -> np.ndarray:
        """The tables of ``pairs``, a new array (the caller scales it in place)."""
        if self.at is None:
            return pair_tables(self.indic, pairs, self.cl)
        return self.kept[[self.at[p] for p in pairs]]


def _interval_indicators(listing: Listing, cl: Layout) -> np.ndarray:
    """Per suit column, over ``cl``'s space: 1 at each distinct (forms, pooled
    honour counts, masks) of its options, placed at the interval of the
    patterned seats' honour counts that those options span."""
    nb, n_h = listing.layout.n_box, len(listing.layout.pooled)
    indic = np.zeros((len(listing.columns), cl.zsize), dtype=np.int64)
    for k, opt in enumerate(listing.options):
        if not len(opt.weight):
            continue
        key = np.concatenate([opt.v[:, :nb], opt.v[:, nb:-1], opt.masks.astype(np.int64)], axis=1)
        uniq, inv = np.unique(key, axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        lo = np.full(len(uniq), 99)
        hi = np.full(len(uniq), -1)
        np.minimum.at(lo, inv, opt.v[:, -1])
        np.maximum.at(hi, inv, opt.v[:, -1])
        vec = np.concatenate([uniq[:, :nb], lo[:, None], hi[:, None], uniq[:, nb : nb + n_h]], axis=1)
        np.add.at(indic[k], vec @ cl.strides, 1)
    return indic


def _interval_pass(layout: Layout, cl: Layout, t1s: np.ndarray, t2: np.ndarray, prefix: np.ndarray, boxes: BoxSlots) -> int:
    """The cases of (S,H) tables ``t1s`` (rows, each times its cells) against
    the (D,C) table ``t2`` (``prefix``: its sums) within ``boxes``, where the
    patterned seats' honour total must land in the interval the pool leaves."""
    n_pat, n_h, n_tr = len(layout.patterned), len(layout.pooled), layout.n_tracked
    which, nz, z1, c = completions(t1s, t2, cl, n_h)
    csum = c.sum(axis=1) + sum(layout.forced(s) for s in layout.pooled)
    # The patterned seats' honour total must land in [c_min, c_max] for the
    # pool to work out: total lo <= c_max and total hi >= c_min.
    f_pat = layout.forced_patterned()
    c_min = np.maximum(0, 13 * (n_pat + n_h) - (52 - layout.dead() - n_tr) - csum - f_pat)
    c_max = n_tr - csum - f_pat
    ok = (c_max >= c_min) & (c <= 13).all(axis=1)
    which, nz, z1, c, c_min, c_max = which[ok], nz[ok], z1[ok], c[ok], c_min[ok], c_max[ok]
    total, weights = 0, t1s[which, nz][None, :]
    for lo, hi in box_arrays(boxes, len(nz), which):
        blo = np.concatenate([lo, np.zeros((len(nz), 1), np.int64), c_min[:, None]], axis=1)
        bhi = np.concatenate([hi, c_max[:, None], np.full((len(nz), 1), n_tr)], axis=1)
        total += row_dots(weights, box_sums(prefix, cl, z1, blo, bhi, c, pad_single=False)[None, :])[0]
    return total
