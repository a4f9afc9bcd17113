"""Which parts of a condition go to rejection when no listing holds it all.

A relaxation names, for some seats, what of theirs the listing leaves out:
their **honour** comparisons (anything that reads their cards: HCP, controls,
top-N, cards held; sums with other seats included), or their **whole**
conditions (shapes and lengths too).  :func:`relax` replaces each such
comparison by an opaque test, so the listing holds a wider spec exactly and
the plan keeps a drawn deal only if the whole condition holds.

The plan takes the first relaxation that lists, in the order of
:func:`ranked`: best estimated acceptance first.  The estimate multiplies,
over the relaxed seats, the exact probability that the seat's own parts
allow the condition (whole) or that its honour parts do given its shape
(honours), each from a listing of that seat alone.  Seats are not
independent, so this only orders the attempts; the plan measures the real
acceptance.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from .cards import SEAT_NAMES
from .constraints import ir

KEEP, HONOURS, WHOLE = 0, 1, 2


@dataclass(frozen=True)
class Relaxation:
    """What each seat leaves to rejection: KEEP, HONOURS or WHOLE, by seat."""

    levels: tuple[int, int, int, int] = (KEEP, KEEP, KEEP, KEEP)

    @property
    def none(self) -> bool:
        return not any(self.levels)

    def seats(self, level: int) -> frozenset[int]:
        return frozenset(s for s in range(4) if self.levels[s] == level)

    def covers(self, other: Relaxation) -> bool:
        """Does this relaxation leave at least as much to rejection as ``other``, seat by seat?"""
        return all(a >= b for a, b in zip(self.levels, other.levels))

    def describe(self) -> tuple[str, ...]:
        """The relaxed parts, as the plan's method names them."""
        parts = []
        for level, what in ((HONOURS, "the honour conditions of "), (WHOLE, "the conditions of ")):
            seats = sorted(self.seats(level))
            if seats:
                parts.append(what + ", ".join(SEAT_NAMES[s] for s in seats))
        return tuple(parts)


#: Programs relaxed lately, by (the program's identity, the levels): the
#: same object for the same ask, so that what is listed of it (a seat's rows,
#: ranked and then planned) is listed once.  The program is kept alive with
#: its key.
_RELAXED: dict[tuple[int, tuple[int, ...]], tuple[ir.Program, ir.Program]] = {}
_MOST_RELAXED = 128  # a ranking asks for at most 8, and a plan for at most 80 more


def relax(program: ir.Program, relaxation: Relaxation) -> ir.Program:
    """``program`` with every comparison that reads what ``relaxation`` leaves
    out replaced by an opaque test: a wider spec, which a listing may hold
    (the same object when asked again lately)."""
    key = (id(program), relaxation.levels)
    hit = _RELAXED.get(key)
    if hit is None:
        if len(_RELAXED) >= _MOST_RELAXED:
            del _RELAXED[next(iter(_RELAXED))]
        walker = _Relaxer(relaxation)
        hit = _RELAXED[key] = (program, ir.Program(condition=walker.cond(program.condition), predeal=program.predeal))
    return hit[1]


def ranked(program: ir.Program, odds: Callable[[ir.Program], float | None]) -> list[Relaxation]:
    """Every relaxation of the seats ``program`` reads, best estimated
    acceptance first (then fewest parts relaxed).  ``odds(p)`` is the exact
    probability of ``p``'s listing, or None when ``p`` cannot be listed."""
    reads = SeatsRead()
    honours, anything = reads(program.condition)
    shapes = _read_without_honours(program.condition, reads)
    factors = {s: _factors(program, s, anything, s in honours, s in shapes, odds) for s in sorted(anything)}
    options = [[KEEP, *factors[s]] if s in factors else [KEEP] for s in range(4)]
    out = []
    for levels in itertools.product(*options):
        if any(levels):
            estimate = 1.0
            for s, level in enumerate(levels):
                estimate *= factors[s][level] if level else 1.0
            out.append((-estimate, sum(levels), Relaxation(tuple(levels))))  # type: ignore[arg-type]
    return [r for _, _, r in sorted(out, key=lambda t: (t[0], t[1], t[2].levels))]


