"""Our deals from dealer scripts against endplay's rejection dealer.

On scripts loose enough for rejection, endplay's dealer (which deals at random
and throws away what does not fit) and ours give the same law of each seat's
HCP, controls, losers, suit lengths and HCP in each suit, and of the
North-South sums of HCP and of each suit's length (two-sample chi-square,
fixed seeds).  The scripts constrain those features: one seat's HCP, shape,
controls, losers, points or HCP in a suit, partnership sums and a fit, an
either/or across seats, and predealt cards.  That each of our
deals satisfies its script under endplay is ``test_script_deals.py``: its
check is made here on these scripts' deals, so that their plans (07 and 71
take seconds) are built once.  endplay's hand values are remembered by
deal across the module (``endplay_oracle``'s memo): its dealer,
seeded alike, shuffles the same deals for every script without predealt
cards, and its hand evaluators took a third of this module's time.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chi2_contingency

from endplay_oracle import endplay_interpreter
from truedeal.constraints.dealer import load_program
from truedeal.engine import Plan
from truedeal.formats.deal import deal_string, parse_deal

endplay_types = pytest.importorskip("endplay.types")
endplay_dealer = pytest.importorskip("endplay.dealer")

SCRIPTS = sorted((Path(__file__).parent / "scripts").glob("*.dlr"))
#: Loose scripts (each fits more than 1% of deals), for endplay's rejection dealer.
LOOSE = ("01_", "07_", "09_", "12_", "13_", "15_", "34_", "46_", "71_")
#: Resident memory (MB) of the costlier scripts: 07 lists a partnership sum and a fit.
MEMORY_MB = {"07_": 900}
#: Deals a side, for endplay's rejection dealer (the suite's slowest oracle: 1,500 took 60 s of a slow machine).
N_DEALS = 1000
RANKS = "AKQJT98765432"


#: endplay's hand values on the deals its dealer shuffled (and on ours), for every test of
#: the module: a value endplay computed on a deal for one script is read again for the next.
_ENDPLAY_VALUES: dict = {}


@pytest.fixture(autouse=True, scope="module")
def _endplay_values_go_with_the_module():
    yield
    _ENDPLAY_VALUES.clear()


def _ours(program, n: int, seed: str) -> np.ndarray:
    return np.concatenate(list(Plan.build(program).deals(n, seed=seed)))


def assert_each_deal_satisfies(interp, cond, predeal, owners: np.ndarray) -> None:
    """Each deal, as truedeal writes it, satisfies the script under endplay's
    interpreter (``cond``: None where the script has no condition) and gives
    each seat its predealt cards (``predeal``: the program's), in endplay's Deal."""
    Card, Player = endplay_types.Card, endplay_types.Player
    for row in owners:
        deal = endplay_types.Deal(deal_string(row))
        assert cond is None or interp.evaluate(cond, deal), deal_string(row)
        for seat, cards in predeal:
            hand = deal[Player(seat)]
            for c in cards:
                name = "SHDC"[c % 4] + RANKS[c // 4]
                assert Card(name) in hand, (name, deal_string(row))


def _owners(deal) -> np.ndarray:
    """An endplay Deal as our owners row, through its PBN text."""
    return parse_deal(deal.to_pbn())


def _predeal(program):
    """The script's predealt cards as an endplay Deal (PBN hands, North first)."""
    held = {seat: set(cards) for seat, cards in program.predeal}
    hands = [".".join("".join(r for i, r in enumerate(RANKS) if 4 * i + k in held.get(seat, ())) for k in range(4))
             for seat in range(4)]
    return endplay_types.Deal("N:" + " ".join(hands))


def _features(owners: np.ndarray) -> list[np.ndarray]:
    """The laws compared, each an array over the deals: per seat its HCP,
    controls and losers (dealer's), and per suit its length and HCP; then
    North-South's HCP and their length in each suit."""
    held = (owners[:, None, :] == np.arange(4)[None, :, None]).reshape(len(owners), 4, 13, 4)  # deal, seat, rank, suit
    points = np.array([4, 3, 2, 1] + [0] * 9)[None, None, :, None]
    length, suit_hcp = held.sum(axis=2), (held * points).sum(axis=2)  # deal, seat, suit
    a, k, q = (held[:, :, r].astype(int) for r in range(3))
    losers = np.select([length == 0, length == 1, length == 2], [0, 1 - a, 2 - a - k], 3 - a - k - q).sum(axis=2)
    controls = (2 * a + k).sum(axis=2)
    per_seat = [x[:, seat] for seat in range(4) for x in (suit_hcp.sum(axis=2), controls, losers)]
    per_suit = [x[:, seat, suit] for seat in range(4) for suit in range(4) for x in (length, suit_hcp)]
    north_south = [suit_hcp[:, 0].sum(axis=1) + suit_hcp[:, 2].sum(axis=1), *(length[:, 0] + length[:, 2]).T]
    return per_seat + per_suit + north_south


def _merged_table(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A 2 x k table of counts, merging values until each column expects >= 5."""
    values = np.union1d(a, b)
    cols, acc = [], np.zeros(2)
    for v in values:
        acc += [(a == v).sum(), (b == v).sum()]
        if acc.sum() >= 10:
            cols.append(acc)
            acc = np.zeros(2)
    if acc.sum() and cols:
        cols[-1] = cols[-1] + acc
    return np.array(cols).T


@pytest.mark.parametrize("prefix", [pytest.param(p, marks=[pytest.mark.memory_mb(MEMORY_MB[p])] if p in MEMORY_MB else [])
                                    for p in LOOSE])
def test_feature_laws_agree_with_endplays_rejection_dealer(prefix):
    path = next(p for p in SCRIPTS if p.name.startswith(prefix))
    program = load_program(path)
    interp, cond, _ = endplay_interpreter(path.read_text(), _ENDPLAY_VALUES)
    ours = _ours(program, N_DEALS, seed="two-sample")
    assert len(ours) == N_DEALS
    assert_each_deal_satisfies(interp, cond, program.predeal, ours[:200])  # test_script_deals' check, on as many deals
    dealt = endplay_dealer.generate_deals(lambda d: bool(interp.evaluate(cond, d)), predeal=_predeal(program), produce=N_DEALS,
                                          seed=7, max_attempts=-1)
    theirs = np.array([_owners(d) for d in dealt])
    assert len(theirs) == N_DEALS
    p_values = []
    for a, b in zip(_features(ours), _features(theirs)):
        table = _merged_table(a, b)
        if table.shape[1] > 1:
            p_values.append(chi2_contingency(table)[1])
    # 49 laws per script: a Bonferroni-style floor (5e-3 for the script as a
    # whole), far below what a real difference gives (1e-40 for 15-18 HCP
    # where the script says 15-17, at 1,500 deals a side; a chi-square grows
    # with the deals, so about 1e-27 at 1,000)
    assert min(p_values) > 1e-4, min(p_values)
