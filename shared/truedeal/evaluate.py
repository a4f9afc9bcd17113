"""Hand features of whole deals, vectorised: HCP, suit lengths, spec checks.

Used to verify generated deals and by rejection baselines; the sampler itself
never rejects.
"""

from __future__ import annotations

import numpy as np

from .cards import HCP_OF_RANK, N_HONOURS
from .patterns import PATTERNS

_HCP = np.zeros(52, dtype=np.int64)
_HCP[:N_HONOURS] = np.repeat(HCP_OF_RANK, 4)
_SUIT = np.arange(52) % 4
# pattern index of lengths (s, h, d, c) via a dense 14^3 table
_PATTERN_OF = np.full((14, 14, 14), -1, dtype=np.int64)
_PATTERN_OF[PATTERNS[:, 0], PATTERNS[:, 1], PATTERNS[:, 2]] = np.arange(len(PATTERNS))


def hcp(owners: np.ndarray, seat: int) -> np.ndarray:
    """HCP of ``seat`` in each deal."""
    return ((owners == seat) * _HCP).sum(axis=1)


def lengths(owners: np.ndarray, seat: int) -> np.ndarray:
    """Suit lengths (n, 4) of ``seat`` in each deal, spades first."""
    held = owners == seat
    return np.stack([held[:, _SUIT == s].sum(axis=1) for s in range(4)], axis=1)


def pattern_index(owners: np.ndarray, seat: int) -> np.ndarray:
    """Index into :data:`PATTERNS` of ``seat``'s suit lengths in each deal."""
    ln = lengths(owners, seat)
    return _PATTERN_OF[ln[:, 0], ln[:, 1], ln[:, 2]]


def satisfies(owners: np.ndarray, constraints) -> np.ndarray:
    """Boolean per deal: does it meet every seat constraint (``spec.constraints()``)?"""
    ok = np.ones(len(owners), dtype=bool)
    for c in constraints:
        if c.hcp is not None:
            h = hcp(owners, c.seat)
            ok &= (h >= c.hcp[0]) & (h <= c.hcp[1])
        if c.patterns is not None:
            ok &= np.asarray(c.patterns)[pattern_index(owners, c.seat)]
    return ok


def valid(owners: np.ndarray) -> np.ndarray:
    """Boolean per deal: every seat holds exactly 13 cards."""
    return ((owners[:, :, None] == np.arange(4)).sum(axis=1) == 13).all(axis=1)
