"""Splitting a program by who holds a few named cards.

Scripts "level" their hand types with coin flips made of spot cards:
``hascard(west, 2C) ? hcp(north) : hcp(south)``.  Tracking the deuce would
make every suit's holdings track the deuce too, which is too wide to list.
But the deals where a card sits with a given seat are exactly the deals with
that card predealt to that seat, and there each ``hascard`` of it is a
constant.  So the program is the disjoint union of at most four programs per
card, each with the card predealt and its ``hascard`` folded away: each is
listed exactly, and together they count and deal the whole exactly.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from dataclasses import replace

from ..cards import card
from . import fold, ir
from .rewrite import Rewriter

#: Most cards to split on: 4**4 programs to list.
MAX_SPLIT_CARDS = 4
#: Splits on up to this many cards list each placement as any program (their
#: deals are published).  Past it, each placement puts its dead cards (coins
#: with a seat nothing else reads) out of the pack, a narrower listing: the
#: three-coin ladder (tests/scripts/59) lists its 64 placements in 3 s, not 31.
PLAIN_SPLIT_CARDS = 2
#: Most level-0 entries the placements of a split may list together.  A
#: deterministic bound (a plan must not depend on the machine's speed).
MAX_SPLIT_ENTRIES = 2_000_000
#: Most boxes their signatures may test together (``Listing.grid_points``),
#: a second deterministic bound: about 4 us a box.  The library's 1NT
#: opener, leveled by four coins, tests 76,000 boxes a placement (a
#: notrump-point definition that cuts South's points many ways): its 249
#: placements took 3 minutes, and are left to rejection (71% kept, a plan of
#: seconds).  Its NT ladder tests 6 a placement: 256 listings in 1.2 s.
MAX_SPLIT_BOXES = 1_000_000


def single_card(feature: ir.Feature) -> int | None:
    """The card that ``feature`` reads alone (``hascard``), else None."""
    fn = feature.fn
    if fn.kind != "weights" or len(feature.suits) != 1:
        return None
    ranks = [r for r, w in enumerate(fn.weights) if w]
    return card(ranks[0], feature.suits[0]) if len(ranks) == 1 else None


def split_cards(program: ir.Program, most: int = MAX_SPLIT_CARDS) -> tuple[int, ...]:
    """The cards worth splitting ``program`` on, first seen first: read one at
    a time, of a rank that no other feature reads (an ace that HCP tracks
    anyway costs the listing nothing), and not predealt; () when there are
    none or more than ``most``."""
    predealt = {c for _, cards in program.predeal for c in cards}
    features = [x for x in ir.nodes(program.condition) if isinstance(x, ir.Feature)]
    singles = {f: single_card(f) for f in features}
    tracked = {r for f, c in singles.items() if c is None for r in f.fn.ranks}
    found = dict.fromkeys(c for c in singles.values() if c is not None and c not in predealt and c // 4 not in tracked)
    return tuple(found) if len(found) <= most else ()


def placements(program: ir.Program, cards: tuple[int, ...], pruned: bool = False) -> Iterator[ir.Program]:
    """``program`` given the owners of ``cards`` (predealt, their ``hascard``
    folded), for every placement that leaves each seat at most 13 predealt
    cards (``pruned``: see :func:`placed_program`)."""
    for owners in itertools.product(range(4), repeat=len(cards)):
        placed = placed_program(program, cards, owners, pruned)
        if placed is not None:
            yield placed


def placed_program(program: ir.Program, cards: tuple[int, ...], owners: tuple[int, ...],
                   pruned: bool = False) -> ir.Program | None:
    """``program`` with ``cards[i]`` predealt to seat ``owners[i]`` and their
    ``hascard`` folded, or None when a seat would hold more than 13 cards.
    ``pruned``: the branches and comparisons that the placement decides are
    folded away too, so that the listing does not read what they read (the
    plain splits keep them: their deals are published)."""
    predeal = {seat: list(cs) for seat, cs in program.predeal}
    for c, seat in zip(cards, owners):
        predeal.setdefault(seat, []).append(c)
    if any(len(cs) > 13 for cs in predeal.values()):
        return None
    placed = (_Pruned if pruned else _Placed)(dict(zip(cards, owners)))
    return ir.Program(condition=placed.cond(program.condition),
                      predeal=tuple((s, tuple(sorted(cs))) for s, cs in sorted(predeal.items())))


def predeal_folded(program: ir.Program) -> ir.Program:
    """``program`` with each ``hascard`` of a predealt card folded, and what
    that decides (``hascard(west, 2H) ? ... : ...`` with the deuce predealt
    to East is its second branch): the same deals, and nothing left to
    list that the predeal already says."""
    owners = {c: seat for seat, cards in program.predeal for c in cards}
    return replace(program, condition=_Pruned(owners).cond(program.condition)) if owners else program


def has_card(seat: int, c: int) -> ir.Cond:
    """``hascard(seat, c)``."""
    return ir.Compare("==", ir.Linear(((1, ir.Feature(seat, (c % 4,), ir.one_rank(c // 4))),)), ir.Linear((), 1))


def predeal_asked(program: ir.Program, seats: set[int]) -> ir.Program:
    """``program`` with the cards predealt to ``seats`` asked of the deal
    (``hascard``) instead: the same deals.  A seat's predealt card is a
    coordinate of its holdings, which keeps a rank pool from listing it;
    asked, the card is a class of its own there (one card, weighed apart)."""
    asked = [has_card(seat, c) for seat, cards in program.predeal if seat in seats for c in cards]
    kept = tuple((seat, cards) for seat, cards in program.predeal if seat not in seats)
    return replace(program, condition=ir.And((program.condition, *asked)), predeal=kept)


class _Placed(Rewriter):
    """A condition with each ``hascard`` of a placed card made a constant."""

    def __init__(self, owners: dict[int, int]) -> None:
        super().__init__()
        self.owners = owners

    def _linear(self, lin: ir.Linear) -> ir.Linear:
        terms, const = [], lin.const
        for coef, feature in lin.terms:
            c = single_card(feature)
            if c in self.owners:
                const += coef * sum(feature.fn.weights) * (self.owners[c] == feature.seat)
            else:
                terms.append((coef, feature))
        return ir.Linear(tuple(terms), const)


class _Pruned(_Placed):
    """:class:`_Placed`, with what the placed cards decide folded away:
    constant comparisons, and the branches of ``?:`` and ``&&``/``||`` that
    can no longer matter."""

    def _cond(self, c: ir.Cond) -> ir.Cond:
        if isinstance(c, ir.Compare):
            return fold.compare(c.op, self.num(c.left), self.num(c.right))
        if isinstance(c, (ir.And, ir.Or)):
            empty: ir.Cond = ir.Truth(isinstance(c, ir.And))  # an empty And holds, an empty Or does not
            return functools.reduce(fold.and_ if isinstance(c, ir.And) else fold.or_, (self.cond(i) for i in c.items), empty)
        if isinstance(c, ir.Not):
            return fold.not_(self.cond(c.item))
        return c

    def _num(self, x: ir.Num) -> ir.Num:
        if isinstance(x, ir.IfElse):
            cond = self.cond(x.cond)
            if isinstance(cond, ir.Truth):
                return self.num(x.then if cond.value else x.other)
            return ir.IfElse(cond, self.num(x.then), self.num(x.other))
        return super()._num(x)
