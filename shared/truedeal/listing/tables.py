"""Dense tables over the feature space: suit-pair convolutions, summed-area
tables and box sums, the pool's factors, and the level-0 rows they give."""

from __future__ import annotations

import itertools

import numpy as np

from ..arrays import distinct
from .layout import Layout, strides_of

#: Most (first option, second option) terms one pass of :func:`pair_tables` holds.
_PAIR_TERMS = 2_000_000


def pair_tables(g: np.ndarray, pairs: list[tuple[int, int]], layout: Layout) -> np.ndarray:
    """``(len(pairs), zsize)``: for each pair ``(a, b)``, T[z] = sum over
    va + vb = z of g[a][va] * g[b][vb] (dense, int64).  The pairs that share a first column are done
    together, a block of second columns at a time: a few numpy calls per
    block instead of a dozen per pair (thousands of pairs in a listing)."""
    out = np.zeros((len(pairs), layout.zsize), dtype=np.int64)
    first = np.array([a for a, _ in pairs], np.int64)
    for a in distinct(first).tolist():
        ia = np.nonzero(g[a])[0]
        rows = np.nonzero(first == a)[0]
        if not len(ia):
            continue
        va = layout.vectors(ia)
        block: list[int] = []
        terms = 0
        for r in rows.tolist():
            n = len(ia) * int(np.count_nonzero(g[pairs[r][1]]))
            if block and terms + n > _PAIR_TERMS:
                _pair_block(out, g, pairs, block, ia, va, layout)
                block, terms = [], 0
            block.append(r)
            terms += n
        _pair_block(out, g, pairs, block, ia, va, layout)
    return out


def _pair_block(out: np.ndarray, g: np.ndarray, pairs: list, rows: list[int], ia: np.ndarray, va: np.ndarray,
                layout: Layout) -> None:
    """Fill ``out[rows]``, pairs that share their first column's options ``ia`` (vectors ``va``)."""
    seconds = g[[pairs[r][1] for r in rows]]
    at, ib = np.nonzero(seconds)
    if not len(ib):
        return
    z, ok = layout.add_flat(ia, va, ib, layout.vectors(ib))
    i, j = np.nonzero(ok)
    base = rows[0] * layout.zsize  # rows ascend: the block's tables are one run of ``out``
    # Per option first, then gathered once per term (z[ok] lists them in the order of i, j).
    target = (np.asarray(rows, np.int64)[at] * layout.zsize - base)[j] + z[ok]
    terms = g[pairs[rows[0]][0], ia][i] * seconds[at, ib][j]
    span = out.reshape(-1)[base : (rows[-1] + 1) * layout.zsize]
    if len(terms) and int(terms.max()) < 2**53 // len(terms):  # every partial sum is exact in a double
        span += np.bincount(target, terms.astype(np.float64), len(span)).astype(np.int64)
    else:
        np.add.at(span, target, terms)


def pair_table(ga: np.ndarray, gb: np.ndarray, layout: Layout) -> np.ndarray:
    """T[z] = sum over va + vb = z of ga[va] * gb[vb] (dense, int64): one pair of :func:`pair_tables`."""
    return pair_tables(np.stack([ga, gb]), [(0, 1)], layout)[0]


def prefix_sums(table: np.ndarray, layout: Layout, pad_single: bool = True) -> np.ndarray:
    """Summed-area table of a flat dense table along its range (HCP) axes,
    with a zero slice in front of each, for :func:`box_sums`.  A 2-D
    ``table`` is several tables, one per row: the result keeps that axis first.

    Without ``pad_single``, an axis of one value is left as it is (no sum to
    take): with k such axes the table is 2**k times smaller.  The samplers
    keep the padded layout; the listing's passes take the other (a form that
    one value fits, 8 of a library script's 12, made each pass's table 256
    times larger and its plan take minutes)."""
    lead = table.shape[:-1]
    padded = [len(lead) + d for d in range(layout.n_box) if pad_single or layout.dims[d] > 1]
    shape = [*lead, *layout.dims]
    inner = [slice(None)] * len(shape)
    for axis in padded:
        shape[axis] += 1
        inner[axis] = slice(1, None)
    # The table summed axis by axis, then put behind its zero slices once (in
    # place, or with a slice added per axis, the sums took twice as long).
    summed = table.reshape(lead + tuple(layout.dims))
    for axis in padded:
        if shape[axis] > 2:  # (an axis of one value needs no sum)
            summed = np.cumsum(summed, axis=axis)
    out = np.zeros(shape, np.cumsum(table[:0]).dtype)  # (cumsum widens small integers)
    out[tuple(inner)] = summed
    return out


def prefix_size(layout: Layout, pad_single: bool = True) -> int:
    """Entries of one table's :func:`prefix_sums`."""
    box = [d + 1 if pad_single or d > 1 else d for d in layout.dims[: layout.n_box]]
    return int(np.prod(box + list(layout.dims[layout.n_box :])))


