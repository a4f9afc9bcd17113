"""Partnership sums read from the other side of the table.

Every card is in one hand, so a point count or a length over some suits
adds up to a constant over the four seats: ``hcp(east) + hcp(west)`` is
``40 - hcp(north) - hcp(south)``, and ``hearts(east) + hearts(west)`` is
``13 - hearts(north) - hearts(south)``.  Where East and West are read only
in such sums, writing those sums on North and South leaves East and West
unconstrained: "both sides have a fit" or "N+S at most 7 losers, E+W 15+
HCP" become listings of two seats instead of four (exact, where they were
dealt by rejection on a seat).  The rewrite is made only where it leaves
fewer seats read or, asked ``by_shape``, as many but fewer of them read by
their shape (each such seat multiplies the listing's pattern tuples: "N+S
8+ spades, North 12+, East 5+ hearts and 8+" has three patterned seats as
written, 11 million tuples, and two read on East and West, with North read
by points alone), and reads no more features (moved onto seats read by
coin cards alone, a sum would make them points seats); the deals are the
same either way.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

from . import ir
from .rewrite import Rewriter

_KEY = tuple  # (suits, fn): what a term reads, whatever the seat


def complemented(program: ir.Program, by_shape: bool = False) -> ir.Program:
    """``program`` with its sums over one pair of seats written on the other
    pair, pair by pair, wherever that leaves fewer seats read (or, with
    ``by_shape``, as many but fewer of them read by shape) and no more
    features."""
    if ir.opaque_names(program.condition):
        return program  # tricks and the like read the whole deal anyway
    while True:
        features = len(_features(program))
        tries = [_rewritten(program, pair) for pair in itertools.combinations(range(4), 2)]
        # no more features than before: a sum moved onto seats read by coin cards alone would make them points seats
        tries = [p for p in tries if len(_features(p)) <= features]
        best = min(tries, key=lambda p: (_cost(p, by_shape), sorted(_seats_read(p))), default=program)  # North's side on a tie
        if _cost(best, by_shape) >= _cost(program, by_shape):
            return program
        program = best


def _cost(program: ir.Program, by_shape: bool) -> tuple[int, ...]:
    """What a listing of ``program`` grows with: the seats read (then, ``by_shape``, those read by shape)."""
    read = len(_seats_read(program))
    return (read, len(_seats_shaped(program))) if by_shape else (read,)


def _rewritten(program: ir.Program, pair: tuple[int, ...]) -> ir.Program:
    other = tuple(s for s in range(4) if s not in pair)
    return replace(program, condition=_Complemented(pair, other).cond(program.condition))


def _seats_read(program: ir.Program) -> set[int]:
    """The seats a condition reads (a feature or a shape), and those holding predealt cards."""
    seats = {x.seat for x in ir.nodes(program.condition) if isinstance(x, (ir.Feature, ir.ShapeIn))}
    return seats | {seat for seat, cards in program.predeal if cards}


def _seats_shaped(program: ir.Program) -> set[int]:
    """The seats a condition reads by their lengths (a shape, a length, losers): listed by pattern."""
    return {x.seat for x in ir.nodes(program.condition)
            if isinstance(x, ir.ShapeIn) or (isinstance(x, ir.Feature) and x.fn.reads_length)}


def _features(program: ir.Program) -> set[ir.Feature]:
    """The distinct features a condition reads (a seat's function over some suits)."""
    return {x for x in ir.nodes(program.condition) if isinstance(x, ir.Feature)}


def _total(feature: ir.Feature) -> int | None:
    """The four seats' sum of ``feature``'s function over its suits, or None
    when the function is not a sum over the cards (losers, tables)."""
    if feature.fn.kind == "length":
        return 13 * len(feature.suits)
    if feature.fn.kind == "weights":
        return sum(feature.fn.weights) * len(feature.suits)
    return None


class _Complemented(Rewriter):
    """Each ``c * f(X) + c * f(Y)`` of the seats ``pair`` (X, Y) written as
    ``c * total - c * f(Z) - c * f(W)`` of the seats ``other``."""

    def __init__(self, pair: tuple[int, ...], other: tuple[int, ...]) -> None:
        super().__init__()
        self.pair, self.other = pair, other

    def _linear(self, lin: ir.Linear) -> ir.Num:
        coefs: dict[tuple[int, _KEY], int] = {}
        for coef, f in lin.terms:
            coefs[f.seat, (f.suits, f.fn)] = coefs.get((f.seat, (f.suits, f.fn)), 0) + coef
        const = lin.const
        x, y = self.pair
        for seat, key in list(coefs):
            c, total = coefs.get((x, key), 0), _total(ir.Feature(x, *key))
            if seat != x or c == 0 or coefs.get((y, key)) != c or total is None:
                continue
            del coefs[x, key], coefs[y, key]
            const += c * total
            for z in self.other:
                coefs[z, key] = coefs.get((z, key), 0) - c
        terms = tuple((c, ir.Feature(seat, *key)) for (seat, key), c in coefs.items() if c)
        return ir.Linear(terms, const)
