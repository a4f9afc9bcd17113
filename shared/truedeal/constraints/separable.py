"""Sums of per-suit pieces, read as one feature.

Scripts adjust their points suit by suit: notrump points take one off for
each doubleton honour without the ace, total points add for shortness.
``hcp(south) - (spades(south) == 2 && top4(south, spades) == 1 && ...)`` is no
linear sum of features, so the listing would cut it into one case per way
the adjustments fall (16 for four suits), each cutting South's grid of boxes
again.  But every piece reads one seat's holding in one suit, so the whole
is a sum over suits of one function of each holding: a feature like HCP,
of a ``table`` function (:class:`ir.LocalFn`), one coordinate of the listing.

:func:`separated` rewrites every such number of a program that way, and
in a sum that some summand makes inseparable (3 for a void anywhere: a
shape) adds up the separable summands as one linear sum.  The deals are the
same; the listing, and so a seed's deals, differ: a plan rewrites a program
only when its plain listing is too wide.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from . import describe, ir
from .card_owner import single_card, split_cards
from .evaluate import evaluate_num
from .rewrite import Rewriter

Holding = tuple[int, int]  # (seat, suit)
#: A number as a constant plus pieces, each reading one holding.
Pieces = tuple[int, dict[Holding, list[tuple[int, ir.Num]]]]
#: Most ranks a table reads: 14 lengths times 2**8 masks.
MAX_TABLE_RANKS = 8


def separated(program: ir.Program) -> ir.Program:
    """``program`` with each number that is a sum of per-holding pieces, one
    of them not linear, made a linear sum of ``table`` features."""
    rewriter = _Separator(frozenset(split_cards(program, most=52)))
    condition = rewriter.cond(program.condition)
    if not rewriter.changed:
        return program
    return ir.Program(condition, program.predeal, program.produce, program.generate, program.dealer,
                      program.vulnerable, program.actions)


class _Separator(Rewriter):
    """Rewrites a condition's numbers that sum per-holding pieces."""

    def __init__(self, coins: frozenset[int]) -> None:
        super().__init__()
        self.coins = coins
        self.pieces_memo: dict[int, tuple[Any, Pieces | None]] = {}
        self.changed = False

    def _num(self, x: ir.Num) -> ir.Num:
        pieces = None if isinstance(x, (ir.Linear, ir.OpaqueNum)) else self.pieces(x)
        if pieces is not None:
            self.changed = True
            return _as_linear(pieces)
        if isinstance(x, ir.Arith) and x.op in ("+", "-"):
            return self._sum(x)
        return super()._num(x)

    def _sum(self, x: ir.Arith) -> ir.Num:
        """A sum that is not separable whole (a shape's points in it, say): its
        separable summands added up as one linear sum, the others kept apart.
        Made features one by one, the summands would each add a form to the
        listing: the library's Major Opener, 0.9 s by rejection, took 142 s
        and 9 GB when its four short-honour deductions did."""
        summands = _summands(x, 1)
        separable = [(sign, p) for sign, node in summands if (p := self.pieces(node)) is not None]
        if all(isinstance(n, ir.Linear) for _, p in separable for q in p[1].values() for _, n in q):
            return ir.Arith(x.op, self.num(x.left), self.num(x.right))
        self.changed = True
        total: Pieces = (0, {})
        for sign, p in separable:
            total = _added(total, p, sign)
        out: ir.Num = _as_linear(total)
        for sign, node in summands:
            if self.pieces(node) is None:
                out = ir.Arith("+" if sign > 0 else "-", out, self.num(node))
        return out

    def pieces(self, x: ir.Num) -> Pieces | None:
        """``x`` as a constant plus per-holding pieces, or None when some part
        of it reads more than one holding at once (or a whole deal)."""
        hit = self.pieces_memo.get(id(x))
        if hit is None:
            hit = self.pieces_memo[id(x)] = (x, self._pieces(x))
        return hit[1]

    def _pieces(self, x: ir.Num) -> Pieces | None:
        if isinstance(x, ir.Linear):
            return _linear_pieces(x)
        holding = _holding(x, self.coins)
        if holding is not None:
            return 0, {holding: [(1, x)]}
        if not isinstance(x, ir.Arith):
            return None
        left, right = self.pieces(x.left), self.pieces(x.right)
        if left is None or right is None:
            return None
        if x.op in ("+", "-"):
            return _added(left, right, 1 if x.op == "+" else -1)
        if x.op == "*" and (not left[1] or not right[1]):
            return _scaled(right, left[0]) if not left[1] else _scaled(left, right[0])
        return None


def _summands(x: ir.Num, sign: int) -> list[tuple[int, ir.Num]]:
    """``x`` as signed summands, nested sums and differences flattened."""
    if isinstance(x, ir.Arith) and x.op in ("+", "-"):
        return _summands(x.left, sign) + _summands(x.right, sign if x.op == "+" else -sign)
    return [(sign, x)]


def _linear_pieces(lin: ir.Linear) -> Pieces:
    pieces: dict[Holding, list[tuple[int, ir.Num]]] = defaultdict(list)
    for coef, f in lin.terms:
        for s in f.suits:
            pieces[f.seat, s].append((coef, ir.Linear(((1, ir.Feature(f.seat, (s,), f.fn)),))))
    return lin.const, dict(pieces)


