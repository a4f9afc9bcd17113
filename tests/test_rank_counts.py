"""The listing by rank counts, for seats constrained by whole-hand points only."""

from __future__ import annotations

from collections import Counter, defaultdict
from math import factorial

import numpy as np
from scipy.stats import chisquare

from truedeal.cards import HCP_OF_RANK
from truedeal.constraints.compile import compile_program
from truedeal.engine import Plan
from truedeal.evaluate import hcp
from truedeal.listing import build_listing, count_cases
from truedeal.rank_counts import RankCountListing, applicable
from truedeal.spec import load_spec

RANGES = [(11, 13), (9, 12), (8, 11), (7, 10)]
FOUR = {name: {"hcp": list(r)} for name, r in zip(("north", "east", "south", "west"), RANGES)}


def _card_by_card(ranges: list[tuple[int, int]]) -> dict[tuple[int, ...], int]:
    """An independent count: the 16 honours dealt one at a time to the four
    seats (state: each seat's HCP and honour count), then 36!/prod((13-c)!)
    ways for the spot cards."""
    states: dict[tuple, int] = defaultdict(int)
    states[(0,) * 8] = 1
    for points in [p for p in HCP_OF_RANK for _ in range(4)]:
        nxt: dict[tuple, int] = defaultdict(int)
        for st, ways in states.items():
            for seat in range(4):
                h = list(st)
                h[seat] += points
                h[4 + seat] += 1
                if h[seat] <= ranges[seat][1] and h[4 + seat] <= 13:
                    nxt[tuple(h)] += ways
        states = nxt
    law: dict[tuple[int, ...], int] = defaultdict(int)  # deals by HCP vector
    for st, ways in states.items():
        if all(lo <= st[s] <= hi for s, (lo, hi) in enumerate(ranges)):
            spots = factorial(36)
            for c in st[4:]:
                spots //= factorial(13 - c)
            law[st[:4]] += ways * spots
    return law


def test_four_hcp_seats_are_exact_and_match_a_card_by_card_count():
    plan = Plan.build(load_spec(FOUR))
    assert plan.exact
    assert plan.deals_total == sum(_card_by_card(RANGES).values())


def test_rank_counts_agree_with_the_factored_listing_where_both_apply():
    for spec in ({"north": {"hcp": [10, 12]}, "east": {"hcp": [5, 7]}, "south": {"hcp": [8, 10]}},
                 {"north": {"controls": [3, 6]}, "south": {"points": {"scale": [3, 2, 1], "range": [4, 7]}}},
                 {"condition": "hcp(north) + hcp(south) >= 26 && controls(north) > controls(south)"}):
        comp = compile_program(load_spec(spec).program())
        assert applicable(comp)
        a, b = RankCountListing(comp), build_listing(comp)
        assert (a.deals, a.cases) == (b.deals, count_cases(b))


def test_four_hcp_seats_deal_uniformly_over_the_hcp_vectors():
    """The joint law of the four HCP totals, drawn against its exact law."""
    plan = Plan.build(load_spec(FOUR))
    owners = np.concatenate(list(plan.deals(20_000, seed="four seats")))
    seen = Counter(zip(*(hcp(owners, s).tolist() for s in range(4))))
    exact = _card_by_card(RANGES)
    keys = sorted(exact)
    assert set(seen) <= set(keys)
    total = sum(exact.values())
    expected = np.array([exact[k] / total * len(owners) for k in keys])
    observed = np.array([seen.get(k, 0) for k in keys])
    assert (expected >= 5).all()
    assert chisquare(observed, expected).pvalue > 1e-4
