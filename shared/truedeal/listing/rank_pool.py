"""HCP-only seats weighed by rank counts inside the paired listing.

"North 15-17 balanced, South 8-9 with five hearts, East 8-12, West 5-12":
two patterned seats and two seats that see only whole-hand, suit-blind points
(HCP, controls, point scales: the **pool**).  The factored listing would carry
every seat's points and the pool's honour counts per suit, far too many
feature vectors.  But a pool seat depends on the deal only through how many
cards of each tracked rank it holds (as in :mod:`truedeal.rank_counts`), and
those come from what the patterned seats leave.  So the paired listing
(:mod:`truedeal.listing.paired`) lists the patterned seats alone, with their
count ``h`` of each tracked rank as extra exact coordinates, and its accept
matrix weighs each ``(z1, z2)`` by

    G_b(h) = sum over combos of the pool's rank counts, within box b's pool part,
             of prod over ranks of (4 - h_r)! / prod(counts!)  (which suits)
             times the ways for each pool seat to take 13 - c spot cards,

summed over the accepted boxes ``b`` (disjoint) whose patterned part holds
the patterned seats' forms.  A draw then picks the box and the combo in
proportion to those ways, and deals each rank's suits and the spot cards
uniformly (:func:`~truedeal.rank_counts.deal_ranks_and_spots`): every deal
that fits is equally likely.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from math import comb

import numpy as np

from ..constraints.compile import Compiled, Form, unclamped
from ..randomness import Rng
from .layout import Layout, TooWide, small_vectors, strides_of

#: Bytes the accept matrices (weights and cases, per cell signature) may take.
MAX_ACCEPT_BYTES = 1 << 30
#: A rank's count runs 0..4: the extra coordinates' size.
_RANK_DIM = 5
_FACT = np.array([1, 1, 2, 6, 24], np.int64)
_BINOM = np.array([[comb(n, k) for k in range(53)] for n in range(53)], np.int64)


def applicable(comp: Compiled) -> bool:
    """Two or more patterned seats, a pool whose forms are suit-blind points
    read from the pool alone, the same ranks tracked in every suit, and no
    predealt cards."""
    from ..rank_counts import MAX_COMBOS, _compositions

    pool = set(comp.pooled)
    if not pool or len(comp.patterned) < 2 or comp.forced or comp.dead or not comp.exact:
        return False
    if any(t != comp.tracked[0] for t in comp.tracked) or not comp.tracked[0]:
        return False
    for f, form in enumerate(comp.forms):
        seats = {t.seat for t in form.terms}
        if seats & pool and (not seats <= pool or any(t.fn.kind != "weights" or t.suits != (0, 1, 2, 3) for t in form.terms)):
            return False
        if seats & pool and any(a.form == f and a.lengths for a in comp.atoms):
            return False
    # combo parts: the patterned seats, each pool seat, the unconstrained seats
    return len(_compositions(1 + len(comp.pooled) + (1 if comp.free else 0))) ** len(comp.tracked[0]) <= MAX_COMBOS


def pool_layout(comp: Compiled) -> Layout:
    """The paired listing's layout of ``comp`` (:func:`applicable`): every
    patterned seat a rank seat, the pool's forms reduced to one value (their
    boxes are read from :attr:`RankPool.source`), then a count per tracked rank."""
    source = unclamped(comp)
    pool = RankPool.of(source)
    forms = [Form(f.terms, 1, False) if i in pool.pool_forms else f for i, f in enumerate(source.forms)]
    listed = replace(source, rank_seats=comp.patterned, forms=forms)
    dims = tuple(f.dim for f in forms) + (_RANK_DIM,) * len(pool.ranks)
    return Layout(comp=listed, patterned=comp.patterned, rank_seats=comp.patterned, pooled=(), shape_only=(),
                  free=comp.free, dims=dims, n_box=len(forms), clamp=(False,) * len(forms), pool=pool)


@dataclass
class PoolTable:
    """The pool's ways within one box's pool part, by the patterned seats' rank counts ``h``."""

    ways: np.ndarray  # (5**t,) int64: G(h)
    cases: np.ndarray  # (5**t,) int64: the pool's distinct holdings
    combo: np.ndarray  # (m, t, pool seats) accepted combos' counts, by h
    cum: np.ndarray  # (m,) running ways (int64)
    start: np.ndarray  # (5**t + 1,) each h's run


