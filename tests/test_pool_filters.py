"""Calm opponents with no shape beside shaped seats.

* A pooled seat's form of one suit that only decides which holdings fit
  (``top4(east, spades) < 2``) is a filter on the factored listing's suit
  options, as a patterned seat's is (:func:`truedeal.constraints.compile.with_filters`
  with ``pooled``).  The engine tries that listing last, before rejection.
* With no free seat, the patterned seats hold every tracked card that the
  pooled seats do not (:func:`truedeal.listing.layout.pat_from_pool`, in that
  listing): their count keeps one value, and the listing is 17 times narrower."""

from __future__ import annotations

from collections import defaultdict
from math import comb, factorial

import numpy as np
import pytest
from scipy.stats import chisquare

from truedeal.constraints.compile import compile_program, with_filters
from truedeal.constraints.dealer import load_program
from truedeal.constraints.evaluate import evaluate_cond
from truedeal.engine import Plan
from truedeal.listing import TooWide, build_listing, count_cases
from truedeal.randomness import chunk_rng
from truedeal.sampling import Sampler

#: North any 4333, South five or more spades, and neither East nor West holds
#: two of the top four in a major (calm opponents): too wide for the plain
#: listing (East's and West's four forms are coordinates there).
CALM = ("shape(north, any 4333) && spades(south) >= 5 && top4(east, spades) < 2 && top4(west, spades) < 2"
        " && top4(east, hearts) < 2 && top4(west, hearts) < 2")
#: The same with the opponents calm in every suit.
CALM_EVERYWHERE = CALM + " && " + " && ".join(f"top4({seat}, {suit}) < 2" for seat in ("east", "west")
                                                for suit in ("diamonds", "clubs"))
#: North 15+ and flat, calm opponents in spades: narrow enough for the plain listing too.
CALM_SMALL = "hcp(north) >= 15 && shape(north, any 4333) && top4(east, spades) < 2 && top4(west, spades) < 2"


def _multinomial(n: int, *parts: int) -> int:
    out = factorial(n)
    for p in parts:
        out //= factorial(p)
    return out


def _suit_splits(north: int, calm: bool, south_min: int) -> dict[tuple[int, int, int], int]:
    """One suit of 4 honours (A K Q J) and 9 spots, North holding ``north``
    cards: (East, South, West) lengths -> ways to place the suit's cards,
    with East and West holding at most one honour each if ``calm``, and
    South at least ``south_min`` cards."""
    out: dict[tuple[int, int, int], int] = defaultdict(int)
    for hn in range(min(4, north) + 1):
        ways_n = comb(4, hn) * comb(9, north - hn)
        honours, spots = 4 - hn, 9 - (north - hn)
        for he in range(honours + 1):
            for hw in range(honours - he + 1):
                if calm and (he > 1 or hw > 1):
                    continue
                hs = honours - he - hw
                for se in range(spots + 1):
                    for sw in range(spots - se + 1):
                        ss = spots - se - sw
                        if hs + ss < south_min:
                            continue
                        out[(he + se, hs + ss, hw + sw)] += (ways_n * _multinomial(honours, he, hw, hs)
                                                             * _multinomial(spots, se, sw, ss))
    return out


def _calm_count(north_pattern: tuple[int, int, int, int], calm_suits: int = 2) -> int:
    """Deals of CALM (the opponents calm in the first ``calm_suits`` suits)
    with North holding ``north_pattern`` (spades first), counted suit by suit
    over East's, South's and West's lengths so far: an independent DP, not
    the engine's listing."""
    states = {(0, 0, 0): 1}
    for suit, length in enumerate(north_pattern):
        splits = _suit_splits(length, calm=suit < calm_suits, south_min=5 if suit == 0 else 0)
        grown: dict[tuple[int, int, int], int] = defaultdict(int)
        for (e, s, w), ways in states.items():
            for (le, ls, lw), n in splits.items():
                if e + le <= 13 and s + ls <= 13 and w + lw <= 13:
                    grown[(e + le, s + ls, w + lw)] += ways * n
        states = grown
    return states.get((13, 13, 13), 0)


#: North's four 4333 patterns (spades, hearts, diamonds, clubs), by its four-card suit.
PATTERNS = [tuple(4 if suit == four else 3 for suit in range(4)) for four in range(4)]


