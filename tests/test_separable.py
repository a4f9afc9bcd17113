"""Sums of per-suit pieces read as ``table`` features (``truedeal.constraints.separable``).

The rewritten numbers are checked against the evaluator on random deals,
their ranges against brute force over patterns, the listings they give
against the plain listings of the same scripts, and the leveled 1NT opener
of tests/scripts/64 (which they make exact) against an independent count:
a per-suit enumeration of South's hands and a sum over the coins' owners."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction
from functools import cache
from math import factorial, prod
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chisquare

from truedeal.cards import HCP_OF_RANK, card
from truedeal.constraints import bounded, ir, separable
from truedeal.constraints.dealer import load_program, parse_number, parse_program
from truedeal.constraints.evaluate import evaluate_cond, evaluate_num
from truedeal.engine import Plan

SCRIPTS = Path(__file__).parent / "scripts"
N, E, S, W = range(4)

NT_POINTS = "hcp(south) " + " ".join(
    f"- ({suit}(south) == 2 && top4(south, {suit}) == 1 && !hascard(south, A{suit[0].upper()}))"
    for suit in ("spades", "hearts", "diamonds", "clubs"))
#: Per-suit adjustments that scripts write.
NUMBERS = {
    "notrump points": NT_POINTS,
    "shortness": "hcp(north) + (hearts(north) == 0 ? 3 : (hearts(north) == 1 ? 2 : 0)) + (clubs(north) < 2 ? 2 - clubs(north) : 0)",
    "zar-like": ("hcp(north) + spades(north) + hearts(north) - 2 * ((spades(north) == 0) + (hearts(north) == 0)"
                 " + (diamonds(north) == 0) + (clubs(north) == 0))"),
    "parity of a suit": "spades(south) % 2 + 3 * (top3(south, hearts) >= 2)",
}


def _random_deals(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    perms = np.argsort(rng.random((n, 52)), axis=1)
    owners = np.empty((n, 52), np.uint8)
    np.put_along_axis(owners, perms, np.repeat(np.arange(4, dtype=np.uint8), 13)[None, :], axis=1)
    return owners


@pytest.mark.parametrize("name", NUMBERS)
def test_a_sum_of_per_suit_pieces_is_one_linear_sum_of_the_same_values(name):
    program = ir.Program(condition=ir.Compare("==", parse_number(NUMBERS[name]), ir.Linear((), 0)))
    rewritten = separable.separated(program).condition
    assert isinstance(rewritten, ir.Compare) and isinstance(rewritten.left, ir.Linear)
    assert any(f.fn.kind == "table" for _, f in rewritten.left.terms)
    owners = _random_deals(20_000, seed=11)
    before, after = evaluate_num(owners, program.condition.left), evaluate_num(owners, rewritten.left)
    assert np.array_equal(before, after)
    lo, hi = bounded.linear_range(rewritten.left)
    assert lo <= before.min() and before.max() <= hi


def test_a_sum_with_a_shapes_points_adds_up_its_other_summands_as_one_linear_sum():
    """Total points: HCP, 3 for a void anywhere (a shape), one off for an
    honour in a short major.  The shape's points stay apart; HCP and the two
    deductions become one linear sum, the majors' deduction one table."""
    text = ("hcp(north) + (shape(north, any 0xxx) ? 3 : 0) - (spades(north) < 3 && hcp(north, spades) > 0)"
            " - (hearts(north) < 3 && hcp(north, hearts) > 0)")
    program = ir.Program(condition=ir.Compare(">=", parse_number(text), ir.Linear((), 12)))
    rewritten = separable.separated(program).condition
    assert isinstance(rewritten, ir.Compare) and isinstance(rewritten.left, ir.Arith)
    linear = [n for n in ir.nodes(rewritten.left) if isinstance(n, ir.Linear) and n.terms]
    assert len(linear) == 1
    tables = [f for _, f in linear[0].terms if f.fn.kind == "table"]
    assert [f.suits for f in tables] == [(0, 1)]
    owners = _random_deals(20_000, seed=12)
    assert np.array_equal(evaluate_num(owners, program.condition.left), evaluate_num(owners, rewritten.left))


def test_a_coin_card_stays_out_of_the_tables():
    """A spot card read alone is a coin the plan splits on; in a table its
    rank would be tracked in every suit.  The sum adds up the rest."""
    program = load_program("condition hcp(south) + (hearts(south) == 2 && top4(south, hearts) == 1)"
                           " + (clubs(south) >= 3 && hascard(south, 2C)) >= 15")
    rewritten = separable.separated(program).condition
    assert isinstance(rewritten, ir.Compare) and isinstance(rewritten.left, ir.Arith)
    tables = [n for n in ir.nodes(rewritten) if isinstance(n, ir.Feature) and n.fn.kind == "table"]
    assert tables and all(12 not in f.fn.ranks_read for f in tables)
    owners = _random_deals(20_000, seed=13)
    assert np.array_equal(evaluate_cond(owners, program.condition), evaluate_cond(owners, rewritten))


