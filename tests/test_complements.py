"""Partnership sums read from the other side of the table (truedeal.constraints.complements)."""

from __future__ import annotations

from collections import defaultdict
from math import comb

import numpy as np

from truedeal.constraints import ir
from truedeal.constraints.complements import complemented
from truedeal.constraints.dealer import load_program
from truedeal.constraints.evaluate import evaluate_cond
from truedeal.engine import Plan
from truedeal.spec import load_spec


def _seats(program: ir.Program) -> set[int]:
    return {x.seat for x in ir.nodes(program.condition) if isinstance(x, (ir.Feature, ir.ShapeIn))}


def _two_fits() -> int:
    """Deals where N+S hold 8+ spades and E+W 8+ hearts (N+S 5 or fewer):
    N's and S's spades and hearts, then N's and S's other cards from the 26
    diamonds and clubs, then E's 13 of the 26 cards left."""
    total = 0
    for sn in range(14):
        for ss in range(max(0, 8 - sn), 14 - sn):
            for hn in range(14 - sn):
                for hs in range(0, min(5 - hn, 13 - ss, 13 - hn) + 1):
                    rest_n, rest_s = 13 - sn - hn, 13 - ss - hs
                    if rest_n < 0 or rest_s < 0 or hn > 5:
                        continue
                    total += (comb(13, sn) * comb(13 - sn, ss) * comb(13, hn) * comb(13 - hn, hs)
                              * comb(26, rest_n) * comb(26 - rest_n, rest_s))
    return total * comb(26, 13)


def test_both_sides_with_a_fit_read_on_one_side_count_what_the_closed_form_gives():
    """E+W 8+ hearts is N+S 5 or fewer: two seats listed, exact (it was dealt
    by rejection on West, 41% kept); the deals fit the script as written."""
    text = "condition spades(north) + spades(south) >= 8 && hearts(east) + hearts(west) >= 8\n"
    plan = Plan.build(load_program(text))
    assert _seats(plan.source_program()) == {0, 2}
    assert plan.exact and plan.deals_total == _two_fits()
    owners = np.concatenate(list(plan.deals(3_000, seed="two fits")))
    hearts_ew = ((owners[:, 1::4] == 1) | (owners[:, 1::4] == 3)).sum(axis=1)
    spades_ns = ((owners[:, 0::4] == 0) | (owners[:, 0::4] == 2)).sum(axis=1)
    assert (hearts_ew >= 8).all() and (spades_ns >= 8).all()


def test_points_of_one_side_are_forty_less_the_other_s():
    """E+W 14 HCP or fewer beside North's spades and South's hearts: the same
    deals as N+S 26 or more, written by hand, and the deals fit the script as
    written.  N+S at most 12 losers and E+W 15+ HCP is read on North and South
    too (exact; it was dealt by rejection on West, 51% kept), and so is a JSON
    spec's condition."""
    written = "spades(north) >= 5 && hearts(south) >= 4 && hcp(east) + hcp(west) <= 14"
    as_written = load_program(f"condition {written}\n")
    by_hand = load_program("condition spades(north) >= 5 && hearts(south) >= 4 && hcp(north) + hcp(south) >= 26\n")
    assert _seats(complemented(as_written)) == {0, 2}
    plan = Plan.build(as_written)
    assert plan.exact and plan.deals_total == Plan.build(by_hand).deals_total
    owners = next(plan.deals(2_000, seed="points"))
    points_ew = sum(((owners[:, 4 * r : 4 * r + 4] == 1) | (owners[:, 4 * r : 4 * r + 4] == 3)).sum(axis=1) * (4 - r) for r in range(4))
    assert (points_ew <= 14).all() and evaluate_cond(owners, by_hand.condition).all()
    losers = "losers(north) + losers(south) <= 12 && hcp(east) + hcp(west) >= 15"
    read = [complemented(p) for p in (load_program(f"condition {losers}\n"), load_spec({"condition": losers}).program())]
    assert [_seats(p) for p in read] == [{0, 2}, {0, 2}]


