"""Deal the cards a case leaves open, uniformly (Pavlicek's "fill the rest").

Once a draw has fixed the patterned seats' suit lengths, the HCP seats'
honours and, per suit, how many free honours the shape-only seats take, every
completion is equally likely.  The cards are dealt in stages; at each stage a
seat receives a uniformly random subset of the cards it may take, and the
number of ways to finish the deal afterwards depends only on counts, never on
which cards were chosen, so the product is uniform over the completions:

1. each suit's spot cards: the patterned HCP seats' spots, then the shape-only
   seats' spots, the rest into the pool;
2. each suit's free honours: the shape-only seats' share, the rest into the pool;
3. each suit's shape-only cards among the shape-only seats;
4. the pool's spot cards to the pooled (HCP-only) seats;
5. everything left to the unconstrained seats, 13 each (less the cards
   predealt to them that nothing reads, which are theirs from the start).

Subsets come from a partial Fisher-Yates shuffle with exact integer draws.
"""

from __future__ import annotations

import numpy as np

from .cards import card
from .kernel import sampler as _compiled
from .listing import Layout
from .randomness import Rng

OPEN = 255
_SHAPE = 254  # chosen for the shape-only seats, not yet split among them
_ALL = np.arange(52)


def _card_sets(layout: Layout) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """Per suit, its tracked cards (in tracked-rank order) and its spot cards;
    and every spot card."""
    tracked = [np.array([card(r, s) for r in layout.comp.tracked[s]], dtype=np.int64) for s in range(4)]
    spots = [np.array([card(r, s) for r in range(13) if r not in layout.comp.tracked[s]], dtype=np.int64) for s in range(4)]
    return tracked, spots, np.concatenate(spots)


def deal_open(owners: np.ndarray, rng: Rng, cards: np.ndarray, counts: np.ndarray, dest: np.ndarray, take: int = OPEN) -> None:
    """Give each row's ``counts[:, k]`` cards to ``dest[k]``, a uniform random
    choice among the cards in ``cards`` whose owner is ``take``.

    counts: (n, k) int; dest: (k,) owner codes.  Rows must have enough cards.
    The compiled deal (:func:`truedeal.kernel.sampler`) does the same with the
    same bytes; the numpy code below is the reference.
    """
    k = _compiled()
    if k is not None:
        k.deal(rng.bits, owners, np.ascontiguousarray(cards, np.int64), np.ascontiguousarray(counts, np.int64),
               np.ascontiguousarray(dest, np.uint8), take)
        return
    n, m = len(owners), len(cards)
    need = counts.sum(axis=1)
    width = int(need.max(initial=0))
    if width == 0:
        return
    avail = owners[:, cards] == take  # (n, m)
    cards = cards.astype(np.uint8)
    if avail.all():
        lists = np.broadcast_to(cards[:, None], (m, n)).copy()
        length = np.full(n, m)
    else:  # available cards first, in card order
        lists = np.ascontiguousarray(cards[np.argsort(~avail, axis=1, kind="stable")].T)
        length = avail.sum(axis=1)
    # When the blocks take every available card, the last block is simply what
    # the others leave, so it needs no shuffling of its own.
    shuffle = need - counts[:, -1] if (need == length).all() else need
    # Partial Fisher-Yates, position-major so that position i is one contiguous row:
    # position i takes a uniform pick from positions i..length-1.
    flat = lists.reshape(-1)
    rows = np.arange(n)
    steps = np.arange(int(shuffle.max(initial=0)))[:, None]
    at = (steps + rng.below(np.maximum(length[None, :] - steps, 1))) * n + rows  # (steps, n)
    for i in range(len(steps)):
        here = lists[i].copy()
        lists[i] = flat[at[i]]
        flat[at[i]] = here
    ends = np.cumsum(counts, axis=1)
    block = (np.arange(width)[:, None, None] >= ends[None, :, :]).sum(axis=2)  # (width, n)
    p, r = np.nonzero(block < counts.shape[1])
    owners[r, lists[p, r]] = dest[block[p, r]]


def _roles(layout: Layout) -> tuple:
    """The layout's roles as the compiled fill reads them (see _sampler.c), cached on the layout."""
    roles = layout.fill_roles
    if roles is None:
        pat_pos = {s: i for i, s in enumerate(layout.patterned)}
        honours, spots, _ = _card_sets(layout)
        tracked, n_tracked = np.zeros((4, 13), np.int64), np.array([len(h) for h in honours], np.int64)
        spot, n_spots = np.zeros((4, 13), np.int64), np.array([len(x) for x in spots], np.int64)
        for s in range(4):
            tracked[s, : len(honours[s])], spot[s, : len(spots[s])] = honours[s], spots[s]
        u8 = lambda seats: np.array(seats, np.uint8)  # noqa: E731
        roles = (u8(layout.rank_seats), np.array([pat_pos.get(s, -1) for s in layout.rank_seats], np.int64),
                 u8(layout.shape_only), np.array([pat_pos[s] for s in layout.shape_only], np.int64),
                 u8(layout.pooled), u8(layout.free), tracked, n_tracked, spot, n_spots, _dead_owners(layout))
        layout.fill_roles = roles
    return roles


