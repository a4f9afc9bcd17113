"""A script's ``rnd`` weighed exactly, not rejected (truedeal.constraints.rnd_levels, truedeal.weighted).

The practice library levels its scripts with ``rnd(1000)``: a deal of a
common kind is kept only some of the time.  Each class of ``rnd``'s
numbers makes the condition a condition of the deal alone, listed exactly;
a draw picks a class by its weight times its deals, so every deal comes as
often as the script keeps it and none is drawn in vain.  Expected values
come from brute force over every deal of a small predealt space, with
``rnd`` replaced by each of its numbers as a literal, and from exact counts
of the classes' conditions written out by hand."""

from __future__ import annotations

import functools
import json
from fractions import Fraction
from itertools import combinations
from math import sqrt

import numpy as np
import pytest

from cli_runner import ROOT, run
from test_opaque_support import CALM, NT_S, _keep_no_sampler, _samplers_made
from truedeal.analysis.chisquare import chi_square
from truedeal.cards import D, card
from truedeal.constraints import rnd_levels
from truedeal.constraints.dealer import load_program, parse_program
from truedeal.constraints.describe import cond
from truedeal.constraints.evaluate import evaluate_cond, evaluate_num
from truedeal.engine import Plan
from truedeal.relaxation import HONOURS, KEEP, WHOLE, Relaxation

#: North and East hold the majors; South and West split the minors, their
#: ten honours (T-A of diamonds and clubs) free: 252 deals in all.
PREDEAL = ("predeal north SAKQJT98765432\npredeal east HAKQJT98765432\n"
           "predeal south D2345, C2345\npredeal west D6789, C6789\n")
FREE = [card(rank, suit) for suit in (2, 3) for rank in range(5)]
NT = "shape({s}, any 4333 + any 4432 + any 5332) and hcp({s}) >= 15 and hcp({s}) <= 17"
#: Three kinds, the rarer kept more often: South's 12+ three times in ten,
#: South's six diamonds seven in ten, West's 17+ always.
CONDITION = "(hcp(south) >= 12 and {r} < 3) or (diamonds(south) >= 6 and {r} < 7) or hcp(west) >= 17"


@functools.cache  # (read-only: every test that reads it shares one)
def _all_deals() -> np.ndarray:
    """The 252 deals of :data:`PREDEAL`, as owners rows."""
    base = np.zeros(52, np.uint8)
    base[[card(rank, 0) for rank in range(13)]] = 0
    base[[card(rank, 1) for rank in range(13)]] = 1
    for suit in (2, 3):
        base[[card(rank, suit) for rank in range(9, 13)]] = 2  # the 2-5
        base[[card(rank, suit) for rank in range(5, 9)]] = 3  # the 6-9
    rows = []
    for south in combinations(FREE, 5):
        row = base.copy()
        row[FREE] = 3
        row[list(south)] = 2
        rows.append(row)
    deals = np.array(rows)
    deals.flags.writeable = False
    return deals


@functools.cache
def _weights() -> tuple[Fraction, ...]:
    """Each deal's chance of being kept (in :func:`_all_deals`' order): ``rnd(10)``
    replaced by each of its ten numbers."""
    kept = sum(evaluate_cond(_all_deals(), parse_program("condition " + CONDITION.format(r=r)).condition).astype(int)
               for r in range(10))
    return tuple(Fraction(int(k), 10) for k in kept)


def _law() -> list[Fraction]:
    """Each deal's share of the weighed deals: its chance over the sum of all (summed once, not once a deal)."""
    total = sum(_weights())
    return [w / total for w in _weights()]


def _owners_code(owners: np.ndarray) -> np.ndarray:
    """Who holds each free card of each deal, as one number (base 4, a digit a card)."""
    return owners[:, FREE].astype(np.int64) @ 4 ** np.arange(len(FREE), dtype=np.int64)


