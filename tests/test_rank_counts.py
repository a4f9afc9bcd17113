"""The listing by rank counts, for seats constrained by whole-hand points only."""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import cache
from math import factorial

import numpy as np
import pytest
from scipy.stats import chisquare

from truedeal.cards import HCP_OF_RANK, card
from truedeal.constraints.compile import compile_program
from truedeal.constraints.dealer import load_program
from truedeal.constraints.evaluate import evaluate_cond
from truedeal.engine import Plan
from truedeal.evaluate import hcp
from truedeal.honours_by_suit import HonoursBySuitListing
from truedeal.listing import build_listing, count_cases
from truedeal.rank_counts import RankCountListing, applicable
from truedeal.spec import load_spec

RANGES = [(11, 13), (9, 12), (8, 11), (7, 10)]
FOUR = {name: {"hcp": list(r)} for name, r in zip(("north", "east", "south", "west"), RANGES)}


def _card_by_card(ranges: list[tuple[int, int]], predeal: dict[int, list[int]] | None = None) -> dict[tuple[int, ...], int]:
    """An independent count: the 16 honours dealt one at a time to the four
    seats (state: each seat's HCP and honour count), then 36!/prod((13-c)!)
    ways for the spot cards.  ``predeal``: seat -> ranks (0 = ace) of cards
    it holds from the start (a spot card leaves one spot fewer to deal)."""
    predeal = predeal or {}
    start = [0] * 8
    held = [r for ranks in predeal.values() for r in ranks if r < 4]
    for seat, ranks in predeal.items():
        start[seat] += sum(HCP_OF_RANK[r] for r in ranks if r < 4)
        start[4 + seat] += len(ranks)
    states: dict[tuple, int] = defaultdict(int)
    states[tuple(start)] = 1
    honours = [r for r in range(4) for _ in range(4 - held.count(r))]
    for points in [HCP_OF_RANK[r] for r in honours]:
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
            spots = factorial(52 - len(honours) - sum(len(r) for r in predeal.values()))
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


PREDEALT = {  # one honour and one spot card: a combo places 15 honours, 35 spot cards
    "north": {"hcp": [15, 17], "holds": ["SA"]}, "east": {"hcp": [8, 12]}, "south": {"hcp": [0, 9], "holds": ["H2"]},
}


def test_predealt_cards_beside_three_hcp_seats_are_exact_and_match_a_card_by_card_count():
    """Predealt cards used to send such a spec to rejection (50% kept)."""
    plan = Plan.build(load_spec(PREDEALT))
    assert plan.exact and type(plan.listing) is RankCountListing
    law = _card_by_card([(15, 17), (8, 12), (0, 9), (0, 37)], predeal={0: [0], 2: [12]})
    assert plan.deals_total == sum(law.values())


def test_predealt_cards_deal_uniformly_and_stay_where_they_were_put():
    plan = Plan.build(load_spec(PREDEALT))
    owners = np.concatenate(list(plan.deals(20_000, seed="predealt")))
    assert (owners[:, card(0, 0)] == 0).all() and (owners[:, card(12, 1)] == 2).all()
    assert ((owners[:, :, None] == np.arange(4)).sum(axis=1) == 13).all()
    seen = Counter(zip(*(hcp(owners, s).tolist() for s in range(3))))
    exact: dict[tuple[int, ...], int] = defaultdict(int)
    for key, ways in _card_by_card([(15, 17), (8, 12), (0, 9), (0, 37)], predeal={0: [0], 2: [12]}).items():
        exact[key[:3]] += ways
    total = sum(exact.values())
    keys = sorted(k for k in exact if exact[k] * len(owners) >= 10 * total)
    expected = np.array([exact[k] / total * len(owners) for k in keys])
    observed = np.array([seen.get(k, 0) for k in keys])
    rare = len(owners) - expected.sum()  # the vectors expected fewer than 5 times, as one cell
    assert rare >= 5
    expected, observed = np.append(expected, rare), np.append(observed, len(owners) - observed.sum())
    assert chisquare(observed, expected).pvalue > 1e-4


@cache
def _kqj_deals() -> np.ndarray:
    """Every deal in which each seat holds one ace and nine spot cards (2-T)
    predealt, and three of the twelve kings, queens and jacks: 12!/(3!)^4 =
    369,600 owners rows."""
    from itertools import combinations

    base = np.zeros(52, np.uint8)
    for seat in range(4):
        base[card(0, seat)] = seat  # North the spade ace, East the heart ace...
        base[[card(r, s) for r in range(4, 13) for s in range(4) if (9 * s + r - 4) % 4 == seat]] = seat
    free = [card(r, s) for r in (1, 2, 3) for s in range(4)]
    splits = [(n, e, s) for n in combinations(range(12), 3) for e in combinations(sorted(set(range(12)) - set(n)), 3)
              for s in combinations(sorted(set(range(12)) - set(n) - set(e)), 3)]  # North's, East's, South's three
    owner_of = np.full((len(splits), 12), 3, np.uint8)
    for i, (n, e, s) in enumerate(splits):
        owner_of[i, list(n)], owner_of[i, list(e)], owner_of[i, list(s)] = 0, 1, 2
    rows = np.tile(base, (len(splits), 1))
    rows[:, free] = owner_of
    rows.flags.writeable = False
    return rows


@pytest.mark.parametrize("condition, kind", [
    ("hcp(north) >= 11 && hcp(east) <= 8 && hcp(south) >= 9 && hcp(south) <= 10", RankCountListing),
    ("hcp(north) + hcp(south) >= 21 && controls(east) <= 3 && hcp(west) >= 9", RankCountListing),
    ("hcp(north) >= 10 && top3(east, hearts) <= 1 && top3(west, clubs) == 1", HonoursBySuitListing),
])
def test_predealt_aces_and_spots_beside_four_seats_count_what_brute_force_gives(condition, kind):
    """Each seat holds an ace and nine spot cards predealt, so every seat is
    read (7-13 HCP) and no free seat takes what the listing leaves: the
    listing by rank counts or suit by suit, and the plan, against all
    369,600 completions."""
    owners = _kqj_deals()
    assert ((owners[:, :, None] == np.arange(4)).sum(axis=1) == 13).all()
    kqj = [card(r, s) for r in (1, 2, 3) for s in range(4)]
    predeal = "".join(f"predeal {name} " + ", ".join("SHDC"[c % 4] + "AKQJT98765432"[c // 4] for c in np.nonzero(
        (owners[0] == seat) & ~np.isin(np.arange(52), kqj))[0]) + "\n" for seat, name in enumerate(("north", "east", "south", "west")))
    program = load_program(predeal + "condition " + condition)
    expected = int(evaluate_cond(owners, load_program("condition " + condition).condition).sum())
    assert 0 < expected < len(owners)
    assert kind(compile_program(program)).deals == expected
    plan = Plan.build(program)
    assert plan.exact and plan.deals_total == expected
