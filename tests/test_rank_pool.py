"""HCP-only seats weighed by rank counts inside the paired listing (truedeal.listing.rank_pool)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chisquare

from truedeal import kernel
from truedeal.constraints.compile import compile_program
from truedeal.constraints.evaluate import satisfies as fits
from truedeal.engine import Plan
from truedeal.evaluate import hcp
from truedeal.listing import build_listing, count_cases
from truedeal.listing.paired import build_paired
from truedeal.listing.rank_pool import applicable
from truedeal.randomness import chunk_rng
from truedeal.spec import load_spec

#: North 1NT, South invitational with five hearts, the opponents within HCP ranges.
NT_INVITE = {"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"},
             "south": {"hcp": [8, 9], "hearts": [5, 13]}, "east": {"hcp": [8, 12]}, "west": {"hcp": [5, 12]}}

#: Specs that the factored listing also builds with its own pool (HCP-only
#: seats card by card): two independent methods, which must agree exactly.
BOTH = [
    {"north": {"hcp": [3, 4], "shape": "4333"}, "south": {"hcp": [0, 1], "shape": "5xxx"}, "east": {"hcp": [0, 2]}},
    {"condition": "shape(north, 4333 + 3433) && hcp(north) <= 2 && shape(south, 5xxx) && controls(south) <= 1"
                  " && controls(east) <= 2"},
]

#: A shape-only seat beside the pool: the same deals as the factored listing
#: (its cases differ: here the shape-only seat's honours make a case too).
SHAPE_ONLY = {"north": {"hcp": [15, 17], "shape": "4333"}, "south": {"shape": "5xxx"}, "east": {"hcp": [8, 12]}}


def _comp(spec):
    return compile_program(load_spec(spec).program())


@pytest.mark.parametrize("spec", BOTH, ids=range(len(BOTH)))
def test_rank_pool_counts_equal_the_factored_pool(spec):
    comp = _comp(spec)
    assert applicable(comp)
    factored, pooled = build_listing(comp), build_paired(comp)
    assert pooled.layout.pool is not None
    assert pooled.deals == factored.deals and pooled.deals > 0
    assert pooled.cases == count_cases(factored)


def test_a_shape_only_seat_beside_the_pool_counts_the_same_deals():
    comp = _comp(SHAPE_ONLY)
    assert build_paired(comp).deals == build_listing(comp).deals == 5_792_743_018_758_757_498_080_588


def test_a_plan_of_two_patterned_and_two_hcp_seats_is_exact():
    """It was listed for North and South, and East and West by rejection (39.6% kept)."""
    plan = Plan.build(load_spec(NT_INVITE))
    assert plan.exact and plan.listing.layout.pool is not None
    assert plan.deals_total == 37_518_963_468_449_687_703_683_568


def test_narrowing_a_pool_seat_partitions_the_count():
    """The specs with East at each HCP value add up to the whole (each its own listing)."""
    whole = build_paired(_comp(NT_INVITE)).deals
    parts = [build_paired(_comp({**NT_INVITE, "east": {"hcp": [v, v]}})).deals for v in range(8, 13)]
    assert sum(parts) == whole


def test_rank_pool_deals_fit_and_are_the_same_without_the_kernel():
    listing = build_paired(_comp(NT_INVITE))
    owners = listing.make_sampler().draw(4000, chunk_rng("rank pool", 0))
    assert fits(owners, load_spec(NT_INVITE).program()).all()
    assert (np.sort(owners, axis=1) == np.repeat(np.arange(4), 13)).all()
    with kernel.numpy_only():
        again = listing.make_sampler().draw(4000, chunk_rng("rank pool", 0))
    assert (owners == again).all()


def test_rank_pool_deals_follow_the_exact_law_of_each_pool_seat():
    """East's and West's HCP, drawn, against exact counts of the spec narrowed to each value."""
    plan = Plan.build(load_spec(NT_INVITE))
    owners = np.concatenate(list(plan.deals(20_000, seed="rank pool law")))
    for seat, name in ((1, "east"), (3, "west")):
        lo, hi = NT_INVITE[name]["hcp"]
        exact = np.array([build_paired(_comp({**NT_INVITE, name: {"hcp": [v, v]}})).deals for v in range(lo, hi + 1)], float)
        seen = np.bincount(hcp(owners, seat) - lo, minlength=hi - lo + 1)
        possible = exact > 0
        assert seen[~possible].sum() == 0
        assert chisquare(seen[possible], exact[possible] / exact.sum() * len(owners)).pvalue > 1e-4
