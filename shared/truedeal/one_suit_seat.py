"""A seat read only by its length in one suit, beside a seat nothing reads.

"North and South have 8+ spades, East has 5+ hearts": East is read only by
its hearts and West by nothing.  Once North and South are dealt, East and
West share the other 26 cards, ``H`` of them hearts (13 less North's and
South's), and East's hands with ``k`` hearts number ``C(H, k) C(26 - H,
13 - k)``.  So the spec is the listing of the other seats, East and West
left free, split by North's and South's hearts ``m``: branch ``m`` weighs
each of its North-South deals by ``g(13 - m)``, the sum of those numbers
over the ``k`` East allows.  A draw picks a branch by its weight, a deal
from its listing, then East's heart count ``k`` in proportion to ``C(H, k)
C(26 - H, 13 - k)`` over the allowed ``k``, and East's hearts and other
cards uniformly (West takes the rest): every deal that fits is equally
likely, and none is drawn in vain.  Three patterned seats whose cells are
too many to list (two seats free in shape but for a fit) become listings
of two.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from math import comb

import numpy as np

from .cards import SEAT_NAMES, SUIT_NAMES, card
from .constraints import ir
from .constraints.evaluate import evaluate_cond
from .fill import OPEN, deal_open
from .randomness import Rng
from .sampling import WideCategorical
from .union import Union

#: Ways for East and West to share their 26 cards when nothing reads them.
FREE_PAIR = comb(26, 13)


@dataclass(frozen=True)
class OneSuitSeat:
    """How ``program`` splits: ``seat`` is read only by its length in
    ``suit``, ``partner`` by nothing or by its length in that suit alone,
    and ``rest`` reads neither."""

    seat: int
    partner: int
    suit: int
    allowed: tuple[bool, ...]  # per length 0..13 of the seat in the suit
    partner_allowed: tuple[bool, ...]  # the same of the partner
    rest: ir.Program

    @property
    def others(self) -> tuple[int, ...]:
        return tuple(s for s in range(4) if s not in (self.seat, self.partner))

    def ways(self, left: int) -> list[int]:
        """Per length k of the seat in the suit, its hands of k cards of the
        suit out of the ``left`` the other seats leave (0 where it, or the
        partner's ``left - k``, is not allowed)."""
        return [comb(left, k) * comb(26 - left, 13 - k) if ok and k <= left and self.partner_allowed[left - k] else 0
                for k, ok in enumerate(self.allowed)]

    def branch(self, m: int) -> ir.Program:
        """``rest`` with the other two seats holding ``m`` cards of the suit."""
        held = ir.Linear(tuple((1, ir.Feature(s, (self.suit,), ir.LENGTH)) for s in self.others))
        return replace(self.rest, condition=ir.And((self.rest.condition, ir.Compare("==", held, ir.Linear((), m)))))


def one_suit_seat(program: ir.Program) -> OneSuitSeat | None:
    """The split of ``program`` (see the module doc), or None where no seat is
    read by one suit's length alone beside a seat read by nothing else (and
    neither holds predealt cards)."""
    if ir.opaque_names(program.condition):
        return None
    items = ir.conjuncts(program.condition)
    held = {seat for seat, cards in program.predeal if cards}
    by_seat = [_length_items(items, seat) for seat in range(4)]
    for seat, (mine, suit) in enumerate(by_seat):
        for partner, (theirs, their_suit) in enumerate(by_seat):
            if theirs and their_suit != suit:
                theirs = []
            rest = [i for i in items if not any(i is j for j in mine + theirs)]
            read = set().union(*(_seats(i) for i in rest)) if rest else set()
            if not mine or partner == seat or {seat, partner} & (read | held):
                continue
            return OneSuitSeat(seat, partner, suit, _allowed(mine, seat, suit), _allowed(theirs, partner, suit),
                               replace(program, condition=ir.And(tuple(rest))))
    return None


def _length_items(items: list[ir.Cond], seat: int) -> tuple[list[ir.Cond], int]:
    """The items that read ``seat``'s length in one suit and nothing else, and
    that suit (([], -1) when they read two suits or there are none)."""
    mine = [i for i in items if _reads(i) == {(seat, "length")}]
    suits = {f.suits for i in mine for f in ir.nodes(i) if isinstance(f, ir.Feature)}
    return (mine, next(iter(suits))[0]) if len(suits) == 1 else ([], -1)


def _allowed(items: list[ir.Cond], seat: int, suit: int) -> tuple[bool, ...]:
    """Per length 0..13 of ``seat`` in ``suit``, whether ``items`` hold."""
    return tuple(bool(x) for x in evaluate_cond(_holding(seat, suit), ir.And(tuple(items))))


def _reads(item: ir.Cond) -> set[tuple[int, str]]:
    """What ``item`` reads: (seat, "length") for a one-suit length, (seat, "other") for anything else."""
    out: set[tuple[int, str]] = set()
    for x in ir.nodes(item):
        if isinstance(x, ir.Feature):
            one_length = x.fn.kind == "length" and len(x.suits) == 1
            out.add((x.seat, "length" if one_length else "other"))
        elif isinstance(x, ir.ShapeIn):
            out.add((x.seat, "other"))
    return out


def _seats(item: ir.Cond) -> set[int]:
    return {seat for seat, _ in _reads(item)}


def _holding(seat: int, suit: int) -> np.ndarray:
    """Fourteen deals, ``seat`` holding 0..13 cards of ``suit`` (owners rows)."""
    rows = np.zeros((14, 52), np.uint8)
    for k in range(14):
        mine = [card(r, suit) for r in range(k)] + [c for c in range(52) if c % 4 != suit][: 13 - k]
        rest = [c for c in range(52) if c not in mine]
        rows[k, mine] = seat
        others = [s for s in range(4) if s != seat]
        for j, c in enumerate(rest):
            rows[k, c] = others[j // 13]
    return rows


class OneSuitSeatUnion(Union):
    """The branches of a :class:`OneSuitSeat` split (each an exact plan of the
    other seats, the seat and its partner free), weighed and drawn as the
    module doc says.  Disjoint: nothing is checked."""

    def __init__(self, split: OneSuitSeat, plans: list, held: list[int]) -> None:
        """``plans[i]``: the branch where the other two seats hold ``held[i]`` cards of the suit."""
        super().__init__(plans, [ir.TRUE] * len(plans), None)
        self.split, self.held = split, held
        if any(p.deals_total % FREE_PAIR for p in plans):
            raise ValueError("a branch does not leave the seat and its partner free")
        self.branch_deals = [p.deals_total // FREE_PAIR * sum(split.ways(13 - m)) for p, m in zip(plans, held)]
        self.listed = self.deals = sum(self.branch_deals)
        self.pick = WideCategorical(self.branch_deals) if self.listed else None
        self.length_picks = [WideCategorical(split.ways(13 - m)) for m in held]  # the seat's length, per branch
        self.suit_cards = np.array([card(r, split.suit) for r in range(13)], np.int64)
        self.other_cards = np.array([c for c in range(52) if c % 4 != split.suit], np.int64)

    @property
    def disjoint(self) -> bool:
        return True

    @property
    def draws_together(self) -> bool:
        return False

    @property
    def method(self) -> str:
        s = self.split
        read = (f"{SEAT_NAMES[s.seat]} read by its {SUIT_NAMES[s.suit]} alone beside {SEAT_NAMES[s.partner]}" if all(s.partner_allowed)
                else f"{SEAT_NAMES[s.seat]} and {SEAT_NAMES[s.partner]} read by their {SUIT_NAMES[s.suit]} alone")
        return (f"exact: {read}, "
                f"split by the {SUIT_NAMES[s.suit]} of {' and '.join(SEAT_NAMES[o] for o in s.others)} into "
                f"{len(self.plans)} exact listings, {SEAT_NAMES[s.seat]}'s hand weighed, no rejection")

    def draw(self, n: int, rng: Rng) -> np.ndarray:
        from .errors import Impossible

        if self.pick is None:
            raise Impossible("no deal satisfies this spec (it counts 0 deals)")
        which = self.pick.draw(n, rng)
        owners = np.empty((n, 52), np.uint8)
        for i, plan in enumerate(self.plans):
            rows = np.nonzero(which == i)[0]
            if len(rows):
                owners[rows] = self._dealt(plan._draw(len(rows), rng), self.length_picks[i], rng)
        return owners

    def _dealt(self, owners: np.ndarray, length: WideCategorical, rng: Rng) -> np.ndarray:
        """``owners`` with the seat's and its partner's cards dealt again: the
        seat's count of the suit by its ways (``length``), then its cards uniformly."""
        s = self.split
        owners[(owners == s.seat) | (owners == s.partner)] = OPEN
        k = length.draw(len(owners), rng).astype(np.int64)
        dest = np.array([s.seat], np.uint8)
        deal_open(owners, rng, self.suit_cards, k[:, None], dest)
        deal_open(owners, rng, self.other_cards, 13 - k[:, None], dest)
        owners[owners == OPEN] = s.partner
        return owners
