"""Building a listing: its tables, then its level-0 entries, for the whole
spec or for a slice of its cells."""

from __future__ import annotations

from operator import mul

import numpy as np

from ..arrays import distinct, unique_inverse, unique_rows
from .cells import checked_cells, pair_keys, suit_columns
from .layout import MAX_ENTRIES, MAX_FEATURE_CELLS, Layout, TooWide
from .model import Listing
from .options import suit_options
from .tables import BoxSlots, c_values, level0_rows, pair_tables, pass_kinds, pool_factors, prefix_size, prefix_sums, sig_box_arrays

#: Bytes of summed-area tables, keys, and nonzero entries of their (S,H)
#: tables, that one pass of the level-0 fill may hold.
_PASS_BYTES = 16 << 20
_PASS_KEYS = 4096
_PASS_NONZERO = 1 << 16


def build_listing(spec_like, progress=None, max_width: int = MAX_FEATURE_CELLS) -> Listing:
    """Build the factored listing (exact; raises :class:`TooWide`) of a
    :class:`~truedeal.constraints.compile.Compiled`, a Program or seat rules,
    whose option and pair tables hold at most ``max_width`` entries each."""
    layout, cells, columns, cell_cols = checked_cells(spec_like, max_width)
    listing = listing_tables(layout, cells, columns, cell_cols)
    fill_level0(listing, progress)
    return listing


def list_cells(layout: Layout, cells: np.ndarray, index: np.ndarray, progress=None) -> Listing:
    """The listing of the cells ``cells[index]`` alone (a slice; see
    :mod:`truedeal.slices`), ``cell_index`` mapping them to ``cells``.  A
    cell's level-0 entries are those the whole listing has for it, in the
    same order, so slices' totals, cases and entries add up to the whole's."""
    sub = cells[index]
    listing = listing_tables(layout, sub, *suit_columns(sub, layout))
    listing.cell_index = index
    fill_level0(listing, progress)
    return listing


