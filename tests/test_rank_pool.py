"""HCP-only seats weighed by rank counts inside the paired listing (truedeal.listing.rank_pool)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import chisquare

from test_paired import _comp
from truedeal import kernel
from truedeal.cards import card
from truedeal.constraints import card_owner
from truedeal.constraints.compile import compile_program
from truedeal.constraints.dealer import load_program
from truedeal.constraints.evaluate import evaluate_cond
from truedeal.constraints.evaluate import satisfies as fits
from truedeal.cuts import cut_listing, load_slice, merge_slices
from truedeal.engine import Plan
from truedeal.evaluate import hcp
from truedeal.listing import build_listing, count_cases, paired, rank_pool
from truedeal.listing.exact_ops import block_product_sums, first_above
from truedeal.listing.layout import small_vectors
from truedeal.listing.paired import PairedListing, Prepared, build_paired
from truedeal.listing.rank_pool import applicable
from truedeal.randomness import chunk_rng
from truedeal.spec import load_spec

#: North 1NT, South invitational with five hearts, the opponents within HCP ranges.
NT_INVITE = {"north": {"hcp": [15, 17], "shape": "any 4333 + any 4432 + any 5332"},
             "south": {"hcp": [8, 9], "hearts": [5, 13]}, "east": {"hcp": [8, 12]}, "west": {"hcp": [5, 12]}}

#: Specs that the factored listing also builds with its own pool (HCP-only
#: seats card by card): two independent methods, which must agree exactly.
BOTH = [
    {"north": {"hcp": [3, 4], "shape": "4333"}, "south": {"hcp": [0, 1], "shape": "5xxx"}, "east": {"hcp": [0, 2]}},
    {"condition": "shape(north, 4333 + 3433) && hcp(north) <= 2 && shape(south, 5xxx) && controls(south) <= 1"
                  " && controls(east) <= 2"},
]

#: Pool forms that read some suits or single cards (the pool's tracked
#: cards then fall in classes, truedeal.listing.rank_pool.card_classes): the
#: factored listing builds these too, card by card.
_SMALL = "shape(north, 4333 + 3433) && hcp(north) <= 2 && shape(south, 5xxx) && controls(south) <= 1"
PER_SUIT = [
    {"condition": _SMALL + " && top3(east, spades) >= 2"},  # 2 of the top 3 spades
    {"condition": _SMALL + " && hascard(east, AS) && hcp(east) <= 8"},  # a single card, beside whole-hand points
]

#: Forms that sum a patterned seat and a pool seat (a **mixed** form: the
#: listing carries the patterned part, the pool's part is read in a range
#: shifted by it): the factored listing builds these too, card by card.
MIXED = [
    {"condition": _SMALL + " && hcp(east) <= 8 && hcp(north) + hcp(east) >= 5"},  # a partnership sum
    {"condition": _SMALL + " && hcp(east) <= 8 && hcp(north) + 2 * hcp(east) <= 9"},  # weighted
    {"condition": _SMALL + " && controls(south) + controls(east) <= 3"},  # controls, the pool seat's only form
    {"condition": _SMALL + " && top3(east, spades) + hcp(south) >= 2"},  # the pool part reads one suit (classes)
    {"condition": _SMALL + " && hcp(east) <= 8 && hcp(east) + hcp(south) + hcp(north) >= 6"},  # two patterned seats and the pool
]

#: North 1NT, East overcalls in spades, South on HCP alone with game values
#: beside North, West on HCP alone: the partnership sum mixes North
#: (patterned) and South (pool).  It was listed for North and East, and dealt
#: by rejection on South and West (35% kept).
NT_GAME = ("hcp(north) >= 15 && hcp(north) <= 17 && shape(north, any 4333 + any 4432 + any 5332)"
           " && spades(east) >= 5 && hcp(east) >= 8 && hcp(east) <= 16 && hcp(south) <= 12 && hcp(west) <= 10")

#: North 1NT, South 8-9 with five hearts, East 8-12 with 2 of the top 3
#: spades, West 5-12: too wide for the factored listing (it was dealt by
#: rejection on East and West, 5.2% kept).
NT_OVERCALL = {"condition": "hcp(north) >= 15 && hcp(north) <= 17 && shape(north, any 4333 + any 4432 + any 5332)"
                            " && hcp(south) >= 8 && hcp(south) <= 9 && hearts(south) >= 5"
                            " && hcp(east) >= 8 && hcp(east) <= 12 && top3(east, spades) >= 2"
                            " && hcp(west) >= 5 && hcp(west) <= 12"}

#: Three patterned seats and West on HCP alone: the option tables are kept
#: over the vectors one suit reaches (paired.VectorWeights), not the whole
#: feature space, which three seats' forms and rank counts make wide.
THREE = {"north": {"hcp": [20, 21], "shape": "any 4333"}, "east": {"hcp": [0, 4], "hearts": [6, 13]},
         "south": {"hcp": [0, 3], "spades": [5, 13]}}

#: One patterned seat beside a pool of two: a pool seat is listed by pattern
#: (every pattern) as well (rank_pool.promoted).  The factored listing builds
#: these too, card by card.
ONE_PATTERNED = [
    "shape(north, 4333 + 3433) && hcp(north) <= 2 && top3(east, spades) >= 2 && hcp(east) <= 8 && hcp(west) <= 3",
    "shape(north, 4333 + 3433) && hcp(north) <= 2 && controls(east) <= 1 && hcp(west) <= 2",
    "shape(north, 4333 + 3433) && hcp(north) <= 2 && hascard(east, AS) && hcp(east) <= 6 && hcp(west) <= 4",
]

#: North 1NT, East 8-12 with 2 of the top 3 spades, West 5-12: one patterned
#: seat, too wide for the factored listing; it was dealt by rejection on West
#: (75.7% kept) before East was listed by pattern beside North.
NT_AND_OVERCALLER = ("hcp(north) >= 15 && hcp(north) <= 17 && shape(north, any 4333 + any 4432 + any 5332)"
                     " && hcp(east) >= 8 && hcp(east) <= 12 && top3(east, spades) >= 2 && hcp(west) >= 5 && hcp(west) <= 12")

#: A shape-only seat beside the pool: the same deals as the factored listing
#: (its cases differ: here the shape-only seat's honours make a case too).
SHAPE_ONLY = {"north": {"hcp": [15, 17], "shape": "4333"}, "south": {"shape": "5xxx"}, "east": {"hcp": [8, 12]}}


# Several tests read the same listings (the specs above, narrowed); a
# listing is the same whichever test builds it, so each is built once here.
_LISTINGS: dict[str, PairedListing] = {}
_COUNTS: dict[str, int] = {}


def _paired(spec: dict) -> PairedListing:
    """``build_paired(_comp(spec))``, kept to the end of the module for the
    tests that draw from it (each with a sampler of its own)."""
    key = json.dumps(spec, sort_keys=True)
    if key not in _LISTINGS:
        _LISTINGS[key] = build_paired(_comp(spec))
    return _LISTINGS[key]


def _deals(spec: dict) -> int:
    """``build_paired(_comp(spec)).deals``, of which only the number is kept."""
    key = json.dumps(spec, sort_keys=True)
    if key in _LISTINGS:
        return _LISTINGS[key].deals
    if key not in _COUNTS:
        _COUNTS[key] = build_paired(_comp(spec)).deals
    return _COUNTS[key]


@pytest.fixture(autouse=True, scope="module")
def _listings_go_with_the_module():
    yield
    _LISTINGS.clear()
    _COUNTS.clear()


@pytest.mark.parametrize("spec", BOTH, ids=range(len(BOTH)))
def test_rank_pool_counts_equal_the_factored_pool(spec):
    comp = _comp(spec)
    assert applicable(comp)
    factored, pooled = build_listing(comp), build_paired(comp)
    assert pooled.layout.pool is not None
    assert pooled.deals == factored.deals and pooled.deals > 0
    assert pooled.cases == count_cases(factored)


@pytest.mark.parametrize("spec", PER_SUIT, ids=["top3 spades", "hascard"])
def test_pool_forms_of_some_suits_count_what_the_factored_pool_counts(spec):
    comp = _comp(spec)
    assert applicable(comp)
    factored, pooled = build_listing(comp), build_paired(comp)
    assert len(pooled.layout.pool.classes) > len(comp.tracked[0])  # the spade honours are classes of their own
    assert pooled.deals == factored.deals and pooled.deals > 0
    assert pooled.cases == count_cases(factored)


@pytest.mark.parametrize("spec", MIXED, ids=["hcp", "weighted", "controls", "top3 and hcp", "three seats"])
def test_a_form_mixing_pool_and_patterned_seats_counts_what_the_factored_listing_counts(spec):
    comp = _comp(spec)
    assert applicable(comp)
    factored, pooled = build_listing(comp), build_paired(comp)
    assert pooled.layout.pool.mixed_forms
    assert pooled.deals == factored.deals and pooled.deals > 0
    assert pooled.cases == count_cases(factored)


def test_two_mixed_forms_partition_into_the_pool_forms_of_each_patterned_value_and_deal_their_law():
    """East's HCP summed with North's and with South's (two mixed forms): the
    whole equals the parts with North and South at each HCP value (East's
    range then a pool form of its own), cases too, and (North, South) drawn
    follow those parts."""
    base = "shape(north, 4333 + 3433) && shape(south, 5xxx) && controls(south) <= 1"
    whole = base + " && hcp(north) <= 2 && hcp(south) <= 3 && hcp(east) <= 6 && hcp(north) + hcp(east) >= 3 && hcp(south) + hcp(east) <= 6"
    listing = build_paired(_comp({"condition": whole}))
    assert len(listing.layout.pool.mixed_forms) == 2
    parts = {(n, s): build_paired(_comp({"condition": base + f" && hcp(north) == {n} && hcp(south) == {s}"
                                                     f" && hcp(east) >= {max(3 - n, 0)} && hcp(east) <= {6 - s}"}))
             for n in range(3) for s in range(4)}
    assert sum(p.deals for p in parts.values()) == listing.deals > 0
    assert sum(p.cases for p in parts.values()) == listing.cases
    owners = listing.make_sampler().draw(20_000, chunk_rng("two mixed forms", 0))
    assert fits(owners, load_spec({"condition": whole}).program()).all()
    seen = np.bincount(4 * hcp(owners, 0) + hcp(owners, 2), minlength=12)
    exact = np.array([parts[n, s].deals for n in range(3) for s in range(4)], float)
    assert chisquare(seen, exact / exact.sum() * len(owners)).pvalue > 1e-4


def test_a_listing_with_mixed_forms_cut_in_slices_deals_the_whole_s_bytes():
    """What a job's workers build (paired slices, merged): the same listing, cases and deals."""
    spec = load_spec({"condition": "shape(north, 4333 + 3433) && shape(south, 5xxx) && controls(south) <= 1"
                                   " && hcp(north) <= 2 && hcp(south) <= 3 && hcp(east) <= 6"
                                   " && hcp(north) + hcp(east) >= 3 && hcp(south) + hcp(east) <= 6"})
    plan, cut = Plan.build(spec), cut_listing(spec, 3)
    merged = Plan.from_listing(spec, merge_slices(spec, [load_slice(cut.build(k).to_bytes()) for k in range(cut.parts)]))
    assert plan.listing.layout.pool.mixed_forms and merged.listing.layout.folds
    assert (merged.deals_total, merged.listing.cases) == (plan.deals_total, plan.listing.cases)
    assert all(np.array_equal(merged.chunk(i, "mixed slices"), plan.chunk(i, "mixed slices")) for i in (0, 5))


