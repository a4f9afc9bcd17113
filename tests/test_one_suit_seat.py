"""A seat read only by its length in one suit, beside a seat nothing reads (truedeal.one_suit_seat)."""

from __future__ import annotations

import itertools
from collections import Counter
from math import comb

import numpy as np
import pytest
from scipy.stats import chisquare

from truedeal.constraints.dealer import load_program
from truedeal.constraints.evaluate import evaluate_cond
from truedeal.engine import Plan
from truedeal.one_suit_seat import OneSuitSeatUnion, one_suit_seat

#: Small enough for one listing of North, South and East: the split must count what it counts.
SMALL = "spades(north) >= 7 && hcp(north) >= 16 && spades(south) <= 1 && hearts(east) >= 7"
#: The fit leaves North and South free in shape: listed whole, three patterned seats are too many cells.
FIT = "spades(north) + spades(south) >= 9 && hcp(north) >= 16 && hearts(east) >= 7"


def _split_plan(condition: str) -> Plan:
    """The plan of the split, made whether or not the plain plan would be exact."""
    program = load_program(f"condition {condition}\n")
    split = one_suit_seat(program)
    assert split is not None and (split.seat, split.suit) == (1, 1)
    branches = {m: Plan._build_program(split.branch(m), None, exact_only=True) for m in range(14) if any(split.ways(13 - m))}
    assert all(p.exact for p in branches.values())
    live = [m for m, p in branches.items() if p.deals_total]
    union = OneSuitSeatUnion(split, [branches[m] for m in live], live)
    return Plan(None, branches[live[0]].listing, 0.0, program=program, union=union)


def _suit_holdings() -> Counter:
    """One suit's holdings by (length, HCP): the A-K-Q-J held, and C(9, length - honours) spot cards."""
    holdings: Counter = Counter()
    for mask in range(16):
        held = bin(mask).count("1")
        for length in range(held, held + 10):
            holdings[length, sum(4 - r for r in range(4) if mask >> r & 1)] += comb(9, length - held)
    return holdings


def _small_north_hands() -> Counter:
    """SMALL's hands of North (7+ spades, 16+ HCP) by (spades, hearts): its
    spades and hearts by length and HCP, beside its other two suits."""
    suit = _suit_holdings()
    minors: dict[int, Counter] = {m: Counter() for m in range(27)}  # by length, then HCP
    for ((a, p), v), ((b, q), w) in itertools.product(suit.items(), repeat=2):
        minors[a + b][p + q] += v * w
    hands: Counter = Counter()
    for ((s, p), u), ((h, q), v) in itertools.product(suit.items(), repeat=2):
        if s >= 7 and s + h <= 13:
            hands[s, h] += u * v * sum(w for r, w in minors[13 - s - h].items() if p + q + r >= 16)
    return hands


def _small_by_east_hearts() -> dict[int, int]:
    """SMALL's deals by East's hearts k, counted without a listing: North's
    hands by (spades, hearts); South's with at most one spade, by its
    hearts j; East's with k of the H = 13 - North's - South's hearts,
    C(H, k) C(26 - H, 13 - k); West takes the rest."""
    law = dict.fromkeys(range(7, 14), 0)
    for (s, h), north in _small_north_hands().items():
        for south_spades in range(2):
            for j in range(min(13 - h, 13 - south_spades) + 1):
                south = comb(13 - s, south_spades) * comb(13 - h, j) * comb(13 + s + h, 13 - south_spades - j)
                left = 13 - h - j
                for k in law:
                    law[k] += north * south * comb(left, k) * comb(26 - left, 13 - k)
    return law