def _observed(drawn: np.ndarray) -> np.ndarray:
    """How many of ``drawn`` fall on each of :func:`_all_deals`, matched by
    who holds the free cards (a deal matching none of them fails the test)."""
    index = np.full(4 ** len(FREE), -1, np.int64)
    index[_owners_code(_all_deals())] = np.arange(len(_all_deals()))
    found = index[_owners_code(drawn)]
    assert (found >= 0).all(), "a deal drawn is none of the predealt deals"
    return np.bincount(found, minlength=len(_all_deals()))


def test_the_classes_of_rnd_are_its_numbers_that_decide_the_comparisons_alike():
    """``roll < 13`` and ``roll < 200`` cut ``rnd(1000)`` into 13, 187 and 800
    numbers (the library's leveling arithmetic on it changes nothing); a
    comparison of ``rnd`` with a feature, or another opaque number, has no classes."""
    script = ("roll = (rnd(1000) % 1000 + 1000) % 1000\n"
              "condition (hcp(north) >= 15 and roll < 13) or (hcp(south) >= 15 and roll < 200) or hcp(east) > 20")
    found = rnd_levels.levels(parse_program(script))
    assert found is not None and found.points == 1000
    got = {cond(p.program.condition): p.weight for p in found.parts}
    assert got == {"hcp(north) >= 15 || hcp(south) >= 15 || hcp(east) > 20": 13,
                   "hcp(south) >= 15 || hcp(east) > 20": 187, "hcp(east) > 20": 800}
    assert [p.support for p in found.parts] == [True, False, False]  # the widest first: it is the support
    assert rnd_levels.levels(parse_program("condition rnd(10) < hcp(north)")) is None
    assert rnd_levels.levels(parse_program("condition hcp(north) > 10")) is None
    # two calls are two numbers: of 4 x 4, the second's 0 keeps every deal
    # (4), else the first's 1-3 keep North's 11+ (3 x 3), and the rest none
    two = rnd_levels.levels(parse_program("condition (hcp(north) > 10 and rnd(4) > 0) or rnd(4) == 0"))
    assert two is not None and two.points == 16
    summed: dict[str, int] = {}
    for p in two.parts:  # (two classes may give the same condition)
        summed[cond(p.program.condition)] = summed.get(cond(p.program.condition), 0) + p.weight
    assert summed == {"true": 4, "hcp(north) > 10": 9}


def test_the_expected_count_and_the_law_are_the_brute_force_ones(always_weighing):
    """Over the 252 deals: the plan weighs ``rnd`` (no rejection), its
    expected count is the sum of the deals' chances, exactly, and 60,000
    seeded deals fall on the deals in proportion to their chances
    (chi-square against the exact law)."""
    weights = _weights()
    plan = Plan.build(parse_program(PREDEAL + "r = rnd(10)\ncondition " + CONDITION.format(r="r")))
    assert plan.weighted and not plan.exact and plan.keeps_all
    summary = plan.summary()
    assert Fraction(summary.deals_expected) == sum(weights) and summary.deals is None
    assert summary.method.startswith("exact: rnd() weighed, not rejected: 3 exact listings")
    drawn = np.concatenate(list(plan.deals(60_000, seed="weighed")))
    test = chi_square("deals", list(range(len(weights))), _observed(drawn), _law())
    assert test.p_value > 1e-4, test


