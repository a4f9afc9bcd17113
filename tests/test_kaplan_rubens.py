"""Dealer's ``quality`` and ``cccc`` (:mod:`truedeal.constraints.kaplan_rubens`).

The values are pinned to what the classic dealer program prints
(``DEALER_VALUES``) and to this file's own implementation of the algorithm,
written card by card from its description, not from the tables.  The exact
count of a seat's ``cccc`` comes from an independent count: every holding of
every suit enumerated, the four suits convolved.  Drawn deals follow that
count's law, and the corpus script of two seats deals only hands that fit.
"""

from __future__ import annotations

import json
from functools import cache
from math import factorial
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chisquare

from cli_runner import run
from truedeal.cards import card
from truedeal.constraints import kaplan_rubens
from truedeal.constraints.dealer import load_program, parse_program
from truedeal.constraints.evaluate import evaluate_num
from truedeal.engine import Plan
from truedeal.formats.deal import parse_deal

RANKS = "AKQJT98765432"
N, E, S, W = range(4)

#: Deals and the values that the classic dealer (suokko/dealer, built from
#: source) printed for them: cccc of N E S W, then quality of each seat's
#: spades, hearts, diamonds and clubs, seat by seat.  Chosen among 5,000
#: printed deals (all 100,000 values agreed with ours) so that together they
#: hold every length from a void to ten cards, suits of seven to ten with and
#: without the Q and J, the ten and the nine beside 0 to 4 of A K Q J,
#: singleton kings and queens, queen doubletons and 4333 hands.
DEALER_VALUES: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = [
    ("N:K72.92.AJT98.J92 AQJ6543.Q7.3.Q73 .AT63.K76542.854 T98.KJ854.Q.AKT6",
     (995, 1365, 1060, 1420),
     (90, 0, 325, 30, 490, 40, 0, 60, 0, 180, 180, 0, 30, 200, 20, 320)),
    ("N:KJ8.T9876542.T8. Q93.AQ.QJ74.7542 AT76542.J.52.Q86 .K3.AK963.AKJT93",
     (815, 850, 995, 2555),
     (120, 160, 10, 0, 60, 120, 120, 0, 350, 10, 0, 60, 0, 60, 375, 570)),
    ("N:AKQJT43.764.A94. ..KJ52.AKQJT8764 875.KQJT32.Q63.2 962.A985.T87.953",
     (1920, 2385, 1005, 445),
     (700, 0, 120, 0, 0, 0, 160, 900, 0, 420, 60, 0, 0, 180, 15, 0)),
    ("N:AKQT873.J72.98.4 J96.T9865.J763.K 4.A.K.AQJT987652 52.KQ43.AQT542.3",
     (1540, 300, 2070, 1545),
     (700, 30, 10, 0, 30, 50, 40, 30, 0, 40, 30, 700, 0, 200, 420, 0)),
    ("N:KQ6.QJ4.KQJ98.Q4 543.2.T4.JT97632 AJ98.AT963.A732. T72.K875.65.AK85",
     (1405, 375, 1780, 1115),
     (150, 90, 325, 40, 0, 0, 10, 140, 220, 250, 160, 0, 15, 120, 0, 280)),
    ("N:AKJ98643.T7.Q.83 72.K2.K95.AKQJT2 T5.QJ943.T7.9754 Q.A865.AJ86432.6",
     (1680, 1910, 395, 1525),
     (800, 10, 20, 0, 0, 60, 90, 660, 10, 175, 10, 0, 20, 160, 420, 0)),
    ("N:83..KQJT9543.965 Q9.AQT86432.2.J7 A76.J97.A6.KT832 KJT542.K5.87.AQ4",
     (1130, 1395, 1205, 1490),
     (0, 0, 480, 0, 40, 560, 0, 20, 120, 30, 80, 175, 300, 60, 0, 180)),
    ("N:AKQJ94.A3.A8765. T653.T652.QJT.J8 87..92.AQT975432 2.KQJ9874.K43.K6",
     (2380, 305, 1455, 1520),
     (600, 80, 200, 0, 20, 20, 120, 20, 0, 0, 0, 630, 0, 420, 90, 60)),
    ("N:JT.QJ754.4.QT643 K842.T6.A.AJ9752 A63.2.JT9876532. Q975.AK983.KQ.K8",
     (690, 1525, 1115, 1765),
     (40, 150, 0, 125, 120, 10, 40, 330, 120, 0, 270, 0, 80, 375, 100, 60)),
    ("N:932.K752.AKJ.Q83 QT76.AJ643.9754. J.Q.Q.AKJT976542 AK854.T98.T8632.",
     (1195, 950, 2100, 1105),
     (0, 120, 240, 60, 100, 250, 0, 0, 10, 20, 20, 1000, 350, 30, 25, 0)),
    ("N:AKT876432.7.A5.5 QJ.KT82.QT74.A76 95.AJ954.K93.QJT .Q63.J862.K98432",
     (2205, 1070, 1135, 785),
     (900, 0, 80, 0, 60, 140, 100, 120, 0, 275, 90, 120, 0, 60, 40, 210)),
    ("N:AKT87653.K83.6.9 .A72.T754.AJT873 QJ42.QJ94.32.Q54 9.T65.AKQJ98.K62",
     (1835, 1350, 595, 1635),
     (720, 90, 0, 0, 0, 120, 20, 360, 120, 140, 0, 60, 0, 15, 630, 90)),
]


