"""Exact laws of a feature over all deals of a spec, by conditioning.

For each value ``v`` of a feature, ``count(spec AND feature == v)`` is one
engine count (:mod:`.conditioning`); the counts sum to the spec's deal count,
which is checked.  No deal is drawn.  Features today: a seat's HCP, a seat's
length in one suit, a seat's shape class.  Expressions are written
``hcp(south)``, ``spades(north)``, ``shape class of east`` (or ``class(east)``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from ..cards import MAX_HCP, SEAT_NAMES, SUIT_NAMES
from ..formats.rotation import seat_index
from ..patterns import PATTERNS
from ..spec import Spec
from ..summary import expected_deals
from .conditioning import Counter, SeatCondition, allowed_hcp, allowed_patterns, count_with, spec_total
from .shapeclasses import shape_classes

if TYPE_CHECKING:  # general builds on this module
    from .general import Query


class UnsupportedFeature(ValueError):
    """An expression this module cannot compute exactly yet (one-line message)."""


@dataclass(frozen=True)
class Feature:
    """A per-seat feature: ``kind`` is ``hcp``, ``length`` (of ``suit``) or ``class``."""

    kind: str
    seat: int
    suit: int | None = None

    @property
    def name(self) -> str:
        seat = SEAT_NAMES[self.seat]
        if self.kind == "hcp":
            return f"hcp({seat})"
        if self.kind == "length" and self.suit is not None:
            return f"{SUIT_NAMES[self.suit]}({seat})"
        return f"shape class of {seat}"

    @property
    def numeric(self) -> bool:
        return self.kind != "class"

    def conditions(self, spec: Spec) -> list[tuple[int | str, SeatCondition]]:
        """``(value, condition)`` for every value the spec does not rule out at once."""
        mask = allowed_patterns(spec, self.seat)
        if self.kind == "hcp":
            lo, hi = allowed_hcp(spec, self.seat)
            return [(v, SeatCondition(self.seat, hcp=(v, v))) for v in range(lo, hi + 1)]
        if self.kind == "length":
            out: list[tuple[int | str, SeatCondition]] = []
            for v in range(14):
                m = PATTERNS[:, self.suit] == v
                if (m & mask).any():
                    out.append((v, SeatCondition(self.seat, patterns=m)))
            return out
        return [(sc.name, SeatCondition(self.seat, patterns=sc.mask)) for sc in shape_classes() if (sc.mask & mask).any()]


_SEAT = r"\s*([a-zA-Z]+)\s*"
_CALL = re.compile(r"^\s*([a-z]+)\s*\(" + _SEAT + r"\)\s*$", re.IGNORECASE)
_CLASS = re.compile(r"^\s*shape\s+class\s+of" + _SEAT + r"$", re.IGNORECASE)


def _seat(word: str, expr: str) -> int:
    try:
        return seat_index(word)
    except ValueError:
        raise UnsupportedFeature(f"{expr!r}: unknown seat {word!r} (north, east, south, west or N, E, S, W)") from None


def parse_feature(expr: str) -> Feature:
    """``hcp(S)``, ``spades(north)``, ``shape class of east``, ``class(E)`` -> :class:`Feature`.

    Raises :class:`UnsupportedFeature` for anything else (sums, controls,
    losers, conditions): the general engine will take those over.
    """
    m = _CLASS.match(expr)
    if m:
        return Feature("class", _seat(m.group(1), expr))
    m = _CALL.match(expr)
    if m:
        fn, seat = m.group(1).lower(), _seat(m.group(2), expr)
        if fn == "hcp":
            return Feature("hcp", seat)
        if fn in SUIT_NAMES:
            return Feature("length", seat, SUIT_NAMES.index(fn))
        if fn in ("class", "shape"):
            return Feature("class", seat)
    raise UnsupportedFeature(
        f"cannot compute {' '.join(expr.split())!r} exactly yet: supported are hcp(SEAT), "
        "spades|hearts|diamonds|clubs(SEAT) and 'shape class of SEAT'"
    )


@dataclass(frozen=True)
class Distribution:
    """The exact law of ``feature`` over the ``total`` deals of a spec: value -> deals.

    For a script whose ``rnd`` is weighed (:mod:`truedeal.constraints.rnd_levels`)
    the counts are the deals the script is expected to keep, times ``scale``
    (its ``rnd`` numbers): integers, and the law the same."""

    feature: Feature | Query  # anything with a name and a numeric flag
    counts: dict  # value -> exact deal count (values the spec rules out are absent)
    total: int
    scale: int = 1

    def deals(self, count: int) -> int | str:
        """A count as deals (:func:`expected_deals`)."""
        return expected_deals(count, self.scale)

    def probability(self, value) -> Fraction:
        return Fraction(self.counts.get(value, 0), self.total)

    @property
    def mean(self) -> Fraction | None:
        """Exact mean (None for a non-numeric feature)."""
        if not self.feature.numeric or not self.total:
            return None
        return Fraction(sum(v * c for v, c in self.counts.items()), self.total)

    @property
    def variance(self) -> Fraction | None:
        """Exact variance E[X^2] - E[X]^2 (None for a non-numeric feature)."""
        mean = self.mean
        if mean is None:
            return None
        return Fraction(sum(v * v * c for v, c in self.counts.items()), self.total) - mean * mean

    @property
    def sd(self) -> float | None:
        """Standard deviation: the square root of the exact variance (generally irrational)."""
        var = self.variance
        return None if var is None else math.sqrt(var)

    def to_json(self) -> dict:
        """``{"feature", "deals", "distribution": [{"value", "deals", "probability_exact", "probability"}], "mean_exact", ...}``."""
        rows = [
            {"value": v, "deals": self.deals(c), "probability_exact": _frac(self.probability(v)),
             "probability": float(self.probability(v))}
            for v, c in self.counts.items()
        ]
        out = {"feature": self.feature.name, "exact": True, "deals": self.deals(self.total), "distribution": rows}
        if self.scale != 1:
            out["expected"] = True  # the deals a script whose rnd() is weighed keeps, on average
        mean, var = self.mean, self.variance
        out["mean_exact"] = None if mean is None else _frac(mean)
        out["mean"] = None if mean is None else float(mean)
        out["variance_exact"] = None if var is None else _frac(var)
        out["sd"] = self.sd
        return out


def _frac(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


def deals_text(deals: int | str) -> str:
    """Deals as a line prints them: an integer with separators, a fraction as it is."""
    return f"{deals:,}" if isinstance(deals, int) else deals


def exact_distribution(spec: Spec, feature: Feature | str, counter: Counter = count_with) -> Distribution:
    """The exact law of ``feature`` under ``spec``: one ``counter`` call per possible value.

    Values whose count is 0 are dropped.  Raises
    :class:`~.conditioning.NotExact` if a conditioned listing is too wide and
    :class:`UnsupportedFeature` for an expression that is not a feature here.
    """
    if isinstance(feature, str):
        feature = parse_feature(feature)
    counts = {}
    for value, cond in feature.conditions(spec):
        n = counter(spec, cond)
        if n:
            counts[value] = n
    total = spec_total(spec) if counter is count_with else counter(spec, SeatCondition(feature.seat))
    if sum(counts.values()) != total:  # the values partition the deals: a broken engine shows here
        raise RuntimeError(f"{feature.name}: conditioned counts sum to {sum(counts.values())}, not {total}")
    return Distribution(feature, counts, total)


def exact_joint(spec: Spec, seat: int, counter: Counter = count_with) -> dict[tuple[str, int], int]:
    """Exact deals for each (shape class, HCP) of ``seat``: pattern and HCP conditioned together."""
    lo, hi = allowed_hcp(spec, seat)
    mask = allowed_patterns(spec, seat)
    out = {}
    for sc in shape_classes():
        if not (sc.mask & mask).any():
            continue
        for h in range(lo, min(hi, MAX_HCP) + 1):
            n = counter(spec, SeatCondition(seat, patterns=sc.mask, hcp=(h, h)))
            if n:
                out[(sc.name, h)] = n
    return out


def hcp_table() -> np.ndarray:
    """Exact hands of each HCP 0..37 for one 13-card hand (an unconstrained spec's law), as ints."""
    d = exact_distribution(Spec(), Feature("hcp", 0))
    return np.array([d.counts.get(h, 0) for h in range(MAX_HCP + 1)], dtype=object)
