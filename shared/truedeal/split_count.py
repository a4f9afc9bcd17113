"""The exact count of a plan dealt partly by rejection, from a split listed one class at a time.

A plan splits a script by who holds its coin cards
(:mod:`truedeal.constraints.card_owner`, :mod:`truedeal.constraints.card_classes`)
only while the listings of all its placements fit together: it deals from
all of them (``MAX_SPLIT_ENTRIES``).  Past that it deals from a relaxed
listing by rejection, and its count is an estimate.  To count, a class's
listing is needed only until its deals are added up, so :func:`split_count`
lists the classes one at a time, keeps their deals alone, and may list
several times more; and its classes merge more placements than a plan that
deals from them can (:func:`~truedeal.constraints.card_classes.counting_classes`).
The plan deals as before (the same seeded deals); its count, and so the
share its rejection keeps, become exact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from .constraints import card_classes, card_owner, ir

if TYPE_CHECKING:
    from .engine import Plan

#: Most work the classes of a count may take together, one class at a time:
#: level-0 entries plus the entries of the suit-pair tables, projected from
#: the classes listed so far (a deterministic bound, as a split's).  A class
#: costs about 0.5 us a unit, and the memory of its listing alone.
MAX_COUNT_WORK = 15_000_000


@dataclass(frozen=True)
class SplitCount:
    """A program's deals, summed over the classes of placements of ``cards``
    (not its cases: counting them costs as much as listing)."""

    deals: int
    cards: tuple[int, ...]
    placements: int
    classes: int


def split_count(program: ir.Program, list_exactly: Callable[[ir.Program], Plan | None],
                progress: Callable[[int, int], None] | None = None) -> SplitCount | None:
    """The exact count of ``program`` by the classes of placements of its
    coin cards, each listed by ``list_exactly`` (an exact plan, or None) and
    dropped once counted; None when it has no coins, reads whole deals, a
    class is not exact, or the classes would pass the bounds.  ``progress``
    hears (classes counted, classes)."""
    cards = card_owner.split_cards(program, card_classes.MAX_CLASSED_CARDS)
    if not cards or not card_classes.classable(program):
        return None
    classes = card_classes.counting_classes(program, cards)
    deals, work = Fraction(0), 0
    for built, (part, weight, _) in enumerate(classes, 1):
        plan = list_exactly(part)
        if plan is None:
            return None
        deals += plan.deals_total * weight
        work += _work(plan)
        if work * len(classes) > MAX_COUNT_WORK * built:
            return None
        if progress is not None:
            progress(built, len(classes))
    if deals.denominator != 1:
        raise ArithmeticError(f"a split's count came out a fraction: {deals}")  # the classes' weights are wrong
    return SplitCount(int(deals), cards, sum(size for _, _, size in classes), len(classes))


def _work(plan: Plan) -> int:
    """What listing a class cost: its level-0 entries and its pair tables' entries."""
    tables = getattr(plan.listing, "pair_tables", None)
    return len(plan.listing.e_weight) + (0 if tables is None else int(tables.size))
