"""Suit options: every way one suit's cards can go, for one column of
patterned-seat lengths, with its weight F and its feature vector."""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from math import comb, factorial, prod

import numpy as np

from ..constraints.compile import Term
from .layout import Layout

_FACT64 = np.array([factorial(i) for i in range(21)], dtype=np.int64)
#: C(n, k) for a suit's cards (0 where k > n), looked up for whole arrays at once.
_COMB14 = np.array([[comb(n, k) for k in range(14)] for n in range(14)], dtype=np.int64)


@dataclass
class SuitOptions:
    """Every way one suit can go, for one column of patterned-seat lengths."""

    masks: np.ndarray  # (n, n_rank) honour masks of the rank seats (bit j: j-th tracked rank)
    free_to_shape: np.ndarray  # (n,) free tracked cards the shape-only seats take; -1: any (no pool)
    weight: np.ndarray  # (n,) int64, F
    v: np.ndarray  # (n, ndims) feature vector
    vflat: np.ndarray  # (n,) flat index of v


def suit_profile(layout: Layout, suit: int) -> tuple:
    """What distinguishes one suit from another for the options: its tracked
    ranks, its predealt cards, which form terms read it and, with a rank
    pool, the card class of each tracked card.  Suits with equal profiles
    share their option tables."""
    comp = layout.comp
    forced = tuple(sorted((r, s) for (k, r), s in comp.forced.items() if k == suit))
    reads = tuple(suit in t.suits for f in comp.forms for t in f.terms)
    dead = sum(1 for c in comp.dead if c % 4 == suit)
    classes = () if layout.pool is None else tuple(map(tuple, layout.pool.class_bits(suit).tolist()))
    return (comp.tracked[suit], forced, reads, dead, classes)


def _assignments(layout: Layout, suit: int):
    """Every way to send the suit's tracked cards to a rank seat or to 'free'
    (predealt cards go to their seat only)."""
    forced = tuple(layout.comp.forced.get((suit, r)) for r in layout.comp.tracked[suit])
    return _assignments_of(len(layout.rank_seats), tuple(None if s is None else layout.rank_seats.index(s) for s in forced))


@functools.lru_cache(maxsize=256)
def _assignments_of(n_rank: int, forced: tuple[int | None, ...]):
    """:func:`_assignments` of tracked cards predealt to ``forced`` (rank
    seat indices, None where not predealt): the same for every column of a
    suit, and built once (a plan's columns asked for them hundreds of times)."""
    choices = [[seat] if seat is not None else range(n_rank + 1) for seat in forced]
    combos = list(itertools.product(*choices))
    dest = np.array(combos, dtype=np.int64).reshape(len(combos), len(forced))
    bits = 1 << np.arange(len(forced), dtype=np.int64)
    masks = np.stack([((dest == i) * bits).sum(axis=1) for i in range(n_rank)], axis=1) if n_rank else np.zeros((len(dest), 0), np.int64)
    pcs = np.stack([(dest == i).sum(axis=1) for i in range(n_rank)], axis=1) if n_rank else np.zeros((len(dest), 0), np.int64)
    free = (dest == n_rank).sum(axis=1)
    for a in (masks, pcs, free):
        a.setflags(write=False)  # shared by every caller
    return masks, pcs, free


@functools.lru_cache(maxsize=64)
def _held(tracked: tuple[int, ...]) -> tuple[frozenset[int], ...]:
    """The ranks of each honour mask over ``tracked`` (2**len masks; with
    predealt cards tracked, 8,192 sets: built once, not once per column)."""
    return tuple(frozenset(tracked[j] for j in range(len(tracked)) if m >> j & 1) for m in range(1 << len(tracked)))


def _form_values(layout: Layout, suit: int, lengths: dict[int, int], masks: np.ndarray) -> np.ndarray:
    """Each option's contribution to each form, ``(n, n_forms)``."""
    out = np.zeros((len(masks), layout.n_box), dtype=np.int64)
    for f, form in enumerate(layout.comp.forms):
        if f in layout.folds:  # read back from its sources
            continue
        for t in form.terms:
            if suit not in t.suits or t.seat not in layout.rank_seats:  # a rank pool's seats are not listed
                continue
            lut = _term_values(t, suit, lengths.get(t.seat, 0), layout.comp.tracked[suit])
            out[:, f] += lut[masks[:, layout.rank_seats.index(t.seat)]]
    return out


@functools.lru_cache(maxsize=4096)
def _term_values(term: Term, suit: int, length: int, tracked: tuple[int, ...]) -> np.ndarray:
    """``term``'s value on each honour mask over ``tracked`` (see :func:`_held`)
    with ``length`` cards: made once, where every suit column of every
    listing of a plan asked for it again (a library script: 2,000,000 calls).

    The term reads only the ranks of ``tracked`` that its function reads
    (``fn.ranks``): it is evaluated on their masks, and every mask over
    ``tracked`` reads its own projection onto them (with predealt cards
    tracked, 32 evaluations instead of 8,192)."""
    read = [j for j, rank in enumerate(tracked) if rank in term.fn.ranks]
    small = np.array([term.value(suit, length, h) for h in _held(tuple(tracked[j] for j in read))], dtype=np.int64)
    masks = np.arange(1 << len(tracked), dtype=np.int64)
    projection = np.zeros_like(masks)
    for i, j in enumerate(read):
        projection |= (masks >> j & 1) << i
    out = small[projection]
    out.setflags(write=False)
    return out


