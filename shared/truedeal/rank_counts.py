"""An exact listing by rank counts, for seats constrained by whole-hand points alone.

When no constrained seat's suit lengths matter and every feature weighs ranks
the same in every suit (HCP, controls, point scales), a hand's features
depend only on how many cards of each tracked rank it holds.  So the four
aces (kings, ...) are interchangeable: a **combo** says, for each tracked
rank, how many of its four cards each constrained seat holds (35 ways per
rank for four seats).  A combo's weight is exact:

* ``4! / prod(a!)`` ways per rank to choose which suits go where;
* the spot cards: each constrained seat takes ``13 - c`` of them
  (``c`` = its tracked cards), the unconstrained seats share the rest.

This lists three or four seats of HCP ranges, which the factored listing
cannot hold (its feature space would be the product of every seat's HCP and
honour count), in a few hundred thousand combos.  A draw picks a combo in
proportion to its weight, deals each rank's suits by a uniform permutation,
then the spots uniformly: every deal that fits is equally likely.

Predealt cards are out of the combos: a predealt ace is one of its seat's
aces from the start (the combo places the other three), and a predealt spot
card is one spot card fewer to deal that seat.  Nothing else changes, since
the features weigh a suit's ace like any other.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from math import factorial, prod

import numpy as np

from .cards import card
from .constraints.compile import Compiled, evaluate3, goes_out_of_pack
from .fill import deal_open
from .randomness import Rng

#: Largest number of combos listed (tracked ranks x seats); past it, not applicable.
MAX_COMBOS = 3_000_000
_OPEN = 255


def applicable(comp: Compiled) -> bool:
    """Whole-hand, suit-blind features only, no patterns (predealt cards may
    be held: see the module doc, but those that a plan takes out of the pack
    stay there)."""
    if comp.patterned or comp.dead or not comp.exact or goes_out_of_pack(comp):
        return False
    for form in comp.forms:
        for t in form.terms:
            if t.fn.kind != "weights" or t.suits != (0, 1, 2, 3):
                return False
    seats = len(comp.rank_seats) + (1 if comp.free else 0)
    n = prod(len(_compositions(seats, size)) for size in _Predealt(comp).open_sizes)
    return 0 < n <= MAX_COMBOS


def read_ranks(comp: Compiled) -> tuple[int, ...]:
    """The ranks the forms weigh, ace first (a suit's tracked ranks, less the
    ranks of the cards predealt in it that no form weighs)."""
    return tuple(sorted({r for f in comp.forms for t in f.terms for r in t.fn.ranks}))


class _Predealt:
    """The predealt cards as a combo sees them: ``honours[i, k]`` cards of
    rank ``ranks[i]`` held by ``comp.rank_seats[k]``, and ``spots[k]`` cards of
    ranks no form weighs."""

    def __init__(self, comp: Compiled) -> None:
        self.ranks = read_ranks(comp)
        seats = comp.rank_seats
        self.honours = np.zeros((len(self.ranks), len(seats)), np.int64)
        self.spots = np.zeros(len(seats), np.int64)
        for (_, rank), seat in comp.forced.items():
            if rank in self.ranks:
                self.honours[self.ranks.index(rank), seats.index(seat)] += 1
            else:
                self.spots[seats.index(seat)] += 1

    @property
    def open_sizes(self) -> tuple[int, ...]:
        """Each read rank's cards that a combo places."""
        return tuple((4 - self.honours.sum(axis=1)).tolist())


def _compositions(parts: int, cards: int = 4) -> np.ndarray:
    """Every way to split ``cards`` cards into ``parts`` ordered counts."""
    rows = [c for c in itertools.product(range(cards + 1), repeat=parts) if sum(c) == cards]
    return np.array(rows, dtype=np.int64).reshape(len(rows), parts)


def combos(parts: int, ranks: int) -> np.ndarray:
    """Every combo of one composition per rank, ``(n, ranks, parts)`` int8:
    how many cards of each rank go to each part, row-major like
    itertools.product (int8: 35**4 combos of four parts' four ranks take
    24 MB, where a list of tuples took hundreds)."""
    return class_combos(parts, (4,) * ranks)