@dataclass
class RankPool:
    """The pool of a :class:`Compiled` (unclamped, so its boxes span every form)."""

    source: Compiled
    seats: tuple[int, ...]
    ranks: tuple[int, ...]
    pool_forms: frozenset[int]
    listed_forms: tuple[int, ...]
    case_seats: tuple[int, ...]  # patterned seats whose holdings make a case (Pavlicek: HCP seats)
    _combos: tuple = field(default=(), repr=False)
    _tables: dict = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, source: Compiled) -> RankPool:
        seats = source.pooled
        pool_forms = frozenset(f for f, form in enumerate(source.forms) if form.terms[0].seat in seats)
        listed_forms = tuple(f for f in range(len(source.forms)) if f not in pool_forms)
        case_seats = tuple(s for s in source.rank_seats if s not in seats)
        return cls(source, seats, source.tracked[0], pool_forms, listed_forms, case_seats)

    # ----------------------------------------------------------- the tables

    def table(self, lo: tuple[int, ...], hi: tuple[int, ...]) -> PoolTable:
        """The pool's ways within the box ``(lo, hi)`` (over every form; only
        the pool's forms are read), built once per distinct pool part."""
        key = tuple((lo[f], hi[f]) for f in sorted(self.pool_forms))
        if key not in self._tables:
            self._tables[key] = self._table(key)
        return self._tables[key]

    def _table(self, key: tuple) -> PoolTable:
        from ..rank_counts import form_value

        a, h, mult, spots = self._combo_ways()
        held = {seat: a[:, :, 1 + i] for i, seat in enumerate(self.seats)}
        ok = spots > 0
        for f, (lo, hi) in zip(sorted(self.pool_forms), key):
            v = form_value(self.source.forms[f], self.ranks, held)
            ok &= (v >= lo) & (v <= hi)
        idx = np.nonzero(ok)[0]
        idx = idx[np.argsort(h[idx], kind="stable")]
        w = mult[idx] * spots[idx]  # each a count of distinct deals of the pool's cards: within int64
        n_h = _RANK_DIM ** len(self.ranks)
        if float(w.astype(np.float64).sum()) >= 2.0**62:
            raise TooWide("the pool's ways are too many for int64")
        ways, cases = np.zeros(n_h, np.int64), np.zeros(n_h, np.int64)
        np.add.at(ways, h[idx], w)
        np.add.at(cases, h[idx], mult[idx])
        start = np.searchsorted(h[idx], np.arange(n_h + 1))
        return PoolTable(ways, cases, a[idx, :, 1 : 1 + len(self.seats)], np.cumsum(w), start)

    def _combo_ways(self):
        """Every combo (part 0: the patterned seats' count of each rank), its
        flat ``h``, its suit multiplicity and its spot cards' ways (cached)."""
        if not self._combos:
            from ..rank_counts import combos

            t, k = len(self.ranks), len(self.seats)
            a = combos(1 + k + (1 if self.source.free else 0), t)
            a = a[(a.sum(axis=1)[:, 1:] <= 13).all(axis=1)].astype(np.int64)
            h = a[:, :, 0] @ strides_of((_RANK_DIM,) * t)
            mult = (_FACT[4 - a[:, :, 0]] // _FACT[a[:, :, 1:]].prod(axis=2)).prod(axis=1)
            listed = len(self.source.patterned)
            left = 52 - 4 * t - 13 * listed + a[:, :, 0].sum(axis=1)  # spot cards the patterned seats leave
            self._combos = (a, h, mult, _spot_ways(left, 13 - a.sum(axis=1)[:, 1 : 1 + k], bool(self.source.free)))
        return self._combos

    # ------------------------------------------------------ accept matrices

    def accepts(self, layout: Layout, z_flat: np.ndarray, keys: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per cell signature row of ``keys``: A[z1, z2] = the sum over its
        accepted boxes that hold the patterned forms of ``z1 + z2`` of the
        pool's ways (first list) and of its distinct holdings (second)."""
        n_z = len(z_flat)
        if 16 * len(keys) * n_z * n_z > MAX_ACCEPT_BYTES:
            raise TooWide(f"pool accept matrices too large ({len(keys):,} signatures x {n_z:,}**2 feature vectors)")
        zv = small_vectors(layout, z_flat)
        out: tuple[list, list] = ([], [])
        for boxes in self.source.boxes_of(keys):
            ways, cases = np.zeros((n_z, n_z), np.int64), np.zeros((n_z, n_z), np.int64)
            for b in range(0, n_z, 256):
                z, fits = layout.add(zv[b : b + 256, None, :], zv[None, :, :])
                h = z[..., layout.n_box :] @ strides_of(layout.dims[layout.n_box :])
                for lo, hi in boxes:
                    inside = fits & self._listed_inside(z, lo, hi)
                    tab = self.table(lo, hi)
                    ways[b : b + 256] += np.where(inside, tab.ways[h], 0)
                    cases[b : b + 256] += np.where(inside, tab.cases[h], 0)
            out[0].append(ways)
            out[1].append(cases)
        return out

    def _listed_inside(self, z: np.ndarray, lo: tuple, hi: tuple) -> np.ndarray:
        f = list(self.listed_forms)
        if not f:
            return np.ones(z.shape[:-1], bool)
        return np.asarray(((z[..., f] >= np.array(lo)[f]) & (z[..., f] <= np.array(hi)[f])).all(axis=-1), bool)

    # ---------------------------------------------------------------- draws

    def deal(self, owners: np.ndarray, rng: Rng, layout: Layout, sig_boxes: list, sig: np.ndarray, z: np.ndarray) -> None:
        """Deal the pool and the unconstrained seats, for deals whose patterned
        seats are dealt (the rest open), of cell signatures ``sig`` and
        summed feature vectors ``z``: the box and the combo in proportion to
        their ways, then the cards uniformly."""
        from ..rank_counts import deal_ranks_and_spots

        h = z[:, layout.n_box :] @ strides_of(layout.dims[layout.n_box :])
        width = max(len(b) for b in sig_boxes)
        w = np.zeros((len(z), width), np.int64)
        for s in np.unique(sig).tolist():
            rows = np.nonzero(sig == s)[0]
            for j, (lo, hi) in enumerate(sig_boxes[s]):
                inside = self._listed_inside(z[rows], lo, hi)
                w[rows, j] = np.where(inside, self.table(lo, hi).ways[h[rows]], 0)
        cum = np.cumsum(w, axis=1)
        r = rng.below(cum[:, -1])
        j = (cum <= r[:, None]).sum(axis=1)
        r -= cum[np.arange(len(z)), j] - w[np.arange(len(z)), j]
        counts = np.zeros((len(z), len(self.ranks), len(self.seats)), np.int64)
        for s in np.unique(sig).tolist():
            for jj, (lo, hi) in enumerate(sig_boxes[s]):
                rows = np.nonzero((sig == s) & (j == jj))[0]
                if len(rows):
                    tab = self.table(lo, hi)
                    first = tab.start[h[rows]]
                    base = np.where(first > 0, tab.cum[np.maximum(first - 1, 0)], 0)
                    counts[rows] = tab.combo[np.searchsorted(tab.cum, base + r[rows], side="right")]
        deal_ranks_and_spots(owners, rng, self.ranks, counts, self.seats, self.source.free)


def _spot_ways(left: np.ndarray, need: np.ndarray, free: bool) -> np.ndarray:
    """Ways for each pool seat to take ``need[:, k]`` of the ``left`` spot
    cards, the unconstrained seats the rest (none may be left without them);
    int64 (0 where impossible): at most the ways to deal 39 cards in three hands."""
    out = np.ones(len(left), np.int64)
    rest = left.copy()
    ok = (need >= 0).all(axis=1)
    for k in range(need.shape[1]):
        ok &= need[:, k] <= rest
        out *= np.where(ok, _BINOM[np.clip(rest, 0, 52), np.clip(need[:, k], 0, 52)], 0)
        rest -= need[:, k]
    ok &= (rest == 0) | free
    return np.where(ok, out, 0)
