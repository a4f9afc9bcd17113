"""Counting deals of a spec under one extra per-seat condition.

This is the single engine call that every exact answer in this package is
built on: ``count(spec AND seat's pattern in P AND seat's HCP in [a, b])``.
Summing it over the values of a feature gives that feature's exact law
(:mod:`.distribution`).  Today it intersects the condition with the seat's
:class:`~truedeal.spec.SeatConstraint` and lists the result with the factored
engine; a general engine can replace :func:`count_with` (same signature) to
condition on sums, controls, losers and so on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..listing import TooWide, build_listing
from ..patterns import N_PATTERNS
from ..spec import SeatConstraint, Spec


class NotExact(ValueError):
    """The engine cannot count this condition exactly (too wide to list)."""


@dataclass(frozen=True, eq=False)
class SeatCondition:
    """An extra condition on one seat (0..3 = N E S W): allowed patterns and/or an HCP range.

    ``patterns`` is a ``(560,)`` bool mask over :data:`~truedeal.patterns.PATTERNS`
    or None (any pattern); ``hcp`` an inclusive range or None (any HCP).
    """

    seat: int
    patterns: np.ndarray | None = None
    hcp: tuple[int, int] | None = None


#: The interface: exact number of deals of ``spec`` that also meet the condition.
Counter = Callable[[Spec, SeatCondition], int]


def _meet(old: SeatConstraint | None, cond: SeatCondition) -> SeatConstraint | None:
    """The seat's constraint AND the condition; None when they cannot both hold."""
    patterns = old.patterns if old is not None else None
    if cond.patterns is not None:
        patterns = cond.patterns if patterns is None else (patterns & cond.patterns)
        if not patterns.any():
            return None
    hcp = old.hcp if old is not None else None
    if cond.hcp is not None:
        lo, hi = cond.hcp
        if hcp is not None:
            lo, hi = max(lo, hcp[0]), min(hi, hcp[1])
        if lo > hi:
            return None
        hcp = (lo, hi)
    return SeatConstraint(cond.seat, patterns, hcp)


def conditioned_rules(spec: Spec, cond: SeatCondition) -> list[SeatConstraint] | None:
    """The spec's engine constraints with ``cond`` folded in; None if it contradicts them."""
    rules = spec.constraints()
    old = next((c for c in rules if c.seat == cond.seat), None)
    new = _meet(old, cond)
    if new is None:
        return None
    others = [c for c in rules if c.seat != cond.seat]
    if new.patterns is None and new.hcp is None:
        return others
    return sorted([*others, new], key=lambda c: c.seat)


def count_with(spec: Spec, cond: SeatCondition) -> int:
    """Exact deals of ``spec`` whose seat ``cond.seat`` also meets ``cond``.

    Raises :class:`NotExact` when the conditioned listing is too wide.
    """
    rules = conditioned_rules(spec, cond)
    if rules is None:
        return 0
    try:
        return build_listing(rules).deals
    except TooWide as exc:
        raise NotExact(f"cannot count exactly: {exc}") from None


def spec_total(spec: Spec) -> int:
    """Exact deals of the whole spec (the condition 'nothing')."""
    return count_with(spec, SeatCondition(0))


def allowed_patterns(spec: Spec, seat: int) -> np.ndarray:
    """The seat's allowed patterns under the spec (all 560 if it constrains none)."""
    for c in spec.constraints():
        if c.seat == seat and c.patterns is not None:
            return c.patterns
    return np.ones(N_PATTERNS, dtype=bool)


def allowed_hcp(spec: Spec, seat: int) -> tuple[int, int]:
    """The seat's HCP range under the spec (0..37 if it constrains none)."""
    for c in spec.constraints():
        if c.seat == seat and c.hcp is not None:
            return c.hcp
    return (0, 37)
