"""Broad shapes counted exactly by the patterns they exclude (truedeal.shape_complements)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chisquare

from cli_runner import run
from truedeal.cards import D
from truedeal.constraints.dealer import load_program
from truedeal.constraints.evaluate import evaluate_cond
from truedeal.engine import Plan
from truedeal.errors import Impossible
from truedeal.shape_complements import broad_shapes
from truedeal.spec import load_spec
from truedeal_web.api import count_result

FIVE_CARD_SUIT = "(spades(south) > 4 || hearts(south) > 4 || diamonds(south) > 4 || clubs(south) > 4)"
#: Small enough for the plain listing of both seats: the complements must count what it counts.
SMALL = f"hcp(north) >= 12 && hcp(north) <= 21 && !shape(north, 4432) && hcp(south) >= 8 && hcp(south) <= 16 && {FIVE_CARD_SUIT}"
#: HCP of each card, ``4 * rank + suit`` with rank 0 the ace.
CARD_HCP = np.array([max(0, 4 - c // 4) for c in range(52)])
#: The library's Basic Overcall: East opens one of a suit, South overcalls, West is weak.
OVERCALL = Path(__file__).parent / "scripts" / "71_overcall_beside_broad_shapes.dlr"


def _program(condition: str):
    return load_program(f"condition {condition}\n")


def _complemented(condition: str) -> Plan:
    """The plan by complements, made whether or not the plain plan would be exact."""
    plan = Plan._build_shape_complements(None, _program(condition), None, time.perf_counter())
    assert plan is not None
    return plan


@pytest.fixture(scope="module")
def small() -> Callable[[], Plan]:
    """SMALL's plan by complements, for the tests that only read it or draw
    from it: built once, by the first that asks (its memory bound counts it)."""
    return cache(lambda: _complemented(SMALL))


def test_only_a_broad_shape_of_one_seat_is_complemented():
    """North's "not 4=4=3=2" and South's five-card suit exclude 1 and 16
    patterns; a narrow shape, a seat's points and a fit are kept."""
    found = broad_shapes(_program(SMALL + " && shape(east, any 4333) && spades(north) + spades(west) >= 4"))
    assert found is not None and found.seats == (0, 2)
    kept = str(found.kept.condition)
    assert "ShapeIn(seat=1" in kept and "Feature(seat=3" in kept and "ShapeIn(seat=0" not in kept
    assert [sign for sign, _ in found.terms()] == [-1, -1, 1]
    assert broad_shapes(_program("hcp(north) >= 12 && shape(north, any 4333 + any 4432)")) is None
    assert broad_shapes(_program("hcp(north) >= 12 && spades(north) >= 5")) is None  # 5+ spades: most patterns excluded


@pytest.mark.memory_mb(800)  # the plain listing of two patterned seats, and the four of the complements
def test_the_complements_count_what_the_plain_listing_counts(small):
    plain = Plan.build(_program(SMALL))
    assert plain.exact
    plan = small()
    assert not plan.exact and plan.counts_exactly and plan.deals_total == plain.deals_total
    assert plan.acceptance == plain.deals_total / plan.listed_deals
    summary = plan.summary()
    assert summary.deals == plain.deals_total and summary.rejection is not None
    assert summary.rejection.acceptance_exact and summary.rejection.acceptance_stderr == 0.0
    out = json.loads(json.dumps(summary.to_json()))  # as count --json gives it
    assert out["deals"] == plain.deals_total and out["rejection"]["acceptance_rate"] == plan.acceptance
    api = count_result(load_spec({"condition": SMALL}), summary)  # the API's CountResult, validated
    assert api["exact"] and api["deals_text"] == str(plain.deals_total) and api["rejection"]["acceptance_exact"]


@pytest.mark.memory_mb(800)
def test_a_conjunct_that_reads_points_too_is_counted_by_what_it_excludes():
    """"Not a 1NT opener" excludes only North's balanced patterns (15-17 HCP
    there): the complements count what the plain listing counts."""
    not_nt = "!(hcp(north) >= 15 && hcp(north) <= 17 && shape(north, any 4333 + any 4432 + any 5332))"
    condition = f"hcp(north) >= 12 && hcp(north) <= 21 && {not_nt} && hcp(south) >= 8 && hcp(south) <= 16 && {FIVE_CARD_SUIT}"
    found = broad_shapes(_program(condition))
    assert found is not None and found.seats == (0, 2)
    plain = Plan.build(_program(condition))
    assert plain.exact and _complemented(condition).deals_total == plain.deals_total


def test_the_deals_drawn_follow_the_exact_law(small):
    """North's points in three bins, in 20,000 deals drawn by rejection from
    the listing without the shapes, against the bins' exact counts."""
    plan = small()
    owners = np.concatenate(list(plan.deals(20_000, seed="broad shapes")))
    assert evaluate_cond(owners, _program(SMALL).condition).all()
    bins = [(12, 13), (14, 16), (17, 21)]
    law = [_complemented(f"{SMALL} && hcp(north) >= {lo} && hcp(north) <= {hi}").deals_total for lo, hi in bins]
    assert sum(law) == plan.deals_total
    hcp = ((owners == 0) * CARD_HCP).sum(axis=1)
    observed = [int(((hcp >= lo) & (hcp <= hi)).sum()) for lo, hi in bins]
    expected = np.array(law, float) / plan.deals_total * len(owners)
    assert chisquare(observed, expected).pvalue > 1e-4


def test_an_exact_zero_is_impossible_to_deal():
    """North's broad shape excludes the one pattern its other conjunct allows."""
    plan = _complemented("hcp(north) >= 12 && !shape(north, 4432) && shape(north, 4432 + 4333)"
                         " && !shape(north, 4333)")
    assert plan.counts_exactly and plan.deals_total == 0 and not plan.possible and plan.summary().deals == 0
    with pytest.raises(Impossible):
        next(plan.deals(1, seed="none"))


@pytest.mark.memory_mb(1500)
def test_the_library_s_overcall_counts_exactly_through_the_cli():
    """It was dealt by rejection on South and West's points (30.4% kept, the
    count estimated at 10.276% of all deals); now 64.3% kept, the count exact."""
    done = run("count", str(OVERCALL))
    assert done.returncode == 0, done.err
    fields = dict(line.split(":", 1) for line in done.out.splitlines())
    deals = int(fields["deals"].replace(",", ""))
    assert abs(deals / D - 0.10276) < 5 * 0.0007  # the old estimate: 200,000 pilot deals of 30.4% kept
    assert "broad shapes of east, south" in fields["method"] and fields["acceptance"].endswith("of listed deals (exact)")
