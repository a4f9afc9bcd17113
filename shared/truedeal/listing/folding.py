"""Forms that are sums of other forms, folded out of a paired listing's feature space.

"North 12-21, South 10+, N+S 25+" has three forms, and the third is the sum
of the first two.  In a paired listing every form keeps its exact values
(:func:`~truedeal.constraints.compile.unclamped`), so such a form is a
function of the others: it needs no coordinate of its own, and carrying one
multiplies the feature space by its range (three patterned seats and a pool
reached 470 million feature states with N+S listed, 6 million without).
A folded form keeps one value (0) in the listing and is read back as
``sum(coef * value of g)`` wherever boxes are checked
(:meth:`~truedeal.listing.layout.Layout.form_values`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from ..constraints.compile import Form, Term
from .layout import Layout

#: form -> ((source form, coefficient), ...): the form's value is the sum of those
Folds = dict[int, tuple[tuple[int, int], ...]]


def _key(t: Term) -> tuple:
    return (t.seat, t.suits, t.fn, t.complement)


def _weights(form: Form) -> Counter:
    out: Counter = Counter()
    for t in form.terms:
        out[_key(t)] += t.coef
    return out


def find_folds(forms: list[Form], sources: list[int]) -> Folds:
    """Each of the ``sources`` forms that is a positive integer combination of
    other whole ``sources`` forms (disjoint in their terms), with that
    combination.  The widest forms are folded first (a sum, not its parts)."""
    weights = [_weights(f) for f in forms]
    out: Folds = {}
    used: set[int] = set()  # a source stays listed: folds never chain
    for f in (f for f in sorted(sources, key=lambda f: -forms[f].dim) if f not in used):
        rest, parts = Counter(weights[f]), []
        # the narrowest sources first: single seats, so that their sums all fold
        for g in sorted((g for g in sources if g != f and g not in out), key=lambda g: len(weights[g])):
            c = _multiple(rest, weights[g])
            if c:
                rest.subtract({k: c * v for k, v in weights[g].items()})
                rest = +rest
                parts.append((g, c))
        if parts and not rest:
            out[f] = tuple(parts)
            used.update(g for g, _ in parts)
    return out


def _multiple(rest: Counter, part: Counter) -> int:
    """``c`` with ``rest`` holding exactly ``c`` times each of ``part``'s terms, or 0."""
    if not part or any(k not in rest for k in part):
        return 0
    c, r = divmod(rest[next(iter(part))], part[next(iter(part))])
    return c if r == 0 and all(rest[k] == c * v for k, v in part.items()) else 0


def folded(layout: Layout, sources: list[int]) -> Layout:
    """``layout`` with each form that ``sources`` sum to kept at one value
    (its options compute 0 for it), or ``layout`` itself when none is."""
    folds = find_folds(layout.comp.forms, sources)
    if not folds:
        return layout
    dims = tuple(1 if d in folds else n for d, n in enumerate(layout.dims))
    return replace(layout, dims=dims, folds=folds)