@pytest.mark.memory_mb(700)
def test_a_leveled_either_or_weighs_the_coin_in_two_listings(always_weighing):
    """The library's form (``roll = rnd(1000)``, each kind kept when ``roll <
    keep``): a 1NT opener in South always, in North alone 13 times in 1,000.
    Its expected count is South's openers plus 13/1000 of North's alone,
    from exact counts; its deals fit the either/or, and North's alone come
    in that proportion, within 4 standard errors."""
    north, south = NT.format(s="north"), NT.format(s="south")
    script = (f"roll = (rnd(1000) % 1000 + 1000) % 1000\nntN = {north}\nntS = {south}\n"
              "condition ntS or (ntN and roll < 13)")
    plan = Plan.build(parse_program(script))
    assert plan.weighted
    either = Plan.build(parse_program(f"condition ({north}) or ({south})")).deals_total
    south_deals = Plan.build(parse_program(f"condition {south}")).deals_total
    expected = south_deals + Fraction(13, 1000) * (either - south_deals)
    assert Fraction(plan.summary().deals_expected) == expected
    assert plan.summary().branches == [either, south_deals]
    owners = np.concatenate(list(plan.deals(20_000, seed="leveled")))
    assert evaluate_cond(owners, parse_program(f"condition ({north}) or ({south})").condition).all()
    alone = int((~evaluate_cond(owners, parse_program(f"condition {south}").condition)).sum())
    p = float(Fraction(13, 1000) * (either - south_deals) / expected)
    assert abs(alone - len(owners) * p) < 4 * np.sqrt(len(owners) * p * (1 - p))


def test_count_prints_the_expected_count_and_generate_says_nothing_is_rejected(always_weighing):
    """``count`` prints the expected count exactly, its JSON too, with the
    exact probability; ``generate`` notes the weighing, with no acceptance."""
    script = PREDEAL + "r = rnd(10)\ncondition " + CONDITION.format(r="r")
    expected = sum(_weights())
    ran = run("count", script)
    assert ran.returncode == 0, ran.err
    assert expected == 160  # (of the 252 deals' 2,520 chances in ten, 1,600)
    assert "deals:        160 expected: rnd() keeps each deal with its chance" in ran.out
    assert "classes:      " in ran.out and "method:       exact: rnd() weighed" in ran.out
    data = json.loads(run("count", "--json", script).out)
    assert Fraction(data["deals_expected"]) == expected and data["deals"] is None
    assert Fraction(data["probability_exact"]) == expected / D
    assert json.loads(run("count", "--exact", "--json", script).out)["deals_expected"] == "160"  # nothing estimated
    dealt = run("generate", script, "-n", "5", "--seed", "1", "--format", "numbers")
    assert dealt.returncode == 0 and len(dealt.out.split()) == 5
    assert dealt.err.startswith("truedeal: note: rnd() weighed, not rejected") and "acceptance" not in dealt.err


def test_count_exact_weighs_rnd_where_generate_rejects_it():
    """Rejection keeps 69% of this script's listed deals, so its plan rejects
    ``rnd`` and ``count`` estimates; ``count --exact`` never estimates, so it
    lists the classes: the brute-force expected count, exactly."""
    script = PREDEAL + "r = rnd(10)\ncondition " + CONDITION.format(r="r")
    assert not Plan.build(parse_program(script)).weighted
    estimated = json.loads(run("count", "--json", script).out)
    assert "deals_expected" not in estimated and estimated["deals_estimate"] is not None
    exact = json.loads(run("count", "--exact", "--json", script).out)
    assert Fraction(exact["deals_expected"]) == sum(_weights()) and exact.get("rejection") is None


def test_answer_and_distribution_are_exact_under_the_weighing(always_weighing):
    """``average``, ``frequency`` and ``distribution`` of a script whose
    ``rnd`` is weighed are exact (before: sampled): the mean of South's HCP
    and the expected deals of each diamond length are the brute-force ones,
    each deal counted with its chance."""
    owners = _all_deals()
    weights = _weights()
    hcp = evaluate_num(owners, parse_program("condition hcp(south) > 0").condition.left)  # type: ignore[union-attr]
    length = (owners[:, [card(rank, 2) for rank in range(13)]] == 2).sum(axis=1)
    script = (PREDEAL + "r = rnd(10)\ncondition " + CONDITION.format(r="r")
              + '\naction average "hcp" hcp(south), frequency "diamonds" (diamonds(south), 5, 8)\n')
    answered = json.loads(run("answer", "--json", script).out)
    assert answered["deals"] == 160 and answered["expected"] is True
    average, frequency = answered["actions"]
    assert average["exact"] and Fraction(average["mean_exact"]) == sum(w * int(h) for w, h in zip(weights, hcp)) / 160
    want = {v: sum((w for w, n in zip(weights, length) if n == v), Fraction(0)) for v in range(4, 10)}
    rows = {row["value"]: Fraction(str(row["deals"])) for row in frequency["rows"]}
    assert frequency["exact"] and rows == {"low": want[4], **{v: want[v] for v in range(5, 9)}, "high": want[9]}
    law = json.loads(run("distribution", script, "--of", "diamonds(south)", "--json").out)
    assert law["exact"] and law["expected"] and {r["value"]: Fraction(str(r["deals"])) for r in law["distribution"]} == \
        {v: n for v, n in want.items() if n}


