"""``truedeal stats``: deal N deals, compare what was dealt with the exact laws.

Expected laws, all exact (no deal is drawn to make them):

* for each constrained seat: its HCP, its length in each suit and its shape
  class (:func:`~.distribution.exact_distribution`), and, when it has an HCP
  range, the joint law of (shape class, HCP) -- the dependence the 1999
  method ignores;
* for a spec that constrains one seat and has at most
  :data:`~.case_law.MAX_CASES` cases, Pavlicek's cases themselves (that
  seat's pattern x honour holding) against their closed-form weights
  (:mod:`.case_law`);
* each unconstrained seat's HCP, against its exact law given the
  constrained cases (the same for every free seat, by symmetry);
* for each card, which of the unconstrained seats holds it, among deals
  where one of them does.  Exchanging the hands of two unconstrained seats
  maps the deals of the spec one-to-one onto themselves, so given that a card
  is held by an unconstrained seat, each of the ``f`` such seats holds it
  with probability exactly ``1/f``.

Each comparison is a Pearson chi-square test (:mod:`.chisquare`).  With
``k`` tests the family-wise check is Bonferroni's: the deals are flagged when
the smallest p-value is below ``alpha / k``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..cards import RANKS, SEAT_NAMES, SEATS, SUITS
from ..constraints import ir
from ..engine import Plan
from ..evaluate import hcp, lengths, pattern_index
from ..relaxation import SeatsRead
from ..spec import Spec
from .case_law import HONOURS, NO_PATTERN, case_weights, observed_cases, one_seat
from .chisquare import ChiSquare, chi_square
from .conditioning import Counter, NotExact, count_with
from .distribution import Feature, exact_distribution, exact_joint
from .pavlicek1999 import Pavlicek1999
from .shapeclasses import class_index_of_pattern, shape_classes

METHODS = ("exact", "pavlicek1999")
#: Family-wise significance level of the Bonferroni check.
ALPHA = 0.01


@dataclass
class HcpByClass:
    """Exact and observed P(HCP = h | shape class) for one seat's most common classes."""

    seat: int
    hcps: list[int]
    exact: dict[str, list[float]]
    observed: dict[str, list[float]]


@dataclass
class StatsReport:
    """Everything ``truedeal stats`` prints or draws."""

    spec: Spec
    method: str
    n: int
    seed: str | None
    tests: list[ChiSquare]
    hcp_by_class: list[HcpByClass] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def min_p_value(self) -> float:
        return min((t.p_value for t in self.tests), default=1.0)

    @property
    def threshold(self) -> float:
        return ALPHA / max(len(self.tests), 1)

    @property
    def flagged(self) -> bool:
        return self.min_p_value < self.threshold

    def to_json(self) -> dict:
        return {
            "method": self.method,
            "deals": self.n,
            "seed": self.seed,
            "tests": [t.to_json() for t in self.tests],
            "min_p_value": self.min_p_value,
            "bonferroni_threshold": self.threshold,
            "flagged": self.flagged,
            "notes": self.notes,
        }


def draw(spec: Spec, n: int, seed: str | None, method: str) -> np.ndarray:
    """``n`` deals of ``spec`` by ``method`` as an (n, 52) owners array."""
    if method == "pavlicek1999":
        return Pavlicek1999(spec).deals(n, seed)
    return np.concatenate(list(Plan.build(spec).deals(n, seed)))


def _observed(feature: Feature, owners: np.ndarray) -> np.ndarray:
    """The feature's value in each deal (class names for shape classes)."""
    if feature.kind == "hcp":
        return hcp(owners, feature.seat)
    if feature.kind == "length":
        return lengths(owners, feature.seat)[:, feature.suit]
    names = np.array([sc.name for sc in shape_classes()])
    return names[class_index_of_pattern()[pattern_index(owners, feature.seat)]]


