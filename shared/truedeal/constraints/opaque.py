"""The deals a condition with opaque parts may keep, as a condition the listing reads (:func:`support`).

A comparison that reads ``rnd``, ``tricks`` or ``score`` is a function of
more than the deal's holdings.  Replaced by true where it counts for the
condition (under an even number of negations) and by false where it counts
against it, it leaves a condition that every deal the whole condition can
keep fits: its **support**.  A plan lists the support exactly, however it
must (split by patterns, by cards, as an either/or), and keeps each deal
drawn only if the whole condition holds on it: the kept deals follow the
script's law, and only the opaque parts are left to rejection.
"""

from __future__ import annotations

import functools

from . import fold, ir
from .rewrite import Rewriter


def support(program: ir.Program) -> ir.Program | None:
    """``program`` with its opaque comparisons replaced as the module says;
    None when it has none, or one of them counts both ways (shared by both
    sides of a negation: only a split on its value would list it)."""
    polarity = signs(program.condition)
    if not polarity:
        return None
    if any(len(s) > 1 for s in polarity.values()):
        return None
    condition = Substitute({k: next(iter(s)) for k, s in polarity.items()}).cond(program.condition)
    return ir.Program(condition=condition, predeal=program.predeal)


def possible(program: ir.Program) -> ir.Program:
    """``program`` true wherever some truths of its opaque comparisons make
    it true: its :func:`support` where that exists, and a condition still
    where a comparison counts both ways (each node is bounded above and
    below, as a three-valued logic would, with its sharing kept)."""
    return ir.Program(condition=_Bounds().upper(program.condition), predeal=program.predeal)


class _Bounds:
    """Each condition's upper bound (true if it may hold) and lower bound
    (true if it must), the opaque comparisons unknown, memoised by identity."""

    def __init__(self) -> None:
        self.memo: dict[tuple[int, bool], tuple[ir.Cond, ir.Cond]] = {}

    def upper(self, c: ir.Cond) -> ir.Cond:
        return self._bound(c, True)

    def _bound(self, c: ir.Cond, up: bool) -> ir.Cond:
        hit = self.memo.get((id(c), up))
        if hit is None:
            hit = self.memo[(id(c), up)] = (c, self._rebuild(c, up))  # keep c alive: its id stays unique
        return hit[1]

    def _rebuild(self, c: ir.Cond, up: bool) -> ir.Cond:
        if isinstance(c, (ir.And, ir.Or)):
            junction = fold.and_ if isinstance(c, ir.And) else fold.or_
            return functools.reduce(junction, (self._bound(i, up) for i in c.items))
        if isinstance(c, ir.Not):
            return fold.not_(self._bound(c.item, not up))
        if isinstance(c, ir.Compare) and _reads_opaque(c):
            return ir.Truth(up)
        return c


def _reads_opaque(c: ir.Compare) -> bool:
    return any(isinstance(x, ir.OpaqueNum) for x in ir.nodes(c))


def signs(condition: ir.Cond) -> dict[int, set[bool]]:
    """For each opaque comparison (by identity), the polarities it is reached
    with: True under an even number of negations."""
    out: dict[int, set[bool]] = {}
    seen: set[tuple[int, bool]] = set()
    todo: list[tuple[ir.Cond, bool]] = [(condition, True)]
    while todo:
        c, positive = todo.pop()
        if (id(c), positive) in seen:
            continue
        seen.add((id(c), positive))
        if isinstance(c, (ir.And, ir.Or)):
            todo.extend((item, positive) for item in c.items)
        elif isinstance(c, ir.Not):
            todo.append((c.item, not positive))
        elif isinstance(c, ir.Compare) and _reads_opaque(c):
            out.setdefault(id(c), set()).add(positive)
    return out


class Substitute(Rewriter):
    """Comparisons (by identity) replaced by constants, the rest folded: the
    support's signs, or the values of one class of ``rnd`` (:mod:`.rnd_levels`)."""

    def __init__(self, truths: dict[int, bool]) -> None:
        super().__init__()
        self.truths = truths

    def _cond(self, c: ir.Cond) -> ir.Cond:
        if id(c) in self.truths:
            return ir.Truth(self.truths[id(c)])
        if isinstance(c, (ir.And, ir.Or)):  # folded: a level's ``type and true`` is its type
            junction = fold.and_ if isinstance(c, ir.And) else fold.or_
            return functools.reduce(junction, (self.cond(i) for i in c.items))
        if isinstance(c, ir.Not):
            return fold.not_(self.cond(c.item))
        return super()._cond(c)
