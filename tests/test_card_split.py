"""Splitting a plan by who holds a coin card (``truedeal.constraints.card_owner``).

11_levelling_coin: "whoever holds the club deuce decides whether North or
South is the 12-14 opener".  Listing the deuce would track every suit's deuce
and is too wide, so the plan lists four programs, the deuce predealt to each
seat.  The count is checked against a closed formula over honour subsets,
and the draws against the exact law of (deuce's owner, opener's HCP)."""

from __future__ import annotations

import itertools
from collections import Counter
from functools import cache
from math import comb, factorial, prod
from pathlib import Path

import numpy as np
from scipy.stats import chisquare

from truedeal import class_split
from truedeal.analysis.laws import distribution_of
from truedeal.cards import HCP_OF_RANK, card
from truedeal.class_split import ClassSplit
from truedeal.constraints import card_classes, card_owner, ir
from truedeal.constraints.dealer import load_program, parse_condition
from truedeal.constraints.evaluate import evaluate_cond
from truedeal.engine import Plan

SCRIPT = Path(__file__).parent / "scripts" / "11_levelling_coin.dlr"
N, E, S, W = range(4)
C2 = card(12, 3)


@cache
def _honour_sets(hcp: int) -> dict[int, int]:
    """Number of honour subsets (of the 16) worth ``hcp``, by size."""
    out: dict[int, int] = {}
    for picks in itertools.product(range(5), repeat=4):  # how many of A, K, Q, J (0..4 suits each)
        if sum(k * p for k, p in zip(HCP_OF_RANK, picks)) == hcp:
            size = sum(picks)
            out[size] = out.get(size, 0) + prod(comb(4, p) for p in picks)
    return out


def _hands(hcp: int, with_deuce: bool) -> int:
    """13-card hands worth ``hcp`` that hold (or do not hold) the club deuce:
    the honours, then the other spot cards from the 35 that are not the deuce."""
    return sum(n * comb(35, 13 - size - with_deuce) for size, n in _honour_sets(hcp).items())


def _deals(owner: int, opener_hcp: int) -> int:
    """Deals with the deuce at ``owner`` and the opener (North when East-West
    hold it, else South) worth ``opener_hcp``."""
    opener = N if owner in (E, W) else S
    rest_three = factorial(39) // factorial(13) ** 3  # the 39 other cards, one hand of them holding the deuce or not
    if owner == opener:
        return _hands(opener_hcp, True) * rest_three
    # the deuce is among the 39 cards left: its holder takes it and 12 more
    return _hands(opener_hcp, False) * comb(38, 12) * comb(26, 13)


@cache
def _script_plan() -> Plan:
    """The script's plan, built once for its count and its law (the seeded draws build their own, from cold)."""
    return Plan.build(load_program(SCRIPT))


def test_the_levelling_script_counts_what_the_formula_gives():
    plan = _script_plan()
    assert plan.exact and plan.union is not None and plan.union.split_on == (C2,)
    assert plan.deals_total == sum(_deals(o, v) for o in range(4) for v in (12, 13, 14))
    assert "split by who holds C2" in plan.summary().method


def test_its_deals_fit_and_follow_the_exact_law_of_owner_and_opener_points():
    program, plan = load_program(SCRIPT), _script_plan()
    owners = np.concatenate(list(plan.deals(12_000, seed="card split")))
    assert evaluate_cond(owners, program.condition).all()
    holder = owners[:, C2]
    points = np.array([_points(row, N if h in (E, W) else S) for row, h in zip(owners, holder)])
    cells = [(o, v) for o in range(4) for v in (12, 13, 14)]
    observed = [int(((holder == o) & (points == v)).sum()) for o, v in cells]
    weights = np.array([_deals(o, v) for o, v in cells], dtype=float)
    assert chisquare(observed, weights / weights.sum() * len(owners)).pvalue > 1e-4