def test_a_pool_seat_listed_by_pattern_cut_in_slices_deals_the_whole_s_bytes():
    """A job's slices of a listing that lists a pool seat by pattern
    (paired.view) merge into the listing Plan.build makes: the same deals."""
    spec = load_spec({"condition": NT_AND_OVERCALLER})
    plan, cut = Plan.build(spec), cut_listing(spec, 3)
    merged = Plan.from_listing(spec, merge_slices(spec, [load_slice(cut.build(k).to_bytes()) for k in range(cut.parts)]))
    assert plan.listing.layout.comp.patterned == merged.listing.layout.comp.patterned == (0, 1)  # North, East
    assert merged.deals_total == plan.deals_total > 0
    assert all(np.array_equal(merged.chunk(i, "promoted slices"), plan.chunk(i, "promoted slices")) for i in (0, 5))


def test_a_partnership_sum_of_a_patterned_and_a_pool_seat_is_exact_and_deals_its_law():
    """N+S 24+ with North 15-17 balanced and South on HCP alone: the whole
    equals the parts with North at 15, 16 and 17 HCP (each South's range a
    pool form of its own), and North's HCP, drawn, follow those parts."""
    condition = NT_GAME + " && hcp(north) + hcp(south) >= 24"
    plan = Plan.build(load_program(f"condition {condition}\n"))
    assert plan.exact and plan.listing.layout.pool.mixed_forms
    parts = [Plan.build(load_program("condition " + NT_GAME.replace("hcp(north) >= 15 && hcp(north) <= 17", f"hcp(north) == {v}")
                                     + f" && hcp(south) >= {24 - v}\n")).deals_total for v in (15, 16, 17)]
    assert sum(parts) == plan.deals_total == 83_829_330_395_489_013_475_917_924
    owners = np.concatenate(list(plan.deals(20_000, seed="partnership sum")))
    assert evaluate_cond(owners, load_program(f"condition {condition}\n").condition).all()
    seen = np.bincount(hcp(owners, 0) - 15, minlength=3)
    assert chisquare(seen, np.array(parts, float) / sum(parts) * len(owners)).pvalue > 1e-4


