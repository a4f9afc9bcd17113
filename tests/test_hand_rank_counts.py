"""The listing of one hand in full and the other seats by rank counts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import cache
from math import comb

import numpy as np
import pytest
from scipy.stats import chisquare

from truedeal.cards import HCP_OF_RANK
from truedeal.constraints.compile import compile_program
from truedeal.constraints.evaluate import evaluate_cond
from truedeal.engine import Plan
from truedeal.evaluate import hcp
from truedeal.hand_rank_counts import HandRankCountListing, applicable
from truedeal.listing import build_listing, count_cases
from truedeal.patterns import PATTERNS
from truedeal.spec import load_spec

BAL = "any 4333 + any 4432 + any 5332"
NT_AND_THREE = {"north": {"hcp": [15, 17], "shape": BAL}, "east": {"hcp": [8, 12]}, "south": {"hcp": [6, 10]},
                "west": {"hcp": [5, 12]}}


@pytest.fixture(scope="module")
def nt_and_three() -> Callable[[], Plan]:
    """The plan of NT_AND_THREE, for the tests that only read it or draw from
    it: built once, by the first that asks (its memory bound counts it)."""
    return cache(lambda: Plan.build(load_spec(NT_AND_THREE)))


def _compiled(spec: dict):
    comp = compile_program(load_spec(spec).program())
    assert applicable(comp)
    return comp


@pytest.mark.parametrize("spec", [
    {"north": {"hcp": [15, 17], "shape": BAL}, "east": {"hcp": [8, 12]}},
    {"north": {"losers": [0, 7]}, "west": {"controls": [2, 5]}},
    {"condition": "hcp(north) + hcp(south) >= 25 && shape(north, any 4333 + any 4432 + any 5332)"},
    # no free seat; its factored listing takes 513 MB with the imports when it runs first in its process
    pytest.param({"north": {"spades": 5}, "east": {"hcp": [0, 2]}, "south": {"hcp": [0, 2]}, "west": {"hcp": [0, 3]}},
                 marks=pytest.mark.memory_mb(600)),
    # two free seats may hold more than 13 of the 16 tracked cards (they were capped at 13)
    {"condition": "spades(north) == 2 && top4(north, spades) > 0 && controls(east) <= 11"},
    {"condition": "hearts(north) >= 3 && top4(north, hearts) == 1 && hcp(east) >= 1"},
])
def test_agrees_with_the_factored_listing_where_both_apply(spec):
    comp = _compiled(spec)
    a, b = HandRankCountListing(comp), build_listing(comp)
    assert (a.deals, a.cases) == (b.deals, count_cases(b))


def _two_spades_with_an_honour_and_an_east_control() -> int:
    """North: two spades, one of them among AKQJ; East: an ace or a king.  By
    North's number of aces and kings, suit by suit (East fails only when it
    holds none of those left: C(39 - left, 13) hands); South and West share
    the other 26 cards freely."""
    def suits(length: int, honour: bool) -> Counter:
        out: Counter = Counter()
        for mask in range(16):  # A, K, Q, J
            held = bin(mask).count("1")
            if held <= length <= held + 9 and (mask or not honour):
                out[(mask & 1, mask >> 1 & 1)] += comb(9, length - held)
        return out
    north: Counter = Counter({(0, 0, 0): 1})  # (cards, aces, kings) in the three other suits
    for _ in range(3):
        more: Counter = Counter()
        for (n, a, k), w in north.items():
            for length in range(14 - n):
                for (x, y), v in suits(length, False).items():
                    more[(n + length, a + x, k + y)] += w * v
        north = more
    total = 0
    for (n, a, k), w in north.items():
        for (x, y), v in suits(2, True).items():
            if n == 11:
                left = 8 - (a + x) - (k + y)
                total += w * v * (comb(39, 13) - comb(39 - left, 13)) * comb(26, 13)
    return total


def test_two_free_seats_may_hold_more_than_thirteen_tracked_cards():
    """The combos of rank counts capped the two free seats' share at 13 of
    the 16 honours: North with one honour, East with one, left South and
    West 14, and those deals were not counted."""
    comp = compile_program(load_spec({"condition": "spades(north) == 2 && top4(north, spades) > 0 && controls(east) >= 1"}).program())
    assert applicable(comp)
    assert HandRankCountListing(comp).deals == _two_spades_with_an_honour_and_an_east_control()


def _card_by_card(modulus: int) -> int:
    """An independent count, modulo ``modulus``, of "North exactly 5 spades,
    East 10+ HCP, South at most 5": the 52 cards dealt one at a time, the
    state being North's spades and cards, East's and South's cards and HCP
    (East's capped at 10); West takes the rest."""
    st = np.zeros((6, 14, 14, 14, 11, 6), np.int64)  # N spades, N, E, S cards, E HCP (10 = 10+), S HCP
    st[0, 0, 0, 0, 0, 0] = 1
    for suit in range(4):
        for v in HCP_OF_RANK + (0,) * (13 - len(HCP_OF_RANK)):
            new = st.copy()  # to West
            if suit == 0:
                new[1:, 1:] += st[:-1, :-1]
            else:
                new[:, 1:] += st[:, :-1]
            east = np.zeros_like(st[:, :, :-1])
            east[..., v:, :] += st[:, :, :-1, :, : 11 - v, :]
            if v:
                east[..., 10, :] += st[:, :, :-1, :, 11 - v :, :].sum(axis=4)
            new[:, :, 1:] += east
            new[:, :, :, 1:, :, v:] += st[:, :, :, :-1, :, : 6 - v]
            st = new % modulus
        if suit == 0:
            st = st[5:]  # the spades are dealt: only the states of North with five can reach the answer
    return int(st[-1, 13, 13, 13, 10, :].sum() % modulus)


@pytest.mark.memory_mb(600)  # the listing of this wide spec peaks at about 360 MB: 515 MB in all, run alone
def test_a_wide_spec_matches_a_card_by_card_count():
    listing = HandRankCountListing(_compiled({"north": {"spades": 5}, "east": {"hcp": [10, 37]}, "south": {"hcp": [0, 5]}}))
    for modulus in (10**17 + 3, 2**56 - 5):  # small enough that eight summands fit in int64
        assert listing.deals % modulus == _card_by_card(modulus)


def test_the_plan_is_exact_and_its_deals_fit(nt_and_three):
    plan = nt_and_three()
    assert plan.exact and isinstance(plan.listing, HandRankCountListing)
    owners = np.concatenate(list(plan.deals(4096, seed="fit")))
    assert evaluate_cond(owners, load_spec(NT_AND_THREE).program().condition).all()


def _exact_laws(listing: HandRankCountListing) -> tuple[Counter, Counter]:
    """Deals by (HCP of N, E, S) and by North's spade length, from the listing."""
    w = np.array(HCP_OF_RANK[:4])
    by_hcp: Counter = Counter()
    rows = np.diff(np.concatenate([[0], listing.row_cum]))
    spades = np.zeros((len(listing.key_ways), 14), dtype=object)
    np.add.at(spades, (listing.row_key, PATTERNS[listing.row_code >> 16][:, 0]), rows.astype(object))
    by_spades: Counter = Counter()
    for a, key, weight in zip(listing.a, listing.e_key, listing.e_weight):
        by_hcp[(int(a[:, 0] @ w), int(a[:, 1] @ w), int(a[:, 2] @ w))] += weight
        per_row = weight // int(listing.key_ways[key])
        for length in range(14):
            by_spades[length] += per_row * spades[key, length]
    return by_hcp, by_spades


def test_deals_are_uniform_over_hcp_vectors_and_north_spades(nt_and_three):
    """Drawn against the exact laws the listing gives (fixed seed)."""
    plan = nt_and_three()
    owners = np.concatenate(list(plan.deals(30_000, seed="hand and ranks")))
    by_hcp, by_spades = _exact_laws(plan.listing)
    seen_hcp = Counter(zip(*(hcp(owners, s).tolist() for s in range(3))))
    seen_spades = Counter((owners[:, 0::4] == 0).sum(axis=1).tolist())
    for exact, seen in ((by_hcp, seen_hcp), (by_spades, seen_spades)):
        total = sum(exact.values())
        keys = [k for k in sorted(exact) if exact[k] * len(owners) >= 5 * total]
        assert set(seen) <= set(exact)
        expected = np.array([exact[k] / total * len(owners) for k in keys])
        observed = np.array([seen.get(k, 0) for k in keys])
        expected *= observed.sum() / expected.sum()
        assert chisquare(observed, expected).pvalue > 1e-4


@pytest.mark.parametrize("spec", [
    {"north": {"losers": [0, 7], "holds": ["SA", "H5"]}, "west": {"controls": [2, 5]}},
    {"north": {"spades": 5, "holds": ["SK", "S2", "DA"]}, "east": {"hcp": [10, 37]}},
])
def test_cards_predealt_to_the_hand_agree_with_the_factored_listing(spec):
    """A predealt honour is in every mask of its suit, a predealt spot card
    among the spot cards the hand holds."""
    comp = _compiled(spec)
    a, b = HandRankCountListing(comp), build_listing(comp)
    assert (a.deals, a.cases) == (b.deals, count_cases(b)) and a.deals > 0


def test_a_card_predealt_to_the_hand_beside_three_ranges_is_exact_and_deals_its_law(nt_and_three):
    """The spade ace at each seat in turn adds up to the count without it
    (North listed by this listing, the others asked of the pool); North's
    was dealt by rejection on South and West (48.9% kept).  Drawn deals fit,
    hold the ace in North, and follow the listing's exact laws."""
    plans = [Plan.build(load_spec({**NT_AND_THREE, seat: {**NT_AND_THREE[seat], "holds": ["SA"]}}))
             for seat in ("north", "east", "south", "west")]
    assert all(p.exact for p in plans) and isinstance(plans[0].listing, HandRankCountListing)
    assert sum(p.deals_total for p in plans) == nt_and_three().deals_total
    owners = np.concatenate(list(plans[0].deals(20_000, seed="predealt hand")))
    assert (owners[:, 0] == 0).all() and evaluate_cond(owners, load_spec(NT_AND_THREE).program().condition).all()
    by_hcp, _ = _exact_laws(plans[0].listing)
    seen = Counter(zip(*(hcp(owners, s).tolist() for s in range(3))))
    total = sum(by_hcp.values())
    keys = [k for k in sorted(by_hcp) if by_hcp[k] * len(owners) >= 5 * total]
    expected = np.array([by_hcp[k] / total * len(owners) for k in keys])
    observed = np.array([seen.get(k, 0) for k in keys])
    assert chisquare(observed, expected * observed.sum() / expected.sum()).pvalue > 1e-4
