"""Our deals from dealer scripts against endplay's rejection dealer.

On scripts loose enough for rejection, endplay's dealer (which deals at random
and throws away what does not fit) and ours give the same law of each seat's
HCP and suit lengths (two-sample chi-square, fixed seeds).  That each of our
deals satisfies its script under endplay is ``test_script_deals.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chi2_contingency

from endplay_oracle import endplay_interpreter
from truedeal.constraints.dealer import load_program
from truedeal.engine import Plan
from truedeal.evaluate import hcp, lengths
from truedeal.formats.deal import parse_deal

endplay_types = pytest.importorskip("endplay.types")
endplay_dealer = pytest.importorskip("endplay.dealer")

SCRIPTS = sorted((Path(__file__).parent / "scripts").glob("*.dlr"))
#: Loose scripts (each fits more than 1% of deals), for endplay's rejection dealer.
LOOSE = ("01_", "09_", "15_", "34_", "46_")
N_DEALS = 1500


def _ours(path: Path, n: int, seed: str) -> np.ndarray:
    return np.concatenate(list(Plan.build(load_program(path)).deals(n, seed=seed)))


def _owners(deal) -> np.ndarray:
    """An endplay Deal as our owners row, through its PBN text."""
    return parse_deal(deal.to_pbn())


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


@pytest.mark.parametrize("prefix", LOOSE)
def test_feature_laws_agree_with_endplays_rejection_dealer(prefix):
    path = next(p for p in SCRIPTS if p.name.startswith(prefix))
    interp, cond, _ = endplay_interpreter(path.read_text())
    dealt = endplay_dealer.generate_deals(lambda d: bool(interp.evaluate(cond, d)), produce=N_DEALS, seed=7, max_attempts=-1)
    theirs = np.array([_owners(d) for d in dealt])
    ours = _ours(path, N_DEALS, seed="two-sample")
    assert len(theirs) == N_DEALS
    p_values = []
    for seat in range(4):
        features = [hcp(ours, seat), *lengths(ours, seat).T], [hcp(theirs, seat), *lengths(theirs, seat).T]
        for a, b in zip(*features):
            table = _merged_table(a, b)
            if table.shape[1] > 1:
                p_values.append(chi2_contingency(table)[1])
    # 20 tests per script: a Bonferroni-style floor, far below what a real difference gives
    assert min(p_values) > 1e-4, min(p_values)
