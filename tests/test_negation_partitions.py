"""A condition and its negation share out every deal: their exact counts add
up to all deals (52! / 13!^4, or the deals of what is predealt).

Each side is listed its own way (the negation of a narrow condition is wide),
so a listing that drops or adds deals shows here.  The conditions are drawn
at random from a fixed seed, over one to three seats, with the features,
comparisons (constant on either side), shapes and predealt cards that
scripts use; the first ones are the cases this check found: a subtracted
feature bounded too low, and two free seats held to 13 cards."""

from __future__ import annotations

import random
from math import factorial

import pytest

from truedeal.constraints.dealer import parse_program
from truedeal.engine import Plan, TooWide

#: Wide conditions and their negations list up to 950 MB (two free seats beside a patterned one).
pytestmark = pytest.mark.memory_mb(1100)

ALL_DEALS = factorial(52) // factorial(13) ** 4
ONE_CARD_PREDEALT = factorial(51) // (factorial(12) * factorial(13) ** 3)
SEATS = ("north", "south", "east", "west")
SUITS = ("spades", "hearts", "diamonds", "clubs")
SHAPES = ("any 4333 + any 4432 + any 5332", "5xxx", "x5xx + xx6x", "any 6xxx", "any 55xx", "xxx0 + xxx1")

FOUND = [
    ("", "3 > hcp(north) && controls(east) >= 1"),
    ("", "(1 <= controls(east)) && ((spades(north) == 2 && top4(north, spades) > 0 ? 1 : 0) == 15)"),
    ("", "spades(north) == 2 && top4(north, spades) > 0 && controls(east) <= 11"),
    ("", "(top3(east, diamonds) + 2 - (spades(east) == 2 && top4(east, spades) > 0 ? 1 : 0) <= 11) && (controls(north) == 7)"),
]


def _feature(rng: random.Random, seat: str) -> str:
    suit = rng.choice(SUITS)
    return rng.choice([f"hcp({seat})", f"hcp({seat}, {suit})", f"controls({seat})", f"losers({seat})",
                       f"top3({seat}, {suit})", f"{suit}({seat})", f"top4({seat})", f"top2({seat}, {suit})",
                       f"({suit}({seat}) > 4 ? {suit}({seat}) - 4 : 0)",
                       f"({suit}({seat}) == 2 && top4({seat}, {suit}) > 0 ? 1 : 0)",
                       f"hascard({seat}, {rng.choice('AKQJT2')}{suit[0].upper()})"])


def _atom(rng: random.Random, seats: list[str]) -> str:
    if rng.random() < 0.2:
        return f"shape({rng.choice(seats)}, {rng.choice(SHAPES)})"
    x = _feature(rng, rng.choice(seats))
    if rng.random() < 0.4:
        x += f" {rng.choice('+-')} {_feature(rng, rng.choice(seats))}"
    op, c = rng.choice(["<", "<=", ">", ">=", "==", "!="]), rng.randint(-2, 20)
    return f"{x} {op} {c}" if rng.random() < 0.5 else f"{c} {op} {x}"


def _drawn(n: int, seed: int = 2026) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        seats = rng.sample(SEATS, rng.choice([1, 2, 2, 3]))
        cond = _atom(rng, seats)
        for _ in range(rng.choice([1, 2])):
            cond = f"({cond}) {rng.choice(['&&', '&&', '||'])} ({_atom(rng, seats)})"
        predeal = f"predeal {rng.choice(SEATS)} S{rng.choice('AKQ')}\n" if rng.random() < 0.3 else ""
        out.append((predeal, cond))
    return out


@pytest.mark.parametrize("predeal,condition", FOUND + _drawn(20))
def test_a_condition_and_its_negation_count_every_deal_once(predeal, condition):
    sides = []
    for text in (condition, f"!({condition})"):  # one side at a time: a side dealt by rejection ends the case
        try:
            sides.append(Plan.build(parse_program(f"{predeal}condition {text}")))
        except TooWide:
            pytest.skip("too wide to list exactly")
        if not sides[-1].exact:
            pytest.skip("a side is dealt by rejection: its count is an estimate")
    yes, no = sides
    assert yes.deals_total + no.deals_total == (ONE_CARD_PREDEALT if predeal else ALL_DEALS)
