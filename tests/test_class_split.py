"""A split by coin cards too large to keep whole, listed one merged class at a
time (``truedeal.class_split``): its exact count and its exact draws.

tests/scripts/59, three coin cards that pick the 12-14 opener, is exact by a
split into 64 placements (tests/test_card_split.py checks it against a
closed formula).  With the split's bound on entries set to 1 its plan lists
13 merged classes one at a time: placements that differ only in how East
and West, read through the coins alone, share them fall in one class.  A
draw deals from the class's first placement, moves the coins, and deals
East's and West's other cards again.  Its count must be the formula's, and
its deals must follow the formula's law of (coins, opener's points) and
deal East and West as the plain split does."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chi2_contingency, chisquare

from cli_runner import run
from test_card_split import COINS, LADDER, _ladder_deals, _ladder_opener, _points
from truedeal import class_split
from truedeal.cards import HCP_OF_RANK
from truedeal.class_split import ClassSplit
from truedeal.constraints import card_classes, card_owner
from truedeal.constraints.dealer import load_program
from truedeal.constraints.evaluate import evaluate_cond
from truedeal.engine import Plan
from truedeal.explain import explanation

SCRIPTS = Path(__file__).parent / "scripts"
#: tests/scripts/59's deals (docs/dealer-scripts.md, checked against a closed formula in test_card_split.py).
LADDER_DEALS = 11_069_334_235_892_701_689_746_918_400
N, E, S, W = range(4)
KEPT_ENTRIES = card_owner.MAX_SPLIT_ENTRIES


@pytest.fixture
def by_classes(monkeypatch) -> Plan:
    """Script 59 planned with no room to keep its split whole."""
    monkeypatch.setattr(card_owner, "MAX_SPLIT_ENTRIES", 1)
    plan = Plan.build(load_program(LADDER))
    assert isinstance(plan.union, ClassSplit)
    return plan


def test_the_classes_count_the_formulas_deals_without_cases(by_classes):
    split = by_classes.union
    assert by_classes.exact and by_classes.deals_total == LADDER_DEALS
    assert (split.placements, len(split.classes)) == (64, 13)
    assert len(card_classes.placement_classes(by_classes.program, split.cards)) == 26  # what a kept split deals from
    summary = by_classes.summary()
    assert summary.deals == LADDER_DEALS and summary.rejection is None and summary.cases is None
    assert summary.method.startswith("exact: split by who holds C2, D2, H3, 64 placements in 13 classes listed one at a time")
    explained = explanation(by_classes)
    assert explained["cases"] is None and explained["exact"]
    assert explained["listings"].startswith("13 classes of 64 placements, listed one at a time; 13 listings")


def test_draws_follow_the_exact_law_of_coins_and_opener_points(by_classes):
    """12,000 seeded deals against the formula's law over 64 placements x 3 point counts."""
    owners = np.concatenate(list(by_classes.deals(12_000, seed="classes")))
    assert evaluate_cond(owners, by_classes.program.condition).all()
    placed = [tuple(int(x) for x in row[list(COINS)]) for row in owners]
    opener = [_ladder_opener(p) for p in placed]
    cells = [(p, v) for p in itertools.product(range(4), repeat=3) for v in (12, 13, 14)]
    seen = {cell: 0 for cell in cells}
    for row, p, o in zip(owners, placed, opener):
        seen[p, _points(row, o)] += 1
    weights = np.array([_ladder_deals(p, v) for p, v in cells], dtype=float)
    assert chisquare([seen[c] for c in cells], weights / weights.sum() * len(owners)).pvalue > 1e-4


def _hcp(owners: np.ndarray, seat: int) -> np.ndarray:
    return ((owners[:, :16] == seat) * np.repeat(HCP_OF_RANK, 4)).sum(axis=1)


@pytest.mark.memory_mb(600)  # two plans of the ladder: 64 listings kept whole beside 13 listed one at a time
def test_east_and_west_are_dealt_as_the_plain_split_deals_them(by_classes, monkeypatch):
    """The free seats' cards are dealt again after the coins move: West's
    points, and whether East holds the spade deuce (no coin), against the
    plain split's deals (two-sample chi-square, 10,000 deals each)."""
    monkeypatch.setattr(card_owner, "MAX_SPLIT_ENTRIES", KEPT_ENTRIES)
    plain = Plan.build(load_program(LADDER))
    assert plain.union is not None and not isinstance(plain.union, ClassSplit)
    ours, theirs = (np.concatenate(list(p.deals(10_000, seed="free seats"))) for p in (by_classes, plain))
    west = [np.bincount(np.minimum(_hcp(d, W), 16), minlength=17) for d in (ours, theirs)]
    table = np.array(west)[:, np.array(west).sum(axis=0) > 0]
    assert chi2_contingency(table).pvalue > 1e-4
    deuce = [np.bincount(d[:, 51] == E, minlength=2) for d in (ours, theirs)]
    assert chi2_contingency(np.array(deuce)).pvalue > 1e-4


