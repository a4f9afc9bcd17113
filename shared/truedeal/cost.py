"""How long a spec's listing will take, estimated before it is built.

The listing's work grows with its cells (one pattern per patterned seat)
and, within each cell, with the size of the feature space its suit tables
span (:attr:`~truedeal.listing.Layout.zsize`).  The estimate counts the
pattern tuples that fit in 13 cards a suit
(:func:`~truedeal.listing.count_fitting_tuples`, milliseconds, the tuples
not made), an upper bound of the cells, and weighs the two terms with
constants measured on one core.  On the 45 builds of 0.1 s or more among
the bench specs, the corpus, the examples and the practice library
(2026-11-29), it put them at a median of 3.1 times their real time,
between 0.17 and 36 times: it errs high, which is what routing needs (the
count helpers keep their fast lane for specs estimated under a second or
two, and jobs go to the slow lane).  The product of each seat's allowed
patterns, the bound until then, erred up to 2,435 times high
(examples/four-seats.json: 4,442,760 for 1,980 tuples, 450 s for a build
of 0.2 s).  It is an estimate, never used for a result.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .constraints import ir
from .constraints.compile import compile_program
from .listing import TooWide, count_fitting_tuples, make_layout
from .spec import Spec

#: Seconds per cell (pattern combination), and per cell and point of the feature space.
PER_CELL_SECONDS = 1.5e-5
PER_FEATURE_CELL_SECONDS = 6e-7


def estimate_build_seconds(spec: Spec | ir.Program) -> float:
    """Estimated seconds to list ``spec`` on one core (``math.inf`` when it is too wide to list)."""
    program = spec if isinstance(spec, ir.Program) else spec.program()
    try:
        comp = compile_program(program)
        layout = make_layout(comp)
    except TooWide:
        return math.inf
    cells = count_fitting_tuples([comp.pattern_masks[s] for s in layout.patterned])
    return cells * PER_CELL_SECONDS + cells * layout.zsize * PER_FEATURE_CELL_SECONDS


def widest_first(parts: Sequence[ir.Program]) -> list[int]:
    """The indices of ``parts`` by the feature states of their plain
    listings, most first (too wide to lay out: first of all).  Parts that
    must all list (an either/or's branches, a split's parts) are built in
    this order, so that one too wide fails before the others are built:
    the library's Two-Way New Minor Forcing built two branches of 5-8 s
    each, twice, before a third failed in 0.6 s (48 s to plan -> 13 s)."""
    def states(part: ir.Program) -> float:
        try:
            return make_layout(compile_program(part)).zsize
        except TooWide:
            return math.inf

    width = [states(p) for p in parts]
    return sorted(range(len(parts)), key=lambda i: -width[i])