def test_classes_listed_with_a_seat_relaxed_keep_the_law_and_reject_only_that_seat():
    """Where no exact plan lists the classes, each is listed with some seats
    relaxed and a draw is a pass of rejection over the picks (a rejected
    pick is picked again, never its class redrawn): with South's honours
    relaxed, 60,000 seeded deals still follow the brute-force law
    (chi-square), the share kept is the brute-force one within 4 standard
    errors, and the method names South's honours alone."""
    weights = _weights()
    program = parse_program(PREDEAL + "r = rnd(10)\ncondition " + CONDITION.format(r="r"))
    plan = Plan._build_weighted_relaxed(None, program, Relaxation((KEEP, KEEP, HONOURS, KEEP)), None, [], 0.0)
    assert plan is not None and plan.weighted and not plan.union.exact
    assert not plan.counts_exactly  # count --exact refuses it (it printed the estimate until 2026-11-28)
    summary = plan.summary()
    assert summary.method.endswith("; rejection for the honour conditions of south") and summary.rejection is not None
    listed = plan.union.deals  # each class's listed deals, weighed: what the picks draw from
    share = float(sum(weights) / listed)
    assert abs(summary.rejection.acceptance_rate - share) < 4 * sqrt(share * (1 - share) / plan.union.pilot_draws)
    drawn = np.concatenate(list(plan.deals(60_000, seed="relaxed")))
    test = chi_square("deals", list(range(len(weights))), _observed(drawn), _law())
    assert test.p_value > 1e-4, test


def test_a_plan_that_rejects_the_leveled_seat_gives_way_to_one_that_weighs_it(monkeypatch):
    """A relaxation that rejects South, the seat that ``rnd`` levels, cannot
    weigh it: every class lists West's part alone.  Keeping South alone, its
    classes list what each keeps, and West is rejected: that plan's pilot
    keeps more, so it is taken, and its 60,000 seeded deals follow the
    brute-force law (here every plan is tried: the rule tries them only
    below WEIGH_SEAT_BELOW)."""
    from truedeal import engine

    monkeypatch.setattr(engine, "WEIGH_SEAT_BELOW", 1.01)
    condition = "((hcp(south) >= 12 and {r} < 3) or (diamonds(south) >= 6 and {r} < 7)) and hcp(west) >= 6"
    program = parse_program(PREDEAL + "r = rnd(10)\ncondition " + condition.format(r="r"))
    poor = Plan._build_weighted_relaxed(None, program, Relaxation((KEEP, KEEP, WHOLE, KEEP)), None, [], 0.0)
    assert poor is not None and poor.union.exact is False
    better = Plan._weighed_on_one_seat(poor, None, program, None, 0.0)
    assert better is not poor and (better.acceptance or 0) > (poor.acceptance or 0)
    assert better.summary().method.endswith("rejection for the conditions of west")
    owners = _all_deals()
    kept = sum(evaluate_cond(owners, parse_program("condition " + condition.format(r=r)).condition).astype(int)
               for r in range(10))
    drawn = np.concatenate(list(better.deals(60_000, seed="one seat weighed")))
    test = chi_square("deals", list(range(len(owners))), _observed(drawn), [k / kept.sum() for k in kept])
    assert test.p_value > 1e-4, test


