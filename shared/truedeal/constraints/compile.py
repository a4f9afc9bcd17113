"""Compile a :class:`~truedeal.constraints.ir.Program` into what the listing reads.

The listing (:mod:`truedeal.listing`) needs to know, for a spec:

* which seats' suit lengths matter (**patterned** seats, listed by pattern
  tuples called cells) and which patterns each can have;
* which seats' cards of which ranks matter (**rank seats**), and which ranks
  of each suit are **tracked** (the ranks any feature reads, plus predealt
  cards, whose owner is forced);
* the **forms**: the distinct linear sums of honour features that the
  condition compares with constants.  A form is additive over suits, so the
  listing carries its partial sums as one coordinate of the feature vector.
  Negative coefficients are turned positive by counting the complement
  (``-f = (max f - f) - max f``), so every partial sum only grows, and a form
  is capped at its largest threshold: values past it are either impossible
  (*pruned*) or all alike (*clamped* into one top bucket);
* the condition itself, over **atoms** ``form + lengths + const OP 0`` and
  shapes.  Inside a cell the lengths are known, so the condition becomes a
  function of the forms alone, constant on a grid cut by the thresholds: a
  union of boxes (:func:`Compiled.boxes`).

Products, quotients and remainders become guarded linear pieces
(:mod:`.bounded`).  Anything the listing cannot read exactly (``tricks``,
``rnd``, a product of too many pieces) is
taken as true inside the listing, which then lists a superset of the spec;
the plan checks the whole condition on each deal drawn and rejects the rest
(:attr:`Compiled.rejection`).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..arrays import unique_rows
from ..cards import HCP_OF_RANK, MAX_HCP
from ..patterns import PATTERNS
from . import bounded, ir, kaplan_rubens
from .bounded import hand_max, local_max

#: Truth values of the three-valued evaluation.
FALSE, TRUE, UNKNOWN = 0, 1, 2

_OPS = ("<", "<=", "==", "!=", ">=", ">")


class NotExact(ValueError):
    """A part of the condition the listing cannot read exactly."""


@dataclass(frozen=True)
class Term:
    """``coef * fn(seat's holding)`` summed over ``suits``; ``complement`` reads ``max - fn``."""

    coef: int
    seat: int
    suits: tuple[int, ...]
    fn: ir.LocalFn
    complement: bool = False

    def value(self, suit: int, length: int, held: frozenset[int]) -> int:
        if suit not in self.suits:
            return 0
        v = self.fn.value(length, held)
        return self.coef * (local_max(self.fn) - v if self.complement else v)


@dataclass
class Form:
    """One coordinate of the feature vector: ``sum(term)``, capped.

    ``dim`` values 0..dim-1; with ``clamp`` the last one means "dim-1 or more",
    without it larger sums cannot satisfy the condition and are dropped."""

    terms: tuple[Term, ...]
    dim: int = 0
    clamp: bool = False


@dataclass(frozen=True)
class Atom:
    """``form value + sum(coef * length(seat, suit)) + const  OP  0``."""

    form: int | None
    lengths: tuple[tuple[int, int, int], ...]  # (coef, seat, suit)
    const: int
    op: str

    def holds(self, x, lengths_value):
        """Truth for form value(s) ``x`` and length part(s) (numpy-friendly)."""
        v = x + lengths_value + self.const
        return {"<": v < 0, "<=": v <= 0, "==": v == 0, "!=": v != 0, ">=": v >= 0, ">": v > 0}[self.op]

    def thresholds(self, lengths_value: int) -> tuple[int, ...]:
        """Form values at which the truth may change, for a known length part."""
        t = -(lengths_value + self.const)
        return {"<": (t,), "<=": (t + 1,), "==": (t, t + 1), "!=": (t, t + 1), ">=": (t,), ">": (t + 1,)}[self.op]


# A condition over atoms: ("and", items) ("or", items) ("not", x) ("atom", i)
# ("shape", i) ("const", bool) ("unknown",).
Tree = tuple


@dataclass
class Compiled:
    """Everything the listing needs about one spec (see the module doc)."""

    patterned: tuple[int, ...]
    pattern_masks: dict[int, np.ndarray]
    rank_seats: tuple[int, ...]
    tracked: tuple[tuple[int, ...], ...]  # per suit, tracked ranks, ace first
    forced: dict[tuple[int, int], int]  # (suit, rank) -> seat, predealt cards
    forms: list[Form]
    atoms: list[Atom]
    shapes: list[ir.ShapeIn]
    tree: Tree
    rejection: ir.Cond | None = None  # the whole condition, when some part is not exact
    pool_bounds: dict[int, int] = field(default_factory=dict)
    #: card -> seat: predealt cards that nothing reads, held by seats that
    #: nothing reads (out of the pack: the seat stays unconstrained, one card short)
    dead: dict[int, int] = field(default_factory=dict)
    #: forms that only choose which holdings of one suit fit (:func:`with_filters`)
    filters: frozenset[int] = frozenset()

    # ---------------------------------------------------------------- roles

    @property
    def pooled(self) -> tuple[int, ...]:
        return tuple(s for s in self.rank_seats if s not in self.patterned)

    @property
    def shape_only(self) -> tuple[int, ...]:
        return tuple(s for s in self.patterned if s not in self.rank_seats)

    @property
    def free(self) -> tuple[int, ...]:
        used = set(self.patterned) | set(self.rank_seats)
        return tuple(s for s in range(4) if s not in used)

    @property
    def exact(self) -> bool:
        return self.rejection is None

    @property
    def n_tracked(self) -> int:
        return sum(len(t) for t in self.tracked)

    # ---------------------------------------------------------------- cells

    def cell_signatures(self, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Group cells by what the condition sees of their lengths.

        ``cells``: ``(n_cells, n_patterned)`` pattern indices.  Returns ``(sig, keys)``:
        the signature id of each cell and one row of values per signature
        (each form atom's length part, then each length-only atom's and each
        shape's truth)."""
        cols = [self._length_part(a, cells) for a in self.atoms]
        cols += [self._shape_truth(s, cells).astype(np.int64) for s in self.shapes]
        if not cols:
            return np.zeros(len(cells), np.int64), np.zeros((1, 0), np.int64)
        table = np.stack(cols, axis=1)
        sig, first = unique_rows(table)
        return sig, table[first]

    def cell_possible(self, cells: np.ndarray) -> np.ndarray:
        """Which ``cells`` (pattern indices, ``(n, n_patterned)``) the
        condition can hold in, whatever the forms.  Millions of cells have a
        few hundred distinct rows of leaves: the tree is evaluated once per
        distinct row (Bergen's 987,080 cells have 912)."""
        leaves = self._cell_leaves(cells)
        if not leaves:
            return self._evaluate(self.tree, leaves, len(cells)) != FALSE
        row_of, first = _distinct_rows(list(leaves.values()))
        distinct = {name: leaf[first] for name, leaf in leaves.items()}
        return (self._evaluate(self.tree, distinct, len(first)) != FALSE)[row_of]

    def boxes(self, key: np.ndarray) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        """Accepted boxes ``(lo, hi)`` of the form space for one signature row."""
        return self.boxes_of(np.asarray(key)[None, :])[0]

    def boxes_of(self, keys: np.ndarray) -> list[list[tuple[tuple[int, ...], tuple[int, ...]]]]:
        """:meth:`boxes` of each signature row of ``keys``: every row's grid
        of threshold boxes, the tree evaluated once for all of them."""
        grids = [self._grid(key) for key in keys]
        if not grids:
            return []
        points = np.concatenate([p for _, p in grids])
        sizes = [len(p) for _, p in grids]
        ok = self._evaluate(self.tree, self._grid_leaves(np.asarray(keys), sizes, points), len(points)) != FALSE
        at = np.cumsum([0, *sizes])
        return [_boxes_from(cuts, p[ok[at[k] : at[k + 1]]]) for k, (cuts, p) in enumerate(grids)]

    def grid_points(self, keys: np.ndarray) -> int:
        """The boxes :meth:`boxes_of` tests and merges for ``keys``: the work
        of a listing's boxes, about 4 us a box (a 1NT definition that cuts
        its points many ways: 76,000 for 33 signatures)."""
        return sum(math.prod(len(c) - 1 for c in self._cuts(key)) for key in keys)

    def _cuts(self, key: np.ndarray) -> list[list[int]]:
        """The cuts of each form: its atoms' thresholds for ``key``, 0 and its dim."""
        cuts = []
        for f, form in enumerate(self.forms):
            ts = {0, form.dim}
            for a, atom in enumerate(self.atoms):
                if atom.form == f:
                    ts.update(t for t in atom.thresholds(int(key[a])) if 0 < t < form.dim)
            cuts.append(sorted(ts))
        return cuts

    def _grid(self, key: np.ndarray) -> tuple[list[list[int]], np.ndarray]:
        """The cuts of each form (:meth:`_cuts`) and the low corner of every box they make."""
        cuts = self._cuts(key)
        grid = list(itertools.product(*[c[:-1] for c in cuts])) or [()]
        return cuts, np.array(grid, dtype=np.int64).reshape(len(grid), len(self.forms))

    # -------------------------------------------------------------- helpers

    def _length_part(self, atom: Atom, cells: np.ndarray) -> np.ndarray:
        """The atom's length part for each cell (its truth when it has no
        form): a table lookup for an atom on one seat's lengths, the common case."""
        seats = {seat for _, seat, _ in atom.lengths}
        if len(seats) == 1:
            return _one_seat_table(atom)[cells[:, self.patterned.index(seats.pop())]]
        v = np.zeros(len(cells), np.int64)
        for coef, seat, suit in atom.lengths:
            v += coef * PATTERNS[cells[:, self.patterned.index(seat)], suit]
        if atom.form is not None:
            return v
        return atom.holds(0, v).astype(np.int64)

    def _shape_truth(self, shape: ir.ShapeIn, cells: np.ndarray) -> np.ndarray:
        """Whether each cell's seat has one of ``shape``'s patterns (bool)."""
        return shape_table(shape.patterns)[cells[:, self.patterned.index(shape.seat)]]

    def _cell_leaves(self, cells: np.ndarray) -> dict:
        leaves: dict = {}
        for a, atom in enumerate(self.atoms):
            if atom.form is None:
                leaves[("atom", a)] = self._length_part(atom, cells).astype(np.int8)
        for j, shape in enumerate(self.shapes):
            leaves[("shape", j)] = self._shape_truth(shape, cells).astype(np.int8)
        return leaves

    def _grid_leaves(self, keys: np.ndarray, sizes: list[int], points: np.ndarray) -> dict:
        """Leaves at grid ``points``: the first ``sizes[0]`` of signature row
        ``keys[0]``, and so on.  A key column is repeated once it is read (the
        rows repeated whole took a plan's largest array and a third of its time)."""
        def column(k: int) -> np.ndarray:
            return np.repeat(keys[:, k], sizes)

        leaves: dict = {}
        for a, atom in enumerate(self.atoms):
            if atom.form is None:
                leaves[("atom", a)] = column(a).astype(np.int8)
            else:
                leaves[("atom", a)] = atom.holds(points[:, atom.form], column(a)).astype(np.int8)
        n_atoms = len(self.atoms)
        for j in range(len(self.shapes)):
            leaves[("shape", j)] = column(n_atoms + j).astype(np.int8)
        return leaves

    @staticmethod
    def _evaluate(tree: Tree, leaves: dict, n: int) -> np.ndarray:
        return evaluate3(tree, leaves, n)


def _distinct_rows(leaves: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's index among the distinct rows of the columns ``leaves``
    (values 0, 1, 2) and the first row of each: 31 columns packed per int64
    key, each further key folded into the ranks of the keys before it."""
    keys = []
    for start in range(0, len(leaves), 31):
        key = np.zeros(len(leaves[0]), np.int64)
        for j, leaf in enumerate(leaves[start : start + 31]):
            key |= leaf.astype(np.int64) << (2 * j)
        keys.append(key)
    ids = keys[0]
    for key in keys[1:]:
        ids = np.unique(ids, return_inverse=True)[1].reshape(-1)
        distinct, rank = np.unique(key, return_inverse=True)
        ids = ids * len(distinct) + rank.reshape(-1)  # (no rows: no distinct keys, and nothing to fold)
    _, first, row_of = np.unique(ids, return_index=True, return_inverse=True)
    return row_of.reshape(-1), first


def evaluate3(tree: Tree, leaves: dict, n: int) -> np.ndarray:
    """Three-valued evaluation (FALSE, TRUE, UNKNOWN) of a tree; leaves not in
    ``leaves`` are UNKNOWN."""
    out = _ordered(tree, leaves, n, {})
    return _swap_true_unknown(np.full(n, out, np.int8) if isinstance(out, int) else out)


def _swap_true_unknown(v: np.ndarray) -> np.ndarray:
    """FALSE, TRUE, UNKNOWN (0, 1, 2) to the ordered code FALSE < UNKNOWN <
    TRUE (0, 1, 2), in which AND is min, OR is max and NOT is 2 - v; the
    map is its own inverse."""
    return (v * 2 % 3).astype(np.int8)


def _ordered(tree: Tree, leaves: dict, n: int, memo: dict) -> np.ndarray | int:
    """:func:`evaluate3` in the ordered code: an array, or an int where the
    value is the same for every row (a missing leaf, a constant, or what they
    decide), so that the many subtrees a listing cannot read cost nothing.
    Subtrees shared by identity are evaluated once (``memo``): a script's
    variables make the tree a DAG whose expansion can be a hundred times its
    size (see :func:`_shared`)."""
    hit = memo.get(id(tree))
    if hit is not None:
        return hit
    kind = tree[0]
    out: np.ndarray | int
    if kind in ("and", "or"):
        out = _junction(kind == "and", tree[1], leaves, n, memo)
    elif kind == "not":
        out = 2 - _ordered(tree[1], leaves, n, memo)
    elif kind == "const":
        out = 2 if tree[1] else 0
    elif tree in leaves:
        out = _swap_true_unknown(leaves[tree])
    else:
        out = 1
    memo[id(tree)] = out
    return out


def _junction(is_and: bool, kids, leaves: dict, n: int, memo: dict) -> np.ndarray | int:
    """AND (min) or OR (max) of ``kids``; stops at the first kid that is
    FALSE everywhere (AND) or TRUE everywhere (OR)."""
    decisive, pick = (0, min) if is_and else (2, max)
    scalar, arrays = 2 - decisive, []
    for kid in kids:
        v = _ordered(kid, leaves, n, memo)
        if isinstance(v, int):
            scalar = pick(scalar, v)
            if scalar == decisive:
                return decisive
        else:
            arrays.append(v)
    if not arrays:
        return scalar
    op = np.minimum if is_and else np.maximum
    out = op(arrays[0], arrays[1]) if len(arrays) > 1 else arrays[0].copy()
    for a in arrays[2:]:  # in place: ufunc.reduce over a list stacks it into one more array first
        op(out, a, out=out)
    if scalar != 2 - decisive:  # UNKNOWN caps (AND) or floors (OR) the arrays
        op(out, scalar, out=out)
    return out


def _boxes_from(cuts: list[list[int]], lows: np.ndarray) -> list:
    """The boxes whose low corners are ``lows``, each up to the next cut, merged."""
    out = []
    for p in lows:
        lo = tuple(int(x) for x in p)
        hi = tuple(cuts[d][cuts[d].index(x) + 1] - 1 for d, x in enumerate(lo))
        out.append((lo, hi))
    return _merge_boxes(out)


def _merge_boxes(boxes: list) -> list:
    """Merge boxes that differ in one coordinate and touch there (fewer box sums).

    The order of the merges matters (the box list feeds the seeded draws):
    always the first mergeable pair in list order, the merged box appended.
    After merging the pair (i, j), no pair whose first box comes before i
    merges, except with the new box: so the next search checks those boxes
    against the new one alone, then goes on from i (restarting from the
    first pair made a plan's boxes cost more than its listing: 16 s of 22)."""
    boxes = list(boxes)
    start = 0
    while True:
        pair = _first_pair(boxes, start)
        if pair is None:
            return sorted(boxes)
        i, j, merged = pair
        del boxes[j], boxes[i]  # j > i; in place: rebuilding the list made plans 5x slower here
        boxes.append(merged)
        start = i


def _first_pair(boxes: list, start: int) -> tuple[int, int, tuple] | None:
    """The first mergeable pair ``(i, j)`` and its merge, knowing that none
    starts before ``start`` but with the last box."""
    last = len(boxes) - 1
    for i in range(min(start, last)):
        merged = _merged(boxes[i], boxes[last])
        if merged is not None:
            return i, last, merged
    for i in range(start, last):
        for j in range(i + 1, last + 1):
            merged = _merged(boxes[i], boxes[j])
            if merged is not None:
                return i, j, merged
    return None


def _merged(a: tuple, b: tuple) -> tuple | None:
    """The box ``a`` and ``b`` make when they differ in one coordinate and touch there, else None."""
    (lo1, hi1), (lo2, hi2) = a, b
    diff = [d for d in range(len(lo1)) if (lo1[d], hi1[d]) != (lo2[d], hi2[d])]
    if len(diff) != 1:
        return None
    d = diff[0]
    if hi1[d] + 1 != lo2[d] and hi2[d] + 1 != lo1[d]:
        return None
    return lo1[:d] + (min(lo1[d], lo2[d]),) + lo1[d + 1 :], hi1[:d] + (max(hi1[d], hi2[d]),) + hi1[d + 1 :]


@functools.lru_cache(maxsize=512)
def _one_seat_table(atom: Atom) -> np.ndarray:
    """:meth:`Compiled._length_part` of an atom on one seat, by pattern index."""
    v = sum(coef * PATTERNS[:, suit] for coef, _, suit in atom.lengths)
    table = np.asarray(v if atom.form is not None else atom.holds(0, v), np.int64)
    table.setflags(write=False)
    return table


@functools.lru_cache(maxsize=256)
def shape_table(patterns: frozenset) -> np.ndarray:
    """Whether each pattern of PATTERNS is in ``patterns`` (a set of length
    tuples): a lookup by pattern index (relaxed plans ask again and again)."""
    table = np.array([tuple(int(x) for x in p) in patterns for p in PATTERNS], bool)
    table.setflags(write=False)
    return table


# ===================================================================== compile


class _Compiler:
    def __init__(self) -> None:
        self.forms: dict[tuple[Term, ...], int] = {}
        self.atoms: dict[Atom, int] = {}
        self.shapes: dict[ir.ShapeIn, int] = {}
        self.inexact = False
        self.seen: dict[int, tuple[ir.Cond, Tree]] = {}

    # ------------------------------------------------------------ conditions

    def cond(self, c: ir.Cond) -> Tree:
        """The tree of ``c``, once per IR node (a script's variables share nodes)."""
        hit = self.seen.get(id(c))
        if hit is None:
            hit = self.seen[id(c)] = (c, self._cond(c))  # keep c alive: its id stays unique
        return hit[1]

    def _cond(self, c: ir.Cond) -> Tree:
        if isinstance(c, ir.Truth):
            return ("const", c.value)
        if isinstance(c, ir.And):
            return _and([self.cond(x) for x in c.items])
        if isinstance(c, ir.Or):
            return _or([self.cond(x) for x in c.items])
        if isinstance(c, ir.Not):
            inner = self.cond(c.item)
            return ("const", not inner[1]) if inner[0] == "const" else ("not", inner)
        if isinstance(c, ir.ShapeIn):
            if len(c.patterns) >= len(PATTERNS):  # restricts nothing
                return ("const", True)
            if not c.patterns:
                return ("const", False)
            return ("shape", self.shapes.setdefault(c, len(self.shapes)))
        if isinstance(c, ir.Compare):
            return self.compare(c)
        raise TypeError(f"not a condition: {c!r}")

    def compare(self, c: ir.Compare) -> Tree:
        if (ends := _known_range(c.left)) is not None and isinstance(c.right, ir.Linear) and not c.right.terms:
            if (known := decided(c.op, ends[0] - c.right.const, ends[1] - c.right.const)) is not None:
                return ("const", known)
        try:
            alts = [(g1 + g2, _sub(a, b)) for g1, a in self.alternatives(c.left) for g2, b in self.alternatives(c.right)]
        except NotExact:
            self.inexact = True
            return ("unknown",)
        return _or([_and([*guards, self.atom(lin, c.op)]) for guards, lin in alts])

    def alternatives(self, num: ir.Num) -> list[tuple[list[Tree], ir.Linear]]:
        """``num`` as guarded linear pieces (``?:`` lifted out)."""
        if isinstance(num, ir.Linear):
            return [([], num)]
        if isinstance(num, ir.IfElse):
            g = self.cond(num.cond)
            yes = [([g, *gs], x) for gs, x in self.alternatives(num.then)]
            no = [([("not", g) if g[0] != "const" else ("const", not g[1]), *gs], x) for gs, x in self.alternatives(num.other)]
            return yes + no
        if isinstance(num, ir.Arith):
            return self.arith(num)
        raise NotExact(getattr(num, "name", type(num).__name__))

    def arith(self, num: ir.Arith) -> list[tuple[list[Tree], ir.Linear]]:
        out: list[tuple[list[Tree], ir.Linear]] = []
        for g1, a in self.alternatives(num.left):
            for g2, b in self.alternatives(num.right):
                out.extend((g1 + g2 + g, x) for g, x in self.pieces(num.op, a, b))
        if len(out) > bounded.MAX_PIECES:
            raise NotExact(num.op)
        return out

    def pieces(self, op: str, a: ir.Linear, b: ir.Linear) -> list[tuple[list[Tree], ir.Linear]]:
        """``a op b`` as guarded linear pieces (:mod:`.bounded`): a value of
        ``b`` at a time when both vary, runs of one quotient for ``a / k``."""
        try:
            return [([], _arith(op, a, b))]
        except NotExact:
            pass
        if op == "*" and _spread(a) < _spread(b):
            a, b = b, a  # enumerate the operand with fewer values
        if b.terms:
            lo, hi = bounded.linear_range(b)
            if hi - lo >= bounded.MAX_PIECES:
                raise NotExact(op)
            return [([self.atom(bounded.plus(b, -v), "=="), *g], x)
                    for v in range(lo, hi + 1) for g, x in self.pieces(op, a, ir.Linear((), v))]
        return [(self.within(a, first, last), bounded.remainder(a, b.const, q) if op == "%" else ir.Linear((), q))
                for first, last, q in bounded.quotient_runs(*bounded.linear_range(a), b.const)]

    def within(self, lin: ir.Linear, lo: int, hi: int) -> list[Tree]:
        return [self.atom(bounded.plus(lin, -lo), ">="), self.atom(bounded.plus(lin, -hi), "<=")]

    def atom(self, lin: ir.Linear, op: str) -> Tree:
        if op not in _OPS:
            raise ValueError(f"unknown comparison {op!r}")
        honour: dict[tuple, int] = {}
        lengths: dict[tuple[int, int], int] = {}
        const = lin.const
        for coef, feat in lin.terms:
            if feat.fn.kind == "length":
                for s in feat.suits:
                    lengths[(feat.seat, s)] = lengths.get((feat.seat, s), 0) + coef
            else:
                for part, sign in _signed_parts(feat.fn):
                    key = (feat.seat, tuple(sorted(set(feat.suits))), part)
                    honour[key] = honour.get(key, 0) + sign * coef
        const += _fixed_sums(lengths)
        g = math.gcd(*honour.values(), *lengths.values())
        if g > 1:  # 2 hcp(n) >= 25 is hcp(n) >= 13: one form, whatever the scale
            honour = {k: c // g for k, c in honour.items()}
            lengths = {k: c // g for k, c in lengths.items()}
            divided = bounded.divided(op, const, g)
            if isinstance(divided, bool):
                return ("const", divided)
            op, const = divided
        terms = []
        for (seat, suits, fn), coef in sorted(honour.items(), key=_term_order):
            if coef > 0:
                terms.append(Term(coef, seat, suits, fn))
            elif coef < 0:  # -c f = c (max - f) - c max, per suit
                terms.append(Term(-coef, seat, suits, fn, complement=True))
                const += coef * local_max(fn) * len(suits)
        length_terms = tuple(sorted((c, s, k) for (s, k), c in lengths.items() if c))
        if not terms and not length_terms:
            return ("const", bool(ir_compare(op, const, 0)))
        simple = self._trivial(tuple(terms), length_terms, const, op)
        if simple is not None:
            return ("const", simple)
        form = None
        if terms:
            form = self.forms.setdefault(tuple(terms), len(self.forms))
        a = Atom(form, length_terms, const, op)
        return ("atom", self.atoms.setdefault(a, len(self.atoms)))

    @staticmethod
    def _trivial(terms, length_terms, const, op) -> bool | None:
        """True/False when the atom holds/fails for every hand (e.g. hcp <= 37)."""
        lo, hi = const, const + sum(term_top(t) for t in terms)
        for c, _, _ in length_terms:
            lo, hi = (lo, hi + 13 * c) if c > 0 else (lo + 13 * c, hi)
        return decided(op, lo, hi)


def _fixed_sums(lengths: dict[tuple[int, int], int]) -> int:
    """Take out of ``lengths`` (coefficients by seat and suit) the sums that
    every deal fixes, a suit's four lengths or a seat's, each 13, where they
    come with one coefficient; return what they add to the constant."""
    added = 0
    for axis in (1, 0):  # (a suit's four seats, then a seat's four suits)
        groups: dict[int, list[tuple[int, int]]] = {}
        for key in lengths:
            groups.setdefault(key[axis], []).append(key)
        for keys in groups.values():
            coefs = {lengths[k] for k in keys}
            if len(keys) == 4 and len(coefs) == 1:
                added += 13 * coefs.pop()
                for k in keys:
                    del lengths[k]
    return added


#: What an opaque number may be, whatever the deal (``tricks(seat, strain) > 13`` holds for none).
OPAQUE_RANGES = {"tricks": (0, 13), "imps": (-24, 24)}


def _known_range(num: ir.Num) -> tuple[int, int] | None:
    """The least and greatest value of a number that the pieces' own bounds
    cannot show: an opaque number's, or ``cccc``'s (each piece is bounded
    whatever the shape, while the shape decides the piece)."""
    if isinstance(num, ir.OpaqueNum):
        return OPAQUE_RANGES.get(num.name)
    return kaplan_rubens.cccc_range() if kaplan_rubens.is_cccc(num) else None


def decided(op: str, lo: int, hi: int) -> bool | None:
    """Whether ``v op 0`` holds for every ``v`` in ``lo..hi`` (True), for none (False), or it depends (None)."""
    values = {ir_compare(op, v, 0) for v in (lo, hi)}
    if op in ("==", "!=") and lo != hi:
        return None if lo <= 0 <= hi else (op == "!=")
    return values.pop() if len(values) == 1 else None


def _signed_parts(fn: ir.LocalFn) -> list[tuple[ir.LocalFn, int]]:
    """``fn`` as ``sum(sign * part)`` with every part's weights >= 0 (a scale
    with negative weights is its positive part minus its negative part)."""
    if fn.kind != "weights" or min(fn.weights) >= 0:
        return [(fn, 1)]
    plus = ir.LocalFn("weights", tuple(max(w, 0) for w in fn.weights))
    minus = ir.LocalFn("weights", tuple(max(-w, 0) for w in fn.weights))
    return [(p, sign) for p, sign in ((plus, 1), (minus, -1)) if any(p.weights)]


def ir_compare(op: str, a: int, b: int) -> bool:
    return {"<": a < b, "<=": a <= b, "==": a == b, "!=": a != b, ">=": a >= b, ">": a > b}[op]


def _term_order(item):
    (seat, suits, fn), _ = item
    return (seat, suits, fn.kind, fn.weights)


def _spread(lin: ir.Linear) -> int:
    lo, hi = bounded.linear_range(lin)
    return hi - lo


def _sub(a: ir.Linear, b: ir.Linear) -> ir.Linear:
    return ir.Linear(a.terms + tuple((-c, f) for c, f in b.terms), a.const - b.const)


def _arith(op: str, a: ir.Linear, b: ir.Linear) -> ir.Linear:
    if op == "*" and not a.terms:
        a, b = b, a
    if op == "*" and not b.terms:
        return ir.Linear(tuple((c * b.const, f) for c, f in a.terms), a.const * b.const)
    if op in ("/", "%") and not a.terms and not b.terms:
        q = bounded.c_div(a.const, b.const)
        return ir.Linear((), q) if op == "/" else bounded.remainder(a, b.const, q)
    if op == "+":
        return ir.Linear(a.terms + b.terms, a.const + b.const)
    if op == "-":
        return _sub(a, b)
    raise NotExact(op)


def _shared(tree: Tree, done: dict, canon: dict) -> Tree:
    """``tree`` with equal subtrees made one object (hash-consing), so that
    :func:`evaluate3` evaluates each distinct subtree once.  ``done`` maps
    the id of a visited node to its canonical node, ``canon`` a node's kind
    and its children's ids to the canonical node."""
    hit = done.get(id(tree))
    if hit is not None:
        return hit
    if tree[0] in ("and", "or"):
        key: tuple = (tree[0], tuple(id(_shared(t, done, canon)) for t in tree[1]))
        node = canon.setdefault(key, (tree[0], tuple(done[id(t)] for t in tree[1])))
    elif tree[0] == "not":
        inner = _shared(tree[1], done, canon)
        node = canon.setdefault(("not", id(inner)), ("not", inner))
    else:
        node = canon.setdefault(tree, tree)
    done[id(tree)] = node
    return node


def _and(items: list[Tree]) -> Tree:
    return _flatten("and", items, absorbing=False)


def _or(items: list[Tree]) -> Tree:
    return _flatten("or", items, absorbing=True)


def _flatten(kind: str, items: list[Tree], absorbing: bool) -> Tree:
    """``kind`` of ``items``, nested ones merged and constants folded
    (``absorbing`` is the constant that decides the whole)."""
    flat: list[Tree] = []
    for t in items:
        if t == ("const", absorbing):
            return t
        if t == ("const", not absorbing):
            continue
        flat.extend(t[1] if t[0] == kind else [t])
    if not flat:
        return ("const", not absorbing)
    return flat[0] if len(flat) == 1 else (kind, tuple(flat))


# ------------------------------------------------------------------ assembling


def compile_program(program: ir.Program, out_of_pack: bool = False, pool_by_pattern: bool = False) -> Compiled:
    """The listing's view of ``program`` (see the module doc).  With
    ``out_of_pack``, predealt cards that nothing reads, held by seats that
    nothing reads, are out of the pack (:attr:`Compiled.dead`) instead of
    making their seat's holdings a coordinate: narrower, but other draws, so
    plans take it only where the plain listing is too wide (a seed's deals
    stay those of the plain listing wherever it lists).  With
    ``pool_by_pattern``, seats that read honours but no length are listed by
    pattern too (every pattern allowed), as plans try where the pooled
    listing is too wide."""
    comp = _Compiler()
    tree = _shared(comp.cond(program.condition), {}, {})
    owners = [c for _, cards in program.predeal for c in cards]
    if len(owners) != len(set(owners)) or any(len(cards) > 13 for _, cards in program.predeal):
        tree = ("const", False)  # a card predealt twice, or more than a hand
    atoms = list(comp.atoms)
    shapes = list(comp.shapes)
    forms = [Form(t) for t in comp.forms]
    patterned = sorted({s for a in atoms for _, s, _ in a.lengths} | {s.seat for s in shapes}
                       | {t.seat for f in forms for t in f.terms if t.fn.reads_length})
    held = {c: seat for seat, cards in program.predeal for c in cards}
    dead = _dead_cards(held, forms, set(patterned)) if out_of_pack else {}
    forced = {(c % 4, c // 4): seat for seat, cards in program.predeal for c in cards if c not in dead}
    rank_seats = sorted({t.seat for f in forms for t in f.terms} | set(forced.values()))
    if pool_by_pattern:
        patterned = sorted(set(patterned) | set(rank_seats))
    tracked = _tracked(forms, forced)
    out = Compiled(tuple(patterned), {}, tuple(rank_seats), tracked, forced, forms, atoms, shapes, tree,
                   program.condition if comp.inexact and _reads_unknown(tree, set()) else None, dead=dead)
    _size_forms(out)
    out.pattern_masks = {s: _pattern_mask(out, s) for s in out.patterned}
    out.pool_bounds = {s: _pool_bound(out, s) for s in out.pooled}
    return out


def _reads_unknown(tree: Tree, seen: set[int]) -> bool:
    """Whether ``tree`` still reads a part the listing cannot (``hcp(north)
    >= 0 || tricks(north, spades) > 5`` does not: the listing is exact)."""
    if tree[0] == "unknown":
        return True
    if tree[0] not in ("and", "or", "not") or id(tree) in seen:
        return False
    seen.add(id(tree))
    return any(_reads_unknown(x, seen) for x in ((tree[1],) if tree[0] == "not" else tree[1]))


def _dead_cards(held: dict[int, int], forms: list[Form], patterned: set[int]) -> dict[int, int]:
    """Of the predealt cards ``held`` (card -> seat), those of ranks no form
    reads, whose seat nothing else reads either: listing them would make that
    seat's holdings a coordinate, when it only needs to be dealt one card fewer."""
    read = {r for f in forms for t in f.terms for r in t.fn.ranks}
    seats = patterned | {t.seat for f in forms for t in f.terms}
    dead = {c: seat for c, seat in held.items() if seat not in seats and c // 4 not in read}
    live = {seat for c, seat in held.items() if c not in dead}
    return {c: seat for c, seat in dead.items() if seat not in live}


def goes_out_of_pack(comp: Compiled) -> bool:
    """Whether :func:`compile_program` with ``out_of_pack`` would take some of
    ``comp``'s predealt cards out of the pack (the plans that do so keep
    their listing, and their seeded deals)."""
    held = {4 * rank + suit: seat for (suit, rank), seat in comp.forced.items()}
    return bool(_dead_cards(held, comp.forms, set(comp.patterned)))


def _tracked(forms: list[Form], forced: dict) -> tuple[tuple[int, ...], ...]:
    ranks: set[int] = set()
    for f in forms:
        for t in f.terms:
            ranks |= t.fn.ranks
    per_suit = []
    for k in range(4):
        extra = {r for (s, r) in forced if s == k}
        per_suit.append(tuple(sorted(ranks | extra)))
    return tuple(per_suit)


def form_top(form: Form) -> int:
    """The largest value a form's sum can take."""
    return sum(term_top(t) for t in form.terms)


def term_top(t: Term) -> int:
    """The largest value a term can take.  A complement reads ``max - fn`` per
    suit: up to ``max`` a suit, past the largest sum of ``fn`` over a hand
    (-hcp(north) > -3 counted 0 deals when it was bounded by 37, not 40)."""
    return t.coef * (local_max(t.fn) * len(t.suits) if t.complement else hand_max(t.fn, t.suits))


def unclamped(comp: Compiled) -> Compiled:
    """``comp`` with each clamped form kept at its exact values instead of a
    top bucket (so a sum minus a part is again a feature vector)."""
    forms = [Form(f.terms, form_top(f) + 1, False) if f.clamp else f for f in comp.forms]
    return replace(comp, forms=forms)


def with_filters(comp: Compiled, pooled: bool = False) -> Compiled:
    """``comp`` with its filter forms marked, or ``comp`` itself when it has
    none.  A filter is a form of one suit, on patterned seats, whose atoms
    hold alike at every value that fits (``top4(east, clubs) < 2``: values 0
    and 1 fit, and the atom is true at both): it only decides which holdings
    of that suit fit, so the listing drops the others and gives the form no
    coordinate (the "calm opponent" of the practice library: 16x fewer
    feature vectors).  Narrower, but other draws: plans take it only where the
    plain listing is too wide (a seed's deals stay those of the plain listing).

    ``pooled``: a pooled seat's forms may be filters too, a calm opponent
    with no shape beside shaped seats.  Only the factored listing takes
    those, since it places a pooled seat's honours suit by suit.  The other
    listings weigh a pooled seat's cards by rank counts or card classes, with
    no holding of one suit to drop.  Without ``pooled``, a spec with pooled
    seats has no filters."""
    if comp.filters or (comp.pooled and not pooled):
        return comp
    comp = _floors_flipped(comp)
    found = frozenset(f for f in range(len(comp.forms)) if _is_filter(comp, f))
    return replace(comp, filters=found) if found else comp


#: A comparison read from the other side: ``x op y`` is ``y mirror(op) x``.
_MIRROR = {"<": ">", "<=": ">=", "==": "==", "!=": "!=", ">=": "<=", ">": "<"}


def _floors_flipped(comp: Compiled) -> Compiled:
    """``comp`` with each floor read as its complement.  A floor is a clamped
    form of one suit whose values below the clamp fit nothing
    (``top3(north, spades) >= 2``, ``quality(south, hearts) >= 700``): read
    as ``max - form``, only its values up to ``max - clamp`` fit, all alike,
    and it is a filter like a calm opponent's.  A new ``Compiled``: the
    plain one is left as it was."""
    floors = [f for f in range(len(comp.forms)) if _is_floor(comp, f)]
    if not floors:
        return comp
    forms, atoms = list(comp.forms), list(comp.atoms)
    for f in floors:
        form = comp.forms[f]
        top = sum(t.coef * local_max(t.fn) for t in form.terms)  # form + complement == top, suit by suit
        forms[f] = Form(tuple(replace(t, complement=not t.complement) for t in form.terms), top - form.dim + 2)
        atoms = [Atom(f, (), -(top + a.const), _MIRROR[a.op]) if a.form == f else a for a in atoms]
    return replace(comp, forms=forms, atoms=atoms)


def _is_floor(comp: Compiled, f: int) -> bool:
    form = comp.forms[f]
    suits = {t.suits for t in form.terms}
    if not form.clamp or form.dim < 2 or len(suits) != 1 or len(next(iter(suits))) != 1:
        return False
    mine = {i: a for i, a in enumerate(comp.atoms) if a.form == f}
    if any(a.lengths for a in mine.values()) or any(t.seat not in comp.patterned for t in form.terms):
        return False
    below = np.arange(form.dim - 1)
    leaves = {("atom", i): a.holds(below, 0).astype(np.int8) for i, a in mine.items()}
    return bool((evaluate3(comp.tree, leaves, len(below)) == FALSE).all())


def _is_filter(comp: Compiled, f: int) -> bool:
    form = comp.forms[f]
    suits = {t.suits for t in form.terms}
    if form.clamp or form.dim < 2 or len(suits) != 1 or len(next(iter(suits))) != 1:
        return False
    if any(t.seat not in comp.patterned and t.seat not in comp.rank_seats for t in form.terms):
        return False
    atoms = [a for a in comp.atoms if a.form == f]
    return all(not a.lengths and not any(0 < t < form.dim for t in a.thresholds(0)) for a in atoms)


def _size_forms(comp: Compiled) -> None:
    """Cap each form at its largest threshold; prune or clamp past it."""
    capped = []
    for f, form in enumerate(comp.forms):
        top = form_top(form)
        cap = 0
        for a in comp.atoms:
            if a.form == f:
                lo_len = sum(min(0, 13 * c) for c, _, _ in a.lengths)
                cap = max(cap, max(a.thresholds(lo_len)))
        if cap > top:  # every threshold within reach: keep exact values
            form.dim, form.clamp = top + 1, False
        else:
            form.dim = cap + 1
            capped.append((f, cap))
    # Row k: does anything fit with form capped[k] past its cap (its atoms
    # decided there, every other leaf unknown)?  One walk of the tree for all.
    fits = evaluate3(comp.tree, _past_cap_leaves(comp, capped), len(capped)) != FALSE if capped else []
    for (f, cap), fit in zip(capped, fits):
        comp.forms[f].dim, comp.forms[f].clamp = (cap + 1, True) if fit else (cap, False)  # clamp, or drop


def _past_cap_leaves(comp: Compiled, capped: list[tuple[int, int]]) -> dict:
    row = {f: k for k, (f, _) in enumerate(capped)}
    leaves = {}
    for a, atom in enumerate(comp.atoms):
        if atom.form in row:
            leaf = np.full(len(capped), UNKNOWN, np.int8)
            if not atom.lengths:
                leaf[row[atom.form]] = int(atom.holds(capped[row[atom.form]][1], 0))
            leaves[("atom", a)] = leaf
    return leaves


def _pattern_mask(comp: Compiled, seat: int) -> np.ndarray:
    """Patterns of ``seat`` for which the condition is not surely false."""
    n = len(PATTERNS)
    leaves = {}
    for a, atom in enumerate(comp.atoms):
        if atom.form is None and atom.lengths and all(s == seat for _, s, _ in atom.lengths):
            v = sum(c * PATTERNS[:, k] for c, _, k in atom.lengths)
            leaves[("atom", a)] = atom.holds(0, v).astype(np.int8)
    for j, shape in enumerate(comp.shapes):
        if shape.seat == seat:
            leaves[("shape", j)] = shape_table(shape.patterns).astype(np.int8)
    return evaluate3(comp.tree, leaves, n) != FALSE


def _pool_bound(comp: Compiled, seat: int) -> int:
    """Most tracked cards a pooled seat can hold (its honour-count coordinate's size - 1).

    A pruned whole-hand form of the seat that weighs every tracked rank at
    least 1 bounds it (e.g. at most 12 HCP means at most 12 honours)."""
    bound = min(13, comp.n_tracked)
    for form in comp.forms:
        if form.clamp or len(form.terms) != 1:
            continue
        t = form.terms[0]
        if t.seat == seat and not t.complement and t.suits == ir.ALL_SUITS and t.fn.kind == "weights":
            if all(t.coef * t.fn.weights[r] >= 1 for k in range(4) for r in comp.tracked[k]):
                bound = min(bound, form.dim - 1)
    return bound


# ------------------------------------------------------- the old spec language


def rules_program(rules) -> ir.Program:
    """The IR of per-seat rules (:class:`truedeal.spec.SeatConstraint`)."""
    items: list[ir.Cond] = []
    for r in rules:
        if r.patterns is not None:
            pats = frozenset(tuple(int(x) for x in PATTERNS[i]) for i in np.nonzero(r.patterns)[0])
            items.append(ir.ShapeIn(r.seat, pats))
        if r.hcp is not None:
            hcp = ir.Linear(((1, ir.Feature(r.seat, ir.ALL_SUITS, ir.HCP)),))
            items.append(ir.Compare(">=", hcp, ir.Linear((), r.hcp[0])))
            items.append(ir.Compare("<=", hcp, ir.Linear((), r.hcp[1])))
    return ir.Program(condition=ir.And(tuple(items)))


__all__ = ["Compiled", "Form", "Atom", "Term", "compile_program", "rules_program", "evaluate3", "NotExact",
           "MAX_HCP", "HCP_OF_RANK"]
