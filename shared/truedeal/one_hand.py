"""An exact listing of a condition that reads one seat alone, by that hand's rows.

When a script asks things of one hand only ("North opens one of a major" by
a full set of opening rules), every part of it, however it is written
(products, comparisons of two sums, anything the compiler cannot cut into
linear pieces), is a function of that hand's pattern and of which of the
*tracked* ranks (those any feature reads) it holds in each suit.  So the
hand's **rows** are listed: a pattern and, per suit, a mask of the tracked
cards it holds.  Each row is evaluated once, on a canonical hand (its
tracked cards and its lowest spot cards: no feature reads which spots), and
weighs its ways to take its spot cards, ``prod over suits of C(spots,
length - tracked cards held)``.  The other three seats share the other 39
cards alike for every row.

A draw picks a row by weight, deals the hand its spot cards suit by suit,
then the rest to the other seats, each uniformly: every deal that fits is
equally likely.  Plans take it only where they would otherwise reject.

Predealt cards are tracked cards: the hand's rows hold its own and none of
the other seats', and the other seats share what is left, each holding
its own predealt cards from the start.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from math import comb, factorial, prod

import numpy as np

from .cards import SEAT_NAMES, card
from .constraints import ir
from .constraints.compile import Compiled
from .constraints.evaluate import evaluate_cond
from .fill import OPEN, deal_open
from .patterns import PATTERNS
from .randomness import Rng

#: Most hand rows listed (about 0.7 us each to evaluate): past it, not applicable.
MAX_HAND_ROWS = 6_000_000
#: Rows evaluated at a time (52 bytes each as a canonical deal, and the evaluator's arrays).
_BLOCK = 65_536
_ALL = np.arange(52)


def hand_seat(program: ir.Program) -> int | None:
    """The one seat ``program`` reads, when it reads one seat and nothing
    opaque (``rnd``, ``tricks``); else None."""
    if ir.opaque_names(program.condition):
        return None
    seats = {x.seat for x in ir.nodes(program.condition) if isinstance(x, (ir.Feature, ir.ShapeIn))}
    return seats.pop() if len(seats) == 1 else None


def tracked_ranks(program: ir.Program) -> tuple[tuple[int, ...], ...]:
    """Per suit, the ranks whose presence some feature of ``program`` reads,
    and those of its predealt cards."""
    read: list[set[int]] = [set(), set(), set(), set()]
    for x in ir.nodes(program.condition):
        if isinstance(x, ir.Feature):
            for s in x.suits:
                read[s] |= x.fn.ranks
    for _, cards in program.predeal:
        for c in cards:
            read[c % 4].add(c // 4)
    return tuple(tuple(sorted(r)) for r in read)


def _masks_by_length(k: int, mine: int = 0, theirs: int = 0) -> list[np.ndarray]:
    """Per suit length 0..13, the masks of ``k`` tracked cards a holding of
    that length may hold: every card of ``mine`` (predealt to the hand) and
    none of ``theirs`` (predealt to the other seats)."""
    m = np.arange(1 << k)
    counts = np.array([bin(x).count("1") for x in range(1 << k)])
    fixed = ((m & mine) == mine) & ((m & theirs) == 0)
    return [np.nonzero(fixed & (counts <= length) & (length - counts <= 13 - k))[0] for length in range(14)]


def row_count(program: ir.Program, seat: int, patterns: np.ndarray) -> int:
    """How many rows ``seat``'s hand has over ``patterns``, for ``program``'s
    tracked ranks and predealt cards."""
    tracked = tracked_ranks(program)
    per = [[len(m) for m in by_length] for by_length in _by_length(program, seat, tracked)]
    return sum(int(np.prod([per[s][p[s]] for s in range(4)])) for p in patterns)


def _by_length(program: ir.Program, seat: int, tracked: tuple[tuple[int, ...], ...]) -> list[list[np.ndarray]]:
    """Per suit, :func:`_masks_by_length` of its tracked cards and predealt ones."""
    mine, theirs = _predealt_masks(program, seat, tracked)
    return [_masks_by_length(len(t), mine[s], theirs[s]) for s, t in enumerate(tracked)]


def allowed_patterns(comp: Compiled, seat: int) -> np.ndarray:
    """The patterns of ``seat`` that the compiled condition does not surely exclude (a superset)."""
    mask = comp.pattern_masks.get(seat)
    return PATTERNS if mask is None else PATTERNS[mask]


def _rows(by_length: list[list[np.ndarray]], patterns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every row over ``patterns``: (n, 4) suit lengths and (n, 4) masks of
    tracked cards (per suit and length, the masks of ``by_length``)."""
    lengths, masks = [], []
    for p in patterns:
        grid = np.stack(np.meshgrid(*[by_length[s][p[s]] for s in range(4)], indexing="ij"), axis=-1).reshape(-1, 4)
        masks.append(grid)
        lengths.append(np.broadcast_to(p, grid.shape))
    return np.concatenate(lengths).astype(np.int8), np.concatenate(masks).astype(np.int16)


