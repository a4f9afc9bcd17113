"""The listing aggregated by spades+hearts pair: four patterned seats, exact."""

from __future__ import annotations

import contextlib
import itertools
import json
from collections import Counter, defaultdict
from dataclasses import replace
from functools import cache
from math import factorial
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chisquare

from truedeal import kernel
from truedeal.arrays import unique_inverse, unique_rows
from truedeal.cards import HCP_OF_RANK
from truedeal.constraints.compile import compile_program
from truedeal.constraints.evaluate import satisfies as fits
from truedeal.engine import Plan
from truedeal.evaluate import hcp, satisfies
from truedeal.fill import _roles
from truedeal.listing import TooWide, build_listing
from truedeal.listing import paired as paired_listing
from truedeal.listing.cases import _count_by_groups
from truedeal.listing.exact_ops import exact_matmul, first_above, row_dots
from truedeal.listing.paired import PairedListing, applicable, build_paired, table_dtype
from truedeal.paired_sampling import _running_sums
from truedeal.patterns import PATTERNS
from truedeal.randomness import chunk_rng
from truedeal.shapes import parse_shape
from truedeal.spec import load_spec

SEATS = ("north", "east", "south", "west")
FOUR_JSON = json.loads((Path(__file__).parents[1] / "bench" / "specs" / "four.json").read_text())

#: Four patterned HCP seats, narrow enough for a suit-by-suit count in Python.
SMALL_FOUR = {
    "north": {"hcp": [12, 14], "shape": "4333"},
    "east": {"hcp": [8, 12], "shape": "3433 + 3343"},
    "south": {"hcp": [6, 10], "shape": "3343 + 3334"},
    "west": {"hcp": [5, 12], "shape": "any 4333 + any 4432"},
}

