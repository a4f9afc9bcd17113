"""A pooled seat listed by pattern where the three other seats are
(``Plan._build_pool_by_pattern``): tried last, where the pooled listing is
too wide, it must count what the pooled listing counts wherever both list,
and deal only deals that fit."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from truedeal.constraints.dealer import load_program
from truedeal.constraints.evaluate import satisfies
from truedeal.engine import Plan

#: North, East and West listed by pattern, South by its honours alone: small enough for the pooled listing.
BOTH_LIST = {
    "shapes": "shape(north, any 4333) && hcp(north) >= 15 && hcp(north) <= 17 && shape(east, any 6331) "
              "&& hcp(east) <= 10 && controls(south) >= 3 && shape(west, any 4432)",
    "losers": "shape(north, any 4333) && hcp(north) >= 15 && hcp(north) <= 17 && shape(east, any 6331) "
              "&& controls(south) >= 3 && losers(west) <= 7",
}


@pytest.mark.memory_mb(800)  # 534 and 697 MB here (2026-11-29): the pooled plan's tries, then the other plan
@pytest.mark.parametrize("condition", BOTH_LIST.values(), ids=BOTH_LIST.keys())
def test_a_pooled_seat_listed_by_pattern_counts_what_the_pool_counts(condition):
    program = load_program(f"condition {condition}\n")
    pooled = Plan.build(program)
    assert pooled.exact and pooled.listed.pooled == (2,)  # South by its honours, as written
    want = pooled.deals_total
    del pooled  # one plan at a time
    by_pattern = Plan._build_pool_by_pattern(None, program, None, time.perf_counter())
    assert by_pattern is not None and by_pattern.exact and by_pattern.listed.patterned == (0, 1, 2, 3)
    assert by_pattern.deals_total == want
    owners = next(by_pattern.deals(2000, seed="pool by pattern"))
    assert satisfies(owners, program).all()


def test_it_applies_only_beside_three_patterned_seats():
    """A free seat, or two pooled ones: no such plan."""
    for condition in ("shape(north, any 4333) && controls(south) >= 3",
                      "shape(north, any 4333) && shape(east, any 6xxx) && controls(south) >= 3 && controls(west) >= 2"):
        assert Plan._build_pool_by_pattern(None, load_program(f"condition {condition}\n"), None, 0.0) is None


#: North 15-17 and 4-3-3-3, East at most 10 with 6-3-3-1: listed exactly alone (fast).
SUPPORT = "shape(north, any 4333) && hcp(north) >= 15 && hcp(north) <= 17 && shape(east, any 6331) && hcp(east) <= 10"
#: ... and South 3+ controls, West at most 8 losers: pooled, South's honour counts make too many
#: feature states; listed by pattern, it lists.
TOO_WIDE_POOLED = f"{SUPPORT} && controls(south) >= 3 && losers(west) <= 8"


@pytest.mark.memory_mb(800)
def test_a_plan_too_wide_pooled_lists_the_seat_by_pattern_and_rejection_agrees():
    """Plan.build takes it as its last exact try, and its count is within
    the error bar of rejection measured here: deals drawn uniformly from
    North's and East's listing, kept where South's and West's parts hold
    (the evaluator's reading of them)."""
    program = load_program(f"condition {TOO_WIDE_POOLED}\n")
    plan = Plan.build(program)
    assert plan.exact and plan.listed.patterned == (0, 1, 2, 3)
    exact = plan.deals_total
    del plan
    support = Plan.build(load_program(f"condition {SUPPORT}\n"))
    assert support.exact
    owners = np.concatenate(list(support.deals(200_000, seed="pool by pattern, rejection")))
    share = satisfies(owners, program).mean()
    stderr = math.sqrt(share * (1 - share) / len(owners))
    assert abs(exact / support.deals_total - share) < 4 * stderr, (exact / support.deals_total, share, stderr)
