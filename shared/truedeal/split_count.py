"""The exact count of a plan dealt partly by rejection, from a split listed one class at a time.

A plan splits a script by who holds its coin cards
(:mod:`truedeal.constraints.card_owner`, :mod:`truedeal.constraints.card_classes`)
only while the listings of all its placements fit together: it deals from
all of them (``MAX_SPLIT_ENTRIES``).  Past that it deals from a relaxed
listing by rejection, and its count is an estimate.  To count, a class's
listing is needed only until its deals are added up, so :func:`split_count`
lists the classes one at a time, keeps their deals alone, and may list ten
times more.  The plan deals as before (the same seeded deals); its count,
and so the share its rejection keeps, become exact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .constraints import card_classes, card_owner, ir

if TYPE_CHECKING:
    from .engine import Plan

#: Most level-0 entries the classes of a count list, one at a time
#: (deterministic bounds, projected from the classes listed so far, as a
#: split's): 1 to 6 us an entry, and the memory of one class's listing.
MAX_COUNT_ENTRIES = 10_000_000
#: ... and most boxes they test (about 4 us a box).
MAX_COUNT_BOXES = 5_000_000


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
    classes = card_classes.placement_classes(program, cards)
    deals = entries = boxes = 0
    for built, c in enumerate(classes, 1):
        plan = list_exactly(c.program)
        if plan is None:
            return None
        deals += plan.deals_total * c.size
        entries += len(plan.listing.e_weight)
        boxes += getattr(plan.listing, "grid_points", 0)
        if entries * len(classes) > MAX_COUNT_ENTRIES * built or boxes * len(classes) > MAX_COUNT_BOXES * built:
            return None
        if progress is not None:
            progress(built, len(classes))
    return SplitCount(deals, cards, sum(c.size for c in classes), len(classes))