def suit_options(column: tuple[int, ...], layout: Layout) -> SuitOptions:
    """Options for one suit; ``column`` is (a suit with this profile, then the
    patterned seats' lengths)."""
    suit, lengths = column[0], column[1:]
    masks, pcs, free = _assignments(layout, suit)
    n_spots = 13 - len(layout.comp.tracked[suit]) - layout.dead(suit)
    length_of = dict(zip(layout.patterned, lengths))
    # Holdings that give a seat more tracked cards than its length, or leave
    # too few spots, go first (the rest below would drop them anyway): most
    # of the assignments, when the suit is short.
    spots_taken = [length_of[s] - pcs[:, i] for i, s in enumerate(layout.rank_seats) if s in length_of]
    if spots_taken:
        fits = np.all([a >= 0 for a in spots_taken], axis=0) & (sum(spots_taken) <= n_spots)
        masks, pcs, free = masks[fits], pcs[fits], free[fits]
    forms = _form_values(layout, suit, length_of, masks)
    ok = np.ones(len(masks), dtype=bool)
    for f in range(layout.n_box):
        if f in layout.comp.filters:  # holdings past it go; it keeps no coordinate
            ok &= forms[:, f] < layout.comp.forms[f].dim
            forms[:, f] = 0
        elif layout.clamp[f]:
            forms[:, f] = np.minimum(forms[:, f], layout.dims[f] - 1)
        else:
            ok &= forms[:, f] < layout.dims[f]
    spots = np.zeros((len(masks), 0), dtype=np.int64)
    ph_cols = []
    for i, seat in enumerate(layout.rank_seats):
        if seat in length_of:
            a = length_of[seat] - pcs[:, i]
            ok &= a >= 0
            spots = np.concatenate([spots, a[:, None]], axis=1)
            ph_cols.append(i)
    free_spots = n_spots - spots.sum(axis=1)
    ok &= free_spots >= 0
    shape_lengths = [length_of[s] for s in layout.shape_only]
    total_shape = sum(shape_lengths)
    shape_split = factorial(total_shape) // prod(factorial(x) for x in shape_lengths)
    spot_ways = np.zeros(len(masks), dtype=np.int64)
    a_fact = _FACT64[np.clip(spots, 0, 20)].prod(axis=1) if spots.shape[1] else np.ones(len(masks), np.int64)
    fs = np.clip(free_spots, 0, 20)
    spot_ways[ok] = _FACT64[n_spots] // (a_fact[ok] * _FACT64[fs[ok]])
    pc_ph = pcs[:, ph_cols].sum(axis=1) if ph_cols else np.zeros(len(masks), np.int64)
    parts = []
    # Without a pool, how many free tracked cards the shape-only seats take
    # changes no feature, so options sum over it (Vandermonde): free_to_shape = -1.
    hs = range(0, min(len(layout.comp.tracked[suit]), total_shape) + 1) if layout.has_pool else [-1]
    for h in hs:
        if h < 0:
            okh = ok & (free + free_spots >= total_shape)
        else:
            okh = ok & (free >= h) & (free_spots >= total_shape - h)
        if layout.pat_from_pool:  # no free seat: the shape-only seats take every free tracked card
            okh &= free == h
        if not okh.any():
            continue
        idx = np.nonzero(okh)[0]
        if h < 0:
            w = spot_ways[idx] * _COMB14[free[idx] + free_spots[idx], total_shape]
        else:
            w = spot_ways[idx] * _COMB14[free[idx], h] * _COMB14[free_spots[idx], total_shape - h]
        w *= shape_split
        feats = [forms[idx]]
        if layout.has_pool:
            pool_cols = [layout.rank_seats.index(s) for s in layout.pooled]
            forced = np.array([layout.forced(s, suit) for s in layout.pooled], dtype=np.int64)
            feats.append(pcs[idx][:, pool_cols] - forced)
            patterned = (pc_ph[idx] + h - layout.forced_patterned(suit))[:, None] if layout.patterned and not layout.pat_from_pool else None
            feats.append(np.zeros((len(idx), 1), np.int64) if patterned is None else patterned)
        if layout.pool is not None:  # the rank seats' count of each class of tracked cards
            held = np.bitwise_or.reduce(masks[idx], axis=1)
            feats.append(((held[:, None] >> np.arange(len(layout.comp.tracked[suit]))) & 1) @ layout.pool.class_bits(suit))
        v = np.concatenate(feats, axis=1) if feats else np.zeros((len(idx), 0), np.int64)
        inside = (v < np.array(layout.dims)).all(axis=1) if v.shape[1] else np.ones(len(idx), bool)
        idx, w, v = idx[inside], w[inside], v[inside]
        parts.append((masks[idx].astype(np.uint16), np.full(len(idx), h, np.int8), w, v))
    if not parts:
        ndim = len(layout.dims)
        n_rank = len(layout.rank_seats)
        return SuitOptions(np.zeros((0, n_rank), np.uint16), np.zeros(0, np.int8), np.zeros(0, np.int64),
                           np.zeros((0, ndim), np.int64), np.zeros(0, np.int64))
    all_masks, all_feats, all_weights, all_vecs = (np.concatenate(x) for x in zip(*parts))
    order = np.argsort(all_vecs @ layout.strides, kind="stable")
    all_vecs = all_vecs[order]
    return SuitOptions(all_masks[order], all_feats[order], all_weights[order], all_vecs, all_vecs @ layout.strides)
