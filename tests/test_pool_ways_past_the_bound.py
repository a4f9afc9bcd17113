"""A rank pool whose ways pass the int64 product bound, listed exactly.

Two seats read by losers (listed by pattern) beside East read by controls
(a rank pool) and a free West: the pool's ways times the patterned seats'
made a paired listing's Y pass the bound that proves an int64 product
exact (33 + 34 bits), though Y itself stays below 2**61.  The plan was
rejection on South (60.1% kept); Y now goes in limbs
(:meth:`~truedeal.listing.exact_ops.SparseRight.times`).  The count is held
to a listing with no pool at all (East free), which East's controls
partition, and the draws to the law that partition gives.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chisquare

import truedeal.listing.exact_ops as exact_ops
from truedeal.cards import card
from truedeal.constraints.dealer import load_program
from truedeal.constraints.evaluate import satisfies
from truedeal.engine import Plan

#: North at most 7 losers, South at most 8: two seats read by length and honours.
LOSERS = "losers(north) <= 7 && losers(south) <= 8"
#: ... with East's controls: each a rank pool past the bound.
EAST = {"0-2": "controls(east) <= 2", "3": "controls(east) == 3", "4": "controls(east) == 4",
        "5+": "controls(east) >= 5"}
#: What a draw of the plan of LOSERS && controls(east) >= 3 may show.
DRAWN = ("3", "4", "5+")


def _plan(condition: str) -> Plan:
    return Plan.build(load_program(f"condition {condition}\n"))


@pytest.fixture(scope="module")
def limbs_and_counts():
    """Every part's exact count, and how many products each went in limbs for."""
    counts, limbs = {}, {}
    original = exact_ops.SparseRight._in_limbs
    calls: list[int] = []

    def spy(self, big, top):
        calls.append(top)
        return original(self, big, top)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(exact_ops.SparseRight, "_in_limbs", spy)
        for name, part in EAST.items():
            calls.clear()
            plan = _plan(f"{LOSERS} && {part}")
            assert plan.exact and plan.listed.pooled == (1,), name
            counts[name], limbs[name] = plan.deals_total, len(calls)
    return counts, limbs


@pytest.mark.memory_mb(800)
def test_east_s_controls_partition_the_count_with_east_free(limbs_and_counts):
    counts, limbs = limbs_and_counts
    free = _plan(LOSERS)
    assert free.exact and not free.listed.pooled  # East free: no pool, no limbs
    assert all(limbs.values()), limbs  # each part went past the bound
    assert all(counts.values()) and sum(counts.values()) == free.deals_total


@pytest.mark.memory_mb(800)
def test_its_deals_fit_and_follow_east_s_exact_law(limbs_and_counts):
    counts, _ = limbs_and_counts
    program = load_program(f"condition {LOSERS} && controls(east) >= 3\n")
    plan = Plan.build(program)
    assert plan.exact and plan.deals_total == sum(counts[k] for k in DRAWN)
    owners = np.concatenate(list(plan.deals(30_000, seed="pool ways past the bound")))
    assert satisfies(owners, program).all()
    aces, kings = [card(0, suit) for suit in range(4)], [card(1, suit) for suit in range(4)]
    controls = 2 * (owners[:, aces] == 1).sum(axis=1) + (owners[:, kings] == 1).sum(axis=1)
    seen = [(controls == 3).sum(), (controls == 4).sum(), (controls >= 5).sum()]
    law = np.array([counts[k] for k in DRAWN], dtype=float)
    assert chisquare(seen, law / law.sum() * len(owners)).pvalue > 1e-3, (seen, law / law.sum())
