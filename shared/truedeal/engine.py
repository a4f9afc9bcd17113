"""One spec, one plan: its exact count and its stream of uniform deals.

This is the core's entry point for the CLI, the workers and the web app::

    plan = Plan.build(load_spec("examples/strong-nt.json"))
    plan.summary()                      # exact deals, probability, cases
    for owners in plan.deals(100, seed="club night"):
        ...                             # (k, 52) uint8 batches

Seeded streams are cut into chunks of :data:`~truedeal.randomness.CHUNK_DEALS`
deals, chunk ``j`` drawing from the stream of ``(seed, j)``; the first ``n``
deals of a seed never depend on how many deals were asked for.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterator

import numpy as np

from .cards import D
from .enumeration import Listing, TooWide, build_listing
from .randomness import CHUNK_DEALS, chunk_rng
from .sampling import Sampler
from .spec import Spec

#: Largest number of deals one request may ask for.
MAX_DEALS = 1_000_000_000


class Impossible(ValueError):
    """No deal satisfies the spec."""


@dataclass
class Plan:
    """A built listing for one spec, ready to count and to draw from."""

    spec: Spec
    listing: Listing
    build_seconds: float
    _sampler: Sampler | None = None

    @classmethod
    def build(cls, spec: Spec, progress: Callable[[int, int], None] | None = None) -> "Plan":
        """Enumerate ``spec`` exactly.  Raises :class:`TooWide` past the memory limits."""
        t0 = time.perf_counter()
        listing = build_listing(spec.constraints(), progress)
        return cls(spec, listing, time.perf_counter() - t0)

    # ----------------------------------------------------------------- counts

    @property
    def deals_total(self) -> int:
        """Exact number of complete deals that satisfy the spec."""
        return self.listing.deals

    @property
    def possible(self) -> bool:
        return self.listing.total > 0

    @property
    def probability(self) -> Fraction:
        return Fraction(self.deals_total, D)

    def summary(self) -> dict:
        """The JSON-able result of ``truedeal count``."""
        deals = self.deals_total
        lay = self.listing.layout
        return {
            "deals": deals,
            "probability": float(self.probability),
            "probability_exact": f"{self.probability.numerator}/{self.probability.denominator}",
            "one_in": (D / deals) if deals else None,
            "possible": deals > 0,
            "cases": self.listing.cases,
            "side_total": self.listing.total,
            "unconstrained_ways": lay.free_ways(),
            "method": "exact",
            "rejection": None,
            "cells": int(len(self.listing.cells)),
            "entries": int(len(self.listing.e_weight)),
            "build_seconds": round(self.build_seconds, 4),
        }

    # ------------------------------------------------------------------ draws

    @property
    def sampler(self) -> Sampler:
        if not self.possible:
            raise Impossible("no deal satisfies this spec")
        if self._sampler is None:
            self._sampler = Sampler(self.listing)
        return self._sampler

    def chunk(self, index: int, seed: str | None, size: int = CHUNK_DEALS) -> np.ndarray:
        """Deals of chunk ``index``: the full chunk when seeded (so that it is
        reproducible), ``size`` fresh deals otherwise."""
        rng = chunk_rng(seed, index)
        return self.sampler.draw(CHUNK_DEALS if seed is not None else size, rng)[:size]

    def deals(self, n: int, seed: str | None = None, start_chunk: int = 0) -> Iterator[np.ndarray]:
        """``n`` uniform deals as (k, 52) owners batches, in constant memory."""
        check_count(n)
        _ = self.sampler  # fail before the first batch if impossible
        chunk = start_chunk
        while n > 0:
            size = min(n, CHUNK_DEALS)
            yield self.chunk(chunk, seed, size)
            n -= size
            chunk += 1


def check_count(n: int) -> int:
    """Validate a requested number of deals; raises ValueError with a clear message."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise ValueError(f"the number of deals must be an integer, got {n!r}")
    if n < 1:
        raise ValueError(f"the number of deals must be at least 1, got {n}")
    if n > MAX_DEALS:
        raise ValueError(f"at most {MAX_DEALS:,} deals per request, got {n:,}")
    return n


__all__ = ["Plan", "Impossible", "TooWide", "check_count", "MAX_DEALS"]
