"""The result of counting a spec: :class:`CountSummary`.

One record for ``truedeal count``, the API's ``CountResult``, the job record
and the count helpers' replies.  Its JSON (:meth:`CountSummary.to_json`) is
flat and keeps every integer exact (JSON numbers of any size; JavaScript
clients read the API's ``deals_text``).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from .cards import D

#: JSON keys written only when set: an estimate's figures, an either/or's
#: branches, a job's slices.
_OPTIONAL = ("deals_estimate", "deals_estimate_stderr", "deals_expected", "branches", "slices")


def expected_deals(count: int, scale: int) -> int | str:
    """``count / scale`` deals: an integer, or the exact fraction ``"p/q"``
    (the deals a script whose ``rnd`` is weighed keeps, on average)."""
    x = Fraction(count, scale)
    return x.numerator if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


@dataclass(frozen=True)
class ListingSizes:
    """How big the listing is, and how long it took to build."""

    side_total: int  # T: ways to deal the constrained seats
    unconstrained_ways: int  # ways to split the rest among the free seats
    cells: int
    entries: int  # level-0 entries
    build_seconds: float


@dataclass(frozen=True)
class Rejection:
    """Where a plan rejects: what rejection checks, and how often a listed
    deal passes (measured on a fixed pilot; exact where the count is)."""

    seats: list[str]
    parts: list[str]
    acceptance_rate: float
    acceptance_stderr: float
    pilot_draws: int
    listed_deals: int
    listed_cases: int | None  # None for a split listed one class at a time (see CountSummary.cases)
    #: the acceptance is the exact count over the listed deals (``stderr`` 0), not the pilot's share
    acceptance_exact: bool = False
    #: why the whole is not listed exactly: the limit its exact listing would pass (None where
    #: rejection checks only what no listing reads, such as ``tricks`` or ``rnd``)
    why_not_exact: str | None = None


@dataclass(frozen=True)
class CountSummary:
    """The exact count of a spec (``deals`` set; ``rejection`` None, or set
    where the deals are drawn by rejection with an exact acceptance), a
    labelled estimate (``deals`` None, ``deals_estimate`` and ``rejection``
    set), or the exact expected count of a script whose ``rnd`` is weighed
    (``deals`` and ``rejection`` None, ``deals_expected`` the fraction,
    ``deals_estimate`` its float, the probability exact)."""

    deals: int | None
    probability: float
    probability_exact: str | None  # "p/q", exact counts only
    one_in: float | None  # None when no deal fits
    possible: bool
    cases: int | None  # Pavlicek's cases; None for an estimate, and for a split listed one class at a time (truedeal.class_split)
    method: str
    sizes: ListingSizes
    rejection: Rejection | None = None
    deals_estimate: float | None = None
    deals_estimate_stderr: float | None = None
    deals_expected: str | None = None  # a script's rnd() weighed: the deals it keeps out of all D, an exact fraction
    branches: list[int] | None = None  # an either/or's deals per branch (per class of rnd's numbers)
    slices: int | None = None  # a job's count merged from this many slices

    @classmethod
    def exact(cls, deals: int, cases: int | None, sizes: ListingSizes, method: str = "exact", **extra: Any) -> CountSummary:
        """An exact count: the probability follows from ``deals`` alone."""
        p = Fraction(deals, D)
        return cls(deals, float(p), f"{p.numerator}/{p.denominator}", D / deals if deals else None,
                   deals > 0, cases, method, sizes, **extra)

    def to_json(self) -> dict[str, Any]:
        """The flat JSON object of ``truedeal count --json``: the sizes at the
        top level, the optional keys only when set."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("sizes", "rejection")}
        out["rejection"] = None if self.rejection is None else dataclasses.asdict(self.rejection)
        out.update(dataclasses.asdict(self.sizes))
        return {k: v for k, v in out.items() if v is not None or k not in _OPTIONAL}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CountSummary:
        """The inverse of :meth:`to_json` (unknown keys are ignored)."""
        sizes = ListingSizes(**{f.name: data[f.name] for f in dataclasses.fields(ListingSizes)})
        rejection = None if data.get("rejection") is None else Rejection(**data["rejection"])
        skip = ("sizes", "rejection")
        fields: dict[str, Any] = {f.name: data.get(f.name) for f in dataclasses.fields(cls) if f.name not in skip}
        return cls(sizes=sizes, rejection=rejection, **fields)


def pilot_stderr(share: float, draws: int) -> float:
    """The binomial standard error of the share of ``draws`` pilot deals
    kept; where it kept all or none, ``1 / draws``, its resolution, not 0."""
    return math.sqrt(max(share * (1 - share), 1 / max(draws, 1)) / max(draws, 1))


__all__ = ["CountSummary", "ListingSizes", "Rejection", "expected_deals", "pilot_stderr"]
