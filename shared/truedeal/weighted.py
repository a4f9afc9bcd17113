"""A script's ``rnd`` weighed exactly, not rejected (:class:`Weighted`).

Made by :class:`~truedeal.engine.Plan` from the classes of the script's
``rnd`` numbers (:mod:`truedeal.constraints.rnd_levels`), each an exact
plan, or each a listing of the class with some seats relaxed
(:mod:`truedeal.relaxation`) where no exact plan lists the script.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .cards import D
from .errors import Impossible
from .listing import count_cases
from .randomness import Rng, SeededBits
from .sampling import WideCategorical
from .summary import CountSummary, ListingSizes, Rejection, expected_deals, pilot_stderr

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
    an exact fraction (where a class rejects, the listed deals so weighed).

    Where a class's plan is not exact (it lists the class with some seats
    relaxed, and checks them), a draw is a pass of rejection: it picks
    class c by ``weights[c]`` times the deals c's listing holds, draws one
    of them and keeps it only if it fits class c; a deal it does not keep
    is drawn again from a new pick.  A deal is then kept with probability
    proportional to ``w(d)`` still, and only the relaxed parts are
    rejected, never ``rnd``.  :meth:`measure` gives the share kept."""

    def __init__(self, plans: list[Plan], weights: list[int], points: int, either_or: bool = False) -> None:
        """``either_or``: the classes are an either/or's branches, each weighed
        once, each rejecting the deals of the earlier ones (not ``rnd``'s)."""
        self.plans, self.weights, self.points, self.either_or = plans, weights, points, either_or
        self.exact = all(p.exact for p in plans)
        self.class_deals = [p.deals_total if p.exact else p.listed_deals for p in plans]  # (listed, where not exact)
        self.listed = sum(w * d for w, d in zip(weights, self.class_deals))
        self.deals = Fraction(self.listed, points)
        self.pick = WideCategorical([w * d for w, d in zip(weights, self.class_deals)]) if self.listed else None
        # every class's sampler kept between draws (at most 8 classes; a split
        # among them keeps its own as it must): readying them again for each
        # call cost 2N and Transfers 11x its draws
        self.samplers_kept = frozenset(range(len(plans)))
        self.acceptance, self.pilot_draws, self.pass_seconds = 1.0, 0, 0.0

    @property
    def draws_together(self) -> bool:
        """Exact classes: each chunk's classes picked first, then each class drawn for all chunks."""
        return self.exact

    def takes_together(self, n: int) -> bool:
        """Whether :meth:`draw_chunks` takes a draw of ``n`` deals."""
        return self.exact and n <= _MOST_PICKED

    @property
    def relaxed(self) -> list[str]:
        """What the classes' plans leave to rejection, each part once."""
        return list(dict.fromkeys(part for p in self.plans for part in p.relaxed))

    @property
    def method(self) -> str:
        """How the plan draws, as ``count`` prints it."""
        if self.either_or:
            return (f"an either/or of {len(self.plans)} exact listings, too wide to count together: a deal drawn from "
                    f"one is kept only if it fits no earlier one (uniform over the either/or); rejection for "
                    + "; ".join(self.relaxed))
        shares = ", ".join(f"{Fraction(w, self.points)}" for w in self.weights)
        exact = "exact " if self.exact else ""
        listings = f"1 {exact}listing" if len(self.plans) == 1 else f"{len(self.plans)} {exact}listings"
        method = f"rnd() weighed, not rejected: {listings}, one per class of its numbers (taken by {shares} of them)"
        if not self.exact:
            return f"{method}; rejection for " + "; ".join(self.relaxed)
        return f"exact: {method}; each deal drawn with the chance the script keeps it, no rejection"

    @property
    def cases(self) -> int:
        """Pavlicek's cases of the classes' listings, summed."""
        return sum(count_cases(p.listing) for p in self.plans)

    def summary(self, sizes: ListingSizes) -> CountSummary:
        """The expected count, exactly: ``deals`` None (no set of deals is
        counted), ``deals_expected`` the fraction, the probability exact;
        where a class is not exact, an estimate from :meth:`measure`."""
        if not self.exact:
            return self._estimate(sizes)
        p = self.deals / D
        expected = str(expected_deals(self.listed, self.points))
        return CountSummary(None, float(p), f"{p.numerator}/{p.denominator}", float(1 / p) if p else None, p > 0,
                            self.cases, self.method, sizes, deals_estimate=float(self.deals), deals_expected=expected,
                            branches=self.class_deals)

    def _estimate(self, sizes: ListingSizes) -> CountSummary:
        a = self.acceptance
        se = pilot_stderr(a, self.pilot_draws)
        listed = float(self.deals)  # the listed deals, weighed
        estimate = listed * a
        rejection = Rejection([], self.relaxed, a, se, self.pilot_draws, int(self.deals), self.cases)
        return CountSummary(None, estimate / D, None, (D / estimate) if estimate else None, estimate > 0, None,
                            self.method, sizes, rejection, deals_estimate=estimate, deals_estimate_stderr=listed * se)

    def measure(self, draws: int) -> None:
        """The share of picked deals that their classes keep, on ``draws``
        seeded draws (and a pass's time per draw); 1.0 when every class is exact."""
        if self.exact or self.pick is None:
            return
        t0 = time.perf_counter()
        kept = len(self._pass(draws, Rng(SeededBits("truedeal/pilot"))))
        self.pass_seconds = (time.perf_counter() - t0) / draws
        self.acceptance, self.pilot_draws = kept / draws, draws

    def draw(self, n: int, rng: Rng, enough: int | None = None) -> np.ndarray:
        """``n`` deals of the script's law (see the class doc); where classes
        reject, passes until ``enough`` are kept (their sizes depend on ``n`` alone)."""
        if not n:
            return np.zeros((0, 52), np.uint8)
        if self.exact:
            return np.concatenate([self.draw_chunks([(k, rng)]) for k in _picks(n)])
        kept: list[np.ndarray] = []
        have = 0
        while have < (n if enough is None else enough):
            kept.append(self._pass(min(max(64, int(n / max(self.acceptance, 1e-5) * 1.1)), _MOST_PICKED), rng))
            have += len(kept[-1])
        return np.concatenate(kept)[:n]

    def _pass(self, m: int, rng: Rng) -> np.ndarray:
        """One pass of rejection: ``m`` picks, each class's listed deals, those that fit their class."""
        if self.pick is None:
            raise Impossible("no deal satisfies this spec (it counts 0 deals)")
        picked = self.pick.draw(m, rng)
        owners, keep = np.empty((m, 52), np.uint8), np.ones(m, bool)
        for c, plan in enumerate(self.plans):
            rows = np.nonzero(picked == c)[0]
            if len(rows):
                owners[rows] = plan._listed_draw(len(rows), rng)
                if not plan.exact:
                    keep[rows] = plan._checks(owners[rows], rng)
        return owners[keep]

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
        return np.concatenate(out)


def _picks(n: int) -> list[int]:
    """``n`` cut into picks of at most :data:`_MOST_PICKED`."""
    return [min(_MOST_PICKED, n - k) for k in range(0, n, _MOST_PICKED)]
