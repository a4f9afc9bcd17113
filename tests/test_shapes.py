"""Tests for truedeal.shapes: dealer-style shape expressions -> pattern masks.

Expected values are computed independently of the implementation: counts
from combinatorics, memberships from a small brute-force matcher over all
(s, h, d, c) with s + h + d + c = 13 enumerated here, and hand totals from
the seed-003 rule C(13,a)C(13,b)C(13,c)C(13,d) x distinct suit orders.
"""

from __future__ import annotations

from collections import Counter
from itertools import permutations, product
from math import comb, factorial

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from truedeal.patterns import PATTERNS, hands_with_pattern
from truedeal.shapes import ShapeError, normalize_shape, parse_shape

# ----------------------------------------------------------------- reference

ALL_SHAPES = [p for p in product(range(14), repeat=4) if sum(p) == 13]


def ref_term(term: str, any_: bool, lengths: tuple[int, ...]) -> bool:
    """Does a hand with these S H D C lengths match the term?"""
    orders = permutations(term) if any_ else [term]
    return any(all(c in "xX" or int(c) == n for c, n in zip(order, lengths)) for order in orders)


def ref_eval(terms: list[tuple[str, str, bool]], lengths: tuple[int, ...]) -> bool:
    """Left-to-right evaluation of [(op, term, any), ...]."""
    result = False
    for op, term, any_ in terms:
        hit = ref_term(term, any_, lengths)
        result = (result or hit) if op == "+" else (result and not hit)
    return result


def ref_set(terms) -> set[tuple[int, ...]]:
    return {p for p in ALL_SHAPES if ref_eval(terms, p)}


def mask_set(mask: np.ndarray) -> set[tuple[int, ...]]:
    return {tuple(int(x) for x in PATTERNS[i]) for i in np.flatnonzero(mask)}


def seed003_total(distributions) -> int:
    """Seed 003: C(13,a)C(13,b)C(13,c)C(13,d) x 24 / (multiplicity factorials)."""
    total = 0
    for dist in distributions:
        orders = factorial(4)
        for k in Counter(dist).values():
            orders //= factorial(k)
        total += comb(13, dist[0]) * comb(13, dist[1]) * comb(13, dist[2]) * comb(13, dist[3]) * orders
    return total


# ----------------------------------------------------------------- basics


def test_reference_enumeration_matches_patterns():
    assert len(ALL_SHAPES) == 560 == len(PATTERNS)
    assert {tuple(int(x) for x in p) for p in PATTERNS} == set(ALL_SHAPES)


def test_mask_dtype_and_shape():
    m = parse_shape("any 4333")
    assert m.dtype == np.bool_ and m.shape == (560,)


def test_exactly_nine_spades_is_15_patterns():
    # the other 4 cards split over 3 suits: compositions of 4 into 3 parts = C(6, 2)
    m = parse_shape("9xxx")
    assert m.sum() == comb(4 + 2, 2) == 15
    assert all(PATTERNS[m, 0] == 9)
    assert (PATTERNS[:, 0] == 9).sum() == 15


@pytest.mark.parametrize(
    "expr, count",
    [("any 4333", 4), ("any 4432", 12), ("any 5332", 12), ("any 4441", 4), ("any 5431", 24), ("any 7222", 4)],
)
def test_any_counts(expr, count):
    m = parse_shape(expr)
    assert m.sum() == count
    digits = tuple(int(c) for c in expr.split()[1])
    assert mask_set(m) == set(permutations(digits))


def test_plain_term_is_single_pattern():
    m = parse_shape("4333")
    assert m.sum() == 1
    assert tuple(PATTERNS[m][0]) == (4, 3, 3, 3)
    assert mask_set(parse_shape("3433")) == {(3, 4, 3, 3)}


def test_xxxx_is_everything():
    assert parse_shape("xxxx").all()
    assert parse_shape("any xxxx").all()


def test_five_spades_or_five_hearts_brute_force():
    m = parse_shape("5xxx + x5xx")
    expected = {p for p in ALL_SHAPES if p[0] == 5 or p[1] == 5}
    assert mask_set(m) == expected
    assert m.sum() == len(expected)
    # and directly from the PATTERNS columns
    direct = ((PATTERNS[:, 0] == 5) | (PATTERNS[:, 1] == 5)).sum()
    assert m.sum() == direct


def test_any_with_x_permutes_characters():
    m = parse_shape("any 5xxx")
    assert mask_set(m) == {p for p in ALL_SHAPES if 5 in p}
    m = parse_shape("any 55xx")
    assert mask_set(m) == {p for p in ALL_SHAPES if Counter(p)[5] >= 2}
    m = parse_shape("any 6x0x")
    assert mask_set(m) == {p for p in ALL_SHAPES if 6 in p and 0 in p}


def test_difference():
    m = parse_shape("any 5xxx - 5xxx")
    assert mask_set(m) == {p for p in ALL_SHAPES if 5 in p and p[0] != 5}
    assert not parse_shape("5xxx - 5xxx").any()  # empty is allowed, not an error


def test_left_to_right():
    # (any 4333 - 4xxx) + 4333  keeps 4333; any 4333 - (4xxx + 4333) would not
    m = parse_shape("any 4333 - 4xxx + 4333")
    assert mask_set(m) == set(permutations((4, 3, 3, 3)))
    m = parse_shape("any 4333 + 4333 - 4xxx")
    assert mask_set(m) == set(permutations((4, 3, 3, 3))) - {(4, 3, 3, 3)}