def test_seeded_deals_do_not_depend_on_what_is_kept_or_drawn_together(by_classes, monkeypatch):
    together = np.concatenate(list(by_classes.deals(3 * 4096 + 5, seed="kept")))
    one_by_one = np.concatenate([by_classes.chunk(i, "kept", size) for i, size in ((0, 4096), (1, 4096), (2, 4096), (3, 5))])
    assert (together == one_by_one).all()
    monkeypatch.setattr(class_split, "MAX_KEPT_LISTINGS", 0)
    relisted = Plan.build(load_program(LADDER))
    assert isinstance(relisted.union, ClassSplit) and sum(p is None for p in relisted.union.plans) == 12
    assert (np.concatenate(list(relisted.deals(3 * 4096 + 5, seed="kept"))) == together).all()
    listed: list[int] = []
    again = ClassSplit._listed_again
    monkeypatch.setattr(ClassSplit, "_listed_again", lambda self, i: listed.append(i) or again(self, i))
    assert (relisted.chunk(0, "kept", 3) == together[:3]).all()
    assert len(listed) <= 3  # only the classes its three deals picked (of 12 listed again)


def test_merged_classes_count_what_the_classes_a_kept_split_deals_from_count():
    """tests/scripts/64 (four coins, West and East read only through them):
    the merged classes, with weights for the free seats' shares, against
    the classes of equal count, listed one by one."""
    program = load_program(SCRIPTS / "64_leveled_1nt_opener.dlr")
    plan = Plan.build(program)
    program = plan.source_program()  # its notrump points as one feature
    cards = card_owner.split_cards(program, 6)
    merged = card_classes.merged_classes(program, cards)
    plain = card_classes.placement_classes(program, cards)
    assert len(merged) < len(plain)
    by_merged = sum(Plan._exact_part(c.program).deals_total * c.weight for c in merged)
    by_plain = sum(Plan._exact_part(c.program).deals_total * c.size for c in plain)
    assert by_merged == by_plain == plan.deals_total


def test_past_its_bound_a_split_is_left_to_rejection_and_estimated(monkeypatch):
    monkeypatch.setattr(card_owner, "MAX_SPLIT_ENTRIES", 1)
    monkeypatch.setattr(class_split, "MAX_CLASS_WORK", 1)
    plan = Plan.build(load_program(LADDER))
    assert not plan.exact and plan.union is None
    summary = plan.summary()
    assert summary.deals is None and summary.rejection is not None


def test_a_coin_beside_rnd_is_not_split_by_classes():
    """``rnd`` reads no card, and no permutation keeps it: rejection checks it."""
    program = load_program("condition hcp(north) >= 12 && (hascard(west, 2C) ? rnd(2) == 0 : 1)")
    assert card_owner.split_cards(program)
    assert class_split.class_split(program, Plan._exact_part) is None
    assert not Plan.build(program).exact


@pytest.mark.memory_mb(800)  # a count's plan, then a draw's: listings (220 MB) and samplers (185 MB) kept, in process
def test_a_leveled_2nt_raise_counts_and_deals_exactly_from_the_cli():
    """tests/scripts/66: its split passes what a plan keeps whole.  ``count``
    prints the exact count (first counted on 2026-11-27 by the 48 classes a
    kept split would deal from) and no cases; ``generate`` deals from it
    with no rejection."""
    path = SCRIPTS / "66_leveled_2nt_raise.dlr"
    done = run("count", str(path))
    assert done.returncode == 0, done.err
    lines = dict(line.split(":", 1) for line in done.out.splitlines())
    assert "cases" not in lines and "about" not in lines["deals"]
    assert lines["method"].strip().startswith("exact: split by who holds C2, C3, D3, 64 placements in 27 classes")
    assert int(lines["deals"].replace(",", "")) == 44_751_400_082_126_518_526_270_616
    dealt = run("generate", str(path), "-n", "3", "--seed", "raise", "--format", "pbn")
    assert dealt.returncode == 0 and dealt.out.count("[Deal ") == 3 and "acceptance" not in dealt.err


def test_a_split_by_classes_reports_its_progress_class_by_class(monkeypatch):
    heard: list[tuple[int, int]] = []
    monkeypatch.setattr(card_owner, "MAX_SPLIT_ENTRIES", 1)
    plan = Plan.build(load_program(LADDER), lambda done, total: heard.append((done, total)))
    assert isinstance(plan.union, ClassSplit)
    assert heard[-13:] == [(k, 13) for k in range(1, 14)]