def feature_test(spec: Spec, feature: Feature, owners: np.ndarray, counter: Counter) -> ChiSquare | None:
    """Observed values of ``feature`` against its exact law; None if it takes one value."""
    law = exact_distribution(spec, feature, counter)
    if len(law.counts) < 2:
        return None
    values = list(law.counts)
    if not feature.numeric:  # unordered classes: merge the rarest together
        values.sort(key=lambda v: -law.counts[v])
    seen = _observed(feature, owners)
    observed = [int((seen == v).sum()) for v in values]
    extra = len(seen) - sum(observed)  # deals outside the spec's values land in a zero bin
    labels, probs = [str(v) for v in values], [law.probability(v) for v in values]
    if extra:
        labels, observed, probs = [*labels, "other"], [*observed, extra], [*probs, Fraction(0)]
    return chi_square(feature.name, labels, observed, probs)


def joint_test(spec: Spec, seat: int, owners: np.ndarray, counter: Counter) -> tuple[ChiSquare, HcpByClass]:
    """(shape class, HCP) of ``seat`` against their exact joint law, and the plot data."""
    joint = exact_joint(spec, seat, counter)
    total = sum(joint.values())
    cls = _observed(Feature("class", seat), owners)
    pts = hcp(owners, seat)
    keys = sorted(joint, key=lambda k: -joint[k])
    observed = [int(((cls == c) & (pts == h)).sum()) for c, h in keys]
    extra = len(owners) - sum(observed)
    labels = [f"{c}/{h}" for c, h in keys]
    probs = [Fraction(joint[k], total) for k in keys]
    if extra:
        labels, observed, probs = [*labels, "other"], [*observed, extra], [*probs, Fraction(0)]
    test = chi_square(f"shape class x hcp({SEAT_NAMES[seat]})", labels, observed, probs)
    return test, _hcp_by_class(seat, joint, cls, pts)


def _hcp_by_class(seat: int, joint: dict, cls: np.ndarray, pts: np.ndarray, top: int = 4) -> HcpByClass:
    by_class: dict[str, int] = {}
    for (c, _), w in joint.items():
        by_class[c] = by_class.get(c, 0) + w
    classes = sorted(by_class, key=lambda c: -by_class[c])[:top]
    hcps = sorted({h for _, h in joint})
    exact = {c: [joint.get((c, h), 0) / by_class[c] for h in hcps] for c in classes}
    observed = {}
    for c in classes:
        sel = pts[cls == c]
        observed[c] = [float((sel == h).mean()) if len(sel) else 0.0 for h in hcps]
    return HcpByClass(seat, hcps, exact, observed)


def free_seats(spec: Spec) -> list[int]:
    """The seats that nothing in ``spec`` reads: its seats' fields, its
    condition (a JSON spec's ``condition``, a dealer script's) and its
    predealt cards.  No seat is free where the condition reads a number
    that no seat names (``tricks``, ``score``, ``imps``: any hand may
    count); ``rnd`` reads no hand."""
    program = spec.program()
    if ir.opaque_names(program.condition) - {"rnd"}:
        return []
    read = SeatsRead()(program.condition)[1] | {seat for seat, _ in program.predeal} | {s for s, _ in spec.seats()}
    return [s for s in range(4) if s not in read]


def card_tests(spec: Spec, owners: np.ndarray) -> list[ChiSquare]:
    """For each card: which unconstrained seat holds it, against 1/f each (see module doc)."""
    free = free_seats(spec)
    if len(free) < 2:
        return []
    names = "".join(SEATS[s] for s in free)
    out = []
    for c in range(52):
        col = owners[:, c]
        observed = [int((col == s).sum()) for s in free]
        if sum(observed) == 0:
            continue
        label = f"{SUITS[c % 4]}{RANKS[c // 4]}"
        out.append(chi_square(f"card {label} among {names}", [SEATS[s] for s in free], observed, [Fraction(1, len(free))] * len(free)))
    return out