def test_balanced_union():
    m = parse_shape("any 4333 + any 4432 + any 5332")
    assert m.sum() == 28
    assert mask_set(m) == {p for p in ALL_SHAPES if sorted(p, reverse=True) in ([4, 3, 3, 3], [4, 4, 3, 2], [5, 3, 3, 2])}


def test_balanced_hand_total_agrees_with_seed_003():
    m = parse_shape("any 4333 + any 4432 + any 5332")
    total = sum(hands_with_pattern(p) for p in PATTERNS[m])
    assert total == seed003_total([(4, 3, 3, 3), (4, 4, 3, 2), (5, 3, 3, 2)])
    # 5332 alone is the seed's worked example: 98,534,079,072 hands
    m5332 = parse_shape("any 5332")
    assert sum(hands_with_pattern(p) for p in PATTERNS[m5332]) == 98_534_079_072


def test_all_patterns_total_is_comb_52_13():
    m = parse_shape("xxxx")
    assert sum(hands_with_pattern(p) for p in PATTERNS[m]) == comb(52, 13) == 635_013_559_600


@pytest.mark.parametrize(
    "a, b",
    [
        ("any 4333", "any4333"),
        ("any 4333", "  any   4333  "),
        ("5xxx+x5xx", "5xxx + x5xx"),
        ("5XXX + X5xx", "5xxx + x5xx"),
        ("ANY 4333", "any 4333"),
        ("any 5xxx-5xxx", "any 5xxx - 5xxx"),
        ("\tany\n4432 +any 4333", "any 4432 + any 4333"),
    ],
)
def test_whitespace_and_case_are_free(a, b):
    assert np.array_equal(parse_shape(a), parse_shape(b))
    assert normalize_shape(a) == normalize_shape(b)


def test_normalize_spelling():
    assert normalize_shape("any4333+ANY 4432-  5XXX") == "any 4333 + any 4432 - 5xxx"
    assert normalize_shape("5xxx") == "5xxx"


# ----------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "expr, fragment",
    [
        ("5xx", "bad term '5xx' (a term is 4 characters, digits or x)"),
        ("5xxxx", "bad term '5xxxx'"),
        ("abcd", "bad term 'abcd'"),
        ("4 333", "bad term '4 333'"),
        ("5x?x", "bad term '5x?x'"),
        ("4332", "term '4332' sums to 12, not 13"),
        ("9x5x", "term '9x5x' has digits summing to 14, more than 13"),
        ("", "empty shape expression"),
        ("   ", "empty shape expression"),
        ("5xxx +", "missing term after '+'"),
        ("+ 5xxx", "missing term before '+'"),
        ("- 5xxx", "missing term before '-'"),
        ("5xxx ++ x5xx", "missing term between '+' and '+'"),
        ("any", "'any' must be followed by a term"),
        ("any 4333 + any", "'any' must be followed by a term"),
        ("5xxx * x5xx", "bad term"),
        ("(5xxx)", "bad term"),
    ],
)
def test_errors(expr, fragment):
    with pytest.raises(ShapeError) as info:
        parse_shape(expr)
    msg = str(info.value)
    assert fragment in msg
    assert "\n" not in msg
    assert isinstance(info.value, ValueError)


def test_non_string_is_shape_error():
    with pytest.raises(ShapeError):
        parse_shape(4333)  # type: ignore[arg-type]


def test_x_term_digit_sum_13_is_fine():
    m = parse_shape("6x7x")
    assert mask_set(m) == {(6, 0, 7, 0)}


# ----------------------------------------------------------------- properties

DIGIT_TERMS = ["".join(map(str, p)) for p in ALL_SHAPES if max(p) <= 9]


@st.composite
def x_terms(draw):
    chars = draw(st.lists(st.sampled_from("0123456789x"), min_size=4, max_size=4))
    if "x" not in chars:
        chars[draw(st.integers(0, 3))] = "x"
    # shrink digits until the sum fits
    while sum(int(c) for c in chars if c != "x") > 13:
        i = next(i for i, c in enumerate(chars) if c not in "x0")
        chars[i] = str(int(chars[i]) - 1)
    return "".join(chars)


terms = st.one_of(st.sampled_from(DIGIT_TERMS), x_terms())
expressions = st.lists(
    st.tuples(st.sampled_from("+-"), terms, st.booleans()), min_size=1, max_size=5
)


def render(parts, rnd_ws: list[str]) -> str:
    out = ""
    for k, (op, term, any_) in enumerate(parts):
        ws = rnd_ws[k % len(rnd_ws)]
        if k:
            out += f"{ws}{op}{ws}"
        out += ("any" + ws if any_ else "") + term
    return out


@settings(max_examples=150, deadline=None)
@given(expressions, st.lists(st.sampled_from(["", " ", "  ", "\t"]), min_size=1, max_size=3))
def test_matches_brute_force(parts, ws):
    parts = [("+", *parts[0][1:])] + parts[1:]
    expr = render(parts, ws)
    m = parse_shape(expr)
    assert mask_set(m) == ref_set(parts)
    norm = normalize_shape(expr)
    assert normalize_shape(norm) == norm
    assert np.array_equal(parse_shape(norm), m)