def test_a_pool_seat_with_top_honours_in_one_suit_is_exact_and_deals_its_law():
    """East's count of the top three spades, drawn, against the exact counts
    of the spec narrowed to 2 and to 3 (which add up to the whole)."""
    parts = [build_paired(_comp({"condition": NT_OVERCALL["condition"].replace(">= 2", f"== {k}")})).deals
             for k in (2, 3)]  # first, each freed before the next build: the test stays within its memory bound
    plan = Plan.build(load_spec(NT_OVERCALL))
    assert plan.exact and plan.listing.layout.pool is not None
    assert sum(parts) == plan.deals_total
    owners = np.concatenate(list(plan.deals(20_000, seed="top honours pool")))
    assert fits(owners, load_spec(NT_OVERCALL).program()).all()
    top3 = (owners[:, [0, 4, 8]] == 1).sum(axis=1)  # the spade ace, king and queen
    seen = [int((top3 == k).sum()) for k in (2, 3)]
    assert seen[0] + seen[1] == len(owners)
    assert chisquare(seen, np.array(parts, float) / sum(parts) * len(owners)).pvalue > 1e-4


def test_a_card_predealt_to_a_pool_seat_is_asked_of_the_pool():
    """Predealt to a pool seat, the ace of spades is asked (hascard) instead:
    the same deals as the factored listing with the card predealt (counts
    and cases), and a plan that the listing could not hold whole is exact."""
    program = load_program(f"predeal east SA\ncondition {_SMALL} && hcp(east) <= 8\n")
    asked = compile_program(card_owner.predeal_asked(program, {1}))
    assert applicable(asked) and not applicable(compile_program(program))
    factored, pooled = build_listing(compile_program(program)), build_paired(asked)
    assert pooled.deals == factored.deals > 0 and pooled.cases == count_cases(factored)
    invite = load_program("predeal west SA\ncondition " + " && ".join(
        f"hcp({seat}) >= {lo} && hcp({seat}) <= {hi}" for seat, (lo, hi) in
        (("north", (15, 17)), ("south", (8, 9)), ("east", (8, 12)), ("west", (5, 12))))
        + " && shape(north, any 4333 + any 4432 + any 5332) && hearts(south) >= 5\n")
    plan = Plan.build(invite)
    assert plan.exact and plan.listing.layout.pool is not None
    owners = next(plan.deals(2_000, seed="asked"))
    assert (owners[:, card(0, 0)] == 3).all() and evaluate_cond(owners, invite.condition).all()