def quality(ranks: str) -> int:
    """Dealer's quality of a suit written as its ranks ("AKT92"), in hundredths."""
    n, f = len(ranks), 10 * len(ranks)
    top = [r for r in ranks if r in "AKQJ"]
    value = sum(f * (4 - "AKQJ".index(r)) for r in top)
    if n >= 7:
        missing = (2 if "Q" not in ranks else 0) + (1 if "J" not in ranks else 0)
        return value + f * min(missing, n - 6)
    if "T" in ranks:
        value += f if (len(top) >= 2 or "J" in ranks) else f // 2
    if "9" in ranks and (len(top) == 2 or "T" in ranks or "8" in ranks):
        value += f // 2
    return value


def suit_part(ranks: str) -> int:
    """One suit's share of dealer's cccc: honours, quality, shortness."""
    n, value, above = len(ranks), 0, 0
    for r in ranks:  # high to low, counting the honours above the card at hand
        if r == "A":
            value += 300
        elif r == "K":
            value += 50 if n == 1 else 200
        elif r == "Q":
            value += 100 - {1: 75, 2: 25}.get(n, 0) - (25 if above == 0 else 0)
        elif r == "J":
            value += {1: 25, 2: 50}.get(above, 0)
        elif r == "T":
            value += 25 if above == 2 or (above == 1 and "9" in ranks) else 0
        above += r in "AKQJ"
    return value + quality(ranks) + 100 * max(0, 3 - n)


def cccc(suits: list[str]) -> int:
    """Dealer's cccc of a hand (its four suits as rank strings)."""
    square = sorted(map(len, suits)) == [3, 3, 3, 4]
    return sum(map(suit_part, suits)) - (50 if square else 100)


def hand_suits(row: np.ndarray, seat: int) -> list[str]:
    return ["".join(r for i, r in enumerate(RANKS) if row[card(i, s)] == seat) for s in range(4)]


def values(program_text: str, owners: np.ndarray) -> np.ndarray:
    return evaluate_num(owners, parse_program(f"x = {program_text}\ncondition x > -1000").condition.left)


@pytest.mark.parametrize("deal, c4, qualities", DEALER_VALUES)
def test_values_are_the_classic_dealers(deal, c4, qualities):
    owners = parse_deal(deal)[None, :]
    for seat, name in enumerate(("north", "east", "south", "west")):
        assert values(f"cccc({name})", owners)[0] == c4[seat] == cccc(hand_suits(owners[0], seat))
        for suit, suit_name in enumerate(("spades", "hearts", "diamonds", "clubs")):
            expected = qualities[4 * seat + suit]
            assert values(f"quality({name}, {suit_name})", owners)[0] == expected
            assert quality(hand_suits(owners[0], seat)[suit]) == expected


