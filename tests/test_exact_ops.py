"""Exact integer products on sparse right factors, against Python ints."""

from __future__ import annotations

import numpy as np
import pytest

from truedeal.listing.exact_ops import SparseRight, block_product_sums, check_product_bound, exact_matmul, row_dots
from truedeal.listing.layout import TooWide


def _python_product(big: np.ndarray, small: np.ndarray) -> list[list[int]]:
    return [[sum(int(big[i, k]) * int(small[k, j]) for k in range(small.shape[0])) for j in range(small.shape[1])]
            for i in range(big.shape[0])]


def _sparse(rng: np.random.Generator, shape: tuple[int, int], high: int, density: float) -> np.ndarray:
    a = rng.integers(0, high, size=shape, dtype=np.int64)
    return np.where(rng.random(shape) < density, a, 0)


@pytest.mark.parametrize("seed", range(4))
def test_sparse_right_agrees_with_python_ints(seed):
    rng = np.random.default_rng(seed)
    small = _sparse(rng, (40, 30), 1 << 12, 0.1)
    big = rng.integers(0, 1 << 40, size=(25, 40), dtype=np.int64)
    right = SparseRight.dense(small)
    assert right.reach == int(small.sum(axis=0).max())
    assert right.times(big).tolist() == _python_product(big, small)
    assert right.times(big).tolist() == exact_matmul(big, small).tolist()


def test_sparse_right_adds_repeated_entries():
    """Repeated coordinates add up, as np.add.at does (clamped forms merge sums)."""
    rng = np.random.default_rng(11)
    rows, cols = rng.integers(0, 12, 300), rng.integers(0, 9, 300)
    vals = rng.integers(0, 1 << 20, 300)
    small = np.zeros((12, 9), np.int64)
    np.add.at(small, (rows, cols), vals)
    right = SparseRight.of(rows, cols, vals, small.shape)
    assert right.reach == int(small.sum(axis=0).max())
    big = rng.integers(0, 1 << 30, size=(7, 12), dtype=np.int64)
    assert right.times(big).tolist() == _python_product(big, small)


def test_sparse_right_is_exact_at_the_int64_bound():
    """Entries and column sums right at the bound: every output just below
    2**63, where a float64 product would round."""
    n, top_bits = 6, 60
    small = np.zeros((n, 3), np.int64)
    small[:, 0] = 1  # column sum n = 6: 3 bits, with 60-bit entries 63 bits in all
    small[2, 1] = 7
    big = np.full((4, n), (1 << top_bits) - 1, np.int64)
    big[1] -= np.arange(n)
    right = SparseRight.dense(small)
    got = right.times(big)
    want = _python_product(big, small)
    assert got.tolist() == want
    assert max(map(max, want)) > 1 << 62  # past float64's 2**53 and near int64's end


def test_sparse_right_refuses_what_might_overflow():
    small = np.zeros((9, 2), np.int64)
    small[:, 0] = 1  # column sum 9: 4 bits
    with pytest.raises(TooWide):
        SparseRight.dense(small).times(np.full((2, 9), 1 << 60, np.int64))  # 61 + 4 bits > 63
    with pytest.raises(TooWide):
        check_product_bound(1, 1 << 51)  # a reach past 51 bits is refused on either path
    check_product_bound((1 << 59) - 1, 15)  # 59 + 4 bits: fits


def test_sparse_right_past_its_bound_goes_in_limbs_and_stays_exact():
    """A 59-bit entry times a 12-bit reach passes the bound, but the heavy
    rows of the right factor meet narrow entries: every output fits int64,
    and the product is exact (a rank pool's paired listing, whose Y stays
    below 2**61 where the bound allowed only 2**51)."""
    rng = np.random.default_rng(3)
    small = np.zeros((40, 4), np.int64)
    small[0, 0], small[1:, 0] = 1, 100  # reach 3,901: 12 bits
    small[1:, 1:] = _sparse(rng, (39, 3), 1 << 8, 0.3)  # the wide entries of big meet row 0 alone
    big = rng.integers(0, 1 << 45, size=(6, 40), dtype=np.int64)
    big[:, 0] = (1 << 59) - rng.integers(1, 1000, 6)
    right = SparseRight.dense(small)
    with pytest.raises(TooWide):
        check_product_bound(int(big.max()), right.reach)
    got = right.times(big)
    want = _python_product(big, small)
    assert got.dtype == np.int64 and got.tolist() == want
    assert max(map(max, want)) > 1 << 59