@functools.lru_cache(maxsize=2)
def class_combos(parts: int, sizes: tuple[int, ...]) -> np.ndarray:
    """:func:`combos` for classes of ``sizes`` cards each (a rank's four
    cards, or some of them): ``(n, classes, parts)`` int8, row-major, read
    only.  Kept for the next call: an exact law builds tens of listings of
    the same ranks and seats (0.1 s each, 35**4 combos of four ranks)."""
    comps = [_compositions(parts, size).astype(np.int8) for size in sizes]
    grid = np.indices(tuple(len(c) for c in comps), dtype=np.int32).reshape(len(sizes), -1)
    out = np.empty((grid.shape[1], len(sizes), parts), np.int8)
    for i, c in enumerate(comps):
        out[:, i] = c[grid[i]]
    out.flags.writeable = False
    return out


@dataclass
class _Layout:
    """What :class:`~truedeal.engine.Plan` reads of a listing's layout."""

    free: tuple[int, ...]

    def free_ways(self) -> int:
        n = len(self.free)
        return factorial(13 * n) // factorial(13) ** n


class RankCountListing:
    """The exact listing of a :class:`Compiled` that :func:`applicable` accepts."""

    def __init__(self, comp: Compiled) -> None:
        self.comp = comp
        self.predealt = _Predealt(comp)
        self.ranks = self.predealt.ranks
        self.seats = comp.rank_seats
        self.layout = _Layout(comp.free)
        sizes = self.predealt.open_sizes
        a = class_combos(len(self.seats) + (1 if comp.free else 0), sizes)  # last part: free
        a = a[self._fits(a)].astype(np.int64)
        mult = _multinomials(a, sizes)
        g = self._spot_ways(a)
        keep = np.array([x > 0 for x in g], dtype=bool)
        self.a = a[keep]
        self.e_weight = [int(m) * x for m, x in zip(mult[keep].tolist(), [x for x, k in zip(g, keep) if k])]
        self.total = sum(self.e_weight)
        self.cells = np.zeros((1, 0), np.int64)
        self.cases = int(mult[keep].sum())

    @property
    def deals(self) -> int:
        return self.total * self.layout.free_ways()

    def _held(self, a: np.ndarray) -> np.ndarray:
        """The seats' counts of each read rank, predealt ones included: ``(n, ranks, seats)``."""
        return a[:, :, : len(self.seats)] + self.predealt.honours

    def _fits(self, a: np.ndarray) -> np.ndarray:
        counts = self._held(a).sum(axis=1) + self.predealt.spots
        ok = (counts <= 13).all(axis=1)
        leaves = {}
        for i, atom in enumerate(self.comp.atoms):
            x = self._form_value(a, self.comp.forms[atom.form]) if atom.form is not None else 0
            leaves[("atom", i)] = atom.holds(x, 0).astype(np.int8)
        return ok & (evaluate3(self.comp.tree, leaves, len(a)) == 1)

    def _form_value(self, a: np.ndarray, form) -> np.ndarray:
        held = self._held(a)
        return form_value(form, self.ranks, {seat: held[:, :, i] for i, seat in enumerate(self.seats)})

    def _spot_ways(self, a: np.ndarray) -> list[int]:
        need = 13 - self._held(a).sum(axis=1) - self.predealt.spots
        spots = 52 - 4 * len(self.ranks) - int(self.predealt.spots.sum())
        return spot_ways(np.insert(need, 0, spots, axis=1), bool(self.comp.free))

    def make_sampler(self) -> RankCountSampler:
        return RankCountSampler(self)


def form_value(form, ranks: tuple[int, ...], held: dict[int, np.ndarray]) -> np.ndarray:
    """A suit-blind form's value per row, from each seat's ``held[seat]``:
    (n, ranks) counts of the tracked ranks."""
    out = np.zeros(len(next(iter(held.values()))), np.int64)
    for t in form.terms:
        w = np.array([t.fn.weights[r] for r in ranks], dtype=np.int64)
        v = held[t.seat] @ w
        out += t.coef * (sum(t.fn.weights) * 4 - v if t.complement else v)
    return out


def part_room(seats: int, free: tuple[int, ...]) -> np.ndarray:
    """The cards each part of a combo may hold: 13 for each of ``seats``
    seats, then 13 for each free seat, as one last part when there are any
    (two free seats hold 26: capped at 13, a combo leaving them 14 honours
    was dropped, and its deals with it)."""
    return np.array([13] * seats + ([13 * len(free)] if free else []), np.int64)


