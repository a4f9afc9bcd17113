"""A script's ``rnd`` weighed exactly, not rejected (:class:`Weighted`).

Made by :class:`~truedeal.engine.Plan` from the classes of the script's
``rnd`` numbers (:mod:`truedeal.constraints.rnd_levels`), each an exact plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .cards import D
from .class_split import kept_samplers, listing_work
from .errors import Impossible
from .listing import count_cases
from .randomness import Rng
from .sampling import WideCategorical
from .summary import CountSummary, ListingSizes

if TYPE_CHECKING:
    from .engine import Plan

#: Most deals one pick draws (a draw of more is cut into picks).
_MOST_PICKED = 200_000


class Weighted:
    """The law of a script that keeps deal d with probability
    ``w(d) = sum_c weights[c] [d fits plans[c]] / points``, drawn exactly.

    A draw picks class c with probability ``weights[c] deals(c) / sum of
    weights[c'] deals(c')`` and draws uniformly from ``plans[c]``: deal d
    comes with probability proportional to ``w(d)``, which is the script's
    law, and no deal is drawn in vain.  The classes may overlap (a deal of a
    rare kind fits every class): its weight is then the sum, as it should be.
    ``deals`` is the expected number of deals the script keeps out of all D,
    an exact fraction."""

    def __init__(self, plans: list[Plan], weights: list[int], points: int) -> None:
        self.plans, self.weights, self.points = plans, weights, points
        self.class_deals = [p.deals_total for p in plans]
        self.listed = sum(w * d for w, d in zip(weights, self.class_deals))
        self.deals = Fraction(self.listed, points)
        self.pick = WideCategorical([w * d for w, d in zip(weights, self.class_deals)]) if self.listed else None
        self.samplers_kept = kept_samplers(plans, [listing_work(p) for p in plans])

    draws_together = True  # each chunk's classes picked first, then each class drawn for all chunks

    def takes_together(self, n: int) -> bool:
        """Whether :meth:`draw_chunks` takes a draw of ``n`` deals."""
        return n <= _MOST_PICKED

    @property
    def method(self) -> str:
        """How the plan draws, as ``count`` prints it."""
        shares = ", ".join(f"{Fraction(w, self.points)}" for w in self.weights)
        listings = "1 exact listing" if len(self.plans) == 1 else f"{len(self.plans)} exact listings"
        return (f"exact: rnd() weighed, not rejected: {listings}, one per class of its numbers "
                f"(taken by {shares} of them); each deal drawn with the chance the script keeps it, no rejection")

    @property
    def cases(self) -> int:
        """Pavlicek's cases of the classes' listings, summed."""
        return sum(count_cases(p.listing) for p in self.plans)

    def summary(self, sizes: ListingSizes) -> CountSummary:
        """The expected count, exactly: ``deals`` None (no set of deals is
        counted), ``deals_expected`` the fraction, the probability exact."""
        p = self.deals / D
        expected = str(self.deals.numerator) if self.deals.denominator == 1 else f"{self.deals.numerator}/{self.deals.denominator}"
        return CountSummary(None, float(p), f"{p.numerator}/{p.denominator}", float(1 / p) if p else None, p > 0,
                            self.cases, self.method, sizes, deals_estimate=float(self.deals), deals_expected=expected,
                            branches=self.class_deals)

    def draw(self, n: int, rng: Rng) -> np.ndarray:
        """``n`` deals of the script's law (see the class doc)."""
        return np.concatenate([self.draw_chunks([(k, rng)]) for k in _picks(n)]) if n else np.zeros((0, 52), np.uint8)

    def draw_chunks(self, wanted: Sequence[tuple[int, Rng]]) -> np.ndarray:
        """The deals of each ``draw(n, rng)``, one after the other: every
        chunk's classes picked first, then each class drawn for all chunks
        (each chunk's stream read as :meth:`draw` reads it)."""
        if self.pick is None:
            raise Impossible("no deal satisfies this spec (it counts 0 deals)")
        picked = [self.pick.draw(n, rng) for n, rng in wanted]
        out = [np.empty((n, 52), np.uint8) for n, _ in wanted]
        for c, plan in enumerate(self.plans):
            rows = [np.nonzero(classes == c)[0] for classes in picked]
            for r, owners, deals in zip(rows, out, plan.draws([(len(r), rng) for r, (_, rng) in zip(rows, wanted)])):
                owners[r] = deals
            if c not in self.samplers_kept:
                plan._sampler = None  # readied again by the next call that needs it
        return np.concatenate(out)


def _picks(n: int) -> list[int]:
    """``n`` cut into picks of at most :data:`_MOST_PICKED`."""
    return [min(_MOST_PICKED, n - k) for k in range(0, n, _MOST_PICKED)]