def test_a_number_that_reads_two_holdings_at_once_stays_as_it_is():
    program = load_program("condition (spades(north) > hearts(north) ? hcp(north) : 0) >= 12")
    assert separable.separated(program) is program


def _shortness_table() -> ir.LocalFn:
    return ir.LocalFn("table", table=tuple(max(0, 3 - length) for length in range(14)))


def _notrump_table() -> ir.LocalFn:
    """HCP in A K Q J, one off for a doubleton with one of them but not the ace."""
    values = []
    for length in range(14):
        for mask in range(16):
            held = [r for r in range(4) if mask >> r & 1]
            values.append(sum(HCP_OF_RANK[r] for r in held) - (length == 2 and len(held) == 1 and 0 not in held))
    shift = min(values)
    return ir.LocalFn("table", ranks_read=(0, 1, 2, 3), table=tuple(v - shift for v in values))


def _brute_range(fn: ir.LocalFn, suits: tuple[int, ...]) -> tuple[int, int]:
    """Over every pattern, each suit's extremes over its possible holdings."""
    k = len(fn.ranks_read)
    lo, hi = None, None
    for pattern in itertools.product(range(14), repeat=4):
        if sum(pattern) != 13:
            continue
        options = [[fn.table[pattern[s] << k | m] for m in range(1 << k) if m.bit_count() <= pattern[s] <= m.bit_count() + 13 - k]
                   for s in suits]
        a, b = sum(min(o) for o in options), sum(max(o) for o in options)
        lo, hi = (a, b) if lo is None else (min(lo, a), max(hi, b))
    assert lo is not None and hi is not None
    return lo, hi


@pytest.mark.parametrize("suits", [(0, 1, 2, 3), (0,), (1, 3), (0, 2, 3)])
@pytest.mark.parametrize("table", [_shortness_table, _notrump_table])
def test_a_tables_range_on_a_hand_is_the_brute_force_one(table, suits):
    fn = table()
    assert bounded.feature_range(ir.Feature(N, suits, fn)) == _brute_range(fn, suits)


@pytest.mark.parametrize("script", ["21_ternary_numbers", "54_arith_mix", "57_ternary_chain_dealer"])
def test_the_separated_listing_counts_what_the_plain_listing_counts(script):
    """These scripts list exactly as they are (their adjustments cut into
    cases) and keep that listing: their seeded deals do not change.  Listed
    through their tables instead, they count the same deals."""
    program = load_program(SCRIPTS / f"{script}.dlr")
    plain = Plan.build(program)
    assert plain.exact and plain.source_program() is program
    rewritten = separable.separated(program)
    assert rewritten is not program
    assert Plan.build(rewritten).deals_total == plain.deals_total


#: The library's 1NT opener (Practice-Bidding-Scenarios, 1N.dlr): one point
#: for a five-card suit (an "or" of the suits, read as a number) unless it
#: has more doubletons with a bare honour.  Its tables were bounded too low
#: when subtracted (1 > the doubletons was always false): the split listing
#: lost 1 deal in 16 and drew deals that the script refuses.
LENGTH_OR_DOUBLETONS = "\n".join([
    *(f"dg{i} = {suit}(south) == 2 and top4(south, {suit}) > 0 and not hascard(south, A{suit[0].upper()}) ? 1 : 0"
      for i, suit in enumerate(("spades", "hearts", "diamonds", "clubs"))),
    *(f"lp{i} = {suit}(south) > 4 ? {suit}(south) - 4 : 0" for i, suit in enumerate(("spades", "hearts", "diamonds", "clubs"))),
    "dg = dg0 + dg1 + dg2 + dg3",
    "lp = lp0 or lp1 or lp2 or lp3",
    "points = lp > dg ? hcp(south) + lp - dg : hcp(south)",
])


@pytest.mark.parametrize("condition", ["lp > dg", "1 > dg", "points >= 15 && points <= 17 && shape(south, any 4333 + any 4432 + any 5332)"])
def test_a_table_subtracted_counts_what_the_plain_listing_counts(condition):
    program = parse_program(f"{LENGTH_OR_DOUBLETONS}\ncondition {condition}")
    rewritten = separable.separated(program)
    assert rewritten is not program
    plain, listed = Plan.build(program), Plan.build(rewritten)
    assert plain.exact and listed.exact and listed.deals_total == plain.deals_total > 0
    owners = np.concatenate(list(listed.deals(2000, seed="subtracted")))
    assert evaluate_cond(owners, program.condition).all()


# --------------------------------------------------- the leveled 1NT opener

_OPENING_SHAPES = {p for shape in ((4, 3, 3, 3), (4, 4, 3, 2), (5, 3, 3, 2), (5, 4, 2, 2))
                   for p in itertools.permutations(shape)}