def _added(a: Pieces, b: Pieces, sign: int) -> Pieces:
    pieces = {h: list(p) for h, p in a[1].items()}
    for h, p in b[1].items():
        pieces.setdefault(h, []).extend((sign * c, x) for c, x in p)
    return a[0] + sign * b[0], pieces


def _scaled(a: Pieces, k: int) -> Pieces:
    return k * a[0], {h: [(k * c, x) for c, x in p] for h, p in a[1].items()}


def _holding(x: ir.Num, coins: frozenset[int]) -> Holding | None:
    """The one holding that all of ``x`` reads, if it reads one (and no
    pattern, no whole deal, no coin card: a plan splits on those, where a
    table would track their rank in every suit) and no more than
    :data:`MAX_TABLE_RANKS` of its ranks."""
    found: set[Holding] = set()
    ranks: set[int] = set()
    for n in ir.nodes(x):
        if isinstance(n, (ir.ShapeIn, ir.OpaqueNum)):
            return None
        if isinstance(n, ir.Feature):
            if len(n.suits) != 1 or single_card(n) in coins:
                return None
            found.add((n.seat, n.suits[0]))
            ranks |= n.fn.ranks
    return found.pop() if len(found) == 1 and len(ranks) <= MAX_TABLE_RANKS else None


def _as_linear(pieces: Pieces) -> ir.Linear:
    """The pieces as a linear sum: a holding whose pieces are all linear
    keeps its features, the others become one ``table`` feature each."""
    const, by_holding = pieces
    terms: list[tuple[int, ir.Feature]] = []
    for (seat, suit), p in by_holding.items():
        if all(isinstance(x, ir.Linear) for _, x in p):
            terms += [(c * c2, f) for c, x in p for c2, f in x.terms]  # type: ignore[union-attr]
        else:
            fn, shift = _table(seat, suit, p)
            terms.append((1, ir.Feature(seat, (suit,), fn)))
            const += shift
    return _merged_linear(const, terms)


def _merged_linear(const: int, terms: list[tuple[int, ir.Feature]]) -> ir.Linear:
    """The terms added up suit by suit, then the suits of a seat that weigh a
    function alike made one feature: ``hcp(south, spades) + hcp(south,
    hearts)`` is ``hcp(south, spades, hearts)``."""
    coef: dict[tuple[int, ir.LocalFn, int], int] = defaultdict(int)
    for c, f in terms:
        for s in f.suits:
            coef[f.seat, f.fn, s] += c
    suits: dict[tuple[int, ir.LocalFn, int], list[int]] = defaultdict(list)
    for (seat, fn, s), c in coef.items():
        if c:
            suits[seat, fn, c].append(s)
    return ir.Linear(tuple((c, ir.Feature(seat, tuple(sorted(ss)), fn)) for (seat, fn, c), ss in suits.items()), const)


def _table(seat: int, suit: int, pieces: list[tuple[int, ir.Num]]) -> tuple[ir.LocalFn, int]:
    """The pieces of one holding as a ``table`` function, shifted to have 0
    as its least value on a real holding, and that shift."""
    ranks = tuple(sorted({r for _, x in pieces for n in ir.nodes(x) if isinstance(n, ir.Feature) for r in n.fn.ranks}))
    owners = _holdings(seat, suit, ranks)
    values = sum((c * evaluate_num(owners, x) for c, x in pieces), np.zeros(len(owners), np.int64))
    values = _spread_to_every_length(values.reshape(14, 1 << len(ranks)), len(ranks))
    shift = int(values.min())
    label = " ".join(f"{'-' if c < 0 else '+'} {'' if abs(c) == 1 else f'{abs(c)}*'}{describe.num(x)}" for c, x in pieces)
    label = label[2:] if label.startswith("+ ") else label
    return ir.LocalFn("table", ranks_read=ranks, table=tuple(int(v) for v in (values - shift).ravel()), label=label), shift


def _holdings(seat: int, suit: int, ranks: tuple[int, ...]) -> np.ndarray:
    """Deals (owners, one row per length and mask of ``ranks``) where ``seat``
    holds in ``suit`` the masked ranks and as many spots as the length
    needs (the lowest first; all it can hold where the length asks more).
    The other cards go to the next seat: only this holding is read."""
    spots = [r for r in range(12, -1, -1) if r not in ranks]
    rows = np.full((14 << len(ranks), 52), (seat + 1) % 4, np.uint8)
    for length in range(14):
        for mask in range(1 << len(ranks)):
            held = [r for i, r in enumerate(ranks) if mask >> i & 1]
            held += spots[: max(0, length - len(held))]
            rows[length << len(ranks) | mask, [4 * r + suit for r in held]] = seat
    return rows


def _spread_to_every_length(values: np.ndarray, k: int) -> np.ndarray:
    """``values[length, mask]`` with each mask's impossible lengths (fewer
    cards than its ranks, or more than its ranks and all spots) given the
    value of its nearest possible one: nothing reads them, and this way
    extremes and "reads the length" see real holdings only."""
    out = values.copy()
    for mask in range(1 << k):
        least = mask.bit_count()
        most = least + 13 - k
        out[:least, mask] = values[least, mask]
        out[most + 1 :, mask] = values[most, mask]
    return out