def listing_tables(layout: Layout, cells: np.ndarray, columns: list, cell_cols: np.ndarray) -> Listing:
    """Everything of the listing of ``cells`` but its level-0 entries: suit
    options, feature tables, pair tables and cell signatures."""
    options = [suit_options(col, layout) for col in columns]
    g = np.zeros((len(columns), layout.zsize), dtype=np.int64)
    for k, opt in enumerate(options):
        np.add.at(g[k], opt.vflat, opt.weight)
    if not len(cells) or not len(columns):  # no pattern tuple fits: nothing to list
        empty = np.zeros((0, layout.zsize), np.int64)
        return Listing(layout, cells, columns, cell_cols, options, g, [], empty, np.zeros((0, 2), np.int64), c_values(layout))
    keys, pair_inv = unique_inverse(pair_keys(cell_cols, len(columns)))
    pairs = [(int(k) // len(columns), int(k) % len(columns)) for k in keys]
    tables = pair_tables(g, pairs, layout)
    cell_pairs = pair_inv.reshape(2, len(cells)).T
    listing = Listing(layout, cells, columns, cell_cols, options, g, pairs, tables, cell_pairs, c_values(layout))
    sig, sig_keys = layout.comp.cell_signatures(cells)
    listing.cell_sig = sig
    listing.sig_boxes = layout.comp.boxes_of(sig_keys)
    listing.grid_points = layout.comp.grid_points(sig_keys)
    return listing


def _batches(keys: np.ndarray, layout: Layout, kinds: np.ndarray,
             nonzero: np.ndarray) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray | None]]:
    """The (S,H), (D,C), signature keys in passes: ``(kind, key indices,
    the pass's (D,C) tables, each key's table among them)``.  The distinct
    (D,C) tables go in chunks of as many as keep their summed-area tables
    small (one at a time with a pool, and then no index); a chunk's passes,
    one per kind of the keys' signatures (``kinds``, per signature:
    :func:`~.tables.pass_kinds`) and up to _PASS_KEYS keys and
    _PASS_NONZERO nonzero entries of their (S,H) tables (``nonzero``, per
    key) each, share its tables, whose sums are then taken once for all of
    them (taken per signature, a library script summed 594 tables 2,422
    times).  Each key is in one pass."""
    size = prefix_size(layout, pad_single=False)
    per_pass = 1 if layout.has_pool else max(1, _PASS_BYTES // (8 * size))
    tables = distinct(keys[:, 1])
    chunk_of = np.searchsorted(tables, keys[:, 1]) // per_pass
    kind_of = kinds[keys[:, 2]]
    # the keys of each (chunk, kind) in a run, by table; one sort, where a scan of every key per
    # chunk took 11 s of a pool listing with 900,000 keys
    order = np.lexsort((keys[:, 1], kind_of, chunk_of))
    group = chunk_of[order] * (int(kind_of.max(initial=0)) + 1) + kind_of[order]
    out: list = []
    for ks in np.split(order, np.nonzero(np.diff(group))[0] + 1) if len(order) else []:
        c, n = int(chunk_of[ks[0]]), int(kind_of[ks[0]])
        chunk = tables[c * per_pass : (c + 1) * per_pass]
        for here in _cut(ks, nonzero[ks]):
            of = np.searchsorted(chunk, keys[here, 1]) if per_pass > 1 else None
            out.append((n, here, chunk if per_pass > 1 else chunk[0], of))
    return out


def _cut(ks: np.ndarray, sizes: np.ndarray) -> list[np.ndarray]:
    """``ks`` in runs of up to _PASS_KEYS keys whose ``sizes`` add up to
    _PASS_NONZERO or so (a key starts a new run once the sizes before it
    pass a multiple of it): passes of many signatures together held 1.2M
    entries, 300 MB more than one signature at a time."""
    starts = (np.cumsum(sizes) - sizes) // _PASS_NONZERO
    run = np.zeros(len(ks), np.int64)
    run[1:] = np.cumsum(np.diff(starts) > 0)
    first = np.searchsorted(run, run)  # each key's run's first key
    run = run * (len(ks) + 1) + (np.arange(len(ks)) - first) // _PASS_KEYS
    return np.split(ks, np.nonzero(np.diff(run))[0] + 1)


def _largest_first(batches: list, reach: np.ndarray) -> list:
    """The passes, those that can make the most level-0 entries (``reach``
    per key: cells times nonzero S+H rows) first, so that a listing past
    MAX_ENTRIES fails sooner.  The listing does not depend on this order:
    each key is in one pass, and the rows are sorted by key afterwards."""
    chunk_reach: dict[int, int] = {}
    for b in batches:
        chunk_reach[_chunk(b[2])] = chunk_reach.get(_chunk(b[2]), 0) + int(reach[b[1]].sum())
    # a chunk's passes stay together, so that its tables are summed once
    return sorted(batches, key=lambda b: (-chunk_reach[_chunk(b[2])], _chunk(b[2]), -int(reach[b[1]].sum())))


def _chunk(t2s: np.ndarray) -> int:
    """The chunk of (D,C) tables a pass reads (``t2s``, one or several): its first table."""
    return int(np.atleast_1d(t2s)[0])


def _cell_keys(listing: Listing) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (S,H) pair, (D,C) pair, signature rows of the cells, and
    each cell's row: cells sharing one share every level-0 weight.  Rows are
    packed into one integer each (np.unique over rows sorted them as bytes:
    12 s of the practice library's Open In Fourth Seat, 64 s)."""
    table = np.concatenate([listing.cell_pairs, listing.cell_sig[:, None]], axis=1)
    inv, first = unique_rows(table)
    return table[first], inv  # (the cells' rows are let go here: 150 MB of that script's peak)


def fill_level0(listing: Listing, progress=None) -> None:
    layout = listing.layout
    g_of_c = pool_factors(layout, listing.c_values)
    keys, inv = _cell_keys(listing)
    cells_per_key = np.bincount(inv, minlength=len(keys))
    nonzero = np.count_nonzero(listing.pair_tables, axis=1)[keys[:, 0]]
    reach = nonzero * cells_per_key
    sig_arrays = sig_box_arrays(listing.sig_boxes, layout.n_box)
    batches = _largest_first(_batches(keys, layout, pass_kinds(sig_arrays), nonzero), reach)
    rows_key: list[np.ndarray] = []
    rows_c: list[np.ndarray] = []
    rows_z: list[np.ndarray] = []
    row_w: list[int] = []
    n_entries = 0
    summed: tuple[int, np.ndarray] | None = None  # the last chunk's summed-area tables
    for done, (_, ks, t2s, t2_of) in enumerate(batches):
        t1s = listing.pair_tables[keys[ks, 0]]
        t2 = listing.pair_tables[t2s]
        if summed is None or summed[0] != _chunk(t2s):
            summed = (_chunk(t2s), prefix_sums(t2, layout, pad_single=False))
        which, z1, c_flat, u = level0_rows(t1s, t2, layout, g_of_c, BoxSlots(sig_arrays, keys[ks, 2]), t2_of, summed[1])
        # T1 < 2**42 and U < 2**50: the products need Python ints.
        a = t1s[which, z1]
        products = map(mul, a.tolist(), u.tolist())
        row_w.extend(map(mul, map(g_of_c.__getitem__, c_flat.tolist()), products) if layout.has_pool else products)
        rows_key.append(ks[which])
        rows_c.append(c_flat)
        rows_z.append(z1)
        n_entries += int(cells_per_key[ks[which]].sum())
        # A running count is a lower bound of the final one, so this refuses
        # exactly the listings (and slices) past the limit, in any order.
        if n_entries > MAX_ENTRIES:
            raise TooWide(f"more than {MAX_ENTRIES:,} level-0 entries; narrow the constraints")
        if progress:
            progress(done + 1, len(batches))
    # Group rows by key, keeping each key's rows in z1 order.
    row_key = np.concatenate(rows_key) if rows_key else np.zeros(0, np.int64)
    order = np.lexsort((np.concatenate(rows_c) if rows_c else row_key, np.concatenate(rows_z) if rows_z else row_key, row_key))
    c_all = np.concatenate(rows_c)[order] if rows_c else np.zeros(0, np.int64)
    z_all = np.concatenate(rows_z)[order] if rows_z else np.zeros(0, np.int64)
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
    listing.e_weight = list(map(row_w.__getitem__, order[idx].tolist()))
    listing.total = sum(listing.e_weight)