@pytest.mark.parametrize("script", ["rnd(10) > 20", "rnd(1) > 0", "rnd(10) > 20 && hcp(north) > 10"])
def test_a_script_whose_rnd_keeps_nothing_counts_zero_and_deals_none(script, monkeypatch):
    """Every class of ``rnd``'s numbers folds to false: 0 deals expected, and
    ``generate`` says no deal satisfies (an IndexError until 2026-11-28)."""
    from truedeal import engine

    # The pilot keeps none of its deals, so it ran on to LONG_PILOT_DRAWS (2,000,000
    # deals, a second a command) before the plan weighed rnd's classes: a pilot of a
    # hundredth keeps none either, and takes the same path to the same plan and output.
    monkeypatch.setattr(engine, "PILOT_DRAWS", 2_000)
    monkeypatch.setattr(engine, "LONG_PILOT_DRAWS", 20_000)
    counted = json.loads(run("count", script, "--json").out)
    assert counted["probability_exact"] == "0/1" and counted["possible"] is False
    dealt = run("generate", script, "-n", "2")
    assert dealt.returncode == 2 and dealt.out == "" and dealt.err == "truedeal: error: no deal satisfies this spec (it counts 0 deals)\n"


def test_a_one_seat_try_is_skipped_where_its_classes_list_more_than_the_plan(monkeypatch):
    """A try keeps at most the plan's acceptance times ``points * listed``
    over ``sum_c weights[c] listed(c)``.  Here the plan lists West's 14+
    (18 deals) and rejects South; South's classes list 1,600, weighed:
    the try would keep 0.1125 times as much (brute force).  The estimate
    from deals of the pack agrees within 5%, while the share of the plan's
    own deals that the classes list bounds it at about 1.5; so with the
    threshold between the two, the try is skipped, and below both it is
    made, and keeps what the estimate said.  (Keeping West alone, the
    other try, gains 10/7: three classes of ten list nothing.)"""
    from truedeal import engine
    from truedeal.relaxation import relax

    condition = "((hcp(south) >= 12 and {r} < 3) or (diamonds(south) >= 6 and {r} < 7)) and hcp(west) >= 14"
    program = parse_program(PREDEAL + "r = rnd(10)\ncondition " + condition.format(r="r"))
    west_alone = Relaxation((KEEP, KEEP, WHOLE, KEEP))
    comp = engine.compile_program(relax(program, west_alone))  # West listed, South rejected
    plan = Plan(None, engine._any_listing(comp, None, []), 0.0, program=program, listed=comp,
                relaxed=west_alone.describe())
    plan._measure_acceptance("South rejected")
    owners = _all_deals()
    south, diamonds, west = (evaluate_cond(owners, load_program("condition " + c).condition).sum()
                             for c in ("hcp(south) >= 12 or diamonds(south) >= 6", "diamonds(south) >= 6", "hcp(west) >= 14"))
    assert (south, diamonds, west) == (232, 226, 18)
    gain = Fraction(10 * west, 3 * south + 4 * diamonds)
    tried: dict[Relaxation, Plan | None] = {}  # each relaxation tried, and the plan its try made
    build = Plan._build_weighted_relaxed.__func__  # type: ignore[attr-defined]

    def recorded(cls, *args, **kwargs):
        tried[args[2]] = made = build(cls, *args, **kwargs)
        return made

    monkeypatch.setattr(Plan, "_build_weighted_relaxed", classmethod(recorded))
    monkeypatch.setattr(engine, "WEIGH_SEAT_BELOW", 1.01)
    monkeypatch.setattr(engine, "WEIGH_SEAT_GAIN", 1.4)
    south_alone = Relaxation((KEEP, KEEP, KEEP, WHOLE))
    found = rnd_levels.levels(program)
    estimate = plan._one_seat_gain(plan._listed_draw(20_000, engine.Rng(engine.SeededBits("truedeal/pilot"))),
                                   engine._pack_deals(engine.PACK_DRAWS, program.predeal), found, south_alone)
    assert abs(estimate / float(gain) - 1) < 0.05
    Plan._weighed_on_one_seat(plan, None, program, None, 0.0)
    assert south_alone not in tried
    monkeypatch.setattr(engine, "WEIGH_SEAT_GAIN", 0.05)
    Plan._weighed_on_one_seat(plan, None, program, None, 0.0)
    assert south_alone in tried
    made = tried[south_alone]  # (the try's own plan: built with the same arguments as a plan built alone)
    assert made is not None and abs(made.acceptance / plan.acceptance / float(gain) - 1) < 0.05


