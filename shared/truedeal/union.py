"""A plan's either/or, listed branch by branch (:class:`Union`).

Made by :class:`~truedeal.engine.Plan` for an either/or across seats
(counted by inclusion-exclusion or disjoint parts), a split by who holds some cards, and a split by the
patterns of a seat (:mod:`truedeal.either_or`).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from .cards import SEAT_NAMES, card_names
from .class_split import kept_samplers, listing_work
from .constraints import ir
from .errors import Impossible
from .listing import count_cases
from .randomness import Rng
from .summary import CountSummary, ListingSizes

if TYPE_CHECKING:
    from .engine import Plan


#: Most outcomes one pass of a draw picks.
_MOST_PICKED = 200_000


class Union:
    """An either/or listed branch by branch.

    A draw picks branch i with probability ``deals(i) / sum(deals)``, deals
    from it exactly, and keeps the deal only if it fits no earlier branch: so
    each deal of the union comes from exactly one branch (its first), with
    the same probability as every other.  The share kept is exactly
    ``union deals / sum(deals)``, at least one over the number of branches.

    Branches split by who holds the cards ``split_on``, or by the patterns
    of seat ``patterns_of``, are disjoint: every deal drawn is kept, and
    nothing is checked.  A split's branch may stand for a class of
    placements that count alike (:mod:`truedeal.constraints.card_classes`):
    ``moves[i][j]`` carries a deal of branch i onto its placement j, and
    each placement is an outcome of the draw weighing the branch's deals.

    A disjoint union keeps between draws the samplers of the branches that
    fit :data:`~truedeal.class_split.MAX_KEPT_SAMPLERS` and readies the
    others again for each call that needs them (the practice library's
    leveled 1NT opener, 249 listings, peaked at 1.98 GB to deal 10 deals,
    now at 0.61 GB), and draws several chunks branch
    by branch (:meth:`draw_chunks`): each chunk's stream read in the same
    order, so the same deals as one chunk at a time."""

    def __init__(self, plans: list[Plan], conds: list[ir.Cond], deals: int | None, split_on: tuple[int, ...] = (),
                 patterns_of: int | None = None, moves: list[np.ndarray] | None = None) -> None:
        self.plans, self.conds, self.split_on = plans, conds, split_on
        self.patterns_of = patterns_of
        self.moves = moves
        sizes = [1] * len(plans) if moves is None else [len(m) for m in moves]
        self.branch_deals = [p.deals_total * k for p, k in zip(plans, sizes)]
        self.listed = sum(self.branch_deals)
        self.deals = self.listed if deals is None else deals
        # one outcome per placement: branch i's k placements are k outcomes of its deals each
        self.branch_of = np.repeat(np.arange(len(plans)), sizes)
        self.member_of = np.concatenate([np.arange(k) for k in sizes]) if plans else np.zeros(0, np.intp)
        self.pick = None if not self.listed else _categorical([p.deals_total for p, k in zip(plans, sizes) for _ in range(k)])
        self.samplers_kept = kept_samplers(plans, [listing_work(p) for p in plans])

    @property
    def draws_together(self) -> bool:
        """Whether :meth:`draw_chunks` draws several chunks as :meth:`draw`
        draws each: a disjoint union, whose draws keep every deal."""
        return self.disjoint

    def takes_together(self, n: int) -> bool:
        """Whether :meth:`draw_chunks` takes a draw of ``n`` deals (one pick's worth)."""
        return self.draws_together and _drawn(n) <= _MOST_PICKED

    @property
    def disjoint(self) -> bool:
        """No deal fits two branches (a split), so none is checked."""
        return bool(self.split_on) or self.patterns_of is not None

    @property
    def acceptance(self) -> Fraction:
        return Fraction(self.deals, self.listed) if self.listed else Fraction(0)

    @property
    def method(self) -> str:
        """How the union is listed and drawn, as ``count`` prints it."""
        method = (f"exact: an either/or of {len(self.plans)} exact listings; a deal drawn from one is kept "
                  f"only if it fits no earlier one (keeps exactly {float(self.acceptance):.2%})")
        if self.split_on:
            names = card_names(self.split_on)
            method = (f"exact: split by who holds {names}, {len(self.plans)} exact listings with those cards "
                      "predealt, no rejection")
            if self.moves is not None:
                method = (f"exact: split by who holds {names}, {len(self.branch_of):,} placements in "
                          f"{len(self.plans)} classes that count alike, each listed once with its cards predealt, "
                          "no rejection")
        if self.patterns_of is not None:
            method = (f"exact: split by the patterns of {SEAT_NAMES[self.patterns_of]}, {len(self.plans)} exact "
                      "listings, no rejection")
        return method

    @property
    def cases(self) -> int:
        """Pavlicek's cases of the branches' listings, summed."""
        return sum(count_cases(p.listing) for p in self.plans)

    def summary(self, sizes: ListingSizes) -> CountSummary:
        return CountSummary.exact(self.deals, self.cases, sizes, self.method,
                                  branches=self.branch_deals)

    def draw(self, n: int, rng: Rng) -> np.ndarray:
        from .constraints.evaluate import evaluate_cond

        if self.pick is None:
            raise Impossible("no deal satisfies this spec (it counts 0 deals)")
        if self.disjoint and _drawn(n) <= _MOST_PICKED:
            return self.draw_chunks([(n, rng)])
        kept: list[np.ndarray] = []
        have = 0
        while have < n:
            m = max(64, int((n - have) / float(self.acceptance) * 1.1))
            outcome = self.pick.draw(min(m, _MOST_PICKED), rng)
            which = self.branch_of[outcome]
            owners = np.empty((len(which), 52), np.uint8)
            keep = np.zeros(len(which), bool)
            for i, plan in enumerate(self.plans):
                rows = np.nonzero(which == i)[0]
                if not len(rows):
                    continue
                owners[rows] = self._moved(i, plan._draw(len(rows), rng), self.member_of[outcome[rows]])
                earlier = np.zeros(len(rows), bool)
                for cond in self.conds[:i] if not self.disjoint else ():
                    earlier |= evaluate_cond(owners[rows], cond)
                keep[rows] = ~earlier
            kept.append(owners[keep])
            have += int(keep.sum())
        self._drop_samplers()
        return np.concatenate(kept)[:n]

    def _drop_samplers(self) -> None:
        """Let go of the samplers that are not kept: readied again by the next
        call that needs them (a union of unions held all 27 of one library
        script's, 9 GB)."""
        for i, plan in enumerate(self.plans):
            if i not in self.samplers_kept:
                plan._sampler = None

    def draw_chunks(self, wanted: Sequence[tuple[int, Rng]]) -> np.ndarray:
        """The deals of each ``draw(n, rng)`` of a disjoint union, one after
        the other, drawn branch by branch: a branch whose sampler is not kept
        is readied once for all (each chunk's stream read as :meth:`draw` reads it)."""
        if self.pick is None:
            raise Impossible("no deal satisfies this spec (it counts 0 deals)")
        if not self.disjoint or any(_drawn(n) > _MOST_PICKED for n, _ in wanted):
            raise ValueError("draw_chunks: a union that checks its deals, or a draw past one pick, draws one at a time")
        picked = [self.pick.draw(_drawn(n), rng) for n, rng in wanted]
        out = [np.empty((len(p), 52), np.uint8) for p in picked]
        for i, plan in enumerate(self.plans):
            rows = [np.nonzero(self.branch_of[outcome] == i)[0] for outcome in picked]
            drawn = plan.draws([(len(r), rng) for r, (_, rng) in zip(rows, wanted)])
            for r, outcome, owners, deals in zip(rows, picked, out, drawn):
                if len(r):
                    owners[r] = self._moved(i, deals, self.member_of[outcome[r]])
            if i not in self.samplers_kept:
                plan._sampler = None  # readied again by the next call that needs it
        return np.concatenate([owners[:n] for (n, _), owners in zip(wanted, out)])

    def _moved(self, branch: int, owners: np.ndarray, members: np.ndarray) -> np.ndarray:
        """``owners`` (deals of ``branch``'s listing) carried onto the placements ``members``."""
        if self.moves is None or len(self.moves[branch]) == 1:
            return owners
        out = np.empty_like(owners)
        np.put_along_axis(out, self.moves[branch][members], owners, axis=1)
        return out


def _drawn(n: int) -> int:
    """Outcomes a disjoint union picks for ``n`` deals (a tenth more, as its first pass always has)."""
    return max(64, int(n * 1.1))


def _categorical(weights: list[int]):
    from .sampling import WideCategorical

    return WideCategorical(weights)
