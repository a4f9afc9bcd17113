"""Building IR trees from parsed operators, folding what can be folded.

The dealer language has one type, the integer: a comparison is 0 or 1 and any
non-zero number is true.  The IR keeps numbers (:data:`ir.Num`) and conditions
(:data:`ir.Cond`) apart, so every operator first converts its operands:

* a condition used as a number is ``IfElse(cond, 1, 0)``;
* a number used as a condition is ``Compare("!=", x, 0)``;
* a :class:`Flag` (``hascard``) is both: its 0/1 feature as a number,
  ``feature == 1`` as a condition.

Sums and differences of linear sums and products by constants stay
:class:`ir.Linear` (the engine reads those exactly); constants fold, with
dealer's C semantics for ``/`` (truncate toward zero) and ``%`` (the sign of
the dividend).  A constant division by zero is refused here
(:class:`ZeroDivisionError`), and so is a constant beyond 2**40
(:class:`OverflowError`); the parser turns both into one-line errors.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TypeGuard

import numpy as np

from . import bounded, ir

ZERO = ir.Linear((), 0)
ONE = ir.Linear((), 1)

_COMPARE = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    ">=": lambda a, b: a >= b,
    ">": lambda a, b: a > b,
}


@dataclass(frozen=True)
class Flag:
    """A 0/1 linear feature that reads naturally as a condition (``hascard``)."""

    linear: ir.Linear


def const(n: int) -> ir.Linear:
    return ir.Linear((), n)


def is_const(x: object) -> TypeGuard[ir.Linear]:
    return isinstance(x, ir.Linear) and not x.terms


def opaque(name: str, args: tuple) -> ir.Num:
    """An opaque number (``tricks``, ``score``, ``imps``, ``rnd``), folded to
    a constant where it is a function of constant arguments: ``score`` of a
    constant trick count, ``imps`` of a constant.  (Else rejection would
    check a constant on every deal, and the count would be an estimate.)"""
    if name == "score" and is_const(args[2]):
        from .dds import contract_scores

        (level, strain), tricks = args[1], min(max(args[2].const, 0), 13)
        return const(int(contract_scores(level, strain, args[0])[tricks]))
    if name == "imps" and is_const(args[0]):
        from .evaluate import imps_of

        return const(int(imps_of(np.array(args[0].const))))
    return ir.OpaqueNum(name, args)


def is_cond(x) -> bool:
    return isinstance(x, (ir.Compare, ir.ShapeIn, ir.And, ir.Or, ir.Not, ir.Truth))


def as_num(x) -> ir.Num:
    """``x`` as a number: conditions become ``IfElse(c, 1, 0)`` (constants folded)."""
    if isinstance(x, Flag):
        return x.linear
    if isinstance(x, ir.Truth):
        return const(int(x.value))
    if is_cond(x):
        return ir.IfElse(x, ONE, ZERO)
    return x


def as_cond(x) -> ir.Cond:
    """``x`` as a condition: numbers become ``x != 0`` (constants folded)."""
    if isinstance(x, Flag):
        return ir.Compare("==", x.linear, ONE)
    if is_cond(x):
        return x
    if is_const(x):
        return ir.Truth(x.const != 0)
    if isinstance(x, ir.IfElse) and x.then == ONE and x.other == ZERO:
        return x.cond  # a condition that went through a number and back
    return ir.Compare("!=", x, ZERO)


def _merge(terms) -> tuple:
    """Add up equal features, keeping first-seen order; drop zero coefficients."""
    coef: dict = {}
    for c, f in terms:
        coef[f] = coef.get(f, 0) + c
    return tuple((c, f) for f, c in coef.items() if c)


def arith(op: str, left, right) -> ir.Num:
    """``left op right`` for ``+ - * / %`` on numbers (conditions converted)."""
    a, b = as_num(left), as_num(right)
    if isinstance(a, ir.Linear) and isinstance(b, ir.Linear):
        folded = _linear_arith(op, a, b)
        if folded is not None:
            return folded
    if op in ("+", "-") and isinstance(a, ir.IfElse) and is_const(b):
        # push a constant into both branches: the engine reads IfElse of linears
        return ir.IfElse(a.cond, arith(op, a.then, b), arith(op, a.other, b))
    return ir.Arith(op, a, b)


_LIMIT = 2**40  # far beyond any bridge count, far inside int64 even after a product on a deal


def _checked(x: ir.Linear | None) -> ir.Linear | None:
    """Refuse constants that could overflow the evaluator's 64-bit integers."""
    if x is not None and (abs(x.const) > _LIMIT or any(abs(c) > _LIMIT for c, _ in x.terms)):
        raise OverflowError("constant too large")
    return x