def _factors(program: ir.Program, seat: int, anything: frozenset[int], honours: bool, shapes: bool,
             odds: Callable[[ir.Program], float | None]) -> dict[int, float]:
    """The estimated share kept when ``seat``'s honours or whole conditions
    go to rejection.  A seat that cannot be listed alone (``odds`` lists a
    seat that no factored listing holds by its hand's rows) counts as 1: it
    must be relaxed, so the ranking tries that first.  When every part that reads
    the seat reads its cards (``shapes`` false), relaxing its honours is
    relaxing it whole: one option, not two that list the same."""
    others = tuple(WHOLE if s in anything and s != seat else KEEP for s in range(4))
    alone = odds(relax(program, Relaxation(others)))  # type: ignore[arg-type]
    whole = 1.0 if alone is None else alone
    if not honours:
        return {WHOLE: whole}
    shaped = tuple(HONOURS if s == seat else level for s, level in enumerate(others))
    shape = odds(relax(program, Relaxation(shaped)))  # type: ignore[arg-type]
    honour = 1.0 if alone is None or not shape else alone / shape
    return {HONOURS: honour, WHOLE: whole} if shapes else {HONOURS: honour}


def _read_without_honours(condition: ir.Cond, reads: SeatsRead) -> frozenset[int]:
    """Seats that some comparison or shape of ``condition`` reads without
    reading their cards (a shape, a length): those that relaxing only their
    honours keeps partly listed."""
    out: set[int] = set()
    for c in ir.leaves(condition):
        if isinstance(c, (ir.Compare, ir.ShapeIn)):
            honours, anything = reads(c)
            out |= anything - honours
    return frozenset(out)


class SeatsRead:
    """``(honours, anything)``: the seats whose honours, and whose anything
    (shapes and lengths too), a node of the IR reads.  Memoised by node
    identity: a script's variables make the IR a DAG."""

    def __init__(self) -> None:
        self.memo: dict[int, tuple[object, tuple[frozenset[int], frozenset[int]]]] = {}

    def __call__(self, x: object) -> tuple[frozenset[int], frozenset[int]]:
        hit = self.memo.get(id(x))
        if hit is None:
            hit = self.memo[id(x)] = (x, self._of(x))  # keep x alive: its id stays unique
        return hit[1]

    def _of(self, x: object) -> tuple[frozenset[int], frozenset[int]]:
        if isinstance(x, ir.Feature):
            return (frozenset() if x.fn.kind == "length" else frozenset({x.seat})), frozenset({x.seat})
        if isinstance(x, ir.ShapeIn):
            return frozenset(), frozenset({x.seat})
        return self._union(_children(x))

    def _union(self, items: list) -> tuple[frozenset[int], frozenset[int]]:
        honours: frozenset[int] = frozenset()
        anything: frozenset[int] = frozenset()
        for item in items:
            h, a = self(item)
            honours, anything = honours | h, anything | a
        return honours, anything


def _children(x: object) -> list:
    if isinstance(x, (ir.Compare, ir.Arith)):
        return [x.left, x.right]
    if isinstance(x, ir.Linear):
        return [f for _, f in x.terms]
    if isinstance(x, ir.IfElse):
        return [x.cond, x.then, x.other]
    if isinstance(x, (ir.And, ir.Or)):
        return list(x.items)
    if isinstance(x, ir.Not):
        return [x.item]
    return []  # constants; opaque numbers (tricks, rnd) are never listed anyway


class _Relaxer:
    """:func:`relax`'s walk, memoised by node identity."""

    def __init__(self, relaxation: Relaxation) -> None:
        self.honours = relaxation.seats(HONOURS)
        self.whole = relaxation.seats(WHOLE)
        self.reads = SeatsRead()
        self.memo: dict[int, tuple[ir.Cond, ir.Cond]] = {}

    def cond(self, c: ir.Cond) -> ir.Cond:
        hit = self.memo.get(id(c))
        if hit is None:
            hit = self.memo[id(c)] = (c, self._cond(c))
        return hit[1]

    def _cond(self, c: ir.Cond) -> ir.Cond:
        if isinstance(c, (ir.And, ir.Or)):
            return type(c)(tuple(self.cond(x) for x in c.items))
        if isinstance(c, ir.Not):
            return ir.Not(self.cond(c.item))
        if isinstance(c, (ir.Compare, ir.ShapeIn)):
            honours, anything = self.reads(c)
            if honours & (self.honours | self.whole) or anything & self.whole:
                return ir.Compare("==", ir.OpaqueNum("relaxed"), ir.Linear())
        return c


__all__ = ["Relaxation", "relax", "ranked", "SeatsRead", "KEEP", "HONOURS", "WHOLE"]
