"""Exact laws of any numeric expression over a spec, by the general engine.

For a number ``X`` (``hcp(north)+hcp(south)``, ``controls(west)``,
``losers(north)``, ``top3(north, spades)`` ...) and a spec's condition ``C``,
``deals(X == v)`` is the exact count of ``C AND X == v``, listed by
:meth:`truedeal.engine.Plan.build`.  Rather than one build per possible
value, the range of ``X`` (bounded from its linear form) is **bisected**: a
range ``[lo, hi]`` whose count ``n`` is known costs one build,
``count(C AND lo <= X <= mid)``, and its right half is ``n`` minus that.
Empty ranges are dropped at once, so a law with ``s`` values in a range of
width ``w`` costs about ``s - 1`` builds plus ``log2(w)`` per gap, never
more than ``w - 1``.  The range holds only the values ``X``'s form allows
(:func:`lattice`): ``100 * cond``, dealer scripts' percentages, takes 0
and 100 and costs one build, not a bisection of 0..100.

``given`` conditions are folded into ``C``.  A shape class of a seat is one
:class:`~truedeal.constraints.ir.ShapeIn` count per class.  Anything the
engine cannot list exactly (``tricks``, products, a spec it handles by
rejection) raises :class:`NotExact`; :mod:`.sampled` then gives a labelled
estimate.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..constraints import ir, rnd_levels
from ..constraints.bounded import arith_range, linear_range
from ..constraints.compile import compile_program
from ..engine import Plan, TooWide
from ..patterns import PATTERNS
from ..spec import Spec
from .conditioning import NotExact
from .distribution import Distribution, UnsupportedFeature, parse_feature
from .shapeclasses import shape_classes

#: Widest value range bisected (a guard against absurd scales such as ``1000 * hcp``).
MAX_RANGE = 100_000


@dataclass(frozen=True)
class Query:
    """What to take the law of: a number ``num``, or the shape class of
    ``class_seat``; over the deals that also meet ``given``.  ``text`` is the
    expression as the user wrote it (its ``name``)."""

    text: str
    num: ir.Num | None = None
    class_seat: int | None = None
    given: ir.Cond = ir.TRUE

    @property
    def name(self) -> str:
        return self.text

    @property
    def numeric(self) -> bool:
        return self.class_seat is None


_GIVEN = re.compile(r"\s+given\s+", re.IGNORECASE)


def _old_feature(text: str) -> Query | None:
    """The first language's features (``hcp(N)``, ``class(E)``), which accept one-letter seats."""
    try:
        f = parse_feature(text)
    except UnsupportedFeature:
        return None
    if f.kind == "class":
        return Query(text, class_seat=f.seat)
    if f.kind == "hcp":
        fn, suits = ir.HCP, ir.ALL_SUITS
    else:
        assert f.suit is not None  # a length feature names its suit
        fn, suits = ir.LENGTH, (f.suit,)
    return Query(text, num=ir.Linear(((1, ir.Feature(f.seat, suits, fn)),)))


def parse_query(text: str) -> Query:
    """``EXPR [given COND]`` -> :class:`Query`.  ``EXPR`` is any dealer
    number (a condition counts as 1/0) or ``shape class of SEAT``; ``COND``
    any dealer condition.  Raises :class:`UnsupportedFeature` (one line)."""
    from ..constraints.dealer import ScriptError, parse_condition, parse_number

    shown = " ".join(text.split())
    if not shown:
        raise UnsupportedFeature("empty expression: give e.g. hcp(north), hcp(north)+hcp(south) or 'shape class of east'")
    parts = _GIVEN.split(shown)
    if len(parts) > 2:
        raise UnsupportedFeature(f"{shown!r}: 'given' may appear once")
    expr = parts[0]
    try:
        given = parse_condition(parts[1]) if len(parts) == 2 else ir.TRUE
        query = _old_feature(expr)
        if query is None:
            query = Query(expr, num=parse_number(expr))
    except ScriptError as exc:
        raise UnsupportedFeature(f"{shown!r}: {exc}") from None
    return Query(shown, query.num, query.class_seat, given)


