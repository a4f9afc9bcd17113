"""Array helpers that the start-up path needs and numpy makes slow."""

from __future__ import annotations

import numpy as np


def distinct(a: np.ndarray) -> np.ndarray:
    """The sorted distinct values of ``a``, flattened: ``np.unique(a)``
    without its first call's import of ``numpy.ma`` (numpy 2.x), which is
    10-20 ms of every command's start-up."""
    s = np.sort(a, axis=None)
    return s[np.concatenate(([True], s[1:] != s[:-1]))] if len(s) else s


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
    _, first, inv = np.unique((table - low) @ weights, return_index=True, return_inverse=True)
    return inv.reshape(-1), first