def test_cards_predealt_to_patterned_seats_stay_in_their_listing_beside_the_pool():
    """Predealt to a patterned seat, an honour and a spot card are options of
    that seat's suits; the pool weighs what the patterned seats leave, as
    without them.  Small: the same deals and cases as the factored listing.
    The spade ace at each seat in turn (two patterned, two pool seats asked)
    adds up to the count without it; before, a predealt card sent the pool
    to rejection (48% kept)."""
    small = load_program(f"predeal south SK, H2\ncondition {_SMALL} && hcp(east) <= 8\n")
    comp = compile_program(small)
    assert applicable(comp)
    factored, pooled = build_listing(comp), build_paired(comp)
    assert pooled.deals == factored.deals > 0 and pooled.cases == count_cases(factored)
    fit = ("hcp(north) >= 11 && hcp(north) <= 15 && spades(north) >= 5 && spades(south) >= 3 && hcp(south) >= 10"
           " && hcp(east) >= 8 && hcp(west) <= 10\n")
    plans = {seat: Plan.build(load_program(f"predeal {seat} SA\ncondition {fit}")) for seat in ("north", "east", "south", "west")}
    assert all(p.exact and p.listing.layout.pool is not None for p in plans.values())
    assert sum(p.deals_total for p in plans.values()) == Plan.build(load_program(f"condition {fit}")).deals_total
    owners = np.concatenate(list(plans["north"].deals(4_000, seed="predealt beside a pool")))
    assert (owners[:, card(0, 0)] == 0).all() and fits(owners, load_program(f"condition {fit}")).all()


def test_a_shape_only_seat_beside_the_pool_counts_the_same_deals():
    comp = _comp(SHAPE_ONLY)
    assert build_paired(comp).deals == build_listing(comp).deals == 5_792_743_018_758_757_498_080_588


@pytest.mark.parametrize("condition", ONE_PATTERNED, ids=["top honours", "controls", "a single card"])
def test_one_patterned_seat_beside_a_pool_lists_a_pool_seat_by_pattern(condition):
    """Either pool seat listed by pattern counts what the factored listing
    counts, card by card; the plan lists the one that leaves the fewest card
    classes (East, which reads single suits or cards, so West's pool is
    suit-blind)."""
    comp = compile_program(load_program(f"condition {condition}\n"))
    assert comp.patterned == (0,) and comp.pooled == (1, 3) and not paired.applicable(comp)
    factored = build_listing(comp).deals
    assert factored > 0
    for seat in comp.pooled:
        assert build_paired(rank_pool._listed_by_pattern(comp, seat)).deals == factored
    assert paired.view(comp).patterned == (0, 1)


