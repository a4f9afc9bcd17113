"""Rebuilding a condition tree node by node (:class:`Rewriter`).

A script's variables make its tree a DAG that a plain recursion walks
exponentially, so every node is rebuilt once, memoised by its identity.
Subclasses override what they change: :mod:`.card_owner` folds the
``hascard`` of placed cards, :mod:`.separable` makes per-suit sums linear.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import ir


class Rewriter:
    """The identity on condition trees; override ``_cond``, ``_num`` or ``_linear``."""

    def __init__(self) -> None:
        self.memo: dict[int, tuple[object, Any]] = {}

    def cond(self, c: ir.Cond) -> ir.Cond:
        return self._visit(c, self._cond)

    def num(self, x: ir.Num) -> ir.Num:
        return self._visit(x, self._num)

    def _visit(self, x: Any, rebuild: Callable[[Any], Any]) -> Any:
        hit = self.memo.get(id(x))
        if hit is None:
            hit = self.memo[id(x)] = (x, rebuild(x))  # keep x alive: its id stays unique
        return hit[1]

    def _cond(self, c: ir.Cond) -> ir.Cond:
        if isinstance(c, ir.Compare):
            return ir.Compare(c.op, self.num(c.left), self.num(c.right))
        if isinstance(c, (ir.And, ir.Or)):
            return type(c)(tuple(self.cond(i) for i in c.items))
        if isinstance(c, ir.Not):
            return ir.Not(self.cond(c.item))
        return c  # shapes, constants

    def _num(self, x: ir.Num) -> ir.Num:
        if isinstance(x, ir.Linear):
            return self._linear(x)
        if isinstance(x, ir.Arith):
            return ir.Arith(x.op, self.num(x.left), self.num(x.right))
        if isinstance(x, ir.IfElse):
            return ir.IfElse(self.cond(x.cond), self.num(x.then), self.num(x.other))
        return x  # opaque numbers

    def _linear(self, lin: ir.Linear) -> ir.Num:
        return lin
