"""Exact integer linear algebra on numpy arrays of non-negative integers.

Products of two tables of ways reach 2**100 and more, past int64.  These
helpers stay exact without a Python int per element:

* matrix products run in float64 on pieces small enough that every partial
  sum is an integer below 2**53, so BLAS is exact whatever order it adds in;
  or, when the right factor is sparse (a paired listing's accept matrices and
  shifted weight tables: 1-2% set), in int64 over its stored entries alone
  (:class:`SparseRight`), where every partial sum is below the bound that
  keeps the whole product in int64;
* an elementwise product ``a * b`` is carried as three base-``2**k`` digits
  (``a`` and ``b`` split in two), small enough that running sums along a row
  of up to ``n`` terms stay below 2**63 (:func:`digit_bits`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .layout import TooWide

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix


def check_product_bound(top: int, reach: int) -> None:
    """TooWide unless ``big @ small`` is sure to fit in int64 for entries of
    ``big`` up to ``top`` and column sums of ``small`` up to ``reach``:
    every output (and, the inputs being non-negative, every partial sum) is
    at most ``top * reach < 2**(top bits + reach bits) <= 2**63``.  The float
    path also needs ``reach`` below 2**51 (a piece of one bit times it stays
    below 2**53); the sparse path keeps that limit too, so that whether a
    listing fits never depends on which product runs."""
    if reach.bit_length() > 51 or (top and reach and top.bit_length() + reach.bit_length() > 63):
        raise TooWide("a table of ways is too large for int64")


def exact_matmul(big: np.ndarray, small: np.ndarray, reach: int | None = None) -> np.ndarray:
    """``big @ small`` (int64), exact for non-negative integer inputs whose
    true product fits in int64; TooWide when it might not.

    ``small`` may come as float64; ``reach`` bounds its column sums (computed
    when not given)."""
    if reach is None:
        reach = int(small.sum(axis=0).max(initial=0))
    top = int(big.max(initial=0))
    check_product_bound(top, reach)
    bits = max(1, 52 - reach.bit_length())  # each piece times ``reach`` stays below 2**53
    s = small if small.dtype == np.float64 else small.astype(np.float64)
    if top < 1 << bits:
        return (big.astype(np.float64) @ s).astype(np.int64)
    out = np.zeros((big.shape[0], small.shape[1]), np.int64)
    for shift in range(0, top.bit_length(), bits):
        piece = ((big >> shift) & ((1 << bits) - 1)).astype(np.float64)
        out += (piece @ s).astype(np.int64) << shift
    return out


@dataclass(frozen=True)
class SparseRight:
    """A sparse non-negative int64 matrix ``S`` as the right factor of exact
    products ``big @ S`` (:meth:`times`), and ``reach``, a bound on its column
    sums that :func:`check_product_bound` reads.  ``S`` is kept transposed, in
    compressed rows: the product runs as ``S.T @ big.T``, one axpy over a row
    of ``big.T`` per stored entry, so its cost is ``nnz(S) * len(big)``
    where a dense product's is ``S.size * len(big)``."""

    t: csr_matrix  # S.T, int64
    reach: int

    @classmethod
    def of(cls, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, shape: tuple[int, int],
           reach: int | None = None) -> SparseRight:
        """``S[rows[i], cols[i]] += vals[i]`` (repeats added up, in int64:
        exact while ``reach`` passes :func:`check_product_bound`).  ``reach``
        defaults to the largest column sum, summed in float64: exact below
        2**53, and past 2**51 (where it may round) refused either way."""
        from scipy.sparse import csr_matrix  # here: importing it costs ~0.3 s, past the start-up budget

        vals = np.asarray(vals, np.int64)
        if reach is None:
            reach = int(np.bincount(cols, weights=vals, minlength=shape[1]).max(initial=0)) if len(cols) else 0
        t = csr_matrix((vals, (cols, rows)), shape=(shape[1], shape[0]), dtype=np.int64)
        t.sum_duplicates()
        return cls(t, reach)

    @classmethod
    def dense(cls, a: np.ndarray, reach: int | None = None) -> SparseRight:
        """From a dense matrix of non-negative integers (or bool); ``reach`` as in :meth:`of`."""
        rows, cols = np.nonzero(a)
        return cls.of(rows, cols, a[rows, cols], a.shape, reach)

    def times(self, big: np.ndarray) -> np.ndarray:
        """``big @ S`` (int64, a transposed view), exact for non-negative
        integer ``big``; TooWide when an entry of it is past int64.  Where
        :func:`check_product_bound` holds, one int64 product; where it does
        not (a bound, often loose: a rank pool's ways held a paired listing's
        Y below 2**61 where it allowed 2**67), ``big`` goes in limbs that
        each pass it, and their products are added up with the carries checked."""
        if not self.t.nnz or not big.size:
            return np.zeros((big.shape[0], self.t.shape[0]), np.int64)
        top = int(big.max(initial=0))
        try:
            check_product_bound(top, self.reach)
        except TooWide:
            return self._in_limbs(big, top)
        return self._product(big)

    def _product(self, big: np.ndarray) -> np.ndarray:
        return np.asarray(self.t @ np.ascontiguousarray(big.T, dtype=np.int64)).T

    def _in_limbs(self, big: np.ndarray, top: int) -> np.ndarray:
        """:meth:`times` by limbs of ``big`` narrow enough for
        :func:`check_product_bound`; TooWide when the product is past int64."""
        bits = 63 - self.reach.bit_length()
        check_product_bound((1 << bits) - 1, self.reach)  # the reach itself too wide: TooWide
        out = np.zeros((big.shape[0], self.t.shape[0]), np.uint64)
        for shift in range(0, top.bit_length(), bits):
            part = self._product((big >> shift) & ((1 << bits) - 1))
            if int(part.max(initial=0)).bit_length() + shift > 63:
                raise TooWide("a table of ways is too large for int64")
            out += part.astype(np.uint64) << np.uint64(shift)  # both terms below 2**63: no wrap
            if int(out.max(initial=0)) >> 63:
                raise TooWide("a table of ways is too large for int64")
        return out.astype(np.int64)