def _linear_arith(op: str, a: ir.Linear, b: ir.Linear) -> ir.Linear | None:
    return _checked(_linear_arith_raw(op, a, b))


def _linear_arith_raw(op: str, a: ir.Linear, b: ir.Linear) -> ir.Linear | None:
    if op == "+":
        return ir.Linear(_merge(a.terms + b.terms), a.const + b.const)
    if op == "-":
        return ir.Linear(_merge(a.terms + tuple((-c, f) for c, f in b.terms)), a.const - b.const)
    if op == "*" and (is_const(a) or is_const(b)):
        k, x = (a.const, b) if is_const(a) else (b.const, a)
        return ir.Linear(_merge(tuple((k * c, f) for c, f in x.terms)), k * x.const)
    if op in ("/", "%") and is_const(a) and is_const(b):
        if b.const == 0:
            raise ZeroDivisionError("division by zero")
        q = bounded.c_div(a.const, b.const)
        return const(q if op == "/" else a.const - q * b.const)
    return None


def negate(x) -> ir.Num:
    return arith("-", ZERO, x)


def compare(op: str, left, right) -> ir.Cond:
    """``left op right``; two constants fold to a :class:`ir.Truth`."""
    a, b = as_num(left), as_num(right)
    if is_const(a) and is_const(b):
        return ir.Truth(_COMPARE[op](a.const, b.const))
    return ir.Compare(op, a, b)


def not_(x) -> ir.Cond:
    c = as_cond(x)
    if isinstance(c, ir.Truth):
        return ir.Truth(not c.value)
    if isinstance(c, ir.Not):
        return c.item
    return ir.Not(c)


def and_(left, right) -> ir.Cond:
    return _junction(ir.And, as_cond(left), as_cond(right))


def or_(left, right) -> ir.Cond:
    return _junction(ir.Or, as_cond(left), as_cond(right))


def _junction(kind, a: ir.Cond, b: ir.Cond) -> ir.Cond:
    """Flatten nested And/Or of the same kind; fold the constants."""
    absorbing = kind is ir.Or  # True absorbs an Or, False an And
    items: list[ir.Cond] = []
    for c in (a, b):
        if isinstance(c, ir.Truth):
            if c.value == absorbing:
                return c
            continue
        items.extend(c.items if isinstance(c, kind) else (c,))
    if not items:
        return ir.Truth(not absorbing)
    return items[0] if len(items) == 1 else kind(tuple(items))


def if_else(cond, then, other):
    """``cond ? then : other``.  Conditions in both branches give a condition;
    otherwise numbers, as :class:`ir.IfElse`."""
    c = as_cond(cond)
    if isinstance(c, ir.Truth):
        return then if c.value else other
    if (is_cond(then) or isinstance(then, Flag)) and (is_cond(other) or isinstance(other, Flag)):
        t, o = as_cond(then), as_cond(other)
        return or_(and_(c, t), and_(not_(c), o))
    return ir.IfElse(c, as_num(then), as_num(other))


def tree_size(node, memo: dict | None = None) -> int:
    """Nodes in ``node`` with every shared subtree counted each time it is used:
    the size the engine and the evaluator see once variables are substituted.
    Linear in the number of distinct nodes."""
    memo = {} if memo is None else memo
    key = id(node)
    if key not in memo:
        size = 1
        if isinstance(node, tuple):
            size = sum(tree_size(x, memo) for x in node)
        elif isinstance(node, (ir.Linear, ir.ShapeIn, ir.Feature, ir.LocalFn, ir.Truth)):
            size = 1 + len(getattr(node, "terms", ()))  # leaves: features are not expanded further
        elif hasattr(node, "__dataclass_fields__"):
            size += sum(tree_size(getattr(node, f.name), memo) for f in fields(node))
        memo[key] = size
    return memo[key]