# ------------------------------------------------------------------- bounds


def bounds(x: ir.Num) -> tuple[int, int]:
    """An interval holding every value of ``x``; :class:`NotExact` for a number
    the engine cannot list (``tricks``, ``rnd`` ...)."""
    if isinstance(x, ir.Linear):
        return linear_range(x)
    if isinstance(x, ir.IfElse):
        (a, b), (c, d) = bounds(x.then), bounds(x.other)
        return min(a, c), max(b, d)
    if isinstance(x, ir.Arith):
        return arith_range(x.op, bounds(x.left), bounds(x.right))
    raise NotExact(f"{_what(x)} cannot be listed exactly")


def lattice(x: ir.Num) -> tuple[int, int]:
    """``(base, step)`` such that every value of ``x`` is ``base`` plus a
    multiple of ``step`` (0: ``x`` is that constant), from its form alone:
    ``100 * cond`` takes only 0 and 100, a sum of even weights even values.
    Features are integers, so a linear form's step is its coefficients' gcd."""
    if isinstance(x, ir.Linear):
        return x.const, math.gcd(*(abs(c) for c, _ in x.terms))
    if isinstance(x, ir.IfElse):
        (b1, s1), (b2, s2) = lattice(x.then), lattice(x.other)
        return b1, math.gcd(s1, s2, abs(b1 - b2))
    if isinstance(x, ir.Arith) and x.op in "+-":
        (b1, s1), (b2, s2) = lattice(x.left), lattice(x.right)
        return (b1 + b2 if x.op == "+" else b1 - b2), math.gcd(s1, s2)
    if isinstance(x, ir.Arith) and x.op == "*":
        (b1, s1), (b2, s2) = lattice(x.left), lattice(x.right)
        if s1 == 0 or s2 == 0:  # a constant factor scales the other's lattice
            c, (b, st) = (b1, (b2, s2)) if s1 == 0 else (b2, (b1, s1))
            return b * c, st * abs(c)
    return 0, 1


def _what(x) -> str:
    if isinstance(x, ir.OpaqueNum):
        return f"{x.name}(...)"
    if isinstance(x, ir.Arith):
        return f"a product or quotient of features ({x.op!r})"
    return type(x).__name__


# ------------------------------------------------------------------- counting

#: ``count(condition) -> exact deals`` for the conditions of one program.
CountFn = Callable[[ir.Cond], int]


def engine_counter(program: ir.Program, on_count: Callable[[], None] | None = None) -> CountFn:
    """Exact deals of ``condition`` (which holds ``program``'s) with
    ``program``'s predealt cards, one plan per call (``on_count`` is called
    after each, e.g. to show progress); :class:`NotExact` when the plan would
    use rejection.  Where ``program``'s ``rnd`` is weighed, the deals of each
    class of its numbers times the class's weight, summed: :func:`weight_scale`
    times the deals it keeps on average."""
    weighed = rnd_levels.levels(program)

    def exact(cond: ir.Cond) -> int:
        return _exact_deals(ir.Program(condition=cond, predeal=program.predeal))

    def count(cond: ir.Cond) -> int:
        if on_count is not None:
            on_count()
        if weighed is None:
            return exact(cond)
        return sum(level.weight * exact(level.on(cond)) for level in weighed.parts)

    return count


def weight_scale(program: ir.Program) -> int:
    """What :func:`engine_counter`'s counts are multiplied by: the number of
    joint ``rnd`` numbers of a script whose ``rnd`` is weighed, else 1."""
    weighed = rnd_levels.levels(program)
    return 1 if weighed is None else weighed.points


