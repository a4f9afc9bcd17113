"""Pavlicek's listing of cases, organised by pattern tuple and factored by suit.

A *case* (Pavlicek 2008) fixes, for every constrained seat, its suit pattern
(when the seat constrains shape or suit lengths) and its A-K-Q-J holding
(when it constrains HCP).  Its weight is the number of ways to deal the
constrained seats' cards consistently; the unconstrained seats then take the
rest in ``multinomial(13u; 13, ..)`` ways.

Listing every case explicitly costs memory in proportion to their number
(62 million for his largest example).  Instead the listing here is factored:

* A **cell** is a tuple of patterns, one per patterned seat.
* Given a cell, each suit is independent apart from a small **feature
  vector** it contributes: each HCP seat's HCP in that suit and, when some
  seat is constrained by HCP alone (a *pooled* seat, whose spot cards come
  from a common pool as in Pavlicek's 36c12 formulas), the honour counts that
  decide the pool.  A suit **option** is one way to give honours to the HCP
  seats (and a count of free honours to the shape-only seats); its weight
  ``F`` counts the ways to deal that suit's cards to the patterned seats.
* Spades+hearts and diamonds+clubs are combined into dense tables ``T1`` and
  ``T2`` over the feature space (meet in the middle), and a **level-0 entry**
  ``(cell, C, z1)`` -- ``C`` the pool's honour counts, ``z1`` the
  spades+hearts features -- carries the exact weight
  ``G(C) * T1[z1] * sum(T2[z2] for z2 completing z1 within the constraints)``.

Exact integers throughout: int64 where a bound proves it cannot overflow,
Python ints above that.  Memory grows with cells x feature-space size, not
with the number of cases.
"""

from .build import build_listing, list_cells
from .cases import count_cases
from .cells import checked_cells, count_fitting_tuples, enumerate_cells, slice_of_cells
from .layout import MAX_CELLS, MAX_ENTRIES, MAX_FEATURE_CELLS, Layout, TooWide, make_layout
from .model import Listing
from .tables import prefix_sums

__all__ = [
    "MAX_CELLS",
    "MAX_ENTRIES",
    "MAX_FEATURE_CELLS",
    "Layout",
    "Listing",
    "TooWide",
    "build_listing",
    "checked_cells",
    "count_cases",
    "count_fitting_tuples",
    "enumerate_cells",
    "list_cells",
    "make_layout",
    "prefix_sums",
    "slice_of_cells",
]