def _fit_beside_east_s_hearts() -> int:
    """Deals where N+S hold 8+ spades, North 12+ HCP, East 5+ hearts and at
    most 2 spades: North's hands by (spades, hearts) from a DP over its
    suits, then East's spades and hearts from what North left, South's
    spades from what both left, and West the rest."""
    suit: dict[tuple[int, int], int] = defaultdict(int)  # (cards, hcp) -> ways in one suit
    for mask in range(16):
        for spots in range(10):
            suit[(mask.bit_count() + spots, sum(4 - r for r in range(4) if mask >> r & 1))] += comb(9, spots)
    north: dict[tuple[int, int, int, int], int] = {(0, 0, 0, 0): 1}  # (spades, hearts, cards, hcp) -> ways
    for u in range(4):
        step: dict[tuple[int, int, int, int], int] = defaultdict(int)
        for (a, h, n, p), ways in north.items():
            for (k, q), w in suit.items():
                if n + k <= 13:
                    step[(a + (k if u == 0 else 0), h + (k if u == 1 else 0), n + k, p + q)] += ways * w
        north = step
    total = 0
    for (a, h, n, p), ways in north.items():
        if n < 13 or p < 12:
            continue
        spades, hearts, others = 13 - a, 13 - h, 13 + a + h
        for j in range(3):
            for k in range(5, 14 - j):
                east = comb(spades, j) * comb(hearts, k) * comb(others, 13 - j - k)
                left = spades - j  # South takes 13 of the 26 cards left, 8 - a or more of these spades
                south = sum(comb(left, m) * comb(26 - left, 13 - m) for m in range(max(0, 8 - a), min(left, 13) + 1))
                total += ways * east * south
    return total


def test_a_fit_beside_a_shaped_opponent_is_read_where_fewer_seats_are_shaped():
    """N+S 8+ spades beside North's points and East's hearts and spades: three
    seats read as written, all three by shape (dealt by rejection on South,
    54% kept); on East and West, North is read by points alone, and the
    listing of two patterned seats counts what the closed form gives."""
    text = "condition spades(north) + spades(south) >= 8 && hcp(north) >= 12 && hearts(east) >= 5 && spades(east) <= 2\n"
    program = load_program(text)
    assert complemented(program) is program  # as many seats read either way
    assert _seats(complemented(program, by_shape=True)) == {0, 1, 3}
    plan = Plan.build(program)
    assert plan.exact and _seats(plan.source_program()) == {0, 1, 3}
    assert plan.deals_total == _fit_beside_east_s_hearts()
    owners = next(plan.deals(2_000, seed="fit beside hearts"))
    assert evaluate_cond(owners, program.condition).all()


def test_sums_are_rewritten_only_where_fewer_seats_are_read():
    kept = [
        "hcp(east) + hcp(west) >= 15 && hcp(east) >= 5",  # East is read alone too
        "hcp(east) + hcp(west) >= 15",  # North and South would be read instead: no fewer
        "losers(east) + losers(west) <= 12 && hcp(north) >= 12",  # losers do not add up to a constant
        "hcp(east) + 2 * hcp(west) >= 15 && hcp(north) >= 12",  # not one sum of the pair
        # North read only in the sum, but East and West by coin cards alone: moved onto them, the
        # sum would make them points seats (more features; the practice library's Grand Slam Invite)
        "hcp(north) + hcp(south) > 30 && hcp(south) >= 15 && hascard(west, 2C) && hascard(east, 2D)",
    ]
    for condition in kept:
        program = load_program(f"condition {condition}\n")
        assert complemented(program) is program, condition


def test_a_plan_that_counts_exactly_as_written_keeps_its_listing():
    """Script 08 (each side 18-22, E+W 8+ hearts) lists as written, four
    seats: reading it on North and South alone would list other deals for a
    seed, so it is not made."""
    from pathlib import Path

    plan = Plan.build(load_program(Path(__file__).parent / "scripts" / "08_partscore_battle.dlr"))
    assert plan.exact and _seats(plan.source_program()) == {0, 1, 2, 3}
