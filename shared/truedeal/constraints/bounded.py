"""Non-linear arithmetic made exact by the small range of bridge numbers.

A product, quotient or remainder of linear sums is not linear, but every
feature is bounded (HCP 0..37, a length 0..13), so such a number takes few
values.  Cutting the operand's range into runs on which the result is linear
turns ``hcp(north) % 2 == 0`` into "hcp is 0, or 2, or ...", and
``(hcp(north) + hcp(south)) / 2 == 13`` into "the sum is 26 or 27": guarded
linear pieces that the listing reads exactly.  The arithmetic is dealer's, as
in :mod:`truedeal.constraints.evaluate`: ``/`` truncates toward zero, ``%``
takes the dividend's sign, and a division by zero gives 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache

from . import ir

#: Most guarded pieces one operation may expand to; past it the operation is
#: left to rejection (a 37 x 37 product of two seats' HCP would be 1,444).
MAX_PIECES = 256


def local_max(fn: ir.LocalFn) -> int:
    """The largest value ``fn`` takes on one suit."""
    if fn.kind == "length":
        return 13
    if fn.kind == "losers":
        return 3
    if fn.kind == "table":
        return max(fn.table)
    return sum(w for w in fn.weights if w > 0)


def hand_max(fn: ir.LocalFn, suits: tuple[int, ...]) -> int:
    """The largest value ``sum(fn over suits)`` takes on a 13-card hand."""
    if fn.kind == "length":
        return min(13, 13 * len(suits))
    if fn.kind == "losers":
        return 3 * len(suits)
    if fn.kind == "table":
        return table_range(fn, suits)[1]
    per_card = sorted((w for w in fn.weights for _ in suits), reverse=True)
    return sum(w for w in per_card[:13] if w > 0)


def feature_range(feature: ir.Feature) -> tuple[int, int]:
    """The smallest and largest value ``feature`` takes on a 13-card hand."""
    fn, suits = feature.fn, feature.suits
    if fn.kind == "length":
        return (13 if len(set(suits)) == 4 else 0), hand_max(fn, suits)
    if fn.kind == "weights":
        negative = ir.LocalFn("weights", tuple(max(-w, 0) for w in fn.weights))
        return -hand_max(negative, suits), hand_max(fn, suits)
    if fn.kind == "table":
        return table_range(fn, suits)
    return 0, hand_max(fn, suits)


@lru_cache(maxsize=4096)  # a plan asks again for the same tables over its many forms
def table_range(fn: ir.LocalFn, suits: tuple[int, ...]) -> tuple[int, int]:
    """The smallest and largest ``sum(fn over suits)`` on a 13-card hand: by
    length, each suit's extremes over its holdings, added up suit by suit
    (the other suits take the rest of the 13 cards)."""
    per_length = 1 << len(fn.ranks_read)
    spots = 13 - len(fn.ranks_read)
    one = [[fn.table[length * per_length + m] for m in range(per_length)
            if m.bit_count() <= length <= m.bit_count() + spots] for length in range(14)]
    lo, hi = {0: 0}, {0: 0}  # cards used so far -> extreme sum
    for _ in suits:
        lo = _add_suit(lo, [min(v) for v in one], min)
        hi = _add_suit(hi, [max(v) for v in one], max)
    enough = 13 - 13 * (4 - len(set(suits)))  # the other suits hold 13 cards at most each
    return (min(v for n, v in lo.items() if n >= enough), max(v for n, v in hi.items() if n >= enough))


def _add_suit(best: dict[int, int], by_length: list[int], pick) -> dict[int, int]:
    out: dict[int, int] = {}
    for used, v in best.items():
        for length in range(14 - used):
            out[used + length] = pick(out.get(used + length, v + by_length[length]), v + by_length[length])
    return out


def linear_range(lin: ir.Linear) -> tuple[int, int]:
    """Bounds on ``lin`` over all deals (not always reached: each feature's are)."""
    lo = hi = lin.const
    for coef, feature in lin.terms:
        a, b = feature_range(feature)
        lo += min(coef * a, coef * b)
        hi += max(coef * a, coef * b)
    return lo, hi


def c_div(a: int, b: int) -> int:
    """C's integer division, and dealer's 0 for a division by zero."""
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def quotient_runs(lo: int, hi: int, divisor: int) -> Iterator[tuple[int, int, int]]:
    """``(first, last, quotient)``: the maximal runs of ``lo..hi`` with one ``c_div(v, divisor)``."""
    first = lo
    for v in range(lo, hi + 1):
        if v == hi or c_div(v + 1, divisor) != c_div(v, divisor):
            yield first, v, c_div(v, divisor)
            first = v + 1


def plus(lin: ir.Linear, const: int) -> ir.Linear:
    return ir.Linear(lin.terms, lin.const + const)


def remainder(lin: ir.Linear, divisor: int, quotient: int) -> ir.Linear:
    """``lin % divisor`` where ``lin / divisor`` is ``quotient`` (0 for a zero divisor)."""
    return plus(lin, -divisor * quotient) if divisor else ir.Linear((), 0)


def divided(op: str, const: int, g: int) -> tuple[str, int] | bool:
    """``(op', c')`` with ``g*y + const OP 0`` iff ``y + c' OP' 0`` for every
    integer ``y`` (``g > 0``), or the truth of an equation that no integer
    ``y`` solves (``2y == 5`` is false, ``2y != 5`` true)."""
    if op in ("==", "!="):
        return op == "!=" if const % g else (op, const // g)
    if op == ">":
        op, const = ">=", const - 1
    elif op == "<":
        op, const = "<=", const + 1
    return op, (const // g if op == ">=" else -(-const // g))


def arith_range(op: str, left: tuple[int, int], right: tuple[int, int]) -> tuple[int, int]:
    """Bounds on ``a op b`` (``* / %``) for ``a`` in ``left`` and ``b`` in ``right``.

    Truncated division is monotone in each operand on either side of 0, so
    its extremes lie at the ends of the ranges and at the divisors -1 and 1;
    a remainder lies between 0 and the dividend, within the divisor's size."""
    (a, b), (c, d) = left, right
    if op == "*":
        values = [x * y for x in (a, b) for y in (c, d)]
    elif op == "/":
        divisors = [y for y in (c, d, -1, 1) if c <= y <= d and y]
        values = [c_div(x, y) for x in (a, b) for y in divisors] + [0] * (c <= 0 <= d)
    else:
        most = max(abs(c), abs(d), 1) - 1
        values = [0, max(a, -most) if a < 0 else 0, min(b, most) if b > 0 else 0]
    return min(values), max(values)