def test_the_features_agree_with_the_card_by_card_values_on_random_deals():
    rng = np.random.default_rng(68)
    owners = np.array([rng.permutation(np.repeat(np.arange(4, dtype=np.uint8), 13)) for _ in range(3000)])
    for seat, name in ((N, "north"), (W, "west")):
        expected = [cccc(hand_suits(row, seat)) for row in owners]
        assert values(f"cccc({name})", owners).tolist() == expected
        expected_q = [quality(hand_suits(row, seat)[1]) for row in owners]
        assert values(f"quality({name}, hearts)", owners).tolist() == expected_q


@cache
def cccc_law(least_heart_quality: int = 0, spades_held: str = "") -> dict[int, int]:
    """How many 13-card hands have each cccc value (those whose hearts'
    quality is at least ``least_heart_quality`` and whose spades hold
    ``spades_held``): each suit's 8,192 holdings tallied by length and
    share, the four suits convolved (once over all holdings, once over suits
    of three or more, for the 4333 term)."""
    tally = np.zeros((3, 14, 600), dtype=np.int64)  # [any suit, hearts, spades], length, share / 5
    for mask in range(1 << 13):
        ranks = "".join(r for i, r in enumerate(RANKS) if mask >> i & 1)
        tally[0, len(ranks), suit_part(ranks) // 5] += 1
        tally[1, len(ranks), suit_part(ranks) // 5] += quality(ranks) >= least_heart_quality
        tally[2, len(ranks), suit_part(ranks) // 5] += all(r in ranks for r in spades_held)
    suits = [tally[2], tally[1], tally[0], tally[0]]
    every = _hands(suits)
    square = _hands([np.where(np.arange(14)[:, None] >= 3, t, 0) for t in suits])
    law: dict[int, int] = {}
    for i in np.nonzero(every)[0]:
        for shift, n in ((100, int(every[i] - square[i])), (50, int(square[i]))):
            if n:
                law[5 * int(i) - shift] = law.get(5 * int(i) - shift, 0) + n
    return law


def _hands(suits: list[np.ndarray]) -> np.ndarray:
    """Hands of 13 cards by their summed share, from each suit's tally by length."""
    total = suits[0]
    for per_suit in suits[1:]:
        grown = np.zeros((14, total.shape[1] + per_suit.shape[1] - 1), dtype=np.int64)
        for a in range(14):
            for b in range(14 - a):
                if total[a].any() and per_suit[b].any():
                    grown[a + b] += np.convolve(total[a], per_suit[b])
        total = grown
    return total[13]


def test_one_seats_cccc_counts_what_the_suit_by_suit_count_gives():
    law = cccc_law()
    assert sum(law.values()) == factorial(52) // factorial(13) // factorial(39)  # every hand once
    others = factorial(39) // factorial(13) ** 3
    plan = Plan.build(parse_program("condition cccc(north) >= 1400"))
    assert plan.summary().exact
    assert plan.summary().deals == others * sum(n for v, n in law.items() if v >= 1400)


@pytest.mark.parametrize("spec, kept", [
    ('{"north": {"hcp": [12, 37]}, "east": {"cccc": [-50, 3560]}}', "all"),
    ("hcp(north) >= 12 && cccc(east) >= -50 && cccc(east) != 3565", "all"),
    ("hcp(north) >= 12 && cccc(east) > 3560", "none"),
])
def test_a_cccc_range_that_restricts_nothing_is_dropped(spec, kept):
    """The law's least and greatest values are -50 and 3560, the spec's
    bounds: a range of them restricts nothing, so the count is North's alone,
    exact (an estimate by rejection on East until 2026-11-28); past them, nothing."""
    law = cccc_law()
    assert (min(law), max(law)) == kaplan_rubens.cccc_range() == (-50, 3560)
    north = Plan.build(parse_program("condition hcp(north) >= 12")).summary().deals
    counted = json.loads(run("count", spec, "--json").out)
    assert counted["method"].startswith("exact") and counted["deals"] == (north if kept == "all" else 0)


def test_drawn_deals_follow_the_exact_law_of_cccc():
    law = {v: n for v, n in cccc_law().items() if v >= 1400}
    owners = np.concatenate(list(Plan.build(parse_program("condition cccc(north) >= 1400")).deals(4000, seed="c4")))
    drawn = np.array([cccc(hand_suits(row, N)) for row in owners])
    assert (drawn >= 1400).all()
    bins = [1400, 1450, 1500, 1550, 1600, 1650, 1700, 1800, 1900, 2000, 2200, 10_000]
    expected = np.array([sum(n for v, n in law.items() if lo <= v < hi) for lo, hi in zip(bins, bins[1:])], float)
    observed = np.histogram(drawn, bins=bins)[0]
    assert (expected / expected.sum() * len(drawn) >= 5).all()
    assert chisquare(observed, expected / expected.sum() * len(drawn)).pvalue > 1e-4


@pytest.mark.parametrize("least, below", [(400, 1100), (700, 1600)])
def test_a_seats_quality_and_cccc_count_what_the_suit_by_suit_count_gives(least, below):
    """A good heart suit in a hand of limited strength.  The first is one
    listing; in the second the two forms pass the listing's width, and the
    quality, a floor, is read as a filter on South's hearts."""
    law = cccc_law(least_heart_quality=least)
    plan = Plan.build(parse_program(f"condition quality(south, hearts) >= {least} && cccc(south) < {below}"))
    assert plan.summary().exact
    others = factorial(39) // factorial(13) ** 3
    assert plan.summary().deals == others * sum(n for v, n in law.items() if v < below) > 0


def test_a_predealt_seats_cccc_counts_what_the_suit_by_suit_count_gives():
    """North holds the spade ace and king (predealt): its hands hold them, the
    other seats share the other 39 cards."""
    law = cccc_law(spades_held="AK")
    plan = Plan.build(parse_program("predeal north SAK\ncondition cccc(north) >= 1600"))
    assert plan.summary().exact
    assert plan.summary().deals == factorial(39) // factorial(13) ** 3 * sum(n for v, n in law.items() if v >= 1600) > 0


@pytest.mark.memory_mb(600)
def test_the_corpus_script_deals_only_hands_that_fit():
    """tests/scripts/68 (endplay reads cccc otherwise): two seats, exact with
    North's spade quality read as a filter; each deal checked card by card."""
    program = load_program(Path(__file__).parent / "scripts" / "68_kaplan_rubens_opening.dlr")
    owners = np.concatenate(list(Plan.build(program).deals(300, seed="c4 corpus")))
    for row in owners:
        north, south = hand_suits(row, N), hand_suits(row, S)
        assert cccc(north) >= 1200 and len(north[0]) == 5 and quality(north[0]) >= 500
        assert sum(4 - "AKQJ".index(r) for r in "".join(south) if r in "AKQJ") <= 7 and len(south[0]) <= 2


def test_explain_writes_them_as_the_script_does():
    from truedeal.constraints.describe import cond

    program = parse_program("condition cccc(west) >= 1200 && quality(north, spades) + quality(north, hearts) > 900")
    assert cond(program.condition) == "cccc(west) >= 1200 && quality(north, spades) + quality(north, hearts) > 900"


def test_a_json_spec_says_the_same_with_its_fields():
    """``cccc`` of a seat and ``quality`` of a suit object are the script's
    functions: the same plan and count; out of range is one line naming the field."""
    from truedeal.constraints.load import load_constraints
    from truedeal.spec import SpecError

    fields = {"north": {"cccc": [1400, 3560], "spades": {"length": [5, 13], "quality": [500, 1300]}}}
    script = "condition cccc(north) >= 1400 && spades(north) >= 5 && quality(north, spades) >= 500"
    assert Plan.build(load_constraints(fields)).summary().deals == Plan.build(parse_program(script)).summary().deals > 0
    with pytest.raises(SpecError, match=r"north\.cccc: 4000 .*out of range \(-50\.\.3560\)"):
        load_constraints({"north": {"cccc": [1400, 4000]}})
    with pytest.raises(SpecError, match=r"south\.hearts\.quality: 1400 is out of range \(0\.\.1300\)"):
        load_constraints({"south": {"hearts": {"quality": 1400}}})
