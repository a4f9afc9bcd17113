"""Either/ors on one seat whose branches allow it disjoint patterns ("a calm
opponent") are listed branch by branch (:func:`truedeal.either_or.pattern_branches`)."""

from __future__ import annotations

import time

import numpy as np
from scipy.stats import binomtest

from truedeal.constraints.dealer import load_program
from truedeal.constraints.evaluate import evaluate_cond
from truedeal.either_or import pattern_branches
from truedeal.engine import Plan
from truedeal.explain import explanation

#: A 1♠ opener with five spades (5332, 12+ HCP) beside a calm East:
#: balanced with at most 10 HCP, or unbalanced (no 7-card suit) with at most
#: 7 and one of the top four cards of each major at most.  One listing holds
#: it too, to compare.
CALM = """
balanced = shape(east, any 4432 + any 4333)
unbalanced = shape(east, xxxx - any 4432 - any 4333 - any 7xxx - any 8xxx - any 9xxx)
calm = (unbalanced && top4(east, spades) < 2 && top4(east, hearts) < 2 && hcp(east) < 8) || (balanced && hcp(east) < 11)
shape(north, any 5332) && spades(north) == 5 && hcp(north) >= 12 && calm
"""


def _split(program) -> Plan:
    plan = Plan._build_by_patterns(None, program, None, time.perf_counter(), 8)
    assert plan is not None
    return plan


def test_a_calm_opponent_splits_by_east_patterns():
    (common, branches, seat), = pattern_branches(load_program(CALM))
    assert seat == 1 and len(branches) == 2 and len(common) == 3  # North's shape, spades and HCP


def test_branches_that_share_a_pattern_or_read_no_cards_do_not_split():
    overlapping = "(shape(east, any 4432) && hcp(east) < 11) || (shape(east, any 4432 + any 5332) && hcp(east) < 8)"
    shapes_alone = "shape(east, any 4432) || shape(east, any 5332)"
    two_seats = "(shape(east, any 4432) && hcp(east) < 11) || (shape(west, any 5332) && hcp(west) < 8)"
    for text in (overlapping, shapes_alone, two_seats):
        assert pattern_branches(load_program(f"hcp(north) >= 12 && ({text})")) == []


def test_the_split_counts_what_one_listing_counts():
    program = load_program(CALM)
    whole, split = Plan.build(program), _split(program)
    assert whole.union is None and whole.exact
    assert split.exact and split.union.patterns_of == 1 and len(split.union.plans) == 2
    assert split.deals_total == whole.deals_total == sum(p.deals_total for p in split.union.plans)
    assert "split by the patterns of east" in split.summary().method
    filters = [f for f in explanation(split)["forms"] if "a filter" in f]  # the first branch: unbalanced East
    assert [f.split(":")[0] for f in filters] == ["top4(east, spades)", "top4(east, hearts)"]


def test_split_draws_fit_and_take_each_branch_at_its_exact_share():
    program = load_program(CALM)
    plan = _split(program)
    owners = next(plan.deals(20_000, seed="pattern split"))
    assert evaluate_cond(owners, program.condition).all()
    unbalanced_branch = plan.union.plans[0].source_program().condition
    unbalanced = int(evaluate_cond(owners, unbalanced_branch).sum())
    share = plan.union.plans[0].deals_total / plan.deals_total
    assert binomtest(unbalanced, len(owners), share).pvalue > 1e-3
    assert np.unique(owners.view(np.dtype((np.void, 52))), return_counts=True)[1].max() == 1


#: East opens its longer major (12-19), South overcalls 1NT (15-18, balanced)
#: with a stopper in it: the branches read South too, and allow East
#: disjoint patterns.  One listing holds it too, to compare.
STOPPER = ("hcp(east) >= 12 && hcp(east) <= 19 && hcp(south) >= 15 && hcp(south) <= 18"
           " && shape(south, any 4333 + any 4432 + any 5332)"
           " && ((spades(east) >= 5 && spades(east) >= hearts(east) && hcp(south, spades) >= 3)"
           " || (hearts(east) >= 5 && hearts(east) > spades(east) && hcp(south, hearts) >= 3))")


def test_branches_that_read_other_seats_too_split_by_the_seat_they_share():
    program = load_program(f"condition {STOPPER}\n")
    assert pattern_branches(program) == []  # (not on one seat alone)
    (common, branches, seat), = pattern_branches(program, across_seats=True)
    assert seat == 1 and len(branches) == 2
    overlapping = STOPPER.replace("hearts(east) > spades(east)", "hearts(east) >= spades(east)")  # 5-5 in both
    assert pattern_branches(load_program(f"condition {overlapping}\n"), across_seats=True) == []


def test_a_split_across_seats_counts_what_one_listing_counts_and_draws_each_branch_at_its_share():
    program = load_program(f"condition {STOPPER}\n")
    whole = Plan.build(program)
    split = Plan._build_by_patterns(None, program, None, time.perf_counter(), 8, across_seats=True)
    assert whole.exact and whole.union is None
    assert split is not None and split.exact and split.union.patterns_of == 1
    assert split.deals_total == whole.deals_total
    owners = next(split.deals(20_000, seed="stopper split"))
    assert evaluate_cond(owners, program.condition).all()
    spades_branch = int(evaluate_cond(owners, split.union.plans[0].source_program().condition).sum())
    assert binomtest(spades_branch, len(owners), split.union.plans[0].deals_total / split.deals_total).pvalue > 1e-3