#: Specs that the factored listing also builds: the two must agree exactly.
NT_INVITE_POOL = json.loads((Path(__file__).parents[1] / "bench" / "specs" / "nt-invite-pool.json").read_text())
BOTH = [
    {"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}, "south": {"hcp": [0, 7], "hearts": [5, 13]}},
    {"north": {"hcp": [11, 15], "shape": "any 4432"}, "east": {"spades": [5, 6]}, "south": {"shape": "any 5xxx"},
     "west": {"hearts": [3, 13]}},
    {"condition": "hcp(north) + hcp(south) >= 25 && spades(north) + spades(south) >= 8 && shape(north, any 4333 + any 4432)"},
    {"condition": "(hcp(north) >= 12 && hcp(north) <= 14 || hcp(north) >= 18 && hcp(north) <= 19) && shape(north, any 4333 + any 5332)"
                  " && hearts(south) >= 5"},
    {"condition": "controls(north) >= 4 && losers(north) <= 7 && shape(south, any 4432)"},
    {"condition": "shape(north, 5xxx) && shape(east, x5xx) && shape(south, xx5x) && shape(west, any 4333 + any 4432)"},
    {"north": {"holds": ["SA", "SK", "HK"], "shape": "any 5332"}, "south": {"hcp": [0, 5], "shape": "any 4432"}},
]


def _comp(spec):
    return compile_program(load_spec(spec).program())


def _paired(spec: dict) -> PairedListing:
    """``build_paired(_comp(spec))``, built once for every test that only reads it
    (each draws from samplers of its own; the builds under a patched limit are their own)."""
    return _built(json.dumps(spec, sort_keys=True))


@cache
def _built(spec: str) -> PairedListing:
    return build_paired(_comp(json.loads(spec)))


@pytest.mark.parametrize("spec", BOTH, ids=range(len(BOTH)))
def test_paired_counts_equal_the_factored_listing(spec):
    comp = _comp(spec)
    assert applicable(comp)
    paired, factored = _paired(spec), build_listing(comp)
    # count_cases would count by the paired tables too: the level-0 groups are the other way
    assert (paired.deals, paired.cases) == (factored.deals, _count_by_groups(factored))


def _suit_by_suit(spec: dict) -> Counter[tuple[int, ...]]:
    """An independent count for four patterned HCP seats, by the four seats'
    HCP: a DP over the suits whose state is every seat's lengths so far and
    HCP so far.  Each suit's honours go one of 4**4 ways and its 9 spot cards
    9!/prod(spots!) ways."""
    rules = [spec[s] for s in SEATS]
    allowed = [{tuple(int(x) for x in p) for p in PATTERNS[parse_shape(r["shape"])]} for r in rules]
    prefixes = [{p[:k] for p in a for k in range(5)} for a in allowed]
    states: dict[tuple, int] = {((), (), (), (), 0, 0, 0, 0): 1}
    for suit in range(4):
        lengths = [sorted({p[suit] for p in a}) for a in allowed]
        moves: dict[tuple, dict[tuple, int]] = defaultdict(lambda: defaultdict(int))  # column -> points -> ways
        for col in itertools.product(*lengths):
            if sum(col) != 13:
                continue
            for honours in itertools.product(range(4), repeat=4):
                spots = list(col)
                points = [0] * 4
                for rank, seat in enumerate(honours):
                    spots[seat] -= 1
                    points[seat] += HCP_OF_RANK[rank]
                if min(spots) >= 0:
                    moves[col][tuple(points)] += factorial(9) // int(np.prod([factorial(x) for x in spots]))
        # the states by their lengths, so each column is checked once per lengths (not per points),
        # and the points summed seat by seat without generators (most of this count's time)
        by_lengths: dict[tuple, list] = defaultdict(list)
        for st, w in states.items():
            by_lengths[st[:4]].append((st[4:], w))
        t0, t1, t2, t3 = (r["hcp"][1] for r in rules)
        nxt: dict[tuple, int] = defaultdict(int)
        for lens, at_points in by_lengths.items():
            for col, by_points in moves.items():
                new = tuple(lens[s] + (col[s],) for s in range(4))
                if not all(new[s] in prefixes[s] for s in range(4)):
                    continue
                for (h0, h1, h2, h3), w in at_points:
                    for (p0, p1, p2, p3), ways in by_points.items():
                        if h0 + p0 <= t0 and h1 + p1 <= t1 and h2 + p2 <= t2 and h3 + p3 <= t3:
                            nxt[(*new, h0 + p0, h1 + p1, h2 + p2, h3 + p3)] += w * ways
        states = nxt
    counts: Counter[tuple[int, ...]] = Counter()
    for st, w in states.items():
        if all(st[s] in allowed[s] and rules[s]["hcp"][0] <= st[4 + s] <= rules[s]["hcp"][1] for s in range(4)):
            counts[st[4:]] += w
    return counts


@cache
def _small_four_by_hcp() -> Counter[tuple[int, ...]]:
    """:func:`_suit_by_suit` of SMALL_FOUR, made once for its total and for its law."""
    return _suit_by_suit(SMALL_FOUR)


def test_four_patterned_hcp_seats_match_a_suit_by_suit_count():
    comp = _comp(SMALL_FOUR)
    assert _paired(SMALL_FOUR).deals == build_listing(comp).deals == sum(_small_four_by_hcp().values())


def test_paired_deals_fit_their_spec_and_are_the_same_without_the_kernel():
    assert kernel.sampler() is None or kernel.paired() is not None, "the paired draws were not compiled"
    for spec in [SMALL_FOUR, *BOTH]:
        listing = _paired(spec)
        owners = listing.make_sampler().draw(3000, chunk_rng("paired", 0))
        assert fits(owners, load_spec(spec).program()).all()
        with kernel.numpy_only():
            again = listing.make_sampler().draw(3000, chunk_rng("paired", 0))
        assert (owners == again).all()


#: Six cell signatures (which of South's suits is long), two accept matrices.
SHARED_ACCEPTS = {"condition": "hcp(north) >= 12 && shape(north, any 4432 + any 5332) && (hearts(south) >= 5 && hcp(south) >= 8"
                  " || spades(south) >= 5 && hcp(south) >= 8 || clubs(south) >= 6 && hcp(south) >= 10)"}


@pytest.mark.parametrize("dense", [True, False], ids=["table", "sorted"])
@pytest.mark.parametrize("spec", [BOTH[3], SHARED_ACCEPTS], ids=["either/or", "shared"])
def test_each_signatures_accept_matrix_is_its_boxes_tested_pair_by_pair(monkeypatch, spec, dense):
    """The accept matrices are found from the distinct sums z1 + z2, once for
    all signatures, and kept once per distinct matrix: each signature's must
    still be "z1 + z2 fits and lies in one of its boxes", tested pair by pair."""
    monkeypatch.setattr(paired_listing, "_DENSE_SUMS", 10**9 if dense else 0)
    prepared = paired_listing.Prepared.of(_comp(spec))
    layout, z, keys = prepared.layout, prepared.frame.z_flat, prepared.frame.sig_keys
    distinct, same = paired_listing._distinct_accepts(layout, z, keys)
    vectors = layout.vectors(z)
    total, fits = layout.add(vectors[:, None, :], vectors[None, :, :])
    value = layout.form_values(total)
    for s, boxes in enumerate(layout.comp.boxes_of(keys)):
        inside = np.zeros(fits.shape, bool)
        for lo, hi in boxes:
            inside |= ((value >= np.array(lo)) & (value <= np.array(hi))).all(axis=-1)
        assert (distinct[same[s]] == (fits & inside)).all(), s
    if spec is SHARED_ACCEPTS:
        assert (len(keys), len(distinct)) == (6, 2)


@pytest.mark.skipif(kernel.paired() is None, reason="compiled paired draws not built")
@pytest.mark.parametrize("n", [10, 500, 700, 3000])
def test_compiled_steps_draw_alike_whether_they_visit_rows_by_group_or_in_order(n):
    """z1, z2 and the cell scan a draw's rows group by group when the groups
    (2,379 here) are at most four times the rows, else in row order (as
    below 16 rows): 10 and 500 rows take row order, 700 and 3000 the groups'.
    The r's are drawn in row order first, so both give the numpy deals."""
    listing = _paired(BOTH[1])
    assert len(listing.group_table) == 2379
    with kernel.numpy_only():
        want = listing.make_sampler().draw(n, chunk_rng("scan order", n))
    assert (listing.make_sampler().draw(n, chunk_rng("scan order", n)) == want).all()


@pytest.mark.skipif(kernel.paired() is None, reason="compiled paired draws not built")
def test_compiled_z2_passes_whole_runs_as_the_scan_and_numpy_draw():
    """The compiled z2 passes a run of accepted z2 whose sum keeps the
    running sum at or below r in one step (from V's running sums) and halves
    the run that does not: the same z2 as its entry-by-entry scan and as the
    numpy path, for every (group, z1) that can be drawn, from the same bytes."""
    sampler = _paired(BOTH[1]).make_sampler()
    L = sampler.listing
    assert (np.asarray(sampler.runs) >> np.uint64(32)).max() > 4  # runs long enough to be halved
    q, z1 = np.nonzero(L.y[L.y_of] > 0)
    q, z1 = np.repeat(q, 3).astype(np.int64), np.repeat(z1, 3).astype(np.int64)
    got = []
    for prefix in (_running_sums(L.v), np.zeros(0, np.uint64)):
        sampler.v_prefix = prefix
        got.append(sampler._z2(q, z1, chunk_rng("whole runs", 0)))
    with kernel.numpy_only():
        got.append(sampler._z2(q, z1, chunk_rng("whole runs", 0)))
    assert (got[0] == got[2]).all() and (got[1] == got[2]).all()


@pytest.mark.parametrize("spec", [BOTH[1], NT_INVITE_POOL], ids=["both 1", "rank pool"])
def test_groups_share_rows_of_v_and_y_that_are_their_own_sums(spec):
    """A group reads its V and Y through v_of and y_of, so groups with the
    same D+C tables keep one row: each must still be, exactly, the sum of
    its own cells' tables, and V times its signature's accept matrix."""
    L = _paired(spec)
    n_q = len(L.group_table)
    assert len(L.v) < n_q and len(L.y) < n_q  # shared, or this test checks nothing new
    for q in range(n_q):
        cells = L.cell_order[L.group_start[q] : L.group_start[q + 1]]
        v = L.tables[L.cell_table[cells]].sum(axis=0)
        assert (L.v[L.v_of[q]] == v).all()
        assert (L.y[L.y_of[q]] == L.accept[L.group_sig[q]].astype(np.int64) @ v).all()


@pytest.mark.skipif(kernel.paired() is None, reason="compiled paired draws not built")
def test_compiled_paired_draws_refuse_indices_out_of_range():
    sampler = _paired(SMALL_FOUR).make_sampler()
    L, k = sampler.listing, kernel.paired()
    bad = np.array([len(L.group_table)], np.int64)  # one group past the last
    accepted = (sampler.accept_ptr, sampler.accept_idx, sampler.accept_w)
    no_runs = (sampler.run_ptr, np.zeros(0, np.uint64), np.zeros(0, np.uint64))
    y, v = (L.y, L.y_of, len(L.z_flat)), (L.v, L.v_of)
    with pytest.raises(IndexError):
        k.z2(chunk_rng("x", 0).bits, bad, np.zeros(1, np.int64), *y, *v, *accepted, L.group_sig, *no_runs, np.empty(1, np.int64))
    with pytest.raises(IndexError, match="y out of range"):  # a group's row of Y past the last
        k.z2(chunk_rng("x", 0).bits, bad - 1, np.zeros(1, np.int64), L.y, L.y_of + len(L.y), len(L.z_flat), *v, *accepted,
             L.group_sig, *no_runs, np.empty(1, np.int64))
    wrong = sampler.accept_idx + len(L.z_flat)  # accepted z2 past the last vector
    row = int(np.nonzero(np.diff(sampler.accept_ptr))[0][0])  # a (signature, z1) that accepts some z2
    sig, z1 = divmod(row, len(L.z_flat))
    q = np.array([np.nonzero(L.group_sig == sig)[0][0]], np.int64)
    with pytest.raises(IndexError, match="accepted z2"):
        k.z2(chunk_rng("x", 0).bits, q, np.array([z1], np.int64), *y, *v, sampler.accept_ptr, wrong, sampler.accept_w,
             L.group_sig, *no_runs, np.empty(1, np.int64))
    far = sampler.runs + np.uint64(len(L.z_flat))  # the same, as runs
    for prefix in (np.zeros(0, np.uint64), _running_sums(L.v)):  # runs scanned entry by entry, or passed whole
        with pytest.raises(IndexError, match="accepted z2"):
            k.z2(chunk_rng("x", 0).bits, q, np.array([z1], np.int64), *y, *v, *accepted, L.group_sig, sampler.run_ptr, far,
                 prefix, np.empty(1, np.int64))
    with pytest.raises(ValueError, match="prefix has the wrong size"):
        k.z2(chunk_rng("x", 0).bits, q, np.array([z1], np.int64), *y, *v, *accepted, L.group_sig, sampler.run_ptr,
             sampler.runs, _running_sums(L.v)[:, 1:].copy(), np.empty(1, np.int64))
    guide = np.zeros((len(L.group_table), 4), np.uint64)
    with pytest.raises(ValueError, match="not the sum"):  # W one more than its z1 weights: an error, not a draw
        k.z1(chunk_rng("x", 0).bits, q, sampler.w_hi, sampler.w_lo + np.uint64(1), L.tables, L.group_table, *y, guide,
             np.empty(1, np.int64))
    with pytest.raises(ValueError, match="guide"):
        k.z1(chunk_rng("x", 0).bits, q, sampler.w_hi, sampler.w_lo, L.tables, L.group_table, *y, guide[:, :3].copy(),
             np.empty(1, np.int64))
    v = (*v, len(L.z_flat))
    cells = (L.group_start, L.cell_order, sampler.run_table, L.tables, np.full(len(L.group_table), -1, np.int64),
             np.zeros(0, np.int64))
    with pytest.raises(IndexError):
        k.cell(chunk_rng("x", 0).bits, bad, np.zeros(1, np.int64), *v, *cells, np.empty(1, np.int64))
    past = np.full_like(sampler.run_table, len(L.tables))  # every cell's table past the last
    with pytest.raises(IndexError, match="cell table"):
        k.cell(chunk_rng("x", 0).bits, q, L.v[L.v_of[q]].argmax(axis=1), *v, L.group_start, L.cell_order, past, *cells[3:],
               np.empty(1, np.int64))




@pytest.mark.parametrize("spec", [SMALL_FOUR, BOTH[1], NT_INVITE_POOL], ids=["small four", "both 1", "rank pool"])
@pytest.mark.parametrize("compiled", [True, False], ids=["kernel", "numpy"])
def test_chunks_drawn_together_are_the_chunks_drawn_one_by_one(spec, compiled):
    """draw_chunks takes each chunk's bytes from its own rng, as draw does,
    whatever the chunks' sizes (1 row, a few, a full chunk) and order."""
    listing = _paired(spec)
    sizes = [4096, 1, 37, 4096, 500, 2]
    parts = lambda: [(n, chunk_rng("together", k)) for k, n in enumerate(sizes)]  # noqa: E731
    with contextlib.nullcontext() if compiled else kernel.numpy_only():
        one_by_one = np.concatenate([listing.make_sampler().draw(n, rng) for n, rng in parts()])
        together = listing.make_sampler().draw_chunks(parts())
    assert together.shape == (sum(sizes), 52) and (together == one_by_one).all()


@pytest.mark.skipif(kernel.paired() is None, reason="compiled paired draws not built")
def test_chunks_past_one_compiled_fill_are_the_chunks_drawn_one_by_one():
    """Past 32,768 rows the compiled fill takes the chunks a few at a time
    (whole chunks, a full one straddling the limit): the same deals."""
    listing = _paired(SMALL_FOUR)
    parts = lambda: [(n, chunk_rng("groups", k)) for k, n in enumerate([4096] * 7 + [37, 4096, 1, 4096])]  # noqa: E731
    one_by_one = np.concatenate([listing.make_sampler().draw(n, rng) for n, rng in parts()])
    together = listing.make_sampler().draw_chunks(parts())
    assert together.shape == (7 * 4096 + 37 + 2 * 4096 + 1, 52) and (together == one_by_one).all()


@pytest.mark.skipif(kernel.paired() is None, reason="compiled paired draws not built")
def test_compiled_steps_refuse_bits_parts_that_do_not_cover_the_rows():
    sampler = _paired(SMALL_FOUR).make_sampler()
    q = np.zeros(10, np.int64)
    bits = chunk_rng("x", 0).bits
    for parts, match in [(((bits, 4), (bits, 5)), "do not cover"), (((bits, 11),), "within the rows"),
                         (((bits, -1),), "within the rows"), ((bits,), "pairs")]:
        with pytest.raises(ValueError, match=match):
            sampler._z1_compiled(kernel.paired(), q, parts)


@pytest.mark.skipif(kernel.paired() is None or kernel.sampler() is None, reason="compiled draws not built")
@pytest.mark.parametrize("spec", [SMALL_FOUR, BOTH[1], NT_INVITE_POOL], ids=["small four", "both 1", "rank pool"])
def test_compiled_splits_and_options_fill_make_the_numpy_draws(spec):
    """The splits, options and fill in two compiled calls (the options keyed
    by their vectors' places in g) draw the deals, and read the bytes, of
    the compiled steps one by one and of the numpy path."""
    listing = _paired(spec)
    assert (listing.layout.pool is not None) == (spec is NT_INVITE_POOL)
    out = []
    for path in ("two calls", "step by step", "numpy"):
        s, rng = listing.make_sampler(), chunk_rng("fill", 1)
        assert s.option_arrays is not None
        if path == "step by step":
            s.option_arrays = None
        if path == "numpy":
            with kernel.numpy_only():
                owners = s.draw(3000, rng)
        else:
            owners = s.draw(3000, rng)
        out.append((owners.tobytes(), rng.bits.read(32)))
    assert out[0] == out[1] == out[2]


@pytest.mark.skipif(kernel.paired() is None or kernel.sampler() is None, reason="compiled draws not built")
def test_compiled_splits_and_options_fill_refuse_indices_out_of_range():
    sampler = _paired(SMALL_FOUR).make_sampler()
    L, n = sampler.listing, 5
    q, zero = np.zeros(n, np.int64), np.zeros(n, np.int64)
    past = np.full(n, len(L.cell_cols), np.int64)  # a cell past the last
    with pytest.raises(IndexError, match="cell"):
        kernel.paired().splits(chunk_rng("x", 0).bits, q, past, zero, zero, L.group_table, L.cell_table, L.cell_cols,
                               L.tables, sampler._split_arrays(), np.empty((n, 4), np.int64))
    roles = _roles(L.layout)
    cols, lengths, _ = sampler._cell_rows(q, zero)  # the drawn cells' rows, as the fill reads them
    whole = (cols, *sampler.option_arrays, lengths)
    far = np.full((n, 4), L.g.w.shape[1], np.int64)  # places past the last
    with pytest.raises(ValueError, match="out of range"):
        kernel.sampler().options_fill(chunk_rng("x", 0).bits, roles, len(L.layout.patterned), np.empty((n, 52), np.uint8),
                                      zero, far, L.g.w.shape[1], whole)
    with pytest.raises(ValueError, match="malformed"):  # start one short
        arrays = whole[:4] + (whole[4][:-1],) + whole[5:]
        kernel.sampler().options_fill(chunk_rng("x", 0).bits, roles, len(L.layout.patterned), np.empty((n, 52), np.uint8),
                                      zero, np.zeros((n, 4), np.int64), L.g.w.shape[1], arrays)


def _wide_build(monkeypatch, spec):
    """The paired listing of ``spec`` built with int64 pair tables, as before they could be uint32."""
    with monkeypatch.context() as m:
        m.setattr(paired_listing, "_tables_dtype", lambda *args: np.dtype(np.int64))
        return build_paired(_comp(spec))


@pytest.mark.parametrize("spec", [BOTH[0], NT_INVITE_POOL], ids=["both 0", "rank pool"])
@pytest.mark.parametrize("compiled", [True, False], ids=["kernel", "numpy"])
def test_uint32_tables_weigh_and_draw_as_int64_tables(monkeypatch, spec, compiled):
    """A listing whose pair tables fit in uint32 keeps them so, with the
    weights, V and Y of an int64 build, and draws its bytes: one by one,
    chunks together, its compiled steps with every cache (guides, cell
    block sums, split lists), and the split alone (no compiled fill)."""
    narrow, wide = _paired(spec), _wide_build(monkeypatch, spec)
    assert narrow.tables.dtype == np.uint32 and wide.tables.dtype == np.int64
    assert (narrow.tables == wide.tables).all() and (narrow.v == wide.v).all() and (narrow.y == wide.y).all()
    assert narrow.e_weight == wide.e_weight and narrow.cases == wide.cases
    kernel_variants = [[], [_every_cell_sum, _guide(1024)], [_full_split_list, _no_cell_sum, _guide(1)], [_no_fill]]
    with contextlib.nullcontext() if compiled else kernel.numpy_only():
        for setup in kernel_variants if compiled else [[]]:
            drawn = []
            for listing in (narrow, wide, replace(narrow, tables=wide.tables)):
                s, rng = listing.make_sampler(), chunk_rng("narrow", 2)
                for f in setup:
                    f(s)
                chunks = listing.make_sampler().draw_chunks([(700, chunk_rng("narrow", k)) for k in range(3)])
                drawn.append((s.draw(2000, rng).tobytes(), s.draw(2000, rng).tobytes(), rng.bits.read(32), chunks.tobytes()))
            assert drawn[0] == drawn[1] == drawn[2], setup


def test_tables_past_uint32_stay_int64():
    """uint32 holds entries up to 2**32 - 1 and no more; a listing's pair
    tables are uint32 exactly when all fit (the bounds that clear most
    pairs never decide otherwise), and a narrow build refuses entries that
    do not fit instead of wrapping them."""
    assert table_dtype(0) == table_dtype(2**32 - 1) == np.uint32
    assert table_dtype(2**32) == table_dtype(2**62) == np.int64
    wide = _paired(SMALL_FOUR)  # entries up to 4,451,630,400
    assert wide.tables.dtype == np.int64 and int(wide.tables.max()) >= 2**32
    for spec in BOTH[:3]:
        listing = _paired(spec)
        assert listing.tables.dtype == table_dtype(int(listing.tables.max()))
    prepared = paired_listing.Prepared.of(_comp(SMALL_FOUR))
    frame = prepared.frame
    assert frame.table_dtype == np.int64
    with pytest.raises(ValueError, match="past uint32"):
        paired_listing._pair_tables(prepared.weights_table(), frame.pairs, frame.n_cols, frame.z_flat, frame.layout,
                                    np.dtype(np.uint32))


def test_the_size_limit_counts_uint32_pair_tables_at_four_bytes(monkeypatch):
    """MAX_PAIRED_BYTES counts bytes: a budget that holds a listing's uint32
    pair tables and its int64 V and Y, and not the same tables in int64,
    lists it with uint32 tables and refuses the int64 build."""
    listing = _paired(BOTH[0])
    rows = len(listing.v) + len(listing.y)
    monkeypatch.setattr(paired_listing, "MAX_PAIRED_BYTES", len(listing.z_flat) * (4 * len(listing.tables) + 8 * rows))
    assert build_paired(_comp(BOTH[0])).tables.dtype == np.uint32
    with pytest.raises(TooWide, match="paired tables too large"):
        _wide_build(monkeypatch, BOTH[0])


def _table_steps(sampler, tables) -> list:
    """Calls of the compiled z1, cell and splits that read ``tables`` (each draws 3 rows of group 0)."""
    L, k, n = sampler.listing, kernel.paired(), 3
    q, zero, bits = np.zeros(n, np.int64), np.zeros(n, np.int64), chunk_rng("x", 0).bits
    guide = np.zeros((len(L.group_table), 4), np.uint64)
    return [
        lambda: k.z1(bits, q, sampler.w_hi, sampler.w_lo, tables, L.group_table, L.y, L.y_of, len(L.z_flat), guide,
                     np.empty(n, np.int64)),
        lambda: k.cell(bits, q, zero, L.v, L.v_of, len(L.z_flat), L.group_start, L.cell_order, sampler.run_table, tables,
                       np.full(len(L.group_table), -1, np.int64), np.zeros(0, np.int64), np.empty(n, np.int64)),
        lambda: k.splits(bits, q, zero, zero, zero, L.group_table, L.cell_table, L.cell_cols, tables, sampler._split_arrays(),
                         np.empty((n, 4), np.int64)),
    ]


@pytest.mark.skipif(kernel.paired() is None, reason="compiled paired draws not built")
@pytest.mark.parametrize("spec", [BOTH[0], SMALL_FOUR], ids=["uint32", "int64"])
def test_compiled_steps_refuse_tables_of_neither_dtype_or_size(spec):
    """The compiled steps read the tables' entry size from their dtype: int64
    and uint32 pass (test_uint32_tables_weigh_and_draw_as_int64_tables), any
    other dtype is refused, and so is a buffer that is not whole rows of n_z
    entries of its size."""
    sampler = _paired(spec).make_sampler()
    tables = sampler.listing.tables
    for dtype in (np.int32, np.uint16, np.float64, np.uint64):
        for step in _table_steps(sampler, tables.astype(dtype)):
            with pytest.raises(TypeError, match="int64 or uint32"):
                step()
    for dtype in (np.int64, np.uint32):
        flat = tables.astype(dtype).reshape(-1)
        for bad in (flat[:-1], np.append(flat, flat[:1])):  # an entry short, an entry over
            for step in _table_steps(sampler, bad):
                with pytest.raises(ValueError, match="tables has the wrong size"):
                    step()


def _no_fill(s):
    s.option_arrays = None  # the compiled splits one pair at a time (their totals read in numpy), then the numpy fill


def _no_cache(s):
    s.split_at = s.split_list = np.zeros(0, np.uint64)  # no split lists: every split scans its column


def _full_split_list(s):
    s.split_at = np.zeros(len(s.support) * len(s.listing.z_flat), np.uint64)
    s.split_list = np.zeros(1 + s.support.shape[1], np.uint64)  # room for one list, then full: the rest scan


def _every_cell_sum(s):
    blocks = -(-np.diff(s.listing.group_start) // kernel.paired().CELL_BLOCK)
    s.cell_at, s.cell_sums = s._heavy(np.where(blocks > 1, 1 + blocks * len(s.listing.z_flat), 0), 1 << 40, s.run_weights)


def _no_cell_sum(s):
    s.cell_at, s.cell_sums = np.full(len(s.listing.group_table), -1, np.int64), np.zeros(0, np.int64)


def _guide(slots):
    def set_guide(s):
        s.guide = np.zeros((len(s.listing.group_table), 2 + 2 * slots), np.uint64)
    return set_guide


def _no_runs(s):
    s.runs = np.zeros(0, np.uint64)  # the accepted entries one by one, as with a rank pool's weights


@pytest.mark.skipif(kernel.paired() is None, reason="compiled paired draws not built")
@pytest.mark.parametrize("spec", [SMALL_FOUR, BOTH[0], BOTH[1]], ids=["small four", "both 0", "both 1"])
def test_compiled_paired_caches_make_the_numpy_draws(spec):
    """The compiled steps' caches (z1 guides, split lists, cell block sums,
    accepted runs) draw the numpy steps' deals however they are set: off,
    full, filling up, or filled by an earlier draw."""
    listing = _paired(spec)
    with kernel.numpy_only():
        want = listing.make_sampler().draw(2000, chunk_rng("paired caches", 0))
    variants = [[], [_no_cache, _no_cell_sum, _no_runs, _guide(1)], [_full_split_list, _every_cell_sum, _guide(1024)]]
    for setup in variants:
        sampler = listing.make_sampler()
        for f in setup:
            f(sampler)
        for again in range(2):  # the second draw finds the caches the first one filled
            assert (sampler.draw(2000, chunk_rng("paired caches", 0)) == want).all(), (setup, again)
        if _every_cell_sum in setup and spec is not SMALL_FOUR:
            assert (sampler.cell_sums[sampler.cell_at[sampler.cell_at >= 0]] == 1).any()  # some sums were built
        if _full_split_list in setup:
            assert sampler.split_list[0] > 0 and (sampler.split_at == 0).any()


def test_four_patterned_seats_deal_uniformly_over_the_hcp_vectors():
    """The joint law of the four HCP totals, drawn against exact counts of the
    spec narrowed to each vector (the suit-by-suit count's, by HCP vector)."""
    plan = Plan.build(load_spec(SMALL_FOUR))
    owners = np.concatenate(list(plan.deals(12_000, seed="paired law")))
    seen = Counter(zip(*(hcp(owners, s).tolist() for s in range(4))))
    keys = [k for k, n in seen.most_common() if n >= 40]
    exact = [_small_four_by_hcp()[k] for k in keys]  # (a listing of each narrowed spec took twice the DP's time)
    share = sum(exact) / plan.deals_total
    expected = np.array([x / sum(exact) for x in exact]) * sum(seen[k] for k in keys)
    observed = np.array([seen[k] for k in keys])
    assert len(keys) >= 20
    assert abs(sum(seen[k] for k in keys) / len(owners) - share) < 0.02
    assert chisquare(observed, expected).pvalue > 1e-4


@pytest.mark.memory_mb(1000)
def test_the_four_seat_example_counts_exactly_and_agrees_with_rejection():
    """bench/specs/four.json: exact (the issue's budget: 5 s, 1 GB), against
    the estimate of the old plan (two seats listed, two by rejection) within
    four standard errors."""
    spec = load_spec(FOUR_JSON)
    summary = Plan.build(spec).summary()
    assert summary.exact and summary.deals == 79_620_058_488_307_725_653_954_976
    listed = Plan.build(load_spec({"north": FOUR_JSON["north"], "south": FOUR_JSON["south"]}))
    owners = np.concatenate(list(listed.deals(40_000, seed="rejection oracle")))
    kept = satisfies(owners, spec.constraints()).mean()
    se = np.sqrt(kept * (1 - kept) / len(owners))
    assert abs(summary.deals - listed.deals_total * kept) < 4 * se * listed.deals_total


def test_exact_operations_agree_with_python_ints():
    rng = np.random.default_rng(7)
    big = rng.integers(0, 1 << 45, size=(30, 50))
    small = rng.integers(0, 3000, size=(50, 40))
    want = [[sum(int(big[i, k]) * int(small[k, j]) for k in range(50)) for j in range(40)] for i in range(30)]
    assert exact_matmul(big, small).tolist() == want
    a, b = rng.integers(0, 1 << 48, size=(20, 300)), rng.integers(0, 1 << 48, size=(20, 300))
    dots = [sum(int(x) * int(y) for x, y in zip(a[i], b[i])) for i in range(20)]
    assert row_dots(a, b) == dots
    r = [int(rng.integers(0, 1 << 60)) * (d >> 60) // (1 << 60) for d in dots]
    cums = [list(itertools.accumulate(int(x) * int(y) for x, y in zip(a[i], b[i]))) for i in range(20)]
    assert first_above(a, b, r).tolist() == [next(j for j, c in enumerate(cums[i]) if c > r[i]) for i in range(20)]


def test_unique_rows_sorts_as_numpy():
    rng = np.random.default_rng(3)
    for _ in range(50):
        table = rng.integers(-3, 4, size=(int(rng.integers(1, 300)), int(rng.integers(1, 6))))
        keys, inv = np.unique(table, axis=0, return_inverse=True)
        sig, first = unique_rows(table)
        assert (sig == inv.reshape(-1)).all() and (table[first] == keys).all()
    wide = rng.integers(0, 2**40, size=(200, 3))  # past one packed int64: numpy's own unique
    assert (wide[unique_rows(wide)[1]] == np.unique(wide, axis=0)).all()
    assert [len(a) for a in unique_rows(np.zeros((0, 3), np.int64))] == [0, 0]
    table = rng.integers(0, 3, size=(500, 2))  # the first row of each: numpy's return_index
    assert (unique_rows(table)[1] == np.unique(table, axis=0, return_index=True)[1]).all()


@pytest.mark.parametrize("span", [0, 3, 1000, 2**40])  # a table of marks, or numpy's sort past 4 keys a value
def test_unique_inverse_is_numpys(span):
    rng = np.random.default_rng(span)
    for dtype in (np.int64, np.int32, np.uint16):
        for n in (0, 1, 7, 5000):
            keys = rng.integers(0, min(span, np.iinfo(dtype).max) + 1, size=n).astype(dtype) - (dtype is np.int64) * span // 2
            values, inverse = unique_inverse(keys)
            expected, expected_inverse = np.unique(keys, return_inverse=True)
            assert values.dtype == expected.dtype and (values == expected).all() and (inverse == expected_inverse).all()


def test_a_layout_too_wide_is_refused_from_its_first_columns(monkeypatch):
    """The reach of the first suit columns' options is probed before the
    others' options are made: a layout whose first 32 columns already reach
    too many pair vectors is refused from them.  The probe changes when a
    layout is refused, never whether: without it the same layout is refused
    by the whole reach."""
    from truedeal.constraints.dealer import parse_program

    comp = compile_program(parse_program(
        "condition hcp(north) >= 10 && hcp(south) >= 10 && hcp(east) >= 5 && spades(north) >= 4 && hearts(south) >= 4"))
    whole = build_paired(comp)
    assert len(whole.options) > 2 * paired_listing._FIRST_PROBE
    monkeypatch.setattr(paired_listing, "MAX_PAIR_STATES", len(whole.z_flat) - 1)
    with pytest.raises(TooWide, match=r"from its first (\d+) suit columns") as refused:
        build_paired(comp)
    assert int(str(refused.value).split("first ")[1].split()[0]) < len(whole.options)
    monkeypatch.setattr(paired_listing, "_FIRST_PROBE", 10**9)
    with pytest.raises(TooWide, match=rf"a pair of suits reaches {len(whole.z_flat):,} feature vectors"):
        build_paired(comp)
