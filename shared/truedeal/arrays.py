"""Array helpers that the start-up path needs and numpy makes slow."""

from __future__ import annotations

import numpy as np


def distinct(a: np.ndarray) -> np.ndarray:
    """The sorted distinct values of ``a``, flattened: ``np.unique(a)``
    without its first call's import of ``numpy.ma`` (numpy 2.x), which is
    10-20 ms of every command's start-up."""
    s = np.sort(a, axis=None)
    return s[np.concatenate(([True], s[1:] != s[:-1]))] if len(s) else s


def unique_inverse(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` of integer keys, flattened.
    Keys within a range a few times their number are marked in a table and
    ranked by a running sum, with no sort: the paired listing's millions of
    cells sorted their keys several times a plan (0.6 s of a 3.6 s build)."""
    keys = np.asarray(keys).reshape(-1)
    if not len(keys) or keys.dtype.kind not in "iu":
        uniq, inv = np.unique(keys, return_inverse=True)
        return uniq, inv.reshape(-1)
    low, high = int(keys.min()), int(keys.max())
    if high - low > 4 * len(keys) + 4096:
        uniq, inv = np.unique(keys, return_inverse=True)
        return uniq, inv.reshape(-1)
    present = np.zeros(high - low + 1, bool)
    present[keys - low] = True
    rank = np.cumsum(present) - 1
    return (np.flatnonzero(present) + low).astype(keys.dtype), rank[keys - low]


def unique_rows(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's rank among the distinct rows (sorted as ``np.unique(axis=0)``
    sorts them) and the first row of each.  Rows of small values are packed
    into one integer key each, which sorts in the same order far faster."""
    if not len(table):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    low = table.min(axis=0)
    radix = table.max(axis=0) - low + 1
    if float(np.prod(radix.astype(np.float64))) >= 2.0**62:
        _, first, inv = np.unique(table, axis=0, return_index=True, return_inverse=True)
        return inv.reshape(-1), first
    weights = np.concatenate([np.cumprod(radix[::-1])[::-1][1:], [1]]).astype(np.int64)
    keys = (table - low) @ weights
    _, inv = unique_inverse(keys)
    first = np.empty(int(inv.max()) + 1, np.int64)
    first[inv[::-1]] = np.arange(len(keys) - 1, -1, -1)  # of repeated indices the last write holds: the first row
    return inv, first
