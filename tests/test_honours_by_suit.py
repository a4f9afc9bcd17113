"""The listing suit by suit of seats that read honours and no lengths, against independent counts.

Corpus script 65 (1NT opener, a 8-9 responder, two calm opponents: four
seats read honours, the opponents suit by suit) is counted here by a DP of
its own over the suits, in plain Python; its draws follow that DP's law.
"""

from __future__ import annotations

import itertools
from collections import Counter
from math import factorial, prod
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chisquare

from truedeal import kernel
from truedeal.constraints.compile import compile_program
from truedeal.constraints.dealer import load_program
from truedeal.constraints.evaluate import satisfies
from truedeal.engine import Plan
from truedeal.honours_by_suit import HonoursBySuitListing, applicable
from truedeal.listing import build_listing
from truedeal.randomness import chunk_rng

CALM = Path(__file__).parent / "scripts" / "65_calm_opponents_beside_1nt.dlr"
N, E, S, W = range(4)


def _one_suit(placed: dict[int, int]) -> Counter:
    """One suit's ways to give its top four to the seats (rank -> seat of
    ``placed`` fixed), East and West taking at most one: by (North's HCP,
    South's HCP, honours of each seat)."""
    ways: Counter = Counter()
    for owners in itertools.product(range(4), repeat=4):  # owner of the A, K, Q, J
        if owners.count(E) <= 1 and owners.count(W) <= 1 and all(owners[r] == seat for r, seat in placed.items()):
            points = [sum(4 - r for r, o in enumerate(owners) if o == seat) for seat in (N, S)]
            ways[(*points, *(owners.count(s) for s in range(4)))] += 1
    return ways


def _calm_law(honours: dict[int, dict[int, int]] | None = None,
              spots: tuple[int, ...] = (0, 0, 0, 0)) -> dict[tuple[int, int, int, int], int]:
    """(North's HCP, South's HCP, East's honours, North's HCP in spades) ->
    deals of script 65.  Each suit's top four go to the four seats, East and
    West taking at most one; the state is North's and South's HCP, North's
    spade HCP and the honours each seat holds, and the 36 spot cards fill
    each hand to 13.  Predealt: ``honours[suit][rank]`` is a seat's from the
    start, and ``spots[seat]`` spot cards are (out of the 36)."""
    honours = honours or {}
    law: Counter = Counter({(0, 0, 0, 0, 0, 0, 0): 1})
    for suit in range(4):  # spades first
        step: Counter = Counter()
        one_suit = _one_suit(honours.get(suit, {}))
        for (n, s, spades, *held), ways in law.items():
            for (dn, ds, *more), w in one_suit.items():
                if n + dn <= 17 and s + ds <= 9:
                    step[(n + dn, s + ds, dn if suit == 0 else spades, *(a + b for a, b in zip(held, more)))] += ways * w
        law = step
    out: Counter = Counter()
    for (n, s, spades, *held), ways in law.items():
        if 15 <= n <= 17 and 8 <= s <= 9:
            out[(n, s, held[E], spades)] += ways * factorial(36 - sum(spots)) // prod(factorial(13 - h - p) for h, p in zip(held, spots))
    return dict(out)


def _chisquare(seen: Counter, law: dict) -> float:
    keys = sorted(law)
    assert set(seen) <= set(keys)
    expected = np.array([law[k] for k in keys], dtype=float)
    return chisquare([seen[k] for k in keys], expected / expected.sum() * sum(seen.values())).pvalue


def test_the_calm_opponents_count_exactly_where_they_were_rejected():
    plan = Plan.build(load_program(CALM))
    assert plan.exact and isinstance(plan.listing, HonoursBySuitListing)
    assert plan.deals_total == sum(_calm_law().values()) == 95_485_684_703_430_425_898_574_080


def test_predealt_cards_count_and_deal_exactly_where_they_were_rejected():
    """North holds the spade ace and the club deuce: each is a tracked card
    with one owner (19.5% kept by rejection before)."""
    program = load_program("predeal north SA, C2\n" + CALM.read_text())
    plan = Plan.build(program)
    assert plan.exact and isinstance(plan.listing, HonoursBySuitListing)
    law = _calm_law(honours={0: {0: N}}, spots=(1, 0, 0, 0))
    assert plan.deals_total == sum(law.values())
    owners = np.concatenate(list(plan.deals(3_000, seed="predealt")))
    assert satisfies(owners, program).all() and (owners[:, [0, 51]] == N).all()  # SA, C2
    by_state: Counter = Counter()
    for (n, s, e, _spades), deals in law.items():
        by_state[(n, s, e)] += deals
    held = owners[:, None, :16] == np.arange(4)[None, :, None]
    points = held * np.repeat([4, 3, 2, 1], 4)
    hands = zip(points[:, N].sum(axis=1).tolist(), points[:, S].sum(axis=1).tolist(), held[:, E].sum(axis=1).tolist())
    assert _chisquare(Counter(hands), by_state) > 1e-4


