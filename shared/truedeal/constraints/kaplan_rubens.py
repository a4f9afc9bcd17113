"""Dealer's Kaplan-Rubens evaluations, ``quality(seat, suit)`` and
``cccc(seat)``, as features that the exact engine lists.

Both are The Bridge World's "four C's" (October 1982) as the classic dealer
computes them, in hundredths so that they are integers (a minimum opening
is about 1200).  Each reads a suit's length and which of A K Q J T 9 8 it
holds, so each is a table feature (:class:`~.ir.LocalFn`) over those ranks;
``cccc`` adds a shape term, which only 4333 changes.  Every value is a
multiple of 5, and the tables hold fifths: a listing's state is then five
times narrower (``cccc(north) >= 1400`` is a fifth's sum of at least 280).

* ``quality``: with F = 10 x length, A 4F, K 3F, Q 2F, J F.  In a suit of
  seven or more, the missing Q counts 2F and the missing J F, at most
  (length - 6) F in all.  In a shorter suit, the ten counts F when the J or
  two of A K Q J are held, else F/2, and the nine F/2 when two of A K Q J,
  the ten or the eight are held.
* ``cccc``: per suit, A 300, K 200 (50 singleton), Q 100 less 75 singleton,
  25 doubleton and 25 without the A or K; the J 50 with two of A K Q, 25
  with one; the ten 25 with two of A K Q J, or with one and the nine; then
  the suit's quality and 100 for each card short of three.  The hand then
  loses 100, or 50 when it is 4333 (no suit short of three).
"""

from __future__ import annotations

from functools import cache
from itertools import combinations, permutations

from ..patterns import PATTERNS
from . import ir

#: The ranks read, ace first (0 = A ... 6 = 8), as a table's bits.
RANKS_READ = (0, 1, 2, 3, 4, 5, 6)
_A, _K, _Q, _J, _T, _9, _8 = RANKS_READ
SQUARE = frozenset(permutations((4, 3, 3, 3)))


def suit_quality(length: int, held: frozenset[int] | set[int]) -> int:
    """Dealer's ``quality`` of one suit, in hundredths."""
    f = 10 * length
    honours = sum(r in held for r in (_A, _K, _Q, _J))
    value = f * sum(w for r, w in ((_A, 4), (_K, 3), (_Q, 2), (_J, 1)) if r in held)
    if length > 6:
        return value + f * min(3 - 2 * (_Q in held) - (_J in held), length - 6)
    if _T in held:
        value += f if honours > 1 or _J in held else f // 2
    if _9 in held and (honours == 2 or _T in held or _8 in held):
        value += f // 2
    return value


def suit_cccc(length: int, held: frozenset[int] | set[int]) -> int:
    """One suit's share of dealer's ``cccc``, in hundredths: its honours,
    its quality and its shortness (the hand's last term aside)."""
    higher = (_A in held) + (_K in held)
    value = 300 * (_A in held) + (200 - 150 * (length == 1)) * (_K in held)
    if _Q in held:
        value += 100 - 75 * (length == 1) - 25 * (length == 2) - 25 * (higher == 0)
        higher += 1
    if _J in held:
        value += {2: 50, 1: 25}.get(higher, 0)
        higher += 1
    if _T in held and (higher == 2 or (higher == 1 and _9 in held)):
        value += 25
    return value + suit_quality(length, held) + 100 * max(0, 3 - length)


#: The step of every value (hundredths of 0.05 points).
STEP = 5


def _fifths(fn, label: str) -> ir.LocalFn:
    values = [fn(length, {r for i, r in enumerate(RANKS_READ) if mask >> i & 1})
              for length in range(14) for mask in range(1 << len(RANKS_READ))]
    if any(v % STEP for v in values):
        raise ArithmeticError(f"{label}: a value off the step of {STEP}")
    return ir.LocalFn("table", ranks_read=RANKS_READ, table=tuple(v // STEP for v in values), label=label)


QUALITY = _fifths(suit_quality, "quality / 5")
CCCC_BY_SUIT = _fifths(suit_cccc, "cccc share / 5")


def quality(seat: int, suit: int) -> ir.Linear:
    """``quality(seat, suit)``."""
    return ir.Linear(((STEP, ir.Feature(seat, (suit,), QUALITY)),))


def cccc(seat: int) -> ir.IfElse:
    """``cccc(seat)``: the suits' shares, less 50 for a 4333 hand and 100 for any other."""
    terms = ((STEP, ir.Feature(seat, ir.ALL_SUITS, CCCC_BY_SUIT)),)
    return ir.IfElse(ir.ShapeIn(seat, SQUARE), ir.Linear(terms, -50), ir.Linear(terms, -100))


def is_cccc(num: ir.Num) -> bool:
    """Whether ``num`` is ``cccc(seat)`` for some seat."""
    return isinstance(num, ir.IfElse) and isinstance(num.cond, ir.ShapeIn) and num == cccc(num.cond.seat)


@cache
def cccc_range() -> tuple[int, int]:
    """The smallest and largest ``cccc`` of a 13-card hand (-50 and 3560):
    over the patterns, each suit's extreme share at its length (the suits
    hold different cards, so each reaches its own), less the shape term."""
    shares = [[suit_cccc(length, set(held)) for k in range(min(length, 7) + 1) if length - k <= 6
               for held in combinations(RANKS_READ, k)] for length in range(14)]
    ends = [(min(v), max(v)) for v in shares]
    values = [sum(ends[n][end] for n in p) - (50 if tuple(p) in SQUARE else 100) for p in PATTERNS.tolist() for end in (0, 1)]
    return min(values), max(values)
