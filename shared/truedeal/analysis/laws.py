"""One entry point for a feature's law: exact when the engine can, else a labelled estimate.

:func:`distribution_of` is what ``truedeal distribution``, ``truedeal
answer`` and ``POST /api/distribution`` call.  It returns a
:class:`~.distribution.Distribution` (exact integers and fractions) or, only
when the engine cannot list the question exactly and sampling was allowed, a
:class:`~.sampled.SampledDistribution` whose every output says it is an
estimate.
"""

from __future__ import annotations

from collections.abc import Callable

from ..constraints import ir
from ..spec import Spec
from .conditioning import NotExact
from .distribution import Distribution
from .general import Query, as_program, engine_counter, general_distribution, parse_query
from .sampled import DEFAULT_SEED, SampledDistribution, default_samples, sampled_distribution


def distribution_of(
    constraints: Spec | ir.Program,
    query: Query | str,
    *,
    sample: bool = True,
    samples: int | None = None,
    seed: str = DEFAULT_SEED,
    on_count: Callable[[], None] | None = None,
) -> Distribution | SampledDistribution:
    """The law of ``query`` over the deals of ``constraints``.

    Exact whenever the general engine lists it; otherwise, with ``sample``,
    an estimate from ``samples`` uniform deals (seeded, reproducible; by
    default :func:`~.sampled.default_samples`), and
    without it :class:`NotExact`.  ``on_count`` is called before each exact count.  Raises
    :class:`~.distribution.UnsupportedFeature` for an expression it cannot
    read and ValueError when no deal fits."""
    if isinstance(query, str):
        query = parse_query(query)
    try:
        program = as_program(constraints)  # once: a weighed rnd() is known by its comparisons' identity
        return general_distribution(program, query, engine_counter(program, on_count))
    except NotExact as exc:
        if not sample:
            raise
        reason = str(exc)
    return sampled_distribution(constraints, query, reason, samples or default_samples(query), seed)


def is_exact(dist: Distribution | SampledDistribution) -> bool:
    return isinstance(dist, Distribution)
