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
that fits is equally likely.  The box and combo have a compiled form
(``truedeal._paired.pool_pick``, used when :func:`truedeal.kernel.paired`
returns it) that makes the same draws from the same bytes; the numpy code
here is the reference (tests/test_rank_pool.py checks they agree).

A pool form may also read some suits or single cards ("2 of the top 3
spades", ``hascard(west, AS)``, HCP in hearts).  Then "rank" above reads
**card class** (:func:`card_classes`): the cards of one rank that every pool
form weighs alike, e.g. the ace of spades alone and the other three aces.
The coordinates count each class, the suit factor is ``(size - h)! /
prod(counts!)`` per class, and a draw deals each class's cards.  With
suit-blind pool forms the classes are the ranks, and nothing changes.

A form may also sum patterned seats and pool seats ("North 15-17
balanced, South HCP alone, N+S 24+"): a **mixed** form.  The listing
carries its patterned part ``p`` as a coordinate, and the pool's part must
then lie in the box's range shifted by ``p``.  A table sorts its combos by
``(h, q)``, ``q`` the pool's parts, so the combos of one ``h`` and a range of
the last part are one run, whose ways are a difference of running sums;
with several mixed forms, one run per value of the other parts.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from math import comb, prod

import numpy as np

from ..cards import card
from ..constraints.compile import Compiled, Form, form_top, unclamped
from ..kernel import paired as _compiled
from ..patterns import PATTERNS
from ..randomness import Rng
from .layout import Layout, TooWide, small_vectors, strides_of

#: Bytes the accept matrices (weights and cases, per cell signature) may take.
MAX_ACCEPT_BYTES = 1 << 30
#: Most runs of a table that one (h, box) reads: the values of every mixed form's pool part but the last.
MAX_MIXED_RUNS = 128
_FACT = np.array([1, 1, 2, 6, 24], np.int64)
_BINOM = np.array([[comb(n, k) for k in range(53)] for n in range(53)], np.int64)


def applicable(comp: Compiled) -> bool:
    """Two or more patterned seats, a pool whose forms weigh the cards of the
    tracked ranks (points, controls, top honours or single cards, in every
    suit or in some) and read the pool alone, and no predealt cards."""
    from ..rank_counts import MAX_COMBOS, _compositions

    pool = set(comp.pooled)
    if not pool or len(comp.patterned) < 2 or pool & set(comp.forced.values()) or comp.dead or not comp.exact or not any(comp.tracked):
        return False
    mixed = _mixed_forms(comp)
    if prod(_part(comp.forms[m], pool, inside=True).dim for m in mixed[:-1]) > MAX_MIXED_RUNS:
        return False
    for f, form in enumerate(comp.forms):
        pool_terms = [t for t in form.terms if t.seat in pool]
        if pool_terms and any(t.fn.kind != "weights" for t in pool_terms):
            return False
        if pool_terms and any(a.form == f and a.lengths for a in comp.atoms):
            return False
    # combo parts: the patterned seats, each pool seat, the unconstrained seats
    parts = 1 + len(comp.pooled) + (1 if comp.free else 0)
    return prod(len(_compositions(parts, len(c.suits))) for c in card_classes(comp)) <= MAX_COMBOS


def promoted(comp: Compiled) -> Compiled | None:
    """``comp`` with one pool seat listed by pattern (every pattern allowed),
    when it has one patterned seat beside a pool: the pool then needs a second
    patterned seat (three seats sharing 39 cards give ways past int64).  The
    seat whose listing leaves the pool the fewest card classes (a seat that
    reads single suits or cards: "2 of the top 3 spades"); None when
    ``comp`` has not one patterned seat beside a pool.  The same deals fit:
    listing a seat by pattern constrains nothing."""
    if len(comp.patterned) != 1 or not comp.pooled:
        return None
    return min((_listed_by_pattern(comp, seat) for seat in comp.pooled), key=lambda c: len(card_classes(c)))


def _listed_by_pattern(comp: Compiled, seat: int) -> Compiled:
    masks = {**comp.pattern_masks, seat: np.ones(len(PATTERNS), bool)}
    bounds = {s: b for s, b in comp.pool_bounds.items() if s != seat}
    return replace(comp, patterned=tuple(sorted((*comp.patterned, seat))), pattern_masks=masks, pool_bounds=bounds)


@dataclass(frozen=True)
class CardClass:
    """Cards of one rank that every pool form weighs alike: the pool's ways
    depend on how many of them each seat holds, not which."""

    rank: int
    suits: tuple[int, ...]

    def cards(self) -> list[int]:
        return [card(self.rank, s) for s in self.suits]


def card_classes(comp: Compiled) -> tuple[CardClass, ...]:
    """The tracked cards in classes, by rank: a rank's suits where it is
    tracked, split where some pool form reads one suit and not another (top
    honours in spades, a single card).  With suit-blind pool forms, one class
    per tracked rank, of its four cards."""
    pool = set(comp.pooled)
    terms = [t for f in comp.forms for t in f.terms if t.seat in pool]
    out = []
    for rank in sorted({r for ranks in comp.tracked for r in ranks}):
        suits = [s for s in range(4) if rank in comp.tracked[s]]
        reads = {s: tuple(s in t.suits for t in terms if t.fn.weights[rank]) for s in suits}
        for key in dict.fromkeys(reads.values()):
            out.append(CardClass(rank, tuple(s for s in suits if reads[s] == key)))
    return tuple(out)


def _mixed_forms(comp: Compiled) -> tuple[int, ...]:
    """Forms that sum pool seats and other seats."""
    pool = set(comp.pooled)
    return tuple(f for f, form in enumerate(comp.forms) if len({t.seat in pool for t in form.terms}) == 2)


def _part(form: Form, seats: set[int], inside: bool) -> Form:
    """The terms of ``form`` on ``seats`` (or off them, if not ``inside``),
    at their exact values."""
    part = Form(tuple(t for t in form.terms if (t.seat in seats) == inside))
    return Form(part.terms, form_top(part) + 1, False)


def pool_layout(comp: Compiled) -> Layout:
    """The paired listing's layout of ``comp`` (:func:`applicable`): every
    patterned seat a rank seat, the pool's forms reduced to one value (their
    boxes are read from :attr:`RankPool.source`), a mixed form to its
    patterned part, then a count per tracked rank."""
    source = unclamped(comp)
    pool = RankPool.of(source)
    forms = [Form(f.terms, 1, False) if i in pool.pool_forms else f for i, f in enumerate(source.forms)]
    for m in pool.mixed_forms:
        forms[m] = _part(source.forms[m], set(pool.seats), inside=False)
    listed = replace(source, rank_seats=comp.patterned, forms=forms)
    dims = tuple(f.dim for f in forms) + pool.dims
    return Layout(comp=listed, patterned=comp.patterned, rank_seats=comp.patterned, pooled=(), shape_only=(),
                  free=comp.free, dims=dims, n_box=len(forms), clamp=(False,) * len(forms), pool=pool)


@dataclass
class PoolTable:
    """The pool's ways within one box's pool part, by the patterned seats'
    counts ``h`` of each card class (flat over :attr:`RankPool.dims`) and
    the pool's part ``q`` of each mixed form (flat over ``q_dims``)."""

    combo: np.ndarray  # (m, classes, pool seats) accepted combos' counts, sorted by (h, q)
    cum_ways: np.ndarray  # (m + 1,) running ways (int64), from 0
    cum_cases: np.ndarray  # (m + 1,) running distinct holdings of the pool, from 0
    start: np.ndarray  # (prod(dims) * prod(q_dims) + 1,) each (h, q)'s run
    q_dims: tuple[int, ...]  # each mixed form's pool part: 0..n-1

    def runs(self, h: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """First and end combo of each ``h`` with the mixed parts in ``lo..hi``
        (``(..., len(q_dims))``): one run per value of the parts but the last
        (empty where out of range)."""
        if not self.q_dims:
            return [(self.start[h], self.start[h + 1])]
        n, last = prod(self.q_dims), self.q_dims[-1]
        a, b = lo[..., -1], hi[..., -1]
        out = []
        for prefix in itertools.product(*map(range, self.q_dims[:-1])):
            base = h * n + int(np.dot(prefix, strides_of(self.q_dims)[:-1])) if prefix else h * n
            ok = np.maximum(a, 0) <= np.minimum(b, last - 1)
            for i, v in enumerate(prefix):
                ok &= (lo[..., i] <= v) & (v <= hi[..., i])
            first = self.start[base + np.clip(a, 0, last - 1)]
            out.append((first, np.where(ok, self.start[base + np.clip(b, -1, last - 1) + 1], first)))
        return out

    def totals(self, h: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The pool's ways and distinct holdings for each ``h`` and range of the mixed parts."""
        runs = self.runs(h, lo, hi)
        return (sum(self.cum_ways[end] - self.cum_ways[first] for first, end in runs),
                sum(self.cum_cases[end] - self.cum_cases[first] for first, end in runs))

    def ways(self, h: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """The first of :meth:`totals` alone (what a draw reads)."""
        return sum(self.cum_ways[end] - self.cum_ways[first] for first, end in self.runs(h, lo, hi))

    def pick(self, h: np.ndarray, lo: np.ndarray, hi: np.ndarray, r: np.ndarray) -> np.ndarray:
        """The combo at running way ``r`` among those of :meth:`totals`."""
        first, rest, acc = np.full(len(h), -1, np.int64), r.copy(), np.zeros(len(h), np.int64)
        for a, b in self.runs(h, lo, hi):
            here = (first < 0) & (r < acc + self.cum_ways[b] - self.cum_ways[a])
            first[here], rest[here] = a[here], r[here] - acc[here]
            acc += self.cum_ways[b] - self.cum_ways[a]
        return self.combo[np.searchsorted(self.cum_ways[1:], self.cum_ways[first] + rest, side="right")]


@dataclass
class RankPool:
    """The pool of a :class:`Compiled` (unclamped, so its boxes span every form)."""

    source: Compiled
    seats: tuple[int, ...]
    classes: tuple[CardClass, ...]
    pool_forms: frozenset[int]
    listed_forms: tuple[int, ...]
    mixed_forms: tuple[int, ...]  # their patterned parts are listed, their pool parts read here
    case_seats: tuple[int, ...]  # patterned seats whose holdings make a case (Pavlicek: HCP seats)
    _combos: tuple = field(default=(), repr=False)
    _tables: dict = field(default_factory=dict, repr=False)
    _arrays: dict = field(default_factory=dict, repr=False)  # id(sig_boxes): (sig_boxes, what the compiled pick reads)

    @classmethod
    def of(cls, source: Compiled) -> RankPool:
        seats = source.pooled
        mixed = _mixed_forms(source)
        pool_forms = frozenset(f for f, form in enumerate(source.forms) if form.terms[0].seat in seats and f not in mixed)
        listed_forms = tuple(f for f in range(len(source.forms)) if f not in pool_forms and f not in mixed)
        case_seats = tuple(s for s in source.rank_seats if s not in seats)
        return cls(source, seats, card_classes(source), pool_forms, listed_forms, mixed, case_seats)

    @property
    def dims(self) -> tuple[int, ...]:
        """The patterned seats' count of each class: 0..its size."""
        return tuple(len(c.suits) + 1 for c in self.classes)

    def class_bits(self, suit: int) -> np.ndarray:
        """``(tracked ranks of suit, classes)`` 0/1: the class of each of
        ``suit``'s tracked cards, by its place in ``tracked[suit]``."""
        tracked = self.source.tracked[suit]
        out = np.zeros((len(tracked), len(self.classes)), np.int64)
        for c, cls in enumerate(self.classes):
            if suit in cls.suits:
                out[tracked.index(cls.rank), c] = 1
        return out

    # ----------------------------------------------------------- the tables

    def table(self, lo: tuple[int, ...], hi: tuple[int, ...]) -> PoolTable:
        """The pool's ways within the box ``(lo, hi)`` (over every form; only
        the pool's forms are read), built once per distinct pool part."""
        key = self._table_key(lo, hi)
        if key not in self._tables:
            self._tables[key] = self._table(key)
        return self._tables[key]

    def _table_key(self, lo: tuple[int, ...], hi: tuple[int, ...]) -> tuple:
        """The box's pool part: the boxes that share it share a table."""
        return tuple((lo[f], hi[f]) for f in sorted(self.pool_forms))

    def _table(self, key: tuple) -> PoolTable:
        a, h, mult, spots = self._combo_ways()
        held = {seat: a[:, :, 1 + i] for i, seat in enumerate(self.seats)}
        ok = spots > 0
        for f, (lo, hi) in zip(sorted(self.pool_forms), key):
            v = self._form_value(self.source.forms[f], held)
            ok &= (v >= lo) & (v <= hi)
        q, q_dims = self._mixed_parts(held)
        n_q = prod(q_dims)
        idx = np.nonzero(ok)[0]
        hq = h[idx] * n_q + q[idx]
        idx = idx[np.argsort(hq, kind="stable")]
        w = mult[idx] * spots[idx]  # each a count of distinct deals of the pool's cards: within int64
        if float(w.astype(np.float64).sum()) >= 2.0**62:
            raise TooWide("the pool's ways are too many for int64")
        start = np.searchsorted(np.sort(hq), np.arange(prod(self.dims) * n_q + 1))
        return PoolTable(a[idx, :, 1 : 1 + len(self.seats)], _running(w), _running(mult[idx]), start, q_dims)

    def _mixed_parts(self, held: dict[int, np.ndarray]) -> tuple[np.ndarray, tuple[int, ...]]:
        """Each combo's pool parts of the mixed forms, flat, and how many values each takes."""
        parts = [_part(self.source.forms[m], set(self.seats), inside=True) for m in self.mixed_forms]
        q_dims = tuple(p.dim for p in parts)
        q = np.zeros(len(next(iter(held.values()))), np.int64)
        for p, stride in zip(parts, strides_of(q_dims).tolist()):
            q += stride * self._form_value(p, held)
        return q, q_dims

    def _form_value(self, form: Form, held: dict[int, np.ndarray]) -> np.ndarray:
        """A pool form's value per combo, from each pool seat's ``held[seat]``:
        (n, classes) counts.  A term weighs a class by its rank's weight
        where the class's suits are among the term's (the classes are cut so
        that they are all in or all out)."""
        out = np.zeros(len(next(iter(held.values()))), np.int64)
        for t in form.terms:
            w = np.array([t.fn.weights[c.rank] * (c.suits[0] in t.suits) for c in self.classes], np.int64)
            v = held[t.seat] @ w
            out += t.coef * (sum(t.fn.weights) * len(t.suits) - v if t.complement else v)
        return out

    def _combo_ways(self):
        """Every combo (part 0: the patterned seats' count of each class), its
        flat ``h``, its multiplicity (which cards of each class) and its spot
        cards' ways (cached)."""
        if not self._combos:
            from ..rank_counts import class_combos, part_room

            k = len(self.seats)
            sizes = np.array([len(c.suits) for c in self.classes], np.int64)
            a = class_combos(1 + k + (1 if self.source.free else 0), tuple(sizes.tolist()))
            a = a[(a.sum(axis=1)[:, 1:] <= part_room(k, self.source.free)).all(axis=1)].astype(np.int64)
            h = a[:, :, 0] @ strides_of(self.dims)
            mult = (_FACT[sizes - a[:, :, 0]] // _FACT[a[:, :, 1:]].prod(axis=2)).prod(axis=1)
            listed = len(self.source.patterned)
            left = 52 - int(sizes.sum()) - 13 * listed + a[:, :, 0].sum(axis=1)  # spot cards the patterned seats leave
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
                for lo, hi in boxes:
                    rows, cols = self._box_pairs(layout, zv, b, lo, hi)
                    z, fits = layout.add(zv[b + rows], zv[cols])
                    rows, cols, z = rows[fits], cols[fits], z[fits]
                    w, c = self.table(lo, hi).totals(self._h(layout, z), *self._q_range(layout, z, lo, hi))
                    ways[b + rows, cols] += w  # (rows, cols) are distinct: no repeats to add
                    cases[b + rows, cols] += c
            out[0].append(_narrowed(ways))
            out[1].append(_narrowed(cases))
        return out

    def _box_pairs(self, layout: Layout, zv: np.ndarray, b: int, lo: tuple, hi: tuple) -> tuple[np.ndarray, np.ndarray]:
        """The (z1 - b, z2) of z1 in ``zv[b : b + 256]`` and z2 in ``zv`` whose sum
        may lie in the box ``(lo, hi)``: every pair whose listed forms do, and
        maybe some more (the caller checks that the sum fits).  The pool's ways
        are then read at these alone: 0.8% of heavy.dlr's pairs, where reading
        them at all 4,492**2 took 4 s.  Unclamped, a form's value of a sum is
        the sum of its values, so each listed form is one 2-D test."""
        f = list(self.listed_forms)
        if any(layout.clamp) or not f:  # clamped sums are capped: test the sums themselves
            z = layout.add(zv[b : b + 256, None, :], zv[None, :, :])[0]
            rows, cols = np.nonzero(self._listed_inside(layout, z, lo, hi))
            return rows, cols
        v = layout.form_values(zv)[:, f]  # int64 with folds, else small_vectors: a sum of two fits
        inside = np.ones((len(v[b : b + 256]), len(v)), bool)
        for k, g in enumerate(f):
            s = v[b : b + 256, k, None] + v[None, :, k]
            inside &= (s >= lo[g]) & (s <= hi[g])
        rows, cols = np.nonzero(inside)
        return rows, cols

    @staticmethod
    def _h(layout: Layout, z: np.ndarray, fits: np.ndarray | bool = True) -> np.ndarray:
        """The flat class counts of feature vectors ``z``."""
        # a class read in one suit can pass its size in a sum that does not fit: read h there as 0
        return np.where(fits, z[..., layout.n_box :] @ strides_of(layout.dims[layout.n_box :]), 0)

    def _q_range(self, layout: Layout, z: np.ndarray, lo: tuple, hi: tuple) -> tuple[np.ndarray, np.ndarray]:
        """The pool's parts of the mixed forms that the box ``(lo, hi)`` takes
        beside the patterned parts that ``z`` carries, ``(..., mixed forms)``."""
        m = list(self.mixed_forms)
        p = layout.form_values(z)[..., m]
        return np.array(lo)[m] - p, np.array(hi)[m] - p

    def _listed_inside(self, layout: Layout, z: np.ndarray, lo: tuple, hi: tuple) -> np.ndarray:
        f = list(self.listed_forms)
        if not f:
            return np.ones(z.shape[:-1], bool)
        v = layout.form_values(z)[..., f]
        return np.asarray(((v >= np.array(lo)[f]) & (v <= np.array(hi)[f])).all(axis=-1), bool)

    # ---------------------------------------------------------------- draws

    def deal(self, owners: np.ndarray, rng: Rng, layout: Layout, sig_boxes: list, sig: np.ndarray, z: np.ndarray) -> None:
        """Deal the pool and the unconstrained seats, for deals whose patterned
        seats are dealt (the rest open), of cell signatures ``sig`` and
        summed feature vectors ``z``: the box and the combo in proportion to
        their ways, then the cards uniformly."""
        from ..rank_counts import deal_classes_and_spots

        h = self._h(layout, z)
        # getattr: a build older than pool_pick has the rest of _paired, and draws the same here on numpy
        pick = getattr(_compiled(), "pool_pick", None)
        if pick is not None:
            counts = self._pick_compiled(pick, rng, layout, sig_boxes, sig, z, h)
        else:
            counts = self._pick(rng, layout, sig_boxes, sig, z, h)
        deal_classes_and_spots(owners, rng, tuple(tuple(c.cards()) for c in self.classes), counts, self.seats, self.source.free)

    def _pick(self, rng: Rng, layout: Layout, sig_boxes: list, sig: np.ndarray, z: np.ndarray, h: np.ndarray) -> np.ndarray:
        """Each row's box, then its combo, in proportion to their ways: the
        pool's counts of each class, ``(rows, classes, pool seats)``.  The
        reference for :meth:`_pick_compiled` (one draw a row, of the ways
        summed over its boxes, then the box and combo that way falls in)."""
        width = max(len(b) for b in sig_boxes)
        w = np.zeros((len(z), width), np.int64)
        for s in np.unique(sig).tolist():
            rows = np.nonzero(sig == s)[0]
            for j, (lo, hi) in enumerate(sig_boxes[s]):
                ways = self.table(lo, hi).ways(h[rows], *self._q_range(layout, z[rows], lo, hi))
                w[rows, j] = np.where(self._listed_inside(layout, z[rows], lo, hi), ways, 0)
        cum = np.cumsum(w, axis=1)
        r = rng.below(cum[:, -1])
        j = (cum <= r[:, None]).sum(axis=1)
        r -= cum[np.arange(len(z)), j] - w[np.arange(len(z)), j]
        counts = self._class_major(len(z))
        for s in np.unique(sig).tolist():
            for jj, (lo, hi) in enumerate(sig_boxes[s]):
                rows = np.nonzero((sig == s) & (j == jj))[0]
                if len(rows):
                    counts[rows] = self.table(lo, hi).pick(h[rows], *self._q_range(layout, z[rows], lo, hi), r[rows])
        return counts

    def _pick_compiled(self, pick: Callable[..., None], rng: Rng, layout: Layout, sig_boxes: list, sig: np.ndarray, z: np.ndarray,
                       h: np.ndarray) -> np.ndarray:
        """:meth:`_pick` in one compiled call (the same draws from the same
        bytes): each row brings the form values its boxes test, the listed
        forms' then the mixed forms' patterned parts, and reads the tables
        that :meth:`_pool_arrays` lays end to end."""
        cols = [*self.listed_forms, *self.mixed_forms]
        x = np.ascontiguousarray(layout.form_values(z)[:, cols], np.int64)
        counts = self._class_major(len(z))
        pick(rng.bits, np.ascontiguousarray(sig, np.int64), np.ascontiguousarray(h, np.int64), x,
             self._pool_arrays(sig_boxes), counts.transpose(1, 0, 2))
        return counts

    def _class_major(self, n: int) -> np.ndarray:
        """Zero counts ``(n, classes, pool seats)``, laid out class by class:
        each class's counts, what one deal of
        :func:`~truedeal.rank_counts.deal_classes_and_spots` reads, are then
        contiguous, and their sum over classes a sum of whole arrays.  Row
        by row, numpy copies out and sums runs of one to three counts
        slowly: 0.09 s against 0.004 s for 200,000 deals of seven classes."""
        return np.zeros((len(self.classes), n, len(self.seats)), np.int64).transpose(1, 0, 2)

    def _pool_arrays(self, sig_boxes: list) -> tuple:
        """What ``_paired.pool_pick`` reads (see _paired.c): each signature's
        boxes, each box's bounds on the listed and mixed forms and its table,
        and the tables' arrays end to end with where each starts.  Made once
        per listing (its ``sig_boxes``); kept by identity, with the list
        itself so that its id is not reused."""
        kept = self._arrays.get(id(sig_boxes))
        if kept is not None and kept[0] is sig_boxes:
            return kept[1]
        boxes = list(dict.fromkeys(b for bs in sig_boxes for b in bs))
        at = {b: i for i, b in enumerate(boxes)}
        keys = [self._table_key(lo, hi) for lo, hi in boxes]
        by_key = {k: self.table(lo, hi) for k, (lo, hi) in zip(keys, boxes)}  # each table once, first seen first
        table_of = {k: i for i, k in enumerate(by_key)}
        tables = list(by_key.values())
        cols = [*self.listed_forms, *self.mixed_forms]
        arrays = (
            _running(np.array([len(bs) for bs in sig_boxes], np.int64)),  # sig_ptr
            np.array([at[b] for bs in sig_boxes for b in bs], np.int64),  # sig_box
            # lim: each box's lows on cols, then its highs
            np.array([[*(lo[f] for f in cols), *(hi[f] for f in cols)] for lo, hi in boxes], np.int64).reshape(len(at), 2 * len(cols)),
            np.array([table_of[k] for k in keys], np.int64),  # box_table
            _running(np.array([len(t.start) for t in tables], np.int64)),  # start_at
            _running(np.array([len(t.cum_ways) for t in tables], np.int64)),  # cum_at
            np.concatenate([t.start for t in tables]).astype(np.int64),
            np.concatenate([t.cum_ways for t in tables]).astype(np.int64),
            np.ascontiguousarray(np.concatenate([t.combo.reshape(len(t.combo), -1) for t in tables]), np.int64),
            np.array(tables[0].q_dims, np.int64),  # every table of a pool splits the mixed forms alike
            prod(self.dims),  # n_h
        )
        self._arrays[id(sig_boxes)] = (sig_boxes, arrays)
        return arrays


def _narrowed(a: np.ndarray) -> np.ndarray:
    """Non-negative int64 ``a`` in the narrowest of uint8, uint16 and uint32 that
    holds its values, else as it is (the same values: an accept matrix of 0/1
    ways keeps 1 byte an entry, not 8; heavy.dlr's two 4,492**2 matrices take
    40 MB, not 323 MB).  Never uint64: int64 times uint64 is float64 in numpy."""
    top = int(a.max(initial=0))
    return a if top >= 1 << 32 else a.astype(np.min_scalar_type(top))


def _running(x: np.ndarray) -> np.ndarray:
    """Running sums of ``x`` from 0: entry i sums ``x[:i]``."""
    out = np.zeros(len(x) + 1, np.int64)
    np.cumsum(x, out=out[1:])
    return out


def _spot_ways(left: np.ndarray, need: np.ndarray, free: bool) -> np.ndarray:
    """Ways for each pool seat to take ``need[:, k]`` of the ``left`` spot
    cards, the unconstrained seats the rest (none may be left without them);
    int64 (0 where impossible): at most the ways to deal 39 cards in three hands.
    (Not :func:`~truedeal.rank_counts.spot_ways`, which keeps Python ints:
    four seats sharing 36 spot cards can pass 2**63.)"""
    out = np.ones(len(left), np.int64)
    rest = left.copy()
    ok = (need >= 0).all(axis=1)
    for k in range(need.shape[1]):
        ok &= need[:, k] <= rest
        out *= np.where(ok, _BINOM[np.clip(rest, 0, 52), np.clip(need[:, k], 0, 52)], 0)
        rest -= need[:, k]
    ok &= (rest == 0) | free
    return np.where(ok, out, 0)
