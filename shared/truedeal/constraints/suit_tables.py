"""A ``?:`` that reads one seat's holding in one suit, as one local function.

Scripts that count total points write, per suit,
``spades(south) < 3 && hcp(south, spades) > 0 ? 1 : 0`` (an honour in a short
suit) or ``hearts(south) > 4 ? hearts(south) - 4 : 0`` (length points).  Lifted
out as guarded pieces, four such terms make 16 pieces of every comparison
that adds them, and a per-suit HCP coordinate each; with the shape points
beside them, a total-points condition passes the compiler's bound on pieces
and goes to rejection.  But each such ``?:`` is a function of the length of one
suit of one seat and of which of a few ranks it holds: a
:class:`~truedeal.constraints.ir.LocalFn` of kind ``table``, tabulated here
over every length and holding.  A sum of them is then one feature vector
coordinate, as HCP is.
"""

from __future__ import annotations

from . import describe, ir

#: Most ranks a table reads: 14 x 2**8 values.
MAX_TABLE_RANKS = 8

Holding = tuple[int, int]  # (seat, suit)


def suit_table(num: ir.IfElse) -> ir.Linear | None:
    """``num`` as ``const + table``, when all it reads (its condition and
    both values) is the length and the ranks of one suit of one seat; else
    None."""
    reads: set[Holding] = set()
    ranks: set[int] = set()
    if not _reads(num, reads, ranks) or len(reads) != 1 or len(ranks) > MAX_TABLE_RANKS:
        return None
    (seat, suit), read = reads.pop(), tuple(sorted(ranks))
    values = [_value(num, length, frozenset(r for i, r in enumerate(read) if mask >> i & 1))
              for length in range(14) for mask in range(1 << len(read))]
    reachable = [v for k, v in enumerate(values) if (k & ((1 << len(read)) - 1)).bit_count() <= k >> len(read)]
    low = min(reachable)
    # holdings of more ranks than cards never occur: they take the lowest value, not to widen the range
    table = tuple(v - low if (k & ((1 << len(read)) - 1)).bit_count() <= k >> len(read) else 0
                  for k, v in enumerate(values))
    fn = ir.LocalFn("table", read=read, table=table, label=describe.num(num))
    return ir.Linear(((1, ir.Feature(seat, (suit,), fn)),), low)


def _reads(x: object, reads: set[Holding], ranks: set[int]) -> bool:
    """Whether ``x`` reads features of single suits alone (collected into
    ``reads`` and ``ranks``), with no shape, product or opaque number."""
    if isinstance(x, ir.Feature):
        if len(x.suits) != 1:
            return False
        reads.add((x.seat, x.suits[0]))
        ranks.update(x.fn.ranks)
        return True
    if isinstance(x, ir.Linear):
        return all(_reads(f, reads, ranks) for _, f in x.terms)
    if isinstance(x, ir.IfElse):
        return all(_reads(y, reads, ranks) for y in (x.cond, x.then, x.other))
    if isinstance(x, ir.Compare):
        return _reads(x.left, reads, ranks) and _reads(x.right, reads, ranks)
    if isinstance(x, (ir.And, ir.Or)):
        return all(_reads(y, reads, ranks) for y in x.items)
    if isinstance(x, ir.Not):
        return _reads(x.item, reads, ranks)
    return isinstance(x, ir.Truth)


def _value(x: ir.Num, length: int, held: frozenset[int]) -> int:
    """``x`` on a holding of ``length`` cards holding the ranks ``held``."""
    if isinstance(x, ir.Linear):
        return x.const + sum(c * f.fn.value(length, held) for c, f in x.terms)
    assert isinstance(x, ir.IfElse)  # _reads let nothing else through
    return _value(x.then if _truth(x.cond, length, held) else x.other, length, held)


def _truth(c: ir.Cond, length: int, held: frozenset[int]) -> bool:
    if isinstance(c, ir.Truth):
        return c.value
    if isinstance(c, ir.And):
        return all(_truth(y, length, held) for y in c.items)
    if isinstance(c, ir.Or):
        return any(_truth(y, length, held) for y in c.items)
    if isinstance(c, ir.Not):
        return not _truth(c.item, length, held)
    assert isinstance(c, ir.Compare)
    a, b = _value(c.left, length, held), _value(c.right, length, held)
    return {"<": a < b, "<=": a <= b, "==": a == b, "!=": a != b, ">=": a >= b, ">": a > b}[c.op]

