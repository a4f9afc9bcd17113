"""Stream v2's deals for a spec that every deal fits: deal numbers read off the stream.

When all ``D`` deals fit, a uniform deal is a uniform integer below ``D``,
and its deal number (7Z68) is that integer.  Stream v2 reads the numbers
straight off the seeded bytes: the stream is cut into 12-byte words, each
read as a big-endian integer below 2**96, and the words below ``D`` (68% of
them), in stream order, are the deals.  That is :meth:`Rng.below_int(D)
<truedeal.randomness.Rng.below_int>` drawn again and again, vectorised.

The kept words are byte for byte the 12-byte form a job stores
(:func:`truedeal.dealnumber.limbs_to_bytes`), so the ``numbers`` format
prints them without dealing the cards, and a job stores them as read.
"""

from __future__ import annotations

import numpy as np

from .cards import D
from .kernel import native as _native
from .randomness import SeededBits

#: Bytes per candidate word: D < 2**96.
WORD_BYTES = 12
_D_HI, _D_LO = np.uint64(D >> 64), np.uint64(D & ((1 << 64) - 1))
#: Words read per deal wanted, a little above 2**96 / D = 1.477, so that one read nearly always suffices.
_READ_RATIO = 1.5


def deal_numbers(bits: SeededBits, n: int) -> np.ndarray:
    """The next ``n`` deals of the stream as (n, 2) uint64 limbs ``[hi, lo]``
    (the deal number is ``hi * 2**64 + lo``, below D).  Reads a little ahead:
    callers draw a chunk's deals in one call and then drop the stream."""
    parts, have = [], 0
    while have < n:
        words = np.frombuffer(bits.read(WORD_BYTES * (int((n - have) * _READ_RATIO) + 16)), np.uint8)
        kept = _below_d(words.reshape(-1, WORD_BYTES))
        parts.append(kept)
        have += len(kept)
    return np.concatenate(parts)[:n] if len(parts) > 1 else parts[0][:n]


def _below_d(words: np.ndarray) -> np.ndarray:
    """The rows of ``words`` ((m, 12) uint8, big-endian) below D, as limbs;
    compiled when the kernel is built, else :func:`below_d_numpy`."""
    k = _native()
    if k is None:
        return below_d_numpy(words)
    out = np.empty((len(words), 2), np.uint64)
    return out[: k.below_d(words, out)]


def below_d_numpy(words: np.ndarray) -> np.ndarray:
    """:func:`_below_d` on numpy alone: the reference implementation."""
    hi = np.ascontiguousarray(words[:, :4]).view(">u4")[:, 0].astype(np.uint64)
    lo = np.ascontiguousarray(words[:, 4:]).view(">u8")[:, 0].astype(np.uint64)
    keep = (hi < _D_HI) | ((hi == _D_HI) & (lo < _D_LO))
    return np.stack([hi[keep], lo[keep]], axis=1)