def digit_bits(n: int) -> int:
    """Digit width k for rows of ``n`` products: the middle digit of a product
    is below 2**(2k+1), and ``n`` of them sum below 2**63."""
    return (62 - max(n, 1).bit_length()) // 2


def product_digits(a: np.ndarray, b: np.ndarray, k: int) -> list[np.ndarray]:
    """``a * b`` as int64 digits ``[d0, d1, d2]`` (value ``d0 + d1 << k + d2 << 2k``,
    not carried); ``a`` and ``b``, of any integer dtype, must be below ``2**(2k)``."""
    if max(int(a.max(initial=0)), int(b.max(initial=0))).bit_length() > 2 * k:
        raise TooWide("weights too wide for exact products")
    # in int64: the digits of two uint32 factors (narrow pair tables) would multiply in uint32, and wrap
    a, b = a.astype(np.int64, copy=False), b.astype(np.int64, copy=False)
    mask = (1 << k) - 1
    a0, a1, b0, b1 = a & mask, a >> k, b & mask, b >> k
    return [a0 * b0, a0 * b1 + a1 * b0, a1 * b1]


#: Rows per pass of :func:`row_dots`: its digits make about ten temporaries
#: the size of a pass (128 rows of 4,492 vectors: 46 MB, not 184 MB for 512).
_DOT_ROWS = 128


