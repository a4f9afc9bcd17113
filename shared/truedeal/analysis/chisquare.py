"""Pearson's chi-square goodness of fit, with small expected bins merged.

The p-value is ``scipy.stats.chi2.sf`` (the regularised upper incomplete
gamma function); scipy is a runtime dependency for that one call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2

#: Bins expected to hold fewer deals than this are merged with their neighbours
#: (Cochran's rule of thumb for the chi-square approximation).
MIN_EXPECTED = 5.0


@dataclass(frozen=True)
class ChiSquare:
    """One test: statistic, degrees of freedom, p-value, and the merged bins."""

    name: str
    statistic: float
    dof: int
    p_value: float
    labels: list[str]
    observed: list[int]
    expected: list[float]

    def to_json(self) -> dict:
        return {"name": self.name, "statistic": self.statistic, "dof": self.dof, "p_value": self.p_value}


def merge_bins(labels: list[str], observed, expected, min_expected: float = MIN_EXPECTED):
    """Merge consecutive bins until each expects at least ``min_expected``.

    Bins are taken in the given order (so ordered values merge with their
    neighbours); a short tail is merged into the last full bin.
    """
    groups, out_o, out_e = [], [], []
    cur_l, cur_o, cur_e = [], 0, 0.0
    for lab, o, e in zip(labels, observed, expected):
        cur_l.append(str(lab))
        cur_o += int(o)
        cur_e += float(e)
        if cur_e >= min_expected:
            groups.append(cur_l)
            out_o.append(cur_o)
            out_e.append(cur_e)
            cur_l, cur_o, cur_e = [], 0, 0.0
    if cur_l:
        if groups:
            groups[-1] += cur_l
            out_o[-1] += cur_o
            out_e[-1] += cur_e
        else:
            groups, out_o, out_e = [cur_l], [cur_o], [cur_e]
    return [_span(g) for g in groups], out_o, out_e


def _span(labels: list[str]) -> str:
    return labels[0] if len(labels) == 1 else f"{labels[0]}..{labels[-1]}"


def chi_square(name: str, labels, observed, probabilities, min_expected: float = MIN_EXPECTED) -> ChiSquare:
    """Test observed counts against exact probabilities (which must sum to 1).

    Observations in a bin of probability 0 make the test fail outright
    (p = 0): the sampler produced something the spec forbids.
    """
    observed = np.asarray(observed, dtype=np.int64)
    probs = np.asarray([float(p) for p in probabilities])
    n = int(observed.sum())
    if (observed[probs == 0] > 0).any():
        return ChiSquare(name, float("inf"), max(len(labels) - 1, 0), 0.0, list(map(str, labels)), observed.tolist(), (probs * n).tolist())
    keep = probs > 0
    labs = [str(label) for label, k in zip(labels, keep) if k]
    lab, obs, exp = merge_bins(labs, observed[keep], probs[keep] * n, min_expected)
    obs_a, exp_a = np.array(obs, dtype=float), np.array(exp)
    stat = float(((obs_a - exp_a) ** 2 / exp_a).sum()) if len(exp) > 1 else 0.0
    dof = len(exp) - 1
    p = float(chi2.sf(stat, dof)) if dof > 0 else 1.0
    return ChiSquare(name, stat, dof, p, lab, obs, exp)
