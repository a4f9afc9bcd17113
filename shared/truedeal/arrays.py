"""Array helpers that the start-up path needs and numpy makes slow."""

from __future__ import annotations

import numpy as np


def distinct(a: np.ndarray) -> np.ndarray:
    """The sorted distinct values of ``a``, flattened: ``np.unique(a)``
    without its first call's import of ``numpy.ma`` (numpy 2.x), which is
    10-20 ms of every command's start-up."""
    s = np.sort(a, axis=None)
    return s[np.concatenate(([True], s[1:] != s[:-1]))] if len(s) else s
