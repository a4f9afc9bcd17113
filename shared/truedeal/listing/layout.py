"""Which seat plays which role in a listing, the feature space they span,
and the limits that keep a build within memory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from math import factorial, prod
from typing import Any

import numpy as np

from ..cards import N_CARDS
from ..constraints import ir
from ..constraints.compile import Compiled, compile_program, rules_program

#: Limits that keep a build within memory; exceeding one is a clear error.
MAX_CELLS = 2_000_000
MAX_FEATURE_CELLS = 6_000_000  # columns x feature-space size, and pairs x size
MAX_ENTRIES = 3_000_000


class TooWide(ValueError):
    """The spec's exact listing would exceed the memory limits."""


@dataclass
class Layout:
    """Which seat plays which role, and the feature space they span.

    The first ``n_box`` dims are the forms of :mod:`truedeal.constraints.compile`
    (range-queried; ``clamp[d]``: the last value means "that or more"), the rest
    the pool's honour counts (matched exactly)."""

    comp: Compiled
    patterned: tuple[int, ...]  # seats with a pattern set, seat order
    rank_seats: tuple[int, ...]  # seats whose tracked cards are dealt explicitly
    pooled: tuple[int, ...]  # rank seats with no pattern set
    shape_only: tuple[int, ...]  # pattern set but no tracked cards
    free: tuple[int, ...]  # unconstrained seats
    dims: tuple[int, ...]  # feature sizes: form dims, then exact dims
    n_box: int  # the first n_box dims are forms (range dims)
    clamp: tuple[bool, ...] = ()
    #: seats weighed by rank counts (:mod:`truedeal.listing.rank_pool`); then the
    #: exact dims are the patterned seats' count of each tracked rank
    pool: Any = field(default=None, compare=False)
    #: forms that are sums of other forms (:mod:`truedeal.listing.folding`):
    #: kept at one value, read back by :meth:`form_values`
    folds: dict[int, tuple[tuple[int, int], ...]] = field(default_factory=dict, compare=False)
    #: the roles as the compiled fill reads them (built once by :mod:`truedeal.fill`)
    fill_roles: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def zsize(self) -> int:
        return prod(self.dims)

    @property
    def strides(self) -> np.ndarray:
        return strides_of(self.dims)

    @property
    def n_tracked(self) -> int:
        return self.comp.n_tracked

    def forced(self, seat: int, suit: int | None = None) -> int:
        """Cards predealt to ``seat`` (in ``suit``): its pool coordinate counts
        only the tracked cards beyond them, which keeps that coordinate short."""
        return sum(1 for (k, _), s in self.comp.forced.items() if s == seat and suit in (None, k))

    def forced_patterned(self, suit: int | None = None) -> int:
        """Cards predealt to patterned seats (in ``suit``), likewise left out of the last coordinate."""
        return sum(self.forced(s, suit) for s in self.patterned)

    def dead(self, suit: int | None = None, seat: int | None = None) -> int:
        """Cards out of the pack (:attr:`Compiled.dead`), of ``suit``, held by ``seat``."""
        return sum(1 for c, s in self.comp.dead.items() if suit in (None, c % 4) and seat in (None, s))

    def vectors(self, flat: np.ndarray) -> np.ndarray:
        """Feature vectors ``(n, ndims)`` of flat indices."""
        flat = np.asarray(flat, dtype=np.int64)
        if not self.dims:
            return np.zeros((len(flat), 0), dtype=np.int64)
        return np.stack(np.unravel_index(flat, self.dims), axis=1).astype(np.int64)

    def add(self, a: np.ndarray, b: np.ndarray, axes: list[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``a + b`` for feature vectors (clamping clamped forms), and which
        sums fit; with ``axes``, vectors of those coordinates alone."""
        axes = list(range(len(self.dims))) if axes is None else axes
        z = a + b
        clamp = [self.clamp[d] if d < self.n_box else False for d in axes]
        if any(clamp):
            z = np.minimum(z, np.array([self.dims[d] - 1 if c else 10**9 for d, c in zip(axes, clamp)]))
        return z, (z < np.array([self.dims[d] for d in axes], dtype=z.dtype)).all(axis=-1)

    def add_flat(self, ia: np.ndarray, xa: np.ndarray, ib: np.ndarray, xb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`add` of every vector ``xa`` (flat indices ``ia``) and
        ``xb`` (``ib``), as flat indices ``(len(ia), len(ib))``, and which
        fit.  Unclamped coordinates add up in the flat indices themselves:
        only the checks and the clamped coordinates go one by one, with no
        third axis (that one took most of a library plan's pair tables)."""
        strides = self.strides
        fits = np.ones((len(ia), len(ib)), bool)
        za, zb = ia.astype(np.int64), ib.astype(np.int64)
        clamped = []
        for d in self.live_axes:
            both = xa[:, d, None] + xb[None, :, d]
            if d < self.n_box and self.clamp[d]:
                za -= xa[:, d] * strides[d]
                zb -= xb[:, d] * strides[d]
                clamped.append(np.minimum(both, self.dims[d] - 1) * strides[d])
            else:
                fits &= both < self.dims[d]
        return sum(clamped, za[:, None] + zb[None, :]), fits

    @property
    def live_axes(self) -> list[int]:
        """The coordinates that take more than one value (a folded form takes one)."""
        return [d for d, n in enumerate(self.dims) if n > 1]

    def form_values(self, z: np.ndarray) -> np.ndarray:
        """The forms' values of feature vectors ``z`` (``(..., n_box)``): their
        coordinates, and each folded form summed from its sources."""
        if not self.folds:
            return z[..., : self.n_box]
        out = z[..., : self.n_box].astype(np.int64)
        for f, parts in self.folds.items():
            out[..., f] = sum(c * out[..., g] for g, c in parts)
        return out

    def open_top(self, hi: np.ndarray) -> np.ndarray:
        """Box upper bounds with clamped tops opened ("that or more")."""
        top = np.array([d - 1 if c else -1 for d, c in zip(self.dims[: self.n_box], self.clamp)], dtype=np.int64)
        return np.where(hi == top, 10**9, hi)

    @property
    def has_pool(self) -> bool:
        return bool(self.pooled)

    @property
    def pat_from_pool(self) -> bool:
        """:func:`pat_from_pool` of this layout's spec."""
        return pat_from_pool(self.comp)

    @cached_property
    def _pool_base(self) -> tuple[int, int, tuple[int, ...]]:
        """What :meth:`pool_factor` reads of the predeal and the pack, read
        once (it is asked for every pool total of a listing: 5,000 a build):
        the patterned seats' predealt cards, the cards left to the pooled
        seats besides the patterned seats' tracked ones, and each pooled
        seat's predealt cards."""
        spots = N_CARDS - self.dead() - self.n_tracked - 13 * len(self.patterned)
        return self.forced_patterned(), spots, tuple(self.forced(s) for s in self.pooled)

    def pool_factor(self, c_pooled: Sequence[int], c_pat: int) -> int:
        """G: ways to give the pooled seats their spot cards, or 0 if impossible."""
        forced_pat, spots, forced_pooled = self._pool_base
        c_pooled = tuple(c + f for c, f in zip(c_pooled, forced_pooled))
        c_pat = self.n_tracked - sum(c_pooled) if self.pat_from_pool else c_pat + forced_pat
        s_rem = spots + c_pat
        t = [13 - c for c in c_pooled]
        u = s_rem - sum(t)
        c_free = self.n_tracked - c_pat - sum(c_pooled)
        if min(t, default=0) < 0 or u < 0 or c_free < 0 or s_rem < 0:
            return 0
        out = factorial(s_rem) // factorial(u)
        for x in t:
            out //= factorial(x)
        return out

    def free_ways(self) -> int:
        """Ways to split the unconstrained seats' cards among them (a seat
        holding dead cards takes that many fewer)."""
        need = [13 - self.dead(seat=s) for s in self.free]
        return factorial(sum(need)) // prod(factorial(k) for k in need)


def small_vectors(layout: Layout, flat: np.ndarray) -> np.ndarray:
    """:meth:`Layout.vectors` as int16 when every coordinate sum fits (the
    all-pairs sums of a paired listing's accept matrices then move a quarter
    of the bytes: the same values, 3x faster)."""
    vec = layout.vectors(flat)
    small = not any(layout.clamp) and 2 * max(layout.dims, default=1) < 1 << 14  # clamping caps at 10**9
    return vec.astype(np.int16) if small else vec


def strides_of(dims: tuple[int, ...]) -> np.ndarray:
    s = np.ones(len(dims), dtype=np.int64)
    for d in range(len(dims) - 2, -1, -1):
        s[d] = s[d + 1] * dims[d + 1]
    return s


def as_compiled(spec_like) -> Compiled:
    """A :class:`Compiled` from itself, a Program, or a list of seat rules."""
    if isinstance(spec_like, Compiled):
        return spec_like
    if isinstance(spec_like, ir.Program):
        return compile_program(spec_like)
    return compile_program(rules_program(spec_like))


def pat_from_pool(comp: Compiled) -> bool:
    """With a pool and no free seat, the patterned seats hold every tracked
    card that the pooled seats do not: their count is read off the pooled
    seats' (:meth:`Layout.pool_factor`), and its coordinate keeps one value.

    Only a listing with a pooled seat's filter forms (calm opponents, the
    engine's last listing before rejection) takes it.  Elsewhere the narrower
    layout would only let listings past the entry limit be tried, each
    failing after seconds (a seeded negation check: 1.9 s -> 12.7 s)."""
    pooled = set(comp.pooled)
    return bool(pooled and comp.patterned and not comp.free
                and any(t.seat in pooled for f in comp.filters for t in comp.forms[f].terms))


def make_layout(spec_like) -> Layout:
    comp = as_compiled(spec_like)
    dims = [1 if f in comp.filters else form.dim for f, form in enumerate(comp.forms)]  # a filter: no coordinate
    if comp.pooled:
        dims += [max(0, comp.pool_bounds[s] - sum(1 for v in comp.forced.values() if v == s)) + 1 for s in comp.pooled]
        # tracked cards held by patterned seats, beyond their predealt ones (one value where the
        # pooled seats' counts fix it: Layout.pat_from_pool; 17 times fewer feature states)
        forced_pat = sum(1 for v in comp.forced.values() if v in comp.patterned)
        dims.append(min(comp.n_tracked, 13 * len(comp.patterned)) - forced_pat + 1 if comp.patterned and not pat_from_pool(comp) else 1)
    return Layout(
        comp=comp,
        patterned=comp.patterned,
        rank_seats=comp.rank_seats,
        pooled=comp.pooled,
        shape_only=comp.shape_only,
        free=comp.free,
        dims=tuple(dims),
        n_box=len(comp.forms),
        clamp=tuple(f.clamp for f in comp.forms),
    )