def test_one_patterned_seat_beside_a_pool_is_exact_and_deals_its_law():
    """The overcaller's spec: exact, with the same count whichever pool seat
    is listed by pattern; deals fit; East's top-3 count against the exact
    counts of the spec narrowed to 2 and to 3."""
    program = load_program(f"condition {NT_AND_OVERCALLER}\n")
    plan = Plan.build(program)
    assert plan.exact and plan.listing.layout.pool.seats == (3,)
    assert plan.deals_total == 106_618_336_086_062_267_493_062_400
    comp = compile_program(program)
    assert build_paired(rank_pool._listed_by_pattern(comp, 3)).deals == plan.deals_total  # a pool by card classes
    parts = [Plan.build(load_program(f"condition {NT_AND_OVERCALLER.replace('>= 2', f'== {k}')}\n")).deals_total
             for k in (2, 3)]
    assert sum(parts) == plan.deals_total
    owners = np.concatenate(list(plan.deals(20_000, seed="one patterned seat")))
    assert evaluate_cond(owners, program.condition).all()
    top3 = (owners[:, [0, 4, 8]] == 1).sum(axis=1)  # the spade ace, king and queen
    assert chisquare([int((top3 == k).sum()) for k in (2, 3)], np.array(parts, float) / sum(parts) * len(owners)).pvalue > 1e-4
    with kernel.numpy_only():
        again = plan.listing.make_sampler().draw(3000, chunk_rng("one patterned seat", 0))
    assert (again == plan.listing.make_sampler().draw(3000, chunk_rng("one patterned seat", 0))).all()


def test_a_plan_of_two_patterned_and_two_hcp_seats_is_exact():
    """It was listed for North and South, and East and West by rejection (39.6% kept)."""
    plan = Plan.build(load_spec(NT_INVITE))
    assert plan.exact and plan.listing.layout.pool is not None
    assert plan.deals_total == 37_518_963_468_449_687_703_683_568


def test_narrowing_a_pool_seat_partitions_the_count():
    """The specs with East at each HCP value add up to the whole (each its own listing)."""
    whole = _deals(NT_INVITE)
    parts = [_deals({**NT_INVITE, "east": {"hcp": [v, v]}}) for v in range(8, 13)]
    assert sum(parts) == whole


@pytest.mark.parametrize("spec", [NT_INVITE, {**THREE, "west": {"hcp": [16, 17]}}, NT_OVERCALL,
                                  {"condition": NT_GAME + " && hcp(north) + hcp(south) >= 24"}],
                         ids=["two patterned", "three patterned", "top honours in one suit", "partnership sum"])
def test_rank_pool_deals_fit_and_are_the_same_without_the_kernel(spec):
    listing = _paired(spec)
    owners = listing.make_sampler().draw(4000, chunk_rng("rank pool", 0))
    assert fits(owners, load_spec(spec).program()).all()
    assert (np.sort(owners, axis=1) == np.repeat(np.arange(4), 13)).all()
    with kernel.numpy_only():
        again = listing.make_sampler().draw(4000, chunk_rng("rank pool", 0))
    assert (owners == again).all()


def test_rank_pool_deals_follow_the_exact_law_of_each_pool_seat():
    """East's and West's HCP, drawn, against exact counts of the spec narrowed to each value."""
    plan = Plan.build(load_spec(NT_INVITE))
    owners = np.concatenate(list(plan.deals(20_000, seed="rank pool law")))
    for seat, name in ((1, "east"), (3, "west")):
        lo, hi = NT_INVITE[name]["hcp"]
        exact = np.array([_deals({**NT_INVITE, name: {"hcp": [v, v]}}) for v in range(lo, hi + 1)], float)
        seen = np.bincount(hcp(owners, seat) - lo, minlength=hi - lo + 1)
        possible = exact > 0
        assert seen[~possible].sum() == 0
        assert chisquare(seen[possible], exact[possible] / exact.sum() * len(owners)).pvalue > 1e-4


