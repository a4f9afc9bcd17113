"""The 560 hand patterns and their hand counts (seed 003)."""

from math import comb

import numpy as np

#: All suit-length patterns (spades, hearts, diamonds, clubs) summing to 13,
#: in lexicographic order of (spades, hearts, diamonds).  Row i is pattern i.
PATTERNS: np.ndarray = np.array(
    [
        (s, h, d, 13 - s - h - d)
        for s in range(14)
        for h in range(14 - s)
        for d in range(14 - s - h)
    ],
    dtype=np.int64,
)
PATTERNS.setflags(write=False)
N_PATTERNS = len(PATTERNS)

_INDEX = {tuple(int(x) for x in p): i for i, p in enumerate(PATTERNS)}


#: Pattern index by (spades, hearts, diamonds) lengths, for vectorised lookups.
PATTERN_BY_SHD: np.ndarray = np.full((14, 14, 14), -1, dtype=np.int64)
PATTERN_BY_SHD[PATTERNS[:, 0], PATTERNS[:, 1], PATTERNS[:, 2]] = np.arange(N_PATTERNS)
PATTERN_BY_SHD.setflags(write=False)


def pattern_index(lengths: tuple[int, int, int, int]) -> int:
    """Index of the pattern with these suit lengths; KeyError if they do not sum to 13."""
    return _INDEX[tuple(lengths)]


def hands_with_pattern(lengths) -> int:
    """Number of 13-card hands with exactly these suit lengths."""
    out = 1
    for n in lengths:
        out *= comb(13, int(n))
    return out


def format_pattern(lengths) -> str:
    """Pavlicek's notation, e.g. ``9=2=1=1``."""
    return "=".join(str(int(n)) for n in lengths)