def case_test(spec: Spec, owners: np.ndarray) -> ChiSquare | None:
    """Observed cases (pattern x honour holding) against their exact weights
    (:mod:`.case_law`); None unless one seat is constrained and the listing is small."""
    seat = one_seat(spec)
    if seat is None:
        return None
    weights = case_weights(spec, seat)
    if weights is None or len(weights) < 2:
        return None
    keys = sorted(weights, key=lambda k: -weights[k])
    total = sum(weights.values())
    seen = observed_cases(owners, seat, patterned=keys[0][0] != NO_PATTERN)
    index = {p * (1 << HONOURS) + m: i for i, (p, m) in enumerate(keys)}
    observed = np.bincount([index.get(int(k), len(keys)) for k in seen], minlength=len(keys) + 1).tolist()
    labels = [f"case {i}" for i in range(len(keys))] + ["other"]
    probs = [Fraction(weights[k], total) for k in keys] + [Fraction(0)]
    return chi_square(f"cases of {SEAT_NAMES[seat]} ({len(keys):,})", labels, observed, probs)


def free_hcp_tests(spec: Spec, owners: np.ndarray) -> list[ChiSquare]:
    """Each unconstrained seat's HCP against its exact law given the constrained
    cases.  Exchanging two free seats' hands maps the spec's deals onto
    themselves, so every free seat has the same law: it is computed once.
    Only for specs of seat fields alone: under a condition, a script or an
    either/or the law may take a listing per HCP value (95 s for North and
    South read by losers)."""
    from .laws import distribution_of

    free = free_seats(spec)
    if not free or len(free) == 4 or any(x is not None for x in (spec.condition, spec.script, spec.any_of)):
        return []
    try:
        law = distribution_of(spec, f"hcp({SEAT_NAMES[free[0]]})", sample=False)
    except NotExact:  # no exact law to test against (a free seat's points make the listing too wide)
        return []
    values = list(law.counts)
    out = []
    for seat in free:
        seen = hcp(owners, seat)
        observed = [int((seen == v).sum()) for v in values]
        extra = len(seen) - sum(observed)
        out.append(chi_square(f"hcp({SEAT_NAMES[seat]}), free", [*map(str, values), "other"], [*observed, extra],
                              [law.probability(v) for v in values] + [Fraction(0)]))
    return out


def run_stats(spec: Spec, n: int, seed: str | None, method: str = "exact", counter: Counter = count_with) -> StatsReport:
    """Deal ``n`` deals of ``spec`` by ``method`` and test them against the exact laws."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r} (exact or pavlicek1999)")
    owners = draw(spec, n, seed, method)
    report = StatsReport(spec, method, n, seed, [])
    for seat, seat_spec in spec.seats():
        features = [Feature("hcp", seat), *(Feature("length", seat, u) for u in range(4)), Feature("class", seat)]
        for f in features:
            test = feature_test(spec, f, owners, counter)
            if test is not None:
                report.tests.append(test)
        if seat_spec.hcp is not None:
            test, plot = joint_test(spec, seat, owners, counter)
            if len(plot.exact) > 1:  # one class: the joint test would repeat the HCP test
                report.tests.append(test)
            report.hcp_by_class.append(plot)
    cases = case_test(spec, owners)
    if cases is not None:
        report.tests.append(cases)
    report.tests.extend(free_hcp_tests(spec, owners))
    report.tests.extend(card_tests(spec, owners))
    if not report.tests:
        report.notes.append("no test applies: the laws tested are those of seat fields (HCP, lengths, shape class), "
                            "of one constrained seat's cases, and of two or more seats that nothing reads; "
                            "this spec reads its seats in a condition and leaves fewer than two free")
    if method == "pavlicek1999":
        report.notes.append(
            "pavlicek1999 is Pavlicek's own obsolete, biased 1999 method, run here as a baseline "
            "to show that these tests catch a biased sampler; truedeal never deals with it"
        )
    return report