def box_sums(prefix: np.ndarray, layout: Layout, z1: np.ndarray, lo: np.ndarray, hi: np.ndarray, exact: np.ndarray,
             table: np.ndarray | None = None, pad_single: bool = True) -> np.ndarray:
    """For each row r: the sum of ``table[z2]`` over the z2 that complete ``z1[r]``:
    each range coordinate d has ``lo[r, d] <= z1[r, d] + z2[d] <= hi[r, d]`` and each
    other coordinate e has ``z1[r, e] + z2[e] == exact[r, e']``.

    ``prefix`` is :func:`prefix_sums` of the table (with the same
    ``pad_single``), or of several tables with ``table[r]`` the one of row r.
    Exact in int64 provided the table's total fits, which callers ensure.
    """
    nb = layout.n_box
    dims = layout.dims
    out = np.zeros(len(z1), dtype=prefix.dtype)
    # Coordinates of one value hold 0: their bounds alone decide, and a box
    # given to every row (a broadcast) is read once.
    live = [d for d in range(nb) if dims[d] > 1]
    dead = [d for d in range(nb) if dims[d] == 1]
    lo, top = _one_row(lo), layout.open_top(_one_row(hi))
    lo2 = np.maximum(lo[:, live] - z1[:, live], 0)
    hi2 = np.minimum(top[:, live] - z1[:, live], np.array([dims[d] for d in live], dtype=np.int64) - 1)
    ex = exact - z1[:, nb:]
    valid = (lo2 <= hi2).all(axis=1) & (ex >= 0).all(axis=1) & (ex < np.array(dims[nb:], dtype=np.int64)).all(axis=1)
    valid &= (lo[:, dead] <= 0).all(axis=1) & (top[:, dead] >= 0).all(axis=1)
    if not valid.any():
        return out
    lo2, hi2, ex = lo2[valid], hi2[valid], ex[valid]
    # Flat offsets into ``prefix``: the fixed part (its table, the exact
    # coordinates, the upper corner of coordinates with no lower bound),
    # then each corner adds one choice per coordinate with a lower bound
    # (tuple indexing took most of a library plan's time).
    prefix = np.ascontiguousarray(prefix)  # (a view of itself when it is, as prefix_sums makes it)
    step = np.array(prefix.strides, dtype=np.int64) // prefix.itemsize
    off = len(prefix.shape) - len(dims)
    base = table[valid] * step[0] if table is not None else np.zeros(len(lo2), np.int64)
    for e in range(ex.shape[1]):
        base = base + ex[:, e] * step[off + nb + e]
    if pad_single:  # a padded axis of one value: its upper corner, 1, on every row
        base = base + sum(int(step[off + d]) for d in dead)
    # A lower corner at 0 reads the zero slice in front: where no row's box
    # starts above 0 on a coordinate, only its upper corner counts (2**nb
    # lookups would be 2**(coordinates with a lower bound)).
    choices = []
    for k, d in enumerate(live):
        upper = hi2[:, k] + 1
        if bool((lo2[:, k] > 0).any()):
            choices.append((lo2[:, k] * step[off + d], upper * step[off + d]))
        else:
            base = base + upper * step[off + d]
    # The corners in Gray-code order: from one to the next one coordinate
    # flips between its lower and upper choice, and the sign changes.
    flat = prefix.reshape(-1)
    at = sum((low for low, _ in choices), base.copy())
    steps = [up - low for low, up in choices]
    acc = flat.take(at) if len(choices) % 2 == 0 else -flat.take(at)
    for k in range(1, 1 << len(choices)):
        d = (k & -k).bit_length() - 1  # the coordinate that flips
        gray = k ^ (k >> 1)
        (np.add if gray >> d & 1 else np.subtract)(at, steps[d], out=at)
        (np.add if (len(choices) - gray.bit_count()) % 2 == 0 else np.subtract)(acc, flat.take(at), out=acc)
    out[valid] = acc
    return out


def _one_row(bounds: np.ndarray) -> np.ndarray:
    """``bounds`` (rows of box bounds), or its first row where every row is it (a broadcast)."""
    return bounds[:1] if bounds.strides[0] == 0 else bounds


def c_values(layout: Layout) -> np.ndarray:
    """Every vector of pool honour totals (the exact dims), in flat order."""
    exact_dims = layout.dims[layout.n_box :]
    vals = list(itertools.product(*(range(d) for d in exact_dims)))
    return np.array(vals, dtype=np.int64).reshape(len(vals), len(exact_dims))


def pool_factors(layout: Layout, c_values: np.ndarray) -> list[int]:
    """G for each row of :func:`_c_values` (1 everywhere without a pool)."""
    if not layout.has_pool:
        return [1] * len(c_values)
    return [layout.pool_factor(c[:-1], c[-1]) for c in c_values.tolist()]


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
    # the exact coordinates' flat index is the flat index modulo their size (row-major); unique on
    # those ints is unique on the rows (in the same order), where unique(axis=0) took 17% of a predealt build
    exact_dims = layout.dims[k:]
    flat = np.unique(np.nonzero(t2)[0] % int(np.prod(exact_dims)))
    present = np.stack(np.unravel_index(flat, exact_dims), axis=1).astype(np.int64).reshape(len(flat), n_exact)
    i = np.repeat(np.arange(len(nz)), len(present))
    totals = z1[i, k:] + np.tile(present, (len(nz), 1))
    ok = (totals < np.array(layout.dims[k:])).all(axis=1)
    i = i[ok]
    return which[i], nz[i], z1[i], totals[ok]