def _dead_owners(layout: Layout) -> np.ndarray:
    """(52,) owner of each card out of the pack (predealt to an unconstrained seat), else open."""
    out = np.full(52, OPEN, np.uint8)
    for c, seat in layout.comp.dead.items():
        out[c] = seat
    return out


def fill_deals(layout: Layout, lengths: np.ndarray, masks: np.ndarray, free_to_shape: np.ndarray, rng: Rng) -> np.ndarray:
    """Complete ``n`` deals.

    lengths: (n, n_patterned, 4) suit lengths of the patterned seats;
    masks: (n, 4, n_rank) masks of the rank seats per suit (bit j: the j-th tracked rank);
    free_to_shape: (n, 4) free tracked cards the shape-only seats take per suit.
    Returns an (n, 52) uint8 owners array.  The compiled fill does the same
    deals in the same order from the same bytes; the numpy code is the reference.
    """
    n = len(lengths)
    k = _compiled()
    if k is not None:
        owners = np.empty((n, 52), dtype=np.uint8)
        k.fill(rng.bits, _roles(layout), len(layout.patterned), owners, np.ascontiguousarray(lengths, np.int64),
               np.ascontiguousarray(masks, np.uint16), np.ascontiguousarray(free_to_shape, np.int64))
        return owners
    owners = np.tile(_dead_owners(layout), (n, 1))
    hcp_seats = layout.rank_seats
    honours, spots, all_spots = _card_sets(layout)
    pat_pos = {s: i for i, s in enumerate(layout.patterned)}
    for i, seat in enumerate(hcp_seats):
        for s in range(4):
            for r in range(len(honours[s])):
                has = (masks[:, s, i] >> r) & 1 == 1
                owners[has, honours[s][r]] = seat
    shape_seats = np.array(layout.shape_only, dtype=np.uint8)
    pooled = layout.has_pool
    for s in range(4):
        suit = np.concatenate([honours[s], spots[s]])
        shape_len = (np.stack([lengths[:, pat_pos[int(x)], s] for x in shape_seats], axis=1) if len(shape_seats)
                     else np.zeros((n, 0), np.int64))
        # 1. spots for patterned HCP seats (and, with a pool, the shape-only seats' spots).
        dest, counts = [], []
        for i, seat in enumerate(hcp_seats):
            if seat in pat_pos:
                pcs = np.zeros(n, dtype=np.int64)
                for r in range(len(honours[s])):
                    pcs += (masks[:, s, i] >> r) & 1
                dest.append(seat)
                counts.append(lengths[:, pat_pos[seat], s] - pcs)
        if pooled and len(shape_seats):
            dest.append(_SHAPE)
            counts.append(shape_len.sum(axis=1) - free_to_shape[:, s])
        if dest:
            deal_open(owners, rng, spots[s], np.stack(counts, axis=1), np.array(dest, dtype=np.uint8))
        if not len(shape_seats):
            continue
        if not pooled:
            # Without a pool the shape-only seats take any open cards of the suit.
            deal_open(owners, rng, suit, shape_len, shape_seats)
            continue
        # 2. free honours for the shape-only seats, 3. split among them.
        if free_to_shape[:, s].any():
            deal_open(owners, rng, honours[s], free_to_shape[:, s : s + 1], np.array([_SHAPE], dtype=np.uint8))
        if len(shape_seats) == 1:
            chosen = owners[:, suit] == _SHAPE
            owners[:, suit] = np.where(chosen, shape_seats[0], owners[:, suit])
        else:
            deal_open(owners, rng, suit, shape_len, shape_seats, take=_SHAPE)
    # 4. pooled seats take their spot cards from the pool.
    if layout.pooled:
        pool_counts = [13 - (owners == seat).sum(axis=1) for seat in layout.pooled]
        deal_open(owners, rng, all_spots, np.stack(pool_counts, axis=1), np.array(layout.pooled, dtype=np.uint8))
    # 5. the unconstrained seats share the rest.
    free = layout.free
    if len(free) == 1:
        owners[owners == OPEN] = free[0]
    elif len(free) > 1:
        need = np.array([13 - layout.dead(seat=s) for s in free[:-1]], dtype=np.int64)
        deal_open(owners, rng, _ALL, np.tile(need, (n, 1)), np.array(free[:-1], dtype=np.uint8))
        owners[owners == OPEN] = free[-1]
    return owners
