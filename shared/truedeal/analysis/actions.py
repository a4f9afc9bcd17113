"""Dealer scripts' ``average`` and ``frequency`` actions, answered exactly.

Dealer estimates these from the deals it produces.  Here each is a law over
*every* deal of the script (:mod:`.general`): ``average "label" EXPR`` is the
exact mean of ``EXPR``, a fraction; ``frequency "label" (EXPR, lo, hi)`` the
exact number of deals for each value ``lo..hi``, plus those below (``low``)
and above (``high``), as dealer prints them; the two-dimensional form
``(EXPR, lo, hi, EXPR2, lo2, hi2)`` the exact deals of each pair, with the
same ``low``/``high`` edges on both axes.  When the engine cannot list an
action's expression exactly, the action gets a sampled estimate instead,
labelled so (``exact`` false, standard errors).  Print actions need real
deals (``truedeal generate``) and are listed as skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..constraints import ir
from ..constraints.fold import as_num
from ..summary import expected_deals
from .conditioning import NotExact
from .distribution import Distribution
from .general import Query, _and, as_program, engine_counter, numeric_law, weight_scale
from .laws import distribution_of
from .sampled import DEFAULT_SEED, default_samples

#: Called before each exact count (a progress bar's step), or None.
OnCount = Callable[[], None] | None


@dataclass
class Answer:
    """One action's answer, JSON-ready in :meth:`to_json`."""

    kind: str  # average | frequency
    label: str
    exact: bool
    body: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"kind": self.kind, "label": self.label, "exact": self.exact, **self.body}