def test_sparse_right_in_limbs_refuses_a_product_past_int64():
    """Limbs that fit alone, whose sum does not: the carry is checked."""
    small = np.zeros((3, 1), np.int64)
    small[:, 0] = [1, 1, 1 << 10]
    big = np.array([[(1 << 62) - 1, (1 << 62) - 1, 1], [(1 << 62) - 1, (1 << 62) - 1, 0]], np.int64)
    with pytest.raises(TooWide):
        SparseRight.dense(small).times(big)  # row 0: 2**63 - 2 + 2**10
    assert SparseRight.dense(small).times(big[1:]).tolist() == [[(1 << 63) - 2]]


def test_sparse_right_reach_may_be_given():
    """A bool matrix's bound is its size, as the dense product took it (the same listings fit)."""
    a = np.eye(5, dtype=bool)
    right = SparseRight.dense(a, len(a))
    assert right.reach == 5
    big = np.arange(10, dtype=np.int64).reshape(2, 5)
    assert right.times(big).tolist() == big.tolist()


def test_sparse_right_of_nothing():
    right = SparseRight.of(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64), (4, 3))
    assert right.reach == 0
    assert right.times(np.ones((2, 4), np.int64)).tolist() == [[0] * 3] * 2
    assert right.times(np.ones((0, 4), np.int64)).shape == (0, 3)


def test_row_dots_in_passes_agrees_with_python_ints():
    """Past its pass of rows (_DOT_ROWS), with entries wide enough to split the columns."""
    rng = np.random.default_rng(5)
    a = rng.integers(0, 1 << 50, size=(300, 70), dtype=np.int64)
    b = rng.integers(0, 1 << 50, size=(300, 70), dtype=np.int64)
    a[-1], b[-1] = (1 << 60) - 1, (1 << 60) - 1  # the widest that two digits carry
    assert row_dots(a, b) == [sum(int(x) * int(y) for x, y in zip(a[i], b[i])) for i in range(300)]


def test_row_dots_of_entries_past_two_digits_agrees_with_python_ints():
    """Entries of 61 to 63 bits (a rank pool's Y): one factor in halves."""
    rng = np.random.default_rng(7)
    a = rng.integers(0, 1 << 31, size=(5, 300), dtype=np.int64)
    b = rng.integers(0, 1 << 63, size=(5, 300), dtype=np.int64)
    b[0, 0] = np.iinfo(np.int64).max
    want = [sum(int(x) * int(y) for x, y in zip(a[i], b[i])) for i in range(5)]
    assert row_dots(a, b) == row_dots(b, a) == want


def test_digit_products_of_uint32_factors_are_exact():
    """Narrow pair tables are uint32: their digits multiply in int64, not
    in uint32 (which would wrap), whatever the other factor's dtype."""
    rng = np.random.default_rng(9)
    a = rng.integers(0, 1 << 32, size=(40, 60), dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, size=(40, 60), dtype=np.uint64).astype(np.uint32)
    want = [sum(int(x) * int(y) for x, y in zip(a[i], b[i])) for i in range(40)]
    assert row_dots(a, b) == row_dots(a, b.astype(np.int64)) == want
    sums, k = block_product_sums(a, b, 8)
    blocks = [[sum(int(x) * int(y) for x, y in zip(a[i, c : c + 8], b[i, c : c + 8])) for c in range(0, 60, 8)]
              for i in range(40)]
    assert (sums[0] + (sums[1] << k) + (sums[2].astype(object) << 2 * k)).tolist() == blocks
