"""The internal form of a constraint: what JSON specs and dealer scripts compile to.

Every property a spec can name is a **feature**: the sum, over some suits, of
a *local function* of one seat's holding in one suit (its length and the ranks
it holds).  HCP, controls, losers, top-N, suit lengths, ``hascard`` and any
point scale are all features; a shape is a set of patterns of one seat.

A condition is a boolean tree over comparisons of numeric expressions.  The
exact engine reads comparisons of *linear* sums of features (``hcp(north) +
hcp(south) >= 25``) and shapes, and cuts products, quotients and remainders
(:class:`Arith`) into linear pieces; ``tricks``, ``rnd`` and the like are kept
as :class:`OpaqueNum` and checked by rejection on real deals.

Seats are 0..3 (N E S W), suits 0..3 (S H D C), ranks 0..12 (A K Q ... 2), as
in :mod:`truedeal.cards`.  All nodes are frozen dataclasses: equal trees
compare and hash equal.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields, is_dataclass
from functools import cached_property

from ..cards import HCP_OF_RANK, SEATS
from ..formats.rotation import Rotation

#: Every suit, as a ``Feature.suits`` value for whole-hand features.
ALL_SUITS: tuple[int, ...] = (0, 1, 2, 3)


@dataclass(frozen=True)
class LocalFn:
    """A function of one seat's holding in one suit.

    * ``weights``: the sum of ``weights[rank]`` over the ranks held (13 numbers,
      ace first).  HCP is ``(4, 3, 2, 1, 0, ...)``; ``hascard`` one rank's 1.
    * ``length``: the number of cards.
    * ``losers``: dealer's losing-trick count (see :func:`losers_in_suit`).
    * ``table``: any function of the length and of which of ``ranks_read``
      are held: ``table[length << len(ranks_read) | mask]``, bit i of the
      mask for ``ranks_read[i]`` (:mod:`.separable` makes them, never negative).
      ``label`` says what it computes, for people; it is not compared.
    """

    kind: str  # "weights" | "length" | "losers" | "table"
    weights: tuple[int, ...] = ()
    ranks_read: tuple[int, ...] = ()
    table: tuple[int, ...] = ()
    label: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if self.kind not in ("weights", "length", "losers", "table"):
            raise ValueError(f"unknown local function {self.kind!r}")
        if self.kind == "weights" and len(self.weights) != 13:
            raise ValueError("a weights function needs 13 weights, ace first")
        if self.kind == "table" and len(self.table) != 14 << len(self.ranks_read):
            raise ValueError("a table needs a value per length 0..13 and per mask of its ranks")

    @property
    def ranks(self) -> frozenset[int]:
        """The ranks whose presence this function reads (lengths aside)."""
        if self.kind == "weights":
            return frozenset(r for r, w in enumerate(self.weights) if w)
        if self.kind == "losers":
            return frozenset((0, 1, 2))
        return frozenset(self.ranks_read)

    @cached_property
    def reads_length(self) -> bool:
        if self.kind == "table":
            per_length = 1 << len(self.ranks_read)
            return any(self.table[i] != self.table[i % per_length] for i in range(len(self.table)))
        return self.kind in ("length", "losers")

    def value(self, length: int, held: frozenset[int] | set[int]) -> int:
        """The function on a holding: ``length`` cards, of which ``held`` are the ranks."""
        if self.kind == "length":
            return length
        if self.kind == "losers":
            return losers_in_suit(length, held)
        if self.kind == "table":
            mask = sum(1 << i for i, r in enumerate(self.ranks_read) if r in held)
            return self.table[length << len(self.ranks_read) | mask]
        return sum(self.weights[r] for r in held)


def weights(*by_rank: int) -> LocalFn:
    """A point scale, ace first; missing ranks weigh 0."""
    return LocalFn("weights", tuple(by_rank) + (0,) * (13 - len(by_rank)))


def one_rank(rank: int) -> LocalFn:
    """1 if the rank is held: ``hascard`` within one suit."""
    return LocalFn("weights", tuple(int(r == rank) for r in range(13)))


HCP = weights(*HCP_OF_RANK)
CONTROLS = weights(2, 1)
LENGTH = LocalFn("length")
LOSERS = LocalFn("losers")


def top(n: int) -> LocalFn:
    """How many of the top ``n`` cards are held (dealer's ``top2`` ... ``top5``)."""
    return weights(*([1] * n))


def losers_in_suit(length: int, held: frozenset[int] | set[int]) -> int:
    """Dealer's losers in one suit: void 0; singleton 0 with the ace, else 1;
    doubleton 0 with AK, 1 with A or K, else 2; longer, 3 minus the A, K and Q held."""
    if length == 0:
        return 0
    if length == 1:
        return 0 if 0 in held else 1
    if length == 2:
        return 2 - (0 in held) - (1 in held)
    return 3 - sum(r in held for r in (0, 1, 2))


@dataclass(frozen=True)
class Feature:
    """``sum(fn(seat's holding in s) for s in suits)``."""

    seat: int
    suits: tuple[int, ...]
    fn: LocalFn


# ----------------------------------------------------------------- numbers


@dataclass(frozen=True)
class Linear:
    """``const + sum(coef * feature)``; the only numbers the engine reads exactly."""

    terms: tuple[tuple[int, Feature], ...] = ()
    const: int = 0


@dataclass(frozen=True)
class IfElse:
    """``cond ? then : other`` on numbers."""

    cond: Cond
    then: Num
    other: Num


@dataclass(frozen=True)
class Arith:
    """A non-linear operation: ``*``, ``/`` (dealer truncates), ``%``."""

    op: str
    left: Num
    right: Num


@dataclass(frozen=True)
class OpaqueNum:
    """A number only a real deal can give: ``tricks(...)``, ``score(...)``, ``rnd(n)``...

    ``name`` and ``args`` are kept for messages and for the rejection evaluator."""

    name: str
    args: tuple = ()


Num = Linear | IfElse | Arith | OpaqueNum


# ---------------------------------------------------------------- conditions


@dataclass(frozen=True)
class Compare:
    """``left op right`` with op one of ``< <= == != >= >``."""

    op: str
    left: Num
    right: Num


@dataclass(frozen=True)
class ShapeIn:
    """The seat's pattern is one of ``patterns`` (4-tuples of lengths S H D C)."""

    seat: int
    patterns: frozenset[tuple[int, ...]]  # (spades, hearts, diamonds, clubs) lengths


@dataclass(frozen=True)
class And:
    items: tuple[Cond, ...]


@dataclass(frozen=True)
class Or:
    items: tuple[Cond, ...]


@dataclass(frozen=True)
class Not:
    item: Cond


@dataclass(frozen=True)
class Truth:
    """A constant condition."""

    value: bool


Cond = Compare | ShapeIn | And | Or | Not | Truth

TRUE = Truth(True)


def conjuncts(cond: Cond) -> list[Cond]:
    """The items of ``cond``'s ``&&``, nested ones flattened (a spec wraps its script's condition)."""
    if isinstance(cond, And):
        return [x for item in cond.items for x in conjuncts(item)]
    return [cond]


def nodes(node: object) -> Iterator[object]:
    """Every node under ``node`` (a tree, or a tuple of trees), each once, parents first, in order.
    Shared subtrees are visited once: a script's variables make its tree a
    DAG that a plain recursion walks exponentially."""
    seen: set[int] = set()
    todo = [node]
    while todo:
        x = todo.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        yield x
        if isinstance(x, (tuple, list)):
            todo.extend(reversed(x))  # reversed: the stack pops them in order
        elif is_dataclass(x):
            todo.extend(reversed([getattr(x, f.name) for f in fields(x)]))


def leaves(condition: Cond) -> Iterator[Cond]:
    """The comparisons, shapes and constants of ``condition`` reached
    through and, or and not, each once (its variables make it a DAG)."""
    seen: set[int] = set()
    todo: list[Cond] = [condition]
    while todo:
        c = todo.pop()
        if id(c) in seen:
            continue
        seen.add(id(c))
        if isinstance(c, (And, Or)):
            todo.extend(c.items)
        elif isinstance(c, Not):
            todo.append(c.item)
        else:
            yield c


def opaque_names(node: object) -> frozenset[str]:
    """Names of the :class:`OpaqueNum` anywhere under ``node``."""
    return frozenset(x.name for x in nodes(node) if isinstance(x, OpaqueNum))


# ------------------------------------------------------------------ programs


@dataclass(frozen=True)
class Action:
    """An action of a dealer script.

    * ``kind`` "print": ``style`` is dealer's action name (``printall``,
      ``printpbn``, ``printoneline``, ``printew``, ``printcompact`` ...), ``seats``
      the seats it names (empty for all).
    * ``kind`` "print" with ``style`` "printes": ``items`` the strings (``"\\n"``
      included) and expressions to print, in order.
    * ``kind`` "average": ``label`` and ``expr``.
    * ``kind`` "frequency": ``label``, ``expr`` (and ``expr2`` for the
      two-dimensional form), with ``bounds`` ``(lo, hi[, lo2, hi2])``.
    """

    kind: str
    style: str = ""
    seats: tuple[int, ...] = ()
    label: str = ""
    expr: Num | Cond | None = None
    expr2: Num | Cond | None = None
    bounds: tuple[int, ...] = ()
    items: tuple = ()


@dataclass(frozen=True)
class Program:
    """A whole spec: a condition, predealt cards and the script's settings.

    ``predeal[seat]`` holds card numbers (:func:`truedeal.cards.card`).
    ``produce`` / ``generate`` are dealer's counts; ``dealer`` a seat;
    ``vulnerable`` one of ``none ns ew all``.
    """

    condition: Cond = TRUE
    predeal: tuple[tuple[int, tuple[int, ...]], ...] = ()
    produce: int | None = None
    generate: int | None = None
    dealer: int | None = None
    vulnerable: str | None = None
    actions: tuple[Action, ...] = field(default_factory=tuple)

    def rotation(self) -> Rotation:
        """The script's ``dealer`` and ``vulnerable``, each fixing every board's; the standard cycle otherwise."""
        return Rotation.from_words(None if self.dealer is None else SEATS[self.dealer], self.vulnerable)
