"""Exact distributions and shape classes against independent calculations.

Expected values never come from the engine: one hand's HCP law is counted
from the 16 honours and 36 spot cards separately; a patterned hand's law by
per-suit generating functions; two hands' joint HCP law by a small dynamic
programme over ranks; the shape classes from seed 003's rule and figures.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction
from itertools import combinations, permutations

import pytest

from truedeal.analysis.chisquare import chi_square, merge_bins
from truedeal.analysis.conditioning import SeatCondition, count_with
from truedeal.analysis.distribution import (
    Feature,
    UnsupportedFeature,
    exact_distribution,
    parse_feature,
)
from truedeal.analysis.pavlicek1999 import telfer_weights
from truedeal.analysis.shapeclasses import HANDS, find_class, shape_classes
from truedeal.spec import Spec, load_spec

D = math.factorial(52) // math.factorial(13) ** 4
OTHERS3 = math.factorial(39) // math.factorial(13) ** 3  # deals of 39 cards to three seats
HONOUR_POINTS = [4] * 4 + [3] * 4 + [2] * 4 + [1] * 4  # the 16 honours, by value only


# ----------------------------------------------------------------- references


def one_hand_hcp() -> dict[int, int]:
    """Hands of each HCP: every honour subset, times the ways to add spot cards."""
    out: Counter = Counter()
    for k in range(0, 14):
        for subset in combinations(range(16), k):
            out[sum(HONOUR_POINTS[i] for i in subset)] += math.comb(36, 13 - k)
    return dict(out)


def hands_with_pattern_and_hcp(lengths) -> Counter:
    """Hands of each HCP with these suit lengths: per suit, honours subset x spots; then a product."""
    total = Counter({0: 1})
    for n in lengths:
        suit = Counter()
        for k in range(5):
            for honours in combinations((4, 3, 2, 1), k):
                if k <= n:
                    suit[sum(honours)] += math.comb(9, n - k)
        nxt = Counter()
        for a, x in total.items():
            for b, y in suit.items():
                nxt[a + b] += x * y
        total = nxt
    return total


def two_hands_hcp() -> Counter:
    """Deals counted by (hcp north, hcp south): honours split rank by rank, then spots."""
    states = Counter({(0, 0, 0, 0): 1})  # (north honours, north hcp, south honours, south hcp)
    for value in (4, 3, 2, 1):
        nxt = Counter()
        for (kn, hn, ks, hs), w in states.items():
            for j in range(5):
                for k in range(5 - j):
                    ways = math.factorial(4) // (math.factorial(j) * math.factorial(k) * math.factorial(4 - j - k))
                    nxt[(kn + j, hn + j * value, ks + k, hs + k * value)] += w * ways
        states = nxt
    out: Counter = Counter()
    for (kn, hn, ks, hs), w in states.items():
        if kn > 13 or ks > 13:
            continue
        spots_n = math.comb(36, 13 - kn)
        spots_s = math.comb(36 - (13 - kn), 13 - ks)
        rest = 26 - (16 - kn - ks)  # the others' spot cards (of 36)
        others = math.comb(26, 13)  # east/west split the remaining 26 cards
        assert rest >= 0
        out[(hn, hs)] += w * spots_n * spots_s * others
    return out


# ----------------------------------------------------------------- shape classes


def test_shape_classes_match_seed_003():
    classes = shape_classes()
    assert len(classes) == 39
    assert [c.lengths for c in classes[:4]] == [(13, 0, 0, 0), (12, 1, 0, 0), (11, 2, 0, 0), (11, 1, 1, 0)]
    assert find_class("5332").hands == 98_534_079_072  # the seed's worked example
    assert sum(c.hands for c in classes) == HANDS == 635_013_559_600
    assert sum(c.ordered_patterns for c in classes) == 560
    for c in classes:
        orders = len(set(permutations(c.lengths)))
        assert c.ordered_patterns == orders
        reps = Counter(c.lengths)
        rule = 24 // math.prod(math.factorial(r) for r in reps.values())
        assert c.hands == rule * math.prod(math.comb(13, n) for n in c.lengths)


def test_shape_class_law_of_free_spec_is_the_seed_table():
    d = exact_distribution(Spec(), Feature("class", 1))
    assert d.total == D
    for c in shape_classes():
        assert d.probability(c.name) == Fraction(c.hands, HANDS)


# ----------------------------------------------------------------- HCP laws


def test_one_hand_hcp_law_from_honours_and_spots():
    ref = one_hand_hcp()
    assert sum(ref.values()) == HANDS
    d = exact_distribution(Spec(), "hcp(west)")
    assert d.total == D
    assert {h: Fraction(c, D) for h, c in d.counts.items()} == {h: Fraction(c, HANDS) for h, c in ref.items()}
    assert d.mean == 10
    # the variance of one hand's HCP: 16 honours, 13 of 52 cards drawn without replacement
    values = HONOUR_POINTS + [0] * 36
    mu = Fraction(sum(values), 52)
    sigma2 = Fraction(sum(v * v for v in values), 52) - mu * mu
    assert d.variance == 13 * sigma2 * Fraction(52 - 13, 52 - 1)


def test_telfer_table_matches_the_1999_article():
    w = telfer_weights()
    assert (w[15], w[16], w[17]) == (44237, 33109, 23617)  # "4.4237 + 3.3109 + 2.3617"


def test_patterned_seat_hcp_law_by_generating_functions():
    spec = load_spec({"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"}})
    ref: Counter = Counter()
    for c in ("4333", "4432", "5332"):
        for p in set(permutations(find_class(c).lengths)):
            for h, n in hands_with_pattern_and_hcp(p).items():
                if 15 <= h <= 17:
                    ref[h] += n * OTHERS3
    d = exact_distribution(spec, "hcp(N)")
    assert d.counts == dict(ref)
    assert d.total == sum(ref.values())


def test_fixed_pattern_suit_lengths_and_class_are_certain():
    spec = load_spec({"south": {"spades": 8, "hearts": 5, "diamonds": 0}})
    assert exact_distribution(spec, "spades(south)").counts == {8: spec_total(spec)}
    assert list(exact_distribution(spec, "shape class of south").counts) == ["8500"]


def spec_total(spec):
    return count_with(spec, SeatCondition(0))


def test_two_seat_hcp_laws_by_a_second_method():
    joint = two_hands_hcp()
    assert sum(joint.values()) == D
    spec = load_spec({"north": {"hcp": [15, 17]}, "south": {"hcp": [8, 10]}})
    inside = {k: w for k, w in joint.items() if 15 <= k[0] <= 17 and 8 <= k[1] <= 10}
    north = exact_distribution(spec, "hcp(north)")
    south = exact_distribution(spec, "hcp(south)")
    assert north.total == sum(inside.values())
    for h in range(15, 18):
        assert north.counts[h] == sum(w for (a, _), w in inside.items() if a == h)
    for h in range(8, 11):
        assert south.counts[h] == sum(w for (_, b), w in inside.items() if b == h)
    # the partnership sum, from the same joint law: its exact mean two ways
    mean_sum = Fraction(sum((a + b) * w for (a, b), w in inside.items()), north.total)
    assert mean_sum == north.mean + south.mean


def test_suit_length_law_of_a_free_hand():
    d = exact_distribution(Spec(), "hearts(east)")
    for n in range(14):
        assert d.probability(n) == Fraction(math.comb(13, n) * math.comb(39, 13 - n), HANDS)
    assert d.mean == Fraction(13, 4)


# ----------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    "expr, feature",
    [
        ("hcp(south)", Feature("hcp", 2)),
        (" HCP( S ) ", Feature("hcp", 2)),
        ("spades(north)", Feature("length", 0, 0)),
        ("clubs(w)", Feature("length", 3, 3)),
        ("shape class of east", Feature("class", 1)),
        ("class(E)", Feature("class", 1)),
    ],
)
def test_parse_feature(expr, feature):
    assert parse_feature(expr) == feature


@pytest.mark.parametrize("expr", ["hcp(north)+hcp(south)", "controls(west)", "losers(n)", "hcp(middle)", ""])
def test_unsupported_expressions_say_so_in_one_line(expr):
    with pytest.raises(UnsupportedFeature) as info:
        parse_feature(expr)
    assert "\n" not in str(info.value)


# ----------------------------------------------------------------- chi-square


def test_chi_square_p_value_closed_forms():
    # 3 equiprobable bins: dof 2, and chi2.sf(x, 2) = exp(-x/2) exactly
    t = chi_square("t", ["a", "b", "c"], [30, 40, 50], [Fraction(1, 3)] * 3)
    x = (10**2 + 0 + 10**2) / 40
    assert t.dof == 2 and t.statistic == pytest.approx(x)
    assert t.p_value == pytest.approx(math.exp(-x / 2), rel=1e-12)
    # 5 bins: dof 4, sf = exp(-x/2) (1 + x/2)
    t = chi_square("t", list("abcde"), [10, 20, 20, 20, 30], [Fraction(1, 5)] * 5)
    x = (100 + 0 + 0 + 0 + 100) / 20
    assert t.p_value == pytest.approx(math.exp(-x / 2) * (1 + x / 2), rel=1e-12)


def test_small_bins_are_merged_and_impossible_values_fail():
    labels, obs, exp = merge_bins(list("01234"), [1, 2, 50, 1, 40], [1.0, 3.0, 49.0, 1.0, 40.0])
    assert (labels, obs, exp) == (["0..2", "3..4"], [53, 41], [53.0, 41.0])
    labels, obs, exp = merge_bins(list("0123"), [9, 0, 1, 0], [9.0, 0.5, 0.25, 0.25])
    assert (labels, obs, exp) == (["0..3"], [10], [10.0])
    t = chi_square("t", ["a", "b", "z"], [10, 10, 1], [Fraction(1, 2), Fraction(1, 2), 0])
    assert t.p_value == 0.0
