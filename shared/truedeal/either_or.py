"""Either/ors that a plan lists branch by branch.

One listing of ``common AND (b1 OR b2 ...)`` must hold every branch's
features at once.  Two kinds of either/or are cheaper listed a branch at a
time, each branch with ``common``:

* branches about **different seats** ("the opener is North or South"), which
  one listing would cross with every pattern of both seats
  (:func:`cross_seat_branches`; counted by inclusion-exclusion, or by disjoint parts past two branches);
* branches about **one seat** that allow it **disjoint patterns** ("a calm
  opponent": balanced with at most 10 HCP, or unbalanced with at most 7 and
  no two of the top four cards in any suit), where each branch reads only
  its own features of the seat (:func:`pattern_branches`; no deal fits two
  branches, so the count is the sum and a draw keeps every deal).
"""

from __future__ import annotations

import numpy as np

from .constraints import ir
from .constraints.compile import compile_program
from .relaxation import SeatsRead

#: Most branches of one either/or that a plan lists one by one.
MAX_BRANCHES = 6


def cross_seat_branches(program: ir.Program) -> tuple[list, list] | None:
    """``(common, branches)`` when the condition is ``common AND (b1 OR b2 ...)``
    with branches about different seats, else None."""
    reads = SeatsRead()
    for common, branches in _either_ors(program):
        if len({reads(b)[1] for b in branches}) > 1:
            return common, branches
    return None


def pattern_branches(program: ir.Program, across_seats: bool = False) -> list[tuple[list, list, int]]:
    """Every ``(common, branches, seat)`` where the condition is ``common AND
    (b1 OR b2 ...)``, the branches are about ``seat`` alone, some read its
    cards (an either/or of shapes alone costs a listing nothing), and no two
    allow it a common pattern.  With ``across_seats``, the branches may read
    other seats too ("East's longest suit, and South's stopper in it"):
    ``seat`` is then one that every branch reads."""
    reads = SeatsRead()
    out = []
    for common, branches in _either_ors(program):
        seats = {reads(b)[1] for b in branches}
        if not any(reads(b)[0] for b in branches):
            continue
        if across_seats:
            out += [(common, branches, s) for s in sorted(frozenset.intersection(*seats))
                    if _disjoint([allowed_patterns(b, s) for b in branches])][:1]
        elif len(seats) == 1 and len(seat := next(iter(seats))) == 1:
            (s,) = seat
            if _disjoint([allowed_patterns(b, s) for b in branches]):
                out.append((common, branches, s))
    return out


def _either_ors(program: ir.Program) -> list[tuple[list, list]]:
    items = ir.conjuncts(program.condition)
    return [(items[:k] + items[k + 1 :], list(item.items)) for k, item in enumerate(items)
            if isinstance(item, ir.Or) and 1 < len(item.items) <= MAX_BRANCHES]


def allowed_patterns(cond: ir.Cond, seat: int) -> np.ndarray | None:
    """The patterns of ``seat`` that ``cond`` may allow, a mask (None: it names none)."""
    return compile_program(ir.Program(condition=cond)).pattern_masks.get(seat)


def _disjoint(masks: list[np.ndarray | None]) -> bool:
    if any(m is None for m in masks):
        return False
    seen = np.zeros_like(masks[0])
    for m in masks:
        if (seen & m).any():
            return False
        seen |= m
    return True
