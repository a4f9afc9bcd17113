"""Broad shapes, counted exactly by what they exclude.

"East opens one of a suit (12-21, and not 4=4=3=2), South overcalls (8-16
with a five-card suit), West 0-10": East's shape allows 559 patterns and
South's 544, so a listing that holds both crosses hundreds of patterns of
each with three point counts, past its bounds.  What the shapes exclude is
small: one pattern of East's, sixteen of South's.

With ``A`` the condition less its broad shapes ``X_s`` (one seat each),
every deal of ``A`` that fails some ``X_s`` is counted by the listings of
``A`` with the failed shapes' complements, by inclusion-exclusion::

    #(A and X_1 and X_2) = #A - #(A and not X_1) - #(A and not X_2)
                              + #(A and not X_1 and not X_2)

Each term lists only the few patterns excluded (or none, for ``A``), so the
count is exact.  A conjunct may read the seat's points too: "not a 1NT
opener", ``!(hcp(east) >= 15 && hcp(east) <= 17 && balanced)``, excludes
only balanced patterns (and there only 15-17 HCP), so its term lists three
shape classes.  Deals are drawn from ``A``'s listing and kept where the
shapes hold: rejection, with an acceptance that is exact (the count over
``A``'s).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from .cards import SEAT_NAMES
from .constraints import ir
from .either_or import allowed_patterns
from .relaxation import SeatsRead

#: A shape is broad when what it excludes is at most this share of what it allows (patterns).
BROAD_SHARE = 1 / 3
#: Most seats whose shapes are complemented: 2**k listings in all.
MAX_SEATS = 3


@dataclass(frozen=True)
class ShapeComplements:
    """``program`` as ``kept`` (the condition less the broad shapes) and, per
    seat of ``seats``, the broad shapes' conjunction ``shapes[i]``."""

    program: ir.Program
    kept: ir.Program
    seats: tuple[int, ...]
    shapes: tuple[ir.Cond, ...]

    def terms(self) -> Iterator[tuple[int, ir.Program]]:
        """``(sign, program)`` of inclusion-exclusion past ``kept``: ``kept``
        with the complements of each non-empty set of the broad shapes."""
        for size in range(1, len(self.seats) + 1):
            for chosen in itertools.combinations(self.shapes, size):
                negations = tuple(ir.Not(shape) for shape in chosen)
                yield (-1) ** size, ir.Program(condition=ir.And((self.kept.condition, *negations)),
                                               predeal=self.program.predeal)

    def describe(self) -> str:
        """The rejected part, as a plan's method names it."""
        seats = ", ".join(SEAT_NAMES[s] for s in self.seats)
        return f"the broad shapes of {seats} (counted exactly by the patterns they exclude)"


def broad_shapes(program: ir.Program) -> ShapeComplements | None:
    """The split of ``program`` (see the module doc), or None where no
    conjunct of its condition reads one seat and excludes at most
    :data:`BROAD_SHARE` as many of its patterns as it allows, or more than
    :data:`MAX_SEATS` seats have such conjuncts."""
    if ir.opaque_names(program.condition):
        return None
    items = ir.conjuncts(program.condition)
    reads = SeatsRead()
    by_seat: dict[int, list[ir.Cond]] = {}
    for item in items:
        seat = _one_seat(item, reads)
        if seat is not None and _broad(item, seat):
            by_seat.setdefault(seat, []).append(item)
    if not by_seat or len(by_seat) > MAX_SEATS:
        return None
    chosen = {id(x) for xs in by_seat.values() for x in xs}
    kept = ir.Program(condition=ir.And(tuple(x for x in items if id(x) not in chosen)), predeal=program.predeal)
    seats = tuple(sorted(by_seat))
    return ShapeComplements(program, kept, seats, tuple(_all(by_seat[s]) for s in seats))


def _one_seat(item: ir.Cond, reads: SeatsRead) -> int | None:
    """The one seat ``item`` reads, else None."""
    _, anything = reads(item)
    return next(iter(anything)) if len(anything) == 1 else None


def _broad(item: ir.Cond, seat: int) -> bool:
    allowed, excluded = allowed_patterns(item, seat), allowed_patterns(ir.Not(item), seat)
    return allowed is not None and excluded is not None and 0 < excluded.sum() <= allowed.sum() * BROAD_SHARE


def _all(items: list[ir.Cond]) -> ir.Cond:
    return items[0] if len(items) == 1 else ir.And(tuple(items))


__all__ = ["BROAD_SHARE", "MAX_SEATS", "ShapeComplements", "broad_shapes"]
