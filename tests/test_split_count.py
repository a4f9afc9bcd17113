"""The exact count of a plan dealt by rejection, from its coin split listed one class at a time
(``truedeal.split_count``).

tests/scripts/59, three coin cards that pick the 12-14 opener, is exact by a
split into 64 placements.  With the split's bound on entries set to 1 its
plan keeps a relaxed listing and deals by rejection; a count then lists the
classes of placements one at a time.  Its count must be the split's, which
tests/test_card_split.py checks against a closed formula, and its pilot's
acceptance must agree with the exact share it gives."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

from cli_runner import run
from truedeal import split_count
from truedeal.constraints import card_owner
from truedeal.constraints.dealer import load_program
from truedeal.engine import Plan

SCRIPTS = Path(__file__).parent / "scripts"
#: tests/scripts/59's deals (docs/dealer-scripts.md, checked against a closed formula in test_card_split.py).
LADDER_DEALS = 11_069_334_235_892_701_689_746_918_400


def _relaxed_ladder(monkeypatch) -> tuple[Plan, int]:
    """Script 59 planned with no room for its split, and its exact split count."""
    program = load_program(SCRIPTS / "59_levelling_ladder.dlr")
    exact = Plan.build(program)
    assert exact.exact and exact.union is not None
    monkeypatch.setattr(card_owner, "MAX_SPLIT_ENTRIES", 1)
    return Plan.build_to_count(program), exact.deals_total


def test_a_count_lists_the_classes_one_at_a_time_and_finds_the_splits_deals(monkeypatch):
    plan, split_deals = _relaxed_ladder(monkeypatch)
    assert not plan.exact and plan.relaxed  # it deals by rejection
    assert plan.split_counted is not None
    assert plan.split_counted.deals == split_deals == LADDER_DEALS
    # merged where the free seats share coins differently: fewer classes than a plan deals from
    dealt_from = split_count.card_classes.placement_classes(plan.program, plan.split_counted.cards)
    assert (plan.split_counted.placements, len(dealt_from)) == (64, 26)
    assert plan.split_counted.classes == 13
    summary = plan.summary()
    assert summary.deals == LADDER_DEALS and summary.rejection is None
    assert summary.method.startswith("exact count: split by who holds")
    share = Fraction(LADDER_DEALS, plan.listing.deals)
    assert f"keeps exactly {float(share):.3%}" in summary.method


def test_classes_merged_for_a_count_count_what_the_classes_a_plan_deals_from_count():
    """tests/scripts/64 (four coins, West and East read only through them):
    the count's classes, with weights for the free seats' shares, against
    the classes of equal count a plan deals from, listed one by one."""
    program = load_program(SCRIPTS / "64_leveled_1nt_opener.dlr")
    plan = Plan.build(program)
    program = plan.source_program()  # its notrump points as one feature
    cards = card_owner.split_cards(program, 6)
    merged = split_count.card_classes.counting_classes(program, cards)
    plain = split_count.card_classes.placement_classes(program, cards)
    assert len(merged) < len(plain)
    by_merged = sum(Plan._exact_part(p).deals_total * w for p, w, _ in merged)
    by_plain = sum(Plan._exact_part(c.program).deals_total * c.size for c in plain)
    assert by_merged == by_plain == plan.deals_total


def test_the_pilots_acceptance_agrees_with_the_exact_share(monkeypatch):
    """The pilot measured what rejection keeps on 200,000 seeded draws; the
    split count gives it exactly.  Four standard errors apart at most."""
    plan, _ = _relaxed_ladder(monkeypatch)
    assert plan.split_counted is not None
    share = plan.split_counted.deals / plan.listing.deals
    assert plan.acceptance is not None
    se = math.sqrt(share * (1 - share) / plan.pilot_draws)
    assert abs(plan.acceptance - share) < 4 * se, (plan.acceptance, share, se)


def test_past_its_bound_a_count_stays_an_estimate(monkeypatch):
    monkeypatch.setattr(split_count, "MAX_COUNT_WORK", 1)
    plan, _ = _relaxed_ladder(monkeypatch)
    assert plan.split_counted is None
    summary = plan.summary()
    assert summary.deals is None and summary.rejection is not None


def test_a_plan_that_deals_by_rejection_for_rnd_is_not_counted_by_classes():
    """A coin beside ``rnd``: the plan checks ``rnd`` by rejection, and no
    count by classes is tried (``rnd`` reads no card, no permutation keeps it)."""
    program = load_program("condition hcp(north) >= 12 && (hascard(west, 2C) ? rnd(2) == 0 : 1)")
    assert card_owner.split_cards(program)
    plan = Plan.build_to_count(program)
    assert not plan.exact and plan.split_counted is None


def test_count_prints_the_exact_count_of_a_leveled_script_that_deals_by_rejection():
    """tests/scripts/66: the split of its three coins passes what a plan keeps
    to deal from, so it deals by rejection; ``truedeal count`` lists the
    classes one at a time, prints the exact count and the exact share kept,
    and no cases (not counted); the pilot's acceptance agrees with that share."""
    path = SCRIPTS / "66_leveled_2nt_raise.dlr"
    done = run("count", str(path))
    assert done.returncode == 0, done.err
    lines = dict(line.split(":", 1) for line in done.out.splitlines())
    assert "cases" not in lines and "about" not in lines["deals"]
    assert lines["method"].strip().startswith("exact count: split by who holds C2, C3, D3, 64 placements in 27 classes")
    # counted on 2026-11-27 by the 48 classes a plan deals from (before free seats' shares merged them)
    assert int(lines["deals"].replace(",", "")) == 44_751_400_082_126_518_526_270_616
    plan = Plan.build_to_count(load_program(path))
    assert plan.split_counted is not None and int(lines["deals"].replace(",", "")) == plan.split_counted.deals
    share = plan.split_counted.deals / plan.listing.deals
    se = math.sqrt(share * (1 - share) / plan.pilot_draws)
    assert plan.acceptance is not None and abs(plan.acceptance - share) < 4 * se


def test_a_count_by_classes_reports_its_progress_class_by_class(monkeypatch):
    heard: list[tuple[int, int]] = []
    monkeypatch.setattr(card_owner, "MAX_SPLIT_ENTRIES", 1)
    plan = Plan.build_to_count(load_program(SCRIPTS / "59_levelling_ladder.dlr"), lambda done, total: heard.append((done, total)))
    assert plan.split_counted is not None
    classes = plan.split_counted.classes
    assert heard[-classes:] == [(k, classes) for k in range(1, classes + 1)]
