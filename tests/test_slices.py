"""A listing built in slices and merged deals the same bytes as one built whole.

The reference is the plan that ``Plan.build`` makes in one process; the
slices are built apart (as a job's partition tasks do), passed through their
compact byte form and merged.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from truedeal.engine import Plan, exact_source
from truedeal.listing import TooWide, build_listing, count_cases, enumerate_cells, make_layout, slice_of_cells
from truedeal.listing.cells import suit_columns
from truedeal.listing.slices import Slice, build_slice, merge
from truedeal.patterns import PATTERNS
from truedeal.spec import load_spec

BENCH = Path(__file__).resolve().parent.parent / "bench" / "specs"

SPECS = {
    "strong-nt": {"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}},
    "two-seats": json.loads((BENCH / "readme-two-seats.json").read_text()),
    "nt-hearts": json.loads((BENCH / "nt_hearts.json").read_text()),
    "weak2-script": json.loads((BENCH / "weak2.json").read_text()),
    "controls": json.loads((BENCH / "ctl.json").read_text()),
    "one-cell": {"north": {"hcp": [20, 22]}, "south": {"hcp": [0, 3]}},
}


def _sliced(spec, parts: int) -> list[Slice]:
    source = exact_source(spec)
    return [Slice.from_bytes(build_slice(source, k, parts).to_bytes()) for k in range(parts)]


@pytest.mark.parametrize("name,parts", [(name, 3) for name in sorted(SPECS)] + [("strong-nt", 1), ("two-seats", 8)])
def test_merged_slices_deal_the_same_bytes_as_the_whole_build(name, parts):
    spec = load_spec(SPECS[name])
    whole = Plan.build(spec)
    assert whole.exact and exact_source(spec) is not None
    want = (whole.summary().deals, count_cases(whole.listing), whole.listing.e_weight)
    want_deals = [whole.chunk(chunk, "slices") for chunk in (0, 5)]
    del whole  # one plan at a time, within the tests' memory bound
    merged = Plan.from_listing(spec, merge(exact_source(spec), _sliced(spec, parts)))
    assert (merged.summary().deals, count_cases(merged.listing), merged.listing.e_weight) == want
    for chunk, deals in zip((0, 5), want_deals):
        assert np.array_equal(merged.chunk(chunk, "slices"), deals)


def test_slices_share_out_the_cells_and_add_up():
    spec = load_spec(SPECS["nt-hearts"])
    whole = build_listing(exact_source(spec))
    slices = _sliced(spec, 5)
    assert sum(s.total for s in slices) == whole.total
    assert sum(s.cases for s in slices) == count_cases(whole)
    assert sum(s.entries for s in slices) == len(whole.e_weight)
    owner = {}
    for s in slices:
        for cell in np.unique(s.e_cell).tolist():
            assert owner.setdefault(cell, s.index) == s.index  # a cell's entries are in one slice
    assert sorted(owner) == sorted(set(whole.e_cell.tolist()))
    assert max(s.entries for s in slices) < 0.5 * len(whole.e_weight)  # the work is shared out


def test_empty_slices_are_fine():
    spec = load_spec(SPECS["one-cell"])
    slices = _sliced(spec, 4)
    assert [s.entries > 0 for s in slices] == [True, False, False, False]
    assert merge(exact_source(spec), slices).total == build_listing(exact_source(spec)).total


def test_slices_refuse_exactly_when_the_whole_listing_does(monkeypatch):
    spec = load_spec(SPECS["two-seats"])
    source = exact_source(spec)
    n = len(build_listing(source).e_weight)
    monkeypatch.setattr("truedeal.listing.build.MAX_ENTRIES", n - 1)
    monkeypatch.setattr("truedeal.listing.slices.MAX_ENTRIES", n - 1)
    with pytest.raises(TooWide):
        build_listing(source)
    slices = [build_slice(source, k, 4) for k in range(4)]  # each fits alone
    with pytest.raises(TooWide):
        merge(source, slices)


def test_merge_refuses_an_incomplete_set():
    spec = load_spec(SPECS["strong-nt"])
    slices = _sliced(spec, 3)
    with pytest.raises(ValueError, match="not all 3 slices"):
        merge(exact_source(spec), slices[:2])
    with pytest.raises(ValueError, match="not a truedeal slice"):
        Slice.from_bytes(_npz_with_meta("other/1"))


def _npz_with_meta(tag: str) -> bytes:
    import io

    buf = io.BytesIO()
    np.savez(buf, meta=np.array([tag]))
    return buf.getvalue()


def test_plans_that_are_not_one_listing_are_not_sliced():
    union = load_spec({"condition": "(hcp(north) >= 15 && hcp(north) <= 17) || (hcp(south) >= 15 && hcp(south) <= 17)"})
    assert exact_source(union) is None
    dd = load_spec({"condition": "tricks(north, notrumps) >= 9"})
    assert exact_source(dd) is None


def test_four_patterned_seats_list_the_cells_a_cross_product_lists():
    """The last of four patterned seats has its pattern forced; the cells
    (and their order) equal a plain product over the four seats' patterns."""
    spec = load_spec({
        "north": {"shape": "any 4333 + any 4432"}, "east": {"shape": "any 5332"},
        "south": {"shape": "any 4432 + 5xxx"}, "west": {"spades": [0, 4]},
    })
    layout = make_layout(spec.constraints())
    masks = layout.comp.pattern_masks
    choices = [np.nonzero(masks[s])[0] for s in layout.patterned]
    rows = []  # the product, in itertools.product's order, one first-seat pattern at a time (numpy, not a loop)
    for first in choices[0]:
        rest = np.stack(np.meshgrid(*choices[1:], indexing="ij"), axis=-1).reshape(-1, len(choices) - 1)
        fits = ((PATTERNS[first] + PATTERNS[rest].sum(axis=1)) == 13).all(axis=1)
        rows.append(np.column_stack([np.full(int(fits.sum()), first), rest[fits]]))
    brute = np.concatenate(rows).astype(np.int64)
    brute = brute[layout.comp.cell_possible(brute)]
    assert len(brute) > 100
    assert np.array_equal(enumerate_cells(layout.comp, layout), brute)


def test_every_cell_has_one_slice():
    spec = load_spec(SPECS["two-seats"])
    layout = make_layout(exact_source(spec))
    cells = enumerate_cells(layout.comp, layout)
    columns, cell_cols = suit_columns(cells, layout)
    for parts in (1, 3, 8):
        slice_of = slice_of_cells(layout, cells, cell_cols, len(columns), parts)
        assert slice_of.shape == (len(cells),) and set(slice_of.tolist()) == set(range(parts))
    with pytest.raises(ValueError):
        slice_of_cells(layout, cells, cell_cols, len(columns), 0)
    with pytest.raises(ValueError):
        build_slice(exact_source(spec), 3, 3)
