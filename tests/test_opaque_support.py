"""A script with ``rnd`` whose other parts need a split: the split lists those
parts exactly, and rejection checks ``rnd`` alone (truedeal.constraints.opaque),
where ``rnd`` cannot be weighed exactly (tests/test_rnd_weighed.py).

The practice library levels its scripts with ``rnd``: a deal of a common kind
is kept only some of the time.  Before, such a script whose other parts
needed a split or an either/or (which list exact parts only) left whole
seats to rejection."""

from __future__ import annotations

from math import sqrt

import numpy as np
import pytest

from truedeal.constraints import opaque, rnd_levels
from truedeal.constraints.dealer import parse_program
from truedeal.constraints.evaluate import evaluate_cond
from truedeal.engine import Plan

NT = "shape({s}, any 4333 + any 4432 + any 5332) and hcp({s}) >= 15 and hcp({s}) <= 17"
NT_N, NT_S = NT.format(s="north"), NT.format(s="south")
#: A 1NT opener in North or South, kept always when South has one and one time in four otherwise.
LEVELED = f"ntN = {NT_N}\nntS = {NT_S}\ncondition (ntN and rnd(4) == 0) or ntS\n"


def test_the_support_replaces_each_opaque_comparison_by_its_sign():
    """True where it counts for the condition, false under a negation; a
    comparison on both sides of a negation, or none at all, gives no support."""
    held = opaque.support(parse_program("condition hcp(north) >= 12 && !(rnd(2) == 0 || spades(south) >= 5)"))
    # under the negation the coin may fail: only South's spades are left to fail it
    assert held is not None and held.condition == parse_program("condition hcp(north) >= 12 && !(spades(south) >= 5)").condition
    held = opaque.support(parse_program("condition hcp(north) >= 12 && (rnd(3) == 1 || spades(south) >= 5)"))
    assert held is not None and held.condition == parse_program("condition hcp(north) >= 12").condition
    coin = "c = rnd(2) == 0\ncondition (c && hcp(north) >= 12) || (!c && hcp(south) >= 12)"
    assert opaque.support(parse_program(coin)) is None
    assert opaque.support(parse_program("condition hcp(north) >= 12")) is None


def test_possible_is_true_where_some_truths_of_the_opaque_parts_make_the_condition_true():
    """Checked on 4,000 random deals against every assignment of truths to
    the opaque comparisons (each replaced by a constant): ``possible`` holds
    wherever their or does (a bound: ``c && !c`` would still be possible),
    and here exactly there.  A coin counts both ways, so there is no support."""
    coin = ("c = rnd(2) == 0\nd = rnd(3) == 1\n"
            "condition (c && hcp(north) >= 12) || (!c && !d && hcp(south) >= 12) || (d && spades(west) >= 5)")
    program = parse_program(coin)
    assert opaque.support(program) is None
    owners = np.argsort(np.random.default_rng(7).random((4_000, 52)), axis=1) % 4
    signs = list(opaque.signs(program.condition))
    assert len(signs) == 2
    some = np.zeros(len(owners), bool)
    for truths in ((a, b) for a in (False, True) for b in (False, True)):
        fixed = opaque.Substitute(dict(zip(signs, truths))).cond(program.condition)
        some |= evaluate_cond(owners.astype(np.uint8), fixed)
    possible = evaluate_cond(owners.astype(np.uint8), opaque.possible(program).condition)
    assert 0 < some.sum() < len(owners) and (possible == some).all()


@pytest.fixture
def no_weighing(monkeypatch):
    """Plans as where ``rnd`` cannot be weighed (:mod:`truedeal.constraints.rnd_levels`:
    compared with a feature, or with too many classes), and ``tricks``: by the support."""
    monkeypatch.setattr(rnd_levels, "levels", lambda program: None)


