"""A condition that reads ``rnd`` as a weighted sum of conditions that do not (:func:`levels`).

``rnd(n)`` is one number per deal for each call written in the script (a
variable holding it reads the same number wherever it is used, as
:mod:`.evaluate` draws it).  When every comparison that reads ``rnd`` reads
nothing else, the joint numbers fall into a few classes that decide every
such comparison alike: class c, taken by ``m_c`` of the N equally likely
joint numbers, turns the condition into a condition ``C_c`` of the deal
alone.  The script keeps deal d with probability exactly

    w(d) = sum over c of m_c [d fits C_c] / N,

so a plan that lists each ``C_c`` exactly draws the script's law with
nothing rejected: it picks c with probability ``m_c deals(C_c) / sum of
m_c' deals(C_c')`` and draws uniformly from ``C_c``
(:class:`truedeal.weighted.Weighted`).  The number of deals the script is
expected to keep out of all D is ``sum of m_c deals(C_c) / N``, exactly.

The practice library's leveled scripts are of this kind: ``roll =
rnd(1000)`` and ``type_k and roll < keep_k`` give one class per distinct
``keep_k``, plus one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import fold, ir
from .evaluate import evaluate_given
from .opaque import Substitute, signs

#: Most joint numbers of the script's ``rnd`` calls enumerated.
MAX_POINTS = 1 << 20
#: Most classes (each a listing of its own).
MAX_LEVELS = 8


@dataclass(frozen=True)
class Level:
    """One class of ``rnd``'s numbers: ``weight`` of the joint numbers give ``program``."""

    weight: int
    program: ir.Program
    support: bool  # its condition is the support's (opaque.support): each comparison at its sign
    truths: tuple[tuple[int, bool], ...]  # each comparison that reads rnd (by identity), decided

    def on(self, condition: ir.Cond) -> ir.Cond:
        """``condition`` (which holds the program's: a law's count) in this class."""
        return Substitute(dict(self.truths)).cond(condition)


@dataclass(frozen=True)
class Levels:
    """The classes of a condition's ``rnd`` numbers (weights sum to ``points``), those that keep some deals."""

    points: int  # N: the joint numbers, equally likely
    parts: tuple[Level, ...]  # most comparisons true first: the widest condition is listed first


def levels(program: ir.Program) -> Levels | None:
    """``program``'s condition in classes of ``rnd``, as the module says; None
    when it reads no ``rnd``, or another opaque number, or compares ``rnd``
    with a feature of the deal, or has too many classes.  Kept for the
    program (by identity: the classes name its comparisons so) for the next
    ask, since a plan, its pilot's rule and each law all ask (0.4 s for
    ``rnd(1000000)``)."""
    hit = _KEPT.get(id(program))
    if hit is None or hit[0] is not program:
        hit = _KEPT[id(program)] = (program, _levels(program))
        while len(_KEPT) > _MOST_KEPT:
            _KEPT.pop(next(iter(_KEPT)))
    return hit[1]


#: The last programs asked about, and their classes (the program kept alive with them).
_KEPT: dict[int, tuple[ir.Program, Levels | None]] = {}
_MOST_KEPT = 16


def _levels(program: ir.Program) -> Levels | None:
    units = _units(program.condition)
    if not units:
        return None
    sources = _sources(units)
    if sources is None or math.prod(sources.values()) > MAX_POINTS:
        return None
    grid = np.unravel_index(np.arange(math.prod(sources.values())), tuple(sources.values()))
    truths = np.array(evaluate_given(units, dict(zip(sources, grid))))  # (units, points)
    classes, weights = np.unique(truths.T, axis=0, return_counts=True)
    polarity = signs(program.condition)
    every = [_level(program, units, row, int(w), polarity) for row, w in zip(classes, weights)]
    parts = [p for p in every if p.program.condition != ir.Truth(False)] or every[:1]  # (none: it keeps no deal)
    if len(parts) > MAX_LEVELS:
        return None
    # (k indexes the classes before those that keep nothing were dropped: an
    # order kept as it is, since the classes' order is part of a seed's deals)
    order = sorted(range(len(parts)), key=lambda k: -int(classes[k].sum()))
    return Levels(int(weights.sum()), tuple(parts[k] for k in order))


def _level(program: ir.Program, units: list[ir.Compare], row: np.ndarray, weight: int,
           polarity: dict[int, set[bool]]) -> Level:
    truths = {id(u): bool(t) for u, t in zip(units, row)}
    condition = Substitute(truths).cond(program.condition)
    support = all(polarity.get(k) == {t} for k, t in truths.items())
    return Level(weight, ir.Program(condition=condition, predeal=program.predeal), support, tuple(truths.items()))


def _units(condition: ir.Cond) -> list[ir.Compare] | None:
    """The comparisons that read ``rnd`` (each once), reached through and,
    or and not; None when one reads a card too, or another opaque number."""
    units: list[ir.Compare] = []
    for c in ir.leaves(condition):
        if isinstance(c, ir.Compare) and (names := ir.opaque_names(c)):
            if names != {"rnd"} or any(isinstance(x, (ir.Feature, ir.ShapeIn)) for x in ir.nodes(c)):
                return None
            units.append(c)
    return units


def _sources(units: list[ir.Compare]) -> dict[int, int] | None:
    """Each ``rnd`` call the units read (by identity) and how many numbers it
    draws; None when its bound is not a constant."""
    out: dict[int, int] = {}
    for x in ir.nodes(tuple(units)):
        if isinstance(x, ir.OpaqueNum):
            bound = fold.as_num(x.args[0])
            if not fold.is_const(bound):
                return None
            out[id(x)] = max(bound.const, 1)  # rnd(0) is always 0 (as the evaluator draws it)
    return out