def _frac(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


def _bucket(v: int, lo: int, hi: int):
    return "low" if v < lo else "high" if v > hi else v


def _labels(lo: int, hi: int) -> list:
    return ["low", *range(lo, hi + 1), "high"]


def average(program: ir.Program, action: ir.Action, samples: int | None, seed: str, on_count: OnCount = None) -> Answer:
    """``average``: the exact mean (fraction and decimal) and standard deviation
    (``on_count`` is called before each exact count, e.g. to show progress)."""
    dist = distribution_of(program, Query(action.label or "average", num=_num(action.expr)), samples=samples, seed=seed,
                           on_count=on_count)
    if isinstance(dist, Distribution):
        mean, variance = dist.mean, dist.variance  # None when no deal fits
        body = {"deals": dist.deals(dist.total), "mean_exact": None if mean is None else _frac(mean),
                "mean": None if mean is None else float(mean),
                "variance_exact": None if variance is None else _frac(variance), "sd": dist.sd}
        return Answer("average", action.label, True, body)
    body = {"samples": dist.n, "mean_estimate": dist.mean, "mean_stderr": dist.mean_stderr, "sd_estimate": dist.sd,
            "method": dist.to_json()["method"]}
    return Answer("average", action.label, False, body)


def _rows_1d(counts: dict, total, lo: int, hi: int, exact: bool, scale: int = 1) -> list[dict]:
    binned: dict = {}
    for v, c in counts.items():
        b = _bucket(v, lo, hi)
        binned[b] = binned.get(b, 0) + c
    rows = []
    for b in _labels(lo, hi):
        c = binned.get(b, 0)
        if exact:
            p = Fraction(c, total) if total else Fraction(0)
            rows.append({"value": b, "deals": expected_deals(c, scale), "probability_exact": _frac(p), "probability": float(p)})
        else:
            rows.append({"value": b, "samples": c, "probability_estimate": c / total})
    return rows


def frequency(program: ir.Program, action: ir.Action, samples: int | None, seed: str, on_count: OnCount = None) -> Answer:
    """``frequency``: exact deals per value (1-D) or per pair (2-D), low/high edges included."""
    lo, hi = action.bounds[:2]
    if action.expr2 is None:
        dist = distribution_of(program, Query(action.label or "frequency", num=_num(action.expr)), samples=samples, seed=seed,
                               on_count=on_count)
        exact = isinstance(dist, Distribution)
        total = dist.total if isinstance(dist, Distribution) else dist.n
        scale = dist.scale if isinstance(dist, Distribution) else 1
        body = {"bounds": [lo, hi], "deals" if exact else "samples": expected_deals(total, scale),
                "rows": _rows_1d(dist.counts, total, lo, hi, exact, scale)}
        if not exact:
            body["method"] = dist.to_json()["method"]
        return Answer("frequency", action.label, exact, body)
    return _frequency_2d(program, action, samples, seed, on_count)


def _num(x) -> ir.Num:
    """An action's expression as a number (a condition counts 1 or 0, as in dealer)."""
    return as_num(x)


def _frequency_2d(program: ir.Program, action: ir.Action, samples: int | None, seed: str, on_count: OnCount) -> Answer:
    lo, hi, lo2, hi2 = action.bounds
    x, y = _num(action.expr), _num(action.expr2)
    scale = 1
    try:
        table, total = _exact_2d(program, x, y, lo, hi, on_count)
        exact, scale = True, weight_scale(program)
        method = None
    except NotExact as exc:
        n = samples or min(default_samples(Query("x", num=x)), default_samples(Query("y", num=y)))
        table, total, method = _sampled_2d(program, x, y, str(exc), n, seed)
        exact = False
    grid: dict = {}
    for (a, b), c in table.items():
        key = (_bucket(a, lo, hi), _bucket(b, lo2, hi2))
        grid[key] = grid.get(key, 0) + c
    rows = []
    for a in _labels(lo, hi):
        for b in _labels(lo2, hi2):
            c = grid.get((a, b), 0)
            if exact:
                p = Fraction(c, total) if total else Fraction(0)
                rows.append({"value": a, "value2": b, "deals": expected_deals(c, scale), "probability_exact": _frac(p),
                             "probability": float(p)})
            else:
                rows.append({"value": a, "value2": b, "samples": c, "probability_estimate": c / total})
    body = {"bounds": [lo, hi, lo2, hi2], "deals" if exact else "samples": expected_deals(total, scale), "rows": rows}
    if method:
        body["method"] = method
    return Answer("frequency", action.label, exact, body)


def _exact_2d(program: ir.Program, x: ir.Num, y: ir.Num, lo: int, hi: int, on_count: OnCount = None) -> tuple[dict, int]:
    """(x, y) -> exact deals: the law of ``x``, then ``y``'s law within each of
    x's buckets (below ``lo``, each value, above ``hi``)."""
    count = engine_counter(program, on_count)
    total = count(program.condition)
    if not total:
        return {}, 0
    x_law = numeric_law(x, program.condition, total, count)
    out: dict = {}
    below = {v: c for v, c in x_law.items() if v < lo}
    above = {v: c for v, c in x_law.items() if v > hi}
    slices = [(v, ir.Compare("==", x, ir.Linear((), v)), c) for v, c in x_law.items() if lo <= v <= hi]
    if below:
        slices.append((lo - 1, ir.Compare("<", x, ir.Linear((), lo)), sum(below.values())))
    if above:
        slices.append((hi + 1, ir.Compare(">", x, ir.Linear((), hi)), sum(above.values())))
    for a, cond, n in slices:
        for b, c in numeric_law(y, _and(program.condition, cond), n, count).items():
            out[(a, b)] = c
    return out, total


def _sampled_2d(program: ir.Program, x: ir.Num, y: ir.Num, reason: str, samples: int, seed: str):
    """The same table from uniform deals, when it cannot be listed exactly."""
    from ..constraints.evaluate import evaluate_num
    from ..engine import Plan

    plan = Plan.build(program)
    out: dict = {}
    rng = np.random.default_rng(0)
    for owners in plan.deals(samples, seed):
        a, b = evaluate_num(owners, x, rng), evaluate_num(owners, y, rng)
        pairs, k = np.unique(np.stack([a, b], axis=1), axis=0, return_counts=True)
        for (u, v), c in zip(pairs.tolist(), k.tolist()):
            out[(u, v)] = out.get((u, v), 0) + c
    method = f"sampled estimate: {samples:,} uniform deals (seed {seed!r}); not exact because {reason}"
    return out, samples, method


@dataclass
class ScriptAnswers:
    """Every action of a script: the script's exact deal count, the answers,
    and the print actions skipped."""

    deals: int | str | None  # a fraction "p/q" where rnd() is weighed
    answers: list[Answer]
    skipped: list[str]
    expected: bool = False  # rnd() weighed: the deals are those the script keeps on average

    def to_json(self) -> dict:
        out = {"deals": self.deals, "actions": [a.to_json() for a in self.answers], "skipped": self.skipped}
        return {**out, "expected": True} if self.expected else out


def answer_script(constraints, samples: int | None = None, seed: str = DEFAULT_SEED, on_count: OnCount = None) -> ScriptAnswers:
    """Answer the ``average`` and ``frequency`` actions of a script (a Program);
    ``on_count`` is called before each exact count."""
    program = as_program(constraints)
    deals: int | str | None
    try:
        counted = engine_counter(program, on_count)(_and(program.condition))  # as each law counts it: then counted once
        deals = expected_deals(counted, weight_scale(program))
    except NotExact:
        deals = None
    answers, skipped = [], []
    for action in program.actions:
        if action.kind == "average":
            answers.append(average(program, action, samples, seed, on_count))
        elif action.kind == "frequency":
            answers.append(frequency(program, action, samples, seed, on_count))
        else:
            skipped.append(action.style or action.kind)
    return ScriptAnswers(deals, answers, skipped, weight_scale(program) != 1)


__all__ = ["Answer", "ScriptAnswers", "answer_script", "average", "frequency"]