@pytest.mark.memory_mb(1000)  # the split's 7 listings and samplers, and the plain listing
def test_the_split_counts_what_one_listing_counts_and_deals_its_law():
    """East's 7+ hearts weighed over the hearts North and South leave: the
    same count as the plain listing of three seats, and East's heart length
    in 10,000 drawn deals against a count of each length made hand by hand
    (which adds up to the plain listing's)."""
    plan = _split_plan(SMALL)
    plain = Plan.build(load_program(f"condition {SMALL}\n"))
    assert plain.exact and plain.union is None and plan.deals_total == plain.deals_total
    owners = np.concatenate(list(plan.deals(10_000, seed="one suit")))
    assert evaluate_cond(owners, load_program(f"condition {SMALL}\n").condition).all()
    assert ((owners[:, :, None] == np.arange(4)).sum(axis=1) == 13).all()
    hearts = Counter(((owners[:, 1::4] == 1).sum(axis=1)).tolist())
    law = _small_by_east_hearts()  # the same numbers as the plain listings of each length (9 s to build)
    assert sum(law.values()) == plain.deals_total
    keys = [k for k in law if law[k] * len(owners) >= 5 * plan.deals_total]
    expected = np.array([law[k] for k in keys], float) / plan.deals_total * len(owners)
    observed = np.array([hearts.get(k, 0) for k in keys], float)
    rest = len(owners) - expected.sum()  # the lengths expected fewer than 5 times, as one cell
    assert chisquare(np.append(observed, len(owners) - observed.sum()), np.append(expected, rest)).pvalue > 1e-4


def test_a_fit_beside_an_opponent_s_long_suit_is_exact():
    """It was dealt by rejection on South (22.4% kept); the estimate then was
    1.16102e25 +/- 0.0048e25."""
    program = load_program(f"condition {FIT}\n")
    plan = Plan.build(program)
    assert plan.exact and isinstance(plan.union, OneSuitSeatUnion)
    assert abs(plan.deals_total - 1.16102e25) < 4 * 4.8e22
    assert plan.summary().method.startswith("exact: east read by its hearts alone beside west")
    owners = np.concatenate(list(plan.deals(3_000, seed="fit")))
    assert evaluate_cond(owners, program.condition).all()


@pytest.mark.memory_mb(1100)  # the plain listing of four patterned seats, then the split of the wider spec
def test_a_partner_read_by_the_same_suit_counts_what_one_listing_counts():
    """West with at most 2 hearts: each of East's heart lengths k leaves West
    H - k.  Against the plain listing of four patterned seats; and beside a
    fit with both partners' points (7.8% kept by rejection on South and
    West before, estimated 2.0892e25 +/- 0.016e25), exact."""
    small = SMALL + " && hearts(west) <= 2"
    plan = _split_plan(small)
    plain = Plan.build(load_program(f"condition {small}\n"))
    assert plain.exact and plain.union is None and plan.deals_total == plain.deals_total
    assert plan.summary().method.startswith("exact: east and west read by their hearts alone")
    wide = "spades(north) + spades(south) >= 9 && hcp(north) >= 16 && hcp(south) >= 5 && hearts(east) >= 6 && hearts(west) >= 3"
    fit = Plan.build(load_program(f"condition {wide}\n"))
    assert fit.exact and isinstance(fit.union, OneSuitSeatUnion) and abs(fit.deals_total - 2.0892e25) < 4 * 1.6e23
    owners = np.concatenate(list(fit.deals(2_000, seed="partner")))
    assert evaluate_cond(owners, load_program(f"condition {wide}\n").condition).all()


def test_only_a_seat_read_by_one_suit_s_length_beside_a_free_seat_is_split():
    for condition in (
        "spades(north) + spades(south) >= 8 && hearts(east) >= 5 && hcp(east) >= 8",  # East's points too
        "spades(north) + spades(south) >= 8 && hearts(east) + spades(east) >= 9",  # two suits
        "spades(north) >= 5 && hearts(east) >= 5 && spades(west) >= 2 && spades(south) >= 2",  # no partner free of other suits
    ):
        split = one_suit_seat(load_program(f"condition {condition}\n"))
        assert split is None or split.seat != 1, condition


def test_a_split_that_no_deal_fits_counts_an_exact_zero():
    """North 16+ and at most 9 HCP: every branch is empty, so the count is an
    exact 0 (an exact law of North's HCP asks such ranges of its bisection:
    they sent the script's averages to sampling)."""
    plan = Plan.build(load_program(f"condition {FIT} && hcp(north) <= 9\n"))
    assert plan.exact and plan.deals_total == 0 and not plan.possible
