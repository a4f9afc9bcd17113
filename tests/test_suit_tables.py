"""A ``?:`` on one suit of one seat as one local function (``table``): the
short-suit honour penalties and length points of total-point scripts
(:mod:`truedeal.constraints.suit_tables`)."""

from __future__ import annotations

import itertools
from math import comb, factorial

import numpy as np
import pytest

from truedeal.cards import HCP_OF_RANK
from truedeal.constraints import ir
from truedeal.constraints.compile import compile_program
from truedeal.constraints.dealer import load_program
from truedeal.constraints.evaluate import evaluate_num, feature_values, satisfies
from truedeal.constraints.suit_tables import suit_table
from truedeal.engine import Plan
from truedeal.listing import build_listing

#: South's total points: HCP, 3/2/1 for a void/singleton/doubleton, less 1
#: for each short suit (0-2 cards) with an honour, and a point for each heart
#: past four: nine ?: of one suit each, 512 guarded pieces, past the
#: compiler's bound of 256.
TOTAL_POINTS = "\n".join(
    [f"pp{k} = {suit}(south) < 3 && hcp(south, {suit}) > 0 ? 1 : 0" for k, suit in
     enumerate(("spades", "hearts", "diamonds", "clubs"))]
    + [f"ss{k} = {suit}(south) < 3 ? 3 - {suit}(south) : 0" for k, suit in enumerate(("spades", "hearts", "diamonds", "clubs"))]
    + ["lp = hearts(south) > 4 ? hearts(south) - 4 : 0",
       "tp = hcp(south) + ss0 + ss1 + ss2 + ss3 - pp0 - pp1 - pp2 - pp3 + lp",
       "condition tp >= 11 && tp <= 13 && shape(south, any 5xxx + any 6xxx) && hcp(south) <= 11"])


def _south_hands(fits) -> int:
    """South's hands that ``fits(hcp, pattern, penalty)`` accepts, counted
    suit by suit (each suit's honours A K Q J and the ways to take its spot
    cards), independently of the engine."""
    total = 0
    honour_sets = list(itertools.product((0, 1), repeat=4))
    for pattern in itertools.product(range(14), repeat=4):
        if sum(pattern) != 13:
            continue
        by_suit = []
        for length in pattern:  # (hcp, penalty) -> ways for this suit
            ways: dict[tuple[int, int], int] = {}
            for held in honour_sets:
                if sum(held) > length:
                    continue
                points = sum(HCP_OF_RANK[r] for r in range(4) if held[r])
                key = (points, int(length < 3 and points > 0))
                ways[key] = ways.get(key, 0) + comb(9, length - sum(held))
            by_suit.append(ways)
        for combo in itertools.product(*(w.items() for w in by_suit)):
            points = sum(k[0] for k, _ in combo)
            penalty = sum(k[1] for k, _ in combo)
            if fits(points, pattern, penalty):
                n = 1
                for _, w in combo:
                    n *= w
                total += n
    return total


def _fits_total_points(points: int, pattern, penalty: int) -> bool:
    shortness = sum(3 - n for n in pattern if n < 3)
    tp = points + shortness - penalty + max(pattern[1] - 4, 0)
    return 11 <= tp <= 13 and (5 in pattern or 6 in pattern) and points <= 11  # any 5xxx + any 6xxx


def test_total_points_are_exact_and_count_what_an_independent_count_gives():
    plan = Plan.build(load_program(TOTAL_POINTS))
    assert plan.exact
    rest = factorial(39) // factorial(13) ** 3
    assert plan.deals_total == _south_hands(_fits_total_points) * rest
    assert any(t.fn.kind == "table" for f in plan.listing.layout.comp.forms for t in f.terms)


def test_the_pieces_alone_are_past_their_bound_so_the_tables_are_taken():
    """Without tables the total points would go to rejection; with them
    the form is one coordinate (HCP and the four penalties together)."""
    from truedeal.constraints import compile as compile_module

    program = load_program(TOTAL_POINTS)
    assert not compile_module._compile(program, False, False).exact
    comp = compile_program(program)
    assert comp.exact
    assert any(t.fn.kind == "table" for f in comp.forms for t in f.terms)


def test_drawn_deals_fit_the_script():
    program = load_program(TOTAL_POINTS)
    owners = np.concatenate(list(Plan.build(program).deals(2000, seed="tables")))
    assert satisfies(owners, program).all()


@pytest.mark.parametrize("text", [
    "spades(south) < 3 && hcp(south, spades) > 0 ? 1 : 0",
    "hearts(north) > 4 ? hearts(north) - 4 : 0",
    "top3(east, clubs) >= 2 || (clubs(east) >= 6 && hascard(east, JC)) ? -2 : 5",
    "diamonds(west) == 0 ? 3 : diamonds(west) == 1 ? 2 : diamonds(west) == 2 ? 1 : 0",
])
def test_a_table_gives_the_value_of_its_expression_on_every_deal(text):
    """The table, looked up by the evaluator of real deals, against the
    ?: itself evaluated by the same evaluator (deals from numpy)."""
    num = load_program(f"x = {text}\ncondition x == x").condition.left  # type: ignore[attr-defined]
    folded = suit_table(num)
    assert folded is not None and len(folded.terms) == 1
    (_, feature), = folded.terms
    assert feature.fn.kind == "table" and min(feature.fn.table) == 0
    gen = np.random.default_rng(3)
    owners = gen.permuted(np.broadcast_to(np.repeat(np.arange(4, dtype=np.uint8), 13), (5000, 52)), axis=1)
    assert (feature_values(owners, feature) + folded.const == evaluate_num(owners, num)).all()


@pytest.mark.parametrize("text", [
    "spades(south) < 3 && hcp(south, hearts) > 0 ? 1 : 0",  # two suits
    "spades(south) < 3 && hcp(north, spades) > 0 ? 1 : 0",  # two seats
    "shape(south, any 0xxx) ? 3 : 0",  # the pattern
    "spades(south) < 3 ? hcp(south) : 0",  # the whole hand
])
def test_a_condition_on_more_than_one_suit_of_one_seat_is_not_a_table(text):
    num = load_program(f"x = {text}\ncondition x == x").condition.left  # type: ignore[attr-defined]
    assert suit_table(num) is None


def test_an_exact_script_keeps_its_pieces_and_so_its_seeded_deals():
    """A ?: that the pieces already hold exactly is not made a table: the
    listing, and a seed's deals, stay what they were."""
    program = load_program("pp = spades(south) < 3 && hcp(south, spades) > 0 ? 1 : 0\n"
                           "condition hcp(south) - pp >= 12 && shape(north, any 4333)")
    comp = compile_program(program)
    assert comp.exact and all(t.fn.kind != "table" for f in comp.forms for t in f.terms)
    tables = compile_program(program, suit_tables=True)
    assert build_listing(comp, None).deals == build_listing(tables, None).deals


def test_a_table_reads_length_and_its_ranks():
    fn = suit_table(load_program("x = clubs(west) < 3 && top2(west, clubs) > 0 ? 1 : 0\ncondition x == x")
                    .condition.left).terms[0][1].fn  # type: ignore[attr-defined]
    assert fn.reads_length and fn.ranks == frozenset({0, 1})
    assert fn.value(2, frozenset({1})) == 1 and fn.value(3, frozenset({0})) == 0 and fn.value(2, frozenset()) == 0
    with pytest.raises(ValueError):
        ir.LocalFn("table", read=(0,), table=(0,) * 27)
