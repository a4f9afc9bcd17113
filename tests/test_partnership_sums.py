"""Counts of partnership sums against calculations that share nothing with the listing.

Two independent routes, each a few lines of plain Python:

* **by rank counts**: HCP and controls depend on a hand only through how many
  cards of each rank it holds.  A DP over the four honour ranks deals each
  rank's four cards among North, South and the rest, then the 36 spot cards
  fill the two hands; East and West share the rest, C(26, 13) ways.
* **on the partnership's 26 cards**: sums over North and South depend only on
  the 26 cards the pair holds together.  A DP over the suits picks them (the
  honours held and how many spot cards); each set splits C(26, 13) ways into
  North and South, and the other 26 cards as many into East and West.
"""

from __future__ import annotations

from collections import defaultdict
from math import comb

import pytest

from truedeal.constraints.load import load_constraints
from truedeal.engine import Plan

#: (HCP, controls) of the ace, king, queen and jack.
HONOURS = ((4, 2), (3, 1), (2, 0), (1, 0))
SPLITS = comb(26, 13)


def _count(script: str) -> int:
    plan = Plan.build(load_constraints(script))
    assert plan.exact
    return plan.deals_total


def _north_south_by_rank_counts():
    """``(hcp N, hcp S, controls N+S) -> ways`` to deal North and South's 26 cards."""
    law: dict[tuple, int] = {(0, 0, 0, 0, 0): 1}  # (cards N, cards S, hcp N, hcp S, controls) -> ways
    for hcp, controls in HONOURS:
        step: dict[tuple, int] = defaultdict(int)
        for (n, s, hn, hs, c), ways in law.items():
            for a in range(5):
                for b in range(5 - a):
                    step[(n + a, s + b, hn + hcp * a, hs + hcp * b, c + controls * (a + b))] += ways * comb(4, a) * comb(4 - a, b)
        law = step
    out: dict[tuple, int] = defaultdict(int)
    for (n, s, hn, hs, c), ways in law.items():
        if n <= 13 and s <= 13:
            out[(hn, hs, c)] += ways * comb(36, 13 - n) * comb(23 + n, 13 - s)
    return out


def _partnership_by_suits(suits_read: tuple[int, ...]):
    """``(hcp N+S, length of each suit in ``suits_read``, in that order) -> ways``
    to choose N+S's 26 cards."""
    one_suit: dict[tuple[int, int], int] = defaultdict(int)  # (cards, hcp) -> ways, in one suit
    for mask in range(16):
        points = sum(HONOURS[r][0] for r in range(4) if mask >> r & 1)
        for spots in range(10):
            one_suit[(mask.bit_count() + spots, points)] += comb(9, spots)
    law: dict[tuple, int] = {(0, 0, ()): 1}  # (cards, hcp, lengths read) -> ways
    for suit in sorted(range(4), key=lambda k: (k in suits_read, suits_read.index(k) if k in suits_read else 0)):
        step: dict[tuple, int] = defaultdict(int)
        for (cards, hcp, lengths), ways in law.items():
            for (k, points), w in one_suit.items():
                if cards + k <= 26:
                    step[(cards + k, hcp + points, lengths + ((k,) if suit in suits_read else ()))] += ways * w
        law = step
    return {(hcp, lengths): ways for (cards, hcp, lengths), ways in law.items() if cards == 26}


@pytest.mark.parametrize(("script", "fits"), [
    ("hcp(north) >= 15 && hcp(north) <= 17 && hcp(north) + hcp(south) >= 25",
     lambda hn, hs, c: 15 <= hn <= 17 and hn + hs >= 25),
    ("hcp(north) + hcp(south) >= 20 && hcp(north) + hcp(south) <= 22 && controls(east) + controls(west) <= 3",
     lambda hn, hs, c: 20 <= hn + hs <= 22 and 12 - c <= 3),
    ("hcp(south) <= 5 && hcp(north) - hcp(south) >= 12 && controls(north) + controls(south) >= 7",
     lambda hn, hs, c: hs <= 5 and hn - hs >= 12 and c >= 7),
])
@pytest.mark.memory_mb(900)  # E+W's controls beside N+S's points: about 560 MB of its own
def test_partnership_hcp_and_controls_against_rank_counts(script, fits):
    law = _north_south_by_rank_counts()
    expected = sum(ways for key, ways in law.items() if fits(*key)) * SPLITS
    assert 0 < expected < sum(law.values()) * SPLITS
    assert _count(script) == expected


@pytest.mark.parametrize(("script", "suits", "fits"), [
    # bench/specs/fit25.json: game values with an eight-card major fit
    ("hcp(north) + hcp(south) >= 25 && (spades(north) + spades(south) >= 8 || hearts(north) + hearts(south) >= 8)",
     (0, 1), lambda hcp, s, h: hcp >= 25 and (s >= 8 or h >= 8)),
    # East-West's lengths are the rest of each suit: a nine-card club fit for them
    ("clubs(east) + clubs(west) >= 9 && hcp(north) + hcp(south) <= 19",
     (3,), lambda hcp, c: 13 - c >= 9 and hcp <= 19),
])
@pytest.mark.memory_mb(700)  # fit25: about 400 MB of its own
def test_fits_and_partnership_hcp_against_the_partnership_s_cards(script, suits, fits):
    law = _partnership_by_suits(suits)
    expected = sum(ways for (hcp, lengths), ways in law.items() if fits(hcp, *lengths)) * SPLITS * SPLITS
    assert sum(law.values()) == comb(52, 26)
    assert 0 < expected < comb(52, 26) * SPLITS * SPLITS
    assert _count(script) == expected
