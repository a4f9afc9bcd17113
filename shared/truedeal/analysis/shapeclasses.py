"""The 39 shape classes (seed 003): suit lengths sorted, whatever the suit order.

A class such as 5-3-3-2 gathers the 12 ordered patterns (5=3=3=2, 3=5=3=2, ...)
that sort to it.  Its hand count is C(13,a)C(13,b)C(13,c)C(13,d) times the
number of distinct suit orders, 24 / (product of factorials of repeated
lengths); over all classes the counts sum to C(52,13) = 635,013,559,600.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from math import comb

import numpy as np

from ..patterns import PATTERNS, hands_with_pattern

#: Hands of 13 cards: C(52, 13).
HANDS = comb(52, 13)


@dataclass(frozen=True)
class ShapeClass:
    """One class: its lengths (longest first), its ordered patterns and hand count."""

    lengths: tuple[int, ...]  # four suit lengths
    mask: np.ndarray  # (560,) bool over PATTERNS
    hands: int

    @property
    def name(self) -> str:
        """``4333`` style, or ``10-2-1-0`` when a suit has ten cards or more (unambiguous)."""
        sep = "-" if self.lengths[0] >= 10 else ""
        return sep.join(str(n) for n in self.lengths)

    @property
    def ordered_patterns(self) -> int:
        return int(self.mask.sum())


def class_of(lengths) -> tuple[int, ...]:
    """The class (sorted lengths, longest first) of a pattern."""
    return tuple(sorted((int(n) for n in lengths), reverse=True))


@cache
def shape_classes() -> tuple[ShapeClass, ...]:
    """The 39 classes in the seed's order: 13-0-0-0, 12-1-0-0, 11-2-0-0, 11-1-1-0, ... 4333."""
    keys = np.array([class_of(p) for p in PATTERNS])
    out = []
    for lengths in sorted({tuple(int(x) for x in k) for k in keys}, reverse=True):
        mask = (keys == np.array(lengths)).all(axis=1)
        mask.setflags(write=False)
        hands = sum(hands_with_pattern(PATTERNS[i]) for i in np.flatnonzero(mask))
        out.append(ShapeClass(lengths, mask, hands))
    return tuple(out)


def class_index_of_pattern() -> np.ndarray:
    """``(560,)`` int array: the index in :func:`shape_classes` of each pattern's class."""
    out = np.empty(len(PATTERNS), dtype=np.int64)
    for i, sc in enumerate(shape_classes()):
        out[sc.mask] = i
    return out


def find_class(name: str) -> ShapeClass:
    """The class named ``4333``, ``4-3-3-3`` or ``10-2-1-0``; KeyError otherwise."""
    key = name.strip().replace("=", "-")
    for sc in shape_classes():
        if key in (sc.name, "-".join(str(n) for n in sc.lengths)):
            return sc
    raise KeyError(name)