def spot_ways(rows: np.ndarray, free: bool) -> list[int]:
    """Ways to deal ``rows[:, 0]`` spot cards, per row: seat k takes
    ``rows[:, k + 1]``, the unconstrained seats the rest (none may be left
    over without them)."""
    keys, inv = np.unique(rows, axis=0, return_inverse=True)
    ways = []
    for spots, *row in keys.tolist():
        u = spots - sum(row)
        if min(row, default=0) < 0 or u < 0 or (u and not free):
            ways.append(0)
            continue
        g = factorial(spots) // factorial(u)
        for x in row:
            g //= factorial(x)
        ways.append(g)
    return [ways[i] for i in inv.reshape(-1).tolist()]


def deal_ranks_and_spots(owners: np.ndarray, rng: Rng, ranks: tuple[int, ...], counts: np.ndarray, seats: tuple[int, ...],
                         free: tuple[int, ...]) -> None:
    """Finish deals whose open cards go by rank counts: ``counts[:, i, k]``
    open cards of rank ``ranks[i]`` to ``seats[k]`` (suits by a uniform
    permutation), then each seat's open spot cards up to 13, then the free
    seats share what is left.  Every completion is equally likely."""
    deal_classes_and_spots(owners, rng, tuple(tuple(card(r, s) for s in range(4)) for r in ranks), counts, seats, free)


def deal_classes_and_spots(owners: np.ndarray, rng: Rng, classes: tuple[tuple[int, ...], ...], counts: np.ndarray,
                           seats: tuple[int, ...], free: tuple[int, ...], held: np.ndarray | None = None) -> None:
    """:func:`deal_ranks_and_spots` by classes of cards (each the cards that
    the seats' features weigh alike): ``counts[:, i, k]`` open cards of
    ``classes[i]`` to ``seats[k]``; the open cards of no class are the spot
    cards.  ``held[k]``: cards ``seats[k]`` holds already (predealt)."""
    dest = np.array(seats, np.uint8)
    arrays, spots = _class_arrays(classes)
    for i, cards in enumerate(arrays):
        deal_open(owners, rng, cards, counts[:, i], dest)
    room = 13 - counts.sum(axis=1) - (0 if held is None else held)  # the seats hold only their tracked cards so far
    deal_open(owners, rng, spots, room, dest)
    deal_free_seats(owners, rng, free)


def deal_free_seats(owners: np.ndarray, rng: Rng, free: tuple[int, ...]) -> None:
    """The open cards left, 13 to each unconstrained seat of ``free`` (uniformly)."""
    if len(free) > 1:
        deal_open(owners, rng, np.arange(52), np.full((len(owners), len(free) - 1), 13, np.int64), np.array(free[:-1], np.uint8))
    if free:
        owners[owners == _OPEN] = free[-1]


@functools.lru_cache(maxsize=16)
def _class_arrays(classes: tuple[tuple[int, ...], ...]) -> tuple[list[np.ndarray], np.ndarray]:
    """Each class's cards, and the cards of none (the spot cards), as arrays (made once per pool)."""
    held = {c for cards in classes for c in cards}
    spots = np.array([card(r, s) for r in range(13) for s in range(4) if card(r, s) not in held], dtype=np.int64)
    return [np.array(cards, np.int64) for cards in classes], spots


def _multinomials(a: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    """``prod over ranks of n! / prod(a!)`` per combo, ``n`` the rank's open
    cards of ``sizes`` (at most 24**5: int64)."""
    fact = np.array([1, 1, 2, 6, 24], dtype=np.int64)
    return (fact[np.array(sizes, np.int64)] // fact[a].prod(axis=2)).prod(axis=1)


class RankCountSampler:
    """Uniform deals from a :class:`RankCountListing`."""

    def __init__(self, listing: RankCountListing) -> None:
        from .sampling import WideCategorical

        self.listing = listing
        self.pick = WideCategorical(listing.e_weight)

    def draw(self, n: int, rng: Rng) -> np.ndarray:
        L = self.listing
        combo = L.a[self.pick.draw(n, rng)]  # (n, ranks, parts)
        owners = np.full((n, 52), _OPEN, dtype=np.uint8)
        for (suit, rank), seat in L.comp.forced.items():
            owners[:, card(rank, suit)] = seat
        classes = tuple(tuple(card(r, s) for s in range(4) if (s, r) not in L.comp.forced) for r in L.ranks)
        held = L.predealt.honours.sum(axis=0) + L.predealt.spots
        deal_classes_and_spots(owners, rng, classes, combo[:, :, : len(L.seats)], L.seats, L.comp.free, held)
        return owners
