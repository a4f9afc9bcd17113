"""The exact law of Pavlicek's cases for one constrained seat, in closed form.

A case of a spec that constrains one seat is that seat's suit pattern ``P``
(when the spec restricts its shape or lengths) and its holding ``H`` of the
16 honours (A K Q J of each suit).  Its weight needs no listing: the seat
takes ``P[u] - |H in u|`` of the 9 spot cards of each suit ``u``, and the
other 39 cards go to the three other seats in ``39! / 13!^3`` ways, so

    weight(P, H) = prod_u C(9, P[u] - |H in u|) * 39! / 13!^3,

and for a seat of HCP alone, summed over every pattern,
``weight(H) = C(36, 13 - |H|) * 39! / 13!^3``.

This is an independent check of the listing (the number of cases and their
total are Pavlicek's figures) and the expected law of ``truedeal stats``'
case test.  Only small listings are tested: with more cases than
:data:`MAX_CASES` no test is run.
"""

from __future__ import annotations

from math import comb, factorial

import numpy as np

from ..patterns import PATTERNS
from ..spec import Spec
from .conditioning import allowed_hcp, allowed_patterns

#: The largest number of cases for which the case test is run.
MAX_CASES = 5_000
SPOTS_PER_SUIT = 9
HONOURS = 16
OTHER_SEATS_WAYS = factorial(39) // factorial(13) ** 3
#: The pattern part of a case key when the seat's shape is free.
NO_PATTERN = -1

_BITS = np.arange(1 << HONOURS)[:, None] >> np.arange(HONOURS) & 1  # (65536, 16): honour i held?
# Honour i is rank i // 4 (A K Q J) of suit i % 4 (S H D C), as cards 0..15 are.
_HONOUR_HCP = _BITS @ np.repeat([4, 3, 2, 1], 4)
_HONOURS_IN_SUIT = np.stack([_BITS[:, u::4].sum(axis=1) for u in range(4)], axis=1)


def one_seat(spec: Spec) -> int | None:
    """The constrained seat when the spec constrains exactly one, in the first language; else None."""
    seats = spec.seats()
    return seats[0][0] if len(seats) == 1 and spec.is_simple() else None


def case_weights(spec: Spec, seat: int) -> dict[tuple[int, int], int] | None:
    """(pattern index, honour mask) -> exact deals, for a spec constraining only
    ``seat`` by HCP, lengths and shape; None past :data:`MAX_CASES` cases."""
    lo, hi = allowed_hcp(spec, seat)
    masks = np.nonzero((_HONOUR_HCP >= lo) & (_HONOUR_HCP <= hi))[0]
    patterns = allowed_patterns(spec, seat)
    if patterns.all():  # HCP alone: a case is a holding (of at most 13 cards)
        masks = masks[_BITS[masks].sum(axis=1) <= 13]
        if len(masks) > MAX_CASES:
            return None
        spots = 52 - HONOURS
        return {(NO_PATTERN, int(m)): comb(spots, 13 - int(_BITS[m].sum())) * OTHER_SEATS_WAYS for m in masks}
    out: dict[tuple[int, int], int] = {}
    for p in np.nonzero(patterns)[0]:
        spots = PATTERNS[p][None, :] - _HONOURS_IN_SUIT[masks]
        fits = masks[((spots >= 0) & (spots <= SPOTS_PER_SUIT)).all(axis=1)]
        if len(out) + len(fits) > MAX_CASES:
            return None
        for m in fits.tolist():
            ways = 1
            for u in range(4):
                ways *= comb(SPOTS_PER_SUIT, int(PATTERNS[p][u] - _HONOURS_IN_SUIT[m, u]))
            out[(int(p), m)] = ways * OTHER_SEATS_WAYS
    return out


def observed_cases(owners: np.ndarray, seat: int, patterned: bool) -> np.ndarray:
    """Each deal's case key ``pattern index * 65536 + honour mask`` for ``seat``
    (pattern :data:`NO_PATTERN` when the seat's shape is free)."""
    from ..evaluate import pattern_index

    held = (owners[:, :HONOURS] == seat).astype(np.int64) @ (1 << np.arange(HONOURS))
    if not patterned:
        return NO_PATTERN * (1 << HONOURS) + held
    return pattern_index(owners, seat).astype(np.int64) * (1 << HONOURS) + held