def _points(row: np.ndarray, seat: int) -> int:
    return sum(HCP_OF_RANK[c // 4] for c in range(16) if row[c] == seat)


def test_seeded_draws_repeat_and_every_seed_differs():
    plan = Plan.build(load_program(SCRIPT))
    a, b = (next(plan.deals(500, seed="again")) for _ in range(2))
    assert (a == b).all()
    assert not (next(plan.deals(500, seed="other")) == a).all()


_hascard = card_owner.has_card


def test_which_cards_a_plan_splits_on():
    deuces = [card(12, s) for s in range(4)]
    two = ir.Program(condition=ir.Or(tuple(_hascard(W, c) for c in deuces[:2])))
    assert card_owner.split_cards(two) == tuple(deuces[:2])
    three = ir.Program(condition=ir.Or((*two.condition.items, _hascard(E, deuces[2]))))
    assert card_owner.split_cards(three) == tuple(deuces[:3])  # 64 plans
    threes = [card(11, s) for s in range(4)]
    five = ir.Program(condition=ir.Or((*three.condition.items, *(_hascard(E, c) for c in threes[:2]))))
    assert card_owner.split_cards(five) == ()  # 1,024 plans: past a plain split
    assert card_owner.split_cards(five, card_classes.MAX_CLASSED_CARDS) == (*deuces[:3], *threes[:2])  # in classes
    hcp = ir.Compare(">=", ir.Linear(((1, ir.Feature(N, ir.ALL_SUITS, ir.HCP)),)), ir.Linear((), 10))
    ace = ir.Program(condition=ir.And((hcp, _hascard(W, card(0, 0)), _hascard(W, deuces[0]))))
    assert card_owner.split_cards(ace) == (deuces[0],)  # HCP tracks the ace anyway
    predealt = ir.Program(condition=_hascard(W, deuces[0]), predeal=((E, (deuces[0],)),))
    assert card_owner.split_cards(predealt) == ()
    aces = ir.Program(condition=ir.Compare(">=", ir.Linear(((1, ir.Feature(N, ir.ALL_SUITS, ir.one_rank(0))),)),
                                           ir.Linear((), 2)))
    assert card_owner.split_cards(aces) == ()  # four cards in one feature: not a coin


def test_a_placement_predeals_the_card_and_folds_its_hascard():
    program = ir.Program(condition=_hascard(W, C2), predeal=((W, tuple(range(16, 28))),))  # West holds 12 cards
    parts = list(card_owner.placements(program, (C2,)))
    assert [p.predeal for p in parts] == [((N, (C2,)), (W, tuple(range(16, 28)))),
                                         ((E, (C2,)), (W, tuple(range(16, 28)))),
                                         ((S, (C2,)), (W, tuple(range(16, 28)))),
                                         ((W, (*range(16, 28), C2)),)]
    assert [Plan.build(p).deals_total > 0 for p in parts] == [False, False, False, True]
    full = ir.Program(condition=ir.TRUE, predeal=((W, tuple(range(16, 29))),))
    assert len(list(card_owner.placements(full, (C2,)))) == 3  # West has no room for a 14th card


# ---------------------------------------------------------------- three coins

LADDER = Path(__file__).parent / "scripts" / "59_levelling_ladder.dlr"
COINS = (C2, card(12, 2), card(11, 1))  # the club and diamond deuces, the heart three
READS = (W, E, W)  # whose holding of each coin counts a head


def _ladder_opener(owners: tuple[int, ...], reads: tuple[int, ...] = READS, heads: int = 2) -> int:
    """North when at least ``heads`` coins are with the seats that ``reads`` names, else South."""
    return N if sum(o == r for o, r in zip(owners, reads)) >= heads else S


def _ladder_deals(owners: tuple[int, ...], opener_hcp: int, reads: tuple[int, ...] = READS, heads: int = 2) -> int:
    """Deals with the coins at ``owners`` and the opener worth ``opener_hcp``:
    the opener's honours, its k coins and 13 - size - k of the 36 - coins
    other spot cards; then the other 39 - coins + k cards go to the three
    other seats, each taking 13 cards less the coins placed with it."""
    opener = _ladder_opener(owners, reads, heads)
    k = sum(o == opener for o in owners)
    spots = 36 - len(owners)
    hands = sum(n * comb(spots, 13 - size - k) for size, n in _honour_sets(opener_hcp).items() if 13 - size - k >= 0)
    rest = [13 - sum(o == s for o in owners) for s in range(4) if s != opener]
    return hands * factorial(39 - len(owners) + k) // prod(factorial(r) for r in rest)


@cache
def _ladder_plan() -> Plan:
    return Plan.build(load_program(LADDER))


def test_three_coins_count_what_the_formula_gives():
    plan = _ladder_plan()
    assert plan.exact and plan.union is not None and plan.union.split_on == COINS
    assert len(plan.union.plans) == 64
    assert plan.deals_total == sum(_ladder_deals(o, v) for o in itertools.product(range(4), repeat=3) for v in (12, 13, 14))


def test_three_coins_deal_the_exact_law_of_opener_and_points():
    program, plan = load_program(LADDER), _ladder_plan()
    owners = np.concatenate(list(plan.deals(12_000, seed="three coins")))
    assert evaluate_cond(owners, program.condition).all()
    placed = [tuple(int(x) for x in row[list(COINS)]) for row in owners]
    opener = [_ladder_opener(p) for p in placed]
    points = [_points(row, o) for row, o in zip(owners, opener)]
    cells = [(o, v) for o in (N, S) for v in (12, 13, 14)]
    observed = [sum(1 for a, b in zip(opener, points) if (a, b) == cell) for cell in cells]
    weights = np.array([sum(_ladder_deals(p, v) for p in itertools.product(range(4), repeat=3) if _ladder_opener(p) == o)
                        for o, v in cells], dtype=float)
    assert chisquare(observed, weights / weights.sum() * len(owners)).pvalue > 1e-4


def test_a_split_kept_whole_readies_the_samplers_past_its_budget_again_with_the_same_deals(monkeypatch):
    """With no room for samplers between draws, each draw of several chunks
    readies each listing's sampler once and drops it after: the same deals,
    together or chunk by chunk, as a plan that keeps every sampler."""
    n, seed = 2 * 4096 + 7, "samplers"
    kept = np.concatenate(list(_ladder_plan().deals(n, seed)))
    monkeypatch.setattr(class_split, "MAX_KEPT_SAMPLERS", 0)
    plan = Plan.build(load_program(LADDER))
    assert plan.draws_together and not plan.union.samplers_kept
    assert (np.concatenate(list(plan.deals(n, seed))) == kept).all()
    assert all(p._sampler is None for p in plan.union.plans)
    one_by_one = np.concatenate([plan.chunk(i, seed, size) for i, size in ((0, 4096), (1, 4096), (2, 7))])
    assert (one_by_one == kept).all()


def test_a_split_past_its_entry_bound_is_listed_one_class_at_a_time(monkeypatch):
    """The bound on a split's listings is a count of entries, not a time:
    the same plan on every machine.  Past it the split is listed one merged
    class at a time (tests/test_class_split.py), and past that bound too it
    is left to rejection."""
    monkeypatch.setattr(card_owner, "MAX_SPLIT_ENTRIES", 1_000)
    plan = Plan.build(load_program(LADDER))
    assert plan.exact and isinstance(plan.union, ClassSplit)
    monkeypatch.setattr(class_split, "MAX_CLASS_WORK", 1_000)
    plan = Plan.build(load_program(LADDER))
    assert not plan.exact and plan.union is None


def test_a_split_past_its_box_bound_is_left_to_rejection(monkeypatch):
    """Each placement of the ladder tests 6 boxes, each of its 26 classes 2
    (what a class's placement decides is pruned), and each of its 13 merged
    classes 2: 384, 52 and 26, all past a bound of 20."""
    assert sum(p.listing.grid_points for p in _ladder_plan().union.plans) == 64 * 6  # (cached: before the patch)
    monkeypatch.setattr(card_owner, "MAX_SPLIT_BOXES", 20)
    plan = Plan.build(load_program(LADDER))
    assert not plan.exact and plan.union is None


# ----------------------------------------------------------------- five coins

FIVE = Path(__file__).parent / "scripts" / "60_levelling_five_coins.dlr"
FIVE_COINS = (C2, card(12, 2), card(11, 1), card(11, 0), card(10, 3))  # 2C 2D 3H 3S 4C
FIVE_READS = (W, E, W, E, W)


def _five_opener(owners: tuple[int, ...]) -> int:
    return _ladder_opener(owners, FIVE_READS, 3)


def _five_deals(owners: tuple[int, ...], opener_hcp: int) -> int:
    return _ladder_deals(owners, opener_hcp, FIVE_READS, 3)


@cache
def _five_plan() -> Plan:
    return Plan.build(load_program(FIVE))


def test_five_coins_are_split_in_classes_and_count_what_the_formula_gives():
    plan = _five_plan()
    assert plan.exact and plan.union is not None and plan.union.split_on == FIVE_COINS
    assert len(plan.union.branch_of) == 4 ** 5 and len(plan.union.plans) < 112  # 1,024 placements, few listings
    assert plan.deals_total == sum(_five_deals(o, v) for o in itertools.product(range(4), repeat=5) for v in (12, 13, 14))
    assert "1,024 placements in" in plan.summary().method


def test_five_coins_deal_the_exact_law_of_each_coin_and_of_opener_and_points():
    """A class draws a member uniformly and moves the coins onto it: each
    coin's owner, beside the opener and its points, follows the exact law."""
    program, plan = load_program(FIVE), _five_plan()
    owners = np.concatenate(list(plan.deals(12_000, seed="five coins")))
    assert evaluate_cond(owners, program.condition).all()
    placed = [tuple(int(x) for x in row[list(FIVE_COINS)]) for row in owners]
    points = [_points(row, _five_opener(p)) for row, p in zip(owners, placed)]
    law = {(p, v): _five_deals(p, v) for p in itertools.product(range(4), repeat=5) for v in (12, 13, 14)}
    for i in range(5):  # the owner of coin i, the opener and its points: 4 x 2 x 3 cells
        def cell(p: tuple[int, ...], v: int, i: int = i) -> tuple[int, int, int]:
            return p[i], _five_opener(p), v
        by_cell: Counter[tuple[int, int, int]] = Counter()  # the law's deals summed by cell, in one pass over it
        for (p, v), w in law.items():
            by_cell[cell(p, v)] += w
        cells = sorted(by_cell)
        observed = Counter(cell(p, v) for p, v in zip(placed, points))
        weights = np.array([by_cell[c] for c in cells], dtype=float)
        assert chisquare([observed[c] for c in cells], weights / weights.sum() * len(owners)).pvalue > 1e-4 / 5


def test_the_placements_of_a_class_count_alike():
    """The claim the classes rest on, listed placement by placement: North
    reads its spades (its coins' suits matter), South its top two hearts
    (only how many coins it holds), East and West nothing but the coins."""
    spades_n = ir.Linear(((1, ir.Feature(N, (0,), ir.LENGTH)),))
    top2_s = ir.Linear(((1, ir.Feature(S, (1,), ir.top(2))),))
    coins = (card(12, 0), card(12, 3), card(11, 3))  # 2S 2C 3C
    heads = ir.Linear(tuple((1, ir.Feature(seat, (c % 4,), ir.one_rank(c // 4))) for seat, c in zip((W, E, W), coins)))
    program = ir.Program(condition=ir.And((
        ir.Compare(">=", spades_n, ir.Linear((), 5)),
        ir.Compare(">=", top2_s, ir.Linear((), 1)), ir.Compare(">=", heads, ir.Linear((), 1)))))
    classes = card_classes.placement_classes(program, coins)
    assert 1 < len(classes) < 64
    for group in classes:
        assert (group.moves[0] == np.arange(52)).all()
        if group.size == 1:
            continue  # one placement counts alike with itself: its listing (20 of the 64) would prove nothing
        first = {c: seat for seat, cards in group.program.predeal for c in cards}
        counts = set()
        for move in group.moves:  # move[c]: where the first member's coin c goes in this member
            member = {int(move[c]): first[c] for c in coins}
            counts.add(Plan.build(card_owner.placed_program(program, coins, tuple(member[c] for c in coins))).deals_total)
        assert len(counts) == 1
    assert sum(g.size for g in classes) == 64


def test_a_script_that_reads_whole_deals_is_not_classed():
    program = ir.Program(condition=ir.Compare("==", ir.OpaqueNum("rnd", (2,)), ir.Linear((), 0)))
    assert not card_classes.classable(program)
    assert card_classes.classable(ir.Program(condition=_hascard(W, C2)))


def test_a_split_whose_parts_all_count_zero_is_an_exact_zero():
    """Every placement listed exactly and none fits: the count is 0, exactly
    (it went to rejection, and a law whose bisection asked for an empty range
    of values, such as the library's 1NT opener's HCP, became an estimate)."""
    program = load_program(SCRIPT)
    plan = Plan.build(ir.Program(condition=ir.And((program.condition, parse_condition("hcp(north) >= 38")))))
    assert plan.exact and plan.deals_total == 0 and not plan.possible
    law = distribution_of(program, "hcp(north) >= 38 ? 0 : 1", sample=False)  # its bisection counts that 0
    assert law.counts == {1: sum(_deals(o, v) for o in range(4) for v in (12, 13, 14))}


# ------------------------------------------------------------ predealt coins


def test_a_predealt_coin_card_is_folded_where_the_script_is_read():
    """Script 55 asks whether West holds the heart deuce: with the deuce
    predealt, each placement leaves one branch, read as the script with that
    branch alone (it was dealt by rejection, 44% kept, with the deuce at East).
    A JSON spec whose seat holds the card folds it too."""
    script = (Path(__file__).parent / "scripts" / "55_ternary_condition.dlr").read_text()
    for seat, branch in (("east", "hearts(north) >= 5"), ("west", "spades(north) >= 5")):
        folded = load_program(f"predeal {seat} H2\n" + script)
        assert not any(card_owner.single_card(x) == card(12, 1) for x in ir.nodes(folded.condition) if isinstance(x, ir.Feature))
        plan = Plan.build(folded)
        alone = Plan.build(load_program(f"predeal {seat} H2\ncondition {branch} && hcp(north) >= 12"))
        assert plan.exact and plan.deals_total == alone.deals_total
    from truedeal.spec import load_spec

    spec = load_spec({"west": {"holds": ["H2"]}, "condition": "hascard(west, 2H) && hcp(north) >= 12"}).program()
    assert not any(isinstance(x, ir.Feature) and x.seat == W for x in ir.nodes(spec.condition))