COINS = {"C2": card(12, 3), "C3": card(11, 3), "D2": card(12, 2), "D3": card(11, 2)}


def _keep(pts: int, w2: bool, e2: bool, w3: bool, e3: bool) -> bool:
    """The script's ``keep``, as dealer reads it."""
    if pts == 15:
        return not (w3 or e3)
    if pts == 16:
        return not w2
    return not (w2 and e2 and (w3 or e3))


def _suit_counts(coins: tuple[int, ...]) -> list[tuple[int, int, tuple[bool, ...], int]]:
    """(length, notrump points, which of ``coins`` (ranks) are held, holdings) of one suit."""
    out: Counter = Counter()
    for length in range(14):
        for held in itertools.combinations(range(13), length):
            honours = [r for r in held if r < 4]
            pts = sum(HCP_OF_RANK[r] for r in honours) - (length == 2 and len(honours) == 1 and 0 not in held)
            out[length, pts, tuple(r in held for r in coins)] += 1
    return [(*key, n) for key, n in out.items()]


def _south_hands() -> Counter:
    """(notrump points, South holds C2, C3, D2, D3) -> South's opening hands."""
    plain, coined = _suit_counts(()), _suit_counts((12, 11))  # deuce, three
    out: Counter = Counter()
    for lengths in _OPENING_SHAPES:
        rows = [[(p, c, n) for length, p, c, n in counts if length == lengths[s]]
                for s, counts in enumerate((plain, plain, coined, coined))]
        for (ps, _, ns), (ph, _, nh), (pd, d, nd), (pc, c, nc) in itertools.product(*rows):
            out[(ps + ph + pd + pc, *c, *d)] += ns * nh * nd * nc
    return out


def _completions(pts: int, south: tuple[bool, ...]) -> Counter:
    """Ways to deal the other 39 cards so that the script keeps the deal, by
    whether West holds the club deuce: each coin South lacks goes to North,
    East or West, then the rest freely."""
    free = [name for name, held in zip(COINS, south) if not held]
    out: Counter = Counter()
    for seats in itertools.product((N, E, W), repeat=len(free)):
        where = dict(zip(free, seats))
        if _keep(pts, where.get("C2") == W, where.get("D2") == E, where.get("C3") == W, where.get("D3") == E):
            left = [13 - sum(s == seat for s in seats) for seat in (N, E, W)]
            out[where.get("C2") == W] += factorial(sum(left)) // prod(factorial(k) for k in left)
    return out


@cache
def _law() -> Counter:
    """(notrump points, West holds the club deuce) -> the script's deals."""
    law: Counter = Counter()
    for (pts, *coins), n in _south_hands().items():
        if 15 <= pts <= 17:
            for west, ways in _completions(pts, tuple(coins)).items():
                law[pts, west] += n * ways
    return law


def test_the_leveled_1nt_opener_is_exact_and_counts_what_an_independent_sum_counts():
    plan = Plan.build(load_program(SCRIPTS / "64_leveled_1nt_opener.dlr"))
    assert plan.exact
    assert plan.deals_total == sum(_law().values())


def test_the_leveled_1nt_openers_deals_follow_the_exact_law_of_points_and_deuces():
    """6,000 deals: the joint law of South's notrump points and who holds the
    club deuce (West or not), chi-square against the law of the sum above."""
    program = load_program(SCRIPTS / "64_leveled_1nt_opener.dlr")
    owners = np.concatenate(list(Plan.build(program).deals(6_000, seed="leveled")))
    assert evaluate_cond(owners, program.condition).all()
    pts = evaluate_num(owners, parse_number(NT_POINTS))
    seen = Counter(zip(pts.tolist(), (owners[:, COINS["C2"]] == W).tolist()))
    law = _law()
    total = sum(law.values())
    cells = sorted(law)
    assert sum(seen[c] for c in cells) == 6_000
    stat = chisquare([seen[c] for c in cells], [float(Fraction(law[c], total)) * 6_000 for c in cells])
    assert stat.pvalue > 1e-3, stat


def test_the_leveled_1nt_openers_actions_are_the_exact_shares_of_the_independent_sum():
    """``truedeal answer``: the script's averages of 100 * (minimum) and
    100 * (maximum) are exactly the shares of 15 and 17 points in the sum above."""
    from truedeal.analysis.actions import answer_script

    answers = answer_script(load_program(SCRIPTS / "64_leveled_1nt_opener.dlr"))
    law = _law()
    total = sum(law.values())
    assert answers.deals == total
    share = {pts: Fraction(sum(n for (p, _), n in law.items() if p == pts), total) for pts in (15, 17)}
    by_label = {a.label: a for a in answers.answers}
    assert by_label["minimum"].exact and by_label["maximum"].exact
    assert Fraction(by_label["minimum"].body["mean_exact"]) == 100 * share[15]
    assert Fraction(by_label["maximum"].body["mean_exact"]) == 100 * share[17]
