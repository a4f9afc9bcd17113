"""Filter forms: a form of one suit that only decides which of the suit's
holdings fit (``top4(east, clubs) < 2``) is listed as a filter on the suit's
options, with no coordinate (:func:`truedeal.constraints.compile.with_filters`)."""

from __future__ import annotations

import itertools
from math import comb, factorial

import numpy as np
import pytest

from truedeal.cards import HCP_OF_RANK
from truedeal.constraints.compile import compile_program, with_filters
from truedeal.constraints.dealer import load_program
from truedeal.constraints.evaluate import evaluate_cond
from truedeal.listing import build_listing
from truedeal.listing.paired import applicable, build_paired
from truedeal.randomness import chunk_rng
from truedeal.sampling import Sampler

#: North: 10-14 HCP, 4432, at most one of the top four cards in each major.
ONE_SEAT = ("shape(north, any 4432) && hcp(north) >= 10 && hcp(north) <= 14"
            " && top4(north, spades) < 2 && top4(north, hearts) < 2")
#: The same beside a patterned South: the paired listing applies too.
TWO_SEATS = ONE_SEAT + " && shape(south, any 5332) && hcp(south) >= 8"


def _comp(text: str):
    return compile_program(load_program(text))


def _one_hand_count() -> int:
    """Deals fitting ONE_SEAT, counted independently: every set of North's
    16 honours (A K Q J of each suit) and every 4432 pattern, times the ways
    to take the spot cards, times the ways to deal the other 39 cards."""
    hands = 0
    patterns = set(itertools.permutations((4, 4, 3, 2)))
    for held in itertools.product((0, 1), repeat=16):  # bit r + 4 * suit: rank r (A=0) of suit
        per_suit = [held[4 * k : 4 * k + 4] for k in range(4)]
        points = sum(HCP_OF_RANK[r] for k in range(4) for r in range(4) if per_suit[k][r])
        if not 10 <= points <= 14 or sum(per_suit[0]) >= 2 or sum(per_suit[1]) >= 2:
            continue
        for p in patterns:
            ways = 1
            for k in range(4):
                ways *= comb(9, p[k] - sum(per_suit[k])) if p[k] >= sum(per_suit[k]) else 0
            hands += ways
    return hands * factorial(39) // factorial(13) ** 3


def test_a_form_of_one_suit_with_no_cut_inside_its_range_is_a_filter():
    comp = _comp(ONE_SEAT)
    narrow = with_filters(comp)
    majors = {f for f, form in enumerate(comp.forms) if all(t.suits in ((0,), (1,)) for t in form.terms)}
    assert narrow.filters == majors and len(majors) == 2 and not comp.filters
    assert with_filters(narrow) is narrow


@pytest.mark.parametrize("text", [
    "top4(north, spades) >= 1 && top4(north, spades) <= 2 && shape(north, any 4432)",  # a cut inside the range
    "top4(north, spades) + top4(north, hearts) < 2 && shape(north, any 4432)",  # two suits
    "top4(north, spades) < spades(north) - 3 && shape(north, any 4432)",  # a length in the atom
    "hcp(north) >= 10 && shape(north, any 4432)",  # the whole hand
])
def test_forms_that_are_not_filters(text):
    assert not with_filters(_comp(text)).filters


#: A weak two in spades: six cards, two of the top three (a floor), 5-10 HCP.
WEAK_TWO = "spades(north) == 6 && top3(north, spades) >= 2 && hcp(north) >= 5 && hcp(north) <= 10"
#: A good heart suit (quality, a floor in hundredths) in a hand of limited strength.
GOOD_HEARTS = "quality(south, hearts) >= 700 && cccc(south) < 1600"


@pytest.mark.parametrize("text", [WEAK_TWO, GOOD_HEARTS, WEAK_TWO + " && spades(south) >= 3 && hcp(south) >= 16"])
def test_a_floor_is_read_as_its_complement_and_becomes_a_filter(text):
    """Only the values at the clamp or above fit: read as max - form, they
    are the values up to max - clamp, a filter's; the plain compile is left
    alone.  (GOOD_HEARTS is too wide to list plainly: tests/test_kaplan_rubens.py
    checks its filtered count against an independent one.)"""
    comp = _comp(text)
    narrow = with_filters(comp)
    floors = {f for f, form in enumerate(comp.forms) if form.clamp and len(form.terms[0].suits) == 1}
    assert floors and narrow.filters == floors and not comp.filters
    assert all(t.complement for f in floors for t in narrow.forms[f].terms)
    assert not any(t.complement for f in floors for t in comp.forms[f].terms)
    if text != GOOD_HEARTS:
        assert build_listing(comp).deals == build_listing(narrow).deals


@pytest.mark.parametrize("text", [
    "(top3(north, spades) >= 2 || hcp(north) >= 12) && shape(north, any 4432)",  # smaller values fit the other branch
    "top3(north, spades) >= 2 && shape(north, any 4432) || hcp(north) >= 20",  # the same, outside
    "hcp(north, spades) + hcp(north, hearts) >= 7 && shape(north, any 4432)",  # two suits
])
def test_floors_that_are_not_filters(text):
    assert not with_filters(_comp(text)).filters


def test_a_filtered_floor_draws_only_fitting_deals():
    program = load_program(WEAK_TWO)
    owners = Sampler(build_listing(with_filters(compile_program(program)))).draw(5_000, chunk_rng("floor", 0))
    assert evaluate_cond(owners, program.condition).all()


def test_filtered_listing_counts_the_deals_of_an_independent_count():
    comp = _comp(ONE_SEAT)
    plain, filtered = build_listing(comp), build_listing(with_filters(comp))
    assert plain.deals == filtered.deals == _one_hand_count()
    assert np.prod(filtered.layout.dims) * 4 == np.prod(plain.layout.dims)  # two coordinates of 2 values gone


def test_filtered_paired_listing_counts_as_the_plain_ones():
    comp = _comp(TWO_SEATS)
    narrow = with_filters(comp)
    assert applicable(comp) and applicable(narrow)
    counts = {build_listing(comp).deals, build_listing(narrow).deals, build_paired(comp).deals, build_paired(narrow).deals}
    assert len(counts) == 1


def test_filtered_listing_draws_only_fitting_deals_with_the_exact_hcp_shares():
    """Deals drawn from the filtered listing fit, and North's HCP follow the
    exact shares of the plain listing (chi-square, fixed seed)."""
    from scipy.stats import chisquare

    program = load_program(ONE_SEAT)
    filtered = build_listing(with_filters(compile_program(program)))
    owners = Sampler(filtered).draw(20_000, chunk_rng("filter forms", 0))
    assert evaluate_cond(owners, program.condition).all()
    expected = []
    for v in range(10, 15):
        one = load_program(ONE_SEAT.replace("hcp(north) >= 10 && hcp(north) <= 14", f"hcp(north) == {v}"))
        expected.append(build_listing(compile_program(one)).deals)
    north_hcp = _hcp(owners, 0)
    observed = np.bincount(north_hcp - 10, minlength=5)
    shares = np.array(expected, float) / sum(expected)
    assert chisquare(observed, shares * len(owners)).pvalue > 1e-3


def _hcp(owners: np.ndarray, seat: int) -> np.ndarray:
    """HCP of ``seat`` in each deal (cards c = 4 * rank + suit, ace first)."""
    weights = np.array([HCP_OF_RANK[c // 4] if c < 16 else 0 for c in range(52)])
    return ((owners == seat) * weights).sum(axis=1)

