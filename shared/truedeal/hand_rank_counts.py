"""An exact listing of one hand in full and the other seats by rank counts.

When every constrained seat but one sees only whole-hand, suit-blind points
(HCP, controls, point scales), those seats depend on the deal only through
how many cards of each tracked rank they hold (:mod:`truedeal.rank_counts`).
The one other seat, **the hand**, may be constrained by anything a seat's
pattern and honours decide: shape, suit lengths, points in a suit, losers,
top honours.  "North 15-17 balanced, East 8-12, South 6-10, West 5-12" is
such a spec; the factored listing would carry three seats' HCP per suit.

The hand is listed by pattern and honour mask per suit.  A **hand row**
weighs ``prod over suits of C(spots, length - honours)``: its ways to take
its spot cards.  Rows are grouped by a **key**: the hand's count of each
tracked rank, and the truth of each part of the condition that reads the hand
alone (its signature).  An entry is a key with a **combo**: how the
``4 - p`` remaining cards of each tracked rank split among the other seats.
Its weight is exact:

* the key's hand rows' total weight;
* ``prod over ranks of (4 - p)! / prod(a!)`` ways to choose which suits go where;
* the remaining spot cards: each points seat takes ``13 - c``, the
  unconstrained seats share the rest.

A draw picks an entry by weight, a hand row of its key by weight, the hand's
spot cards, then each rank's remaining cards and the spot cards as
:mod:`truedeal.rank_counts` does: every deal that fits is equally likely.

Cards predealt to the hand are in each of its rows: a suit's honour mask
holds them, and its spot cards are chosen among the others.  (Cards
predealt to another seat are asked of the deal instead, a class of their
own in the paired listing's pool: those plans keep their deals.)
"""

from __future__ import annotations

from math import comb
from operator import mul

import numpy as np

from .cards import card
from .constraints.compile import FALSE, TRUE, Compiled, evaluate3
from .fill import deal_open
from .patterns import PATTERNS
from .randomness import Rng
from .rank_counts import MAX_COMBOS, _compositions, _Layout, combos, deal_ranks_and_spots, form_value, part_room, read_ranks, spot_ways

#: Most hand rows enumerated (pattern x honour masks); past it, not applicable.
MAX_HAND_ROWS = 5_000_000
#: Most condition parts that read the hand alone (bits of a signature).
MAX_HAND_LEAVES = 24
_OPEN = 255


def applicable(comp: Compiled) -> bool:
    """One patterned seat, at least one other constrained seat, and every
    part of the condition that reads another seat suit-blind."""
    if len(comp.patterned) != 1 or comp.dead or not comp.exact:
        return False
    hand, ranks = comp.patterned[0], read_ranks(comp)
    if any(seat != hand for seat in comp.forced.values()):
        return False
    others = [s for s in comp.rank_seats if s != hand]
    if not others or not ranks:
        return False
    shared = _shared_forms(comp, hand)
    for f, form in enumerate(comp.forms):
        if shared[f] and any(t.fn.kind != "weights" or t.suits != (0, 1, 2, 3) for t in form.terms):
            return False
    if any(a.form is not None and shared[a.form] and a.lengths for a in comp.atoms):
        return False
    if len(_hand_leaves(comp, shared)) > MAX_HAND_LEAVES:
        return False
    parts = 1 + len(others) + (1 if comp.free else 0)
    return len(_compositions(parts)) ** len(ranks) <= MAX_COMBOS and _row_bound(comp, hand) <= MAX_HAND_ROWS


def _shared_forms(comp: Compiled, hand: int) -> list[bool]:
    """Per form: does it read a seat other than the hand?"""
    return [any(t.seat != hand for t in form.terms) for form in comp.forms]


def _hand_leaves(comp: Compiled, shared: list[bool]) -> list[tuple]:
    """The condition's leaves that read the hand alone, in signature-bit order."""
    atoms = [("atom", a) for a, atom in enumerate(comp.atoms) if atom.form is None or not shared[atom.form]]
    return atoms + [("shape", j) for j in range(len(comp.shapes))]


def _valid_masks(comp: Compiled, ranks: tuple[int, ...]) -> np.ndarray:
    """(4, 14, 2**t) ways for each suit of each length to hold each honour
    mask: its spot cards, the hand's predealt ones among them (a mask that
    lacks a predealt honour has none)."""
    t = len(ranks)
    pc = np.array([bin(m).count("1") for m in range(1 << t)])
    out = np.zeros((4, 14, 1 << t), np.int64)
    for suit in range(4):
        must = sum(1 << i for i, r in enumerate(ranks) if (suit, r) in comp.forced)
        held = _predealt_spots(comp, ranks, suit)
        for m in range(1 << t):
            if m & must == must:
                out[suit, :, m] = [comb(13 - t - held, L - pc[m] - held) if 0 <= L - pc[m] - held <= 13 - t - held else 0
                                   for L in range(14)]
    return out


def _predealt_spots(comp: Compiled, ranks: tuple[int, ...], suit: int) -> int:
    """The hand's predealt cards of ``suit`` that no form weighs."""
    return sum(1 for (k, r) in comp.forced if k == suit and r not in ranks)