def test_with_filters_marks_a_pooled_seats_forms_only_when_asked():
    comp = compile_program(load_program(CALM))
    assert comp.pooled == (1, 3) and not comp.filters
    assert with_filters(comp) is comp  # the other listings weigh a pooled seat's cards whole
    narrow = with_filters(comp, pooled=True)
    calm = {f for f, form in enumerate(comp.forms) if {t.seat for t in form.terms} <= {1, 3}}
    assert len(calm) == 4 and narrow.filters == calm


@pytest.mark.parametrize(("text", "calm_suits"), [(CALM, 2), (CALM_EVERYWHERE, 4)])
def test_calm_opponents_beside_shaped_seats_count_exactly(text, calm_suits):
    """The plain listing is too wide; the plan is exact all the same, by the
    listing with the opponents' filters and the patterned seats' count read
    off the pool, with the deals of the independent DP (per North pattern,
    then in all)."""
    comp = compile_program(load_program(text))
    with pytest.raises(TooWide):
        build_listing(comp)
    plan = Plan.build(load_program(text))
    assert plan.exact and not plan.relaxed and plan.listing.layout.pat_from_pool and plan.listing.layout.comp.filters
    assert plan.deals_total == sum(_calm_count(p, calm_suits) for p in PATTERNS)
    for p in PATTERNS:
        one = text.replace("any 4333", "".join(map(str, p)))
        assert Plan.build(load_program(one)).deals_total == _calm_count(p, calm_suits)


def test_the_calm_majors_count_the_pinned_dp_value():
    """The DP's own figure for CALM, so that a change to the DP shows too."""
    assert sum(_calm_count(p) for p in PATTERNS) == 294_830_339_615_224_936_281_158_400


@pytest.mark.parametrize("text", [
    CALM_SMALL,
    # a shape-only South beside the pool: its cases are counted over intervals of the patterned seats' honours
    "shape(north, 4333) && spades(south) >= 4 && top4(east, spades) < 2 && top4(west, hearts) < 2",
])
def test_the_filtered_listing_counts_the_plain_ones_deals_and_cases(text):
    comp = compile_program(load_program(text))
    plain, filtered = build_listing(comp), build_listing(with_filters(comp, pooled=True))
    box = filtered.layout.n_box  # two coordinates of 2 values gone (and, with no free seat, the patterned count)
    assert np.prod(filtered.layout.dims[:box]) * 4 == np.prod(plain.layout.dims[:box])
    assert filtered.deals == plain.deals and count_cases(filtered) == count_cases(plain)


@pytest.mark.parametrize(("text", "calm_suits"), [(CALM, 2), (CALM_EVERYWHERE, 4)])
def test_drawn_deals_fit_and_follow_the_exact_law_of_norths_pattern(text, calm_suits):
    """20,000 deals of the filtered listing: every one fits, and the suit of
    North's four cards follows the independent DP's shares (chi-square, fixed seed)."""
    program = load_program(text)
    owners = Sampler(build_listing(with_filters(compile_program(program), pooled=True))).draw(20_000, chunk_rng("calm", 0))
    assert evaluate_cond(owners, program.condition).all()
    north = np.stack([((owners == 0) & (np.arange(52) % 4 == suit)).sum(axis=1) for suit in range(4)], axis=1)
    observed = np.bincount(north.argmax(axis=1), minlength=4)
    expected = np.array([_calm_count(p, calm_suits) for p in PATTERNS], dtype=float)
    assert chisquare(observed, expected / expected.sum() * len(owners)).pvalue > 1e-3


def test_reading_the_patterned_count_off_the_pool_keeps_the_deals(monkeypatch):
    """The listing with the patterned seats' count as a coordinate of its own
    (as before) counts the same deals and cases and draws the same deals,
    with 17 times the feature states."""
    from truedeal.listing import layout as layout_module

    comp = with_filters(compile_program(load_program(CALM_EVERYWHERE)), pooled=True)
    narrow = build_listing(comp)
    expected, cases = Sampler(narrow).draw(3000, chunk_rng("patterned count", 0)), count_cases(narrow)
    monkeypatch.setattr(layout_module, "pat_from_pool", lambda comp: False)
    wide = build_listing(comp)
    assert narrow.layout.dims[-1] == 1 and wide.layout.dims[-1] == 17
    assert wide.deals == narrow.deals and count_cases(wide) == cases  # (cases: over intervals, then by groups)
    assert (Sampler(wide).draw(3000, chunk_rng("patterned count", 0)) == expected).all()
