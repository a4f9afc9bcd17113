"""Placements of coin cards in classes that count the same deals.

A split by who holds k coin cards (:mod:`.card_owner`) lists 4**k programs.
Many of them count the same deals.  Take two placements whose ``hascard``
fold to the same condition, and where every seat holds as many coins in both,
of the same suits wherever the seat's lengths are read.  Move each coin of
the first onto a coin of the second held by the same seat, same suit where
that matters: that permutation of the cards keeps every seat's honours (no
feature reads a coin's rank) and every length that is read, so it carries
the deals of the first onto the deals of the second, one to one.

So a class is listed once, for its first placement, and weighs its size
times that listing's deals; a draw from it picks a member uniformly (a
member is one more outcome of the plan's categorical draw) and moves the
drawn deal's coins onto it.  The five coin cards of tests/scripts/60, 1,024
placements, make 77 classes.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from math import factorial

import numpy as np

from . import ir
from .card_owner import placed_program, single_card
from .compile import Compiled, compile_program

#: Most cards a split folds into classes: 4**6 placements to sort.
MAX_CLASSED_CARDS = 6


@dataclass(frozen=True)
class PlacementClass:
    """Placements of the coins that count the same deals.

    ``program`` is the first member's (its coins predealt, their ``hascard``
    folded); ``moves[j]`` maps each card of a deal of the first member to
    its place in the same deal moved onto member j (row 0 is the identity)."""

    program: ir.Program
    moves: np.ndarray  # (members, 52) card -> card

    @property
    def size(self) -> int:
        return len(self.moves)


def classable(program: ir.Program) -> bool:
    """Whether placements of ``program``'s coins may be classed: not when it
    reads a deal whole (``tricks``, ``rnd``: no permutation keeps those)."""
    return not ir.opaque_names(program.condition)


def placement_classes(program: ir.Program, cards: tuple[int, ...]) -> list[PlacementClass]:
    """The placements of ``cards`` grouped into classes of equal count, first
    seen first (``program`` must be :func:`classable`)."""
    classes: dict[tuple[Hashable, tuple], list[tuple[tuple[int, ...], ir.Program]]] = {}
    for owners, placed, meaning, holdings in _placements(program, cards):
        classes.setdefault((meaning, holdings), []).append((owners, placed))
    return [PlacementClass(members[0][1], _moves(cards, [o for o, _ in members], holdings=key[1]))
            for key, members in classes.items()]


@dataclass(frozen=True)
class MergedClass:
    """Placements that count alike but for how the free seats share their
    coins (:func:`merged_classes`).

    ``program`` is the first member's; member j holds the coins as
    ``members[j]`` says and counts ``ratios[j]`` times the first's deals;
    ``moves[j]`` carries a deal of the first onto member j's coins seat by
    seat, the free seats taken together (their cards are then dealt again
    among them, :mod:`truedeal.class_split`)."""

    program: ir.Program
    members: tuple[tuple[int, ...], ...]  # each member's owner of each coin
    ratios: tuple[Fraction, ...]
    moves: np.ndarray  # (members, 52) card -> card
    free: frozenset[int]

    @property
    def weight(self) -> Fraction:
        """The class's deals over its first member's."""
        return sum(self.ratios, Fraction(0))


def merged_classes(program: ir.Program, cards: tuple[int, ...]) -> list[MergedClass]:
    """:func:`placement_classes`, merged further: placements that differ only
    in how the seats that nothing else reads (free seats) share their coins
    fall in one class.  Those seats are dealt from one pool, so given the
    other seats' hands a placement's deals are the first's times the ratio
    of the ways to deal that pool (prod (13 - coins)! over the free seats,
    the first's over its own), and a deal of the first becomes a uniform
    deal of another by moving its coins and dealing the free seats' cards
    again among them.  About half as many listings: tests/scripts/66's 48
    classes merge into 27."""
    free = _free_seats(program, cards)
    classes: dict[tuple[Hashable, tuple], list[tuple[tuple[int, ...], ir.Program]]] = {}
    for owners, placed, meaning, holdings in _placements(program, cards):
        key = (meaning, tuple(h if s not in free else (0, ()) for s, h in enumerate(holdings)))
        classes.setdefault(key, []).append((owners, placed))
    return [_merged(cards, members, key[1], free) for key, members in classes.items()]


def _merged(cards: tuple[int, ...], members: list[tuple[tuple[int, ...], ir.Program]], holdings: tuple,
            free: frozenset[int]) -> MergedClass:
    """One :class:`MergedClass` of ``members`` (owners, placed program), first first."""
    owners = [o for o, _ in members]
    group = min(free, default=0)  # the free seats move their coins as one seat
    grouped = [tuple(group if s in free else s for s in o) for o in owners]
    return MergedClass(members[0][1], tuple(owners), tuple(_pool_ratio(owners[0], o, free) for o in owners),
                       _moves(cards, grouped, holdings), free)


def _placements(program: ir.Program, cards: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], ir.Program, Hashable, tuple]]:
    """Every placement of ``cards``: (owners, program placed and pruned, what
    it asks spelled out, each seat's coins as :func:`_holdings` counts them)."""
    reads = _coin_reads(program, cards)
    readings: dict[tuple[bool, ...], tuple[Hashable, frozenset[int]]] = {}
    for owners in itertools.product(range(4), repeat=len(cards)):
        placed = placed_program(program, cards, owners, pruned=True)
        if placed is None:
            continue
        bits = tuple(owners[i] == seat for i, seat in reads)
        if bits not in readings:
            readings[bits] = _reading(compile_program(placed))
        meaning, patterned = readings[bits]
        yield owners, placed, meaning, _holdings(cards, owners, patterned)


def _free_seats(program: ir.Program, cards: tuple[int, ...]) -> frozenset[int]:
    """Seats that nothing reads but the ``hascard`` of coins, with no predealt card."""
    read = {s for s, _ in program.predeal}
    for n in ir.nodes(program.condition):
        if isinstance(n, ir.ShapeIn) or (isinstance(n, ir.Feature) and single_card(n) not in cards):
            read.add(n.seat)
    return frozenset(range(4)) - read


def _pool_ratio(first: tuple[int, ...], other: tuple[int, ...], free: frozenset[int]) -> Fraction:
    """Deals of placement ``other`` over those of ``first``, alike but for the free seats' shares."""
    ratio = Fraction(1)
    for s in free:
        ratio *= Fraction(factorial(13 - first.count(s)), factorial(13 - other.count(s)))
    return ratio


def _coin_reads(program: ir.Program, cards: tuple[int, ...]) -> list[tuple[int, int]]:
    """(index of the card in ``cards``, seat) for every ``hascard`` of a coin."""
    found = {(single_card(f), f.seat) for f in ir.nodes(program.condition) if isinstance(f, ir.Feature)}
    return sorted((cards.index(c), seat) for c, seat in found if c in cards)


def _reading(comp: Compiled) -> tuple[Hashable, frozenset[int]]:
    """What a compiled program asks, spelled out leaf by leaf (equal for equal
    conditions however their constants were folded), and its patterned seats."""
    memo: dict[int, Hashable] = {}

    def walk(t: tuple) -> Hashable:
        hit = memo.get(id(t))
        if hit is None:
            hit = memo[id(t)] = _spelled(comp, t, walk)
        return hit

    return walk(comp.tree), frozenset(comp.patterned)


def _spelled(comp: Compiled, t: tuple, walk) -> Hashable:
    if t[0] in ("and", "or"):
        return t[0], tuple(walk(x) for x in t[1])
    if t[0] == "not":
        return "not", walk(t[1])
    if t[0] == "atom":
        a = comp.atoms[t[1]]
        return "atom", None if a.form is None else comp.forms[a.form].terms, a.lengths, a.const, a.op
    if t[0] == "shape":
        return "shape", comp.shapes[t[1]]
    return t


def _holdings(cards: tuple[int, ...], owners: tuple[int, ...], patterned: frozenset[int]) -> tuple:
    """Per seat: how many coins it holds, and their suits where its lengths are read."""
    return tuple((sum(o == s for o in owners), tuple(sorted(c % 4 for c, o in zip(cards, owners) if o == s)) if s in patterned else ())
                 for s in range(4))


def _moves(cards: tuple[int, ...], members: list[tuple[int, ...]], holdings: tuple) -> np.ndarray:
    """Row j: the permutation of the 52 cards that moves the first member's
    coins onto member j's, seat by seat, suit onto suit where suits matter
    (``holdings``: the class's :func:`_holdings`)."""
    moves = np.tile(np.arange(52, dtype=np.intp), (len(members), 1))
    first = _by_seat(cards, members[0], holdings)
    for j, owners in enumerate(members[1:], 1):
        for seat, held in enumerate(_by_seat(cards, owners, holdings)):
            moves[j, first[seat]] = held
    return moves


def _by_seat(cards: tuple[int, ...], owners: tuple[int, ...], holdings: tuple) -> list[list[int]]:
    """Each seat's coins, ordered by suit where the class fixes their suits, else by card."""
    seats: list[list[int]] = [[] for _ in range(4)]
    for c, o in sorted(zip(cards, owners), key=lambda co: (co[0] % 4 if holdings[co[1]][1] else 0, co[0])):
        seats[o].append(c)
    return seats
