"""Which parts go to rejection when no listing holds a whole condition.

Expected relaxed conditions are written out by hand; the ranking is checked
with a stand-in ``odds`` whose values are chosen here, so the order it must
give is known in advance."""

from __future__ import annotations

from pathlib import Path

import pytest

from truedeal.constraints import ir
from truedeal.constraints.dealer import load_program, parse_program
from truedeal.constraints.evaluate import evaluate_cond
from truedeal.engine import Plan
from truedeal.relaxation import HONOURS, KEEP, WHOLE, Relaxation, SeatsRead, ranked, relax

#: West reads only cards; east reads cards and a shape; north a shape only.
SCRIPT = ("condition shape(north, any 4333) && hascard(west, 2C) && hcp(east) >= 8 "
          "&& shape(east, any 5xxx) && hcp(south) >= 10\n")


def _opaque(c: ir.Cond) -> bool:
    return isinstance(c, ir.Compare) and isinstance(c.left, ir.OpaqueNum) and c.left.name == "relaxed"


def test_relaxing_honours_keeps_the_shape_and_whole_drops_both():
    program = parse_program(SCRIPT)
    honours = relax(program, Relaxation((KEEP, HONOURS, KEEP, KEEP))).condition.items
    whole = relax(program, Relaxation((KEEP, WHOLE, KEEP, KEEP))).condition.items
    kept = program.condition.items
    assert [_opaque(c) for c in honours] == [False, False, True, False, False]
    assert [_opaque(c) for c in whole] == [False, False, True, True, False]
    assert honours[3] == kept[3] and whole[0] == kept[0]


def test_seats_read():
    program = parse_program(SCRIPT)
    assert SeatsRead()(program.condition) == (frozenset({1, 2, 3}), frozenset({0, 1, 2, 3}))


def test_a_seat_read_only_through_its_cards_has_one_option():
    """West's every part reads its cards: relaxing its honours is relaxing it
    whole, so the ranking offers one of the two, not both (each would be
    listed, and fail, alike)."""
    seen: list = []

    def odds(p: ir.Program) -> float:
        seen.append(p)
        return 0.5

    order = ranked(parse_program(SCRIPT), odds)
    west = {r.levels[3] for r in order}
    east = {r.levels[1] for r in order}
    north = {r.levels[0] for r in order}
    assert west == {KEEP, HONOURS} and east == {KEEP, HONOURS, WHOLE} and north == {KEEP, WHOLE}
    assert len(order) == 2 * 3 * 2 * 2 - 1  # south reads cards only too; and not "relax nothing"


def test_ranked_best_estimate_first_then_fewest_parts():
    """The estimate of a relaxation is the product of its seats' factors, the
    odds of each relaxed seat's part alone: relaxing west (its card is held
    1 time in 2) keeps more than relaxing south (20+ HCP, here 1 in 10),
    and relaxing both keeps least."""
    program = parse_program("condition hcp(south) >= 20 && hascard(west, 2C)\n")

    def odds(p: ir.Program) -> float:
        text = repr(p.condition)
        south_kept = "Feature(seat=2" in text
        west_kept = "Feature(seat=3" in text
        return (0.1 if south_kept else 1.0) * (0.5 if west_kept else 1.0)

    order = [r.levels for r in ranked(program, odds)]
    assert order == [(0, 0, 0, 1), (0, 0, 1, 0), (0, 0, 1, 1)]


def test_covers():
    assert Relaxation((0, 2, 1, 0)).covers(Relaxation((0, 1, 1, 0)))
    assert not Relaxation((0, 1, 1, 0)).covers(Relaxation((0, 2, 0, 0)))
    assert Relaxation().none and not Relaxation((0, 0, 0, 1)).none


#: Corpus script 65 (calm opponents beside 1NT, exact suit by suit) with South's five hearts: a pattern, past that listing.
CALM_BESIDE_A_HEART_RESPONSE = (Path(__file__).parent / "scripts" / "65_calm_opponents_beside_1nt.dlr").read_text().replace(
    "hcp(south) <= 9", "hcp(south) <= 9 && hearts(south) >= 5")


@pytest.mark.memory_mb(600)  # 533 MB on 2026-11-28, with that day's code and the code before it alike
def test_a_relaxed_plan_says_what_it_rejects_and_its_deals_fit():
    """A script the listing cannot hold whole (four seats read honours: the
    opener's and the responder's points, and each opponent's honours suit by
    suit; South's hearts too): the plan names what it relaxes, measures the
    acceptance, and every deal fits the whole condition.  The calm
    opponents are listed (their pooled seats' holdings of each suit), South's
    points go to rejection: 17% kept, where rejecting the opponents' honours
    kept 8%."""
    program = load_program(CALM_BESIDE_A_HEART_RESPONSE)
    plan = Plan.build(program)
    assert not plan.exact and plan.relaxed == ("the honour conditions of south",)
    assert 0 < plan.acceptance < 1
    owners = next(plan.deals(2_000, seed="relaxation"))
    assert evaluate_cond(owners, program.condition).all()


def test_the_method_names_the_comparisons_that_go_to_rejection(no_weighing):
    """A part no listing holds is named as the script writes it, not as "e.g. tricks, rnd"."""
    from truedeal.constraints.dealer import load_program
    from truedeal.engine import Plan

    plan = Plan.build(load_program("lucky = rnd(3) == 1 || rnd(5) > 2\ncondition hcp(north) >= 15 && lucky && rnd(3) == 1"))
    assert plan.summary().method == "exact listing, rejection for the parts no listing can hold (rnd(3) == 1; rnd(5) > 2)"