def test_its_draws_fit_and_follow_the_exact_law():
    """30,000 seeded deals against the DP's laws (chi-square): of North's HCP,
    South's HCP and East's honour count (the final state picked), and of
    North's HCP in spades (the walk back through the suits); every deal fits."""
    program = load_program(CALM)
    owners = np.concatenate(list(Plan.build(program).deals(30_000, seed="honours by suit")))
    assert satisfies(owners, program).all()
    held = owners[:, None, :] == np.arange(4)[None, :, None]
    points = held[:, :, :16] * np.repeat([4, 3, 2, 1], 4)  # card = 4 * rank + suit
    law = _calm_law()
    by_state, by_spades = Counter(), Counter()
    for (n, s, e, spades), deals in law.items():
        by_state[(n, s, e)] += deals
        by_spades[spades] += deals
    hands = zip(points[:, N].sum(axis=1).tolist(), points[:, S].sum(axis=1).tolist(), held[:, E, :16].sum(axis=1).tolist())
    assert _chisquare(Counter(hands), by_state) > 1e-4
    assert _chisquare(Counter(points[:, N, 0::4].sum(axis=1).tolist()), by_spades) > 1e-4


def test_the_numpy_path_draws_the_same_deals():
    listing = HonoursBySuitListing(compile_program(load_program(CALM)))
    drawn = listing.make_sampler().draw(3_000, chunk_rng("suit by suit", 0))
    with kernel.numpy_only():
        again = listing.make_sampler().draw(3_000, chunk_rng("suit by suit", 0))
    assert (drawn == again).all()


@pytest.mark.parametrize("condition", [
    # two seats beside two unconstrained ones (their tracked cards go to the free seats)
    "hcp(north) >= 12 && top3(east, spades) >= 2 && top2(east, hearts) == 0",
    # a clamped form (12+), per-suit HCP, a card held
    "hcp(north) >= 12 && hcp(south, clubs) <= 2 && hascard(east, KD)",
    # a difference: the compiler reads -hcp(south) as its complement per suit, never negative
    "hcp(north) - hcp(south) >= 5 && top2(south, spades) >= 1",
])
def test_its_counts_equal_the_factored_listing_s(condition):
    """Where the factored listing holds a spec too, both count alike (and every drawn deal fits)."""
    program = load_program("condition " + condition)
    comp = compile_program(program)
    assert applicable(comp)
    listing = HonoursBySuitListing(comp)
    assert listing.deals == build_listing(comp).deals
    assert satisfies(listing.make_sampler().draw(2_000, chunk_rng("fits", 0)), program).all()


@pytest.mark.parametrize("condition", [
    "hcp(north) >= 12 && spades(north) >= 5",  # a length: the seat is listed by pattern
    "losers(north) <= 7",  # losers read lengths
    "hcp(north) >= 12 && spades(south) + hearts(south) >= 9",  # a sum of lengths
])
def test_it_applies_only_to_honours_read_without_lengths(condition):
    assert not applicable(compile_program(load_program("condition " + condition)))


def test_exact_laws_of_its_features_equal_the_independent_dp_s():
    """North's HCP in spades, a feature of one suit: each value's count is a
    listing of its own (a form settled once its suit is placed), and they are
    the DP's marginal, value by value; so are East's honours."""
    from truedeal.analysis.laws import distribution_of

    program = load_program(CALM)
    by_spades, by_east = Counter(), Counter()
    for (_n, _s, east, spades), deals in _calm_law().items():
        by_spades[spades] += deals
        by_east[east] += deals
    assert distribution_of(program, "hcp(north, spades)", sample=False).counts == dict(by_spades)
    assert distribution_of(program, "top4(east)", sample=False).counts == dict(by_east)


def test_a_suit_that_leaves_no_state_lists_no_deal():
    """The four seats share at most 5 HCP: no state survives the spades (a
    random four-seat spec's negation crashed here: an empty list of states)."""
    from truedeal.constraints.dealer import parse_program

    comp = compile_program(parse_program("condition hcp(north) <= 1 && hcp(south) <= 1 && hcp(east) <= 1 && hcp(west) <= 2"))
    assert applicable(comp)
    assert HonoursBySuitListing(comp).total == 0