def level0_rows(t1s: np.ndarray, t2: np.ndarray, layout: Layout, g_of_c: list[int], boxes: list | BoxSlots,
                t2_of: np.ndarray | None = None, prefix: np.ndarray | None = None):
    """Level-0 rows of several (S,H) tables (rows of ``t1s``) against a (D,C)
    table: t1 row, z1 flat, pool totals (flat) and U, for every completion with
    a positive pool factor and U.  U sums the (D,C) table over the accepted
    ``boxes`` of the form space (disjoint): one list for every row, or
    :class:`BoxSlots`, each t1 row's own (the rows of several signatures).

    Without a pool ``t2`` may be several tables (rows), ``t2_of[k]`` the one
    that t1 row k meets: one call then does the work of many.  ``prefix``:
    ``prefix_sums(t2, layout, pad_single=False)``, when the caller has it."""
    n_exact = len(layout.dims) - layout.n_box
    if n_exact and t2.ndim > 1:
        raise ValueError("several (D,C) tables at once only without a pool")
    which, nz, z1, totals = completions(t1s, t2, layout, n_exact)
    c_flat = totals @ strides_of(layout.dims[layout.n_box :])
    if n_exact:
        keep = (np.array(g_of_c, dtype=object) > 0).astype(bool)[c_flat]
        which, nz, z1, totals, c_flat = which[keep], nz[keep], z1[keep], totals[keep], c_flat[keep]
    prefix = prefix_sums(t2, layout, pad_single=False) if prefix is None else prefix
    table = None if t2_of is None else t2_of[which]
    u = np.zeros(len(nz), dtype=np.int64)
    for lo, hi in box_arrays(boxes, len(nz), which):
        u += box_sums(prefix, layout, z1, lo, hi, totals, table, pad_single=False)
    hit = u > 0
    return which[hit], nz[hit], c_flat[hit], u[hit]


def sig_box_arrays(sig_boxes: list, n_box: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each signature's boxes as ``(lo, hi)`` arrays ``(boxes, n_box)``, made once for a listing."""
    return [(np.array([b[0] for b in boxes], np.int64).reshape(len(boxes), n_box),
             np.array([b[1] for b in boxes], np.int64).reshape(len(boxes), n_box)) for boxes in sig_boxes]


def pass_kinds(sig_arrays: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Each signature's kind: signatures of one kind may share a level-0
    pass (:class:`BoxSlots`).  A kind has one number of boxes and one set of
    coordinates bounded below, since :func:`box_sums` reads both corners of
    such a coordinate for every row of a pass: rows of signatures bounded
    elsewhere would cost more together than apart."""
    rows = [[len(lo)] + np.any(lo > 0, axis=0).astype(np.int64).tolist() for lo, _ in sig_arrays]
    if not rows:
        return np.zeros(0, np.int64)
    return np.unique(np.array(rows, np.int64), axis=0, return_inverse=True)[1].reshape(-1)


class BoxSlots:
    """The boxes of rows of several signatures of one :func:`pass_kinds`
    kind, one signature per row: slot ``j`` holds each row's ``j``-th box.
    Rows of many signatures then go in one pass of :func:`box_sums` per
    slot, where one pass per signature made the library's We Overcall 1N
    then Gerber (a pool listing of 2,832 signatures) take 287,632 passes
    of 3 keys each."""

    def __init__(self, arrays: list[tuple[np.ndarray, np.ndarray]], sigs: np.ndarray) -> None:
        """``arrays``: :func:`sig_box_arrays`; ``sigs``: each row's signature."""
        uniq, inv = np.unique(sigs, return_inverse=True)
        if len({len(arrays[s][0]) for s in uniq.tolist()}) > 1:
            raise ValueError("the signatures of one pass must have as many boxes each")
        self.lo = np.stack([arrays[s][0] for s in uniq.tolist()])
        self.hi = np.stack([arrays[s][1] for s in uniq.tolist()])
        self.of_row = inv.reshape(-1)


def box_arrays(boxes: list | BoxSlots, n: int, rows: np.ndarray | None = None):
    """Each box as (lo, hi) arrays of shape (n, n_box), one row per query;
    of :class:`BoxSlots`, each slot's boxes of the queries' ``rows``."""
    if isinstance(boxes, BoxSlots) and len(boxes.lo) == 1:  # one signature: its boxes, as below
        boxes = list(zip(boxes.lo[0].tolist(), boxes.hi[0].tolist()))
    if isinstance(boxes, BoxSlots):
        at = boxes.of_row[rows]
        for j in range(boxes.lo.shape[1]):
            yield boxes.lo[at, j], boxes.hi[at, j]
        return
    for lo, hi in boxes:
        yield (np.broadcast_to(np.array(lo, dtype=np.int64).reshape(1, -1), (n, len(lo))),
               np.broadcast_to(np.array(hi, dtype=np.int64).reshape(1, -1), (n, len(hi))))
