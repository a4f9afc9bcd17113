"""Probabilities written the way a bridge player reads them.

One function, :func:`odds_text` (with its :func:`percent_text`), used by
``truedeal count``, ``truedeal status``, the API (``odds`` in a count
result) and the page, so that every surface says the same thing:
``"1 in 8,474,020 (0.0000118%)"``.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .summary import CountSummary

#: Significant figures of the percentage.
PERCENT_FIGURES = 3


def percent_text(p: Fraction | float) -> str:
    """``p`` as a percentage with 3 significant figures, no exponent unless
    it would need more than 10 leading zeros."""
    pct = float(p) * 100
    if pct == 0:
        return "0%"
    if pct < 1e-9:
        return f"{pct:.{PERCENT_FIGURES - 1}e}%"
    digits = max(0, PERCENT_FIGURES - 1 - math.floor(math.log10(pct)))
    text = f"{pct:.{digits}f}"
    if "." in text:  # 50.0 -> 50, 12.50 -> 12.5: trailing zeros say nothing here
        text = text.rstrip("0").rstrip(".")
    return text + "%"


def _one_in(p: Fraction | float) -> int:
    """1/p rounded to the nearest integer (exactly, for a Fraction)."""
    inv = 1 / Fraction(p)
    return math.floor(inv + Fraction(1, 2))


def odds_text(p: Fraction | float | None, estimate: bool = False) -> str:
    """``"1 in 291 (0.343%)"`` for the probability ``p`` (0 <= p <= 1).

    Exact for a :class:`~fractions.Fraction`; ``estimate`` prefixes
    ``"about "``.  ``p == 0`` (or None) is ``"none (0%)"``.
    """
    if p is None or p == 0:
        return "none (0%)"
    if not 0 < p <= 1:
        raise ValueError(f"a probability is between 0 and 1, got {p}")
    text = f"1 in {_one_in(p):,} ({percent_text(p)})"
    return "about " + text if estimate else text


def odds_of_summary(summary: CountSummary) -> str:
    """:func:`odds_text` of a count: exact when it is exact (a count, or a
    script's expected count with ``rnd`` weighed), an estimate otherwise."""
    if summary.probability_exact:
        num, den = (int(x) for x in summary.probability_exact.split("/"))
        return odds_text(Fraction(num, den))
    if not summary.possible:
        return odds_text(None)
    return odds_text(summary.probability or None, estimate=True)


__all__ = ["odds_text", "odds_of_summary"]
