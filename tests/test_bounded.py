"""The arithmetic that makes products, quotients and remainders exact
(:mod:`truedeal.constraints.bounded`), against brute force over small ranges."""

from __future__ import annotations

import random

import pytest

from truedeal.constraints.bounded import arith_range, divided, quotient_runs


def _c(op: str, a: int, b: int) -> int:
    """Dealer's C arithmetic, written out independently: 0 for a division by zero."""
    if op == "*":
        return a * b
    if b == 0:
        return 0
    q = int(a / b)
    return q if op == "/" else a - b * q


@pytest.mark.parametrize("op", ["*", "/", "%"])
def test_ranges_hold_every_value_and_products_and_quotients_are_tight(op):
    rng = random.Random(op)
    for _ in range(2000):
        a = sorted(rng.randint(-20, 20) for _ in range(2))
        b = sorted(rng.randint(-7, 7) for _ in range(2))
        values = [_c(op, x, y) for x in range(a[0], a[1] + 1) for y in range(b[0], b[1] + 1)]
        lo, hi = arith_range(op, (a[0], a[1]), (b[0], b[1]))
        assert lo <= min(values) and max(values) <= hi, (a, b)
        if op != "%":
            assert (lo, hi) == (min(values), max(values)), (a, b)


@pytest.mark.parametrize("divisor", [-4, -1, 1, 2, 3, 7])
def test_quotient_runs_cover_the_range_once_with_one_quotient_each(divisor):
    runs = list(quotient_runs(-15, 22, divisor))
    assert [v for first, last, _ in runs for v in range(first, last + 1)] == list(range(-15, 23))
    for first, last, q in runs:
        assert {_c("/", v, divisor) for v in range(first, last + 1)} == {q}
    assert all(a[2] != b[2] for a, b in zip(runs, runs[1:]))  # maximal runs


@pytest.mark.parametrize("op", ["<", "<=", "==", "!=", ">=", ">"])
def test_dividing_a_comparison_by_its_scale_keeps_its_truth(op):
    truth = {"<": int.__lt__, "<=": int.__le__, "==": int.__eq__, "!=": int.__ne__, ">=": int.__ge__, ">": int.__gt__}
    for g in (2, 3, 5):
        for const in range(-12, 13):
            out = divided(op, const, g)
            for y in range(-10, 11):
                want = truth[op](g * y + const, 0)
                got = out if isinstance(out, bool) else truth[out[0]](y + out[1], 0)
                assert got == want, (op, g, const, y)