@pytest.mark.memory_mb(1000)  # two classes, each a split within a split (920 MB in process for one)
def test_classes_that_are_splits_draw_their_chunks_together(monkeypatch, always_weighing):
    """Calm opponents beside a 1NT opener need a split on East's patterns
    within which West's are split; with a coin on top each class of the coin
    is such a split.  Chunks drawn together are the chunks drawn one by one,
    each class's listings readied once for all of them, and the plan says it
    readies them again (so that ``deals`` hands it 256 chunks a call, not 64)."""
    script = (f"condition {NT_S} and hcp(north) >= 8 and (hearts(north) >= 4 or spades(north) >= 4)"
              f" and ({CALM.format(s='east')}) and ({CALM.format(s='west')}) and (hearts(north) >= 5 or rnd(10) < 3)")
    plan = Plan.build(parse_program(script))
    assert plan.weighted and plan.union.exact and len(plan.union.plans) == 2
    for branch in plan.union.plans:  # the classes' splits keep none; the classes themselves are kept
        _keep_no_sampler(branch)
    assert plan.union.samplers_kept == {0, 1} and plan.readies_again and plan.draws_together
    wanted = [(k, 1_000) for k in range(4)]
    made = _samplers_made(monkeypatch)
    together = plan.chunks(wanted, "together")
    assert len(made) == 8  # each class's four listings, once each
    for owners, (k, size) in zip(together, wanted):
        assert (owners == plan.chunk(k, "together", size)).all()


@pytest.mark.memory_mb(1300)  # three plans, two of them either/ors (1,070 MB in process)
def test_rnd_is_weighed_where_its_classes_cost_little_or_rejection_keeps_few():
    """A class listed again costs little when the rest is one factored
    listing (the library's 1NT opener: 0.1-2 s), and may cost as much as
    the whole plan when it is a split or a paired listing (Benjamin 2D: 29 s
    -> 94 s): so a leveled 1NT opener that rejection keeps a third of is
    weighed (one with a half or more is not: a class's listing may draw
    slower than the support's), an either/or of two
    openers that rejection keeps half of is not (its support listed, rnd
    rejected), and the same either/or with its common kind kept 1 time in
    1,000 is weighed (rejection would keep under 5%)."""
    from truedeal import engine

    leveled = Plan.build(load_program(ROOT / "tests" / "scripts" / "69_leveled_by_rnd.dlr"))  # rejection would keep 33%
    assert leveled.weighted and leveled.union.exact
    either = "roll = rnd(1000)\nntN = " + NT.format(s="north") + "\nntS = " + NT.format(s="south") + "\ncondition "
    half = Plan.build(parse_program(either + "ntS or (ntN and roll < 13)"))
    assert not half.weighted and half.summary().method.startswith("exact listing (an either/or of 2")
    assert (half.acceptance or 0) > engine.WEIGH_BELOW
    few = Plan.build(parse_program(either + "(ntS and spades(south) == 5 and hcp(north) >= 10) or (ntN and roll < 1)"))
    assert few.weighted and few.union.exact