def row_dots(a: np.ndarray, b: np.ndarray) -> list[int]:
    """``(a * b).sum(axis=1)`` as exact Python ints (2-D arrays), in runs of
    columns short enough for the digits of the widest entries; rows go
    :data:`_DOT_ROWS` at a time (each row's sum is its own)."""
    if len(a) > _DOT_ROWS:
        return [x for r in range(0, len(a), _DOT_ROWS) for x in row_dots(a[r : r + _DOT_ROWS], b[r : r + _DOT_ROWS])]
    wide = max(int(a.max(initial=0)).bit_length(), int(b.max(initial=0)).bit_length())
    if wide > 2 * digit_bits(1):  # past two digits even one column at a time: b (or a) in two halves
        if int(b.max(initial=0)).bit_length() < wide:
            return row_dots(b, a)
        half = wide // 2
        return [(x << half) + y for x, y in zip(row_dots(a, b >> half), row_dots(a, b & ((1 << half) - 1)))]
    run = max(a.shape[1], 1)
    while run > 1 and 2 * digit_bits(run) < wide:
        run = (run + 1) // 2
    out = [0] * len(a)
    for c in range(0, a.shape[1] or 1, run):
        k = digit_bits(run)
        sums = [d.sum(axis=1).tolist() for d in product_digits(a[:, c : c + run], b[:, c : c + run], k)]
        out = [o + x + (y << k) + (z << 2 * k) for o, x, y, z in zip(out, *sums)]
    return out


def carried(digits: list[np.ndarray], k: int) -> list[np.ndarray]:
    """Digits ``[d0, d1, d2]`` of base ``2**k`` with the carries made, so that
    the two lower ones are below ``2**k`` (their running sums then stay small)."""
    d0, d1, d2 = (d.copy() for d in digits)
    d1 += d0 >> k
    d0 &= (1 << k) - 1
    d2 += d1 >> k
    d1 &= (1 << k) - 1
    return [d0, d1, d2]


def first_above(a: np.ndarray, b: np.ndarray, r: list[int]) -> np.ndarray:
    """Per row, the first column where the running sum of ``a * b`` exceeds
    ``r[row]``: the categorical draw for ``r`` uniform below the row's total."""
    k = digit_bits(a.shape[1])
    if not _fits_digits(a, b, k):  # products too wide for the digits: Python ints
        cum = np.cumsum(a.astype(object) * b.astype(object), axis=1)
        return np.argmax(cum > np.array(r, dtype=object)[:, None], axis=1)
    return first_above_digits(product_digits(a, b, k), k, r)[0]


def _fits_digits(a: np.ndarray, b: np.ndarray, k: int) -> bool:
    return max(int(a.max(initial=0)), int(b.max(initial=0))).bit_length() <= 2 * k


def block_product_sums(a: np.ndarray, b: np.ndarray, width: int) -> tuple[list[np.ndarray], int]:
    """The sums of ``a * b`` over each row's blocks of ``width`` columns, as
    carried digits of base ``2**k`` (:func:`carried`), and ``k``.  Exact for any
    non-negative int64 factors; factors past two digits go through Python ints."""
    k = digit_bits(width)
    starts = np.arange(0, a.shape[1], width)
    if _fits_digits(a, b, k):
        return carried([np.add.reduceat(d, starts, axis=1) for d in product_digits(a, b, k)], k), k
    sums = np.add.reduceat(a.astype(object) * b.astype(object), starts, axis=1)
    mask = (1 << k) - 1
    return [np.array([[int(x) >> s & m for x in row] for row in sums], np.int64).reshape(sums.shape)
            for s, m in ((0, mask), (k, mask), (2 * k, -1))], k


def first_above_digits(digits: list[np.ndarray], k: int, r: list[int]) -> tuple[np.ndarray, list[int]]:
    """:func:`first_above` for weights given as (uncarried) digits, and the
    running sum before the chosen column (Python ints)."""
    mask = (1 << k) - 1
    d0, d1, d2 = carried([np.cumsum(d, axis=1) for d in digits], k)
    rd = np.array([[x & mask, (x >> k) & mask, x >> 2 * k] for x in r], dtype=np.int64).reshape(len(r), 3)
    above = d2 > rd[:, 2:3]
    tie = d2 == rd[:, 2:3]
    above |= tie & (d1 > rd[:, 1:2])
    above |= tie & (d1 == rd[:, 1:2]) & (d0 > rd[:, 0:1])
    at = np.argmax(above, axis=1)
    rows, before = np.arange(len(at)), np.maximum(at - 1, 0)
    parts = [d[rows, before].tolist() for d in (d0, d1, d2)]
    below = [0 if j == 0 else x + (y << k) + (z << 2 * k) for j, x, y, z in zip(at.tolist(), *parts)]
    return at, below
