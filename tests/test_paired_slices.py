"""The paired listing built in slices of groups and merged deals the same
bytes as one built whole, and its slices share out the work.

four.json is the smallest bench spec whose factored listing is too wide, so
that ``Plan.build`` lists it by spades+hearts pair (about 3 s here)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from truedeal.cuts import cut_listing, load_slice, merge_slices
from truedeal.engine import Plan
from truedeal.listing.paired import PairedListing
from truedeal.listing.paired_slices import PairedCut, PairedSlice
from truedeal.spec import load_spec

# four.json's stated budget is 1 GB (its whole build, as in test_paired.py).
pytestmark = pytest.mark.memory_mb(1000)

FOUR = load_spec(json.loads((Path(__file__).parents[1] / "bench" / "specs" / "four.json").read_text()))


@dataclass
class Whole:
    """What the whole build gives, kept without its tables (the tests' memory bound)."""

    deals: int
    total: int
    cases: int
    e_weight: list[int]
    chunks: dict[int, np.ndarray]


@pytest.fixture(scope="module")
def whole():
    plan = Plan.build(FOUR)
    assert isinstance(plan.listing, PairedListing) and plan.exact
    return Whole(plan.summary().deals, plan.listing.total, plan.listing.cases, plan.listing.e_weight,
                 {i: plan.chunk(i, "paired slices") for i in (0, 7)})


@pytest.fixture(scope="module")
def cut():
    found = cut_listing(FOUR, 3)
    assert isinstance(found, PairedCut)
    return found


@pytest.fixture(scope="module")
def slices(cut):
    return [load_slice(cut.build(k).to_bytes()) for k in range(cut.parts)]


def test_merged_slices_deal_the_same_bytes_as_the_whole_build(whole, slices):
    merged = Plan.from_listing(FOUR, merge_slices(FOUR, slices))
    assert merged.summary().deals == whole.deals
    assert (merged.listing.cases, merged.listing.e_weight) == (whole.cases, whole.e_weight)
    for chunk, deals in whole.chunks.items():
        assert np.array_equal(merged.chunk(chunk, "paired slices"), deals)


def test_slices_share_out_the_groups_and_the_tables_and_add_up(whole, cut, slices):
    groups = np.concatenate([s.groups for s in slices])
    assert sorted(groups.tolist()) == list(range(len(whole.e_weight)))  # each group in one slice
    assert all(s.entries for s in slices)  # and each slice has work
    assert sum(s.total for s in slices) == whole.total
    assert sum(s.cases for s in slices) == whole.cases
    # no pair table is computed by two slices, and together they compute all
    frame = cut.prepared.frame
    tables = [frame.restricted(s.groups).pairs for s in slices]
    assert sum(len(t) for t in tables) == len(np.unique(np.concatenate(tables))) == len(frame.pairs)


def test_a_slice_whose_weights_were_altered_is_refused(slices):
    s = slices[1]
    bad = PairedSlice(s.index, s.parts, s.cases, s.groups, [s.weights[0] + 1, *s.weights[1:]])
    with pytest.raises(ValueError, match="weights differ"):
        merge_slices(FOUR, [slices[0], load_slice(bad.to_bytes()), slices[2]])
    with pytest.raises(ValueError, match="not all 3 slices"):
        merge_slices(FOUR, slices[:2])
