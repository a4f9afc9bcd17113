"""Pair tables, the convolution of two suits' option tables: built many pairs
at a time, they must be the tables of the first implementation (one pair at a
time, kept here as the reference), and those the plain double sum over the
two suits' options."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from truedeal.constraints.compile import compile_program
from truedeal.constraints.load import load_constraints
from truedeal.listing.cells import checked_cells, pair_keys
from truedeal.listing.options import suit_options
from truedeal.listing.tables import pair_tables

SPECS = Path(__file__).resolve().parents[1] / "bench" / "specs"


def _columns(spec: dict):
    layout, _, columns, cell_cols = checked_cells(compile_program(load_constraints(spec).program()))
    g = np.zeros((len(columns), layout.zsize), dtype=np.int64)
    for k, col in enumerate(columns):
        opt = suit_options(col, layout)
        np.add.at(g[k], opt.vflat, opt.weight)
    keys = np.unique(pair_keys(cell_cols, len(columns)).reshape(-1))
    return layout, g, [(int(k) // len(columns), int(k) % len(columns)) for k in keys]


def one_pair(ga: np.ndarray, gb: np.ndarray, layout) -> np.ndarray:
    """The first implementation: one pair, every option pair at once."""
    out = np.zeros(layout.zsize, dtype=np.int64)
    ia, ib = np.nonzero(ga)[0], np.nonzero(gb)[0]
    if not len(ia) or not len(ib):
        return out
    z, ok = layout.add(layout.vectors(ia)[:, None, :], layout.vectors(ib)[None, :, :])
    i, j = np.nonzero(ok)
    np.add.at(out, z[i, j] @ layout.strides, ga[ia[i]] * gb[ib[j]])
    return out


def _plain(ga: np.ndarray, gb: np.ndarray, layout) -> np.ndarray:
    """The double sum, one option pair at a time (Python integers)."""
    out = [0] * layout.zsize
    for a in np.nonzero(ga)[0]:
        for b in np.nonzero(gb)[0]:
            z, fits = layout.add(layout.vectors([a]), layout.vectors([b]))
            if fits[0]:
                out[int(z[0] @ layout.strides)] += int(ga[a]) * int(gb[b])
    return np.array(out, dtype=np.int64)


@pytest.mark.parametrize("name", ["weak2", "fit25", "ctl", "nt_hearts"])
def test_pair_tables_are_the_tables_of_each_pair(name):
    layout, g, pairs = _columns(json.loads((SPECS / f"{name}.json").read_text()))
    got = pair_tables(g, pairs, layout)
    for p in range(0, len(pairs), max(1, len(pairs) // 40)):
        a, b = pairs[p]
        assert (got[p] == one_pair(g[a], g[b], layout)).all(), pairs[p]
    a, b = pairs[len(pairs) // 2]
    assert (got[len(pairs) // 2] == _plain(g[a], g[b], layout)).all()


def test_weights_too_large_for_doubles_are_summed_in_integers():
    """Past 2**53 a double drops units: such tables are added in int64
    (products here reach 2**56, below int64's 2**63)."""
    layout, g, pairs = _columns(json.loads((SPECS / "ctl.json").read_text()))
    big = g * (2**28 // int(g.max())) + (g > 0)  # odd units: a double would round them away
    assert 2**27 < int(big.max()) < 2**29
    got = pair_tables(big, pairs, layout)
    for p, (a, b) in enumerate(pairs):
        assert (got[p] == one_pair(big[a], big[b], layout)).all()


@pytest.mark.parametrize("condition", [
    "hcp(north) + hcp(south) >= 28 && hearts(north) + hearts(south) >= 9",  # 18 passes
    "controls(north) + controls(south) >= 8 && spades(north) + spades(south) >= 8",  # 23 passes
])
def test_the_order_of_the_level0_passes_does_not_change_the_listing(condition, monkeypatch):
    """The passes run largest first (a listing past the entry limit fails
    sooner); in the reverse order the level-0 entries are the same."""
    from truedeal.listing import build

    spec = load_constraints({"condition": condition}).program()
    first = build.build_listing(compile_program(spec))
    largest_first = build._largest_first
    monkeypatch.setattr(build, "_largest_first", lambda batches, reach: largest_first(batches, reach)[::-1])
    second = build.build_listing(compile_program(spec))
    for field in ("e_cell", "e_z1", "e_c"):
        assert (getattr(first, field) == getattr(second, field)).all()
    assert first.e_weight == second.e_weight


@pytest.mark.parametrize("condition", [
    # 8 signatures of 1, 2 and 4 boxes (North's and South's points read by their shapes)
    "(spades(north) >= 5 ? hcp(north) >= 12 : hcp(north) >= 15) && (clubs(north) >= 4 ? hcp(north) <= 16"
    " : (hcp(north) <= 13 || hcp(north) >= 17)) && (hearts(south) >= 4 ? hcp(south) >= 8 : (hcp(south) <= 5"
    " || hcp(south) >= 10)) && shape(south, any 5431 + any 4441) && shape(north, any 5431 + any 4441)",
    # a pool (West's points), 4 signatures of 1 and 2 boxes
    "(spades(north) >= 5 ? hcp(north) >= 12 : hcp(north) >= 15) && (hearts(north) >= 4 ? hcp(west) <= 8"
    " : (hcp(west) <= 5 || hcp(west) >= 10)) && shape(north, any 5431 + any 4441)",
])
def test_passes_of_several_signatures_list_what_one_pass_per_signature_lists(condition, monkeypatch):
    """A level-0 pass takes the keys of every signature of a kind (as many
    boxes, bounded below on the same coordinates; tables.BoxSlots: each row
    its own boxes); one pass per signature, as before, gives the same
    entries and weights."""
    from truedeal.listing import build
    from truedeal.listing.tables import pass_kinds, sig_box_arrays

    spec = load_constraints({"condition": condition}).program()
    mixed = build.build_listing(compile_program(spec))
    kinds = pass_kinds(sig_box_arrays(mixed.sig_boxes, mixed.layout.n_box))
    assert len(set(kinds)) > 1 and len(kinds) > len(set(kinds))  # signatures share a pass
    batches = build._batches
    monkeypatch.setattr(build, "_batches", lambda keys, layout, n, nonzero: batches(keys, layout, np.arange(len(n)), nonzero))
    alone = build.build_listing(compile_program(spec))
    for field in ("e_cell", "e_z1", "e_c"):
        assert (getattr(mixed, field) == getattr(alone, field)).all()
    assert mixed.e_weight == alone.e_weight and mixed.total > 0


@pytest.mark.parametrize("clamp", [(False, False, False, False), (True, True, False, True)])
def test_box_sums_leave_axes_of_one_value_unpadded_and_sum_alike(clamp):
    """The listing's passes leave a form's axis of one value unpadded (2**k
    times smaller tables with k such axes); their box sums are the samplers'
    padded ones, and the brute-force sum over the table."""
    from itertools import product

    from truedeal.listing.layout import Layout
    from truedeal.listing.tables import box_sums, prefix_size, prefix_sums

    layout = Layout(None, (), (), (), (), (), dims=(4, 1, 3, 1, 2), n_box=4, clamp=clamp)  # type: ignore[arg-type]
    rng = np.random.default_rng(5)
    tables = rng.integers(0, 1000, size=(3, layout.zsize))
    n = 400
    z1 = np.column_stack([rng.integers(0, d, n) for d in layout.dims])
    lo = rng.integers(-1, 5, size=(n, 4))
    hi = lo + rng.integers(-1, 5, size=(n, 4))
    exact = rng.integers(0, 3, size=(n, 1))
    which = rng.integers(0, 3, n)
    padded = box_sums(prefix_sums(tables, layout), layout, z1, lo, hi, exact, which)
    compact = prefix_sums(tables, layout, pad_single=False)
    assert compact[0].size == prefix_size(layout, pad_single=False) == prefix_size(layout) // 4
    assert (box_sums(compact, layout, z1, lo, hi, exact, which, pad_single=False) == padded).all()
    top = layout.open_top(hi)
    brute = [sum(int(tables[w][int(np.dot(z2, layout.strides))]) for z2 in product(*map(range, layout.dims))
                 if all(lo[r, d] <= z1[r, d] + z2[d] <= top[r, d] for d in range(4)) and z1[r, 4] + z2[4] == exact[r, 0])
             for r, w in enumerate(which)]
    assert padded.tolist() == brute and 0 < sum(brute)


def test_pair_tables_skip_coordinates_of_one_value():
    """Coordinates of one value (folded forms) add 0 + 0 and always fit:
    the pair tables leave them out, and are still those of the plain sum,
    clamped coordinates included."""
    from truedeal.listing.layout import Layout

    layout = Layout(None, (), (), (), (), (), dims=(5, 1, 4, 1, 3), n_box=4, clamp=(True, False, False, True))  # type: ignore[arg-type]
    assert layout.live_axes == [0, 2, 4]
    rng = np.random.default_rng(2)
    g = rng.integers(0, 50, size=(3, layout.zsize)) * (rng.random((3, layout.zsize)) < 0.5)
    pairs = [(0, 1), (0, 2), (1, 1), (2, 0)]
    got = pair_tables(g, pairs, layout)
    for p, (a, b) in enumerate(pairs):
        assert (got[p] == _plain(g[a], g[b], layout)).all()
        assert got[p].any()


@pytest.mark.parametrize("clamp", [(False, False, False, False), (True, True, False, True)])
def test_flat_sums_are_the_sums_of_the_vectors(clamp):
    """Layout.add_flat (flat indices, coordinate by coordinate) against
    Layout.add on the unravelled vectors, clamped coordinates included."""
    from truedeal.listing.layout import Layout

    layout = Layout(None, (), (), (), (), (), dims=(5, 1, 4, 3, 2), n_box=4, clamp=clamp)  # type: ignore[arg-type]
    rng = np.random.default_rng(8)
    ia, ib = rng.integers(0, layout.zsize, 60), rng.integers(0, layout.zsize, 70)
    xa, xb = layout.vectors(ia), layout.vectors(ib)
    z, fits = layout.add(xa[:, None, :], xb[None, :, :])
    flat, flat_fits = layout.add_flat(ia, xa, ib, xb)
    assert np.array_equal(flat_fits, fits) and 0 < fits.sum() < fits.size
    assert np.array_equal(flat[fits], (z @ layout.strides)[fits])


def test_case_counts_of_passes_of_several_signatures_are_those_of_one_pass_per_signature(monkeypatch):
    """The interval case count (a pool beside a shape-only seat: script 23's
    listing, 7 signatures) takes the pairs of a signature kind together and
    keeps its (S,H) tables for all its passes; one pass per signature, its
    tables made per pass, counts the same cases."""
    from truedeal.listing import cases
    from truedeal.listing.build import listing_tables

    # The listing Plan.build makes (build_listing) but for its level-0 entries, which a case count
    # does not read: their fill took more than half of this test's time.
    program = load_constraints(Path(__file__).parent / "scripts" / "23_modulo.dlr").program()
    listing = listing_tables(*checked_cells(compile_program(program)))
    interval = cases._count_cases_interval
    used: list[int] = []
    monkeypatch.setattr(cases, "_count_cases_interval", lambda lst: used.append(1) or interval(lst))
    together = cases._count(listing)
    monkeypatch.setattr(cases, "pass_kinds", lambda arrays: np.arange(len(arrays)))
    monkeypatch.setattr(cases, "_KEPT_TABLES_BYTES", 0)
    assert used and len(listing.sig_boxes) > 1 and cases._count(listing) == together > 0