def test_block_sums_and_draws_stay_exact_past_two_digits():
    """The z1 step's block sums and per-row draw, for Y of 60 bits (a pool's
    ways make it that wide; T1 * Y stays below the 2**96 deals): equal to Python ints."""
    rng = np.random.default_rng(11)
    a, b = rng.integers(0, 1 << 30, size=(6, 50)), rng.integers(0, 1 << 60, size=(6, 50))
    digits, k = block_product_sums(a, b, 8)
    exact = [[sum(int(x) * int(y) for x, y in zip(ra[c : c + 8], rb[c : c + 8])) for c in range(0, 50, 8)] for ra, rb in zip(a, b)]
    assert [[int(d0) + (int(d1) << k) + (int(d2) << 2 * k) for d0, d1, d2 in zip(*rows)] for rows in zip(*digits)] == exact
    totals = [sum(int(x) * int(y) for x, y in zip(ra, rb)) for ra, rb in zip(a, b)]
    r = [t * 3 // 7 for t in totals]
    running = [np.cumsum([int(x) * int(y) for x, y in zip(ra, rb)]) for ra, rb in zip(a, b)]
    assert first_above(a, b, r).tolist() == [int(np.argmax(run > x)) for run, x in zip(running, r)]


def test_a_pool_of_two_hcp_only_seats_with_wide_weights_deals_alike_without_the_kernel():
    """N+S 18-22 with East-West holding 8+ hearts (tests/scripts/08): the
    pool is North and South, the patterned seats East and West, and the z1
    weights pass two digits."""
    comp = _comp({"condition": "hcp(north) + hcp(south) >= 18 && hcp(north) + hcp(south) <= 22"
                               " && hearts(east) + hearts(west) >= 8"})
    listing = build_paired(comp)
    assert listing.layout.pool.seats == (0, 2)
    owners = listing.make_sampler().draw(3000, chunk_rng("wide pool", 0))
    with kernel.numpy_only():
        again = listing.make_sampler().draw(3000, chunk_rng("wide pool", 0))
    assert (owners == again).all()
    ns = hcp(owners, 0) + hcp(owners, 2)
    assert ((ns >= 18) & (ns <= 22)).all()


def test_three_patterned_seats_and_a_pool_partition_the_count_without_it():
    """West's HCP ranges, each a rank pool beside three patterned seats, add
    up to the count with West free: a paired listing with no pool at all."""
    whole = build_paired(_comp(THREE)).deals
    parts = []
    for lo, hi in [(0, 15), (16, 17), (18, 37)]:
        spec = {**THREE, "west": {"hcp": [lo, hi]}}
        comp = _comp(spec)
        assert applicable(comp) and len(comp.patterned) == 3
        parts.append(_deals(spec))
    assert all(parts) and sum(parts) == whole


#: Pools that a draw reads in several boxes: three cell signatures (South's
#: five-card suit), each with one to three boxes, a mixed form among them;
#: and one signature of two boxes with two mixed forms (East's HCP beside
#: North's and beside South's).
MANY_BOXES = [
    {"condition": "shape(north, 4333 + 3433) && shape(south, 5xxx + x5xx) && hcp(north) <= 2 && hcp(south) <= 3"
                  " && (spades(south) == 5 && hcp(east) <= 2"
                  " || hearts(south) == 5 && (hcp(east) >= 6 && hcp(east) <= 8 || hcp(north) + hcp(east) <= 1))"},
    {"condition": "shape(north, 4333 + 3433) && shape(south, 5xxx) && hcp(north) <= 2 && hcp(south) <= 3 && hcp(east) <= 6"
                  " && (hcp(north) + hcp(east) >= 3 || hcp(south) == 0) && hcp(south) + hcp(east) <= 6"},
]


def _pool_rows(spec, n: int):
    """A pool's sampler's rows as RankPool.deal sees them (its layout,
    sig_boxes, signatures and summed vectors) for ``n`` draws."""
    listing = _paired(spec)
    pool, seen = listing.layout.pool, {}
    deal = pool.deal

    def spy(owners, rng, layout, sig_boxes, sig, z):
        seen.update(layout=layout, sig_boxes=sig_boxes, sig=sig, z=z)
        deal(owners, rng, layout, sig_boxes, sig, z)

    pool.deal = spy
    try:
        listing.make_sampler().draw(n, chunk_rng("pool rows", 0))
    finally:
        del pool.deal  # the listing is shared (_paired): its pool deals as its class does again
    return pool, seen


def test_the_many_boxes_specs_read_several_boxes_and_signatures():
    pool, rows = _pool_rows(MANY_BOXES[0], 10)
    assert len(rows["sig_boxes"]) == 3 and max(map(len, rows["sig_boxes"])) == 3 and pool.mixed_forms
    pool, rows = _pool_rows(MANY_BOXES[1], 10)
    assert len(rows["sig_boxes"][0]) == 2 and len(pool.mixed_forms) == 2


@pytest.mark.skipif(getattr(kernel.paired(), "pool_pick", None) is None, reason="compiled pool pick not built")
@pytest.mark.parametrize("spec", [*MANY_BOXES, NT_INVITE, NT_OVERCALL, {"condition": NT_GAME + " && hcp(north) + hcp(south) >= 24"},
                                  {"north": {"shape": "4333"}, "south": {"shape": "5xxx"}, "east": {"hcp": [8, 12]}}],
                         ids=["three signatures", "two mixed forms", "two patterned", "card classes", "partnership sum",
                              "no listed form, a free seat"])
def test_compiled_pool_pick_makes_the_numpy_picks_from_the_same_bytes(spec):
    """RankPool._pick_compiled against its numpy reference on the same rows:
    the same counts, and the stream left at the same place."""
    pool, rows = _pool_rows(spec, 3000)
    args = (rows["layout"], rows["sig_boxes"], rows["sig"], rows["z"], pool._h(rows["layout"], rows["z"]))
    a, b = chunk_rng("pick", 1), chunk_rng("pick", 1)
    compiled = pool._pick_compiled(kernel.paired().pool_pick, a, *args)
    with kernel.numpy_only():
        reference = pool._pick(b, *args)
    assert np.array_equal(compiled, reference)
    assert a.bits.read(64) == b.bits.read(64)


@pytest.mark.parametrize("spec", MANY_BOXES, ids=["three signatures", "two mixed forms"])
def test_pools_of_several_boxes_deal_alike_without_the_kernel(spec):
    listing = _paired(spec)
    owners = listing.make_sampler().draw(3000, chunk_rng("many boxes", 0))
    assert fits(owners, load_spec(spec).program()).all()
    with kernel.numpy_only():
        again = listing.make_sampler().draw(3000, chunk_rng("many boxes", 0))
    assert (owners == again).all()


@pytest.mark.skipif(getattr(kernel.paired(), "pool_pick", None) is None, reason="compiled pool pick not built")
def test_compiled_pool_pick_refuses_bad_input():
    """Wrong types, shapes, indices and tables raise; none is read out of bounds."""
    pool, rows = _pool_rows(MANY_BOXES[0], 200)
    pick, arrays = kernel.paired().pool_pick, pool._pool_arrays(rows["sig_boxes"])
    cols = [*pool.listed_forms, *pool.mixed_forms]
    sig = np.ascontiguousarray(rows["sig"], np.int64)
    h = np.ascontiguousarray(pool._h(rows["layout"], rows["z"]), np.int64)
    x = np.ascontiguousarray(rows["layout"].form_values(rows["z"])[:, cols], np.int64)
    counts = np.empty((len(pool.classes), len(sig), len(pool.seats)), np.int64)  # class-major

    def call(sig=sig, h=h, x=x, arrays=arrays, counts=counts):
        pick(chunk_rng("bad", 0).bits, sig, h, x, arrays, counts)

    call()  # the good call
    with pytest.raises(TypeError, match="int64"):
        call(h=h.astype(np.float64))
    with pytest.raises(TypeError, match="int64"):
        call(sig=sig.astype(np.int32))
    read_only = counts.copy()
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        call(counts=read_only)
    with pytest.raises(ValueError, match="contiguous"):
        call(x=np.asfortranarray(np.repeat(x, 2, axis=1)))
    with pytest.raises(ValueError, match="wrong size"):
        call(h=h[:-1].copy())
    with pytest.raises(ValueError, match="wrong size"):
        call(x=x[:-1].copy())
    with pytest.raises(ValueError, match="wrong size"):
        call(counts=counts[:, :-1].copy())
    with pytest.raises(ValueError, match="wrong size"):
        call(counts=counts.reshape(len(counts), -1))
    with pytest.raises(IndexError, match="signature"):
        call(sig=sig + len(rows["sig_boxes"]))
    with pytest.raises(IndexError, match="class counts"):
        call(h=h - h.max() - 1)
    with pytest.raises(IndexError, match="class counts"):
        call(h=np.full_like(h, int(np.prod(pool.dims))))
    with pytest.raises(ValueError, match="form value"):
        call(x=x + (1 << 50))
    with pytest.raises(TypeError, match="tuple"):
        call(arrays=list(arrays))
    with pytest.raises(TypeError, match="tuple"):
        call(arrays=arrays[:-1])
    with pytest.raises(TypeError, match="int64"):
        call(arrays=(*arrays[:7], arrays[7].astype(np.float64), *arrays[8:]))

    def altered(i, value):
        return (*arrays[:i], value, *arrays[i + 1 :])

    sig_ptr, sig_box, lim, box_table, start_at, cum_at, start, cum, combo, q_dims, n_h = arrays
    with pytest.raises(ValueError, match="sig_ptr"):
        call(arrays=altered(0, sig_ptr + 1))
    with pytest.raises(IndexError, match="box"):
        call(arrays=altered(1, sig_box + len(lim)))
    with pytest.raises(ValueError, match="lim"):
        call(arrays=altered(2, lim[:, 1:].copy()))
    with pytest.raises(ValueError, match="box bound"):
        call(arrays=altered(2, lim - (1 << 50)))
    with pytest.raises(IndexError, match="table"):
        call(arrays=altered(3, box_table + len(start_at)))
    with pytest.raises(ValueError, match="start_at"):
        call(arrays=altered(4, start_at * 2))
    with pytest.raises(ValueError, match="cum_at"):
        call(arrays=altered(5, cum_at[:-1].copy()))
    with pytest.raises(IndexError, match="run"):
        call(arrays=altered(6, start + len(cum)))  # runs past their table
    with pytest.raises(IndexError, match="run"):
        call(arrays=altered(6, start[::-1].copy()))  # runs that end before they start
    with pytest.raises(ValueError, match="running sums"):
        call(arrays=altered(7, -cum))  # ways that fall
    with pytest.raises(ValueError, match="running sums"):
        call(arrays=altered(7, cum * (1 << 62)))  # ways that wrap
    # one signature reading one table twice, of 2**62 ways: each box's ways fit int64, not their sum
    one = np.zeros(1, np.int64)
    twice = (np.array([0, 2]), np.zeros(2, np.int64), np.zeros((1, 0), np.int64), one, np.array([0, 2]), np.array([0, 2]),
             np.array([0, 1]), np.array([0, 1 << 62]), np.zeros((1, 4), np.int64), np.zeros(0, np.int64), 1)
    with pytest.raises(ValueError, match="a row's ways pass 2\\*\\*63"):
        pick(chunk_rng("bad", 0).bits, one, one, np.zeros((1, 0), np.int64), twice, np.empty((4, 1, 1), np.int64))
    half = (*twice[:7], np.array([0, (1 << 62) - 1]), *twice[8:])  # just below: drawn
    pick(chunk_rng("bad", 0).bits, one, one, np.zeros((1, 0), np.int64), half, np.empty((4, 1, 1), np.int64))
    with pytest.raises(ValueError, match="combo"):
        call(arrays=altered(8, combo[1:].copy()))
    with pytest.raises(ValueError, match="combo"):
        call(counts=counts[1:].copy())  # a class short
    with pytest.raises(ValueError, match="q_dims"):
        call(arrays=altered(9, q_dims - q_dims))
    with pytest.raises(ValueError, match="bad n_h|start_at"):
        call(arrays=altered(10, n_h + 1))
    with pytest.raises(ValueError, match="bounds must be >= 1"):  # a row of no ways: no draw, as Rng.below
        call(arrays=altered(7, np.zeros_like(cum)))
    pick(chunk_rng("bad", 0).bits, sig[:0], h[:0], x[:0], arrays, counts[:, :0])  # no rows: nothing read


def _accepts_on_the_grid(layout, z_flat, keys):
    """The pool's accept matrices read at every (z1, z2), as they were before
    RankPool.accepts read them at the pairs in a box alone."""
    pool, zv = layout.pool, small_vectors(layout, z_flat)
    out = ([], [])
    for boxes in pool.source.boxes_of(keys):
        z, fits = layout.add(zv[:, None, :], zv[None, :, :])
        h = pool._h(layout, z, fits)
        ways, cases = np.zeros(fits.shape, np.int64), np.zeros(fits.shape, np.int64)
        for lo, hi in boxes:
            inside = fits & pool._listed_inside(layout, z, lo, hi)
            w, c = pool.table(lo, hi).totals(h, *pool._q_range(layout, z, lo, hi))
            ways += np.where(inside, w, 0)
            cases += np.where(inside, c, 0)
        out[0].append(ways)
        out[1].append(cases)
    return out


@pytest.mark.parametrize("spec", MIXED + PER_SUIT + [{"condition": NT_GAME}, NT_INVITE], ids=range(len(MIXED) + 4))
def test_accept_matrices_read_in_boxes_equal_the_whole_grid(spec):
    """The same values as the grid (folded, mixed and per-suit forms), in a
    narrow unsigned dtype where they fit."""
    prepared = Prepared.of(_comp(spec))
    frame = prepared.frame
    ways, cases = _accepts_on_the_grid(prepared.layout, frame.z_flat, frame.sig_keys)
    for got, want in zip(frame.accept + frame.accept_cases, ways + cases):
        assert got.dtype.kind == "u" and got.tolist() == want.tolist()