def _row_bound(comp: Compiled, hand: int) -> int:
    """Hand rows the listing would enumerate (before the condition prunes them)."""
    n_masks = (_valid_masks(comp, read_ranks(comp)) > 0).sum(axis=2)  # (suits, lengths)
    allowed = PATTERNS[comp.pattern_masks[hand]]
    return int(n_masks[np.arange(4), allowed].prod(axis=1).sum())


class HandRankCountListing:
    """The exact listing of a :class:`Compiled` that :func:`applicable` accepts."""

    def __init__(self, comp: Compiled) -> None:
        self.comp = comp
        self.hand = comp.patterned[0]
        self.ranks = read_ranks(comp)
        self.seats = tuple(s for s in comp.rank_seats if s != self.hand)
        self.layout = _Layout(comp.free)
        self.cells = np.zeros((1, 0), np.int64)
        shared = _shared_forms(comp, self.hand)
        self.leaves = _hand_leaves(comp, shared)
        self._list_hand(shared)
        self._list_entries(shared)

    @property
    def deals(self) -> int:
        return self.total * self.layout.free_ways()

    # ------------------------------------------------------------ the hand

    def _list_hand(self, shared: list[bool]) -> None:
        """Hand rows sorted by key: ``row_key`` (a dense key id), ``row_code``
        (pattern and masks), ``row_cum`` (running ways); per key its
        rank counts (``key_p``), signature, total ways and row count."""
        t = len(self.ranks)
        ways = _valid_masks(self.comp, self.ranks)
        forms = [f for f in range(len(self.comp.forms)) if not shared[f]]
        held = [frozenset(r for i, r in enumerate(self.ranks) if m >> i & 1) for m in range(1 << t)]
        value = np.array([[[[sum(term.value(s, L, held[m]) for term in self.comp.forms[f].terms) for f in forms]
                            for m in range(1 << t)] for L in range(14)] for s in range(4)], np.int64).reshape(4, 14, 1 << t, len(forms))
        bits = (np.arange(1 << t)[:, None] >> np.arange(t)[None, :]) & 1  # (masks, ranks)
        parts = [self._pattern_rows(pi, ways, value, bits, forms) for pi in np.nonzero(self.comp.pattern_masks[self.hand])[0].tolist()]
        key = np.concatenate([p[0] for p in parts] + [np.zeros(0, np.int64)])
        code = np.concatenate([p[1] for p in parts] + [np.zeros(0, np.int64)])
        w = np.concatenate([p[2] for p in parts] + [np.zeros(0, np.int64)])
        order = np.argsort(key, kind="stable")
        keys, first, self.row_key = np.unique(key[order], return_index=True, return_inverse=True)
        self.row_code, self.row_cum = code[order], np.cumsum(w[order])
        self.key_ways = np.add.reduceat(w[order], first) if len(first) else np.zeros(0, np.int64)
        self.key_rows = np.diff(np.append(first, len(order)))
        self.key_p, self.key_sig = keys >> len(self.leaves), keys & ((1 << len(self.leaves)) - 1)

    def _pattern_rows(self, pi: int, ways: np.ndarray, value: np.ndarray, bits: np.ndarray, forms: list[int]):
        """(key, code, ways) of one pattern's hand rows that may fit."""
        t, lengths = len(self.ranks), PATTERNS[pi]
        valid = [np.nonzero(ways[s, lengths[s]])[0] for s in range(4)]
        masks = np.stack(np.meshgrid(*valid, indexing="ij"), axis=-1).reshape(-1, 4)
        w = np.prod([ways[s, lengths[s], masks[:, s]] for s in range(4)], axis=0)
        x = sum(value[s, lengths[s], masks[:, s]] for s in range(4))  # (rows, hand forms)
        leaves = {}
        for leaf in self.leaves:
            if leaf[0] == "shape":
                inside = tuple(int(v) for v in lengths) in self.comp.shapes[leaf[1]].patterns
                leaves[leaf] = np.full(len(masks), int(inside), np.int8)
                continue
            atom = self.comp.atoms[leaf[1]]
            length_part = sum(c * int(lengths[k]) for c, _, k in atom.lengths)
            v = x[:, forms.index(atom.form)] if atom.form is not None else 0
            leaves[leaf] = np.broadcast_to(atom.holds(v, length_part), (len(masks),)).astype(np.int8)
        keep = evaluate3(self.comp.tree, leaves, len(masks)) != FALSE
        sig = sum((leaves[leaf].astype(np.int64) << k for k, leaf in enumerate(self.leaves)), np.zeros(len(masks), np.int64))
        p = sum(bits[masks[:, s]] for s in range(4))  # (rows, ranks): the hand's count of each rank
        key = (p @ 5 ** np.arange(t)) << len(self.leaves) | sig
        code = pi << (4 * t) | (masks << (t * np.arange(4))).sum(axis=1)
        return key[keep], code[keep], w[keep]

    # ------------------------------------------------------------ entries

    def _list_entries(self, shared: list[bool]) -> None:
        """Every (key, combo) the condition accepts, with its exact weight."""
        t, q = len(self.ranks), len(self.seats)
        a = combos(1 + q + (1 if self.comp.free else 0), t)  # part 0 the hand, then self.seats, then the free seats
        a = a[(a.sum(axis=1) <= part_room(1 + q, self.comp.free)).all(axis=1)]
        p_index = a[:, :, 0].astype(np.int64) @ 5 ** np.arange(t)
        lo, hi = np.searchsorted(self.key_p, p_index, "left"), np.searchsorted(self.key_p, p_index, "right")
        combo = np.repeat(np.arange(len(a)), hi - lo)  # each combo once per key of its hand counts
        key = lo[combo] + np.arange(len(combo)) - np.repeat(np.cumsum(hi - lo) - (hi - lo), hi - lo)
        a = a[combo].astype(np.int64)
        ok = self._accepts(a, self.key_sig[key], shared)
        a, key = a[ok], key[ok]
        fact = np.array([1, 1, 2, 6, 24], np.int64)
        mult = (fact[4 - a[:, :, 0]] // fact[a[:, :, 1:]].prod(axis=2)).prod(axis=1)
        # spot cards left after the hand's, then each points seat's 13 - c
        rows = np.concatenate([39 - 4 * t + a[:, :, :1].sum(axis=1), 13 - a[:, :, 1 : 1 + q].sum(axis=1)], axis=1)
        weight = [int(x) * g for x, g in zip((self.key_ways[key] * mult).tolist(), spot_ways(rows, bool(self.comp.free)))]
        keep = np.array([w > 0 for w in weight], dtype=bool)
        self.a, self.e_key = a[keep], key[keep]
        self.e_weight = [w for w, k in zip(weight, keep.tolist()) if k]
        self.total = sum(self.e_weight)
        self.cases = sum(map(mul, self.key_rows[self.e_key].tolist(), mult[keep].tolist()))

    def _accepts(self, a: np.ndarray, sig: np.ndarray, shared: list[bool]) -> np.ndarray:
        """The condition's truth per (combo, signature) row, every leaf known."""
        held = {seat: a[:, :, 1 + i] for i, seat in enumerate(self.seats)} | {self.hand: a[:, :, 0]}
        leaves = {leaf: ((sig >> k) & 1).astype(np.int8) for k, leaf in enumerate(self.leaves)}
        for i, atom in enumerate(self.comp.atoms):
            if atom.form is not None and shared[atom.form]:
                leaves[("atom", i)] = atom.holds(form_value(self.comp.forms[atom.form], self.ranks, held), 0).astype(np.int8)
        return evaluate3(self.comp.tree, leaves, len(a)) == TRUE

    def make_sampler(self) -> HandRankCountSampler:
        return HandRankCountSampler(self)


class HandRankCountSampler:
    """Uniform deals from a :class:`HandRankCountListing`."""

    def __init__(self, listing: HandRankCountListing) -> None:
        from .sampling import WideCategorical, _starts

        self.listing = listing
        self.pick = WideCategorical(listing.e_weight)
        self.row_start = _starts(listing.row_key, len(listing.key_ways))
        t = len(listing.ranks)
        self.honours = np.array([[card(r, s) for r in listing.ranks] for s in range(4)], np.int64)  # (suit, rank)
        self.spots = [np.array([card(r, s) for r in range(13) if r not in listing.ranks], np.int64) for s in range(4)]
        self.bits = ((np.arange(1 << t)[:, None] >> np.arange(t)) & 1).astype(bool)  # (mask, rank)
        self.popcount = self.bits.sum(axis=1)
        self.predealt = [card(r, k) for k, r in listing.comp.forced]  # the hand's
        self.hand_spots = np.array([_predealt_spots(listing.comp, listing.ranks, s) for s in range(4)], np.int64)

    def draw(self, n: int, rng: Rng) -> np.ndarray:
        from .sampling import _locate

        L, t = self.listing, len(self.listing.ranks)
        entry = self.pick.draw(n, rng)
        key = L.e_key[entry]
        row = _locate(rng, L.row_key, L.row_cum, self.row_start, key, L.key_ways[key])
        code = L.row_code[row]
        masks = (code[:, None] >> (t * np.arange(4))) & ((1 << t) - 1)  # (n, suits)
        lengths = PATTERNS[code >> (4 * t)]
        owners = np.full((n, 52), _OPEN, dtype=np.uint8)
        owners[:, self.predealt] = L.hand
        for s in range(4):
            owners[:, self.honours[s]] = np.where(self.bits[masks[:, s]], L.hand, _OPEN)
            need = lengths[:, s] - self.popcount[masks[:, s]] - self.hand_spots[s]
            deal_open(owners, rng, self.spots[s], need[:, None], np.array([L.hand], np.uint8))
        deal_ranks_and_spots(owners, rng, L.ranks, L.a[entry][:, :, 1 : 1 + len(L.seats)], L.seats, L.comp.free)
        return owners