def _held(masks: np.ndarray) -> np.ndarray:
    """(n, 4) tracked cards held per suit."""
    return np.stack([np.bitwise_count(masks[:, s].astype(np.uint16)) for s in range(4)], axis=1).astype(np.int64)


@cache
def _canonical_holdings(ranks: tuple[int, ...], suit: int) -> np.ndarray:
    """(14, 2 ** k) the cards, as bits of their indices, that a canonical
    holding in ``suit`` of each length and mask of the ``k`` tracked
    ``ranks`` holds: the tracked cards its mask says, then the lowest other ranks."""
    k = len(ranks)
    bits = (np.arange(1 << k)[:, None] >> np.arange(k)) & 1
    cards = (bits.astype("<u8") << np.array([card(r, suit) for r in ranks], "<u8")).sum(axis=1, dtype="<u8")
    held = np.broadcast_to(cards, (14, 1 << k)).copy()
    need = np.arange(14)[:, None] - bits.sum(axis=1)
    for i, r in enumerate(r for r in range(12, -1, -1) if r not in ranks):
        held[need > i] |= np.uint64(1) << np.uint64(card(r, suit))
    return held


def _predealt_masks(program: ir.Program, seat: int, tracked: tuple[tuple[int, ...], ...]) -> tuple[list[int], list[int]]:
    """Per suit, the mask of tracked cards predealt to ``seat``, and of those
    predealt to the other seats."""
    mine, theirs = [0] * 4, [0] * 4
    for holder, cards in program.predeal:
        for c in cards:
            bit = 1 << tracked[c % 4].index(c // 4)
            if holder == seat:
                mine[c % 4] |= bit
            else:
                theirs[c % 4] |= bit
    return mine, theirs


@dataclass(frozen=True)
class _Layout:
    """What :class:`~truedeal.engine.Plan` reads of a listing's layout:
    ``free``, the other seats, and ``room``, the cards each is dealt (13
    less its predealt ones)."""

    free: tuple[int, ...]
    room: tuple[int, ...] = (13, 13, 13)

    def free_ways(self) -> int:
        return factorial(sum(self.room)) // prod(factorial(k) for k in self.room)


class OneHandListing:
    """The rows of ``seat``'s hand that fit ``program`` (see module doc)."""

    def __init__(self, program: ir.Program, seat: int, patterns: np.ndarray, within: OneHandListing | None = None) -> None:
        """``within``: a listing of the same seat and tracked ranks whose
        rows hold every row that fits ``program`` (a class of ``rnd`` within
        the script): only its rows are evaluated."""
        self.seat, self.tracked = seat, tracked_ranks(program)
        others = tuple(s for s in range(4) if s != seat)
        self.predeal = program.predeal
        self.layout = _Layout(others, tuple(13 - sum(len(cards) for s, cards in program.predeal if s == o) for o in others))
        lengths: np.ndarray
        masks: np.ndarray
        if within is not None and (within.seat, within.tracked, within.predeal) == (seat, self.tracked, self.predeal):
            lengths, masks = within.lengths, within.masks
        else:
            lengths, masks = _rows(_by_length(program, seat, self.tracked), patterns)
        fits = np.concatenate([np.zeros(0, bool), *(evaluate_cond(self._canonical(lengths[a : a + _BLOCK], masks[a : a + _BLOCK]),
                                                                  program.condition) for a in range(0, len(lengths), _BLOCK))])
        self.lengths: np.ndarray = lengths[fits]
        self.masks: np.ndarray = masks[fits]
        self.e_weight = self._spot_ways().tolist()
        self.total = sum(self.e_weight)
        self.cells = np.zeros((1, 0), np.int64)
        self.cases = len(self.e_weight)  # a row is one case: a pattern and a holding of the tracked cards
        self.what = f"{SEAT_NAMES[seat]}'s hand listed by its rows (a pattern and its tracked cards)"
        self.method = f"exact: {self.what}, no rejection"

    @property
    def deals(self) -> int:
        return self.total * self.layout.free_ways()

    def _spot_ways(self) -> np.ndarray:
        spots = self.lengths - _held(self.masks)
        pool = [13 - len(t) for t in self.tracked]
        table = np.array([[comb(pool[s], x) for x in range(14)] for s in range(4)], np.int64)
        return np.prod([table[s][spots[:, s]] for s in range(4)], axis=0)

    def give_tracked(self, owners: np.ndarray, masks: np.ndarray) -> None:
        """Give the hand, in each row of ``owners``, the tracked cards ``masks`` say."""
        for s, ranks in enumerate(self.tracked):
            for j, r in enumerate(ranks):
                owners[(masks[:, s] >> j & 1).astype(bool), card(r, s)] = self.seat

    def spots_needed(self, rows: np.ndarray) -> np.ndarray:
        """(n, 4) spot cards the hand takes in each suit, for listed ``rows``."""
        return self.lengths[rows] - _held(self.masks[rows])

    def _canonical(self, lengths: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """A deal per row in which the hand holds its tracked cards and its lowest spot cards."""
        cards = np.zeros(len(lengths), "<u8")  # bit c: the hand holds card c
        for s, ranks in enumerate(self.tracked):
            cards |= _canonical_holdings(ranks, s)[lengths[:, s], masks[:, s]]
        held = np.unpackbits(cards.view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")[:, :52]
        other = (self.seat + 1) % 4
        return held * np.uint8((self.seat - other) % 256) + np.uint8(other)  # (uint8 wraps: seat or other)

    def make_sampler(self) -> OneHandSampler:
        return OneHandSampler(self)


class OneHandSampler:
    """Uniform deals from a :class:`OneHandListing`."""

    def __init__(self, listing: OneHandListing) -> None:
        from .sampling import WideCategorical

        self.listing = listing
        self.pick = WideCategorical(listing.e_weight)
        self.spots = [np.array([card(r, s) for r in range(13) if r not in ranks], np.int64)
                      for s, ranks in enumerate(listing.tracked)]

    def draw(self, n: int, rng: Rng) -> np.ndarray:
        L = self.listing
        row = self.pick.draw(n, rng)
        owners = np.full((n, 52), OPEN, np.uint8)
        for seat, cards in L.predeal:
            owners[:, list(cards)] = seat
        L.give_tracked(owners, L.masks[row])
        need = L.spots_needed(row)
        hand = np.array([L.seat], np.uint8)
        for s in range(4):
            deal_open(owners, rng, self.spots[s], need[:, s : s + 1], hand)
        others, room = L.layout.free, L.layout.room
        deal_open(owners, rng, _ALL, np.tile(room[:2], (n, 1)).astype(np.int64), np.array(others[:2], np.uint8))
        owners[owners == OPEN] = others[2]
        return owners