@functools.lru_cache(maxsize=256)
def _exact_deals(program: ir.Program) -> int:
    """The exact deals of ``program``, kept for the next ask (a script's
    averages each count its condition, and laws of one condition share
    ranges); :class:`NotExact` (not kept) when it needs rejection."""
    try:
        plan = Plan.build(program)
    except TooWide as exc:
        raise NotExact(f"cannot count exactly: {' '.join(str(exc).split())}") from None
    if not (plan.exact or plan.counted is not None):
        raise NotExact("the engine lists this only with rejection (" + "; ".join(plan.relaxed) + ")")
    return plan.deals_total


def _and(*items: ir.Cond) -> ir.Cond:
    return ir.And(tuple(c for c in items if c != ir.TRUE))


def _between(x: ir.Num, lo: int, hi: int) -> ir.Cond:
    return ir.And((ir.Compare(">=", x, ir.Linear((), lo)), ir.Compare("<=", x, ir.Linear((), hi))))


def numeric_law(x: ir.Num, base: ir.Cond, total: int, count: CountFn) -> dict[int, int]:
    """value -> exact deals of ``base AND x == value`` (zeros dropped), by
    bisection of ``x``'s range (see the module doc), over the values its
    :func:`lattice` allows (``100 * cond``: 0 and 100, one build, not eight);
    ``total`` is ``count(base)``."""
    lo, hi = bounds(x)
    at, step = lattice(x)
    step = step or 1  # a constant: its bounds are that value
    lo, hi = lo + (at - lo) % step, hi - (hi - at) % step
    if hi - lo > MAX_RANGE:
        raise NotExact(f"the expression ranges over {hi - lo + 1:,} values, more than {MAX_RANGE:,}")
    if compile_program(ir.Program(condition=ir.Compare("==", x, ir.Linear((), lo)))).rejection is not None:
        raise NotExact("the expression has parts the engine cannot list exactly")
    out: dict[int, int] = {}
    stack = [(lo, hi, total)]
    while stack:
        a, b, n = stack.pop()
        if n == 0:
            continue
        if a == b:
            out[a] = n
            continue
        mid = a + (b - a) // step // 2 * step
        left = count(_and(base, _between(x, a, mid)))
        if not 0 <= left <= n:  # the halves partition the range: a broken engine shows here
            raise RuntimeError(f"values {a}..{mid} count {left} deals of {n}")
        stack += [(mid + step, b, n - left), (a, mid, left)]
    return dict(sorted(out.items()))


def class_law(seat: int, base: ir.Cond, total: int, count: CountFn) -> dict[str, int]:
    """Shape class name -> exact deals of ``base`` in which ``seat`` has that class."""
    out: dict[str, int] = {}
    for sc in shape_classes():
        pats = frozenset(tuple(int(v) for v in PATTERNS[i]) for i in sc.mask.nonzero()[0])
        n = count(_and(base, ir.ShapeIn(seat, pats)))
        if n:
            out[sc.name] = n
    if sum(out.values()) != total:
        raise RuntimeError(f"shape classes count {sum(out.values())} deals, not {total}")
    return out


def as_program(constraints: Spec | ir.Program) -> ir.Program:
    return constraints if isinstance(constraints, ir.Program) else constraints.program()


def general_distribution(constraints: Spec | ir.Program, query: Query | str, count: CountFn | None = None) -> Distribution:
    """The exact law of ``query`` over every deal of ``constraints`` (see the module doc).

    Raises :class:`NotExact` when the engine cannot list it exactly and
    :class:`UnsupportedFeature` for an expression it cannot read."""
    if isinstance(query, str):
        query = parse_query(query)
    program = as_program(constraints)
    count = count or engine_counter(program)
    base = _and(program.condition, query.given)
    total = count(base)
    counts: dict[Any, int]
    if query.class_seat is not None:
        counts = class_law(query.class_seat, base, total, count) if total else {}
    else:
        assert query.num is not None  # a query is a number or a shape class
        counts = numeric_law(query.num, base, total, count) if total else {}
    return Distribution(query, counts, total, weight_scale(program))