@pytest.mark.memory_mb(700)  # the support's branches and the whole's failed listing (540 MB in process)
def test_a_leveled_either_or_lists_both_openers_and_rejects_only_the_coin(no_weighing):
    """The either/or is listed exactly (before: South's honours by rejection,
    17% kept); its deals fit it; rejection keeps the share the coin keeps,
    and North's opening without South's comes in the proportion the script
    gives (a quarter of its deals' weight), from exact counts."""
    plan = Plan.build(parse_program(LEVELED))
    summary = plan.summary()
    assert summary.method.startswith("exact listing (an either/or of 2 exact listings")
    assert summary.method.endswith("rejection for the parts no listing can hold (rnd(4) == 0)")
    north = Plan.build(parse_program(f"condition {NT_N}")).deals_total
    both = Plan.build(parse_program(f"condition ({NT_N}) and ({NT_S})")).deals_total
    either = Plan.build(parse_program(f"condition ({NT_N}) or ({NT_S})")).deals_total
    assert plan.listed_deals == either == summary.rejection.listed_deals
    north_alone = north - both  # the deals kept one time in four
    weighed = north_alone / 4 + (either - north_alone)
    acceptance, se = weighed / either, sqrt(weighed / either * (1 - weighed / either) / plan.pilot_draws)
    assert abs(plan.acceptance - acceptance) < 4 * se
    owners = np.concatenate(list(plan.deals(20_000, seed="leveled")))
    assert evaluate_cond(owners, parse_program(f"condition ({NT_N}) or ({NT_S})").condition).all()
    alone = int(evaluate_cond(owners, parse_program(f"condition ({NT_N}) and !({NT_S})").condition).sum())
    p = north_alone / 4 / weighed
    assert abs(alone - len(owners) * p) < 4 * sqrt(len(owners) * p * (1 - p))


#: The practice library's calm opponent: flat with at most 10 points, or
#: shapely (no 6-card suit, no 5-5) and weak without two of the top four honours in any suit.
CALM = ("(shape({s}, any 4432 + any 4333) and hcp({s}) < 11) or (shape({s}, xxxx - any 4432 - any 4333 - any 9xxx "
        "- any 8xxx - any 7xxx - any 6xxx - any 55xx) and hcp({s}) < 8 and top4({s}, spades) < 2 and top4({s}, hearts) < 2 "
        "and top4({s}, diamonds) < 2 and top4({s}, clubs) < 2)")


@pytest.mark.memory_mb(1000)  # the whole's split, then the leveled script's (920 MB in process)
def test_a_leveled_split_by_patterns_keeps_its_split(monkeypatch, no_weighing):
    """South's 1NT, North 8+ with a major, calm opponents: split by East's
    patterns.  With a coin on top (North's five hearts always, the rest 3
    times in 10) the same split lists the rest, and 44% of its deals are
    kept; before, the plan left the honour conditions of North, East and
    West to rejection (7.9% kept, a 12 s plan where it takes 3 s)."""
    script = (f"condition {NT_S} and hcp(north) >= 8 and (hearts(north) >= 4 or spades(north) >= 4)"
              f" and ({CALM.format(s='east')}) and ({CALM.format(s='west')})")
    whole = Plan.build(parse_program(script))
    assert whole.exact and whole.summary().method.startswith("exact: split by the patterns of east")
    plan = Plan.build(parse_program(script + " and (hearts(north) >= 5 or rnd(10) < 3)"))
    assert plan.summary().method.startswith("exact listing (split by the patterns of east")
    assert plan.listed_deals == whole.deals_total
    owners = next(plan.deals(2_000, seed="calm"))
    assert evaluate_cond(owners, whole.source_program().condition).all()
    # Chunks drawn together are the chunks drawn one by one: the rejection's
    # first passes together, and the split within East's split (West's
    # patterns) readies each of its listings once for all the chunks, not
    # once per chunk, when no sampler is kept between draws.
    assert all(p.union is not None for p in whole.union.plans)  # a split within the split
    for p in (whole, plan):
        _keep_no_sampler(p)
        assert p.draws_together
        wanted = [(k, 1_000) for k in range(4)]
        made = _samplers_made(monkeypatch)
        together = p.chunks(wanted, "together")
        assert len(made) == 4  # the four listings, once each
        for owners, (k, size) in zip(together, wanted):
            assert (owners == p.chunk(k, "together", size)).all()


def _keep_no_sampler(plan: Plan) -> None:
    """Drop every sampler of ``plan``'s splits, and keep none between draws."""
    plan._sampler = None
    if plan.union is not None:
        plan.union.samplers_kept = frozenset()
        for branch in plan.union.plans:
            _keep_no_sampler(branch)


def _samplers_made(monkeypatch) -> list[int]:
    """A list that grows by one each time a plan readies its listing's sampler."""
    made: list[int] = []
    ready = Plan.sampler.fget

    def counted(plan):
        if plan._sampler is None:
            made.append(1)
        return ready(plan)

    monkeypatch.setattr(Plan, "sampler", property(counted))
    return made
