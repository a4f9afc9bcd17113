"""A sampled estimate of a law, for what the engine cannot count exactly.

Used only when :mod:`.general` raises ``NotExact`` (``tricks``, products of
features, a spec the engine lists only with rejection).  The deals are
still drawn exactly uniformly from the spec (rejection keeps uniformity);
only the answer is an estimate, and every output says so: ``exact`` is
false, each probability carries its binomial standard error
``sqrt(p (1 - p) / n)`` and the mean its standard error ``sd / sqrt(n)``.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import numpy as np

from ..choices import DEFAULT_DD_SAMPLES, DEFAULT_SAMPLES, DEFAULT_SEED
from ..constraints import ir
from ..constraints.dds import needs_double_dummy
from ..constraints.evaluate import evaluate_num
from ..engine import Plan, TooWide
from ..errors import Impossible
from ..evaluate import pattern_index
from .conditioning import NotExact
from .general import Query, as_program
from .shapeclasses import class_index_of_pattern, shape_classes


def default_samples(query: Query) -> int:
    """How many deals an estimate of ``query`` draws unless told: fewer when it needs double dummy."""
    return DEFAULT_DD_SAMPLES if needs_double_dummy((query.num, query.given)) else DEFAULT_SAMPLES


@dataclass(frozen=True)
class SampledDistribution:
    """Observed values of ``feature`` among ``n`` uniform deals of a spec: value -> deals."""

    feature: Query
    counts: dict
    n: int
    seed: str
    reason: str  # why no exact answer

    def probability(self, value) -> float:
        return self.counts.get(value, 0) / self.n

    def stderr(self, value) -> float:
        p = self.probability(value)
        return math.sqrt(p * (1 - p) / self.n)

    @property
    def mean(self) -> float | None:
        if not self.feature.numeric:
            return None
        return sum(v * c for v, c in self.counts.items()) / self.n

    @property
    def sd(self) -> float | None:
        """The sample standard deviation (n - 1 in the denominator)."""
        m = self.mean
        if m is None or self.n < 2:
            return None
        return math.sqrt(sum(c * (v - m) ** 2 for v, c in self.counts.items()) / (self.n - 1))

    @property
    def mean_stderr(self) -> float | None:
        sd = self.sd
        return None if sd is None else sd / math.sqrt(self.n)

    def to_json(self) -> dict:
        rows = [
            {"value": v, "samples": c, "probability_estimate": self.probability(v), "stderr": self.stderr(v)}
            for v, c in self.counts.items()
        ]
        return {
            "feature": self.feature.name,
            "exact": False,
            "method": f"sampled estimate: {self.n:,} uniform deals (seed {self.seed!r}); not exact because {self.reason}",
            "samples": self.n,
            "seed": self.seed,
            "distribution": rows,
            "mean_estimate": self.mean,
            "mean_stderr": self.mean_stderr,
            "sd_estimate": self.sd,
        }


def _values(query: Query, owners: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    if query.class_seat is not None:
        names = np.array([sc.name for sc in shape_classes()])
        return names[class_index_of_pattern()[pattern_index(owners, query.class_seat)]]
    assert query.num is not None  # a query is a number or a shape class
    return evaluate_num(owners, query.num, rng)


def sampled_distribution(constraints, query: Query, reason: str, n: int = DEFAULT_SAMPLES,
                         seed: str = DEFAULT_SEED) -> SampledDistribution:
    """Estimate the law of ``query`` from ``n`` uniform deals of ``constraints``
    (and its ``given`` condition).  Raises :class:`NotExact` if even dealing
    is impossible (too wide for rejection) and :class:`Impossible` if no deal fits."""
    program = as_program(constraints)
    cond = program.condition if query.given == ir.TRUE else ir.And((program.condition, query.given))
    try:
        plan = Plan.build(ir.Program(condition=cond, predeal=program.predeal))
    except TooWide as exc:
        raise NotExact(f"cannot even deal this spec: {' '.join(str(exc).split())}") from None
    if not plan.possible:
        raise Impossible("no deal satisfies this spec and condition")
    counts: dict = {}
    # rnd(...) draws from its own generator, derived from the seed so that reruns agree
    rng = np.random.default_rng(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "little"))
    for owners in plan.deals(n, seed):
        vals, k = np.unique(_values(query, owners, rng), return_counts=True)
        for v, c in zip(vals.tolist(), k.tolist()):
            counts[v] = counts.get(v, 0) + c
    order = sorted(counts) if query.numeric else sorted(counts, key=lambda v: -counts[v])
    return SampledDistribution(query, {v: counts[v] for v in order}, n, seed, reason)
